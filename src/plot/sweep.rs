//! Charts of a sweep: a figure against the swept parameter (one line per
//! strategy, its 95% confidence interval as a band), a heatmap per strategy for
//! two-parameter sweeps, and the timeline of attempts at one point.

use plotters::coord::CoordTranslate;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::timechart;
use super::{PlotError, draw_err, render_png, style};
use crate::metrics::figures::{FIGURES, Figure, Stat};
use crate::sweep::SweepReport;

fn strategies(r: &SweepReport) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for row in &r.rows {
        if !names.contains(&row.strategy) {
            names.push(row.strategy.clone());
        }
    }
    names
}

/// (x, value, band low, band high) of `figure` for strategy `name`, points in
/// order; points without the figure are left out. The value is the mean or the
/// share (band: its 95% interval) or, for a median figure, the median (no
/// band; infinite for "never").
fn series(r: &SweepReport, name: &str, figure: usize) -> Vec<Point> {
    let axis = &r.sweep.axes[0];
    r.rows
        .iter()
        .filter(|row| row.strategy == name)
        .filter_map(|row| {
            let e = row.stats[figure];
            let x = axis.values[r.sweep.points[row.point].coords[0]].x;
            e.value().map(|v| {
                let (lo, hi) = e.interval().unwrap_or((v, v));
                (x, v, lo, hi)
            })
        })
        .collect()
}

/// A point of a line chart: x, value, and its band's low and high ends.
type Point = (f64, f64, f64, f64);

/// "mean of 5 runs per point", or "median of ..." for a median figure.
fn statistic(r: &SweepReport, f: &Figure, per: &str) -> String {
    let runs = r.sweep.replications;
    let plural = if runs == 1 { "" } else { "s" };
    // Only a line chart (one value per point) draws the interval as a band.
    let band = |what: &str| {
        if per == "point" && runs > 1 {
            format!("; band: {what}")
        } else {
            String::new()
        }
    };
    match f.stat {
        Stat::Mean => format!(
            "mean of {runs} run{plural} per {per}{}",
            band("95% confidence interval")
        ),
        Stat::Median => format!(
            "median of {runs} run{plural} per {per}, a run that never recovered counted as never"
        ),
        Stat::Share => format!(
            "share of {runs} run{plural} per {per}{}",
            band("95% interval (Wilson)")
        ),
    }
}

/// Width of the legend column beside a line chart, pixels.
const LEGEND_WIDTH: u32 = 270;

/// Draws series `i`'s marker at `at`: circle, triangle or square by
/// [`style::marker`].
pub(super) fn marker<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    i: usize,
    at: (f64, f64),
    colour: RGBColor,
) -> Result<(), PlotError> {
    // Later series are drawn over earlier ones: a marker a little smaller
    // for each keeps the ones beneath in sight where values coincide.
    let size = 7 - i.min(4) as i32;
    match style::marker(i) {
        0 => chart
            .draw_series(std::iter::once(Circle::new(at, size, colour.filled())))
            .map(|_| ()),
        1 => chart
            .draw_series(std::iter::once(TriangleMarker::new(
                at,
                size + 3,
                colour.filled(),
            )))
            .map(|_| ()),
        _ => chart
            .draw_series(std::iter::once(
                EmptyElement::at(at)
                    + Rectangle::new([(-size, -size), (size, size)], colour.filled()),
            ))
            .map(|_| ()),
    }
    .map_err(draw_err)
}

/// The line of series `i` through `pts`, in its colour and pattern.
pub(super) fn line<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    i: usize,
    pts: Vec<(f64, f64)>,
) -> Result<(), PlotError> {
    let colour = style::colour(i);
    match style::pattern(i) {
        None => chart
            .draw_series(LineSeries::new(pts, colour.stroke_width(2)))
            .map(|_| ()),
        Some((dash, gap)) => chart
            .draw_series(DashedLineSeries::new(
                pts,
                dash,
                gap,
                colour.stroke_width(2),
            ))
            .map(|_| ()),
    }
    .map_err(draw_err)
}

