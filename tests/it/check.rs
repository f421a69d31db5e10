//! `sim check`, driven as CI drives it: a temporary git repository whose
//! change raises an Istio route's attempts, the pre-commit hook's own
//! command, the exit codes, JSON and SARIF.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{sim, stderr, stdout};
use tempfile::TempDir;

/// An Istio route to `ratings` with `attempts` retries, each try limited to
/// 2 s; the attempts are on line 12.
fn route(attempts: u32) -> String {
    format!(
        "apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: ratings
spec:
  hosts: [ratings]
  http:
  - route:
    - destination:
        host: ratings
    retries:
      attempts: {attempts}
      perTryTimeout: 2s
"
    )
}

/// Runs git in `dir`, which must succeed.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.email=ci@example.com", "-c", "user.name=ci"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A repository whose HEAD holds `route(2)` in `mesh/ratings.yaml`, and
/// whose work tree holds `route(5)`.
fn repository() -> TempDir {
    let dir = TempDir::new().unwrap();
    git(dir.path(), &["init", "-q"]);
    fs::create_dir(dir.path().join("mesh")).unwrap();
    fs::write(dir.path().join("mesh/ratings.yaml"), route(2)).unwrap();
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "ratings: 2 retries"]);
    fs::write(dir.path().join("mesh/ratings.yaml"), route(5)).unwrap();
    dir
}

/// The pre-commit hook's command (`entry` in `.pre-commit-hooks.yaml`),
/// its `sim` made this build's binary.
fn hook_command() -> Vec<String> {
    let text = fs::read_to_string(".pre-commit-hooks.yaml").unwrap();
    let docs = yaml_rust2::YamlLoader::load_from_str(&text).unwrap();
    let entry = docs[0][0]["entry"].as_str().expect("the hook has an entry");
    let mut words: Vec<String> = entry.split_whitespace().map(str::to_owned).collect();
    assert_eq!(words[0], "sim");
    words.remove(0);
    words
}

#[test]
fn the_hook_gates_a_rise_from_two_to_five_attempts() {
    let repo = repository();
    let a = sim()
        .current_dir(repo.path())
        .args(hook_command())
        .arg("mesh/ratings.yaml")
        .assert()
        .code(1);
    let out = stdout(&a);
    assert!(out.contains("against HEAD: 1 changed"), "{out}");
    let row = out
        .lines()
        .find(|l| l.contains("attempts per request, worst case"))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    // Istio's attempts are retries: 2 and 5 retries are 3 and 6 attempts.
    assert!(
        cells.ends_with(&["3", "6", "at", "most", "3", "CROSSED"]),
        "{row}"
    );
    assert!(
        out.contains("it comes from mesh/ratings.yaml:12"),
        "the table names the line: {out}"
    );
    assert!(stderr(&a).contains("1 limit crossed"));
    // Committed, the same file is no change: nothing is judged.
    git(repo.path(), &["commit", "-qam", "ratings: 5 retries"]);
    let a = sim()
        .current_dir(repo.path())
        .args(hook_command())
        .arg("mesh/ratings.yaml")
        .assert()
        .code(0);
    assert!(stdout(&a).contains("1 unchanged"), "{}", stdout(&a));
}

