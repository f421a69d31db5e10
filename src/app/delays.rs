//! `sim delays` (the delay distribution of a backoff, a preset or a scenario's
//! strategy, printed and drawn) and `sim presets` (every preset at a glance).

use std::path::PathBuf;

use anyhow::Result;

use super::InputError;
use super::write_file;
use crate::plot;
use crate::retry::delays::{
    RetryDelays, delay_distribution, draw_sequences, policy_delays, summarize,
};
use crate::retry::{Backoff, BackoffKind, BudgetConfig, Jitter, Outcome, Strategy};
use crate::scenario::duration::parse_duration;
use crate::scenario::presets::{self, PRESETS};
use crate::scenario::{self, preset_strategy};

/// What `sim delays` is asked to show, free of clap.
#[derive(Debug, Clone)]
pub struct DelaysOptions {
    /// A preset, a backoff kind, or (with `scenario`) a strategy name.
    pub what: String,
    /// The scenario `what` is a strategy of.
    pub scenario: Option<PathBuf>,
    /// Backoff parameters, for a backoff kind only.
    pub base: Option<String>,
    /// See `base`.
    pub cap: Option<String>,
    /// See `base`.
    pub multiplier: Option<f64>,
    /// See `base`.
    pub first_exponent: Option<u32>,
    /// Retries to show; default: the strategy's limit up to 8, or 5 for a kind.
    pub retries: Option<u32>,
    /// Retry sequences drawn.
    pub samples: usize,
    /// Seed of the jitter.
    pub seed: u64,
    /// Where to draw the distribution.
    pub plot: Option<PathBuf>,
    /// The outcome the policy decides after (preset or strategy only).
    pub after: Option<String>,
    /// The server's Retry-After on each failure (preset or strategy only).
    pub retry_after: Option<String>,
    /// Where to write every drawn delay.
    pub samples_csv: Option<PathBuf>,
}

/// Most retries shown by default for a strategy with a higher limit.
const DEFAULT_SHOWN: u32 = 8;

/// `sim delays`.
pub fn delays(o: &DelaysOptions) -> Result<()> {
    let (title, backoff, limit, strategy) = resolve(o)?;
    let retries = o.retries.unwrap_or(limit.clamp(1, DEFAULT_SHOWN));
    if o.samples == 0 || retries == 0 || retries > 1000 {
        return Err(
            InputError("--samples must be positive and --retries from 1 to 1000".into()).into(),
        );
    }
    let (after, hint) = outcome_options(o)?;
    let sequences = match (after, &strategy) {
        (None, _) => draw_sequences(retries, o.samples, o.seed, |n, m, rng| {
            Some(backoff.delay(n, m, rng))
        }),
        (Some(outcome), Some(s)) => policy_delays(s, outcome, hint, retries, o.samples, o.seed)
            .ok_or_else(|| {
                InputError(format!("\"{}\" does not retry {}", o.what, outcome.name()))
            })?,
        (Some(_), None) => {
            return Err(InputError(
                "--after and --retry-after need a preset or a scenario's strategy, whose policy decides"
                    .into(),
            )
            .into());
        }
    };
    if let Some(path) = &o.samples_csv {
        let mut text = String::from("sequence,retry,delay_s\n");
        for (i, xs) in sequences.iter().enumerate() {
            for (k, x) in xs.iter().enumerate() {
                text.push_str(&format!("{},{},{x}\n", k + 1, i + 1));
            }
        }
        write_file(path, text.as_bytes(), "--samples-csv")?;
    }
    let table = summarize(sequences);
    say!("{title}");
    let context = match (after, hint) {
        (Some(outcome), Some(ra)) => format!(" after {} with Retry-After {ra}", outcome.name()),
        (Some(outcome), None) => format!(" after {}", outcome.name()),
        _ => String::new(),
    };
    let shown = match (
        after,
        strategy.as_ref().and_then(|s| s.policy.throttling_base),
    ) {
        (Some(Outcome::Status429), Some(base)) => Backoff { base, ..backoff },
        _ => backoff,
    };
    say!(
        "{}{context}; {} sequences, seed {}",
        describe_backoff(&shown),
        o.samples,
        o.seed
    );
    print_table(&table);
    if let Some(path) = &o.plot {
        let sub = format!(
            "{}; box 25-75%, line median, whiskers 5-95%, dots min and max",
            describe_backoff(&backoff)
        );
        let bytes =
            plot::delays::render(&format!("Delay before each retry: {title}"), &sub, &table)?;
        let written = write_file(path, &bytes, "--plot")?;
        say!("wrote {}", written.display());
    }
    Ok(())
}

