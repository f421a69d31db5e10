//! "What this run shows": a few sentences written from a run's own figures,
//! which the terminal prints above its table and `report.html` shows at its
//! top. Every number in them is a figure of `summary.csv` (or, for a fleet's
//! rotation, of `replicas.csv`); nothing is judged that the figures do not
//! say.

use crate::metrics::{Report, StrategyReport, Summary};

/// The sentences, in reading order (plain text; names as the scenario spells
/// them).
pub fn takeaway(r: &Report) -> Vec<String> {
    if r.runs.is_empty() {
        return Vec::new();
    }
    if r.outages.is_empty() {
        steady(r)
    } else {
        triggered(r)
    }
}

/// A count in words: "1 request", "2 012 requests".
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

/// `n` with a no-break space every three digits, as the README writes them
/// (no-break, so that a line is never broken inside a number).
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push('\u{a0}');
        }
        out.push(c);
    }
    out
}

/// "a, b and c".
fn list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The strategy with the largest (`max`) or smallest value of `key`, first in
/// file order on a tie; runs without the figure are passed over.
fn pick(
    r: &Report,
    key: impl Fn(&Summary) -> Option<f64>,
    max: bool,
) -> Option<(&StrategyReport, f64)> {
    let mut best: Option<(&StrategyReport, f64)> = None;
    for run in &r.runs {
        let Some(v) = key(&run.summary) else { continue };
        let better = best.is_none_or(|(_, b)| if max { v > b } else { v < b });
        if better {
            best = Some((run, v));
        }
    }
    best
}