#[test]
fn json_and_sarif_name_the_changed_line() {
    let repo = repository();
    let a = sim()
        .current_dir(repo.path())
        .args(["check", "mesh", "--base", "HEAD", "--format", "json"])
        .args(["--trial", "unavailable:2s"])
        .assert()
        .code(1);
    let json: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!(json["crossed"], 1);
    let s = &json["strategies"][0];
    assert_eq!(s["status"], "changed");
    let f = &s["figures"][0];
    assert_eq!(
        (&f["id"], &f["before"], &f["after"], &f["crossed"]),
        (&"attempts".into(), &3.0.into(), &6.0.into(), &true.into())
    );
    assert_eq!(f["line"], 12);
    // A trial ran on both sides.
    let trial = s["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "trial.unavailable-2s.failed_share")
        .unwrap();
    assert!(trial["before"].is_number() && trial["after"].is_number());

    let sarif = repo.path().join("check.sarif");
    let a = sim()
        .current_dir(repo.path().join("mesh"))
        .args([
            "check",
            "ratings.yaml",
            "--base",
            "HEAD",
            "--format",
            "sarif",
        ])
        .args(["--trial", "unavailable:2s", "--out"])
        .arg(&sarif)
        .assert()
        .code(1);
    assert!(
        stdout(&a).contains("CROSSED"),
        "the table still goes to stdout"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["ruleId"], "attempts");
    let at = &results[0]["locations"][0]["physicalLocation"];
    // Given from mesh/, the path is made the repository's.
    assert_eq!(at["artifactLocation"]["uri"], "mesh/ratings.yaml");
    assert_eq!(at["region"]["startLine"], 12);
    assert_eq!(
        doc["runs"][0]["tool"]["driver"]["rules"][0]["id"],
        "attempts"
    );
}

#[test]
fn exit_codes_tell_a_verdict_from_bad_input_and_a_failure() {
    let repo = repository();
    let dir = repo.path();
    let run = |args: &[&str]| sim().current_dir(dir).args(["check"]).args(args).assert();
    // Within the limits: 2 retries are 3 attempts.
    fs::write(dir.join("ok.yaml"), route(2)).unwrap();
    run(&["ok.yaml", "--trial", "unavailable:2s"]).code(0);
    // Bad input: 2, naming the file, the line and the key.
    fs::write(
        dir.join("limits.toml"),
        "max_attempts = 3\nmax_attempt = 4\n",
    )
    .unwrap();
    let e = stderr(&run(&["ok.yaml", "--config", "limits.toml"]).code(2));
    assert!(
        e.contains("limits.toml:2") && e.contains("max_attempt"),
        "{e}"
    );
    fs::write(dir.join("limits.toml"), "max_failed_share = 2\n").unwrap();
    let e = stderr(&run(&["ok.yaml", "--config", "limits.toml"]).code(2));
    assert!(
        e.contains("max_failed_share = 2") && e.contains("from 0 to 1"),
        "{e}"
    );
    let e = stderr(&run(&["ok.yaml", "--trial", "crash:2s"]).code(2));
    assert!(e.contains("unavailable") && e.contains("blackhole"), "{e}");
    let e = stderr(&run(&["missing.yaml"]).code(2));
    assert!(e.contains("missing.yaml"), "{e}");
    let e = stderr(&run(&["ok.yaml", "--base", "no-such-rev"]).code(2));
    assert!(e.contains("no-such-rev"), "{e}");
    let e = stderr(&run(&["ok.yaml", "--format", "xml"]).code(2));
    assert!(e.contains("table, json or sarif"), "{e}");
    // Any other failure: 3 (here git cannot be run).
    let e = stderr(
        &sim()
            .current_dir(dir)
            .env("PATH", "")
            .args(["check", "ok.yaml", "--base", "HEAD"])
            .assert()
            .code(3),
    );
    assert!(e.contains("cannot run git"), "{e}");
}

#[test]
fn a_folder_is_matched_with_its_base_file_by_file() {
    let repo = repository();
    let dir = repo.path();
    fs::write(
        dir.join("mesh/details.yaml"),
        route(1).replace("ratings", "details"),
    )
    .unwrap();
    git(dir, &["add", "mesh/details.yaml"]);
    git(dir, &["commit", "-qm", "details"]);
    fs::write(
        dir.join("mesh/reviews.yaml"),
        route(1).replace("ratings", "reviews"),
    )
    .unwrap();
    let a = sim()
        .current_dir(dir)
        .args(["check", "mesh", "--base", "HEAD~1", "--format", "json"])
        .args(["--trial", "unavailable:2s"])
        .assert()
        .code(1);
    let json: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    let status = |name: &str| {
        json["strategies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"].as_str().unwrap().starts_with(name))
            .map(|s| s["status"].as_str().unwrap().to_owned())
    };
    // HEAD~1 holds ratings at 2 retries only.
    assert_eq!(status("ratings").as_deref(), Some("changed"));
    assert_eq!(status("details").as_deref(), Some("new"));
    assert_eq!(status("reviews").as_deref(), Some("new"));
}

