//! `sim delays --plot`: the delay before each retry as a box (25th to 75th
//! percentile, median line) with whiskers from the 5th to the 95th percentile
//! and the extremes as dots: the picture that explains jitter.

use plotters::prelude::*;

use super::timechart;
use super::{PlotError, draw_err, render_png, style};
use crate::retry::delays::RetryDelays;

/// Draws the distribution of `delays`; `title` names the backoff.
pub fn render(title: &str, subtitle: &str, delays: &[RetryDelays]) -> Result<Vec<u8>, PlotError> {
    let n = delays.len().max(1) as f64;
    let top =
        timechart::headroom(delays.iter().map(|d| d.quantiles[6]).fold(0.0, f64::max) * 1000.0);
    render_png(style::WIDTH, style::HEIGHT, |root| {
        let body = timechart::title(root, title, subtitle)?;
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(90)
            .build_cartesian_2d(0.4..n + 0.6, 0.0..top)
            .map_err(draw_err)?;
        timechart::house_style(&mut chart.configure_mesh())
            .disable_x_mesh()
            .x_desc("retry")
            .y_desc("delay before the retry (ms)")
            .x_labels(delays.len())
            .draw()
            .map_err(draw_err)?;
        let colour = style::colour(4);
        for d in delays {
            let x = f64::from(d.retry);
            let q = d.quantiles.map(|v| v * 1000.0);
            let w = 0.3;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, q[1]), (x, q[5])],
                    colour.stroke_width(2),
                )))
                .map_err(draw_err)?;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x - w, q[2]), (x + w, q[4])],
                    colour.mix(0.35).filled(),
                )))
                .map_err(draw_err)?;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x - w, q[3]), (x + w, q[3])],
                    BLACK.stroke_width(3),
                )))
                .map_err(draw_err)?;
            chart
                .draw_series([q[0], q[6]].map(|y| Circle::new((x, y), 4, colour.filled())))
                .map_err(draw_err)?;
        }
        Ok(())
    })
}
