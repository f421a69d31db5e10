//! Charts of a sweep: a figure against the swept parameter (one line per
//! strategy, its 95% confidence interval as a band), a heatmap per strategy for
//! two-parameter sweeps, and the timeline of attempts at the last point.

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::timechart;
use super::{PlotError, draw_err, render_png, style};
use crate::sweep::SweepReport;
use crate::sweep::figures::{FIGURES, Figure};

fn strategies(r: &SweepReport) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for row in &r.rows {
        if !names.contains(&row.strategy) {
            names.push(row.strategy.clone());
        }
    }
    names
}

/// (x, mean, ci95 half-width) of `figure` for strategy `name`, points in order;
/// points without the figure are left out.
fn series(r: &SweepReport, name: &str, figure: usize) -> Vec<(f64, f64, f64)> {
    let axis = &r.sweep.axes[0];
    r.rows
        .iter()
        .filter(|row| row.strategy == name)
        .filter_map(|row| {
            let (mean, ci) = row.stats[figure];
            let x = axis.values[r.sweep.points[row.point].coords[0]].x;
            mean.map(|m| (x, m, ci.unwrap_or(0.0)))
        })
        .collect()
}

fn subtitle(r: &SweepReport) -> String {
    format!(
        "scenario {}, seed {}; mean of {} run{} per point; band: 95% confidence interval",
        r.scenario,
        r.seed,
        r.sweep.replications,
        if r.sweep.replications == 1 { "" } else { "s" }
    )
}

/// `<figure>.png` of a one-parameter sweep: the figure's mean against the
/// parameter, one line per strategy, on a log axis if `log`.
pub fn render_figure(r: &SweepReport, figure: usize, log: bool) -> Result<Vec<u8>, PlotError> {
    let f: &Figure = &FIGURES[figure];
    let names = strategies(r);
    let all: Vec<Vec<(f64, f64, f64)>> = names.iter().map(|n| series(r, n, figure)).collect();
    let xs: Vec<f64> = r.sweep.axes[0].values.iter().map(|v| v.x).collect();
    let (x_lo, x_hi) = (xs[0], xs[xs.len() - 1]);
    let pad = ((x_hi - x_lo) * 0.02).max(1e-9);
    let x_range = (x_lo - pad)..(x_hi + pad);
    let points = all.iter().flatten();
    let y_top = points.clone().map(|p| p.1 + p.2).fold(0.0, f64::max);
    // The log axis starts at the smallest positive mean (bands may dip below).
    let y_floor = points
        .map(|p| p.1)
        .filter(|m| *m > 0.0)
        .fold(f64::INFINITY, f64::min);
    let no_data = all.iter().all(Vec::is_empty);
    let title = format!(
        "{} against {}",
        capitalise(f.label),
        r.sweep.axes[0].parameter
    );
    render_png(style::WIDTH, style::HEIGHT, |root| {
        let body = timechart::title(root, &title, &subtitle(r))?;
        let mut builder = ChartBuilder::on(&body);
        builder
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(90);
        macro_rules! draw_all {
            ($chart:expr, $clip:expr) => {{
                let mut chart = $chart;
                let y_desc = if log {
                    format!("{} (log scale)", f.label)
                } else {
                    f.label.to_string()
                };
                timechart::house_style(&mut chart.configure_mesh())
                    .x_desc(r.sweep.axes[0].column.as_str())
                    .y_desc(y_desc)
                    .draw()
                    .map_err(draw_err)?;
                for (i, pts) in all.iter().enumerate() {
                    let colour = style::colour(i);
                    let clip = $clip;
                    let band: Vec<(f64, f64)> = pts
                        .iter()
                        .map(|&(x, m, h)| (x, m + h))
                        .chain(pts.iter().rev().map(|&(x, m, h)| (x, clip(m - h))))
                        .collect();
                    chart
                        .draw_series(std::iter::once(Polygon::new(
                            band,
                            colour.mix(0.2).filled(),
                        )))
                        .map_err(draw_err)?;
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
                        .draw_series(
                            pts.iter()
                                .map(|&(x, m, _)| Circle::new((x, m), 3, colour.filled())),
                        )
                        .map_err(draw_err)?;
                }
                if no_data {
                    chart
                        .draw_series(std::iter::once(Text::new(
                            "no run has this figure",
                            (x_lo, 0.5),
                            (style::FONT, style::LABEL_SIZE),
                        )))
                        .map_err(draw_err)?;
                } else {
                    chart
                        .configure_series_labels()
                        .position(SeriesLabelPosition::UpperLeft)
                        .background_style(WHITE.mix(0.85))
                        .border_style(RGBColor(0xAA, 0xAA, 0xAA))
                        .label_font((style::FONT, style::TICK_SIZE))
                        .draw()
                        .map_err(draw_err)?;
                }
            }};
        }
        if log && y_floor.is_finite() {
            let lo = y_floor * 0.8;
            let hi = y_top.max(lo * 10.0) * 1.25;
            draw_all!(
                builder
                    .build_cartesian_2d(x_range, (lo..hi).log_scale())
                    .map_err(draw_err)?,
                move |v: f64| v.max(lo)
            );
        } else {
            let lo = points_min(&all).min(0.0);
            draw_all!(
                builder
                    .build_cartesian_2d(x_range, lo..timechart::headroom(y_top))
                    .map_err(draw_err)?,
                move |v: f64| v.max(lo)
            );
        }
        Ok(())
    })
}

