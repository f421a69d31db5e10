//! `sim import` of Kubernetes resources (the Gateway API's routes, the retry
//! policies attached to them, Linkerd's profiles and annotations) through
//! the real binary: each shipped example (written from its
//! project's documentation) imports to the behaviour that documentation
//! states, and the imported scenario runs.

use retry_storm::model::ServerModel;
use retry_storm::retry::{BackoffKind, BudgetConfig, Outcome};

use crate::import::{imported, imported_runs, index_of, ms};

/// GEP-1731: `attempts` 2 is two retries after the first attempt, on the
/// codes listed (500, 503, 504, not 502) and on connection errors; the
/// first retry after `backoff` (Envoy's base interval, as Envoy Gateway
/// programs it); `backendRequest` is each attempt's limit and `request`
/// the whole request's. GEP-3388's budget on the route's backend: 20% of
/// the last 10 s of requests, and at least 3 retries a second.
#[test]
fn a_gateway_api_route_and_its_budget_import_as_the_api_documents_them() {
    let dir = tempfile::TempDir::new().unwrap();
    let (s, text) = imported(
        dir.path(),
        "examples/import/gateway-api.yaml",
        "scenarios/fleet.toml",
    );
    let i = index_of(&s, "retry-example-0");
    let r = &s.strategies[i];
    assert_eq!(r.policy.max_retries, 2);
    for o in [
        Outcome::Status500,
        Outcome::Status503,
        Outcome::Status504,
        Outcome::Reset,
        Outcome::Refused,
        Outcome::Timeout,
    ] {
        assert!(r.policy.retry_on.contains(o), "{o:?}");
    }
    assert!(!r.policy.retry_on.contains(Outcome::Status502));
    assert!(!r.policy.retry_on.contains(Outcome::Status429));
    assert_eq!(r.backoff.kind, BackoffKind::Envoy);
    assert_eq!((r.backoff.base, r.backoff.cap), (ms(100), ms(1000)));
    assert_eq!(
        (r.policy.timeout, r.policy.deadline),
        (Some(ms(2000)), Some(ms(10_000)))
    );
    match &r.budget {
        Some(BudgetConfig::Finagle {
            ttl,
            min_per_s,
            percent,
        }) => assert_eq!((*ttl, *min_per_s, *percent), (ms(10_000), 3.0, 0.2)),
        other => panic!("{other:?}"),
    }
    assert!(text.contains("counted by each proxy"), "{text}");
    imported_runs(dir.path());
}

/// Envoy Gateway's retry task: 5 retries on connection failures and 500
/// (the status codes retried through `retriable-status-codes`), each try
/// limited to 250 ms, back-off from 100 ms to 10 s; its circuit breaker's
/// 4 retries in progress; its passive health check ejects after 5 errors in
/// a row, checked every 2 s; the request's timeout of 5 s is the deadline;
/// its connection limits are each proxy's `limits`.
#[test]
fn an_envoy_gateway_policy_imports_as_envoy_gateway_documents_it() {
    let dir = tempfile::TempDir::new().unwrap();
    let (s, text) = imported(
        dir.path(),
        "examples/import/envoy-gateway.yaml",
        "scenarios/fleet.toml",
    );
    let i = index_of(&s, "backend-0");
    let r = &s.strategies[i];
    assert_eq!(r.policy.max_retries, 5);
    assert!(r.policy.retry_on.contains(Outcome::Refused));
    assert!(r.policy.retry_on.contains(Outcome::Status500));
    for o in [Outcome::Status503, Outcome::Reset, Outcome::Timeout] {
        assert!(!r.policy.retry_on.contains(o), "{o:?}");
    }
    assert_eq!((r.backoff.base, r.backoff.cap), (ms(100), ms(10_000)));
    assert_eq!(
        (r.policy.timeout, r.policy.deadline),
        (Some(ms(250)), Some(ms(5000)))
    );
    match &r.budget {
        Some(BudgetConfig::Concurrency(l)) => {
            assert_eq!((l.percent, l.min_concurrency), (0.0, 4));
            assert!(!l.count_backoff);
        }
        other => panic!("{other:?}"),
    }
    let Some(ServerModel::Capacity(server)) = &s.overrides[i].server else {
        panic!("the strategy has a server of its own");
    };
    assert!(server.fleet.retry_other_replica);
    let outlier = server.fleet.outlier.as_ref().unwrap();
    assert_eq!(outlier.consecutive_5xx, Some(5));
    assert_eq!(
        (outlier.interval, outlier.base_ejection_time),
        (ms(2000), ms(10_000))
    );
    assert!((outlier.max_ejection_share - 1.0).abs() < 1e-12);
    // Its connection limits: no waiting place, 10 requests out, Envoy
    // Gateway's 1024 connections where the policy sets none.
    let l = r.limits.unwrap();
    assert_eq!(
        (
            l.max_connections,
            l.max_pending_requests,
            l.max_requests,
            l.http2
        ),
        (1024, 0, 10, false)
    );
    assert!(text.contains("maxParallelRequests = 10"), "{text}");
    imported_runs(dir.path());
}

