//! Fleets below the server: a service of a call chain with zones, outlier
//! ejection, active health checks, retries sent to another replica and an
//! autoscaler, each acting on its callers' calls as the server's fleet acts
//! on the users' attempts. Every test compares the same world with and
//! without the feature, through the real binary, and bounds the difference
//! by what the feature does by construction.

use std::path::Path;

use crate::chain::{chain_world, csv, run};
use crate::common::invalid;

/// `column` of tiers.csv for `strategy` at `tier`.
fn get(out: &Path, strategy: &str, tier: usize, column: &str) -> f64 {
    let rows = csv(&out.join("tiers.csv"));
    let h = &rows[0];
    let col = h.iter().position(|c| c == column).unwrap();
    rows[1..]
        .iter()
        .find(|r| r[0] == strategy && r[1] == tier.to_string())
        .unwrap_or_else(|| panic!("no row for {strategy} at tier {tier}"))[col]
        .parse()
        .unwrap()
}

/// The chain of `chain_world`, its database given `db` (keys appended to
/// its table).
fn with_db(outage: &str, strategies: &str, db: &str) -> String {
    chain_world(outage, strategies)
        .replace("mean = \"2ms\" }\n", &format!("mean = \"2ms\" }}\n{db}\n"))
}

/// Zone "b" of a four-replica database (replicas 1 and 3) answers 503 from
/// 5 s to the end of the 40 s run, and nobody retries. Round robin sends
/// half of the database's attempts there, so without ejection about half of
/// its calls fail while the outage lasts (35 s of 40: 0.44 of the run's
/// calls, a little more since failing requests end sooner). Outlier
/// detection (5 consecutive 5xx, up to half the fleet ejected for 60 s)
/// takes zone b out after its first few failures: fewer than 1% fail.
#[test]
fn outlier_detection_ejects_a_services_failing_zone() {
    let dir = tempfile::TempDir::new().unwrap();
    let outage =
        "[[outage]]\nkind = \"503\"\nservice = \"db\"\nzone = \"b\"\nstart = \"5s\"\nend = \"40s\"";
    let strategy = "[[strategy]]\nname = \"a\"\nmax_retries = 0";
    let fleet = "replicas = 4\nzones = [\"a\", \"b\"]";
    let plain = run(dir.path(), "plain", &with_db(outage, strategy, fleet), "1");
    let ejecting = run(
        dir.path(),
        "ejecting",
        &with_db(
            outage,
            strategy,
            &format!(
                "{fleet}\noutlier = {{ consecutive_5xx = 5, max_ejection_percent = 50, base_ejection_time = \"60s\" }}"
            ),
        ),
        "1",
    );
    let share = |out: &Path| get(out, "a", 2, "calls_failed") / get(out, "a", 2, "calls");
    assert!(
        (0.42..0.50).contains(&share(&plain)),
        "without ejection: {}",
        share(&plain)
    );
    assert!(
        share(&ejecting) < 0.01,
        "with ejection: {}",
        share(&ejecting)
    );
    // The users see the same: they do not retry either.
    let users = |out: &Path| get(out, "a", 0, "calls_failed") / get(out, "a", 0, "calls");
    assert!(users(&ejecting) < 0.01 && users(&plain) > 0.4);
}

/// Replica 2 of four goes silent (a blackhole) from 5 s on: its callers'
/// attempts wait out their 100 ms timeout. Health checks every second
/// (two failed in a row take a replica out) remove it within about 2 s, so
/// the timeouts stop; without them a quarter of the calls time out for
/// 35 s.
#[test]
fn health_checks_take_a_silent_replica_of_a_service_out() {
    let dir = tempfile::TempDir::new().unwrap();
    let outage = "[[outage]]\nkind = \"blackhole\"\nservice = \"db\"\nreplicas = [2]\nstart = \"5s\"\nend = \"40s\"";
    let strategy =
        "[[strategy]]\nname = \"a\"\nmax_retries = 0\n[strategy.tiers.db]\ntimeout = \"100ms\"";
    let plain = run(
        dir.path(),
        "plain",
        &with_db(outage, strategy, "replicas = 4"),
        "1",
    );
    let checked = run(
        dir.path(),
        "checked",
        &with_db(
            outage,
            strategy,
            "replicas = 4\nhealth_check = { interval = \"1s\", timeout = \"1s\", unhealthy_threshold = 2 }",
        ),
        "1",
    );
    let share = |out: &Path| get(out, "a", 2, "calls_failed") / get(out, "a", 2, "calls");
    assert!(
        (0.18..0.25).contains(&share(&plain)),
        "without checks: {}",
        share(&plain)
    );
    // At most about 3 s of a quarter of the calls.
    assert!(share(&checked) < 0.025, "with checks: {}", share(&checked));
}

