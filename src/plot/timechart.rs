//! The shared shape of the time-series charts: small multiples, one row per
//! strategy, each row the whole run beside a zoom on the trigger and the
//! recovery. Triggers are shaded, the capacity is a dashed line, the recovery a
//! dotted vertical line; one legend strip under the title says what each line is,
//! so no legend covers data. Values are raw buckets: nothing is smoothed, so
//! nothing moves in time.

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, FONT, LABEL_SIZE, TICK_SIZE};
use super::{PlotError, draw_err, render_png};
use crate::metrics::Report;

/// How a line is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stroke {
    /// A solid line of this width.
    Solid(u32),
    /// A thin dashed line.
    Dashed,
    /// A dotted line (the recovery marker).
    Dotted,
}

/// One line.
pub struct Line {
    /// Colour.
    pub colour: RGBColor,
    /// How it is drawn.
    pub stroke: Stroke,
    /// (t seconds, value) points.
    pub points: Vec<(f64, f64)>,
}

/// An entry of the legend strip.
pub struct Key {
    /// Text.
    pub label: String,
    /// Colour (`None`: the strategy's own colour, shown as a short run of the
    /// palette).
    pub colour: Option<RGBColor>,
    /// How its line is drawn.
    pub stroke: Stroke,
}

/// One strategy's row.
pub struct Row {
    /// Caption above the row: the strategy and its key figures.
    pub caption: String,
    /// Top of the y axis.
    pub y_max: f64,
    /// The lines, drawn in order.
    pub lines: Vec<Line>,
    /// When the run was back to normal, s (a dotted vertical line).
    pub recovered_at: Option<f64>,
}

/// What a chart of small multiples shows.
pub struct Chart<'a> {
    /// Title.
    pub title: &'a str,
    /// What the chart shows beyond [`subtitle`]'s common facts.
    pub subtitle_extra: &'a str,
    /// y-axis label, with units.
    pub y_label: &'a str,
    /// The legend strip.
    pub keys: Vec<Key>,
    /// A dashed horizontal line (the server's capacity, its crash limit), if any.
    pub reference_line: Option<f64>,
    /// Whether each row's caption starts with a swatch of its strategy's
    /// colour: not where the lines' colours mean something else (tiers).
    pub swatches: bool,
}

/// Height of one row, pixels.
const ROW_HEIGHT: u32 = 200;
/// Height of the legend strip, pixels.
const KEY_HEIGHT: u32 = 34;
/// Width of the whole-run column when there is a zoom beside it, pixels.
const WHOLE_WIDTH: u32 = 700;

/// The points of per-bucket values `v` at each bucket's centre.
pub fn series(report: &Report, v: impl Iterator<Item = f64>) -> Vec<(f64, f64)> {
    let w = report.metrics.bucket.as_secs_f64();
    v.enumerate()
        .map(|(i, y)| ((i as f64 + 0.5) * w, y))
        .collect()
}

