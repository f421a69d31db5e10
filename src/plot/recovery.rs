//! `recovery.png`: recovery time per strategy, as bars; "never" where goodput did
//! not come back within the run.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::timechart;
use super::{PlotError, draw_err, render_png, style};
use crate::metrics::Report;

/// Draws the chart.
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let n = report.runs.len();
    let times: Vec<Option<f64>> = report
        .runs
        .iter()
        .map(|r| r.summary.recovery_time_s)
        .collect();
    let longest = times.iter().flatten().copied().fold(0.0, f64::max);
    let y_max = timechart::headroom(longest.max(1.0));
    render_png(style::WIDTH, style::HEIGHT, |root| {
        let rule = format!(
            "; recovered: goodput over {} windows >= {:.0}% of the pre-outage level to the end",
            report.metrics.smoothing,
            report.metrics.recovery_fraction * 100.0
        );
        let body = timechart::title(
            root,
            "Recovery time after the last outage",
            &timechart::subtitle(report, &rule),
        )?;
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d((0..(n as i32 - 1).max(0)).into_segmented(), 0.0..y_max)
            .map_err(draw_err)?;
        let names: Vec<&str> = report.runs.iter().map(|r| r.name.as_str()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
            .y_desc("seconds after the outage ended")
            .y_label_formatter(&|v| timechart::tick(*v))
            .x_desc("strategy")
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => names
                    .get(*i as usize)
                    .map_or(String::new(), |s| s.to_string()),
                _ => String::new(),
            })
            .label_style((style::FONT, style::TICK_SIZE + 1))
            .axis_desc_style((style::FONT, style::LABEL_SIZE))
            .draw()
            .map_err(draw_err)?;
        for (i, t) in times.iter().enumerate() {
            let i = i as i32;
            let top = t.unwrap_or(y_max);
            let fill = if t.is_some() {
                style::colour(i as usize).filled()
            } else {
                style::OUTAGE_SHADE.filled()
            };
            let bar = Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), top),
                ],
                fill,
            );
            chart.draw_series(std::iter::once(bar)).map_err(draw_err)?;
            let label = match t {
                Some(t) => format!("{t:.1} s"),
                None if report.outages.is_empty() => "no outage".to_string(),
                None => "never recovered".to_string(),
            };
            let anchor = Pos::new(HPos::Center, VPos::Bottom);
            let text_y = if t.is_some() { top } else { y_max * 0.5 };
            let text = Text::new(
                label,
                (SegmentValue::CenterOf(i), text_y),
                TextStyle::from((style::FONT, style::LABEL_SIZE)).pos(anchor),
            );
            chart.draw_series(std::iter::once(text)).map_err(draw_err)?;
        }
        Ok(())
    })
}
