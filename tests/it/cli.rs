//! The real binary, driven as a user would: outputs, errors and exit codes.

use std::fs;
use std::path::Path;

use crate::common::{run_into, sim, stderr, stdout};
use tempfile::TempDir;

/// Runs `sim run FILE --out DIR extra...`, with `threads` rayon threads.
/// Asserts that each of `files` has the same bytes in folders `a` and `b`.
fn assert_same_files(a: &Path, b: &Path, files: &[&str]) {
    for f in files {
        assert!(
            fs::read(a.join(f)).unwrap() == fs::read(b.join(f)).unwrap(),
            "{f} differs"
        );
    }
}

fn header(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string()
}

/// The small scenario's summary, figure by figure: a change to any figure (the
/// recovery rule, lost requests, extra attempts, the backlog) shows here as a
/// reviewed snapshot diff.
#[test]
fn the_small_summary_is_pinned() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("small");
    run_into("tests/fixtures/small.toml", &out, "2", &["--no-plots"]).success();
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    insta::assert_snapshot!("small_summary", summary);
}

#[test]
fn run_writes_the_contract_files() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("small");
    let assert = run_into("tests/fixtures/small.toml", &out, "2", &[]).success();
    let stdout = stdout(&assert);
    assert!(
        stdout.contains("seed 3"),
        "stdout names the seed:\n{stdout}"
    );
    assert!(
        stdout.contains("tests/fixtures/small.toml"),
        "stdout names the scenario:\n{stdout}"
    );
    assert!(
        stdout.contains("events/s"),
        "stdout reports the speed:\n{stdout}"
    );
    for f in [
        "summary.csv",
        "timeseries.csv",
        "load.png",
        "goodput.png",
        "backlog.png",
        "recovery.png",
    ] {
        assert!(out.join(f).is_file(), "{f} is missing");
    }
    assert!(header(&out.join("summary.csv")).starts_with(
        "strategy,logical_requests,succeeded,failed,attempts,retries,amplification,peak_attempts_per_s,\
         peak_load_ratio,recovery_time_s,latency_p50_s,latency_p99_s,wasted_work_fraction"
    ));
    assert!(header(&out.join("timeseries.csv")).starts_with(
        "strategy,t_s,attempts_per_s,retries_per_s,goodput_per_s,errors_per_s,timeouts_per_s,queue_len,in_flight"
    ));
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(
        summary.lines().count(),
        3,
        "a header and one row per strategy"
    );
    // 10 s in 100 ms buckets, two strategies.
    let series = fs::read_to_string(out.join("timeseries.csv")).unwrap();
    assert_eq!(series.lines().count(), 1 + 2 * 100);
    let png = fs::read(out.join("load.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let leftovers: Vec<_> = fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.starts_with('.').then_some(name)
        })
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// The same files on 1, 2, 4 and 8 threads (more threads than this
/// machine's cores change the order in which runs finish, never what they
/// write).
#[test]
fn output_is_byte_identical_across_thread_counts() {
    // The small scenario, and one with every overload behaviour and trigger on.
    for fixture in ["tests/fixtures/small.toml", "tests/fixtures/overload.toml"] {
        let dir = TempDir::new().unwrap();
        let one = dir.path().join("t1");
        run_into(fixture, &one, "1", &[]).success();
        for threads in ["2", "4", "8"] {
            let other = dir.path().join(format!("t{threads}"));
            run_into(fixture, &other, threads, &[]).success();
            assert_same_files(
                &one,
                &other,
                &[
                    "summary.csv",
                    "timeseries.csv",
                    "load.png",
                    "goodput.png",
                    "backlog.png",
                    "recovery.png",
                    "report.html",
                ],
            );
        }
    }
}

/// A report must load nothing from anywhere: no external script, style,
/// image or font, and no fetch.
fn assert_self_contained(page: &str) {
    for bad in [
        "src=\"http",
        "href=\"http",
        "<link",
        "@import",
        "url(http",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(!page.contains(bad), "report.html contains {bad:?}");
    }
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
}