/// A tick label without needless decimals: "6000", "20", "2.5", "0.25",
/// "0.005" (a value below 1 keeps its first two significant digits).
pub fn tick(v: f64) -> String {
    if v == v.round() || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        let decimals = ((-v.abs().log10()).ceil() as usize + 1).clamp(2, 12);
        let text = format!("{v:.decimals$}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn tick_label(v: &f64) -> String {
    tick(*v)
}

/// The house style of a mesh on two `f64` axes: a light grid, tick labels
/// without needless decimals, the embedded font at the standard sizes.
pub fn house_style<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    DB: DrawingBackend,
{
    mesh.light_line_style(WHITE)
        .bold_line_style(RGBColor(0xE4, 0xE4, 0xE4))
        .x_label_formatter(&tick_label)
        .y_label_formatter(&tick_label)
        .label_style((FONT, TICK_SIZE))
        .axis_desc_style((FONT, LABEL_SIZE))
}

/// A y-axis top with some room above `max`.
pub fn headroom(max: f64) -> f64 {
    if max > 0.0 { max * 1.08 } else { 1.0 }
}

/// The time window worth a closer look: from 3 s before the first trigger to 3 s
/// after the last recovery, at least 5 s after the last trigger, at most 15 s
/// after it (the whole run shows the rest). `None` without triggers.
pub fn zoom_window(report: &Report) -> Option<(f64, f64)> {
    let start = report.outages.iter().map(|o| o.0).min()?.as_secs_f64();
    let end = report.outages.iter().map(|o| o.1).max()?.as_secs_f64();
    let last_recovery = report
        .runs
        .iter()
        .map(|r| r.summary.recovery_time_s.map_or(f64::INFINITY, |t| end + t))
        .fold(end, f64::max);
    let to = (last_recovery + 3.0).clamp(end + 5.0, end + 15.0);
    Some(((start - 3.0).max(0.0), to.min(report.duration_s)))
}

/// When run `i` was back to normal (absolute seconds), if it recovered.
pub fn recovered_at(report: &Report, i: usize) -> Option<f64> {
    let end = report.outages.iter().map(|o| o.1).max()?.as_secs_f64();
    Some(end + report.runs[i].summary.recovery_time_s?)
}

/// "recovered 1.6 s after the trigger", "never recovered in the run", or nothing.
pub fn recovery_phrase(report: &Report, i: usize) -> String {
    if report.outages.is_empty() {
        return String::new();
    }
    match report.runs[i].summary.recovery_time_s {
        None if report.runs[i].summary.twin_overloaded => {
            "; overloaded even without the trigger: no recovery to measure".to_string()
        }
        Some(t) => format!("; recovered {t:.1} s after the trigger"),
        None => "; never recovered in the run".to_string(),
    }
}

/// Draws `chart` with one row per entry of `rows` (strategies in order) and
/// encodes it.
pub fn render(report: &Report, chart: &Chart, rows: &[Row]) -> Result<Vec<u8>, PlotError> {
    let n = rows.len().max(1);
    let height = 70 + KEY_HEIGHT + ROW_HEIGHT * n as u32 + 10;
    let zoom = zoom_window(report);
    render_png(style::WIDTH, height, |root| {
        let mut sub = subtitle(report, chart.subtitle_extra);
        if let Some((from, to)) = zoom {
            sub.push_str(&format!("; right: {} s to {} s", tick(from), tick(to)));
        }
        let body = title(root, chart.title, &sub)?;
        let (keys, body) = body.split_vertically(KEY_HEIGHT);
        legend_strip(&keys, &chart.keys, zoom)?;
        let (body, _) = body.split_vertically(ROW_HEIGHT * n as u32);
        for (i, (row, area)) in rows.iter().zip(body.split_evenly((n, 1))).enumerate() {
            let last = i + 1 == n;
            let (cap, area) = area.split_vertically(24);
            // A swatch of the strategy's colour, then its caption in dark ink
            // (some palette colours are too light for text).
            if chart.swatches {
                cap.draw(&Rectangle::new(
                    [(88, 7), (104, 19)],
                    style::colour(i).filled(),
                ))
                .map_err(draw_err)?;
            }
            cap.draw_text(
                &row.caption,
                &TextStyle::from((FONT, LABEL_SIZE)).pos(Pos::new(HPos::Left, VPos::Top)),
                (if chart.swatches { 112 } else { 88 }, 3),
            )
            .map_err(draw_err)?;
            let whole = (0.0, report.duration_s);
            match zoom {
                Some(z) => {
                    let (left, right) = area.split_horizontally(WHOLE_WIDTH);
                    panel(&left, report, chart, row, whole, last)?;
                    panel(&right, report, chart, row, z, last)?;
                }
                None => panel(&area, report, chart, row, whole, last)?,
            }
        }
        Ok(())
    })
}

/// One panel of a row over the time range `(from, to)`.
fn panel(
    area: &DrawingArea<BitMapBackend, Shift>,
    report: &Report,
    chart: &Chart,
    row: &Row,
    (from, to): (f64, f64),
    x_label: bool,
) -> Result<(), PlotError> {
    let mut c = ChartBuilder::on(area)
        .margin_left(8)
        .margin_right(16)
        .margin_top(4)
        .x_label_area_size(if x_label { 42 } else { 24 })
        .y_label_area_size(80)
        .build_cartesian_2d(from..to, 0.0..row.y_max)
        .map_err(draw_err)?;
    let mut mesh = c.configure_mesh();
    house_style(&mut mesh)
        .y_desc(chart.y_label)
        .x_labels(8)
        .y_labels(5);
    if x_label {
        mesh.x_desc("simulated time (s)");
    }
    mesh.draw().map_err(draw_err)?;
    for &(start, end) in &report.outages {
        let (s, e) = (start.as_secs_f64().max(from), end.as_secs_f64().min(to));
        if s < e {
            c.draw_series(std::iter::once(Rectangle::new(
                [(s, 0.0), (e, row.y_max)],
                style::OUTAGE_SHADE.filled(),
            )))
            .map_err(draw_err)?;
        }
    }
    if let Some(cap) = chart.reference_line {
        c.draw_series(DashedLineSeries::new(
            [(from, cap), (to, cap)],
            8,
            6,
            style::REFERENCE.stroke_width(1),
        ))
        .map_err(draw_err)?;
    }
    let visible = |p: &&(f64, f64)| p.0 >= from - 1.0 && p.0 <= to + 1.0;
    for line in &row.lines {
        draw_line(&mut c, line, line.points.iter().filter(visible).copied())?;
    }
    if let Some(t) = row.recovered_at.filter(|t| (from..=to).contains(t)) {
        c.draw_series(DashedLineSeries::new(
            [(t, 0.0), (t, row.y_max)],
            2,
            3,
            style::RECOVERY.stroke_width(2),
        ))
        .map_err(draw_err)?;
        // The marker is drawn last, over the lines: a recovery at the trigger's
        // end must not hide under them.
    }
    Ok(())
}

/// One series of a panel, in its stroke.
fn draw_line(
    c: &mut ChartContext<
        '_,
        BitMapBackend<'_>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    line: &Line,
    pts: impl Iterator<Item = (f64, f64)> + Clone,
) -> Result<(), PlotError> {
    match line.stroke {
        // A wide line is drawn segment by segment: plotters joins the
        // segments of one wide path with mitres, and a one-bucket spike
        // (a crash's burst of refused retries) made a mitre that ran far
        // past the panel, across the rows above and below.
        Stroke::Solid(w) if w > 1 => {
            let pts: Vec<(f64, f64)> = pts.collect();
            c.draw_series(
                pts.windows(2)
                    .map(|ab| PathElement::new(vec![ab[0], ab[1]], line.colour.stroke_width(w))),
            )
            .map(|_| ())
        }
        Stroke::Solid(w) => c
            .draw_series(LineSeries::new(pts, line.colour.stroke_width(w)))
            .map(|_| ()),
        Stroke::Dashed => c
            .draw_series(DashedLineSeries::new(
                pts,
                5,
                4,
                line.colour.stroke_width(1),
            ))
            .map(|_| ()),
        Stroke::Dotted => c
            .draw_series(DashedLineSeries::new(
                pts,
                2,
                3,
                line.colour.stroke_width(2),
            ))
            .map(|_| ()),
    }
    .map_err(draw_err)
}

/// The legend strip: each key's line and text, left to right, then which
/// column is which.
fn legend_strip(
    area: &DrawingArea<BitMapBackend, Shift>,
    keys: &[Key],
    zoom: Option<(f64, f64)>,
) -> Result<(), PlotError> {
    let font = TextStyle::from((FONT, TICK_SIZE)).pos(Pos::new(HPos::Left, VPos::Center));
    let y = (KEY_HEIGHT / 2) as i32;
    let mut x = 90;
    let mut all: Vec<Key> = keys
        .iter()
        .map(|k| Key {
            label: k.label.clone(),
            colour: k.colour,
            stroke: k.stroke,
        })
        .collect();
    if zoom.is_some() {
        all.push(Key {
            label: "trigger".to_string(),
            colour: Some(style::OUTAGE_SHADE),
            stroke: Stroke::Solid(12),
        });
        all.push(Key {
            label: "recovered".to_string(),
            colour: Some(style::RECOVERY),
            stroke: Stroke::Dotted,
        });
    }
    for k in &all {
        let segment = [(x, y), (x + 24, y)];
        match (k.colour, k.stroke) {
            (None, Stroke::Solid(w)) => {
                // The strategy's own colour: a short run of the palette.
                for (j, c) in style::PALETTE.iter().take(3).enumerate() {
                    let x0 = x + 8 * j as i32;
                    area.draw(&PathElement::new(
                        vec![(x0, y), (x0 + 8, y)],
                        c.stroke_width(w + 1),
                    ))
                    .map_err(draw_err)?;
                }
            }
            (Some(c), Stroke::Solid(w)) => area
                .draw(&PathElement::new(segment.to_vec(), c.stroke_width(w + 1)))
                .map_err(draw_err)?,
            (c, Stroke::Dashed | Stroke::Dotted) => {
                let c = c.unwrap_or(style::REFERENCE);
                // Dashes of 8 with gaps of 6, or dots of 2 with gaps of 3.
                let (dash, step, width) = if k.stroke == Stroke::Dashed {
                    (8, 14, 1)
                } else {
                    (2, 5, 2)
                };
                let mut x0 = x;
                while x0 + dash <= x + 26 {
                    area.draw(&PathElement::new(
                        vec![(x0, y), (x0 + dash, y)],
                        c.stroke_width(width),
                    ))
                    .map_err(draw_err)?;
                    x0 += step;
                }
            }
        }
        area.draw_text(&k.label, &font, (x + 30, y))
            .map_err(draw_err)?;
        x += 30 + 8 * k.label.len() as i32 + 22;
    }
    Ok(())
}

/// Splits off a title strip of `root` and writes `title` (and a subtitle) in it.
pub fn title<'a>(
    root: &DrawingArea<BitMapBackend<'a>, Shift>,
    title: &str,
    subtitle: &str,
) -> Result<DrawingArea<BitMapBackend<'a>, Shift>, PlotError> {
    let (top, body) = root.split_vertically(70);
    let centre = (style::WIDTH / 2) as i32;
    let title_style =
        TextStyle::from((FONT, style::TITLE_SIZE)).pos(Pos::new(HPos::Center, VPos::Top));
    top.draw_text(title, &title_style, (centre, 10))
        .map_err(draw_err)?;
    let sub_style = TextStyle::from((FONT, LABEL_SIZE - 2))
        .color(&RGBColor(0x55, 0x55, 0x55))
        .pos(Pos::new(HPos::Center, VPos::Top));
    top.draw_text(subtitle, &sub_style, (centre, 42))
        .map_err(draw_err)?;
    Ok(body)
}

