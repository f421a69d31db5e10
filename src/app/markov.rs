//! `sim markov`: the Markov twin of each strategy's world (`crate::markov`
//! holds the chain), or why the chain does not describe it.

use std::path::Path;

use anyhow::Result;

use super::InputError;
use crate::markov::{Chain, Params};
use crate::scenario;

/// Most states the chain may have (each costs a few sparse entries).
const MAX_STATES: usize = 2_000_000;

/// `sim markov`.
pub(super) fn markov(path: &Path, retries_held: usize) -> Result<()> {
    let s = scenario::load(path)?;
    if retries_held == 0 {
        return Err(InputError("--retries-held must be at least 1".into()).into());
    }
    say!(
        "The Markov twin of {} ({}): a chain on (requests at the server, retries waiting), \
         at most {retries_held} retries waiting.",
        s.name,
        path.display()
    );
    for (i, strategy) in s.strategies.iter().enumerate() {
        let world = s.world_for(i);
        say!("\nstrategy {}:", strategy.name);
        let p = match Params::from_world(&world, strategy) {
            Ok(p) => p,
            Err(why) => {
                say!("  not a world the chain describes: {why}");
                continue;
            }
        };
        let states = (p.capacity as usize + 1) * (retries_held + 1);
        if states > MAX_STATES {
            say!(
                "  {states} states (a server holding {} and {retries_held} retries waiting) is \
                 more than {MAX_STATES}: use a smaller queue or --retries-held",
                p.capacity
            );
            continue;
        }
        let chain = Chain::new(p, retries_held);
        let a = chain
            .analyse()
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        show(&p, &a, retries_held);
    }
    Ok(())
}

/// What the chain says about one strategy's world, on stdout.
fn show(p: &Params, a: &crate::markov::Analysis, retries_held: usize) {
    say!(
        "  {:.0} new requests/s, {} at {:.4} services/s each ({:.1}% busy without \
         retries), holding {}, timeout {:.3} s less the round trip, {} retries, a retry \
         waiting {:.3} s on average (exponential in the chain)",
        p.lambda,
        super::plural(p.workers as usize, "worker", "workers"),
        p.mu,
        100.0 * p.utilisation(),
        p.capacity,
        p.timeout,
        p.retries,
        p.timeout + p.backoff
    );
    let time = |t: Option<f64>| match t {
        Some(t) if t.is_infinite() => "more than 10^12 s".to_string(),
        Some(t) => format!("{t:.4e} s"),
        None => "-".to_string(),
    };
    match a.split {
        None => say!(
            "  one mode: attempts never outpace the workers, whatever the queue; a storm \
             cannot feed itself"
        ),
        Some(split) => {
            let good = match a.good {
                0 => "an empty server".to_string(),
                1 => "at most one request at the server".to_string(),
                n => format!("at most {n} requests at the server"),
            };
            say!(
                "  two modes: the good one ({good}) and a full server with about {} retries \
                 waiting; from {split} requests at the server attempts come faster than \
                 the workers serve them",
                a.bad_retries
            );
            if a.cut_short {
                say!(
                    "  warning: in the bad mode more retries wait than the chain holds \
                     ({retries_held}): its figures below are not the world's; raise \
                     --retries-held"
                );
            }
            say!(
                "  from the good mode to a full server: {}",
                time(a.good_exit_s)
            );
            say!(
                "  from a full server back to the good mode: {}",
                time(a.bad_exit_s)
            );
            if a.bad_share.is_finite() {
                say!(
                    "  long-run share of time in the bad mode: {:.3e}",
                    a.bad_share
                );
            }
            let half = a.tip.iter().position(|&t| t >= 0.5);
            if let Some(n) = half {
                say!(
                    "  a burst that leaves {n} requests at the server tips it with \
                     probability {:.2} (the smallest with at least 1/2)",
                    a.tip[n]
                );
            }
        }
    }
    if a.truncated > 1e-9 {
        say!(
            "  warning: {:.2e} of the long-run mass has {retries_held} retries waiting, \
             the chain's most: raise --retries-held",
            a.truncated
        );
    }
}
