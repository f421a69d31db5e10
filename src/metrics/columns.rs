//! The one list of a run's figures as they are written and read: every column
//! of `summary.csv` and `timeseries.csv`, in file order, with the heading a
//! table gives it, what it means, and how a table shows it. The CSV writers,
//! `report.html`, the book's generated tables and its list of output columns
//! all read this list, so a figure is named and explained once.

/// How a table shows a column's value (the CSV keeps what the writer wrote).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// As it is: names, whole numbers.
    AsIs,
    /// A number with this many decimals.
    Decimals(usize),
    /// Seconds with this many decimals and the unit; empty is "never" (a
    /// recovery that did not come within the run).
    Seconds(usize),
    /// A share as a percentage with this many decimals.
    Percent(usize),
    /// Seconds, shown in milliseconds below a second (three significant
    /// digits: "7.00 ms", "270 ms") and in seconds above ("1.03 s"): a
    /// latency, or a swept duration.
    Latency,
}

/// One column; `V` is how a file's writer gets its value (nothing for the
/// files whose writers still build rows themselves).
#[derive(Clone, Copy, Debug)]
pub struct Column<V: 'static = ()> {
    /// Its name in the CSV header.
    pub name: &'static str,
    /// A table's short heading.
    pub heading: &'static str,
    /// What it means, in a sentence or two.
    pub meaning: &'static str,
    /// How a table shows it.
    pub shown: Shown,
    /// Its value in a row.
    pub value: V,
}

/// How a `summary.csv` column reads its value from the report and one
/// strategy's run, as the CSV writes it.
pub type SummaryValue = fn(&Report, &StrategyReport) -> String;

const fn col(
    name: &'static str,
    heading: &'static str,
    shown: Shown,
    meaning: &'static str,
) -> Column {
    Column {
        name,
        heading,
        meaning,
        shown,
        value: (),
    }
}

/// A `summary.csv` column and how its value is read.
const fn sum(
    name: &'static str,
    heading: &'static str,
    shown: Shown,
    meaning: &'static str,
    value: SummaryValue,
) -> Column<SummaryValue> {
    Column {
        name,
        heading,
        meaning,
        shown,
        value,
    }
}

/// `v` with `decimals` decimals, empty for none: how the CSVs write a
/// measured number.
pub fn fixed(v: Option<f64>, decimals: usize) -> String {
    v.map_or(String::new(), |v| format!("{v:.decimals$}"))
}

/// Attempts answered with an error response (4xx or 5xx).
fn error_responses(t: &Totals) -> u64 {
    Outcome::ALL
        .iter()
        .filter(|o| o.is_error_response())
        .map(|&o| t.outcomes[o as usize])
        .sum()
}

/// Seconds the breaker was open, summed over the buckets.
fn breaker_open_s(r: &Report, s: &StrategyReport) -> f64 {
    s.buckets.iter().map(|b| b.breaker_open).sum::<f64>() * r.metrics.bucket.as_secs_f64()
}

/// The share of the workers' busy time spent refusing work.
fn reject_work_fraction(t: &Totals) -> f64 {
    if t.busy_ns == 0 {
        0.0
    } else {
        t.reject_ns as f64 / t.busy_ns as f64
    }
}

use super::{Report, StrategyReport, Totals};
use crate::retry::Outcome;
use Shown::{AsIs, Decimals, Latency, Percent, Seconds};