#[test]
fn a_runs_report_holds_its_table_charts_data_and_scenario() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("out");
    run_into("tests/fixtures/small.toml", &out, "2", &["--no-plots"]).success();
    let page = fs::read_to_string(out.join("report.html")).unwrap();
    assert_self_contained(&page);
    // The summary table, one row per strategy, with summary.csv's figures.
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    let none = summary.lines().nth(1).unwrap();
    let failed = none.split(',').nth(3).unwrap();
    assert!(
        page.contains(&format!("<tr><td>none</td><td>{failed}</td>")),
        "the table shows none's failed count {failed}"
    );
    assert_eq!(
        page.matches("<tr><td>").count(),
        2 * 2,
        "two strategies, two tables"
    );
    // The three charts' places, the embedded CSV files and the scenario file.
    for id in ["chart-load", "chart-goodput", "chart-backlog"] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(page.contains("id=\"timeseries-csv\">\"strategy,t_s,attempts_per_s"));
    assert!(page.contains("# A small, fast scenario for the command-line tests."));
    assert!(page.contains("uPlot"), "the chart library is inlined");
}

#[test]
fn seed_changes_the_results() {
    let dir = TempDir::new().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run_into("tests/fixtures/small.toml", &a, "2", &["--no-plots"]).success();
    run_into(
        "tests/fixtures/small.toml",
        &b,
        "2",
        &["--no-plots", "--seed", "4"],
    )
    .success();
    assert_ne!(
        fs::read(a.join("timeseries.csv")).unwrap(),
        fs::read(b.join("timeseries.csv")).unwrap()
    );
    assert!(!a.join("load.png").exists(), "--no-plots writes no chart");
}

#[test]
fn validate_accepts_every_shipped_scenario() {
    for entry in fs::read_dir("scenarios").unwrap() {
        let path = entry.unwrap().path();
        sim().arg("validate").arg(&path).assert().success();
    }
}

/// Runs a bad fixture through `validate` and `run`: exit 2, nothing written, and
/// the message (snapshotted) names the file, the line and the key.
fn bad(name: &str) -> String {
    let file = format!("tests/fixtures/bad/{name}.toml");
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("out");
    let run = sim()
        .args(["run", &file, "--out"])
        .arg(&out)
        .assert()
        .code(2);
    assert!(!out.exists(), "{name}: bad input must write nothing");
    let validate = sim().args(["validate", &file]).assert().code(2);
    let bound = sim().args(["bound", &file]).assert().code(2);
    let run_err = stderr(&run);
    let validate_err = stderr(&validate);
    assert_eq!(run_err, validate_err);
    assert_eq!(run_err, stderr(&bound));
    assert!(
        run_err.starts_with(&format!("error: {file}")),
        "{name}: the message names the file:\n{run_err}"
    );
    run_err
}

macro_rules! bad_input {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), bad(stringify!($name)));
        }
    )*};
}

bad_input!(
    cap_below_base,
    wrong_type,
    unknown_key,
    no_unit,
    unknown_backoff,
    end_before_start,
    zero_workers,
    negative_rate,
    unknown_outcome,
    duplicate_strategy,
    syntax,
    missing_table,
    sweep_invalid_value,
    sweep_unknown_key,
    sweep_decreasing,
    sweep_fixed_key,
    sweep_unknown_chart,
    unknown_retry_after_mode,
    slack_without_at_least,
    too_many_replicas,
    unknown_balancer,
    fleet_too_large,
);

#[test]
fn missing_file_is_bad_input() {
    let out = sim()
        .args(["run", "scenarios/no-such-file.toml"])
        .assert()
        .code(2);
    let err = stderr(&out);
    assert!(
        err.contains("scenarios/no-such-file.toml") && err.contains("cannot read"),
        "{err}"
    );
}