/// The subtitle every time chart carries: scenario, seed, bucket width.
pub fn subtitle(report: &Report, extra: &str) -> String {
    format!(
        "scenario {}, seed {}; raw {} buckets, not smoothed{extra}",
        report.scenario, report.seed, report.metrics.bucket
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{SimDuration, SimTime};

    #[test]
    fn tick_labels_keep_two_significant_digits_below_one() {
        let labels: Vec<String> = [6000.0, 20.0, 2.5, 0.25, 0.1, 0.015, 0.005, 0.0025, 0.0]
            .into_iter()
            .map(tick)
            .collect();
        assert_eq!(
            labels,
            [
                "6000", "20", "2.5", "0.25", "0.1", "0.015", "0.005", "0.0025", "0"
            ]
        );
    }
    use crate::metrics::{MetricsConfig, StrategyReport, Summary, Totals};

    fn report(recoveries: &[Option<f64>]) -> Report {
        let summary = |t: Option<f64>| Summary {
            logical_requests: 0,
            succeeded: 0,
            failed: 0,
            in_flight_at_end: 0,
            attempts: 0,
            retries: 0,
            amplification: 0.0,
            peak_attempts_per_s: 0.0,
            peak_load_ratio: None,
            recovery_time_s: t,
            twin_overloaded: false,
            successes_lost: None,
            extra_attempts: None,
            peak_backlog: 0.0,
            latency_p50_s: None,
            latency_p99_s: None,
            latency_mean_s: None,
            wasted_work_fraction: 0.0,
            baseline_goodput_per_s: None,
            slower: None,
            totals: Totals::default(),
        };
        Report {
            scenario: "t".into(),
            seed: 1,
            capacity_per_s: None,
            crash_limit: None,
            outages: vec![(
                SimTime::ZERO + SimDuration::from_secs(20),
                SimTime::ZERO + SimDuration::from_secs(22),
            )],
            metrics: MetricsConfig::default(),
            duration_s: 60.0,
            runs: recoveries
                .iter()
                .map(|&t| StrategyReport {
                    tiers: None,
                    proxies: None,
                    defences: None,
                    cache: None,
                    name: "s".into(),
                    summary: summary(t),
                    buckets: Vec::new(),
                    twin: None,
                    twin_events: 0,
                    aborted: None,
                    replicas: None,
                })
                .collect(),
        }
    }

    #[test]
    fn the_zoom_covers_the_trigger_and_the_last_recovery() {
        assert_eq!(zoom_window(&report(&[Some(0.0)])), Some((17.0, 27.0)));
        assert_eq!(
            zoom_window(&report(&[Some(1.0), Some(6.5)])),
            Some((17.0, 31.5))
        );
        // Never: the zoom stops 15 s after the trigger.
        assert_eq!(zoom_window(&report(&[Some(1.0), None])), Some((17.0, 37.0)));
    }

    #[test]
    fn bucket_values_sit_at_the_bucket_centre() {
        let r = report(&[None]);
        let s = series(&r, [1.0, 2.0].into_iter());
        assert!((s[0].0 - 0.05).abs() < 1e-12 && (s[1].0 - 0.15).abs() < 1e-12);
        assert_eq!((s[0].1, s[1].1), (1.0, 2.0));
    }
}
