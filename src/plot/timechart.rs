//! The shared shape of the time-series charts: time on x, outages shaded, lines
//! per strategy and optional dashed reference lines.

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;

use super::style::{self, FONT, LABEL_SIZE, TICK_SIZE};
use super::{PlotError, draw_err};
use crate::metrics::Report;

/// One line.
pub struct Line<'a> {
    /// Legend text.
    pub label: &'a str,
    /// Colour.
    pub colour: RGBColor,
    /// (t seconds, value) points.
    pub points: Vec<(f64, f64)>,
}

/// A horizontal dashed reference line.
pub struct Reference {
    /// Legend text.
    pub label: String,
    /// Height.
    pub value: f64,
}

/// What one time panel shows.
pub struct Panel<'a> {
    /// Caption above the panel (empty for none).
    pub caption: &'a str,
    /// y-axis label, with units.
    pub y_label: &'a str,
    /// Top of the y axis.
    pub y_max: f64,
    /// The lines.
    pub lines: Vec<Line<'a>>,
    /// Reference lines.
    pub references: Vec<Reference>,
    /// Whether to draw the x-axis label.
    pub x_label: bool,
}

/// The points of per-bucket values `v` at each bucket's start time.
pub fn series(report: &Report, v: impl Iterator<Item = f64>) -> Vec<(f64, f64)> {
    let w = report.metrics.bucket.as_secs_f64();
    v.enumerate().map(|(i, y)| (i as f64 * w, y)).collect()
}

/// One line per strategy, in the palette's order, of the per-bucket values
/// `values` computes from the strategy's buckets.
pub fn line_per_strategy<'a>(
    report: &'a Report,
    values: impl Fn(&[crate::metrics::Bucket]) -> Vec<f64>,
) -> Vec<Line<'a>> {
    report
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| Line {
            label: &r.name,
            colour: style::colour(i),
            points: series(report, values(&r.buckets).into_iter()),
        })
        .collect()
}

/// A tick label without needless decimals: "6000", "20", "2.5", "0.25".
pub fn tick(v: f64) -> String {
    if v == v.round() || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
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
    mesh.light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
        .x_label_formatter(&tick_label)
        .y_label_formatter(&tick_label)
        .label_style((FONT, TICK_SIZE))
        .axis_desc_style((FONT, LABEL_SIZE))
}

/// A y-axis top with some room above `max`.
pub fn headroom(max: f64) -> f64 {
    if max > 0.0 { max * 1.08 } else { 1.0 }
}

/// Draws `panel` into `area`.
pub fn draw(
    area: &DrawingArea<BitMapBackend, Shift>,
    report: &Report,
    panel: Panel,
) -> Result<(), PlotError> {
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(12)
        .x_label_area_size(if panel.x_label { 45 } else { 28 })
        .y_label_area_size(80);
    if !panel.caption.is_empty() {
        builder.caption(panel.caption, (FONT, LABEL_SIZE + 2));
    }
    let mut chart = builder
        .build_cartesian_2d(0.0..report.duration_s, 0.0..panel.y_max)
        .map_err(draw_err)?;
    let mut mesh = chart.configure_mesh();
    house_style(&mut mesh).y_desc(panel.y_label);
    if panel.x_label {
        mesh.x_desc("simulated time (s)");
    }
    mesh.draw().map_err(draw_err)?;

    for &(start, end) in &report.outages {
        let rect = [(start.as_secs_f64(), 0.0), (end.as_secs_f64(), panel.y_max)];
        chart
            .draw_series(std::iter::once(Rectangle::new(
                rect,
                style::OUTAGE_SHADE.filled(),
            )))
            .map_err(draw_err)?;
    }
    for line in &panel.lines {
        let colour = line.colour;
        chart
            .draw_series(LineSeries::new(
                line.points.iter().copied(),
                colour.stroke_width(2),
            ))
            .map_err(draw_err)?
            .label(line.label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
            });
    }
    for r in &panel.references {
        let pts = [(0.0, r.value), (report.duration_s, r.value)];
        chart
            .draw_series(DashedLineSeries::new(
                pts,
                8,
                6,
                style::REFERENCE.stroke_width(1),
            ))
            .map_err(draw_err)?
            .label(r.label.as_str())
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], style::REFERENCE.stroke_width(1))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(0xAA, 0xAA, 0xAA))
        .label_font((FONT, TICK_SIZE))
        .draw()
        .map_err(draw_err)?;
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
        TextStyle::from((FONT, style::TITLE_SIZE)).pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ));
    top.draw_text(title, &title_style, (centre, 10))
        .map_err(draw_err)?;
    let sub_style = TextStyle::from((FONT, LABEL_SIZE - 2))
        .color(&RGBColor(0x55, 0x55, 0x55))
        .pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ));
    top.draw_text(subtitle, &sub_style, (centre, 42))
        .map_err(draw_err)?;
    Ok(body)
}

/// The subtitle every chart carries: scenario, seed, bucket width.
pub fn subtitle(report: &Report, extra: &str) -> String {
    format!(
        "scenario {}, seed {}, {} buckets; outages shaded grey{extra}",
        report.scenario, report.seed, report.metrics.bucket
    )
}
