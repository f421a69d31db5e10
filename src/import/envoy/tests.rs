//! The Envoy reader's unit tests: a field at a time, against Envoy's
//! documented defaults.

use crate::import::tests::{keys, value};

/// A route's retry_policy: num_retries, the per-try timeout and the
/// route's timeout as the whole request's; `5xx` and `reset` as the
/// outcomes Envoy retries; Envoy's default back-off (25 ms, 250 ms).
#[test]
fn a_route_retry_policy_maps_field_by_field() {
    let k = keys(
        "route:\n  cluster: x\n  timeout: 3s\n  retry_policy:\n    retry_on: \"5xx,reset\"\n    \
         num_retries: 2\n    per_try_timeout: 0.5s\n",
    );
    assert_eq!(value(&k, "max_retries"), "2");
    assert_eq!(value(&k, "timeout"), "\"500ms\"");
    assert_eq!(value(&k, "deadline"), "\"3s\"");
    assert_eq!(value(&k, "backoff"), "\"envoy\"");
    assert_eq!(value(&k, "base"), "\"25ms\"");
    assert_eq!(value(&k, "cap"), "\"250ms\"");
    let on = value(&k, "retry_on");
    for o in ["\"500\"", "\"503\"", "\"reset\""] {
        assert!(on.contains(o), "{on}");
    }
    assert!(!on.contains("\"429\""), "5xx is not 4xx: {on}");
}

/// Envoy's defaults where a field is absent: one retry, and a
/// max_interval of ten times the base_interval.
#[test]
fn absent_fields_take_envoys_defaults() {
    let k = keys("retry_policy:\n  retry_on: 5xx\n  retry_back_off:\n    base_interval: 0.1s\n");
    assert_eq!(value(&k, "max_retries"), "1");
    assert_eq!(value(&k, "base"), "\"100ms\"");
    assert_eq!(value(&k, "cap"), "\"1s\"");
}

/// A bare RetryPolicy, as Envoy's documentation shows one, reads as the
/// same policy under a route; a map with other fields is not one.
#[test]
fn a_bare_retry_policy_is_a_routes() {
    let bare = "retry_on: \"5xx,reset\"\nnum_retries: 3\nper_try_timeout: 0.25s\n\
                retry_back_off:\n  base_interval: 0.05s\n  max_interval: 0.5s\n";
    let under_route = format!(
        "retry_policy:\n{}",
        bare.lines().map(|l| format!("  {l}\n")).collect::<String>()
    );
    let k = keys(bare);
    assert_eq!(value(&k, "max_retries"), "3");
    assert_eq!(value(&k, "timeout"), "\"250ms\"");
    assert_eq!(value(&k, "base"), "\"50ms\"");
    assert_eq!(keys(&under_route), k);
    let e = crate::import::import_text("t", "retry_on: 5xx\ncolour: red\n").unwrap_err();
    assert!(e.0.contains("not a configuration sim can import"), "{e:?}");
}

/// proto3 JSON's lowerCamelCase names (as go-control-plane writes a
/// configuration) read as the proto field names Envoy also accepts, a
/// bare policy and a cluster's budget alike; keys that are not field
/// names (an extension's) are left as they are.
#[test]
fn lower_camel_case_names_are_envoys_field_names() {
    let snake = "route:\n  cluster: x\n  timeout: 3s\n  retry_policy:\n    retry_on: \"5xx,reset\"\n    \
                 num_retries: 2\n    per_try_timeout: 0.5s\n    retry_back_off:\n      base_interval: 0.1s\n";
    let camel = "route:\n  cluster: x\n  timeout: 3s\n  retryPolicy:\n    retryOn: \"5xx,reset\"\n    \
                 numRetries: 2\n    perTryTimeout: 0.5s\n    retryBackOff:\n      baseInterval: 0.1s\n";
    assert_eq!(keys(camel), keys(snake));
    assert_eq!(
        keys("retryOn: 5xx\nnumRetries: 4\n"),
        keys("retry_on: 5xx\nnum_retries: 4\n")
    );
    let cluster = "name: c\ncircuitBreakers:\n  thresholds:\n  - retryBudget:\n      \
                   budgetPercent:\n        value: 10\n      minRetryConcurrency: 1\n";
    let k = keys(cluster);
    assert!(value(&k, "budget").contains("min_concurrency = 1"), "{k:?}");
    let tree = &crate::import::tree::parse("envoy.ext.FooBar: {innerKey: 1}\n").unwrap()[0];
    let names = tree.proto_names();
    let (outer, inner) = &names.entries()[0];
    assert_eq!(outer, "envoy.ext.FooBar");
    assert_eq!(inner.entries()[0].0, "inner_key");
}
