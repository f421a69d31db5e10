//! `sim bound`: the worst case of each strategy's retries, from its settings
//! alone (`crate::bound` holds the formulas).

use std::path::Path;

use anyhow::Result;

use super::InputError;
use crate::bound::wave::{self, Outage};
use crate::bound::{self, Bound, Rate, short};
use crate::engine::SimDuration;
use crate::model::{Load, OutageKind, WorldConfig};
use crate::retry::Strategy;
use crate::scenario::{self, duration::parse_duration};

/// The users' request rate the bounds may use.
fn rate(load: &Load) -> Rate {
    match load {
        Load::Open { rate_per_s } => Rate::AtLeast(*rate_per_s),
        Load::Closed { clients, think } => {
            let mean = think.mean_nanos() / 1e9;
            if mean > 0.0 {
                Rate::About(f64::from(*clients) / mean)
            } else {
                Rate::Unknown
            }
        }
        Load::OneShot { .. } => Rate::Unknown,
    }
}

fn show(bounds: &[Bound], indent: &str) {
    for b in bounds {
        say!("{indent}{}: {}", b.what, b.shown);
        say!("{indent}    = {}", b.formula);
    }
}

/// The outage the wave bound assumes, from the options or the scenario:
/// clients failing at once, its length, whether attempts during it time out
/// (a blackhole), and how it was chosen, in words.
struct WaveOutage {
    clients: f64,
    length_s: f64,
    times_out: bool,
    words: String,
}

fn wave_outage(
    world: &WorldConfig,
    clients: Option<f64>,
    outage: Option<&str>,
) -> Result<WaveOutage> {
    if let Some(c) = clients
        && !(1.0..=1e12).contains(&c)
    {
        return Err(InputError(format!(
            "--clients {c}: give a number of clients from 1 to 1e12"
        ))
        .into());
    }
    let given = outage
        .map(|t| {
            parse_duration(t)
                .ok()
                .filter(|d| *d > SimDuration::ZERO)
                .ok_or_else(|| {
                    InputError(format!(
                        "--outage \"{t}\": give a length above 0 with its unit, e.g. \"2s\" or \"500ms\""
                    ))
                })
        })
        .transpose()?;
    let first = world.outages.first();
    let (length_s, mut from) = match (given, first) {
        (Some(d), _) => (d.as_secs_f64(), "--outage".to_owned()),
        (None, Some(o)) => (
            (o.end - o.start).as_secs_f64(),
            format!("the scenario's first trigger, {}", o.kind.name()),
        ),
        (None, None) => (2.0, "no trigger in the scenario: 2 s".to_owned()),
    };
    let times_out = matches!(first.map(|o| &o.kind), Some(OutageKind::Blackhole));
    match first.map(|o| &o.kind) {
        Some(OutageKind::Blackhole) => from.push_str("; each attempt sent during it fails at its timeout"),
        Some(OutageKind::Unavailable {
            retry_after: Some(h),
        }) => from.push_str(&format!(
            "; each attempt sent during it fails at once, with a Retry-After of {h} that a policy honouring it waits in lockstep, which the wave below leaves aside"
        )),
        Some(OutageKind::Reset | OutageKind::Unavailable { .. }) => {
            from.push_str("; each attempt sent during it fails at once");
        }
        Some(k) => from.push_str(&format!(
            "; the scenario's trigger ({}) is not a total failure: the wave assumes one whose attempts fail at once",
            k.name()
        )),
        None => from.push_str("; its attempts fail at once"),
    }
    let (n, who) = match (clients, &world.load) {
        (Some(c), _) => (c, "--clients".to_owned()),
        (None, Load::Closed { clients, .. } | Load::OneShot { clients }) => {
            (f64::from(*clients), "the scenario's clients".to_owned())
        }
        (None, Load::Open { rate_per_s }) => (
            (rate_per_s * length_s).ceil(),
            format!(
                "the requests that arrive during it, {} a second, taken as failing at once",
                short(*rate_per_s)
            ),
        ),
    };
    Ok(WaveOutage {
        clients: n,
        length_s,
        times_out,
        words: format!(
            "(the retry wave: {} failing at once ({who})\n at the start of an outage of {} ({from}))",
            short(n),
            bound::seconds(length_s)
        ),
    })
}

impl WaveOutage {
    /// The wave bound's outage for strategy `s`, whose timeout it may use.
    fn for_strategy(&self, s: &Strategy) -> Outage {
        Outage {
            clients: self.clients,
            length_s: self.length_s,
            attempt_s: if self.times_out {
                s.policy.timeout.map(|t| t.as_secs_f64())
            } else {
                Some(0.0)
            },
        }
    }
}

/// `sim bound`.
pub(super) fn bound(path: &Path, clients: Option<f64>, outage: Option<&str>) -> Result<()> {
    let s = scenario::load(path)?;
    let waves = wave_outage(&s.world, clients, outage)?;
    say!(
        "{}: the worst case of each strategy of \"{}\", from its settings alone",
        path.display(),
        s.name
    );
    say!("(total failure: every attempt fails with an outcome the policy retries)");
    say!("{}", waves.words);
    if s.sweep.is_some() {
        say!("(a sweep: these are the strategies as written; its points change some values)");
    }
    for (i, st) in s.strategies.iter().enumerate() {
        let world = s.world_for(i);
        let rate = rate(&world.load);
        say!("\nstrategy \"{}\"", st.name);
        let users_wave = wave::wave(st, &waves.for_strategy(st));
        let Some(chain) = &world.chain else {
            let mut all = bound::strategy(st, rate, world.proxies.count);
            all.insert(2, users_wave);
            show(&all, "  ");
            continue;
        };
        say!(
            "  attempts per user request at each tier when it fails (and so every tier above it), nothing capping;"
        );
        say!(
            "  a tier's attempts per call times the calls into it, which are its callers' attempts:"
        );
        show(&bound::chain(chain, st), "    ");
        let own = bound::strategy(st, rate, world.proxies.count);
        say!("  the users' own limits:");
        show(&own[1..], "    ");
        show(&[users_wave], "    ");
        for (k, t) in st.tiers.iter().enumerate() {
            // The callers' rate into a tier is not the users': no times.
            let limits = bound::strategy(&t.strategy, Rate::Unknown, 1);
            if limits.len() > 1 {
                say!("  the calls to \"{}\":", chain.name(k + 1));
                show(&limits[1..], "    ");
            }
        }
    }
    Ok(())
}
