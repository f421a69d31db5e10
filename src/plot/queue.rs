//! `queue.png`: the server's queue length over time (time-averaged per bucket).

use super::timechart::{self, Panel};
use super::{PlotError, render_png, style};
use crate::metrics::Report;

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let max = report
        .runs
        .iter()
        .flat_map(|r| r.buckets.iter())
        .map(|b| b.queue_len)
        .fold(0.0, f64::max);
    render_png(style::WIDTH, style::HEIGHT, |root| {
        let body = timechart::title(
            root,
            "Server queue length",
            &timechart::subtitle(report, "; time average per bucket"),
        )?;
        let lines =
            timechart::line_per_strategy(report, |b| b.iter().map(|b| b.queue_len).collect());
        let panel = Panel {
            caption: "",
            y_label: "requests waiting",
            y_max: timechart::headroom(max),
            lines,
            references: Vec::new(),
            x_label: true,
        };
        timechart::draw(&body, report, panel)
    })
}
