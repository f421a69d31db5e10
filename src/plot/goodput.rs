//! `goodput.png`: successful requests per second over time, one row per strategy
//! on a shared scale, each beside its twin's (the same run without the trigger):
//! the normal the recovery is judged against.

use super::timechart::{self, Chart, Key, Line, Row, Stroke};
use super::{PlotError, style};
use crate::metrics::Report;

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let width = report.metrics.bucket.as_secs_f64();
    let per_s = |b: &[crate::metrics::Bucket]| -> Vec<f64> {
        b.iter().map(|b| b.successes as f64 / width).collect()
    };
    let max = report
        .runs
        .iter()
        .flat_map(|r| {
            per_s(&r.buckets)
                .into_iter()
                .chain(r.twin.iter().flat_map(|t| per_s(t)))
        })
        .fold(0.0, f64::max);
    let rows: Vec<Row> = report
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let mut lines = Vec::new();
            if let Some(twin) = &run.twin {
                lines.push(Line {
                    colour: style::REFERENCE,
                    stroke: Stroke::Dashed,
                    points: timechart::series(report, per_s(twin).into_iter()),
                });
            }
            lines.push(Line {
                colour: style::colour(i),
                stroke: Stroke::Solid(2),
                points: timechart::series(report, per_s(&run.buckets).into_iter()),
            });
            let lost = run
                .summary
                .successes_lost
                .map_or(String::new(), |l| format!("; {l} successes lost"));
            Row {
                caption: format!(
                    "{}{lost}{}",
                    run.name,
                    timechart::recovery_phrase(report, i)
                ),
                y_max: timechart::headroom(max),
                lines,
                recovered_at: timechart::recovered_at(report, i),
            }
        })
        .collect();
    let mut keys = vec![Key {
        label: "successes/s".into(),
        colour: None,
        stroke: Stroke::Solid(2),
    }];
    if !report.outages.is_empty() {
        keys.push(Key {
            label: "normal: the same run without the trigger".into(),
            colour: Some(style::REFERENCE),
            stroke: Stroke::Dashed,
        });
    }
    let chart = Chart {
        title: "Goodput: requests that succeeded, per second",
        subtitle_extra: "; one scale for all rows",
        y_label: "successes/s",
        keys,
        reference_line: None,
        swatches: true,
    };
    timechart::render(report, &chart, &rows)
}
