//! `tip.png`: the tipping boundary of each strategy, against the levels of
//! `[tip.over]` (or side by side without levels): the largest trigger the
//! world recovers from, with the confidence interval of the median search.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::sweep::{legend_column, line, marker};
use super::{PlotError, draw_err, render_png, style, timechart};
use crate::tip::{Status, TipReport};

/// One strategy's boundary at one level: x, the median (or where it lies
/// beyond the range), the interval's ends clipped to the chart.
struct Mark {
    x: f64,
    status: Status,
    median: Option<f64>,
    low: f64,
    high: f64,
}

/// Width of the legend column, pixels.
const LEGEND_WIDTH: u32 = 270;

/// `tip.png`.
#[expect(
    clippy::too_many_lines,
    reason = "a chart's layout drawn step by step: axes, range, series, marks"
)]
pub fn render(r: &TipReport) -> Result<Vec<u8>, PlotError> {
    let tip = &r.tip;
    let names = &tip.strategies;
    let xs: Vec<f64> = match &tip.over {
        Some(axis) => axis.values.iter().map(|v| v.x).collect(),
        None => vec![0.0],
    };
    // Without levels the strategies stand side by side around x = 0; with
    // levels each is moved aside a little, so that marks at one value (two
    // strategies beyond the range) do not hide each other.
    let centre = |k: usize| k as f64 - (names.len() as f64 - 1.0) / 2.0;
    let dodge = match &tip.over {
        Some(_) if xs.len() > 1 => (xs[xs.len() - 1] - xs[0]) * 0.012,
        _ => 0.0,
    };
    let spread = |k: usize| {
        if tip.over.is_some() {
            centre(k) * dodge
        } else {
            centre(k)
        }
    };
    let (lo_y, hi_y) = (tip.from, tip.to);
    let marks: Vec<Vec<Mark>> = (0..names.len())
        .map(|k| {
            r.rows
                .iter()
                .filter(|b| b.strategy == names[k])
                .map(|b| Mark {
                    x: xs[b.level] + spread(k),
                    status: b.status,
                    median: b.median,
                    low: b.low.unwrap_or(lo_y).max(lo_y),
                    high: b.high.unwrap_or(hi_y).min(hi_y),
                })
                .collect()
        })
        .collect();
    let (x_lo, x_hi) = match tip.over {
        Some(_) => (
            xs[0] + spread(0),
            xs[xs.len() - 1] + spread(names.len().saturating_sub(1)),
        ),
        None => (spread(0), spread(names.len().saturating_sub(1))),
    };
    let pad = match tip.over {
        Some(_) if x_hi > x_lo => (x_hi - x_lo) * 0.04,
        Some(_) => x_lo.abs().max(1.0) * 0.1,
        None => 0.5,
    };
    let log = lo_y > 0.0 && hi_y / lo_y >= 20.0;
    let unit = if tip.duration { " (s)" } else { "" };
    let y_desc = format!(
        "largest {} recovered from{unit}{}",
        tip.parameter,
        if log { ", log scale" } else { "" }
    );
    let ratios: Vec<f64> = tip.levels.iter().filter_map(|l| l.load_ratio).collect();
    let x_desc = match &tip.over {
        Some(axis) if ratios.len() == xs.len() && ratios[0] != ratios[ratios.len() - 1] => format!(
            "{} (offered load / capacity from {:.3} to {:.3})",
            axis.column,
            ratios[0],
            ratios[ratios.len() - 1]
        ),
        Some(axis) => axis.column.clone(),
        None => "strategies, side by side".to_string(),
    };
    let title = match &tip.over {
        Some(axis) => format!(
            "Tipping point: the largest {} recovered from, against {}",
            tip.parameter, axis.parameter
        ),
        None => format!(
            "Tipping point: the largest {} recovered from",
            tip.parameter
        ),
    };
    let reps = tip.replications;
    let confidence = r.rows.first().map_or(0.0, |b| b.confidence);
    let sub = format!(
        "scenario {}, seed {}; median of {reps} searches each, bars: its {:.0}% interval; \
         ▲ recovers even from {}, ▼ not even from {}, × overloaded without a trigger",
        r.scenario,
        r.seed,
        confidence * 100.0,
        tip.display(tip.worst()),
        tip.display(tip.mildest()),
    );
    render_png(style::WIDTH, style::HEIGHT, |root| {
        let body = timechart::title(root, &title, &sub)?;
        let (plot_area, legend) = body.split_horizontally(style::WIDTH - LEGEND_WIDTH);
        legend_column(&legend, names, false)?;
        let mut builder = ChartBuilder::on(&plot_area);
        builder
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(90);
        macro_rules! draw_all {
            ($chart:expr) => {{
                let mut chart = $chart;
                timechart::house_style(&mut chart.configure_mesh())
                    .x_desc(x_desc.as_str())
                    .y_desc(y_desc.as_str())
                    .draw()
                    .map_err(draw_err)?;
                // The range searched: nothing is known beyond its ends.
                for (y, what) in [
                    (tip.mildest(), "mildest searched"),
                    (tip.worst(), "worst searched"),
                ] {
                    chart
                        .draw_series(DashedLineSeries::new(
                            [(x_lo - pad, y), (x_hi + pad, y)],
                            4,
                            4,
                            style::REFERENCE_GREY.stroke_width(1),
                        ))
                        .map_err(draw_err)?;
                    chart
                        .draw_series(std::iter::once(Text::new(
                            what.to_string(),
                            (x_lo - pad, y),
                            TextStyle::from((style::FONT, style::TICK_SIZE))
                                .pos(Pos::new(HPos::Left, VPos::Bottom)),
                        )))
                        .map_err(draw_err)?;
                }
                for (i, ms) in marks.iter().enumerate() {
                    let colour = style::colour(i);
                    // Lines join the boundaries found; a level beyond either
                    // end is not a value the boundary moves towards.
                    for run in ms.split(|m| m.median.is_none()) {
                        line(
                            &mut chart,
                            i,
                            run.iter()
                                .filter_map(|m| m.median.map(|v| (m.x, v)))
                                .collect(),
                        )?;
                    }
                    for m in ms {
                        if m.status != Status::Overloaded {
                            chart
                                .draw_series(std::iter::once(PathElement::new(
                                    vec![(m.x, m.low), (m.x, m.high)],
                                    colour.stroke_width(2),
                                )))
                                .map_err(draw_err)?;
                        }
                        let (worst_y, mild_y) = (tip.worst(), tip.mildest());
                        let (at, glyph) = match (m.status, m.median) {
                            (Status::Found, Some(v)) => {
                                marker(&mut chart, i, (m.x, v), colour)?;
                                continue;
                            }
                            (Status::Beyond, _) => (worst_y, "▲"),
                            (Status::Below, _) => (mild_y, "▼"),
                            _ => (mild_y, "×"),
                        };
                        chart
                            .draw_series(std::iter::once(Text::new(
                                glyph.to_string(),
                                (m.x, at),
                                TextStyle::from((style::FONT, style::LABEL_SIZE + 4))
                                    .color(&colour)
                                    .pos(Pos::new(HPos::Center, VPos::Center)),
                            )))
                            .map_err(draw_err)?;
                    }
                }
            }};
        }
        let x_range = (x_lo - pad)..(x_hi + pad);
        if log {
            draw_all!(
                builder
                    .build_cartesian_2d(x_range, (lo_y * 0.8..hi_y * 1.25).log_scale())
                    .map_err(draw_err)?
            );
        } else {
            let span = hi_y - lo_y;
            draw_all!(
                builder
                    .build_cartesian_2d(x_range, (lo_y - span * 0.05)..(hi_y + span * 0.08))
                    .map_err(draw_err)?
            );
        }
        Ok(())
    })
}