#[expect(
    clippy::too_many_lines,
    reason = "one sentence after another, each with its own condition"
)]
fn triggered(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    let windows: Vec<String> = r
        .outages
        .iter()
        .map(|(a, b)| format!("{} s to {} s", a.as_secs_f64(), b.as_secs_f64()))
        .collect();
    out.push(format!(
        "The trigger ran from {}; each strategy is compared with the same run without it.",
        windows.join(" and ")
    ));
    // A world overloaded without its trigger has no normal to get back to.
    let overloaded: Vec<&str> = r
        .runs
        .iter()
        .filter(|x| x.summary.twin_overloaded)
        .map(|x| x.name.as_str())
        .collect();
    if !overloaded.is_empty() {
        let whom = if overloaded.len() == r.runs.len() {
            "every strategy".to_string()
        } else {
            list(&overloaded)
        };
        out.push(format!(
            "Without the trigger this world is itself overloaded under {whom}: the same run \
             without it crashed the server or had more than 1% of its attempts time out or \
             be refused, so there is \
             no normal to recover to and no recovery time is given. Lower the load or give the \
             server more capacity to see what the trigger does."
        ));
    }
    // The storm and its cure, when the run shows both, say what the crash and
    // recovery sentences below would repeat.
    let verdict = storm_and_cure(r);
    let said = verdict.is_some();
    out.extend(verdict);
    // The storm: the largest wave of attempts, and what it did to the server.
    if let Some((run, ratio)) = pick(r, |s| s.peak_load_ratio, true) {
        let crashed: Vec<&StrategyReport> = r
            .runs
            .iter()
            .filter(|x| x.summary.totals.crashes > 0)
            .collect();
        let crashes = match (crashed.is_empty(), r.crash_limit) {
            _ if said => String::new(),
            (true, None) => String::new(),
            (true, Some(limit)) => {
                let held = r.runs.iter().map(|x| x.summary.totals.peak_held).max();
                format!(
                    " The server never crashed: it held at most {} at once, below its crash \
                     limit of {}.",
                    count(held.unwrap_or(0), "request", "requests"),
                    grouped(u64::from(limit))
                )
            }
            (false, _) => {
                let each: Vec<String> = crashed
                    .iter()
                    .map(|x| {
                        format!(
                            "{} ({})",
                            x.name,
                            count(x.summary.totals.crashes, "time", "times")
                        )
                    })
                    .collect();
                let each: Vec<&str> = each.iter().map(String::as_str).collect();
                format!(" The server crashed under {}.", list(&each))
            }
        };
        out.push(format!(
            "The largest wave of attempts was {}'s: {ratio:.1} times the server's capacity at \
             its peak, {:.2} attempts per request over the run.{crashes}",
            run.name, run.summary.amplification
        ));
    }
    // Recovery, soonest first, and those that never got back to normal.
    let mut back: Vec<(&str, f64)> = r
        .runs
        .iter()
        .filter_map(|x| x.summary.recovery_time_s.map(|t| (x.name.as_str(), t)))
        .collect();
    back.sort_by(|a, b| a.1.total_cmp(&b.1));
    let never: Vec<&str> = r
        .runs
        .iter()
        .filter(|x| x.summary.recovery_time_s.is_none() && !x.summary.twin_overloaded)
        .map(|x| x.name.as_str())
        .collect();
    let mut recovery = String::new();
    if let Some(&(_, t0)) = back.first() {
        // Times as the table shows them, to a tenth of a second: equal there,
        // equal here.
        let tenth = |t: f64| (t * 10.0).round();
        let first: Vec<&str> = back
            .iter()
            .filter(|b| tenth(b.1) == tenth(t0))
            .map(|b| b.0)
            .collect();
        let named = if first.len() > 3 {
            format!("{} and {} others", first[0], first.len() - 1)
        } else {
            list(&first)
        };
        recovery.push_str(&format!(
            "Back to normal soonest: {named}, {t0:.1} s after the trigger ended"
        ));
        if let Some(&(last, t)) = back.last().filter(|b| tenth(b.1) > tenth(t0)) {
            recovery.push_str(&format!("; last: {last}, after {t:.1} s"));
        }
        recovery.push('.');
    }
    if !never.is_empty() && !said {
        if !recovery.is_empty() {
            recovery.push(' ');
        }
        recovery.push_str(&format!(
            "{} never got back to normal within the {} s run.",
            list(&never),
            r.duration_s
        ));
    }
    out.push(recovery);
    // What users felt: successes lost and requests failed, least and most.
    let lost = |s: &Summary| s.successes_lost.map(|v| v as f64);
    if let (Some((least, _)), Some((most, _))) = (pick(r, lost, false), pick(r, lost, true)) {
        let felt = |x: &StrategyReport| {
            format!(
                "{} lost {} and failed {}",
                x.name,
                count(
                    x.summary.successes_lost.unwrap_or(0),
                    "success",
                    "successes"
                ),
                count(x.summary.failed, "request", "requests")
            )
        };
        if std::ptr::eq(least, most) {
            out.push(format!("Users felt it: {}.", felt(least)));
        } else {
            out.push(format!("Users felt it: {}; {}.", felt(least), felt(most)));
        }
    }
    if let Some(line) = rotation(r) {
        out.push(line);
    }
    // A quick recovery that came from giving up is said, not flattered: the
    // first back failed many more requests than the strategy that failed
    // fewest (more than a quarter of what it lost, and at least 10 more).
    if let (Some(&(name, _)), Some((fewest, f0))) =
        (back.first(), pick(r, |s| Some(s.failed as f64), false))
    {
        if let Some(x) = r.runs.iter().find(|x| x.name == name) {
            let f = x.summary.failed as f64;
            let lost = x.summary.successes_lost.unwrap_or(0) as f64;
            // Only a trade: the one that failed fewest was back later (to
            // the tenth of a second the table shows), or never.
            let tenth = |t: Option<f64>| t.map(|t| (t * 10.0).round());
            let later = match (
                tenth(fewest.summary.recovery_time_s),
                tenth(x.summary.recovery_time_s),
            ) {
                (Some(a), Some(b)) => a > b,
                (None, _) => true,
                (Some(_), None) => false,
            };
            if later && f > f0 + (0.25 * lost).max(10.0) {
                out.push(format!(
                    "But {} was back soon by giving up: {} failed, against {} for {}.",
                    x.name,
                    count(x.summary.failed, "request", "requests"),
                    grouped(f0 as u64),
                    fewest.name
                ));
            }
        }
    }
    out
}