#[test]
fn unwritable_output_is_a_failure_not_bad_input() {
    let dir = TempDir::new().unwrap();
    let blocker = dir.path().join("file");
    fs::write(&blocker, "not a folder").unwrap();
    let out = sim()
        .args(["run", "tests/fixtures/small.toml", "--out"])
        .arg(blocker.join("sub"))
        .assert()
        .code(1);
    let err = stderr(&out);
    assert!(err.contains("cannot create the output folder"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    sim().arg("frobnicate").assert().code(2);
    sim().args(["run"]).assert().code(2);
}

#[test]
fn a_sweep_writes_its_files_deterministically_and_quietly_off_a_terminal() {
    let dir = TempDir::new().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    let a = run_into("tests/fixtures/sweep.toml", &one, "1", &[]).success();
    run_into("tests/fixtures/sweep.toml", &two, "2", &[]).success();
    assert!(
        a.get_output().stderr.is_empty(),
        "no progress bar when stderr is not a terminal"
    );
    assert!(header(&one.join("summary.csv")).starts_with(
        "clients.count,strategy,runs,incomplete_runs,recovered_runs,succeeded_mean,succeeded_ci95"
    ));
    let rows = fs::read_to_string(one.join("summary.csv"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(rows, 1 + 2 * 2, "a row per (clients, strategy)");
    assert_same_files(
        &one,
        &two,
        &[
            "summary.csv",
            "timeline.csv",
            "amplification.png",
            "peak_load_ratio.png",
            "recovery_time_s.png",
            "failed.png",
            "timeline.png",
            "report.html",
        ],
    );
    let page = fs::read_to_string(one.join("report.html")).unwrap();
    assert_self_contained(&page);
    assert!(page.contains("A sweep of <code>clients.count</code> over 5, 10"));
}

const GRID_FILES: [&str; 6] = [
    "summary.csv",
    "timeline.csv",
    "report.html",
    "amplification.png",
    "recovery_time_s.png",
    "timeline.png",
];

#[test]
fn a_two_parameter_sweep_writes_a_row_per_cell_and_heatmaps() {
    let dir = TempDir::new().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    run_into("tests/fixtures/grid.toml", &one, "1", &["-q"]).success();
    run_into("tests/fixtures/grid.toml", &two, "2", &["-q"]).success();
    let text = fs::read_to_string(one.join("summary.csv")).unwrap();
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("outage[0].length_s,retry.cap_s,strategy,runs,")
    );
    let points: Vec<String> = lines
        .map(|l| l.split(',').take(3).collect::<Vec<_>>().join(","))
        .collect();
    // 3 lengths x 2 caps x 2 strategies, the first parameter outermost.
    assert_eq!(points.len(), 12);
    assert_eq!(points[0], "0.5,1,none");
    assert_eq!(points[1], "0.5,1,full-jitter");
    assert_eq!(points[2], "0.5,4,none");
    assert_eq!(points[11], "1.5,4,full-jitter");
    assert_same_files(&one, &two, &GRID_FILES);
}

/// Runs the grid sweep in `n` shards into `dir` and returns the shard folders.
fn shards(dir: &Path, n: u32) -> Vec<std::path::PathBuf> {
    (1..=n)
        .map(|i| {
            let spec = format!("{i}/{n}");
            run_into(
                "tests/fixtures/grid.toml",
                dir,
                "1",
                &["-q", "--shard", &spec],
            )
            .success();
            dir.join(format!("shard-{i}-of-{n}"))
        })
        .collect()
}

#[test]
fn merged_shards_are_byte_identical_to_an_unsharded_run() {
    let dir = TempDir::new().unwrap();
    let whole = dir.path().join("whole");
    run_into("tests/fixtures/grid.toml", &whole, "2", &["-q"]).success();
    // 5 does not divide the 24 runs, and shard order on the command line is free.
    let mut parts = shards(&dir.path().join("parts"), 5);
    parts.reverse();
    let merged = dir.path().join("merged");
    sim()
        .arg("merge")
        .args(&parts)
        .arg("--out")
        .arg(&merged)
        .arg("-q")
        .assert()
        .success();
    assert_same_files(&whole, &merged, &GRID_FILES);
}

#[test]
fn merging_an_incomplete_or_mixed_set_of_shards_is_bad_input() {
    let dir = TempDir::new().unwrap();
    let parts = shards(&dir.path().join("parts"), 3);
    let merge = |dirs: &[std::path::PathBuf]| {
        let out = dir.path().join("merged");
        let a = sim()
            .arg("merge")
            .args(dirs)
            .arg("--out")
            .arg(&out)
            .assert()
            .code(2);
        assert!(!out.exists(), "a failed merge writes nothing");
        stderr(&a)
    };
    let err = merge(&parts[..2]);
    assert!(err.contains("shards 3 of 3 are missing"), "{err}");
    let err = merge(&[parts[0].clone(), parts[0].clone(), parts[1].clone()]);
    assert!(err.contains("given twice"), "{err}");
    // A shard of another run (another seed) does not mix in.
    let other = dir.path().join("other");
    run_into(
        "tests/fixtures/grid.toml",
        &other,
        "1",
        &["-q", "--shard", "3/3", "--seed", "9"],
    )
    .success();
    let err = merge(&[
        parts[0].clone(),
        parts[1].clone(),
        other.join("shard-3-of-3"),
    ]);
    assert!(err.contains("not from the same run"), "{err}");
    // An edited scenario copy is caught.
    let edited = parts[2].join("scenario.toml");
    let text = fs::read_to_string(&edited).unwrap();
    fs::write(&edited, text.replace("seed = 5", "seed = 6")).unwrap();
    let err = merge(&parts);
    assert!(err.contains("was edited"), "{err}");
}

#[test]
fn shard_needs_a_sweep_and_a_valid_spec() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("o");
    let a = run_into("tests/fixtures/small.toml", &out, "1", &["--shard", "1/2"]).code(2);
    let err = stderr(&a);
    assert!(err.contains("has neither"), "{err}");
    for bad in ["0/2", "3/2", "x"] {
        run_into("tests/fixtures/grid.toml", &out, "1", &["--shard", bad]).code(2);
    }
    assert!(!out.exists());
}

#[test]
fn delays_prints_each_retry_and_draws_on_request() {
    let dir = TempDir::new().unwrap();
    let png = dir.path().join("d.png");
    let out = sim()
        .args(["delays", "exponential", "--retries", "4", "--plot"])
        .arg(&png)
        .assert()
        .success();
    let text = stdout(&out);
    // Exponential without jitter: every quantile of retry 3 is 800 ms.
    let row3 = text
        .lines()
        .find(|l| l.trim_start().starts_with("3 "))
        .unwrap();
    assert_eq!(row3.matches("800.0ms").count(), 8, "{row3}");
    assert_eq!(&fs::read(&png).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
    let bad = sim().args(["delays", "jitter"]).assert().code(2);
    assert!(
        String::from_utf8(bad.get_output().stderr.clone())
            .unwrap()
            .contains("valid: none, constant")
    );
    sim()
        .args(["delays", "full-jitter", "--base", "200"])
        .assert()
        .code(2);
}

#[test]
fn presets_lists_every_preset_with_its_delays_and_source() {
    let out = sim().arg("presets").assert().success();
    let text = stdout(&out);
    for name in [
        "got",
        "axios-retry",
        "axios-retry-exponential",
        "cockatiel",
        "polly",
        "polly-jitter",
        "grpc",
        "grpc-full-jitter",
        "grpc-connection",
        "aws-sdk-standard",
        "aws-sdk-standard-pre-1.44",
        "aws-sdk-legacy",
        "backoff-crate",
        "backon",
        "tokio-retry",
        "resilience4j",
        "go-retryablehttp",
        "urllib3",
        "tenacity",
        "tenacity-random-exponential",
        "envoy",
        "envoy-retry-budget",
    ] {
        assert!(
            text.contains(&format!("\n{name}: ")) || text.starts_with(&format!("{name}: ")),
            "{name} missing"
        );
    }
    // Deterministic schedules print their exact delays.
    assert!(
        text.contains("delays, median [range]: 1.00s, 2.00s, 4.00s"),
        "{text}"
    );
    assert_eq!(text.matches("  source: http").count(), 23);
    // Each says what the conformance harness found for it.
    assert_eq!(text.matches("  checked: ").count(), 23);
    assert!(
        !text.contains("earlier definition"),
        "a preset changed since it was measured"
    );
}

#[test]
fn delays_after_an_outcome_go_through_the_policy() {
    // botocore 1.44: a 1 s base after a throttling error, 50 ms otherwise.
    let max_of_first = |args: &[&str]| {
        let out = sim().args(args).assert().success();
        let text = stdout(&out);
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("1 "))
            .expect("retry 1");
        let max: f64 = row
            .split_whitespace()
            .nth(7)
            .expect("max")
            .trim_end_matches("ms")
            .parse()
            .expect("ms");
        max
    };
    let after_429 = max_of_first(&["delays", "aws-sdk-standard", "--after", "429"]);
    let after_503 = max_of_first(&["delays", "aws-sdk-standard", "--after", "503"]);
    assert!((900.0..=1000.0).contains(&after_429), "{after_429}");
    assert!((45.0..=50.0).contains(&after_503), "{after_503}");
    // A 3 s Retry-After replaces got's backoff.
    let got = max_of_first(&["delays", "got", "--retry-after", "3s"]);
    assert_eq!(got, 3000.0);
    // A preset that does not retry the outcome says so.
    let out = sim()
        .args(["delays", "got", "--after", "400"])
        .assert()
        .code(2);
    assert!(
        stderr(&out).contains("does not retry 400"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn delays_takes_a_preset_or_a_scenarios_strategy() {
    let out = sim()
        .args(["delays", "polly-exponential"])
        .assert()
        .success();
    let text = stdout(&out);
    // Polly's exponential default: 2, 4, 8 s, and its limit of 3 retries.
    let rows: Vec<&str> = text.lines().skip(3).collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[2].contains("8000.0ms"), "{text}");
    let out = sim()
        .args([
            "delays",
            "exponential",
            "--scenario",
            "tests/fixtures/small.toml",
        ])
        .assert();
    let out = out.code(2);
    let err = stderr(&out);
    assert!(err.contains("its strategies: none, full-jitter"), "{err}");
    sim()
        .args([
            "delays",
            "full-jitter",
            "--scenario",
            "tests/fixtures/small.toml",
        ])
        .assert()
        .success();
    sim()
        .args(["delays", "grpc", "--cap", "1s"])
        .assert()
        .code(2);
}

/// Every column of both CSV files is documented in the book's "Output files"
/// chapter, by name in backquotes (its lists are generated from
/// `metrics::columns`; this checks that the files write what the list says).
#[test]
fn every_csv_column_is_documented() {
    let chapter = fs::read_to_string("docs/src/output-files.md").unwrap();
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("small");
    run_into("tests/fixtures/small.toml", &out, "2", &["--no-plots"]).success();
    for file in ["summary.csv", "timeseries.csv"] {
        for column in header(&out.join(file)).split(',') {
            assert!(
                chapter.contains(&format!("`{column}`")),
                "{file} column `{column}` is not documented in docs/src/output-files.md"
            );
        }
    }
}

/// The figures add up, for every strategy of the budgets scenario (budgets, a
/// breaker and a throttle: the mechanisms that refuse locally).
#[test]
fn summary_figures_add_up() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("budgets");
    run_into(
        "scenarios/budgets.toml",
        &out,
        "2",
        &["--no-plots", "--quiet"],
    )
    .success();
    let text = fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = text.lines();
    let names: Vec<&str> = lines.next().unwrap().split(',').collect();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let get = |name: &str| -> i64 {
            let i = names.iter().position(|n| *n == name).unwrap();
            cells[i]
                .parse()
                .unwrap_or_else(|_| panic!("{name} = {}", cells[i]))
        };
        let who = cells[0];
        assert_eq!(
            get("attempts"),
            get("logical_requests") - get("first_attempts_refused") + get("retries"),
            "{who}: attempts"
        );
        assert_eq!(
            get("succeeded") + get("failed") + get("in_flight_at_end"),
            get("logical_requests"),
            "{who}: requests"
        );
        assert_eq!(
            get("failed"),
            get("failed_not_retryable")
                + get("failed_retries_exhausted")
                + get("failed_deadline")
                + get("retries_denied_by_budget")
                + get("rejected_locally"),
            "{who}: failures by reason"
        );
        assert!(
            get("first_attempts_refused") <= get("rejected_locally"),
            "{who}"
        );
    }
}

/// An error far along a very long line is bad input with a short excerpt, not
/// a panic of the caret's formatting (found by fuzzing: a column past 65 535).
#[test]
fn an_error_far_along_a_long_line_is_reported_not_a_panic() {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("long.toml");
    fs::write(&file, format!("duration = \"1s\"{}x\n", " ".repeat(65_535))).unwrap();
    let out = sim().arg("validate").arg(&file).assert().code(2);
    let err = stderr(&out);
    assert!(err.contains(":1:65551:"), "{err}");
    assert!(err.len() < 600, "a short message: {} bytes", err.len());
}

/// More shards than runs is bad input, not an empty shard.
#[test]
fn more_shards_than_runs_is_bad_input() {
    let dir = TempDir::new().unwrap();
    let out = sim()
        .args(["run", "tests/fixtures/sweep.toml", "--shard"])
        .arg("9999/9999")
        .arg("--out")
        .arg(dir.path().join("s"))
        .assert()
        .code(2);
    let err = stderr(&out);
    assert!(err.contains("at most"), "{err}");
    assert!(!dir.path().join("s").exists(), "nothing written");
}

/// Worlds that validate but would never end (or end after hours) stop with a
/// clear error (exit 2), quickly, and leave no output folder behind.
#[test]
fn zero_time_loops_stop_with_a_clear_error() {
    for (fixture, says) in [
        ("tests/fixtures/zero_time_loop.toml", "without time passing"),
        (
            "tests/fixtures/zero_time_breaker.toml",
            "without time passing",
        ),
        (
            "tests/fixtures/nanosecond_loop.toml",
            "simulated time crawls",
        ),
    ] {
        let dir = TempDir::new().unwrap();
        let out = dir.path().join("out");
        let assert = run_into(fixture, &out, "2", &[]).code(2);
        let err = stderr(&assert);
        assert!(err.contains(says), "{fixture}: {err}");
        assert!(!out.exists(), "{fixture}: the output folder is left behind");
    }
}

/// Messages in the reader's words: no Rust type names, a "did you mean" for a
/// slip, Retry-After told whole seconds, the key the file sets blamed, and a
/// position for a byte that is not UTF-8.
#[test]
fn messages_speak_the_files_language() {
    let base = fs::read_to_string("tests/fixtures/small.toml").unwrap();
    let dir = TempDir::new().unwrap();
    let check = |name: &str, text: String, wants: &[&str]| {
        let file = dir.path().join(format!("{name}.toml"));
        fs::write(&file, text).unwrap();
        let out = sim().arg("validate").arg(&file).assert().code(2);
        let err = stderr(&out);
        for w in wants {
            assert!(err.contains(w), "{name}: wants {w:?} in:\n{err}");
        }
        for rust in ["u32", "struct ", "wanted exactly"] {
            assert!(!err.contains(rust), "{name}: Rust words in:\n{err}");
        }
    };
    check(
        "slip",
        base.replace("backoff = \"full-jitter\"", "backoff = \"full_jitter\""),
        &["did you mean `full-jitter`?"],
    );
    check(
        "typo",
        base.replace("backoff = \"full-jitter\"", "backoff = \"exponental\""),
        &["did you mean `exponential`?"],
    );
    check(
        "preset",
        base.replace("backoff = \"full-jitter\"", "preset = \"grcp\""),
        &["did you mean `grpc`?"],
    );
    check(
        "float",
        base.replace("workers = 4", "workers = 4.5"),
        &["expected a whole number"],
    );
    check(
        "years",
        base.replace("duration = \"10s\"", "duration = \"100years\""),
        &["key `duration`"],
    );
    let mut bytes = base.clone().into_bytes();
    bytes.splice(0..0, b"# \xff\n".iter().copied());
    let file = dir.path().join("latin1.toml");
    fs::write(&file, bytes).unwrap();
    let out = sim().arg("validate").arg(&file).assert().code(2);
    let err = stderr(&out);
    assert!(
        err.contains("line 1, column 3") && err.contains("UTF-8"),
        "{err}"
    );
}

/// An output folder holds the files of exactly one run, with its manifest: a
/// later run replaces it whole, so charts of an earlier run (or a killed run's
/// temporary files) do not stay beside new CSVs.
#[test]
fn an_output_folder_holds_exactly_one_run() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("small");
    run_into("tests/fixtures/small.toml", &out, "2", &["--quiet"]).success();
    fs::write(out.join(".summary.csv.12345.tmp"), b"left by a killed run").unwrap();
    run_into(
        "tests/fixtures/small.toml",
        &out,
        "2",
        &["--quiet", "--no-plots"],
    )
    .success();
    let mut names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "manifest.toml",
            "report.html",
            "summary.csv",
            "timeseries.csv"
        ]
    );
    let manifest = fs::read_to_string(out.join("manifest.toml")).unwrap();
    for line in [
        "scenario = \"small\"",
        "scenario_file = \"tests/fixtures/small.toml\"",
        "seed = 3",
        "charts = false",
        "files = [\"report.html\", \"summary.csv\", \"timeseries.csv\"]",
    ] {
        assert!(manifest.contains(line), "{line} in:\n{manifest}");
    }
    // Nothing but the folder beside it.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// A Retry-After that replaces the backoff is said, not silent: in `sim
