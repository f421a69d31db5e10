//! A call chain's attempts: `--graph a -> b -> c` names the services the
//! files configure, the users calling the first; each tier's worst case is
//! the product of the attempts of the tiers above it and its own (three
//! attempts at each of four hops is 3^4 = 81 at the last, 4^4 = 256 with
//! three retries each).

use super::trial::{Runs, Side};
use super::{Figure, Found, Location, Settings, Status, StrategyCheck, Unit, Value};
use crate::import::is_service;

type Pair<'a> = (Status, Option<Found<'a>>, Option<Found<'a>>);

/// The pair each service of `names` is, or a message naming the service
/// no strategy (or several) could be.
pub(super) fn tiers(pairs: &[Pair<'_>], names: &[String]) -> Result<Vec<usize>, String> {
    names
        .iter()
        .map(|name| {
            let found: Vec<usize> = pairs
                .iter()
                .enumerate()
                .filter(|(_, (_, now, _))| {
                    now.as_ref()
                        .is_some_and(|f| is_service(f.import, f.strategy, name))
                })
                .map(|(k, _)| k)
                .collect();
            match found.as_slice() {
                [k] => Ok(*k),
                [] => Err(format!(
                    "--graph: service \"{name}\": no strategy read is named after it (or is the only one of a file named after it)"
                )),
                _ => Err(format!(
                    "--graph: service \"{name}\": several strategies could be its: {}",
                    found
                        .iter()
                        .filter_map(|k| pairs[*k].1.as_ref().map(|f| f.strategy.name.as_str()))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        })
        .collect()
}

/// What the change did to the chain: judged when any tier is.
fn status(pairs: &[Pair<'_>], ks: &[usize], base: bool) -> Status {
    if !base {
        Status::Judged
    } else if ks.iter().any(|k| pairs[*k].0 == Status::New) {
        Status::New
    } else if ks.iter().any(|k| pairs[*k].0 == Status::Changed) {
        Status::Changed
    } else {
        Status::Unchanged
    }
}

/// The chain `names` as a check of its own: the worst-case attempts at
/// each tier per user request, before and after.
pub(super) fn check(
    pairs: &[Pair<'_>],
    names: &[String],
    runs: &Runs,
    settings: &Settings,
) -> Result<StrategyCheck, String> {
    let ks = tiers(pairs, names)?;
    let status = status(pairs, &ks, settings.base.is_some());
    let attempts = |k: usize, side: Side| {
        runs.strategy(k, side)
            .map(|s| crate::bound::attempts_per_request(s).value)
    };
    let mut figures = Vec::with_capacity(ks.len());
    let mut product = [Some(1.0), Some(1.0)];
    for (name, &k) in names.iter().zip(&ks) {
        for (p, side) in product.iter_mut().zip([Side::Before, Side::After]) {
            *p = p.zip(attempts(k, side)).map(|(a, b)| a * b);
        }
        let [before, after] = product.map(|p| p.map_or(Value::Absent, Value::Number));
        let now = pairs[k].1.as_ref();
        let (source, source_words) = super::figures::source(now, "max_retries");
        let limit = settings.limits.max_chain_attempts;
        figures.push(Figure {
            id: format!("chain.{name}.attempts"),
            what: format!("attempts at {name} per user request, worst case"),
            unit: Unit::Count,
            before,
            after,
            limit: limit.map(|l| {
                format!(
                    "at most {}",
                    super::render::value(Unit::Count, Value::Number(l))
                )
            }),
            crossed: status.judged()
                && limit.is_some_and(|l| matches!(after, Value::Number(a) if a > l + 1e-12)),
            source,
            source_words,
        });
    }
    let at: Option<Location> = figures.first().and_then(|f| f.source.clone());
    Ok(StrategyCheck {
        path: "--graph".to_owned(),
        name: names.join(" -> "),
        format: "a call chain",
        at,
        status,
        figures,
    })
}