/// The storm and its cure in one sentence, then which strategy to choose:
/// said only when some strategy knocked the server over again or never got
/// back to normal (the storm) and another did neither (a cure). The cure
/// named is, of those, the one that failed fewest requests (the soonest back
/// on a tie).
fn storm_and_cure(r: &Report) -> Option<String> {
    let stormy =
        |x: &StrategyReport| x.summary.totals.crashes > 0 || x.summary.recovery_time_s.is_none();
    let judged = || r.runs.iter().filter(|x| !x.summary.twin_overloaded);
    let storm: Vec<&StrategyReport> = judged().filter(|x| stormy(x)).collect();
    let cure = judged().filter(|x| !stormy(x)).min_by(|a, b| {
        a.summary.failed.cmp(&b.summary.failed).then(
            a.summary
                .recovery_time_s
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.summary.recovery_time_s.unwrap_or(f64::INFINITY)),
        )
    })?;
    if storm.is_empty() {
        return None;
    }
    let names: Vec<&str> = storm.iter().map(|x| x.name.as_str()).collect();
    let crashes: Vec<u64> = storm.iter().map(|x| x.summary.totals.crashes).collect();
    let (lo, hi) = (
        crashes.iter().copied().min().unwrap_or(0),
        crashes.iter().copied().max().unwrap_or(0),
    );
    let crashed = match (lo, hi) {
        (_, 0) => String::new(),
        (0, _) => format!(
            "fell over again (up to {}) or ",
            count(hi, "crash", "crashes")
        ),
        (a, b) if a == b => format!("fell over again ({}) and ", count(a, "crash", "crashes")),
        (a, b) => format!("fell over again ({a} to {b} crashes) and "),
    };
    let down = if storm.iter().all(|x| x.summary.recovery_time_s.is_none()) {
        "did not get back to normal by the end of the run".to_string()
    } else if storm.iter().any(|x| x.summary.recovery_time_s.is_none()) {
        "was back to normal later, or not by the end of the run".to_string()
    } else {
        let slowest = storm
            .iter()
            .filter_map(|x| x.summary.recovery_time_s)
            .fold(0.0, f64::max);
        format!("was back to normal only after up to {slowest:.1} s")
    };
    let failed: Vec<u64> = storm.iter().map(|x| x.summary.failed).collect();
    let (fmin, fmax) = (
        failed.iter().copied().min().unwrap_or(0),
        failed.iter().copied().max().unwrap_or(0),
    );
    let against = if fmin == fmax {
        grouped(fmin)
    } else {
        format!("{} to {}", grouped(fmin), grouped(fmax))
    };
    let back = cure.summary.recovery_time_s.unwrap_or(0.0);
    // "Never crashed" says something only of a server that can crash.
    let (never, fell) = if r.crash_limit.is_some() {
        (
            "never crashed and ",
            "neither fell over again nor stayed down",
        )
    } else {
        ("", "got back to normal")
    };
    Some(format!(
        "The storm and its cure: under {} the server {crashed}{down}, while under {} it \
         {never}was back to normal {back:.1} s after the trigger, with {} failed against \
         {against}. Of the strategies compared, choose {} here: of those under which the \
         server {fell}, it failed the fewest requests.",
        list(&names),
        cure.name,
        count(cure.summary.failed, "request", "requests"),
        cure.name
    ))
}

/// A fleet's balancer rotation (replicas in service and healthy, from
/// `replicas.csv`), when it changed: the strategy that had the fewest in it
/// at once, and the one that had the most (an autoscaler's growth). Counts
/// are of whole buckets: a replica is in when it was for most of a bucket.
fn rotation(r: &Report) -> Option<String> {
    struct Seen<'a> {
        name: &'a str,
        start: usize,
        low: (usize, f64),
        high: (usize, f64),
        slots: usize,
    }
    let width = r.metrics.bucket.as_secs_f64();
    let seen: Vec<Seen> = r
        .runs
        .iter()
        .filter_map(|run| {
            let series = run.replicas.as_ref()?;
            let per = run.buckets.len().max(1);
            let slots = series.len() / per;
            let count = |b: usize| {
                (0..slots)
                    .filter(|&k| series[k * per + b].in_rotation >= 0.5)
                    .count()
            };
            let start = count(0);
            let (mut low, mut high) = ((start, 0.0), (start, 0.0));
            for b in 1..per {
                let n = count(b);
                if n < low.0 {
                    low = (n, b as f64 * width);
                }
                if n > high.0 {
                    high = (n, b as f64 * width);
                }
            }
            Some(Seen {
                name: &run.name,
                start,
                low,
                high,
                slots,
            })
        })
        .collect();
    let mut parts = Vec::new();
    // The deepest fall, as a share of the replicas at the start.
    if let Some(w) = seen
        .iter()
        .filter(|w| w.low.0 < w.start)
        .min_by(|a, b| (a.low.0 * b.start).cmp(&(b.low.0 * a.start)))
    {
        let of = format!(
            "{} of its {}",
            w.low.0,
            count(w.start as u64, "replica", "replicas")
        );
        parts.push(format!(
            "{} had {} in the balancer's rotation at the worst, from {:.1} s",
            w.name,
            if w.low.0 == 0 {
                format!(
                    "none of its {}",
                    count(w.start as u64, "replica", "replicas")
                )
            } else {
                of
            },
            w.low.1
        ));
    }
    // The largest growth.
    if let Some(w) = seen
        .iter()
        .filter(|w| w.high.0 > w.start)
        .max_by(|a, b| (a.high.0 * b.start).cmp(&(b.high.0 * a.start)))
    {
        parts.push(format!(
            "{} grew from {} to {} replicas (of at most {}) by {:.1} s",
            w.name, w.start, w.high.0, w.slots, w.high.1
        ));
    }
    (!parts.is_empty()).then(|| format!("The fleet: {}.", parts.join("; ")))
}