/// validate`, in a warning when strategies come out identical, in `sim delays`.
#[test]
fn a_retry_after_that_replaces_the_backoff_is_said() {
    let out = sim()
        .args(["validate", "scenarios/unavailable.toml"])
        .assert()
        .success();
    let text = stdout(&out);
    assert!(
        text.contains("note: strategy \"exponential+retry-after\""),
        "{text}"
    );
    let dir = TempDir::new().unwrap();
    let run = run_into(
        "scenarios/unavailable.toml",
        &dir.path().join("u"),
        "2",
        &["--no-plots"],
    )
    .success();
    let err = stderr(&run);
    assert!(
        err.contains(
            "\"full-jitter+retry-after\" and \"exponential+retry-after\" gave identical results"
        ) && err.contains("replaces the backoff"),
        "{err}"
    );
    let delays = sim()
        .args([
            "delays",
            "exponential+retry-after",
            "--scenario",
            "scenarios/unavailable.toml",
        ])
        .assert()
        .success();
    let text = stdout(&delays);
    assert!(
        text.starts_with("note: strategy \"exponential+retry-after\""),
        "{text}"
    );
}

/// Shell completions and the manual page come from the command's own
/// description, so they list every subcommand.
#[test]
fn completions_and_the_manual_list_every_subcommand() {
    let bash = sim().args(["completions", "bash"]).assert().success();
    let bash = stdout(&bash);
    let man = sim().arg("man").assert().success();
    let man = stdout(&man);
    assert!(man.starts_with(".ie") && man.contains(".TH sim 1"), "{man}");
    for sub in [
        "run",
        "merge",
        "validate",
        "delays",
        "presets",
        "completions",
    ] {
        assert!(bash.contains(sub), "bash completion lacks {sub}");
        assert!(man.contains(sub), "the manual lacks {sub}");
    }
    sim().args(["completions", "tcsh"]).assert().code(2);
}

