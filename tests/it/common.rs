//! Helpers shared by the integration tests.

use retry_storm::engine::SimDuration;
use retry_storm::model::{self, WorldConfig};
use retry_storm::retry::Strategy;

/// Little's law at the server over one run: the time-average number in it
/// (queued plus busy workers) and its departure rate times the mean time in
/// it, `(L, lambda W)`; also the run, for further checks.
pub fn littles_law(
    world: &WorldConfig,
    strategy: &Strategy,
    seed: u64,
    bucket: SimDuration,
) -> (f64, f64, model::RunResult) {
    let r = model::run(world, strategy, seed, bucket);
    let l = r.buckets.iter().map(|b| b.queue_len + b.busy).sum::<f64>() / r.buckets.len() as f64;
    let t = &r.totals;
    let lambda = t.server_departures as f64 / world.duration.as_secs_f64();
    let w = t.server_sojourn_ns as f64 / t.server_departures as f64 / 1e9;
    (l, lambda * w, r)
}

/// The `sim` binary, as a command to set up and run.
pub fn sim() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("sim").expect("the sim binary is built")
}

/// What a finished command wrote to stderr.
pub fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// What a finished command wrote to stdout.
pub fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

/// `sim run` on `text`, written as `bad{i}.toml` in `dir`, is refused with
/// exit 2 and writes nothing: what it wrote to stderr.
pub fn invalid(dir: &std::path::Path, i: usize, text: &str) -> String {
    let file = dir.join(format!("bad{i}.toml"));
    std::fs::write(&file, text).unwrap();
    let out = dir.join(format!("out{i}"));
    let a = sim()
        .arg("run")
        .arg(&file)
        .args(["-q", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    assert!(!out.exists(), "nothing is written");
    stderr(&a)
}

/// `sim run FILE --out OUT` on `threads` rayon threads, with `extra`
/// arguments.
pub fn run_into(
    file: &str,
    out: &std::path::Path,
    threads: &str,
    extra: &[&str],
) -> assert_cmd::assert::Assert {
    sim()
        .env("RAYON_NUM_THREADS", threads)
        .args(["run", file, "--out"])
        .arg(out)
        .args(extra)
        .assert()
}
