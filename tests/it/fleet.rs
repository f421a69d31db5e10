//! Fleets through the real binary: a server of several replicas behind a
//! balancer writes `replicas.csv` and the map `replicas.png`, whose replicas
//! add up to the fleet's own figures, byte for byte the same on any number of
//! threads; one server writes neither. (The balancers against queueing theory: `queueing`.)

use std::fs;
use std::path::Path;

use crate::common::sim;

/// Four replicas of a small server, a crash of the whole fleet at 4 s.
const FLEET: &str = r#"
name = "fleet"
seed = 9
duration = "10s"
[clients]
model = "closed"
count = 200
think = { dist = "exponential", mean = "100ms" }
[network]
latency = { dist = "constant", value = "1ms" }
[server]
workers = 2
queue = 1000
service = { dist = "exponential", mean = "5ms" }
replicas = 4
balancer = "power-of-two"
crash_at = 60
restart = "1s"
[[outage]]
kind = "reset"
start = "4s"
end = "5s"
[metrics]
baseline = "3s"
bucket = "100ms"
[[strategy]]
name = "none"
backoff = "none"
[[strategy]]
name = "full-jitter"
backoff = "full-jitter"
"#;

fn csv(path: &Path) -> Vec<Vec<String>> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn replicas_add_up_to_the_fleet_on_any_thread_count() {
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("fleet.toml");
    fs::write(&file, FLEET).unwrap();
    let run = |threads: &str, out: &str| {
        sim()
            .env("RAYON_NUM_THREADS", threads)
            .arg("run")
            .arg(&file)
            .args(["-q", "--out"])
            .arg(dir.path().join(out))
            .assert()
            .success();
        dir.path().join(out)
    };
    let one = run("1", "one");
    let two = run("2", "two");
    for f in [
        "replicas.csv",
        "replicas.png",
        "summary.csv",
        "timeseries.csv",
    ] {
        assert!(
            fs::read(one.join(f)).unwrap() == fs::read(two.join(f)).unwrap(),
            "{f} differs between 1 and 2 threads"
        );
    }
    let replicas = csv(&one.join("replicas.csv"));
    assert_eq!(
        replicas[0],
        [
            "strategy",
            "replica",
            "t_s",
            "arrivals_per_s",
            "served_per_s",
            "held",
            "crashes"
        ]
    );
    let summary = csv(&one.join("summary.csv"));
    let series = csv(&one.join("timeseries.csv"));
    let col = |rows: &[Vec<String>], name: &str| rows[0].iter().position(|c| c == name).unwrap();
    for strategy in ["none", "full-jitter"] {
        let mine: Vec<&Vec<String>> = replicas
            .iter()
            .skip(1)
            .filter(|r| r[0] == strategy)
            .collect();
        // 4 replicas of 100 buckets.
        assert_eq!(mine.len(), 400, "{strategy}");
        // Every attempt reaches a replica (but those still on the wire at the
        // end): arrivals add up to the attempts sent.
        let arrived: f64 = mine
            .iter()
            .map(|r| r[3].parse::<f64>().unwrap() * 0.1)
            .sum();
        let s = summary.iter().find(|r| r[0] == strategy).unwrap();
        let attempts: f64 = s[col(&summary, "attempts")].parse().unwrap();
        assert!(
            (attempts - arrived).abs() <= 50.0,
            "{strategy}: {arrived} arrivals for {attempts} attempts"
        );
        // The replicas' crashes are the fleet's.
        let crashes: u64 = mine.iter().map(|r| r[6].parse::<u64>().unwrap()).sum();
        assert_eq!(
            crashes.to_string(),
            s[col(&summary, "crashes")],
            "{strategy}"
        );
        // Held, bucket by bucket, is the fleet's queue plus busy workers.
        let (q, b) = (col(&series, "queue_len"), col(&series, "busy_workers"));
        let fleet: Vec<f64> = series
            .iter()
            .skip(1)
            .filter(|r| r[0] == strategy)
            .map(|r| r[q].parse::<f64>().unwrap() + r[b].parse::<f64>().unwrap())
            .collect();
        for (k, total) in fleet.iter().enumerate() {
            let sum: f64 = (0..4)
                .map(|rep| mine[rep * 100 + k][5].parse::<f64>().unwrap())
                .sum();
            // Each file rounds: held to 0.01 per replica, the gauges to 0.1.
            assert!(
                (sum - total).abs() < 0.2,
                "{strategy} bucket {k}: {sum} against {total}"
            );
        }
    }
}

#[test]
fn one_server_writes_no_replicas_file() {
    let dir = tempfile::TempDir::new().unwrap();
    let out = dir.path().join("small");
    sim()
        .args(["run", "tests/fixtures/small.toml", "-q", "--out"])
        .arg(&out)
        .assert()
        .success();
    assert!(out.join("load.png").exists(), "charts were drawn");
    assert!(!out.join("replicas.csv").exists());
    assert!(!out.join("replicas.png").exists());
}

/// An outage can hit some replicas only: the others go on serving, and the
/// one hit serves nothing while it is down. Naming a replica the fleet does
/// not have is bad input, at the key.
#[test]
fn an_outage_can_hit_one_replica() {
    let dir = tempfile::TempDir::new().unwrap();
    let one = FLEET
        .replace("balancer = \"power-of-two\"", "balancer = \"round-robin\"")
        .replace("end = \"5s\"", "end = \"5s\"\nreplicas = [2]");
    let file = dir.path().join("one.toml");
    fs::write(&file, &one).unwrap();
    let out = dir.path().join("one");
    sim()
        .arg("run")
        .arg(&file)
        .args(["-q", "--no-plots", "--out"])
        .arg(&out)
        .assert()
        .success();
    let rows = csv(&out.join("replicas.csv"));
    let served = |strategy: &str, replica: &str, from: f64, to: f64| -> f64 {
        rows.iter()
            .skip(1)
            .filter(|r| r[0] == strategy && r[1] == replica)
            .filter(|r| {
                let t: f64 = r[2].parse().unwrap();
                t >= from && t < to
            })
            .map(|r| r[4].parse::<f64>().unwrap())
            .sum()
    };
    for strategy in ["none", "full-jitter"] {
        assert_eq!(
            served(strategy, "2", 4.0, 5.0),
            0.0,
            "{strategy}: replica 2 is down"
        );
        for replica in ["0", "1", "3"] {
            assert!(
                served(strategy, replica, 4.0, 5.0) > 0.0,
                "{strategy}: replica {replica} goes on serving"
            );
        }
        assert!(
            served(strategy, "2", 6.0, 10.0) > 0.0,
            "{strategy}: replica 2 is back"
        );
    }
    let bad = dir.path().join("bad.toml");
    fs::write(&bad, one.replace("replicas = [2]", "replicas = [7]")).unwrap();
    let a = sim().arg("validate").arg(&bad).assert().code(2);
    let err = crate::common::stderr(&a);
    assert!(
        err.contains("outage[0].replicas")
            && err.contains("replica 7 is out of range: the server has 4 replicas, indices 0 to 3"),
        "{err}"
    );
}