/// `summary.csv`, one row per strategy, in column order. The first thirteen
/// are a contract: scripts may rely on their names and places.
pub const SUMMARY: [Column<SummaryValue>; 36] = [
    sum(
        "strategy",
        "strategy",
        AsIs,
        "the strategy's name in the scenario",
        |_, s| s.name.clone(),
    ),
    sum(
        "logical_requests",
        "requests",
        AsIs,
        "logical requests started in the run",
        |_, s| s.summary.logical_requests.to_string(),
    ),
    sum(
        "succeeded",
        "succeeded",
        AsIs,
        "logical requests that ended in success",
        |_, s| s.summary.succeeded.to_string(),
    ),
    sum(
        "failed",
        "failed",
        AsIs,
        "logical requests given up, for any reason: they never succeeded",
        |_, s| s.summary.failed.to_string(),
    ),
    sum(
        "attempts",
        "attempts",
        AsIs,
        "attempts sent: logical_requests - first_attempts_refused + retries (a request whose first attempt the breaker or the throttle refused sent nothing)",
        |_, s| s.summary.attempts.to_string(),
    ),
    sum(
        "retries",
        "retries",
        AsIs,
        "of the attempts, retries",
        |_, s| s.summary.retries.to_string(),
    ),
    sum(
        "amplification",
        "attempts per request",
        Decimals(3),
        "attempts per logical request: 1 means no retries; under 1 when a breaker or a throttle refused more first attempts than there were retries",
        |_, s| fixed(Some(s.summary.amplification), 4),
    ),
    sum(
        "peak_attempts_per_s",
        "peak attempts/s",
        Decimals(0),
        "the largest attempts rate over one time bucket",
        |_, s| fixed(Some(s.summary.peak_attempts_per_s), 1),
    ),
    sum(
        "peak_load_ratio",
        "peak load / capacity",
        Decimals(2),
        "peak_attempts_per_s over the server's capacity (workers over the mean service time)",
        |_, s| fixed(s.summary.peak_load_ratio, 3),
    ),
    sum(
        "recovery_time_s",
        "recovery",
        Seconds(1),
        "seconds from the end of the last trigger until goodput and backlog are back to the same run without the trigger for good; empty (never) when that does not happen within the run, and without a trigger. Read it with failed: a strategy that gives up at once recovers at once",
        |_, s| fixed(s.summary.recovery_time_s, 1),
    ),
    sum(
        "latency_p50_s",
        "latency p50",
        Latency,
        "median end-to-end latency of successful logical requests: first attempt sent to success received, retries and backoff included",
        |_, s| fixed(s.summary.latency_p50_s, 6),
    ),
    sum(
        "latency_p99_s",
        "latency p99",
        Latency,
        "99th percentile of the same latencies",
        |_, s| fixed(s.summary.latency_p99_s, 6),
    ),
    sum(
        "wasted_work_fraction",
        "work wasted",
        Percent(2),
        "share of the server's busy time spent on answers nobody used: served after the client's timeout or deadline, or cut short by a crash or a blackhole",
        |_, s| fixed(Some(s.summary.wasted_work_fraction), 6),
    ),
    sum(
        "in_flight_at_end",
        "unfinished",
        AsIs,
        "requests still in progress when the run ended (succeeded + failed + in_flight_at_end = logical_requests)",
        |_, s| s.summary.in_flight_at_end.to_string(),
    ),
    sum(
        "failed_not_retryable",
        "failed: not retryable",
        AsIs,
        "failures because the outcome was not one the policy retries",
        |_, s| s.summary.totals.failed_not_retryable.to_string(),
    ),
    sum(
        "failed_retries_exhausted",
        "failed: retries spent",
        AsIs,
        "failures after the last retry allowed",
        |_, s| s.summary.totals.failed_exhausted.to_string(),
    ),
    sum(
        "failed_deadline",
        "failed: deadline",
        AsIs,
        "failures at the request's deadline; with the three above, retries_denied_by_budget and rejected_locally they add up to failed",
        |_, s| s.summary.totals.failed_deadline.to_string(),
    ),
    sum(
        "timeouts",
        "timeouts",
        AsIs,
        "attempts that timed out",
        |_, s| s.summary.totals.outcomes[Outcome::Timeout as usize].to_string(),
    ),
    sum(
        "error_responses",
        "error answers",
        AsIs,
        "error answers received (503, 429, 500, ...)",
        |_, s| error_responses(&s.summary.totals).to_string(),
    ),
    sum(
        "baseline_goodput_per_s",
        "baseline goodput/s",
        Decimals(1),
        "goodput over the baseline window before the first trigger",
        |_, s| fixed(s.summary.baseline_goodput_per_s, 1),
    ),
    sum(
        "capacity_per_s",
        "capacity/s",
        Decimals(0),
        "the server's capacity, requests per second",
        |r, _| fixed(r.capacity_per_s, 1),
    ),
    sum(
        "events",
        "events",
        AsIs,
        "events the run loop handled (the twin's not included). A measure of the simulator's work, not of the world: in a world of one server with nothing between its users and their answers but their own time limits (no budget, breaker, throttle, hedging, fleet or chain), an OCC read and an answer need no event, and a timeout whose answer came first is cancelled rather than handled",
        |_, s| s.summary.totals.events.to_string(),
    ),
    sum(
        "seed",
        "seed",
        AsIs,
        "the seed of every random draw",
        |r, _| r.seed.to_string(),
    ),
    sum(
        "latency_mean_s",
        "latency mean",
        Latency,
        "mean of the same latencies (exact)",
        |_, s| fixed(s.summary.latency_mean_s, 6),
    ),
    sum(
        "retries_denied_by_budget",
        "denied by budget",
        AsIs,
        "retries the retry budget refused (each ends its request)",
        |_, s| s.summary.totals.failed_budget.to_string(),
    ),
    sum(
        "shed",
        "shed",
        AsIs,
        "arrivals the server answered 429 by load shedding",
        |_, s| s.summary.totals.shed.to_string(),
    ),
    sum(
        "expired_dropped",
        "dropped expired",
        AsIs,
        "queued attempts the server dropped unserved because their client had stopped waiting",
        |_, s| s.summary.totals.expired_dropped.to_string(),
    ),
    sum(
        "rejected_locally",
        "refused locally",
        AsIs,
        "attempts the breaker, the throttle or the proxy's pool limits (an overflow) refused before they left (each ends its request)",
        |_, s| s.summary.totals.rejected_locally.to_string(),
    ),
    sum(
        "breaker_open_s",
        "breaker open",
        Seconds(1),
        "seconds the breaker was open (with a breaker in each proxy, summed over them)",
        |r, s| fixed(Some(breaker_open_s(r, s)), 1),
    ),
    sum(
        "successes_lost",
        "successes lost",
        AsIs,
        "successes the same run without the trigger had and this run did not, from the bucket where the first trigger starts to the recovery (or the end of the run): requests failed, or never made, because of the trigger. Never negative: a run that served more than its twin, which only noise does, lost none; empty without a trigger",
        |_, s| {
            s.summary
                .successes_lost
                .map_or(String::new(), |v| v.to_string())
        },
    ),
    sum(
        "extra_attempts",
        "extra attempts",
        AsIs,
        "attempts beyond the same run without the trigger, over the same buckets; negative when the run sent fewer (closed-loop clients waiting out a backoff or a timeout start no new requests, breakers and budgets hold retries back, requests given up at once send no more); empty without a trigger",
        |_, s| {
            s.summary
                .extra_attempts
                .map_or(String::new(), |v| v.to_string())
        },
    ),
    sum(
        "peak_backlog",
        "peak backlog",
        Decimals(0),
        "the largest backlog, requests queued at the server plus requests waiting out a backoff, time-averaged over one bucket",
        |_, s| fixed(Some(s.summary.peak_backlog), 1),
    ),
    sum(
        "crashes",
        "crashes",
        AsIs,
        "times the server crashed under overload (crash_at)",
        |_, s| s.summary.totals.crashes.to_string(),
    ),
    sum(
        "reject_work_fraction",
        "work refusing",
        Percent(2),
        "share of the server's busy time spent refusing requests (reject_cost)",
        |_, s| fixed(Some(reject_work_fraction(&s.summary.totals)), 6),
    ),
    sum(
        "first_attempts_refused",
        "first attempts refused",
        AsIs,
        "of rejected_locally, first attempts: their requests sent nothing",
        |_, s| s.summary.totals.rejected_first.to_string(),
    ),
    sum(
        "peak_at_server",
        "peak at server",
        AsIs,
        "the most requests the server held at once, queued plus in service: what its crash limit (crash_at) counts, unlike peak_backlog",
        |_, s| s.summary.totals.peak_held.to_string(),
    ),
];