/// `--after` and `--retry-after`: the outcome the delays follow (a 503 when
/// only a Retry-After is given) and the Retry-After it carries.
fn outcome_options(
    o: &DelaysOptions,
) -> Result<(Option<Outcome>, Option<crate::engine::SimDuration>)> {
    let hint = match &o.retry_after {
        Some(text) => {
            Some(parse_duration(text).map_err(|e| InputError(format!("--retry-after: {e}")))?)
        }
        None => None,
    };
    let after = match (&o.after, hint) {
        (Some(name), _) => Some(Outcome::from_name(name).ok_or_else(|| {
            let valid: Vec<&str> = Outcome::ALL.iter().map(|o| o.name()).collect();
            InputError(format!(
                "--after: unknown outcome \"{name}\"; valid: {}",
                valid.join(", ")
            ))
        })?),
        (None, Some(_)) => Some(Outcome::Status503),
        (None, None) => None,
    };
    Ok((after, hint))
}

/// The title, backoff, retry limit and strategy (none for a bare kind) that
/// `o.what` names.
type Resolved = (String, Backoff, u32, Option<Strategy>);

fn resolve(o: &DelaysOptions) -> Result<Resolved> {
    let kind_flags =
        o.base.is_some() || o.cap.is_some() || o.multiplier.is_some() || o.first_exponent.is_some();
    let strategy = |s: Strategy, title: String| -> Result<Resolved> {
        if kind_flags {
            return Err(InputError(format!(
                "--base, --cap, --multiplier and --first-exponent shape a backoff kind; \"{}\" brings its own (override it in a scenario instead)",
                o.what
            ))
            .into());
        }
        Ok((title, s.backoff, s.policy.max_retries, Some(s)))
    };
    if let Some(path) = &o.scenario {
        let sc = scenario::load(path)?;
        let names: Vec<&str> = sc.strategies.iter().map(|s| s.name.as_str()).collect();
        let Some(s) = sc.strategies.iter().find(|s| s.name == o.what) else {
            return Err(InputError(format!(
                "{}: no strategy named \"{}\"; its strategies: {}",
                path.display(),
                o.what,
                names.join(", ")
            ))
            .into());
        };
        let title = format!("{} of {}", s.name, path.display());
        for note in scenario::retry_after_notes(&sc) {
            if note.starts_with(&format!("strategy \"{}\"", s.name)) {
                say!(
                    "note: {note}; the delays below are its backoff's, used for the other failures"
                );
            }
        }
        return strategy(s.clone(), title);
    }
    if let Some(p) = presets::find(&o.what) {
        return strategy(preset_strategy(p)?, format!("{} ({})", p.name, p.library));
    }
    let Some(kind) = BackoffKind::from_name(&o.what) else {
        let kinds: Vec<&str> = BackoffKind::NAMES.iter().map(|(n, _)| *n).collect();
        let presets: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        return Err(InputError(format!(
            "unknown backoff or preset \"{}\"; valid: {}; presets: {} (or a strategy with --scenario FILE)",
            o.what,
            kinds.join(", "),
            presets.join(", ")
        ))
        .into());
    };
    let d = Backoff::default();
    let duration = |flag: &str, v: &Option<String>, default| match v {
        Some(text) => parse_duration(text).map_err(|e| InputError(format!("--{flag}: {e}"))),
        None => Ok(default),
    };
    let base = duration("base", &o.base, d.base)?;
    let cap = duration("cap", &o.cap, d.cap)?;
    let multiplier = o.multiplier.unwrap_or(d.multiplier);
    let first_exponent = o.first_exponent.unwrap_or(d.first_exponent);
    if cap < base {
        return Err(InputError(format!("--cap ({cap}) must be at least --base ({base})")).into());
    }
    if !(multiplier.is_finite() && multiplier >= 1.0) || first_exponent > 1 {
        return Err(
            InputError("--multiplier must be >= 1 and --first-exponent 0 or 1".into()).into(),
        );
    }
    let backoff = Backoff {
        kind,
        base,
        cap,
        multiplier,
        first_exponent,
        jitter: Jitter::None,
    };
    Ok((kind.name().to_owned(), backoff, 5, None))
}

