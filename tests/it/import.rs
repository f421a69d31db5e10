//! `sim import` through the real binary: each shipped example (written from
//! its project's documentation) imports to the behaviour that documentation
//! states, the imported scenario runs, and bad files are refused with the
//! file, the line and the field, writing nothing.

use std::path::Path;

use retry_storm::engine::SimDuration;
use retry_storm::model::ServerModel;
use retry_storm::retry::{BackoffKind, BudgetConfig, Outcome};
use retry_storm::scenario::{self, Scenario};

use crate::common::sim;

/// `sim import FILE --into SCENARIO --out OUT`, loaded.
pub(crate) fn imported(dir: &Path, file: &str, into: &str) -> (Scenario, String) {
    let out = dir.join("imported.toml");
    sim()
        .args(["import", file, "--into", into, "--out"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    (scenario::load(&out).unwrap(), text)
}

/// Where strategy `name` is in `s`.
pub(crate) fn index_of(s: &Scenario, name: &str) -> usize {
    s.strategies
        .iter()
        .position(|st| st.name == name)
        .unwrap_or_else(|| panic!("no strategy {name}"))
}

/// `sim run` of the scenario `imported` wrote in `dir` succeeds.
pub(crate) fn imported_runs(dir: &Path) {
    sim()
        .args(["run", "-q", "--no-plots", "--out"])
        .arg(dir.join("run"))
        .arg(dir.join("imported.toml"))
        .assert()
        .success();
}

pub(crate) fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

/// gRFC A6's example: maxAttempts 4 is 3 retries, 0.1 s doubling to at most
/// 1 s, UNAVAILABLE retried (a reset, a refusal, 429 and 502 to 504 are
/// what gRPC reports as UNAVAILABLE), the method's timeout the deadline of
/// the whole call, and retry throttling of 10 tokens at 0.1: `sim bound`
/// then gives 4 retries in all under total failure. The hedged method sends
/// up to 4 copies 0.5 s apart. Fields gRPC has and the simulator does not
/// are listed in the header.
#[test]
fn a_grpc_service_config_imports_as_grpc_documents_it() {
    let dir = tempfile::TempDir::new().unwrap();
    let (s, text) = imported(
        dir.path(),
        "examples/import/grpc-service-config.json",
        "scenarios/outage.toml",
    );
    let r = s
        .strategies
        .iter()
        .find(|st| st.name == "helloworld.Greeter.SayHello")
        .unwrap();
    assert_eq!(r.policy.max_retries, 3);
    assert_eq!(r.backoff.kind, BackoffKind::Exponential);
    assert_eq!((r.backoff.base, r.backoff.cap), (ms(100), ms(1000)));
    assert_eq!(r.backoff.multiplier, 2.0);
    for o in [Outcome::Status503, Outcome::Reset, Outcome::Refused] {
        assert!(r.policy.retry_on.contains(o), "{o:?}");
    }
    assert!(!r.policy.retry_on.contains(Outcome::Status500));
    assert_eq!(r.policy.deadline, Some(ms(10_000)));
    assert_eq!(r.policy.timeout, None);
    assert_eq!(
        r.budget,
        Some(BudgetConfig::TokenBucket {
            max_tokens: 10.0,
            token_ratio: 0.1
        })
    );
    let h = s
        .strategies
        .iter()
        .find(|st| st.name == "helloworld.Greeter.SayHelloAgain")
        .unwrap();
    let hedging = h.hedging.as_ref().unwrap();
    assert_eq!((hedging.max_attempts, hedging.delay), (4, ms(500)));
    assert!(
        h.policy.retry_on.contains(Outcome::Status500),
        "INTERNAL is non-fatal"
    );
    assert!(
        text.contains("grpc-service-config.json:2 loadBalancingConfig"),
        "{text}"
    );
    assert!(
        text.contains("methodConfig[1].waitForReady = true"),
        "{text}"
    );
    // Every imported value names its line.
    assert!(
        text.contains("base = \"100ms\"  # examples/import/grpc-service-config.json:9 methodConfig[0].retryPolicy.initialBackoff = 0.1s"),
        "{text}"
    );
    let out = sim()
        .args(["bound"])
        .arg(dir.path().join("imported.toml"))
        .output()
        .unwrap();
    let printed = String::from_utf8(out.stdout).unwrap();
    let block = printed
        .split("strategy \"helloworld.Greeter.SayHello\"")
        .nth(1)
        .unwrap();
    assert!(
        block.contains("retries in all, total failure: 4 retries, then none"),
        "{block}"
    );
}

/// Envoy's route: num_retries 3, a per-try timeout of 2 s inside the
/// route's 15 s, "5xx" retrying every 5xx, resets, refusals and per-try
/// timeouts, the back-off of 25 ms to 250 ms, the previous-hosts predicate
/// sending a retry to another replica, the cluster's retry budget of 20%
/// (at least 3) overriding its max_retries, and its outlier detection. The
/// imported scenario runs.
#[test]
fn an_envoy_route_and_cluster_import_as_envoy_documents_them() {
    let dir = tempfile::TempDir::new().unwrap();
    let (s, text) = imported(
        dir.path(),
        "examples/import/envoy-route.yaml",
        "scenarios/fleet.toml",
    );
    let i = index_of(&s, "orders");
    let r = &s.strategies[i];
    assert_eq!(r.policy.max_retries, 3);
    assert_eq!(r.backoff.kind, BackoffKind::Envoy);
    assert_eq!((r.backoff.base, r.backoff.cap), (ms(25), ms(250)));
    assert_eq!(
        (r.policy.timeout, r.policy.deadline),
        (Some(ms(2000)), Some(ms(15_000)))
    );
    for o in [
        Outcome::Status500,
        Outcome::Status503,
        Outcome::Reset,
        Outcome::Refused,
        Outcome::Timeout,
    ] {
        assert!(r.policy.retry_on.contains(o), "{o:?}");
    }
    assert!(!r.policy.retry_on.contains(Outcome::Status429));
    assert!(!r.policy.use_retry_after);
    match &r.budget {
        Some(BudgetConfig::Concurrency(l)) => {
            assert_eq!((l.percent, l.min_concurrency), (0.2, 3));
        }
        other => panic!("{other:?}"),
    }
    let Some(ServerModel::Capacity(server)) = &s.overrides[i].server else {
        panic!("the strategy has a server of its own");
    };
    assert!(server.fleet.retry_other_replica);
    let outlier = server.fleet.outlier.as_ref().unwrap();
    assert_eq!(outlier.consecutive_5xx, Some(5));
    // The rest of the server is the scenario's.
    assert_eq!(server.replicas, 5);
    // The thresholds' connections (1024, as written) and Envoy's defaults
    // for the rest.
    assert_eq!(r.limits, Some(retry_storm::retry::PoolLimits::ENVOY));
    assert!(
        text.contains("host_selection_retry_max_attempts = 3"),
        "{text}"
    );
    assert!(text.contains("connect_timeout = 0.25s"), "{text}");
    imported_runs(dir.path());
}

/// Istio: `attempts` counts retries, not attempts; gateway-error retries
/// 502, 503 and 504 (and per-try timeouts, which Envoy answers 504);
/// connect-failure and refused-stream are refusals; the DestinationRule's
/// maxRetries caps the retries in progress, and its outlier detection ejects
/// after 7 errors in a row with the panic threshold off (Istio's default
/// minHealthPercent 0); its http1MaxPendingRequests is each proxy's
/// waiting places.
#[test]
fn istio_resources_import_as_istio_documents_them() {
    let dir = tempfile::TempDir::new().unwrap();
    let (s, _) = imported(
        dir.path(),
        "examples/import/istio.yaml",
        "scenarios/fleet.toml",
    );
    let i = index_of(&s, "ratings-default");
    let r = &s.strategies[i];
    assert_eq!(r.policy.max_retries, 3);
    assert_eq!(
        (r.policy.timeout, r.policy.deadline),
        (Some(ms(2000)), Some(ms(10_000)))
    );
    for o in [
        Outcome::Status502,
        Outcome::Status503,
        Outcome::Status504,
        Outcome::Refused,
        Outcome::Timeout,
    ] {
        assert!(r.policy.retry_on.contains(o), "{o:?}");
    }
    assert!(!r.policy.retry_on.contains(Outcome::Status500));
    match &r.budget {
        Some(BudgetConfig::Concurrency(l)) => assert_eq!((l.percent, l.min_concurrency), (0.0, 3)),
        other => panic!("{other:?}"),
    }
    let Some(ServerModel::Capacity(server)) = &s.overrides[i].server else {
        panic!("the strategy has a server of its own");
    };
    let outlier = server.fleet.outlier.as_ref().unwrap();
    assert_eq!(outlier.consecutive_5xx, Some(7));
    assert_eq!(outlier.interval, ms(300_000));
    // 100 waiting places; the rest Istio's 2^32 - 1, no limit.
    let l = r.limits.unwrap();
    assert_eq!(
        (l.max_connections, l.max_pending_requests, l.max_requests),
        (u32::MAX, 100, u32::MAX)
    );
    assert_eq!(server.fleet.panic_threshold, 0.0);
}

/// A bad value, an unknown condition, a broken file, an unknown format:
/// exit 2, a message with the file, the line and the field, and no output.
#[test]
fn bad_files_are_refused_at_their_line_and_field() {
    let dir = tempfile::TempDir::new().unwrap();
    let grpc = std::fs::read_to_string("examples/import/grpc-service-config.json").unwrap();
    let envoy = std::fs::read_to_string("examples/import/envoy-route.yaml").unwrap();
    let cases = [
        (
            "four.json",
            grpc.replace(
                "\"maxAttempts\": 4,\n        \"initialBackoff\"",
                "\"maxAttempts\": \"four\",\n        \"initialBackoff\"",
            ),
            ":8: field `methodConfig[0].retryPolicy.maxAttempts`: expected a whole number",
        ),
        (
            "code.json",
            grpc.replace("[\"UNAVAILABLE\"]", "[\"UNAVAILABLE\", \"SOMETIMES\"]"),
            ":12: field `methodConfig[0].retryPolicy.retryableStatusCodes[1]`: \"SOMETIMES\" is not a gRPC status code",
        ),
        (
            "cond.yaml",
            envoy.replace("5xx,reset,connect-failure", "5xx,sometimes"),
            ":16: field `route_config.virtual_hosts[0].routes[0].route.retry_policy.retry_on`: \"sometimes\" is not an Envoy retry condition",
        ),
        (
            "broken.yaml",
            envoy.replace("num_retries: 3", "num_retries: [3"),
            "cannot be read as JSON or YAML",
        ),
        (
            "other.yaml",
            "apples: 3\n".to_owned(),
            ":1: not a configuration sim can import",
        ),
    ];
    for (name, text, words) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let out = dir.path().join(format!("{name}.toml"));
        let run = sim()
            .arg("import")
            .arg(&file)
            .args(["--into", "scenarios/fleet.toml", "--out"])
            .arg(&out)
            .assert()
            .code(2);
        let err = String::from_utf8(run.get_output().stderr.clone()).unwrap();
        assert!(err.contains(&file.display().to_string()), "{name}: {err}");
        assert!(err.contains(words), "{name}: {err}");
        assert!(!out.exists(), "{name}: nothing is written");
    }
    // An existing output is kept unless --force.
    let out = dir.path().join("kept.toml");
    std::fs::write(&out, "keep me").unwrap();
    sim()
        .args(["import", "examples/import/istio.yaml", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
}

/// Three files, one per tier: the users' gRPC policy (3 attempts), the
/// frontend's Envoy sidecar towards the backend (num_retries 2) and the
/// backend's Istio route to the database (attempts 2, which are retries):
/// a chain of three tiers whose worst case is 3, 9 and 27 attempts per
/// request, and which runs. A file with two policies cannot be one tier.
#[test]
fn files_one_per_tier_import_as_a_call_chain() {
    let dir = tempfile::TempDir::new().unwrap();
    let out = dir.path().join("chain.toml");
    sim()
        .args([
            "import",
            "--chain",
            "examples/import/chain/users.json",
            "examples/import/chain/backend.yaml",
            "examples/import/chain/database.yaml",
            "--into",
            "scenarios/outage.toml",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let s = scenario::load(&out).unwrap();
    let chain = s.world.chain.as_ref().unwrap();
    assert_eq!(chain.tiers(), 3);
    assert_eq!((chain.name(1), chain.name(2)), ("backend", "database"));
    let st = s
        .strategies
        .iter()
        .find(|st| st.name == "imported-chain")
        .unwrap();
    assert_eq!(st.policy.max_retries, 2);
    assert_eq!(st.tiers[0].strategy.policy.max_retries, 2);
    assert_eq!(st.tiers[0].strategy.policy.timeout, Some(ms(500)));
    assert_eq!(st.tiers[1].strategy.policy.max_retries, 2);
    assert!(
        st.tiers[1]
            .strategy
            .policy
            .retry_on
            .contains(Outcome::Status503)
    );
    assert!(
        !st.tiers[1]
            .strategy
            .policy
            .retry_on
            .contains(Outcome::Status502)
    );
    let printed = String::from_utf8(sim().arg("bound").arg(&out).output().unwrap().stdout).unwrap();
    let block = printed.split("strategy \"imported-chain\"").nth(1).unwrap();
    assert!(block.contains("database: 27 attempts"), "{block}");
    sim()
        .args(["run", "-q", "--no-plots", "--out"])
        .arg(dir.path().join("run"))
        .arg(&out)
        .assert()
        .success();
    // A tier is one policy: the gRPC example has two methods.
    let err = sim()
        .args([
            "import",
            "--chain",
            "examples/import/chain/users.json",
            "examples/import/grpc-service-config.json",
            "--into",
            "scenarios/outage.toml",
        ])
        .assert()
        .code(2);
    let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("a tier's file holds one retry policy, this one 2"),
        "{err}"
    );
}

/// The bad-input reproducers of December 2026, through the binary: a string
/// holding newlines cannot write TOML through a comment; a NUL byte is
/// refused, not read as the end of the file; an error about the scenario to
/// be written names that scenario, not a file never written; `--out` never
/// replaces a file the import reads, even with `--force`.
#[test]
fn the_december_reproducers_are_refused_or_written_safely() {
    let dir = tempfile::tempdir().unwrap();
    // 01: the echoed value stays in its comment.
    let out = dir.path().join("injected.toml");
    sim()
        .args([
            "import",
            "tests/fixtures/repro/inj.yaml",
            "--into",
            "scenarios/fleet.toml",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    let s = scenario::load(&out).unwrap();
    assert!(
        s.strategies.iter().all(|st| st.name != "injected"),
        "a strategy was injected"
    );
    assert!(
        text.contains(r#"0.25s\n[[strategy]]\nname = "injected""#),
        "the value is echoed, escaped"
    );
    assert!(!text.contains("max_retries = 99\n"), "{text}");
    // 02 and 10: a NUL byte, in the middle or on the first line.
    for (file, line) in [("nulmid.yaml", 25), ("nulhead.yaml", 1)] {
        let path = format!("tests/fixtures/repro/{file}");
        let a = sim().args(["import", &path]).assert().code(2);
        let err = crate::common::stderr(&a);
        assert!(
            err.contains(&format!("{path}:{line}:")) && err.contains("NUL byte"),
            "{err}"
        );
        assert!(!err.contains("empty"), "{err}");
    }
    // 10: an imported scenario that does not validate names what it quotes
    // (here the scenario's own retry policy is broken: a cap below its base;
    // the December reproducer's Istio fleet settings into a one-replica
    // scenario are now left out, not refused).
    let broken = dir.path().join("broken.toml");
    let outage = std::fs::read_to_string("scenarios/outage.toml").unwrap();
    std::fs::write(
        &broken,
        outage.replacen("cap = \"10s\"", "cap = \"100ms\"", 1),
    )
    .unwrap();
    let never = dir.path().join("never.toml");
    let a = sim()
        .args(["import", "examples/import/istio.yaml", "--into"])
        .arg(&broken)
        .arg("--out")
        .arg(&never)
        .assert()
        .code(2);
    let err = crate::common::stderr(&a);
    assert!(err.contains("nothing was written"), "{err}");
    assert!(
        err.contains(&format!("(the scenario for {})", never.display())),
        "{err}"
    );
    assert!(!never.exists());
    // 11: --out naming the input, even with --force.
    let mine = dir.path().join("my.yaml");
    std::fs::copy("examples/import/envoy-route.yaml", &mine).unwrap();
    let before = std::fs::read(&mine).unwrap();
    let a = sim()
        .arg("import")
        .arg(&mine)
        .args(["--into", "scenarios/fleet.toml", "--force", "--out"])
        .arg(&mine)
        .assert()
        .code(2);
    assert!(
        crate::common::stderr(&a).contains("a file this import reads"),
        "{}",
        crate::common::stderr(&a)
    );
    assert_eq!(std::fs::read(&mine).unwrap(), before, "the input is intact");
}

/// An Istio sidecar's `/config_dump` (proto3 JSON, `@type` wrappers, a
/// 64-bit integer as a string): the route Istio wrote where no
/// VirtualService set retries is its mesh default, 2 retries on connection
/// failures, refused streams, UNAVAILABLE and 503, on another host each
/// time; the cluster's circuit breaker is Istio's 2^32 - 1, so no limit.
#[test]
fn an_envoy_config_dump_imports_as_envoy_reads_it() {
    let dir = tempfile::TempDir::new().unwrap();
    let (s, text) = imported(
        dir.path(),
        "examples/import/envoy-config-dump.json",
        "scenarios/fleet.toml",
    );
    let i = index_of(&s, "default");
    let r = &s.strategies[i];
    assert_eq!(r.policy.max_retries, 2);
    for o in [Outcome::Refused, Outcome::Reset, Outcome::Status503] {
        assert!(r.policy.retry_on.contains(o), "{o:?}");
    }
    assert!(!r.policy.retry_on.contains(Outcome::Status500));
    assert_eq!(r.policy.deadline, None);
    match &r.budget {
        Some(BudgetConfig::Concurrency(l)) => assert_eq!(l.min_concurrency, u32::MAX),
        other => panic!("{other:?}"),
    }
    let Some(ServerModel::Capacity(server)) = &s.overrides[i].server else {
        panic!("the strategy has a server of its own");
    };
    assert!(server.fleet.retry_other_replica);
    assert!(text.contains("Envoy config_dump"), "{text}");
    assert!(!text.contains("@type ="), "{text}");
    imported_runs(dir.path());
}