/// `timeseries.csv`, one row per (strategy, time bucket), in column order.
/// Rates are per second over the bucket; gauges are time averages over it.
pub const TIMESERIES: [Column; 14] = [
    col("strategy", "strategy", AsIs, "which run"),
    col("t_s", "t", Seconds(1), "the bucket's start"),
    col(
        "attempts_per_s",
        "attempts/s",
        Decimals(0),
        "attempts sent, first attempts and retries",
    ),
    col("retries_per_s", "retries/s", Decimals(0), "retries sent"),
    col(
        "goodput_per_s",
        "goodput/s",
        Decimals(0),
        "logical requests that succeeded",
    ),
    col(
        "errors_per_s",
        "errors/s",
        Decimals(0),
        "error answers received",
    ),
    col(
        "timeouts_per_s",
        "timeouts/s",
        Decimals(0),
        "attempts that timed out",
    ),
    col(
        "queue_len",
        "queued",
        Decimals(1),
        "time-average queue length at the server",
    ),
    col(
        "in_flight",
        "in flight",
        Decimals(1),
        "time-average logical requests in progress, those backing off included",
    ),
    col(
        "busy_workers",
        "busy workers",
        Decimals(1),
        "time-average busy workers",
    ),
    col(
        "breaker_open",
        "breaker open",
        Decimals(2),
        "share of the bucket the breaker was open (with a breaker in each proxy, the breakers open on average)",
    ),
    col(
        "backing_off",
        "backing off",
        Decimals(1),
        "time-average logical requests waiting out a backoff",
    ),
    col(
        "normal_goodput_per_s",
        "normal goodput/s",
        Decimals(0),
        "the same run without the trigger: its goodput in the same bucket; empty without a trigger",
    ),
    col(
        "normal_backlog",
        "normal backlog",
        Decimals(1),
        "the same run without the trigger: its backlog (queue_len + backing_off) in the same bucket; empty without a trigger",
    ),
];

/// `replicas.csv`, one row per (strategy, replica, time bucket), written for a
/// fleet (a server with more than one replica) only.
pub const REPLICAS: [Column; 11] = [
    col("strategy", "strategy", AsIs, "which run"),
    col("replica", "replica", AsIs, "which replica, from 0"),
    col("t_s", "t", Seconds(1), "the bucket's start"),
    col(
        "arrivals_per_s",
        "arrivals/s",
        Decimals(0),
        "attempts that reached the replica",
    ),
    col(
        "served_per_s",
        "served/s",
        Decimals(0),
        "successes it answered to clients still waiting",
    ),
    col(
        "held",
        "held",
        Decimals(1),
        "time-average requests held, queued plus in service: what its crash limit counts",
    ),
    col(
        "departures_per_s",
        "departures",
        Decimals(1),
        "requests that left it: served, refused by a worker, dropped or thrown out",
    ),
    col(
        "response_s",
        "time in it",
        Decimals(6),
        "the mean time in the replica of the requests that left it in the bucket, queueing included (blank when none left): with held and departures_per_s, Little's law replica by replica",
    ),
    col("crashes", "crashes", AsIs, "times it crashed in the bucket"),
    col(
        "in_rotation",
        "in rotation",
        Decimals(2),
        "share of the bucket the balancer could send it new attempts: 1 in service and healthy, 0 ejected, failing its health checks, starting or scaled away",
    ),
    col(
        "ejections",
        "ejections",
        AsIs,
        "times outlier detection ejected it in the bucket",
    ),
];

