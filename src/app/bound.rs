//! `sim bound`: the worst case of each strategy's retries, from its settings
//! alone (`retry::bound` holds the formulas).

use std::path::Path;

use anyhow::Result;

use crate::model::Load;
use crate::retry::bound::{self, Bound, Rate};
use crate::scenario;

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

/// `sim bound`.
pub(super) fn bound(path: &Path) -> Result<()> {
    let s = scenario::load(path)?;
    say!(
        "{}: the worst case of each strategy of \"{}\", from its settings alone",
        path.display(),
        s.name
    );
    say!("(total failure: every attempt fails with an outcome the policy retries)");
    if s.sweep.is_some() {
        say!("(a sweep: these are the strategies as written; its points change some values)");
    }
    for (i, st) in s.strategies.iter().enumerate() {
        let world = s.world_for(i);
        let rate = rate(&world.load);
        say!("\nstrategy \"{}\"", st.name);
        let Some(chain) = &world.chain else {
            show(&bound::strategy(st, rate), "  ");
            continue;
        };
        say!(
            "  attempts per user request at each tier when it fails (and so every tier above it), nothing capping;"
        );
        say!(
            "  a tier's attempts per call times the calls into it, which are its callers' attempts:"
        );
        show(&bound::chain(chain, st), "    ");
        let own = bound::strategy(st, rate);
        if own.len() > 1 {
            say!("  the users' own limits:");
            show(&own[1..], "    ");
        }
        for (k, t) in st.tiers.iter().enumerate() {
            // The callers' rate into a tier is not the users': no times.
            let limits = bound::strategy(&t.strategy, Rate::Unknown);
            if limits.len() > 1 {
                say!("  the calls to \"{}\":", chain.name(k + 1));
                show(&limits[1..], "    ");
            }
        }
    }
    Ok(())
}
