//! The files of a rare-event estimate: `risk.csv`, one row per strategy
//! (the chance a trigger tips the world, and within a day), and
//! `risk-levels.csv`, one row per (strategy, level) with the chance of
//! reaching it, by splitting and by brute force. Every value with all its
//! digits.

use super::{ExportError, to_csv};
use crate::risk::Estimate;
use crate::scenario::risk::Risk;

/// A number with all its digits; empty when it is not one.
fn num(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

/// `risk.csv`.
pub fn summary(r: &Risk, estimates: &[Estimate]) -> Result<Vec<u8>, ExportError> {
    let header: Vec<String> = [
        "strategy",
        "triggers_per_day",
        "calm",
        "tipped",
        "levels",
        "p_tip",
        "p_tip_low",
        "p_tip_high",
        "p_day",
        "p_day_low",
        "p_day_high",
        "walks",
        "timed_out",
        "fell_back",
        "tried_from_tipped",
        "brute_trials",
        "brute_tipped",
        "brute_p",
        "brute_low",
        "brute_high",
    ]
    .map(String::from)
    .to_vec();
    let rows = estimates.iter().map(|e| {
        let mut cells = vec![
            e.strategy.clone(),
            r.per_day.to_string(),
            e.calm.to_string(),
            r.tipped.to_string(),
            e.levels.len().to_string(),
            num(e.tip.mean),
            num(e.tip.low),
            num(e.tip.high),
            num(e.day.mean),
            num(e.day.low),
            num(e.day.high),
            e.walks.to_string(),
            e.timed_out.to_string(),
            e.fell_back.0.to_string(),
            e.fell_back.1.to_string(),
        ];
        match &e.brute {
            Some(b) => {
                let last = e.levels.len() - 1;
                let i = b.reach(last);
                cells.extend([
                    b.trials.to_string(),
                    b.reached[last].to_string(),
                    num(i.mean),
                    num(i.low),
                    num(i.high),
                ]);
            }
            None => cells.extend((0..5).map(|_| String::new())),
        }
        cells
    });
    to_csv(std::iter::once(header).chain(rows))
}

/// `risk-levels.csv`.
pub fn levels(estimates: &[Estimate]) -> Result<Vec<u8>, ExportError> {
    let header: Vec<String> = [
        "strategy",
        "level",
        "in_progress",
        "p_reach",
        "p_reach_low",
        "p_reach_high",
        "brute_reached",
        "brute_p_reach",
        "brute_low",
        "brute_high",
    ]
    .map(String::from)
    .to_vec();
    let rows = estimates.iter().flat_map(|e| {
        e.levels.iter().enumerate().map(move |(i, l)| {
            let reach = e.reach[i];
            let mut cells = vec![
                e.strategy.clone(),
                (i + 1).to_string(),
                l.to_string(),
                num(reach.mean),
                num(reach.low),
                num(reach.high),
            ];
            match &e.brute {
                Some(b) => {
                    let w = b.reach(i);
                    cells.extend([
                        b.reached[i].to_string(),
                        num(w.mean),
                        num(w.low),
                        num(w.high),
                    ]);
                }
                None => cells.extend((0..4).map(|_| String::new())),
            }
            cells
        })
    });
    to_csv(std::iter::once(header).chain(rows))
}