/// `proxies.csv`, in order: one row per (strategy, proxy), for runs whose
/// users are behind several proxies.
pub const PROXIES: [Column; 14] = [
    col("strategy", "strategy", AsIs, "which run"),
    col("proxy", "proxy", AsIs, "which proxy, from 0"),
    col(
        "logical_requests",
        "requests",
        AsIs,
        "logical requests its users started",
    ),
    col("succeeded", "ok", AsIs, "of those, answered well"),
    col("failed", "failed", AsIs, "of those, failed for good"),
    col(
        "in_flight_at_end",
        "in flight",
        AsIs,
        "of those, still under way when the run ended",
    ),
    col(
        "attempts",
        "attempts",
        AsIs,
        "attempts it sent, first ones and retries",
    ),
    col("retries", "retries", AsIs, "of those, retries (and hedges)"),
    col(
        "amplification",
        "amplification",
        Decimals(3),
        "attempts per logical request",
    ),
    col(
        "retries_denied_by_budget",
        "budget denied",
        AsIs,
        "requests that failed because its retry budget refused a retry",
    ),
    col(
        "rejected_locally",
        "rejected locally",
        AsIs,
        "requests that failed because its breaker, throttle or pool limits refused an attempt",
    ),
    col(
        "overflow",
        "overflow",
        AsIs,
        "of those, refused by its pool limits: more than max_requests out, or max_pending_requests already waiting (Envoy counts them in upstream_rq_pending_overflow)",
    ),
    col(
        "waited",
        "waited",
        AsIs,
        "attempts that waited for a connection, every one busy (HTTP/1.1 with max_connections out)",
    ),
    col(
        "ejections",
        "ejections",
        AsIs,
        "replicas its own outlier detection ejected (0 when the proxies share one view: replicas.csv counts those)",
    ),
];

/// `defences.csv`, in order: one row per (strategy, time bucket), for the
/// strategies whose server has an adaptive concurrency limit or CoDel.
pub const DEFENCES: [Column; 5] = [
    col("strategy", "strategy", AsIs, "which run"),
    col("t_s", "t", Seconds(3), "start of the time bucket"),
    col(
        "limit",
        "limit",
        AsIs,
        "the adaptive concurrency limit at the bucket's end, summed over the replicas (empty without a limiter)",
    ),
    col(
        "limited_per_s",
        "limited/s",
        Decimals(1),
        "attempts the limiter answered 503 at once, the limit reached (Envoy counts them in rq_blocked)",
    ),
    col(
        "dropped_per_s",
        "dropped/s",
        Decimals(1),
        "attempts CoDel dropped from the queue and answered 503",
    ),
];

/// `cache.csv`, in order: one row per (strategy, time bucket), for worlds
/// with a look-aside cache.
/// `tip.csv` of a tipping-point search, after the level's own column (the
/// `[tip.over]` key, if any). The searched key's values are in its unit:
/// seconds (`_s`) for a duration.
pub const TIP: [Column; 17] = [
    col(
        "load_ratio",
        "load / capacity",
        Decimals(3),
        "offered load over the server's capacity at this level (the first strategy's world; empty without a capacity)",
    ),
    col("strategy", "strategy", AsIs, "which strategy"),
    col(
        "status",
        "status",
        AsIs,
        "found (the median search's boundary is in the range), below (half the worlds or more do not recover even from the mildest trigger), beyond (half or more recover even from the worst), overloaded (more than half are overloaded without any trigger)",
    ),
    col(
        "boundary_s",
        "boundary",
        Latency,
        "the median of the searches' boundaries (each the middle of its last bracket): the trigger half the worlds recover from; empty unless found",
    ),
    col(
        "boundary",
        "boundary",
        Decimals(3),
        "the same, for a key that is not a duration",
    ),
    col(
        "low_s",
        "low",
        Latency,
        "the lower end of the median's confidence interval (empty: below the range)",
    ),
    col(
        "low",
        "low",
        Decimals(3),
        "the same, for a key that is not a duration",
    ),
    col(
        "high_s",
        "high",
        Latency,
        "the upper end of the interval (empty: beyond the range)",
    ),
    col(
        "high",
        "high",
        Decimals(3),
        "the same, for a key that is not a duration",
    ),
    col(
        "confidence",
        "confidence",
        Percent(2),
        "the interval's confidence: 1 - 2 P(B <= j - 1), B binomial(searches, 1/2), j the order statistic used",
    ),
    col(
        "searches",
        "searches",
        AsIs,
        "searches (replications) at this level and strategy",
    ),
    col(
        "found",
        "found",
        AsIs,
        "searches that bracketed a boundary within the range",
    ),
    col(
        "below",
        "below",
        AsIs,
        "searches whose world did not recover from the mildest trigger",
    ),
    col(
        "beyond",
        "beyond",
        AsIs,
        "searches whose world recovered from the worst trigger",
    ),
    col(
        "overloaded",
        "overloaded",
        AsIs,
        "searches whose world was overloaded without the trigger",
    ),
    col(
        "runs",
        "runs",
        AsIs,
        "runs the searches took, each with its twin",
    ),
    col(
        "replication",
        "replication",
        AsIs,
        "searches.csv: which replication (its seed is derived from the scenario's and this)",
    ),
];

