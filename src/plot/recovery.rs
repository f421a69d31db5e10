//! `recovery.png`: what the trigger cost each strategy, as three bar panels side
//! by side, one bar per strategy and every bar labelled: the recovery time
//! ("never" in a dark bar across the panel), the successes lost against the same
//! run without the trigger, and the extra attempts the trigger caused.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::timechart;
use super::{PlotError, draw_err, render_png, style};
use crate::metrics::Report;

/// Height of one strategy's bar, pixels.
const BAR: u32 = 30;
/// Width of the strategy names, pixels.
const NAMES: u32 = 230;

/// One panel's bars: a value per strategy (`None`: never recovered).
struct Panel<'a> {
    title: &'a str,
    unit: &'a str,
    values: Vec<Option<f64>>,
    decimals: usize,
}

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let n = report.runs.len().max(1);
    let height = 70 + 40 + BAR * n as u32 + 60;
    let figure = |f: fn(&crate::metrics::Summary) -> Option<i64>| {
        report
            .runs
            .iter()
            .map(|r| f(&r.summary).map(|v| v as f64))
            .collect()
    };
    let panels = [
        Panel {
            title: "recovery time after the trigger",
            unit: " s",
            values: report
                .runs
                .iter()
                .map(|r| r.summary.recovery_time_s)
                .collect(),
            decimals: 1,
        },
        Panel {
            title: "successes lost to the trigger",
            unit: "",
            values: figure(|s| s.successes_lost.map(|v| v as i64)),
            decimals: 0,
        },
        Panel {
            title: "extra attempts caused by it",
            unit: "",
            values: figure(|s| s.extra_attempts),
            decimals: 0,
        },
    ];
    render_png(style::WIDTH, height, |root| {
        let sub = format!(
            "scenario {}, seed {}; against the same run without the trigger, from its start to recovery",
            report.scenario, report.seed
        );
        let body = timechart::title(root, "What the trigger cost each strategy", &sub)?;
        let (names, rest) = body.split_horizontally(NAMES);
        let columns = rest.split_evenly((1, panels.len()));
        draw_names(&names, report)?;
        for (k, (p, area)) in panels.iter().zip(columns.iter()).enumerate() {
            draw_panel(area, p, n, k == 0)?;
        }
        Ok(())
    })
}

/// The strategy names, right-aligned beside their bars: laid out as the
/// panels are (a title strip, then a plot over 0..n above an axis strip), so
/// each name sits on its bar's line.
fn draw_names(area: &DrawingArea<BitMapBackend, Shift>, report: &Report) -> Result<(), PlotError> {
    let n = report.runs.len().max(1);
    let (_, rest) = area.split_vertically(40);
    let mut chart = ChartBuilder::on(&rest)
        .x_label_area_size(40)
        .build_cartesian_2d(0.0..1.0, 0.0..n as f64)
        .map_err(draw_err)?;
    let font = TextStyle::from((style::FONT, style::TICK_SIZE + 1))
        .pos(Pos::new(HPos::Right, VPos::Center));
    for (i, r) in report.runs.iter().enumerate() {
        let y = (n - i) as f64 - 0.5;
        chart
            .draw_series(std::iter::once(Text::new(
                r.name.clone(),
                (0.97, y),
                font.clone(),
            )))
            .map_err(draw_err)?;
    }
    Ok(())
}

fn draw_panel(
    area: &DrawingArea<BitMapBackend, Shift>,
    p: &Panel,
    n: usize,
    is_recovery: bool,
) -> Result<(), PlotError> {
    let finite = p.values.iter().flatten().copied();
    let hi = finite.clone().fold(0.0, f64::max);
    let lo = finite.fold(0.0, f64::min);
    // Room on the right for the labels; a panel of zeros still has an axis.
    let span = (hi - lo).max(if is_recovery { 1.0 } else { 10.0 });
    let (x_lo, x_hi) = (
        lo - 0.05 * span * f64::from(u8::from(lo < 0.0)),
        hi + 0.35 * span,
    );
    let (top, rest) = area.split_vertically(40);
    top.draw_text(
        p.title,
        &TextStyle::from((style::FONT, style::LABEL_SIZE))
            .pos(Pos::new(HPos::Center, VPos::Center)),
        ((area.dim_in_pixel().0 / 2) as i32, 20),
    )
    .map_err(draw_err)?;
    let mut chart = ChartBuilder::on(&rest)
        .margin_right(14)
        .margin_left(6)
        .x_label_area_size(40)
        .y_label_area_size(0)
        .build_cartesian_2d(x_lo..x_hi, 0.0..n as f64)
        .map_err(draw_err)?;
    timechart::house_style(&mut chart.configure_mesh())
        .disable_y_mesh()
        .disable_y_axis()
        .x_labels(5)
        .x_desc(if p.unit.is_empty() {
            "requests"
        } else {
            "seconds"
        })
        .draw()
        .map_err(draw_err)?;
    let label_font =
        TextStyle::from((style::FONT, style::TICK_SIZE)).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, v) in p.values.iter().enumerate() {
        // Strategy 0 at the top.
        let (y0, y1) = ((n - i) as f64 - 0.82, (n - i) as f64 - 0.18);
        let y_mid = (y0 + y1) / 2.0;
        match v {
            Some(v) => {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(0.0, y0), (*v, y1)],
                        style::colour(i).filled(),
                    )))
                    .map_err(draw_err)?;
                let text = format!("{v:.prec$}{}", p.unit, prec = p.decimals);
                let x = v.max(0.0) + 0.01 * (x_hi - x_lo);
                chart
                    .draw_series(std::iter::once(Text::new(
                        text,
                        (x, y_mid),
                        label_font.clone(),
                    )))
                    .map_err(draw_err)?;
            }
            None if is_recovery => {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(0.0, y0), (x_hi, y1)],
                        style::NEVER.filled(),
                    )))
                    .map_err(draw_err)?;
                let white = label_font.clone().color(&WHITE);
                chart
                    .draw_series(std::iter::once(Text::new(
                        "never recovered",
                        (0.02 * (x_hi - x_lo), y_mid),
                        white,
                    )))
                    .map_err(draw_err)?;
            }
            None => {}
        }
    }
    Ok(())
}