/// The legend column: each strategy's line, marker and name, and the "never"
/// marker where the figure has one.
pub(super) fn legend_column(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    names: &[String],
    never: bool,
) -> Result<(), PlotError> {
    let font =
        TextStyle::from((style::FONT, style::TICK_SIZE)).pos(Pos::new(HPos::Left, VPos::Center));
    // Rows of about 28 pixels from the top, however tall the column is.
    let rows = (area.dim_in_pixel().1 as usize / 28).max(names.len() + 2);
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .build_cartesian_2d(0.0..1.0, 0.0..rows as f64)
        .map_err(draw_err)?;
    let top = rows as f64;
    for (i, name) in names.iter().enumerate() {
        let y = top - 0.5 - i as f64;
        line(&mut chart, i, vec![(0.02, y), (0.16, y)])?;
        marker(&mut chart, i, (0.09, y), style::colour(i))?;
        chart
            .draw_series(std::iter::once(Text::new(
                name.clone(),
                (0.2, y),
                font.clone(),
            )))
            .map_err(draw_err)?;
    }
    if never {
        let y = top - 1.0 - names.len() as f64;
        chart
            .draw_series(std::iter::once(Cross::new(
                (0.09, y),
                5,
                style::NEVER.stroke_width(2),
            )))
            .map_err(draw_err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                "never recovered (top strip)",
                (0.2, y),
                font,
            )))
            .map_err(draw_err)?;
    }
    Ok(())
}

/// `<figure>.png` of a one-parameter sweep: the figure against the parameter,
/// one line per strategy (colour, pattern and marker differ), on a log axis if
/// `log`; a median figure's "never" points sit in a strip at the top.
#[expect(
    clippy::too_many_lines,
    reason = "a chart's layout drawn step by step: axes, series, intervals, legend"
)]
pub fn render_figure(r: &SweepReport, figure: usize, log: bool) -> Result<Vec<u8>, PlotError> {
    let f: &Figure = &FIGURES[figure];
    let names = strategies(r);
    let all: Vec<Vec<Point>> = names.iter().map(|n| series(r, n, figure)).collect();
    let xs: Vec<f64> = r.sweep.axes[0].values.iter().map(|v| v.x).collect();
    let (x_lo, x_hi) = (xs[0], xs[xs.len() - 1]);
    let pad = ((x_hi - x_lo) * 0.02).max(1e-9);
    let x_range = (x_lo - pad)..(x_hi + pad);
    let finite = || all.iter().flatten().filter(|p| p.1.is_finite());
    let never = all.iter().flatten().any(|p| p.1.is_infinite());
    let y_top = finite().map(|p| p.3).fold(0.0, f64::max);
    // The log axis starts at the smallest positive value (bands may dip below).
    let y_floor = finite()
        .map(|p| p.1)
        .filter(|m| *m > 0.0)
        .fold(f64::INFINITY, f64::min);
    let no_data = all.iter().all(Vec::is_empty);
    let title = format!(
        "{} against {}",
        capitalise(f.label),
        r.sweep.axes[0].parameter
    );
    let sub = format!(
        "scenario {}, seed {}; {}",
        r.scenario,
        r.seed,
        statistic(r, f, "point")
    );
    render_png(style::WIDTH, style::HEIGHT, |root| {
        let body = timechart::title(root, &title, &sub)?;
        let (plot_area, legend) = body.split_horizontally(style::WIDTH - LEGEND_WIDTH);
        legend_column(&legend, &names, never)?;
        let mut builder = ChartBuilder::on(&plot_area);
        builder
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(90);
        macro_rules! draw_all {
            ($chart:expr, $clip:expr, $never_y:expr, $points_top:expr) => {{
                let points_top: f64 = $points_top;
                let (x_range_lo, x_range_hi) = (x_lo - pad, x_hi + pad);
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
                let never_y: f64 = $never_y;
                for (i, pts) in all.iter().enumerate() {
                    let colour = style::colour(i);
                    let clip = $clip;
                    let shown: Vec<Point> = pts
                        .iter()
                        .map(|&(x, m, lo, hi)| (x, if m.is_finite() { m } else { never_y }, lo, hi))
                        .collect();
                    if f.stat != Stat::Median {
                        let band: Vec<(f64, f64)> = shown
                            .iter()
                            .map(|&(x, _, _, hi)| (x, hi))
                            .chain(shown.iter().rev().map(|&(x, _, lo, _)| (x, clip(lo))))
                            .collect();
                        chart
                            .draw_series(std::iter::once(Polygon::new(
                                band,
                                colour.mix(0.15).filled(),
                            )))
                            .map_err(draw_err)?;
                    }
                    // Lines join finite values only: a "never" is not a
                    // value the figure grows towards.
                    for run in pts.split(|p| p.1.is_infinite()) {
                        line(&mut chart, i, run.iter().map(|p| (p.0, p.1)).collect())?;
                    }
                    for (&(x, m, _, _), p) in pts.iter().zip(&shown) {
                        if m.is_finite() {
                            marker(&mut chart, i, (p.0, p.1), colour)?;
                        } else {
                            chart
                                .draw_series(std::iter::once(Cross::new(
                                    (x, never_y),
                                    6,
                                    colour.stroke_width(3),
                                )))
                                .map_err(draw_err)?;
                        }
                    }
                }
                if never {
                    // The strip's lower edge, between the values and "never".
                    let edge = (never_y + points_top) / 2.0;
                    chart
                        .draw_series(DashedLineSeries::new(
                            [(x_range_lo, edge), (x_range_hi, edge)],
                            4,
                            4,
                            style::REFERENCE_GREY.stroke_width(1),
                        ))
                        .map_err(draw_err)?;
                    chart
                        .draw_series(std::iter::once(Text::new(
                            "never",
                            (x_lo, never_y),
                            TextStyle::from((style::FONT, style::TICK_SIZE))
                                .pos(Pos::new(HPos::Left, VPos::Bottom)),
                        )))
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
                }
            }};
        }
        if log && y_floor.is_finite() {
            let lo = y_floor * 0.8;
            let hi = y_top.max(lo * 10.0) * if never { 2.5 } else { 1.25 };
            draw_all!(
                builder
                    .build_cartesian_2d(x_range, (lo..hi).log_scale())
                    .map_err(draw_err)?,
                move |v: f64| v.max(lo),
                hi / 1.3,
                y_top.max(lo)
            );
        } else {
            let lo = points_min(&all).min(0.0);
            let top = timechart::headroom(y_top);
            let hi = if never { top * 1.2 } else { top };
            draw_all!(
                builder
                    .build_cartesian_2d(x_range, lo..hi)
                    .map_err(draw_err)?,
                move |v: f64| v.max(lo),
                top * 1.1,
                top
            );
        }
        Ok(())
    })
}