pub const RISK: [Column; 27] = [
    col("strategy", "strategy", AsIs, "which strategy"),
    col(
        "triggers_per_day",
        "triggers/day",
        Decimals(2),
        "risk.csv: [risk] per_day, the triggers expected in a day (a Poisson process)",
    ),
    col(
        "calm",
        "calm",
        AsIs,
        "risk.csv: the watched count at or under which a walk, its trigger over, has recovered ([risk] calm, or the median when the trigger starts)",
    ),
    col(
        "tipped",
        "tipped",
        AsIs,
        "risk.csv: the watched count at which a walk has tipped ([risk] tipped)",
    ),
    col(
        "levels",
        "levels",
        AsIs,
        "risk.csv: how many levels splitting climbed, the last at tipped (risk-levels.csv lists them)",
    ),
    col(
        "p_tip",
        "P(tip)",
        Decimals(6),
        "risk.csv: the chance that one trigger tips the world, by multilevel splitting: the mean of the independent estimates",
    ),
    col(
        "p_tip_low",
        "low",
        Decimals(6),
        "risk.csv: the lower end of its 95% interval (Student's t over the estimates; not below 0)",
    ),
    col("p_tip_high", "high", Decimals(6), "risk.csv: the upper end"),
    col(
        "p_day",
        "P(day)",
        Decimals(6),
        "risk.csv: the chance that some trigger tips it within a day, 1 - exp(-triggers_per_day x p_tip)",
    ),
    col(
        "p_day_low",
        "low",
        Decimals(6),
        "risk.csv: the same from p_tip_low",
    ),
    col(
        "p_day_high",
        "high",
        Decimals(6),
        "risk.csv: the same from p_tip_high",
    ),
    col(
        "walks",
        "walks",
        AsIs,
        "risk.csv: walks splitting simulated (pilot and estimates; brute force's not counted)",
    ),
    col(
        "timed_out",
        "timed out",
        AsIs,
        "risk.csv: of them, walks that neither tipped nor recovered within [risk] after (many: give more time)",
    ),
    col(
        "fell_back",
        "fell back",
        AsIs,
        "risk.csv: walks that, from tipped, got back to calm within after (most: tipped is not a state this strategy stays in)",
    ),
    col(
        "tried_from_tipped",
        "tried",
        AsIs,
        "risk.csv: walks tried from tipped (the pilot's that got there)",
    ),
    col(
        "brute_trials",
        "trials",
        AsIs,
        "risk.csv: brute-force walks ([risk] brute; empty without)",
    ),
    col(
        "brute_tipped",
        "tipped",
        AsIs,
        "risk.csv: of them, walks that tipped",
    ),
    col(
        "brute_p",
        "P(tip)",
        Decimals(6),
        "risk.csv: brute force's chance, brute_tipped / brute_trials",
    ),
    col(
        "brute_low",
        "low",
        Decimals(6),
        "the lower end of brute force's Wilson 95% interval (0 to 3.84 / trials when none tipped)",
    ),
    col("brute_high", "high", Decimals(6), "the upper end"),
    col(
        "level",
        "level",
        AsIs,
        "risk-levels.csv: the level's number, from 1",
    ),
    col(
        "in_progress",
        "count",
        AsIs,
        "risk-levels.csv: the watched count at the level (attempts held at the server, or requests in progress: [risk] watch)",
    ),
    col(
        "p_reach",
        "P(reach)",
        Decimals(6),
        "risk-levels.csv: the chance a trigger's walk reaches the level before it recovers, by splitting (mean of the estimates)",
    ),
    col(
        "p_reach_low",
        "low",
        Decimals(6),
        "risk-levels.csv: its 95% interval's lower end",
    ),
    col(
        "p_reach_high",
        "high",
        Decimals(6),
        "risk-levels.csv: its upper end",
    ),
    col(
        "brute_reached",
        "reached",
        AsIs,
        "risk-levels.csv: brute-force walks that reached the level",
    ),
    col(
        "brute_p_reach",
        "P(reach)",
        Decimals(6),
        "risk-levels.csv: their share of the trials",
    ),
];

