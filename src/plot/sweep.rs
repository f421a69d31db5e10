//! Charts of a sweep: a figure against the swept parameter (one line per
//! strategy, 95% confidence intervals as error bars), and the timeline of
//! attempts at the largest value.

use plotters::prelude::*;

use super::timechart;
use super::{PlotError, draw_err, render_png, style};
use crate::sweep::{SweepReport, SweepRow};

/// Which figure a sweep chart shows.
#[derive(Clone, Copy)]
pub enum Figure {
    /// Mean attempts per run.
    Calls,
    /// Mean completion time of the last request, on a log axis.
    Time,
}

fn value(row: &SweepRow, f: Figure) -> (Option<f64>, Option<f64>) {
    match f {
        Figure::Calls => (row.calls_mean, row.calls_ci95),
        Figure::Time => (row.time_ms_mean, row.time_ms_ci95),
    }
}

fn strategies(r: &SweepReport) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for row in &r.rows {
        if !names.contains(&row.strategy) {
            names.push(row.strategy.clone());
        }
    }
    names
}

/// `calls.png` or `time.png`.
pub fn render_figure(r: &SweepReport, f: Figure) -> Result<Vec<u8>, PlotError> {
    let names = strategies(r);
    let xs = &r.sweep.values;
    let (x_lo, x_hi) = (
        *xs.first().unwrap_or(&0) as f64,
        *xs.last().unwrap_or(&1) as f64,
    );
    let tops: Vec<f64> = r
        .rows
        .iter()
        .filter_map(|row| {
            let (m, h) = value(row, f);
            m.map(|m| m + h.unwrap_or(0.0))
        })
        .collect();
    let y_hi = timechart::headroom(tops.iter().copied().fold(0.0, f64::max));
    let y_lo = tops.iter().copied().fold(f64::INFINITY, f64::min).max(1e-3);
    let (title, y_desc) = match f {
        Figure::Calls => (
            "Work: attempts per run (each a read and a conditional write)",
            "calls per run",
        ),
        Figure::Time => (
            "Completion time: when the last client succeeded (log scale)",
            "time (ms, log scale)",
        ),
    };
    render_png(style::WIDTH, style::HEIGHT, |root| {
        let sub = format!(
            "scenario {}, seed {}, mean of {} runs per point; bars: 95% confidence interval",
            r.scenario, r.seed, r.sweep.replications
        );
        let body = timechart::title(root, title, &sub)?;
        let x_range = (x_lo - (x_hi - x_lo) * 0.02)..(x_hi + (x_hi - x_lo) * 0.02 + 1e-9);
        let mut builder = ChartBuilder::on(&body);
        builder
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(90);
        let series = |i: usize| -> Vec<(f64, f64, f64)> {
            r.rows
                .iter()
                .filter(|row| row.strategy == names[i])
                .filter_map(|row| {
                    let (m, h) = value(row, f);
                    m.map(|m| (row.value as f64, m, h.unwrap_or(0.0)))
                })
                .collect()
        };
        macro_rules! draw_all {
            ($chart:expr) => {{
                let mut chart = $chart;
                timechart::house_style(&mut chart.configure_mesh())
                    .x_desc(format!("{} (swept)", r.sweep.parameter.column()))
                    .y_desc(y_desc)
                    .draw()
                    .map_err(draw_err)?;
                for i in 0..names.len() {
                    let colour = style::colour(i);
                    let pts = series(i);
                    chart
                        .draw_series(LineSeries::new(
                            pts.iter().map(|p| (p.0, p.1)),
                            colour.stroke_width(2),
                        ))
                        .map_err(draw_err)?
                        .label(names[i].as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
                        });
                    chart
                        .draw_series(pts.iter().map(|&(x, m, h)| {
                            ErrorBar::new_vertical(
                                x,
                                (m - h).max(y_lo),
                                m,
                                m + h,
                                colour.stroke_width(1),
                                6,
                            )
                        }))
                        .map_err(draw_err)?;
                }
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperLeft)
                    .background_style(WHITE.mix(0.85))
                    .border_style(RGBColor(0xAA, 0xAA, 0xAA))
                    .label_font((style::FONT, style::TICK_SIZE))
                    .draw()
                    .map_err(draw_err)?;
            }};
        }
        match f {
            Figure::Calls => draw_all!(
                builder
                    .build_cartesian_2d(x_range, 0.0..y_hi)
                    .map_err(draw_err)?
            ),
            Figure::Time => {
                draw_all!(
                    builder
                        .build_cartesian_2d(x_range, (y_lo * 0.8..y_hi * 1.2).log_scale())
                        .map_err(draw_err)?
                )
            }
        }
        Ok(())
    })
}

/// `timeline.png`: attempts per bucket at the largest value, one panel per
/// strategy named in `pick` that the sweep has (all strategies if none match).
pub fn render_timeline(r: &SweepReport, pick: &[&str]) -> Result<Vec<u8>, PlotError> {
    let mut chosen: Vec<(usize, &(String, Vec<crate::metrics::Bucket>))> = r
        .timelines
        .iter()
        .enumerate()
        .filter(|(_, (n, _))| pick.contains(&n.as_str()))
        .collect();
    if chosen.is_empty() {
        chosen = r.timelines.iter().enumerate().collect();
    }
    let width = r.metrics.bucket.as_secs_f64();
    // Show time up to the last bucket with any attempt in the chosen runs.
    let last = chosen
        .iter()
        .filter_map(|(_, (_, b))| b.iter().rposition(|b| b.attempts > 0))
        .max()
        .unwrap_or(0);
    let x_hi = ((last + 1) as f64 * width).max(width);
    let y_hi = timechart::headroom(
        chosen
            .iter()
            .flat_map(|(_, (_, b))| b.iter().map(|b| b.attempts as f64))
            .fold(0.0, f64::max),
    );
    let n = chosen.len().max(1);
    let height = 70 + 260 * n as u32 + 20;
    let value = r.sweep.values.last().copied().unwrap_or(0);
    render_png(style::WIDTH, height, |root| {
        let title = format!(
            "Attempts per {} bin, {} = {value}",
            r.metrics.bucket,
            r.sweep.parameter.column()
        );
        let sub = format!(
            "scenario {}, replication 0 (seed {}); un-jittered retries cluster",
            r.scenario, r.seed
        );
        let body = timechart::title(root, &title, &sub)?;
        for ((i, (name, buckets)), area) in chosen.iter().zip(body.split_evenly((n, 1)).iter()) {
            let mut chart = ChartBuilder::on(area)
                .margin(12)
                .caption(name.as_str(), (style::FONT, style::LABEL_SIZE + 2))
                .x_label_area_size(40)
                .y_label_area_size(80)
                .build_cartesian_2d(0.0..x_hi, 0.0..y_hi)
                .map_err(draw_err)?;
            timechart::house_style(&mut chart.configure_mesh())
                .x_desc("simulated time (s)")
                .y_desc(format!("attempts per {}", r.metrics.bucket))
                .draw()
                .map_err(draw_err)?;
            let colour = style::colour(*i);
            let bars = buckets.iter().enumerate().take(last + 1).map(|(k, b)| {
                let x0 = k as f64 * width;
                Rectangle::new(
                    [(x0, 0.0), (x0 + width, b.attempts as f64)],
                    colour.filled(),
                )
            });
            chart.draw_series(bars).map_err(draw_err)?;
        }
        Ok(())
    })
}
