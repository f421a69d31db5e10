//! `load.png`: attempts per second over time, one row per strategy on a shared
//! scale, with the server's capacity: the load spikes of a retry storm. A row
//! whose peak is over [`OWN_SCALE`] times the others' scale (a client spinning
//! without delay) gets a scale of its own, said in its caption, so that it
//! does not flatten every other row.

use super::timechart::{self, Chart, Key, Line, Row, Stroke};
use super::{PlotError, style};
use crate::metrics::Report;

/// How far above the shared scale a row's peak may go before it gets its own.
const OWN_SCALE: f64 = 5.0;

/// The shared scale's top, and which rows are drawn on their own.
fn scales(peaks: &[f64], capacity: f64) -> (f64, Vec<bool>) {
    let mut sorted = peaks.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    let typical = median.max(capacity);
    let own: Vec<bool> = peaks
        .iter()
        .map(|&p| typical > 0.0 && p > OWN_SCALE * typical)
        .collect();
    let shared = peaks
        .iter()
        .zip(&own)
        .filter(|(_, own)| !**own)
        .map(|(p, _)| *p)
        .fold(capacity, f64::max);
    (shared, own)
}

/// The legend: the two lines of each row, and the capacity's line.
fn keys(report: &Report) -> Vec<Key> {
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
    keys
}

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let width = report.metrics.bucket.as_secs_f64();
    let peaks: Vec<f64> = report
        .runs
        .iter()
        .map(|r| r.summary.peak_attempts_per_s)
        .collect();
    let (shared, own) = scales(&peaks, report.capacity_per_s.unwrap_or(0.0));
    let y_max = timechart::headroom(shared);
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
            let (y_max, scale) = if own[i] {
                (
                    timechart::headroom(peaks[i]),
                    format!(
                        " (own scale, {:.0} times the others')",
                        peaks[i] / shared.max(f64::MIN_POSITIVE)
                    ),
                )
            } else {
                (y_max, String::new())
            };
            Row {
                caption: format!(
                    "{}: {peak}{}{scale}",
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
    let chart = Chart {
        title: "Load on the server: attempts per second",
        subtitle_extra: if own.contains(&true) {
            "; one scale for all rows but those marked"
        } else {
            "; one scale for all rows"
        },
        y_label: "attempts/s",
        keys: keys(report),
        reference_line: report.capacity_per_s,
        swatches: true,
    };
    timechart::render(report, &chart, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_row_far_above_the_others_gets_its_own_scale() {
        // Capacity 1600/s; one client spinning at 86 660/s.
        let (shared, own) = scales(&[1530.0, 4310.0, 86_660.0, 1320.0], 1600.0);
        assert_eq!(own, [false, false, true, false]);
        assert_eq!(shared, 4310.0);
        // A storm of 4 times capacity is compared on the shared scale.
        let (shared, own) = scales(&[1530.0, 6400.0, 1320.0], 1600.0);
        assert_eq!(own, [false, false, false]);
        assert_eq!(shared, 6400.0);
    }
}