/// YAML or JSON given to `sim run` is pointed at `sim import`, with the
/// parse error's position kept.
#[test]
fn a_configuration_given_to_run_points_to_import() {
    for file in [
        "examples/import/istio.yaml",
        "examples/import/grpc-service-config.json",
    ] {
        let a = sim().args(["run", file]).assert().code(2);
        let err = crate::common::stderr(&a);
        assert!(err.contains(&format!("{file}:")), "{err}");
        assert!(err.contains("sim import FILE --into SCENARIO"), "{err}");
    }
}

/// gRPC takes any token ratio above 0 (its own throttling test uses 1.6), so
/// a scenario does too; 0 and negative ratios are refused at the key.
#[test]
fn a_token_ratio_above_one_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ratio.toml");
    let with = |ratio: &str| {
        let text = std::fs::read_to_string("scenarios/outage.toml")
            .unwrap()
            .replace(
                "budget = { kind = \"ratio\", ratio = 0.1, window = \"10s\" }",
                &format!(
                    "budget = {{ kind = \"token-bucket\", max_tokens = 10, token_ratio = {ratio} }}"
                ),
            );
        std::fs::write(&file, text).unwrap();
        sim().arg("validate").arg(&file).assert()
    };
    with("1.6").success();
    let err = crate::common::stderr(&with("0").code(2));
    assert!(err.contains("token_ratio"), "{err}");
}