/// Linkerd's annotations: `retry.linkerd.io/http: 5xx` retries every 5xx
/// (not a reset), `limit: "2"` two retries, a retry timeout of 300 ms each
/// attempt's (its expiry retried), the request timeout of 2 s not retried,
/// no budget. The ServiceProfile's retryable route: no count per request
/// (the budget and the 300 ms route timeout are the limits), Linkerd's
/// documented budget of 20% over 10 s with at least 10 retries a second.
#[test]
fn linkerd_annotations_and_profiles_import_as_linkerd_documents_them() {
    let dir = tempfile::TempDir::new().unwrap();
    let (s, _) = imported(
        dir.path(),
        "examples/import/linkerd.yaml",
        "scenarios/fleet.toml",
    );
    let r = &s.strategies[index_of(&s, "schlep-default-0")];
    assert_eq!(r.policy.max_retries, 2);
    for o in [
        Outcome::Status500,
        Outcome::Status503,
        Outcome::Status504,
        Outcome::Timeout,
    ] {
        assert!(r.policy.retry_on.contains(o), "{o:?}");
    }
    assert!(!r.policy.retry_on.contains(Outcome::Reset));
    assert_eq!(r.backoff.kind, BackoffKind::None);
    assert_eq!(
        (r.policy.timeout, r.policy.deadline),
        (Some(ms(300)), Some(ms(2000)))
    );
    assert!(r.budget.is_none(), "{:?}", r.budget);
    let p = &s.strategies[index_of(&s, "books-GET-books-id")];
    assert_eq!(p.policy.max_retries, 1000);
    assert_eq!((p.policy.timeout, p.policy.deadline), (None, Some(ms(300))));
    match &p.budget {
        Some(BudgetConfig::Finagle {
            ttl,
            min_per_s,
            percent,
        }) => assert_eq!((*ttl, *min_per_s, *percent), (ms(10_000), 10.0, 0.2)),
        other => panic!("{other:?}"),
    }
    imported_runs(dir.path());
}

/// A DestinationRule alone, merged into a scenario with a fleet: the
/// scenario's retries (3, full jitter) under the rule's limit on retries in
/// progress, on a server of the scenario's with the rule's ejection.
#[test]
fn a_destination_rule_alone_merges_into_a_scenarios_fleet() {
    let dir = tempfile::TempDir::new().unwrap();
    let rule = dir.path().join("rule.yaml");
    std::fs::write(
        &rule,
        "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: ratings\n\
         spec:\n  host: ratings\n  trafficPolicy:\n    connectionPool:\n      http:\n        \
         maxRetries: 2\n    outlierDetection:\n      consecutive5xxErrors: 4\n      interval: 5s\n",
    )
    .unwrap();
    let (s, text) = imported(dir.path(), rule.to_str().unwrap(), "scenarios/fleet.toml");
    let i = index_of(&s, "ratings");
    let r = &s.strategies[i];
    assert_eq!(r.policy.max_retries, 3);
    assert_eq!(r.backoff.kind, BackoffKind::FullJitter);
    match &r.budget {
        Some(BudgetConfig::Concurrency(l)) => {
            assert_eq!(
                (l.percent, l.min_concurrency, l.count_backoff),
                (0.0, 2, false)
            );
        }
        other => panic!("{other:?}"),
    }
    let Some(ServerModel::Capacity(server)) = &s.overrides[i].server else {
        panic!("the strategy has a server of its own");
    };
    let outlier = server.fleet.outlier.as_ref().unwrap();
    assert_eq!(
        (outlier.consecutive_5xx, outlier.interval),
        (Some(4), ms(5000))
    );
    assert_eq!(server.replicas, 5);
    assert!(text.contains("sets no retries"), "{text}");
    imported_runs(dir.path());
}

