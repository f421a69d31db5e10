//! `load.png`: attempts per second over time, one row per strategy on a shared
//! scale, with the server's capacity: the load spikes of a retry storm.

use super::timechart::{self, Chart, Key, Line, Row, Stroke};
use super::{PlotError, style};
use crate::metrics::Report;

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let width = report.metrics.bucket.as_secs_f64();
    let peak = report
        .runs
        .iter()
        .map(|r| r.summary.peak_attempts_per_s)
        .fold(report.capacity_per_s.unwrap_or(0.0), f64::max);
    let y_max = timechart::headroom(peak);
    let rows: Vec<Row> = report
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let rate = |f: fn(&crate::metrics::Bucket) -> u64| {
                timechart::series(report, run.buckets.iter().map(|b| f(b) as f64 / width))
            };
            let peak = match run.summary.peak_load_ratio {
                Some(ratio) => format!(
                    "peak {:.0}/s = {ratio:.2} x capacity",
                    run.summary.peak_attempts_per_s
                ),
                None => format!("peak {:.0}/s", run.summary.peak_attempts_per_s),
            };
            Row {
                caption: format!(
                    "{}: {peak}{}",
                    run.name,
                    timechart::recovery_phrase(report, i)
                ),
                y_max,
                lines: vec![
                    Line {
                        colour: style::colour(i),
                        stroke: Stroke::Solid(2),
                        points: rate(|b| b.attempts),
                    },
                    Line {
                        colour: style::REFERENCE_GREY,
                        stroke: Stroke::Solid(1),
                        points: rate(|b| b.retries),
                    },
                ],
                recovered_at: timechart::recovered_at(report, i),
            }
        })
        .collect();
    let mut keys = vec![
        Key {
            label: "all attempts".into(),
            colour: None,
            stroke: Stroke::Solid(2),
        },
        Key {
            label: "of which retries".into(),
            colour: Some(style::REFERENCE_GREY),
            stroke: Stroke::Solid(1),
        },
    ];
    if let Some(c) = report.capacity_per_s {
        keys.push(Key {
            label: format!("capacity {c:.0}/s"),
            colour: Some(style::REFERENCE),
            stroke: Stroke::Dashed,
        });
    }
    let chart = Chart {
        title: "Load on the server: attempts per second",
        subtitle_extra: "; one scale for all rows",
        y_label: "attempts/s",
        keys,
        capacity: report.capacity_per_s,
    };
    timechart::render(report, &chart, &rows)
}