fn points_min(all: &[Vec<Point>]) -> f64 {
    all.iter()
        .flatten()
        .filter(|p| p.1.is_finite())
        .map(|p| p.2)
        .fold(0.0, f64::min)
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or(String::new(), |first| {
        first.to_uppercase().chain(c).collect()
    })
}

/// A value in three significant digits: "1234", "12.3", "0.0123".
fn compact(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        let decimals = if a >= 10.0 {
            1
        } else if a >= 1.0 {
            2
        } else {
            (2.0 - a.log10().floor()) as usize
        };
        // Trailing zeros say nothing: "1.00" is "1", "0.60" is "0.6".
        let text = format!("{v:.decimals$}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// `<figure>.png` of a two-parameter sweep: one heatmap per strategy, the first
/// parameter across and the second up, one colour scale for all, on log10 of
/// the figure if `log`.
#[expect(
    clippy::too_many_lines,
    reason = "a chart's layout drawn step by step: cells, scale, labels"
)]
pub fn render_heatmap(r: &SweepReport, figure: usize, log: bool) -> Result<Vec<u8>, PlotError> {
    let f: &Figure = &FIGURES[figure];
    let names = strategies(r);
    let (ax, ay) = (&r.sweep.axes[0], &r.sweep.axes[1]);
    let (nx, ny) = (ax.values.len(), ay.values.len());
    let scale = |v: f64| if log { v.log10() } else { v };
    let shown: Vec<f64> = r
        .rows
        .iter()
        .filter_map(|row| row.stats[figure].value())
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .map(scale)
        .collect();
    let never = r
        .rows
        .iter()
        .any(|row| row.stats[figure].value().is_some_and(f64::is_infinite));
    let mut lo = shown.iter().copied().fold(f64::INFINITY, f64::min);
    let mut hi = shown.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // A map of one value (every run recovered, no crash anywhere) gets a scale
    // that says so, rather than three labels of the same number.
    if lo == hi && lo.is_finite() {
        (lo, hi) = (lo.min(0.0), hi.max(if log { lo + 1.0 } else { 1.0 }));
        if lo == hi {
            hi = lo + 1.0;
        }
    }
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
            "scenario {}, seed {}; {}; one colour scale{}",
            r.scenario,
            r.seed,
            statistic(r, f, "cell"),
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
                let mean = row.stats[figure].value().filter(|v| !log || *v > 0.0);
                let fill = match mean {
                    None => RGBColor(0xDD, 0xDD, 0xDD),
                    Some(v) if v.is_infinite() => style::NEVER,
                    Some(v) => style::viridis(t_of(v)),
                };
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
                    let text = match mean {
                        None => "-".to_string(),
                        Some(v) if v.is_infinite() => "never".to_string(),
                        Some(v) => compact(v),
                    };
                    let ink = match mean {
                        Some(v) if v.is_infinite() || t_of(v) < 0.6 => WHITE,
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
        colour_bar(&legend, lo, hi, log, never)
    })
}