fn print_table(table: &[RetryDelays]) {
    say!(
        "{:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "retry",
        "min",
        "p5",
        "p25",
        "p50",
        "p75",
        "p95",
        "max",
        "mean"
    );
    for r in table {
        let q = r.quantiles.map(|v| format!("{:.1}ms", v * 1000.0));
        say!(
            "{:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            r.retry,
            q[0],
            q[1],
            q[2],
            q[3],
            q[4],
            q[5],
            q[6],
            format!("{:.1}ms", r.mean * 1000.0)
        );
    }
}

/// Retries shown per preset by `sim presets`.
const LISTED: u32 = 5;

/// `sim presets`: each preset's library, limit, classification, delays
/// (median and range of the first five retries), budget and source.
pub fn presets() -> Result<()> {
    for p in &PRESETS {
        let s = preset_strategy(p)?;
        let shown = s.policy.max_retries.min(LISTED);
        say!("{}: {}", p.name, p.library);
        let on: Vec<&str> = Outcome::ALL
            .iter()
            .filter(|o| s.policy.retry_on.contains(**o))
            .map(|o| o.name())
            .collect();
        let hinted: Vec<&str> = Outcome::ALL
            .iter()
            .filter(|o| s.policy.retry_on_hinted.contains(**o))
            .map(|o| o.name())
            .collect();
        let hinted = if hinted.is_empty() {
            String::new()
        } else {
            format!(" ({} with a Retry-After)", hinted.join(" "))
        };
        say!(
            "  {} on {}{hinted}; {}; {}",
            limit(s.policy.max_retries),
            on.join(" "),
            retry_after_use(&s),
            budget(s.budget.as_ref())
        );
        say!("  backoff: {}", describe_backoff(&s.backoff));
        if let Some(b) = s.policy.throttling_base {
            say!("  after a 429 the backoff's base is {b}");
        }
        if shown > 0 {
            let table = delay_distribution(&s.backoff, shown, 10_000, 1);
            let cells: Vec<String> = table
                .iter()
                .map(|r| {
                    let q = r.quantiles;
                    if q[0] == q[6] {
                        secs(q[3])
                    } else {
                        format!("{} [{}, {}]", secs(q[3]), secs(q[0]), secs(q[6]))
                    }
                })
                .collect();
            let more = if s.policy.max_retries > shown {
                ", ..."
            } else {
                ""
            };
            say!("  delays, median [range]: {}{more}", cells.join(", "));
        }
        if let Some(d) = s.policy.deadline {
            say!("  gives up {d} after the first attempt");
        }
        say!("  source: {}", p.source);
        say!("  note: {}", p.notes);
        say!("  checked: {}", checked(p.name, &s));
    }
    say!(
        "\nUse one in a scenario: [[strategy]] name = \"...\" preset = \"grpc\"; its own keys override the preset's."
    );
    Ok(())
}