fn points_min(all: &[Vec<(f64, f64, f64)>]) -> f64 {
    all.iter().flatten().map(|p| p.1 - p.2).fold(0.0, f64::min)
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or(String::new(), |first| {
        first.to_uppercase().chain(c).collect()
    })
}

/// Viridis (van der Walt and Smith, matplotlib 2.0), at five stops: perceptually
/// uniform and readable in grey and under colour-vision deficiencies.
const VIRIDIS: [(u8, u8, u8); 5] = [
    (0x44, 0x01, 0x54),
    (0x3B, 0x52, 0x8B),
    (0x21, 0x91, 0x8C),
    (0x5E, 0xC9, 0x62),
    (0xFD, 0xE7, 0x25),
];

/// The colour at `t` in [0, 1] of the map.
fn viridis(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (t.floor() as usize).min(VIRIDIS.len() - 2);
    let u = t - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * u).round() as u8;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// A value in three significant digits: "1234", "12.3", "0.0123".
fn compact(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        let decimals = (2.0 - a.log10().floor()) as usize;
        format!("{v:.decimals$}")
    }
}

/// `<figure>.png` of a two-parameter sweep: one heatmap per strategy, the first
/// parameter across and the second up, one colour scale for all, on log10 of
/// the figure if `log`.
pub fn render_heatmap(r: &SweepReport, figure: usize, log: bool) -> Result<Vec<u8>, PlotError> {
    let f: &Figure = &FIGURES[figure];
    let names = strategies(r);
    let (ax, ay) = (&r.sweep.axes[0], &r.sweep.axes[1]);
    let (nx, ny) = (ax.values.len(), ay.values.len());
    let scale = |v: f64| if log { v.log10() } else { v };
    let shown: Vec<f64> = r
        .rows
        .iter()
        .filter_map(|row| row.stats[figure].0)
        .filter(|v| !log || *v > 0.0)
        .map(scale)
        .collect();
    let lo = shown.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = shown.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let t_of = |v: f64| {
        if hi > lo {
            (scale(v) - lo) / (hi - lo)
        } else {
            0.5
        }
    };
    let cols = names.len().clamp(1, 3);
    let rows_n = names.len().div_ceil(cols).max(1);
    let panel_h = 380;
    let height = 70 + panel_h * rows_n as u32;
    let annotate = nx <= 12 && ny <= 16;
    let title = format!(
        "{}: {} across, {} up",
        capitalise(f.label),
        ax.parameter,
        ay.parameter
    );
    render_png(style::WIDTH, height, |root| {
        let sub = format!(
            "scenario {}, seed {}; mean of {} run{} per cell; one colour scale{}",
            r.scenario,
            r.seed,
            r.sweep.replications,
            if r.sweep.replications == 1 { "" } else { "s" },
            if log { " (log)" } else { "" }
        );
        let body = timechart::title(root, &title, &sub)?;
        let (panels, legend) = body.split_horizontally(style::WIDTH - 110);
        for (k, area) in panels.split_evenly((rows_n, cols)).iter().enumerate() {
            let Some(name) = names.get(k) else { break };
            let mut chart = ChartBuilder::on(area)
                .margin(10)
                .caption(name.as_str(), (style::FONT, style::LABEL_SIZE))
                .x_label_area_size(50)
                .y_label_area_size(70)
                // A segmented range over 0..n has n + 1 segments; 0..n - 1 has n.
                .build_cartesian_2d(
                    (0..nx as i32 - 1).into_segmented(),
                    (0..ny as i32 - 1).into_segmented(),
                )
                .map_err(draw_err)?;
            let label = |values: &[crate::scenario::AxisValue], v: &SegmentValue<i32>| match v {
                SegmentValue::CenterOf(i) => values
                    .get(*i as usize)
                    .map_or(String::new(), |v| v.display.clone()),
                _ => String::new(),
            };
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(nx)
                .y_labels(ny)
                .x_label_formatter(&|v| label(&ax.values, v))
                .y_label_formatter(&|v| label(&ay.values, v))
                .x_desc(ax.parameter.as_str())
                .y_desc(ay.parameter.as_str())
                .label_style((style::FONT, style::TICK_SIZE - 2))
                .axis_desc_style((style::FONT, style::TICK_SIZE))
                .draw()
                .map_err(draw_err)?;
            for row in r.rows.iter().filter(|row| &row.strategy == name) {
                let c = &r.sweep.points[row.point].coords;
                let (i, j) = (c[0] as i32, c[1] as i32);
                let mean = row.stats[figure].0.filter(|v| !log || *v > 0.0);
                let fill = mean.map_or(RGBColor(0xDD, 0xDD, 0xDD), |v| viridis(t_of(v)));
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [
                            (SegmentValue::Exact(i), SegmentValue::Exact(j)),
                            (SegmentValue::Exact(i + 1), SegmentValue::Exact(j + 1)),
                        ],
                        fill.filled(),
                    )))
                    .map_err(draw_err)?;
                if annotate {
                    let text = mean.map_or("-".to_string(), compact);
                    let ink = match mean {
                        Some(v) if t_of(v) < 0.6 => WHITE,
                        _ => BLACK,
                    };
                    let font = TextStyle::from((style::FONT, style::TICK_SIZE - 1))
                        .color(&ink)
                        .pos(Pos::new(HPos::Center, VPos::Center));
                    chart
                        .draw_series(std::iter::once(Text::new(
                            text,
                            (SegmentValue::CenterOf(i), SegmentValue::CenterOf(j)),
                            font,
                        )))
                        .map_err(draw_err)?;
                }
            }
        }
        colour_bar(&legend, lo, hi, log)
    })
}

