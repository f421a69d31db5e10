//! The metastable scenario's claim, over several seeds: after the two-second
//! trigger, naive retries keep goodput near zero to the end of the run, while
//! a budgeted strategy recovers within seconds.

use std::path::Path;

use retry_storm::runner::simulate;
use retry_storm::scenario;

#[test]
fn naive_retries_stay_down_and_budgets_recover() {
    let base =
        scenario::load(Path::new("scenarios/metastable.toml")).unwrap_or_else(|e| panic!("{e}"));
    for seed in [1, 2, 3, 4] {
        let mut s = base.clone();
        s.seed = seed;
        s.strategies.retain(|st| {
            [
                "none",
                "full-jitter",
                "full-jitter+token-bucket",
                "full-jitter+sre-ratio",
            ]
            .contains(&st.name.as_str())
        });
        let report = simulate(&s);
        for run in &report.runs {
            let m = &run.summary;
            let baseline = m.baseline_goodput_per_s.unwrap();
            // Mean goodput over the last 30 s of the run, 60 s after the trigger.
            let tail = &run.buckets[run.buckets.len() - 300..];
            let late = tail.iter().map(|b| b.successes).sum::<u64>() as f64 / 30.0;
            if run.name.contains('+') {
                let t = m
                    .recovery_time_s
                    .unwrap_or_else(|| panic!("seed {seed}: {} did not recover", run.name));
                assert!(t < 10.0, "seed {seed}: {} took {t} s", run.name);
                assert!(
                    late > 0.9 * baseline,
                    "seed {seed}: {} late goodput {late}",
                    run.name
                );
            } else {
                assert_eq!(
                    m.recovery_time_s, None,
                    "seed {seed}: {} recovered",
                    run.name
                );
                assert!(
                    late < 0.1 * baseline,
                    "seed {seed}: {} late goodput {late} of {baseline}",
                    run.name
                );
                assert!(
                    m.wasted_work_fraction > 0.5,
                    "seed {seed}: {} wasted {}",
                    run.name,
                    m.wasted_work_fraction
                );
            }
        }
    }
}