/// What the conformance harness (conformance/run.py, against the real
/// library) found for the preset, from its committed results.
fn checked(name: &str, s: &Strategy) -> String {
    const RESULTS: &str = include_str!("../../conformance/results.toml");
    let Ok(doc) = RESULTS.parse::<toml::Table>() else {
        return "unknown (conformance/results.toml does not parse)".into();
    };
    let date = doc.get("date").and_then(|d| d.as_str()).unwrap_or("?");
    let row = doc
        .get("preset")
        .and_then(|p| p.as_array())
        .and_then(|rows| {
            rows.iter()
                .filter_map(|r| r.as_table())
                .find(|r| r.get("name").and_then(|n| n.as_str()) == Some(name))
        });
    let Some(row) = row else {
        return "not yet against the library (conformance/run.py)".into();
    };
    let text = |k: &str| row.get(k).and_then(|v| v.as_str());
    if text("fingerprint") != Some(fingerprint(s).as_str()) {
        return format!(
            "{date}, on an earlier definition of this preset: re-run conformance/run.py"
        );
    }
    match (text("measured_on"), text("verdict"), text("not_measured")) {
        (Some(on), Some(verdict), _) => format!("{verdict} {on} ({date}, conformance/run.py)"),
        (_, _, Some(why)) => format!("not measured: {why}"),
        _ => "unknown".into(),
    }
}

/// FNV-1a of the whole strategy a preset makes.
fn fingerprint(s: &Strategy) -> String {
    // A preset sets no call chain's tiers, no hedging, no pool limits and
    // no shared guards
    // (a library's guards are its client's own), and most
    // presets' concurrency budgets count retries in backoff: those fields,
    // added after the presets were measured, are left out at those values
    // so their fingerprints stand (Envoy's, which count as Envoy does, were
    // refreshed).
    let text = format!("{s:?}")
        .replace(
            ", shared: Shared { budget: false, breaker: false, throttle: false }",
            "",
        )
        .replace(", tiers: [], hedging: None, limits: None", "")
        .replace(", count_backoff: true", "");
    format!("{:016x}", crate::output::fnv1a(text.as_bytes()))
}

/// How a strategy uses a Retry-After, in words: what it does with one it
/// honours (below its `retry_after_max`).
fn retry_after_use(s: &Strategy) -> String {
    let hint = s
        .policy
        .retry_after_max
        .min(crate::engine::SimDuration::from_secs(1));
    format!("Retry-After {}", s.policy.retry_after_use(hint).words())
}

fn limit(n: u32) -> String {
    match n {
        u32::MAX => "unlimited retries".into(),
        1 => "1 retry".into(),
        n => format!("{n} retries"),
    }
}

fn budget(b: Option<&BudgetConfig>) -> String {
    match b {
        None => "no retry budget".into(),
        Some(BudgetConfig::TokenBucket {
            max_tokens,
            token_ratio,
        }) => format!("retry throttling (tokens {max_tokens}, ratio {token_ratio})"),
        Some(BudgetConfig::AwsQuota {
            capacity,
            retry_cost,
            timeout_cost,
            throttling_cost,
            ..
        }) => format!(
            "retry quota {capacity} (retry {retry_cost}, after a timeout {timeout_cost}, after a 429 {throttling_cost})"
        ),
        Some(BudgetConfig::Concurrency(c)) if c.percent == 0.0 => {
            format!("at most {} retries in progress", c.min_concurrency)
        }
        Some(BudgetConfig::Concurrency(c)) => format!(
            "retries in progress at most {}% of requests in progress, at least {}",
            c.percent * 100.0,
            c.min_concurrency
        ),
        Some(other) => format!("budget {other:?}"),
    }
}

/// A duration in seconds, in the unit that reads best.
fn secs(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v < 1.0 {
        format!("{:.0}ms", v * 1000.0)
    } else {
        format!("{v:.2}s")
    }
}

/// One line on a backoff: kind, base, cap, multiplier, jitter.
fn describe_backoff(b: &Backoff) -> String {
    let jitter = match b.jitter {
        Jitter::None => String::new(),
        Jitter::Add(max) => format!(", plus U(0, {max})"),
        Jitter::Scale { low, high } => format!(", times U({low}, {high})"),
    };
    let exponent = if b.first_exponent == 1 {
        ", first exponent 1"
    } else {
        ""
    };
    format!(
        "{}, base {}, cap {}, x{}{exponent}{jitter}",
        b.kind.name(),
        b.base,
        b.cap,
        b.multiplier
    )
}

