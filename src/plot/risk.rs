//! `risk.png`: for each strategy, the chance that a trigger's walk climbs
//! to each level of requests in progress before it recovers, the last
//! level being "tipped": splitting's estimate with its interval, and brute
//! force's where it ran, on a logarithmic axis (the chances fall by
//! orders of magnitude).

use plotters::coord::CoordTranslate;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::sweep::{legend_column, line, marker};
use super::{PlotError, draw_err, render_png, style, timechart};
use crate::risk::Estimate;
use crate::scenario::risk::Risk;

/// Width of the legend column, pixels.
const LEGEND_WIDTH: u32 = 270;

/// `risk.png`.
pub fn render(scenario: &str, r: &Risk, estimates: &[Estimate]) -> Result<Vec<u8>, PlotError> {
    let names: Vec<String> = estimates
        .iter()
        .map(|e| {
            if e.leaves_the_top() {
                format!("{} (recovers)", e.strategy)
            } else {
                e.strategy.clone()
            }
        })
        .collect();
    let least = least_shown(estimates);
    // The chances span many decades, more than plotters' logarithmic axis
    // labels: the axis is their logarithm, labelled as powers of ten.
    let y_lo = least.log10().floor();
    let y_hi = 0.3;
    let ly = |p: f64| p.log10().max(y_lo);
    let x_lo = estimates.iter().map(|e| e.calm).min().unwrap_or(0) as f64;
    let x_hi = r.tipped as f64;
    let pad = (x_hi - x_lo) * 0.03;
    let sub = subtitle(scenario, r, estimates);
    render_png(style::WIDTH, style::HEIGHT, |root| {
        let body = header(
            root,
            "How far a random trigger pushes the world: the chance of reaching each level",
            &sub,
        )?;
        let (plot_area, legend) = body.split_horizontally(style::WIDTH - LEGEND_WIDTH);
        legend_column(&legend, &names, false)?;
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(90)
            .build_cartesian_2d((x_lo - pad)..(x_hi + pad), y_lo..y_hi)
            .map_err(draw_err)?;
        timechart::house_style(&mut chart.configure_mesh())
            .x_desc(format!(
                "{} (back to normal at {} or under; tipped at {})",
                r.watch.noun(),
                estimates.iter().map(|e| e.calm).max().unwrap_or(0),
                r.tipped
            ))
            .y_desc("chance a trigger's walk gets there, log scale")
            .y_labels(((y_hi - y_lo).ceil() as usize + 1).min(40))
            .y_label_formatter(&|v| format!("1e{}", v.round()))
            .draw()
            .map_err(draw_err)?;
        chart
            .draw_series(DashedLineSeries::new(
                [(x_hi, y_lo), (x_hi, y_hi)],
                4,
                4,
                style::REFERENCE_GREY.stroke_width(1),
            ))
            .map_err(draw_err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                "tipped".to_string(),
                (x_hi, 0.15),
                TextStyle::from((style::FONT, style::TICK_SIZE))
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            )))
            .map_err(draw_err)?;
        for (k, e) in estimates.iter().enumerate() {
            draw_estimate(&mut chart, k, e, &ly, pad * 0.4)?;
        }
        Ok(())
    })
}

/// The title and a two-line subtitle; the area below them.
fn header<'a>(
    root: &DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>,
    title: &str,
    sub: &[String; 2],
) -> Result<DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>, PlotError> {
    let (top, body) = root.split_vertically(88);
    let centre = (style::WIDTH / 2) as i32;
    top.draw_text(
        title,
        &TextStyle::from((style::FONT, style::TITLE_SIZE)).pos(Pos::new(HPos::Center, VPos::Top)),
        (centre, 10),
    )
    .map_err(draw_err)?;
    let sub_style = TextStyle::from((style::FONT, style::LABEL_SIZE - 2))
        .color(&RGBColor(0x55, 0x55, 0x55))
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (i, line) in sub.iter().enumerate() {
        top.draw_text(line, &sub_style, (centre, 42 + 21 * i as i32))
            .map_err(draw_err)?;
    }
    Ok(body)
}

/// The smallest chance shown: the least positive estimate or interval end,
/// brute force's included.
fn least_shown(estimates: &[Estimate]) -> f64 {
    let mut least = 1.0f64;
    let mut consider = |p: f64| {
        if p > 0.0 && p.is_finite() {
            least = least.min(p);
        }
    };
    for e in estimates {
        for i in &e.reach {
            consider(i.mean);
            consider(i.low);
        }
        if let Some(b) = &e.brute {
            for i in 0..b.reached.len() {
                let w = b.reach(i);
                consider(w.mean);
                consider(w.high);
            }
        }
    }
    least
}

/// The chart's two lines under its title: the question, and how to read it.
fn subtitle(scenario: &str, r: &Risk, estimates: &[Estimate]) -> [String; 2] {
    let brute = estimates
        .iter()
        .find_map(|e| e.brute.as_ref())
        .map(|b| b.trials);
    [
        format!(
            "scenario {scenario}: {} triggers a day, {} at random, {}; tipped at {} {}",
            r.per_day,
            r.trigger,
            r.size.describe(),
            r.tipped,
            r.watch.noun()
        ),
        format!(
            "lines: splitting, mean of {} estimates (bars: 95%){}{}",
            r.repeats,
            brute.map_or(String::new(), |n| format!(
                "; ○: brute force, {n} walks (Wilson 95%), where any got there"
            )),
            if estimates.iter().any(Estimate::leaves_the_top) {
                "; (recovers): gets back from the top"
            } else {
                ""
            }
        ),
    ]
}

/// One strategy's estimate: splitting's line, markers and bars, and brute
/// force's circles `dx` to the right (so the two do not hide each other),
/// on an axis of `ly` (the chance's logarithm).
fn draw_estimate<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    k: usize,
    e: &Estimate,
    ly: &dyn Fn(f64) -> f64,
    dx: f64,
) -> Result<(), PlotError> {
    let colour = style::colour(k);
    let pts: Vec<(f64, f64)> = e
        .levels
        .iter()
        .zip(&e.reach)
        .filter(|(_, i)| i.mean > 0.0)
        .map(|(&l, i)| (l as f64, ly(i.mean)))
        .collect();
    line(chart, k, pts.clone())?;
    for (&l, i) in e.levels.iter().zip(&e.reach) {
        if i.mean > 0.0 {
            // An interval down to zero runs off the logarithmic
            // axis: drawn thin, to the axis's foot.
            let width = if i.low > 0.0 { 2 } else { 1 };
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(l as f64, ly(i.low)), (l as f64, ly(i.high))],
                    colour.stroke_width(width),
                )))
                .map_err(draw_err)?;
        }
    }
    for p in pts {
        marker(chart, k, p, colour)?;
    }
    if let Some(b) = &e.brute {
        for (i, &l) in e.levels.iter().enumerate() {
            let w = b.reach(i);
            if b.reached[i] == 0 {
                continue;
            }
            let x = l as f64 + dx;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, ly(w.low)), (x, ly(w.high))],
                    colour.mix(0.6).stroke_width(1),
                )))
                .map_err(draw_err)?;
            chart
                .draw_series(std::iter::once(Circle::new(
                    (x, ly(w.mean)),
                    5,
                    colour.stroke_width(2),
                )))
                .map_err(draw_err)?;
        }
    }
    Ok(())
}