#[test]
fn the_same_check_prints_the_same_bytes_at_any_thread_count() {
    let outs: Vec<Vec<u8>> = ["1", "2", "4"]
        .iter()
        .map(|threads| {
            sim()
                .env("RAYON_NUM_THREADS", threads)
                .args(["check", "examples/import/linkerd.yaml", "--format", "json"])
                .assert()
                .get_output()
                .stdout
                .clone()
        })
        .collect();
    assert!(outs[0] == outs[1] && outs[1] == outs[2]);
}

#[test]
fn a_graph_multiplies_the_attempts_down_the_chain() {
    let a = sim()
        .args(["check", "examples/import/chain", "--format", "json"])
        .args(["--graph", "shop.Frontend -> backend -> database-queries"])
        .args(["--max-chain-attempts", "20", "--max-attempts", "3"])
        .args(["--trial", "unavailable:2s"])
        .assert()
        .code(1);
    let json: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    let chain = json["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["format"] == "a call chain")
        .unwrap();
    let after: Vec<f64> = chain["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["after"].as_f64().unwrap())
        .collect();
    // Three attempts at each of three hops: 3, 9, 27; only 27 is over 20.
    assert_eq!(after, [3.0, 9.0, 27.0]);
    assert_eq!(json["crossed"], 1);
    let e = stderr(
        &sim()
            .args(["check", "examples/import/chain", "--graph", "a -> b"])
            .assert()
            .code(2),
    );
    assert!(e.contains("service \"a\""), "{e}");
}

#[test]
fn a_destination_rule_alone_is_not_judged_by_the_worlds_policy() {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("dr.yaml");
    fs::write(
        &file,
        "apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: ratings
spec:
  host: ratings
  trafficPolicy:
    outlierDetection:
      consecutive5xxErrors: 5
      maxEjectionPercent: 100
",
    )
    .unwrap();
    let a = sim()
        .args(["check", "--max-ejection-share", "0.5", "--format", "json"])
        .arg(&file)
        .assert()
        .code(1);
    let json: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    let figures = json["strategies"][0]["figures"].as_array().unwrap();
    let get = |id: &str| figures.iter().find(|f| f["id"] == id).unwrap();
    assert!(get("attempts")["after"].is_null());
    assert_eq!(get("ejection_share")["after"], 1.0);
    assert_eq!(get("ejection_share")["crossed"], true);
    assert!(
        figures
            .iter()
            .all(|f| !f["id"].as_str().unwrap().starts_with("trial."))
    );
}

/// linkerd2#4427: at 50% failure a Finagle budget of ratio r lets through
/// r retries a request (plus its floor, min_per_s a second), each of which
/// succeeds with probability 1 - p, so the share of requests failing in the
/// window is p - (1 - p) (r + min_per_s / rate): 0.395 with Linkerd's 20%,
/// 0.245 with 50% (1000 requests a second, a floor of 10 a second). The
/// trial's 60 s of errors are 60 of its 150 s, and nothing fails outside
/// them. Tolerance: 0.01, five standard deviations of a share of 60 000.
#[test]
fn a_budget_recovers_at_most_its_ratio_of_the_failures() {
    let a = sim()
        .args([
            "check",
            "examples/import/linkerd-budgets.yaml",
            "--format",
            "json",
        ])
        .args(["--trial", "errors:0.5:60s", "--max-attempts", "2000"])
        .assert()
        .code(0);
    let json: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    let strategies = json["strategies"].as_array().unwrap();
    for (s, expected) in strategies.iter().zip([0.395, 0.245]) {
        let failed = s["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "trial.errors-0.5-60s.failed_share")
            .unwrap()["after"]
            .as_f64()
            .unwrap();
        let in_window = failed * 150.0 / 60.0;
        assert!(
            (in_window - expected).abs() < 0.01,
            "{}: {in_window:.4} of the window's requests failed, expected {expected}",
            s["name"]
        );
    }
}
