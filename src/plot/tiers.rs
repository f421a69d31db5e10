//! `tiers.png`: a call chain's load, tier by tier: attempts per second at
//! each tier over time, one row per strategy on a shared scale. Where the
//! rows differ is where each layer's retries multiply the load below it.
//! The lines' colours are the tiers' (the key says which), so the rows'
//! captions carry no strategy swatch.

use super::timechart::{self, Chart, Key, Line, Row, Stroke};
use super::{PlotError, style};
use crate::metrics::Report;

/// Whether the run has tiers to draw.
pub fn applies(report: &Report) -> bool {
    report.runs.iter().any(|r| r.tiers.is_some())
}

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let width = report.metrics.bucket.as_secs_f64();
    let rate = |v: &u32| f64::from(*v) / width;
    let peak = report
        .runs
        .iter()
        .flat_map(|r| r.tiers.iter().flatten())
        .flat_map(|(_, t)| t.attempts.iter().map(rate))
        .fold(0.0, f64::max);
    let y_max = timechart::headroom(peak);
    let names: Vec<String> = report
        .runs
        .iter()
        .find_map(|r| r.tiers.as_ref())
        .map(|t| t.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    let rows: Vec<Row> = report
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let tiers = run.tiers.as_deref().unwrap_or_default();
            let peaks: Vec<String> = tiers
                .iter()
                .map(|(n, t)| {
                    format!(
                        "{n} {:.0}/s",
                        t.attempts.iter().map(rate).fold(0.0, f64::max)
                    )
                })
                .collect();
            Row {
                caption: format!(
                    "{}: peaks {}{}",
                    run.name,
                    peaks.join(", "),
                    timechart::recovery_phrase(report, i)
                ),
                y_max,
                lines: tiers
                    .iter()
                    .enumerate()
                    .map(|(k, (_, t))| Line {
                        colour: style::colour(k),
                        stroke: Stroke::Solid(if k == 0 { 2 } else { 1 }),
                        points: timechart::series(report, t.attempts.iter().map(rate)),
                    })
                    .collect(),
                recovered_at: timechart::recovered_at(report, i),
            }
        })
        .collect();
    let keys = names
        .iter()
        .enumerate()
        .map(|(k, n)| Key {
            label: format!("attempts at {n}"),
            colour: Some(style::colour(k)),
            stroke: Stroke::Solid(if k == 0 { 2 } else { 1 }),
        })
        .collect();
    let chart = Chart {
        title: "Load at each tier of the call chain: attempts per second",
        subtitle_extra: "; one scale for all rows",
        y_label: "attempts/s",
        keys,
        reference_line: None,
        swatches: false,
    };
    timechart::render(report, &chart, &rows)
}