/// Replica 0 of two answers 503 from 5 s to the end of the 40 s run, and
/// the backend retries its calls once. Envoy's `previous_hosts` predicate,
/// which `retry_other_replica` models, makes one more pick when the first
/// lands on the previous replica, and keeps it. With random picks a call
/// fails when its first attempt goes to replica 0 and its retry does too:
/// 1/4 of the calls in the outage sent anywhere, 1/2 x 1/2 x 1/2 = 1/8 with
/// the predicate (35 s of 40: 0.22 and 0.11). Round robin's second pick is
/// the next replica in turn, the other one: no call fails.
#[test]
fn a_services_retry_goes_to_another_replica_when_asked() {
    let dir = tempfile::TempDir::new().unwrap();
    let outage = "[[outage]]\nkind = \"503\"\nservice = \"db\"\nreplicas = [0]\nstart = \"5s\"\nend = \"40s\"";
    let strategy =
        "[[strategy]]\nname = \"a\"\nmax_retries = 0\n[strategy.tiers.db]\nmax_retries = 1";
    let world = |name: &str, db: &str| run(dir.path(), name, &with_db(outage, strategy, db), "1");
    let anywhere = world("anywhere", "replicas = 2\nbalancer = \"random\"");
    let other = world(
        "other",
        "replicas = 2\nbalancer = \"random\"\nretry_other_replica = true",
    );
    let turn = world("turn", "replicas = 2\nretry_other_replica = true");
    let share = |out: &Path| get(out, "a", 2, "calls_failed") / get(out, "a", 2, "calls");
    // About 14 000 calls in the outage: a binomial standard error of 0.004
    // at most; the bounds are 5 of them.
    let near = |x: f64, p: f64| (x - p).abs() < 0.02;
    assert!(
        near(share(&anywhere), 0.25 * 35.0 / 40.0),
        "anywhere: {}",
        share(&anywhere)
    );
    assert!(
        near(share(&other), 0.125 * 35.0 / 40.0),
        "another: {}",
        share(&other)
    );
    assert_eq!(get(&turn, "a", 2, "calls_failed"), 0.0);
}

/// The database is slow (40 ms, 10 workers: 250 calls a second a replica)
/// and the users want about 400 a second (100 users thinking 200 ms). One
/// replica serves 250 a second at most; an autoscaler (target 50%, a sync
/// every 5 s, replicas ready 1 s after they are asked for) adds replicas
/// until the users get what they want: the run serves what a hand count of
/// the autoscaler's steps says, half as much again.
#[test]
fn an_autoscaler_grows_a_slow_service() {
    let dir = tempfile::TempDir::new().unwrap();
    let strategy = "[[strategy]]\nname = \"a\"\nmax_retries = 0";
    let slow = |extra: &str| {
        with_db("", strategy, extra)
            .replace("mean = \"2ms\" }", "mean = \"40ms\" }")
            .replace(
                "name = \"db\"\nworkers = 400",
                "name = \"db\"\nworkers = 10",
            )
    };
    let fixed = run(dir.path(), "fixed", &slow("replicas = 1"), "1");
    let scaled = run(
        dir.path(),
        "scaled",
        &slow(
            "replicas = 1\nautoscale = { min_replicas = 1, max_replicas = 8, average_utilization = 50, sync_period = \"5s\", startup = \"1s\" }",
        ),
        "1",
    );
    let (a, b) = (get(&fixed, "a", 0, "ok"), get(&scaled, "a", 0, "ok"));
    // One replica: 250 a second for 40 s, 10 000, give or take the
    // service times' randomness (about 1% a standard deviation).
    assert!(a <= 250.0 * 40.0 * 1.05, "fixed: {a}");
    // By hand, Kubernetes' rule (desired = ceil(replicas x utilisation /
    // target)): one replica, saturated, until the first sync at 5 s asks for
    // ceil(1 x 100 / 50) = 2, ready at 6 s; two at 80% until the sync at 10
    // s asks for ceil(2 x 80 / 50) = 4, ready at 11 s; four at 40% after,
    // which the rule keeps. The users want 100 / (0.2 s + 48 ms) = 403 a
    // second (six 1 ms hops, two 1 ms services, the database's 40 ms), so
    // 6 s x 250 + 5 s x about 395 + 29 s x 403 = 15 160. Seeds 5 to 8 gave
    // 0.1% to 1.2% more; a second of a phase's edge moves about 1%: 3%.
    assert!(
        (b / 15_160.0 - 1.0).abs() < 0.03,
        "autoscaled {b}, by hand 15 160 (fixed {a})"
    );
}