fn steady(r: &Report) -> Vec<String> {
    let mut out = vec![
        "No trigger: the strategies are compared on the same load, with nothing to recover \
         from."
            .to_string(),
    ];
    if let (Some((lo, a)), Some((hi, b))) = (
        pick(r, |s| Some(s.amplification), false),
        pick(r, |s| Some(s.amplification), true),
    ) {
        out.push(if r.runs.len() == 1 || a == b {
            format!("Attempts per request: {a:.3}.")
        } else {
            format!(
                "Attempts per request range from {a:.3} ({}) to {b:.3} ({}).",
                lo.name, hi.name
            )
        });
    }
    let p99 = |s: &Summary| s.latency_p99_s;
    if let (Some((lo, a)), Some((hi, b))) = (pick(r, p99, false), pick(r, p99, true)) {
        out.push(if r.runs.len() == 1 || a == b {
            format!("The p99 latency is {}.", seconds(a))
        } else {
            format!(
                "The p99 latency ranges from {} ({}) to {} ({}).",
                seconds(a),
                lo.name,
                seconds(b),
                hi.name
            )
        });
    }
    let failed: u64 = r.runs.iter().map(|x| x.summary.failed).sum();
    if failed > 0 {
        if let Some((most, f)) = pick(r, |s| Some(s.failed as f64), true) {
            out.push(format!(
                "Most requests failed under {}: {}.",
                most.name,
                grouped(f as u64)
            ));
        }
    }
    out
}

