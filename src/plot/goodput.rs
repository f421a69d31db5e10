//! `goodput.png`: successful requests per second over time, all strategies on one
//! chart, with the pre-outage level and the recovery threshold.

use super::timechart::{self, Panel, Reference};
use super::{PlotError, render_png, style};
use crate::metrics::Report;

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let width = report.metrics.bucket.as_secs_f64();
    // A centred moving average over about one second, so strategies can be told
    // apart through the counting noise of 100 ms buckets.
    let k = ((1.0 / width).round() as usize).max(1);
    let max = report
        .runs
        .iter()
        .flat_map(|r| moving_average(&r.buckets, k))
        .map(|v| v / width)
        .fold(0.0, f64::max);
    render_png(style::WIDTH, style::HEIGHT, |root| {
        let body = timechart::title(
            root,
            "Goodput: requests that succeeded, per second",
            &timechart::subtitle(
                report,
                &format!("; centred moving average over {k} buckets"),
            ),
        )?;
        let lines = timechart::line_per_strategy(report, |b| {
            moving_average(b, k)
                .into_iter()
                .map(|v| v / width)
                .collect()
        });
        let mut references = Vec::new();
        if let Some(level) = report
            .runs
            .first()
            .and_then(|r| r.summary.baseline_goodput_per_s)
        {
            let f = report.metrics.recovery_fraction;
            references.push(Reference {
                label: format!("recovered: {:.0}% of {level:.0}/s", f * 100.0),
                value: f * level,
            });
        }
        let panel = Panel {
            caption: "",
            y_label: "successes/s",
            y_max: timechart::headroom(max),
            lines,
            references,
            x_label: true,
        };
        timechart::draw(&body, report, panel)
    })
}

/// Successes per bucket averaged over a centred window of `k` buckets (shorter at
/// the ends).
fn moving_average(buckets: &[crate::metrics::Bucket], k: usize) -> Vec<f64> {
    let n = buckets.len();
    (0..n)
        .map(|i| {
            let from = i.saturating_sub(k / 2);
            let to = (from + k).min(n);
            buckets[from..to]
                .iter()
                .map(|b| b.successes as f64)
                .sum::<f64>()
                / (to - from) as f64
        })
        .collect()
}