/// A zone an outage of a service names is the service's; a service without
/// zones says so, naming itself.
#[test]
fn a_service_outage_names_a_zone_of_that_service() {
    let dir = tempfile::TempDir::new().unwrap();
    let strategy = "[[strategy]]\nname = \"a\"";
    let outage =
        "[[outage]]\nkind = \"503\"\nservice = \"db\"\nzone = \"c\"\nstart = \"5s\"\nend = \"10s\"";
    let err = invalid(dir.path(), 0, &with_db(outage, strategy, "replicas = 2"));
    assert!(
        err.contains("key `outage[0].zone`")
            && err.contains("service \"db\" has no zones")
            && err.contains("[[service]]"),
        "{err}"
    );
    let err = invalid(
        dir.path(),
        1,
        &with_db(outage, strategy, "replicas = 2\nzones = [\"a\", \"b\"]"),
    );
    assert!(
        err.contains("key `outage[0].zone`")
            && err.contains("service \"db\"'s zones are \"a\", \"b\""),
        "{err}"
    );
    // The server's zones do not stand for the service's.
    let err = invalid(
        dir.path(),
        2,
        &with_db(outage, strategy, "replicas = 2").replace(
            "name = \"front\"\n",
            "name = \"front\"\nreplicas = 3\nzones = [\"a\", \"b\", \"c\"]\n",
        ),
    );
    assert!(err.contains("service \"db\" has no zones"), "{err}");
    // A replica list of a service is checked against the service, not the
    // server: replica 3 of a four-replica database is fine with one server.
    let ok = with_db(
        &outage.replace("zone = \"c\"", "replicas = [3]"),
        strategy,
        "replicas = 4",
    );
    run(dir.path(), "replica3", &ok, "1");
}

/// Every fleet feature at once on the backend and the database, with
/// outages on a zone and on a replica list, and one strategy hedging its
/// calls to the database: each call into a tier is
/// answered OK, failed for good or still under way at the end, and the
/// output is the same bytes on one thread and on two.
#[test]
fn a_chain_of_fleets_conserves_calls_on_any_thread_count() {
    let dir = tempfile::TempDir::new().unwrap();
    let outages = "[[outage]]\nkind = \"503\"\nservice = \"db\"\nzone = \"b\"\nstart = \"6s\"\nend = \"20s\"\n\
                   [[outage]]\nkind = \"blackhole\"\nservice = \"back\"\nreplicas = [1]\nstart = \"8s\"\nend = \"30s\"";
    let strategies = "[[strategy]]\nname = \"a\"\nmax_retries = 2\n[strategy.tiers.db]\ntimeout = \"200ms\"\n\
                      [[strategy]]\nname = \"b\"\nmax_retries = 1\n[strategy.tiers.back]\ntimeout = \"300ms\"\n\
                      [strategy.tiers.db]\nmax_retries = 0\nhedging = { max_attempts = 3, delay = \"20ms\" }";
    let text = with_db(
        outages,
        strategies,
        "replicas = 4\nzones = [\"a\", \"b\"]\nbalancer = \"least-outstanding\"\nretry_other_replica = true\n\
         outlier = { consecutive_5xx = 5, max_ejection_percent = 50 }\n\
         autoscale = { min_replicas = 4, max_replicas = 6, average_utilization = 20, sync_period = \"2s\", startup = \"1s\" }",
    )
    .replace(
        "name = \"back\"\n",
        "name = \"back\"\nreplicas = 3\nhealth_check = { interval = \"1s\", timeout = \"500ms\" }\n",
    );
    let one = run(dir.path(), "one", &text, "1");
    let two = run(dir.path(), "two", &text, "2");
    for f in ["tiers.csv", "summary.csv", "timeseries.csv"] {
        assert_eq!(
            std::fs::read(one.join(f)).unwrap(),
            std::fs::read(two.join(f)).unwrap(),
            "{f}"
        );
    }
    for s in ["a", "b"] {
        for k in 1..3 {
            let calls = get(&one, s, k, "calls");
            let (ok, failed) = (get(&one, s, k, "ok"), get(&one, s, k, "calls_failed"));
            assert!(ok + failed <= calls, "{s} tier {k}");
            assert!(
                calls - ok - failed < 50.0,
                "{s} tier {k}: {calls} {ok} {failed}"
            );
            assert!(calls <= get(&one, s, k - 1, "attempts"), "{s} tier {k}");
        }
    }
}
