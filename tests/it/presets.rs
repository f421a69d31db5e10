//! Every preset in a world whose server crashes at t = 1 s and refuses
//! connections to the end: each request that starts in the outage fails after
//! exactly the preset's retry limit, unless its budget or deadline stops it
//! first, or the run ends.

use std::path::Path;

use retry_storm::model;
use retry_storm::scenario::{self, presets::PRESETS};

fn down_for_good() -> scenario::Scenario {
    let strategies: String = PRESETS
        .iter()
        .map(|p| format!("[[strategy]]\nname = \"{0}\"\npreset = \"{0}\"\n\n", p.name))
        .collect();
    let src = format!(
        r#"
name = "presets-down"
seed = 11
duration = "30s"

[clients]
model = "closed"
count = 50
think = {{ dist = "exponential", mean = "100ms" }}

[network]
latency = {{ dist = "constant", value = "1ms" }}

[server]
workers = 8
queue = 100
service = {{ dist = "exponential", mean = "2ms" }}

[[outage]]
kind = "reset"
start = "1s"
end = "30s"

[metrics]
baseline = "1s"

[retry]
timeout = "1s"

{strategies}"#
    );
    scenario::parse(&src, Path::new("presets-down.toml")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn each_preset_gives_up_after_its_own_retry_limit() {
    let s = down_for_good();
    for (i, strategy) in s.strategies.iter().enumerate() {
        let r = model::run(&s.world_for(i), strategy, s.seed, s.metrics.bucket);
        let t = &r.totals;
        let name = &strategy.name;
        let limit = strategy.policy.max_retries;
        // Before the outage nothing fails, so every retry belongs to a request
        // that failed, was stopped by the budget, or was still going at the end.
        if limit == u32::MAX {
            // Unlimited: nobody gives up within the run; each of the 50 clients
            // keeps retrying (cockatiel's growing delays allow the fewest, about
            // eight each in 29 s).
            let failed = t.failed_exhausted + t.failed_budget + t.failed_deadline;
            assert_eq!(failed, 0, "{name}");
            assert!(t.retries > 5 * 50, "{name}: {} retries", t.retries);
            continue;
        }
        let limit = u64::from(limit);
        let stopped_early = t.failed_budget + t.failed_deadline + r.in_flight_at_end;
        // gRPC's throttling stops every retry once five attempts have failed.
        assert!(t.failed_exhausted + t.failed_budget > 0, "{name}");
        assert!(
            t.retries >= limit * t.failed_exhausted
                && t.retries <= limit * (t.failed_exhausted + stopped_early),
            "{name}: {} retries, {} exhausted after {limit}, {stopped_early} stopped early",
            t.retries,
            t.failed_exhausted
        );
        // Only the libraries with a budget are stopped by one.
        assert_eq!(t.failed_budget > 0, strategy.budget.is_some(), "{name}");
    }
}