pub const CACHE: [Column; 7] = [
    col("strategy", "strategy", AsIs, "which run"),
    col("t_s", "t", Seconds(3), "start of the time bucket"),
    col(
        "hits_per_s",
        "hits/s",
        Decimals(1),
        "requests the cache answered (after one network round trip; the server never asked)",
    ),
    col(
        "misses_per_s",
        "misses/s",
        Decimals(1),
        "requests whose key was not cached (or had expired), sent to the server",
    ),
    col(
        "gated_per_s",
        "gated/s",
        Decimals(1),
        "requests that missed and the warm-up gate (miss_limit) failed at once",
    ),
    col(
        "hit_ratio",
        "hit ratio",
        Decimals(4),
        "hits / lookups in the bucket (empty without lookups)",
    ),
    col(
        "entries",
        "entries",
        AsIs,
        "keys cached at the bucket's end",
    ),
];

/// `slow.csv`, in order: one row per strategy, when `[metrics] slow` is set.
pub const SLOW: [Column; 7] = [
    col("strategy", "strategy", AsIs, "which run"),
    col(
        "slow_s",
        "threshold",
        Seconds(3),
        "[metrics] slow: the latency a success should stay within",
    ),
    col("succeeded", "ok", AsIs, "logical requests answered well"),
    col(
        "slower",
        "slower",
        AsIs,
        "of those, the ones that took longer than the threshold (from the latency histogram: one within 0.8% above it counts as within)",
    ),
    col(
        "slower_share",
        "slower share",
        Decimals(6),
        "slower / succeeded",
    ),
    col(
        "failed",
        "failed",
        AsIs,
        "logical requests that failed for good",
    ),
    col(
        "within_share",
        "good within",
        Decimals(6),
        "(succeeded - slower) / (succeeded + failed): the share of the requests that ended which were answered well within the threshold, as a latency SLO counts them",
    ),
];

/// `tiers.csv`, in order: a call chain's tiers, one row per (strategy, tier).
pub const TIERS: [Column; 15] = [
    col("strategy", "strategy", AsIs, "which run"),
    col(
        "tier",
        "tier",
        AsIs,
        "0 for the server the users call, then the services in file order",
    ),
    col("service", "service", AsIs, "the tier's name"),
    col(
        "calls",
        "calls",
        AsIs,
        "logical requests to the tier: the users' requests for tier 0, its callers' calls below",
    ),
    col(
        "calls_failed",
        "calls failed",
        AsIs,
        "of those, the ones their caller gave up on (for tier 0, the users' requests that did not succeed)",
    ),
    col(
        "rejected_locally",
        "refused locally",
        AsIs,
        "of those, the ones whose attempt their callers' breaker or throttle refused before it went out (tier 0: the users')",
    ),
    col(
        "attempts",
        "attempts",
        AsIs,
        "attempts that reached the tier, retries included",
    ),
    col("retries", "retries", AsIs, "of those, retries"),
    col(
        "amplification",
        "amplification",
        Decimals(3),
        "attempts at the tier per request the users started",
    ),
    col(
        "ok",
        "ok",
        AsIs,
        "attempts the tier answered OK to a caller still waiting",
    ),
    col(
        "work_s",
        "work",
        Seconds(3),
        "worker time on the tier's own part of attempts (time held waiting for calls excluded)",
    ),
    col(
        "wasted_s",
        "wasted",
        Seconds(3),
        "of it, for attempts whose caller had stopped waiting, or that a crash or an outage threw away",
    ),
    col(
        "wasted_share",
        "wasted share",
        Decimals(3),
        "wasted over work",
    ),
    col(
        "latency_p50_s",
        "latency p50",
        Latency,
        "median latency of the tier's successful calls, from the call's start to its OK at the caller, retries included (tier 0: the users' requests)",
    ),
    col(
        "latency_p99_s",
        "latency p99",
        Latency,
        "their 99th percentile",
    ),
];

/// The column of `summary.csv` named `name`.
pub fn summary(name: &str) -> Option<&'static Column<SummaryValue>> {
    SUMMARY.iter().find(|c| c.name == name)
}

/// The column of either file named `name` (`summary.csv` first), without
/// its value.
pub fn any(name: &str) -> Option<Column> {
    summary(name)
        .map(Column::described)
        .or_else(|| TIMESERIES.iter().find(|c| c.name == name).copied())
        .or_else(|| TIERS.iter().find(|c| c.name == name).copied())
        .or_else(|| TIP.iter().find(|c| c.name == name).copied())
        .or_else(|| RISK.iter().find(|c| c.name == name).copied())
}

impl<V: Copy> Column<V> {
    /// The column's name, heading, meaning and display, without its value.
    pub fn described(&self) -> Column {
        Column {
            name: self.name,
            heading: self.heading,
            meaning: self.meaning,
            shown: self.shown,
            value: (),
        }
    }