/// Open load from a population: `count` clients each sending a new request
/// `every` so often is the rate `count / every`; the halves alone, or mixed
/// with `rate`, are refused at the key that is wrong or missing.
#[test]
fn open_load_from_a_population() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string("scenarios/outage.toml").unwrap();
    let with = |clients: &str| base.replace("count = 1000\nevery = \"1s\"", clients);
    let s = retry_storm::scenario::parse(
        &with("count = 200\nevery = \"500ms\""),
        std::path::Path::new("p.toml"),
    )
    .unwrap();
    assert!(
        matches!(s.world.load, retry_storm::model::Load::Open { rate_per_s } if rate_per_s == 400.0)
    );
    for (i, (clients, key, words)) in [
        ("count = 1000", "clients.every", "needs `every`"),
        ("every = \"1s\"", "clients.count", "needs `count`"),
        (
            "rate = 10.0\ncount = 5\nevery = \"1s\"",
            "clients.count",
            "not both",
        ),
        ("count = 10\nevery = \"0s\"", "clients.every", "positive"),
    ]
    .into_iter()
    .enumerate()
    {
        let err = crate::common::invalid(dir.path(), i, &with(clients));
        assert!(err.contains(&format!("key `{key}`")), "{clients}: {err}");
        assert!(err.contains(words), "{clients}: {err}");
    }
}
