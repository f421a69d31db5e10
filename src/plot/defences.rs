//! `defences.png`: each server's adaptive concurrency limit over time
//! beside the requests it holds, one row per strategy (a world where some
//! strategy's server has a limiter).

use super::timechart::{self, Chart, Key, Line, Row, Stroke};
use super::{PlotError, style};
use crate::metrics::Report;

/// Whether some strategy's server has a limiter to draw.
pub fn applies(report: &Report) -> bool {
    report
        .runs
        .iter()
        .any(|r| r.defences.iter().flatten().any(|b| b.limit.is_some()))
}

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let rows: Vec<Row> = report
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let held = timechart::series(report, run.buckets.iter().map(|b| b.queue_len + b.busy));
            let d = run.defences.as_deref().unwrap_or(&[]);
            let mut lines = vec![Line {
                colour: style::REFERENCE_GREY,
                stroke: Stroke::Solid(2),
                points: held,
            }];
            let limits: Vec<u64> = d.iter().filter_map(|b| b.limit).collect();
            let limited: u64 = d.iter().map(|b| b.limited).sum();
            let dropped: u64 = d.iter().map(|b| b.dropped).sum();
            let mut caption = if limits.is_empty() {
                format!("{}: no limiter", run.name)
            } else {
                lines.push(Line {
                    colour: style::colour(i),
                    stroke: Stroke::Solid(2),
                    points: timechart::series(
                        report,
                        d.iter().map(|b| b.limit.unwrap_or(0) as f64),
                    ),
                });
                format!(
                    "{}: limit {} to {}, {limited} answered 503 by the limiter",
                    run.name,
                    limits.iter().min().unwrap_or(&0),
                    limits.iter().max().unwrap_or(&0)
                )
            };
            if dropped > 0 {
                caption.push_str(&format!(", {dropped} dropped by CoDel"));
            }
            caption.push_str(&timechart::recovery_phrase(report, i));
            let top = lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.1))
                .fold(1.0, f64::max);
            Row {
                caption,
                // Each row its own scale: limits span 3 to 2000.
                y_max: timechart::headroom(top),
                lines,
                recovered_at: timechart::recovered_at(report, i),
            }
        })
        .collect();
    let keys = vec![
        Key {
            label: "concurrency limit (end of each bucket)".into(),
            colour: None,
            stroke: Stroke::Solid(2),
        },
        Key {
            label: "held at the server (queued + in service)".into(),
            colour: Some(style::REFERENCE_GREY),
            stroke: Stroke::Solid(2),
        },
    ];
    let chart = Chart {
        title: "Concurrency limit and the requests the server holds",
        subtitle_extra: "; time averages held; each row its own scale",
        y_label: "requests",
        keys,
        reference_line: None,
        swatches: true,
    };
    timechart::render(report, &chart, &rows)
}