    /// `value` (as the CSV has it) as a table shows it.
    pub fn show(&self, value: &str) -> String {
        self.shown.show(value)
    }
}

impl Shown {
    /// `value` (as the CSV has it) shown this way.
    pub fn show(self, value: &str) -> String {
        match self {
            _ if value.is_empty() && matches!(self, Seconds(_)) => "never".into(),
            _ if value.is_empty() => "-".into(),
            AsIs => value.to_string(),
            Decimals(d) => value
                .parse::<f64>()
                .map_or_else(|_| value.to_string(), |v| format!("{v:.d$}")),
            Seconds(d) => value
                .parse::<f64>()
                .map_or_else(|_| value.to_string(), |v| format!("{v:.d$} s")),
            Percent(d) => value
                .parse::<f64>()
                .map_or_else(|_| value.to_string(), |v| format!("{:.d$}%", v * 100.0)),
            Latency => value
                .parse::<f64>()
                .map_or_else(|_| value.to_string(), latency),
        }
    }
}

/// Seconds as [`Shown::Latency`] shows them.
fn latency(s: f64) -> String {
    let ms = s * 1000.0;
    match ms.abs() {
        m if m >= 1000.0 => format!("{s:.2} s"),
        m if m >= 99.95 => format!("{ms:.0} ms"),
        m if m >= 9.995 => format!("{ms:.1} ms"),
        _ => format!("{ms:.2} ms"),
    }
}

/// The sweep summary's statistic suffixes (`summary.csv` of a sweep names a
/// figure's columns `<figure>_<suffix>`), and how a heading says each.
const STATISTICS: [(&str, &str); 7] = [
    ("_ci95_low", "95% low"),
    ("_ci95_high", "95% high"),
    ("_mean", "mean"),
    ("_ci95", "\u{b1} 95%"),
    ("_median", "median"),
    ("_max", "largest"),
    ("_share", "share"),
];

/// The heading and display of column `name` of a CSV whose header is
/// `header`: a run's file's column, a sweep summary's `<figure>_<statistic>`,
/// or a sweep's parameter (its first column).
fn resolve(name: &str, header: &[String]) -> Option<(String, Shown)> {
    if let Some(c) = any(name) {
        return Some((c.heading.to_string(), c.shown));
    }
    for (suffix, word) in STATISTICS {
        let Some(base) = name.strip_suffix(suffix) else {
            continue;
        };
        let Some(f) = super::figures::index(base) else {
            continue;
        };
        let figure = &super::figures::FIGURES[f];
        let (heading, shown) = match summary(base) {
            // A mean of counts is not a count.
            Some(c) if c.shown == AsIs => (c.heading, Decimals(1)),
            Some(c) if word != "share" && !word.starts_with("95%") => (c.heading, c.shown),
            Some(c) => (c.heading, Decimals(3)),
            None => (figure.label, Decimals(figure.decimals)),
        };
        return Some((format!("{heading} ({word})"), shown));
    }
    if header.first().is_some_and(|h| h == name) && name != "strategy" {
        return Some(match name.strip_suffix("_s") {
            Some(parameter) => (parameter.to_string(), Latency),
            None => (name.to_string(), AsIs),
        });
    }
    None
}

/// A Markdown table of the CSV `text`: the rows whose first column is in
/// `rows` (all rows when empty), the given columns, headings from this list.
/// An unknown column is an error naming it.
pub fn markdown_table(text: &str, columns: &[&str], rows: &[&str]) -> Result<String, String> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    let mut picked = Vec::new();
    for name in columns {
        let at = header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("no column {name} in the CSV"))?;
        let (heading, shown) =
            resolve(name, &header).ok_or_else(|| format!("{name} is not a known column"))?;
        picked.push((at, heading, shown, *name == "strategy"));
    }
    let mut out = String::new();
    let headings: Vec<&str> = picked.iter().map(|(_, h, _, _)| h.as_str()).collect();
    out.push_str(&format!("| {} |\n", headings.join(" | ")));
    let rule: Vec<&str> = picked
        .iter()
        .map(|(_, _, _, text)| if *text { "---" } else { "---:" })
        .collect();
    out.push_str(&format!("|{}|\n", rule.join("|")));
    // Rows are picked by their first column or their strategy.
    let strategy = header.iter().position(|h| h == "strategy");
    for record in reader.records() {
        let record = record.map_err(|e| e.to_string())?;
        let keys = [Some(0), strategy].map(|i| i.and_then(|i| record.get(i)).unwrap_or_default());
        if !rows.is_empty() && !keys.iter().any(|k| rows.contains(k)) {
            continue;
        }
        let cells: Vec<String> = picked
            .iter()
            .map(|(at, _, shown, _)| shown.show(record.get(*at).unwrap_or_default()))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    Ok(out)
}

