//! `backlog.png`: the backlog over time, one row per strategy: requests held at
//! the server (queued and in service: what its crash limit counts, drawn as a
//! dashed line) and requests waiting out a backoff (time averages per bucket),
//! beside the twin's requests at the server without the trigger.

use super::timechart::{self, Chart, Key, Line, Row, Stroke};
use super::{PlotError, style};
use crate::metrics::{Bucket, Report};

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let limit = report.crash_limit.map(f64::from);
    let rows: Vec<Row> = report
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let of =
                |f: fn(&Bucket) -> f64, b: &[Bucket]| timechart::series(report, b.iter().map(f));
            let mut lines = vec![
                Line {
                    colour: style::colour(i),
                    stroke: Stroke::Solid(2),
                    points: of(|b| b.queue_len + b.busy, &run.buckets),
                },
                Line {
                    colour: style::REFERENCE_GREY,
                    stroke: Stroke::Solid(2),
                    points: of(|b| b.backing_off, &run.buckets),
                },
            ];
            if let Some(twin) = &run.twin {
                lines.push(Line {
                    colour: style::REFERENCE,
                    stroke: Stroke::Dashed,
                    // The same quantity as the solid line, so that the two
                    // compare: requests at the server without the trigger.
                    points: of(|b| b.queue_len + b.busy, twin),
                });
            }
            let top = lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.1))
                .fold(limit.unwrap_or(0.0), f64::max);
            Row {
                caption: format!(
                    "{}: at most {} at the server at once, peak backlog {:.0}{}",
                    run.name,
                    run.summary.totals.peak_held,
                    run.summary.peak_backlog,
                    timechart::recovery_phrase(report, i)
                ),
                // Each row its own scale: backlogs span 1 to 20 000.
                y_max: timechart::headroom(top.max(1.0)),
                lines,
                recovered_at: timechart::recovered_at(report, i),
            }
        })
        .collect();
    let mut keys = vec![
        Key {
            label: "at the server (queued + in service)".into(),
            colour: None,
            stroke: Stroke::Solid(2),
        },
        Key {
            label: "waiting to retry".into(),
            colour: Some(style::REFERENCE_GREY),
            stroke: Stroke::Solid(2),
        },
    ];
    if let Some(limit) = report.crash_limit {
        keys.push(Key {
            label: format!("crash limit {limit}"),
            colour: Some(style::REFERENCE),
            stroke: Stroke::Dashed,
        });
    }
    if !report.outages.is_empty() {
        keys.push(Key {
            label: "normal at the server".into(),
            colour: Some(style::REFERENCE),
            stroke: Stroke::Dashed,
        });
    }
    let chart = Chart {
        title: "Backlog: requests at the server, and requests waiting to retry",
        subtitle_extra: "; time averages; each row its own scale",
        y_label: "requests",
        keys,
        reference_line: limit,
        swatches: true,
    };
    timechart::render(report, &chart, &rows)
}
