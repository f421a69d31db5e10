fn main() {
    let path = std::path::PathBuf::from(std::env::args().nth(1).unwrap());
    match retry_storm::scenario::load(&path) {
        Err(e) => println!("error: {e}"),
        Ok(s) => {
            let cap = s.world.server.capacity_per_s();
            for st in &s.strategies {
                let t = std::time::Instant::now();
                let r = retry_storm::model::run(&s.world, st, s.seed, s.metrics.bucket);
                let el = t.elapsed();
                let outages: Vec<_> = s.world.outages.iter().map(|o| (o.start, o.end)).collect();
                let sum = retry_storm::metrics::summarize(
                    &s.metrics,
                    &r.buckets,
                    &r.latency,
                    &r.totals,
                    r.in_flight_at_end,
                    &outages,
                    cap,
                );
                println!(
                    "{:14} ev={} {:.1}Mev/s started={} ok={} fail={} inflight={} att={} amp={:.3} peak={:.0} ratio={:.2} rec={:?} p50={:?} p99={:?} waste={:.4} base={:?}",
                    st.name,
                    r.totals.events,
                    r.totals.events as f64 / el.as_secs_f64() / 1e6,
                    sum.logical_requests,
                    sum.succeeded,
                    sum.failed,
                    sum.in_flight_at_end,
                    sum.attempts,
                    sum.amplification,
                    sum.peak_attempts_per_s,
                    sum.peak_load_ratio,
                    sum.recovery_time_s,
                    sum.latency_p50_s,
                    sum.latency_p99_s,
                    sum.wasted_work_fraction,
                    sum.baseline_goodput_per_s
                );
                if std::env::var("TS").is_ok() {
                    let g: Vec<String> = r
                        .buckets
                        .chunks(10)
                        .map(|c| format!("{}", c.iter().map(|b| b.successes).sum::<u64>()))
                        .collect();
                    println!("  good/s: {}", g.join(" "));
                    let a: Vec<String> = r
                        .buckets
                        .chunks(10)
                        .map(|c| format!("{}", c.iter().map(|b| b.attempts).sum::<u64>()))
                        .collect();
                    println!("  att/s: {}", a.join(" "));
                }
            }
        }
    }
}
#[allow(dead_code)]
fn unused() {}