/// A Markdown table of `timeseries.csv` text: per strategy (in file order),
/// the mean of each of `columns` over the buckets that start at `from_s` or
/// later, shown as the column says. The heading says the window.
pub fn markdown_means(text: &str, columns: &[&str], from_s: f64) -> Result<String, String> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    let at = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("no column {name} in the CSV"))
    };
    let t = at("t_s")?;
    let mut picked = Vec::new();
    for name in columns {
        let column = any(name).ok_or_else(|| format!("{name} is not a known column"))?;
        picked.push((at(name)?, column));
    }
    // (strategy, sums, count), strategies in the order they appear.
    let mut groups: Vec<(String, Vec<f64>, u32)> = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| e.to_string())?;
        let time: f64 = record
            .get(t)
            .unwrap_or_default()
            .parse()
            .unwrap_or(f64::NAN);
        if time < from_s {
            continue;
        }
        let name = record.get(0).unwrap_or_default().to_string();
        if groups.last().is_none_or(|g| g.0 != name) {
            groups.push((name, vec![0.0; picked.len()], 0));
        }
        let g = groups.last_mut().expect("just pushed");
        for (k, (i, _)) in picked.iter().enumerate() {
            g.1[k] += record
                .get(*i)
                .unwrap_or_default()
                .parse::<f64>()
                .unwrap_or(0.0);
        }
        g.2 += 1;
    }
    let mut out = format!(
        "| strategy | {} |\n|---|",
        picked
            .iter()
            .map(|(_, c)| format!("{}, mean from {from_s} s", c.heading))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    out.push_str(&"---:|".repeat(picked.len()));
    out.push('\n');
    for (name, sums, n) in groups {
        let cells: Vec<String> = picked
            .iter()
            .zip(&sums)
            .map(|((_, c), s)| c.show(&(s / f64::from(n.max(1))).to_string()))
            .collect();
        out.push_str(&format!("| {name} | {} |\n", cells.join(" | ")));
    }
    Ok(out)
}

/// The Markdown list of a file's columns and their meanings, for the book.
pub fn markdown_meanings<V>(columns: &[Column<V>]) -> String {
    let mut out = String::from("| column | meaning |\n|---|---|\n");
    for c in columns {
        out.push_str(&format!("| `{}` | {} |\n", c.name, c.meaning));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_tables_show_values_as_their_column_says() {
        let summary: Vec<&str> = SUMMARY.iter().map(|c| c.name).collect();
        let timeseries: Vec<&str> = TIMESERIES.iter().map(|c| c.name).collect();
        for list in [summary, timeseries] {
            for (i, c) in list.iter().enumerate() {
                assert!(list[i + 1..].iter().all(|d| d != c), "{c}");
            }
        }
        let csv = "strategy,failed,recovery_time_s,peak_load_ratio\na,3,8.2,4.0689\nb,0,,1.2\n";
        let t = markdown_table(
            csv,
            &["strategy", "recovery_time_s", "peak_load_ratio"],
            &[],
        )
        .unwrap();
        assert_eq!(
            t,
            "| strategy | recovery | peak load / capacity |\n|---|---:|---:|\n\
             | a | 8.2 s | 4.07 |\n| b | never | 1.20 |\n"
        );
        let only_b = markdown_table(csv, &["strategy", "failed"], &["b"]).unwrap();
        assert!(only_b.ends_with("| b | 0 |\n"), "{only_b}");
        assert!(markdown_table(csv, &["nope"], &[]).is_err());
    }

    #[test]
    fn a_sweep_summary_shows_its_parameter_statistics_and_latencies() {
        let csv = "retry.hedging.delay_s,strategy,runs,latency_p99_s_mean,latency_p99_s_ci95,failed_mean\n\
                   0.005,a,3,0.0070,0.0001,0\n0.005,b,3,1.25,0.01,2.5\n0.02,a,3,0.0105,0.0002,0\n";
        let cols = [
            "retry.hedging.delay_s",
            "strategy",
            "latency_p99_s_mean",
            "failed_mean",
        ];
        let t = markdown_table(csv, &cols, &["a"]).unwrap();
        assert_eq!(
            t,
            "| retry.hedging.delay | strategy | latency p99 (mean) | failed (mean) |\n\
             |---:|---|---:|---:|\n\
             | 5.00 ms | a | 7.00 ms | 0.0 |\n| 20.0 ms | a | 10.5 ms | 0.0 |\n"
        );
        let at = markdown_table(csv, &["strategy", "latency_p99_s_mean"], &["0.005"]).unwrap();
        assert!(at.ends_with("| a | 7.00 ms |\n| b | 1.25 s |\n"), "{at}");
        assert!(markdown_table(csv, &["runs_mean"], &[]).is_err());
    }

    #[test]
    fn means_from_a_time_on_are_per_strategy() {
        let csv = "strategy,t_s,goodput_per_s\na,0.0,100\na,1.0,10\na,2.0,20\nb,0.0,5\nb,1.0,7\nb,2.0,9\n";
        let t = markdown_means(csv, &["goodput_per_s"], 1.0).unwrap();
        assert_eq!(
            t,
            "| strategy | goodput/s, mean from 1 s |\n|---|---:|\n| a | 15 |\n| b | 8 |\n"
        );
    }
}