/// A folder, as a repository keeps its manifests: the Kubernetes documents
/// of every file are read together, so the DestinationRule of one file
/// limits the VirtualService of another; a gRPC config beside them is
/// imported on its own; hidden folders and other files are not read; a
/// broken file is refused by its own name and line, nothing written.
#[test]
fn a_folder_of_manifests_is_read_as_one_mesh() {
    let dir = tempfile::TempDir::new().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("mesh")).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let istio = std::fs::read_to_string("examples/import/istio.yaml").unwrap();
    let (vs, dr) = istio.split_once("---\n").unwrap();
    std::fs::write(repo.join("mesh/route.yaml"), vs).unwrap();
    std::fs::write(repo.join("mesh/rule.yml"), dr).unwrap();
    std::fs::copy(
        "examples/import/grpc-service-config.json",
        repo.join("grpc.json"),
    )
    .unwrap();
    std::fs::write(repo.join(".git/broken.yaml"), "a: [").unwrap();
    std::fs::write(repo.join("README.md"), "not read").unwrap();
    let (s, text) = imported(dir.path(), repo.to_str().unwrap(), "scenarios/fleet.toml");
    let r = &s.strategies[index_of(&s, "ratings-default")];
    match &r.budget {
        Some(BudgetConfig::Concurrency(l)) => assert_eq!(l.min_concurrency, 3),
        other => panic!("{other:?}"),
    }
    assert!(text.contains("mesh/rule.yml:11"), "{text}");
    index_of(&s, "helloworld.Greeter.SayHello");
    std::fs::write(repo.join("mesh/zz.yaml"), "spec: {host: [").unwrap();
    let out = dir.path().join("again.toml");
    let err = crate::common::stderr(
        &crate::common::sim()
            .args(["import", repo.to_str().unwrap(), "--out"])
            .arg(&out)
            .assert()
            .code(2),
    );
    assert!(err.contains("mesh/zz.yaml:"), "{err}");
    assert!(!out.exists());
}

/// "3 retries at each of 4 hops = 81 calls": four services' manifests in a
/// folder, each route retrying 3 times, made a chain by `--graph`; `sim
/// bound` counts 4 attempts at the first hop and 4^4 = 256 at the fourth
/// under total failure, not 81. A graph naming a service no file
/// configures is refused with the names there are.
#[test]
fn a_graph_makes_a_folders_services_a_chain() {
    let dir = tempfile::TempDir::new().unwrap();
    let mesh = dir.path().join("mesh");
    std::fs::create_dir(&mesh).unwrap();
    for svc in ["gateway", "orders", "payments", "ledger"] {
        std::fs::write(
            mesh.join(format!("{svc}.yaml")),
            format!(
                "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: {svc}\n\
                 spec:\n  hosts: [{svc}]\n  http:\n  - name: default\n    route:\n    - destination:\n        \
                 host: {svc}\n    retries:\n      attempts: 3\n      retryOn: 5xx\n"
            ),
        )
        .unwrap();
    }
    let out = dir.path().join("chain.toml");
    let graph = "gateway -> orders -> payments -> ledger";
    crate::common::sim()
        .args(["import", mesh.to_str().unwrap(), "--graph", graph])
        .args(["--into", "scenarios/outage.toml", "--out"])
        .arg(&out)
        .assert()
        .success();
    let bound = crate::common::sim()
        .arg("bound")
        .arg(&out)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&bound.get_output().stdout).into_owned();
    let chain = &text[text.find("strategy \"imported-chain\"").unwrap()..];
    for (tier, n) in [
        ("server", 4),
        ("orders", 16),
        ("payments", 64),
        ("ledger", 256),
    ] {
        assert!(chain.contains(&format!("{tier}: {n} attempts")), "{chain}");
    }
    let err = crate::common::stderr(
        &crate::common::sim()
            .args([
                "import",
                mesh.to_str().unwrap(),
                "--graph",
                "gateway -> cache",
            ])
            .args(["--into", "scenarios/outage.toml"])
            .assert()
            .code(2),
    );
    assert!(
        err.contains("\"cache\"") && err.contains("ledger-default"),
        "{err}"
    );
}

/// Into a scenario of one replica, the settings that act on a fleet
/// (ejection, retries to another replica) are said and left out, and the
/// rest imports and runs.
#[test]
fn fleet_settings_are_left_out_of_a_one_replica_scenario() {
    let dir = tempfile::TempDir::new().unwrap();
    let (s, text) = imported(
        dir.path(),
        "examples/import/envoy-gateway.yaml",
        "scenarios/outage.toml",
    );
    let r = &s.strategies[index_of(&s, "backend-0")];
    assert_eq!(r.policy.max_retries, 5);
    for key in ["# Left out: outlier", "# Left out: retry_other_replica"] {
        assert!(text.contains(key), "{text}");
    }
    imported_runs(dir.path());
}
