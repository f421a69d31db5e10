//! `load.png`: attempts per second over time, one panel per strategy on a shared
//! scale, with the server's capacity: the load spikes of a retry storm.

use super::timechart::{self, Line, Panel, Reference};
use super::{PlotError, render_png, style};
use crate::metrics::Report;

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let n = report.runs.len().max(1);
    let height = 70 + style::PANEL_HEIGHT * n as u32 + 20;
    let width = report.metrics.bucket.as_secs_f64();
    let peak = report
        .runs
        .iter()
        .map(|r| r.summary.peak_attempts_per_s)
        .fold(report.capacity_per_s.unwrap_or(0.0), f64::max);
    let y_max = timechart::headroom(peak);
    render_png(style::WIDTH, height, |root| {
        let body = timechart::title(
            root,
            "Load on the server: attempts per second",
            &timechart::subtitle(report, "; dashed: capacity"),
        )?;
        let panels = body.split_evenly((n, 1));
        for (i, (run, area)) in report.runs.iter().zip(panels.iter()).enumerate() {
            let attempts = timechart::series(
                report,
                run.buckets.iter().map(|b| b.attempts as f64 / width),
            );
            let retries =
                timechart::series(report, run.buckets.iter().map(|b| b.retries as f64 / width));
            let caption = match run.summary.peak_load_ratio {
                Some(ratio) => format!(
                    "{}: peak {:.0}/s = {ratio:.2} x capacity",
                    run.name, run.summary.peak_attempts_per_s
                ),
                None => format!(
                    "{}: peak {:.0}/s",
                    run.name, run.summary.peak_attempts_per_s
                ),
            };
            let panel = Panel {
                caption: &caption,
                y_label: "attempts/s",
                y_max,
                lines: vec![
                    Line {
                        label: "all attempts",
                        colour: style::colour(i),
                        points: attempts,
                    },
                    Line {
                        label: "of which retries",
                        colour: style::REFERENCE_GREY,
                        points: retries,
                    },
                ],
                references: report
                    .capacity_per_s
                    .map(|c| Reference {
                        label: format!("capacity {c:.0}/s"),
                        value: c,
                    })
                    .into_iter()
                    .collect(),
                x_label: i + 1 == n,
            };
            timechart::draw(area, report, panel)?;
        }
        Ok(())
    })
}