/// The colour scale: a vertical bar from `lo` (bottom) to `hi`.
fn colour_bar(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    lo: f64,
    hi: f64,
    log: bool,
    never: bool,
) -> Result<(), PlotError> {
    let (top, height, left) = (40, 260, 10);
    if never {
        // The swatch of cells whose median run never recovered, under the bar.
        let y = top + height + 30;
        area.draw(&Rectangle::new(
            [(left, y), (left + 24, y + 20)],
            style::NEVER.filled(),
        ))
        .map_err(draw_err)?;
        let font = TextStyle::from((style::FONT, style::TICK_SIZE - 2))
            .pos(Pos::new(HPos::Left, VPos::Center));
        area.draw_text("never", &font, (left + 30, y + 10))
            .map_err(draw_err)?;
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return Ok(());
    }
    let steps = 100;
    for s in 0..steps {
        let t = 1.0 - f64::from(s) / f64::from(steps);
        let y = top + s * height / steps;
        area.draw(&Rectangle::new(
            [(left, y), (left + 24, y + height / steps + 1)],
            style::viridis(t).filled(),
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

/// The timeline's legend: the trigger and the capacity, said only where
/// some world at the point has them.
fn timeline_legend(worlds: &[crate::model::WorldConfig]) -> String {
    let mut legend = String::new();
    if worlds.iter().any(|w| !w.outages.is_empty()) {
        legend.push_str("; trigger shaded grey");
    }
    if worlds.iter().any(|w| w.capacity_per_s().is_some()) {
        legend.push_str("; dashed: capacity");
    }
    legend
}

/// `timeline.png`: attempts per bucket at the timeline's point (the last
/// unless `timeline_at` names another), one panel per strategy the sweep
/// names in `timeline`.
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
    let point = r.sweep.points.get(r.sweep.timeline_point);
    let at = point.map_or(String::new(), |p| r.sweep.describe(p));
    // Say what is drawn only where it is: the trigger and the capacity.
    let worlds = point.map(|p| p.worlds.as_slice()).unwrap_or(&[]);
    let legend = timeline_legend(worlds);
    render_png(style::WIDTH, height, |root| {
        let title = format!("Attempts per {} bin, {at}", r.metrics.bucket);
        let sub = format!(
            "scenario {}, replication 0 (seed {}){legend}",
            r.scenario,
            crate::sweep::derive_seed(r.seed, r.sweep.timeline_point, 0)
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
            // The trigger and the capacity of this strategy's world at that point.
            let world = point.and_then(|p| p.worlds.get(*i));
            if let Some(world) = world {
                chart
                    .draw_series(world.outages.iter().filter_map(|o| {
                        let (s, e) = (o.start.as_secs_f64(), o.end.as_secs_f64().min(x_hi));
                        (s < e).then(|| {
                            Rectangle::new([(s, 0.0), (e, y_hi)], style::OUTAGE_SHADE.filled())
                        })
                    }))
                    .map_err(draw_err)?;
            }
            let colour = style::colour(*i);
            let bars = bins.iter().enumerate().take(last + 1).map(|(k, b)| {
                let x0 = k as f64 * width;
                Rectangle::new(
                    [(x0, 0.0), (x0 + width, b.attempts as f64)],
                    colour.filled(),
                )
            });
            chart.draw_series(bars).map_err(draw_err)?;
            let capacity = world.and_then(|w| w.capacity_per_s()).map(|c| c * width);
            if let Some(per_bucket) = capacity.filter(|&c| c < y_hi) {
                chart
                    .draw_series(DashedLineSeries::new(
                        [(0.0, per_bucket), (x_hi, per_bucket)],
                        8,
                        6,
                        style::REFERENCE.stroke_width(2),
                    ))
                    .map_err(draw_err)?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_colour_map_runs_from_its_first_stop_to_its_last() {
        assert_eq!(style::viridis(0.0), RGBColor(0x44, 0x01, 0x54));
        assert_eq!(style::viridis(1.0), RGBColor(0xFD, 0xE7, 0x25));
        assert_eq!(style::viridis(0.5), RGBColor(0x21, 0x91, 0x8C));
        assert_eq!(style::viridis(-3.0), style::viridis(0.0));
    }

    #[test]
    fn compact_keeps_three_significant_digits() {
        assert_eq!(compact(1234.4), "1234");
        assert_eq!(compact(12.34), "12.3");
        assert_eq!(compact(1.234), "1.23");
        assert_eq!(compact(1.0), "1");
        assert_eq!(compact(0.6), "0.6");
        assert_eq!(compact(0.01234), "0.0123");
        assert_eq!(compact(0.05), "0.05");
        assert_eq!(compact(0.0), "0");
    }
}
