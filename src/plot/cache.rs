//! `cache.png`: the look-aside cache's hit ratio over time, one row per
//! strategy (a world with a `[cache]`).

use super::timechart::{self, Chart, Key, Line, Row, Stroke};
use super::{PlotError, style};
use crate::metrics::Report;
use crate::metrics::cache::CacheBucket;

/// Whether the report has a cache to draw.
pub fn applies(report: &Report) -> bool {
    report.runs.iter().any(|r| r.cache.is_some())
}

/// The hit ratio of a bucket (`None` without lookups).
fn ratio(b: &CacheBucket) -> Option<f64> {
    let lookups = b.hits + b.misses + b.gated;
    (lookups > 0).then(|| b.hits as f64 / lookups as f64)
}

/// The hit ratio over buckets `[from, to)`.
fn mean_ratio(c: &[CacheBucket], from: usize, to: usize) -> f64 {
    let (hits, all) = c[from.min(c.len())..to.min(c.len())]
        .iter()
        .fold((0, 0), |(h, a), b| {
            (h + b.hits, a + b.hits + b.misses + b.gated)
        });
    if all == 0 {
        0.0
    } else {
        hits as f64 / all as f64
    }
}

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let w = report.metrics.bucket.as_secs_f64();
    let first = report
        .outages
        .iter()
        .map(|o| o.0.as_secs_f64())
        .fold(f64::INFINITY, f64::min);
    let rows: Vec<Row> = report
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let c = run.cache.as_deref().unwrap_or(&[]);
            let points = timechart::series(report, c.iter().map(|b| ratio(b).unwrap_or(0.0)));
            let n = c.len();
            let before = if first.is_finite() {
                format!(
                    "hit ratio {:.2} before the trigger, ",
                    mean_ratio(c, 0, (first / w) as usize)
                )
            } else {
                String::new()
            };
            let last = (n.saturating_sub((10.0 / w) as usize), n);
            Row {
                caption: format!(
                    "{}: {before}{:.2} over the last 10 s{}",
                    run.name,
                    mean_ratio(c, last.0, last.1),
                    timechart::recovery_phrase(report, i)
                ),
                y_max: 1.05,
                lines: vec![Line {
                    colour: style::colour(i),
                    stroke: Stroke::Solid(2),
                    points,
                }],
                recovered_at: timechart::recovered_at(report, i),
            }
        })
        .collect();
    let keys = vec![Key {
        label: "hit ratio: hits / lookups".into(),
        colour: None,
        stroke: Stroke::Solid(2),
    }];
    let chart = Chart {
        title: "Cache: the share of requests the cache answered",
        subtitle_extra: "",
        y_label: "hit ratio",
        keys,
        reference_line: None,
        swatches: true,
    };
    timechart::render(report, &chart, &rows)
}