/// The colour scale: a vertical bar from `lo` (bottom) to `hi`.
fn colour_bar(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    lo: f64,
    hi: f64,
    log: bool,
) -> Result<(), PlotError> {
    if !(lo.is_finite() && hi.is_finite()) {
        return Ok(());
    }
    let (top, height, left) = (40, 260, 10);
    let steps = 100;
    for s in 0..steps {
        let t = 1.0 - f64::from(s) / f64::from(steps);
        let y = top + s * height / steps;
        area.draw(&Rectangle::new(
            [(left, y), (left + 24, y + height / steps + 1)],
            viridis(t).filled(),
        ))
        .map_err(draw_err)?;
    }
    let unscale = |v: f64| if log { 10f64.powf(v) } else { v };
    let font = TextStyle::from((style::FONT, style::TICK_SIZE - 2))
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (t, y) in [(1.0, top), (0.5, top + height / 2), (0.0, top + height)] {
        let v = unscale(lo + (hi - lo) * t);
        area.draw_text(&compact(v), &font, (left + 30, y))
            .map_err(draw_err)?;
    }
    Ok(())
}

/// `timeline.png`: attempts per bucket at the last point, one panel per
/// strategy the sweep names in `timeline`.
pub fn render_timeline(r: &SweepReport) -> Result<Vec<u8>, PlotError> {
    let chosen: Vec<(usize, &(String, Vec<crate::sweep::Bin>))> = r
        .timelines
        .iter()
        .enumerate()
        .filter(|(_, (n, _))| r.sweep.timeline.contains(n))
        .collect();
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
    let at = r
        .sweep
        .points
        .last()
        .map_or(String::new(), |p| r.sweep.describe(p));
    render_png(style::WIDTH, height, |root| {
        let title = format!("Attempts per {} bin, {at}", r.metrics.bucket);
        let sub = format!(
            "scenario {}, replication 0 (seed {})",
            r.scenario,
            crate::sweep::derive_seed(r.seed, r.sweep.points.len().saturating_sub(1), 0)
        );
        let body = timechart::title(root, &title, &sub)?;
        for ((i, (name, bins)), area) in chosen.iter().zip(body.split_evenly((n, 1)).iter()) {
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
            let bars = bins.iter().enumerate().take(last + 1).map(|(k, b)| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_colour_map_runs_from_its_first_stop_to_its_last() {
        assert_eq!(viridis(0.0), RGBColor(0x44, 0x01, 0x54));
        assert_eq!(viridis(1.0), RGBColor(0xFD, 0xE7, 0x25));
        assert_eq!(viridis(0.5), RGBColor(0x21, 0x91, 0x8C));
        assert_eq!(viridis(-3.0), viridis(0.0));
    }

    #[test]
    fn compact_keeps_three_significant_digits() {
        assert_eq!(compact(1234.4), "1234");
        assert_eq!(compact(12.34), "12.3");
        assert_eq!(compact(1.234), "1.23");
        assert_eq!(compact(0.01234), "0.0123");
        assert_eq!(compact(0.0), "0");
    }
}