/// "17.2 ms", "1.45 s".
fn seconds(s: f64) -> String {
    if s < 1.0 {
        let ms = format!("{:.1}", s * 1e3);
        format!("{} ms", ms.trim_end_matches(".0"))
    } else {
        format!("{s:.2} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::engine::{SimDuration, SimTime};
    use crate::metrics::{MetricsConfig, Totals};

    /// A run's report with the given (name, recovery, failed, lost, crashes).
    fn report(runs: &[(&str, Option<f64>, u64, u64, u64)], limit: Option<u32>) -> Report {
        Report {
            scenario: "t".into(),
            seed: 1,
            capacity_per_s: Some(100.0),
            crash_limit: limit,
            outages: vec![(
                SimTime::ZERO + SimDuration::from_secs(20),
                SimTime::ZERO + SimDuration::from_secs(22),
            )],
            metrics: MetricsConfig::default(),
            duration_s: 60.0,
            runs: runs
                .iter()
                .enumerate()
                .map(|(i, &(name, rec, failed, lost, crashes))| StrategyReport {
                    tiers: None,
                    proxies: None,
                    defences: None,
                    cache: None,
                    name: name.into(),
                    summary: Summary {
                        // Enough requests for every row's failures (a
                        // debug build's subtraction would overflow).
                        logical_requests: 10_000,
                        succeeded: 10_000 - failed,
                        failed,
                        in_flight_at_end: 0,
                        attempts: 1000,
                        retries: 0,
                        amplification: 1.0 + i as f64,
                        peak_attempts_per_s: 100.0,
                        peak_load_ratio: Some(1.0 + i as f64),
                        recovery_time_s: rec,
                        twin_overloaded: false,
                        successes_lost: Some(lost),
                        extra_attempts: Some(0),
                        peak_backlog: 0.0,
                        latency_p50_s: None,
                        latency_p99_s: None,
                        latency_mean_s: None,
                        wasted_work_fraction: 0.0,
                        baseline_goodput_per_s: None,
                        slower: None,
                        totals: Totals {
                            crashes,
                            peak_held: 40,
                            ..Totals::default()
                        },
                    },
                    buckets: Vec::new(),
                    twin: None,
                    twin_events: 0,
                    aborted: None,
                    replicas: None,
                })
                .collect(),
        }
    }

    #[test]
    fn the_paragraph_says_what_the_figures_say() {
        let text = takeaway(&report(
            &[
                ("quitter", Some(0.0), 2000, 1900, 0),
                ("steady", Some(3.0), 0, 1500, 0),
                ("storm", None, 50, 9000, 2),
            ],
            Some(500),
        ))
        .join(" ");
        assert!(text.contains("storm's: 3.0 times"), "{text}");
        // The storm and its cure, said once: the crash and never-back
        // sentences it stands for are not repeated.
        assert!(
            text.contains(
                "under storm the server fell over again (2 crashes) and did not get back to \
                 normal by the end of the run, while under steady it never crashed"
            ),
            "{text}"
        );
        assert!(text.contains("with 0 requests failed against 50"), "{text}");
        assert!(text.contains("choose steady here"), "{text}");
        assert!(!text.contains("crashed under storm"), "{text}");
        assert!(!text.contains("storm never got back"), "{text}");
        assert!(text.contains("soonest: quitter, 0.0 s"), "{text}");
        assert!(text.contains("steady lost 1\u{a0}500"), "{text}");
        assert!(
            text.contains("quitter was back soon by giving up"),
            "{text}"
        );
        // One that failed more but was back no sooner than the one that
        // failed fewest did not give up to be quick.
        let tie = takeaway(&report(
            &[
                ("first", Some(0.0), 2000, 1900, 0),
                ("best", Some(0.0), 0, 10, 0),
            ],
            None,
        ))
        .join(" ");
        assert!(!tie.contains("giving up"), "{tie}");
        // Without a crash, the limit and the most held are said; without a
        // quick give-up, nothing is said of one.
        let calm = takeaway(&report(
            &[("a", Some(1.0), 0, 10, 0), ("b", Some(1.0), 5, 12, 0)],
            Some(500),
        ))
        .join(" ");
        assert!(calm.contains("held at most 40 requests"), "{calm}");
        assert!(calm.contains("soonest: a and b"), "{calm}");
        assert!(!calm.contains("giving up"), "{calm}");
    }

    #[test]
    fn counts_are_grouped_and_lists_are_joined() {
        assert_eq!(grouped(2_011), "2\u{a0}011");
        assert_eq!(grouped(12_600_000), "12\u{a0}600\u{a0}000");
        assert_eq!(grouped(999), "999");
        assert_eq!(count(1, "request", "requests"), "1 request");
        assert_eq!(list(&["a", "b", "c"]), "a, b and c");
        assert_eq!(list(&["a"]), "a");
        assert_eq!(seconds(0.0172), "17.2 ms");
        assert_eq!(seconds(1.454), "1.45 s");
    }

    #[test]
    fn a_fleet_says_how_its_rotation_changed() {
        use crate::metrics::replicas::ReplicaBucket;
        let mut r = report(
            &[
                ("eject", Some(1.0), 0, 10, 0),
                ("grow", Some(1.0), 0, 10, 0),
            ],
            None,
        );
        // Two buckets of 1 s; eject: 2 replicas, both out in the second;
        // grow: 1 of 3 replicas in at first, all 3 in the second.
        let cell = |in_rotation| ReplicaBucket {
            in_rotation,
            ..ReplicaBucket::default()
        };
        r.metrics.bucket = SimDuration::from_secs(1);
        r.runs[0].buckets = vec![Default::default(); 2];
        r.runs[0].replicas = Some(vec![cell(1.0), cell(0.0), cell(1.0), cell(0.2)]);
        r.runs[1].buckets = vec![Default::default(); 2];
        r.runs[1].replicas = Some(vec![
            cell(1.0),
            cell(1.0),
            cell(0.0),
            cell(0.9),
            cell(0.0),
            cell(1.0),
        ]);
        let text = takeaway(&r).join(" ");
        assert!(
            text.contains(
                "The fleet: eject had none of its 2 replicas in the balancer's rotation at the \
                 worst, from 1.0 s; grow grew from 1 to 3 replicas (of at most 3) by 1.0 s."
            ),
            "{text}"
        );
        // A fleet that never changed says nothing of it.
        r.runs[0].replicas = Some(vec![cell(1.0); 4]);
        r.runs[1].replicas = Some(vec![cell(1.0); 6]);
        assert!(!takeaway(&r).join(" ").contains("The fleet"));
    }
}