/// One preset as `sim presets --toml` prints it.
#[derive(serde::Serialize)]
struct PresetFacts {
    name: &'static str,
    library: &'static str,
    /// A number, or "unlimited".
    max_retries: toml::Value,
    retry_on: Vec<&'static str>,
    /// Retried only with a Retry-After.
    retry_on_hinted: Vec<&'static str>,
    /// "ignored", "replace", "at-least" or "before-jitter".
    retry_after: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_slack_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    throttling_base_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deadline_s: Option<f64>,
    budget: toml::Table,
    /// FNV-1a of the whole strategy the preset makes: it changes whenever
    /// anything the preset decides changes.
    fingerprint: String,
}

#[derive(serde::Serialize)]
struct PresetList {
    preset: Vec<PresetFacts>,
}

/// `sim presets --toml`: the facts a script needs to compare a preset with its
/// library, one `[[preset]]` table each.
pub fn presets_toml() -> Result<()> {
    use crate::retry::RetryAfterMode;
    let mut list = Vec::new();
    for p in &PRESETS {
        let s = preset_strategy(p)?;
        let budget = budget_facts(s.budget.as_ref());
        let (retry_after, slack) = match (s.policy.use_retry_after, s.policy.retry_after_mode) {
            (false, _) => ("ignored", None),
            (true, RetryAfterMode::Replace) => ("replace", None),
            (true, RetryAfterMode::AtLeast { slack }) => (
                "at-least",
                (slack != crate::engine::SimDuration::MAX).then(|| slack.as_secs_f64()),
            ),
            (true, RetryAfterMode::BeforeJitter) => ("before-jitter", None),
        };
        list.push(PresetFacts {
            name: p.name,
            library: p.library,
            max_retries: match s.policy.max_retries {
                u32::MAX => "unlimited".into(),
                n => i64::from(n).into(),
            },
            retry_on: Outcome::ALL
                .iter()
                .filter(|o| s.policy.retry_on.contains(**o))
                .map(|o| o.name())
                .collect(),
            retry_on_hinted: Outcome::ALL
                .iter()
                .filter(|o| s.policy.retry_on_hinted.contains(**o))
                .map(|o| o.name())
                .collect(),
            retry_after,
            retry_after_slack_s: slack,
            throttling_base_s: s.policy.throttling_base.map(|b| b.as_secs_f64()),
            deadline_s: s.policy.deadline.map(|d| d.as_secs_f64()),
            budget,
            fingerprint: fingerprint(&s),
        });
    }
    let text = toml::to_string(&PresetList { preset: list })
        .map_err(|e| anyhow::anyhow!("cannot write the presets as TOML: {e}"))?;
    print!("{text}");
    Ok(())
}

/// A preset's budget as `sim presets --toml` writes it: its kind and the
/// figures that kind has.
fn budget_facts(budget: Option<&BudgetConfig>) -> toml::Table {
    let mut t = toml::Table::new();
    match budget {
        None => {
            t.insert("kind".into(), "none".into());
        }
        Some(BudgetConfig::TokenBucket {
            max_tokens,
            token_ratio,
        }) => {
            t.insert("kind".into(), "token-bucket".into());
            t.insert("max_tokens".into(), (*max_tokens).into());
            t.insert("token_ratio".into(), (*token_ratio).into());
        }
        Some(BudgetConfig::AwsQuota {
            capacity,
            retry_cost,
            timeout_cost,
            throttling_cost,
            success_bonus,
        }) => {
            t.insert("kind".into(), "aws-quota".into());
            for (k, v) in [
                ("capacity", capacity),
                ("retry_cost", retry_cost),
                ("timeout_cost", timeout_cost),
                ("throttling_cost", throttling_cost),
                ("success_bonus", success_bonus),
            ] {
                t.insert(k.into(), i64::from(*v).into());
            }
        }
        Some(BudgetConfig::Concurrency(c)) => {
            t.insert("kind".into(), "concurrency".into());
            t.insert("percent".into(), c.percent.into());
            t.insert(
                "min_concurrency".into(),
                i64::from(c.min_concurrency).into(),
            );
        }
        Some(other) => {
            t.insert("kind".into(), format!("{other:?}").into());
        }
    }
    t
}
