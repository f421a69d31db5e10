//! `sim delays` (the delay distribution of a backoff, a preset or a scenario's
//! strategy, printed and drawn) and `sim presets` (every preset at a glance).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::InputError;
use crate::output::write_atomic;
use crate::plot;
use crate::retry::delays::{RetryDelays, delay_distribution};
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
}

/// Most retries shown by default for a strategy with a higher limit.
const DEFAULT_SHOWN: u32 = 8;

/// `sim delays`.
pub fn delays(o: &DelaysOptions) -> Result<()> {
    let (title, backoff, limit) = resolve(o)?;
    let retries = o.retries.unwrap_or(limit.clamp(1, DEFAULT_SHOWN));
    if o.samples == 0 || retries == 0 || retries > 1000 {
        return Err(
            InputError("--samples must be positive and --retries from 1 to 1000".into()).into(),
        );
    }
    let table = delay_distribution(&backoff, retries, o.samples, o.seed);
    say!("{title}");
    say!(
        "{}; {} sequences, seed {}",
        describe_backoff(&backoff),
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
        let written = write_file(path, &bytes)?;
        say!("wrote {}", written.display());
    }
    Ok(())
}

/// The title, backoff and retry limit `o.what` names.
fn resolve(o: &DelaysOptions) -> Result<(String, Backoff, u32)> {
    let kind_flags =
        o.base.is_some() || o.cap.is_some() || o.multiplier.is_some() || o.first_exponent.is_some();
    let strategy = |s: Strategy, title: String| -> Result<(String, Backoff, u32)> {
        if kind_flags {
            return Err(InputError(format!(
                "--base, --cap, --multiplier and --first-exponent shape a backoff kind; \"{}\" brings its own (override it in a scenario instead)",
                o.what
            ))
            .into());
        }
        Ok((title, s.backoff, s.policy.max_retries))
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
    Ok((kind.name().to_owned(), backoff, 5))
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

/// Writes `bytes` to `path` atomically.
fn write_file(path: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .ok_or_else(|| InputError(format!("--plot {}: not a file name", path.display())))?;
    write_atomic(dir, file, bytes)
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
        say!(
            "  {} on {}; Retry-After {}; {}",
            limit(s.policy.max_retries),
            on.join(" "),
            if s.policy.use_retry_after {
                "honoured"
            } else {
                "ignored"
            },
            budget(s.budget.as_ref())
        );
        say!("  backoff: {}", describe_backoff(&s.backoff));
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
    }
    say!(
        "\nUse one in a scenario: [[strategy]] name = \"...\" preset = \"grpc\"; its own keys override the preset's."
    );
    Ok(())
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
            ..
        }) => {
            format!("retry quota {capacity} (retry {retry_cost}, after a timeout {timeout_cost})")
        }
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
