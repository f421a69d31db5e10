//! `sim advise --plot`: the settings that reached the search's last round,
//! failed requests against peak load, the front in colour and numbered as
//! in the printed table, the objective's pick ringed, a limit on the peak
//! as a dashed line.

use plotters::prelude::*;

use super::style::{self, FONT, LABEL_SIZE};
use super::{PlotError, draw_err, render_png, timechart};
use crate::advise::{Advice, Metric, Objective};

/// A label's box in pixels: left, top, width, height.
type Boxed = (i32, i32, i32, i32);

/// A label's height, and the width of one of its characters (digits, a
/// comma or a space, at the labels' size), in pixels.
const LABEL_H: i32 = 16;
const CHAR_W: i32 = 9;

fn overlap(a: Boxed, b: Boxed) -> bool {
    a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
}

/// Draws `a`'s finalists; `title` names the scenario.
#[expect(
    clippy::too_many_lines,
    reason = "a chart's layout drawn step by step: axes, points, labels"
)]
pub fn render(title: &str, a: &Advice, objective: &Objective) -> Result<Vec<u8>, PlotError> {
    let point = |i: usize| {
        let s = &a.finalists[i].1;
        (s.get(Metric::PeakLoad), s.get(Metric::Failed))
    };
    let n = a.finalists.len();
    let limit = objective
        .limits
        .iter()
        .find(|(m, _)| *m == Metric::PeakLoad)
        .map(|&(_, v)| v);
    let right = timechart::headroom((0..n).map(|i| point(i).0).chain(limit).fold(0.0, f64::max));
    let top = timechart::headroom((0..n).map(|i| point(i).1).fold(0.0, f64::max));
    // The peaks differ by tenths: the axis starts a little below the least.
    let least = (0..n).map(|i| point(i).0).fold(f64::INFINITY, f64::min);
    let left = if least.is_finite() {
        (least - 0.1).max(0.0)
    } else {
        0.0
    };
    let subtitle = format!(
        "{} finalists, means of 6 worlds; numbered as in the table: not beaten on all four metrics, so some look beaten on these two",
        n
    );
    render_png(style::WIDTH, style::HEIGHT, |root| {
        let body = timechart::title(root, title, &subtitle)?;
        let mut chart = ChartBuilder::on(&body)
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(90)
            .build_cartesian_2d(left..right, 0.0..top)
            .map_err(draw_err)?;
        timechart::house_style(&mut chart.configure_mesh())
            .x_desc("peak load (attempts a second over capacity)")
            .y_desc("failed requests")
            .draw()
            .map_err(draw_err)?;
        if let Some(v) = limit {
            let dashes = (0..40).map(|k| {
                let (y0, y1) = (top * k as f64 / 40.0, top * (k as f64 + 0.5) / 40.0);
                PathElement::new(vec![(v, y0), (v, y1)], BLACK.stroke_width(1))
            });
            chart.draw_series(dashes).map_err(draw_err)?;
            let caption = EmptyElement::at((v, top))
                + Text::new(
                    "limit".to_string(),
                    (-44, 4),
                    (FONT, LABEL_SIZE - 4).into_font().color(&BLACK),
                );
            chart
                .draw_series(std::iter::once(caption))
                .map_err(draw_err)?;
        }
        let grey = RGBColor(0xB0, 0xB0, 0xB0);
        let off: Vec<usize> = (0..n).filter(|i| !a.front.contains(i)).collect();
        chart
            .draw_series(off.iter().map(|&i| Circle::new(point(i), 4, grey.filled())))
            .map_err(draw_err)?;
        let colour = style::colour(0);
        // Settings with the same figures share a point and a label.
        let mut labels: Vec<((f64, f64), Vec<String>)> = Vec::new();
        for (k, &i) in a.front.iter().enumerate() {
            let p = point(i);
            match labels.iter_mut().find(|(q, _)| *q == p) {
                Some((_, names)) => names.push(format!("{}", k + 1)),
                None => labels.push((p, vec![format!("{}", k + 1)])),
            }
            chart
                .draw_series(std::iter::once(Circle::new(p, 6, colour.filled())))
                .map_err(draw_err)?;
            if Some(i) == a.pick {
                chart
                    .draw_series(std::iter::once(Circle::new(p, 12, BLACK.stroke_width(2))))
                    .map_err(draw_err)?;
                let caption = EmptyElement::at(p)
                    + Text::new(
                        "pick".to_string(),
                        (20, -10),
                        (FONT, LABEL_SIZE - 4).into_font().color(&BLACK),
                    );
                chart
                    .draw_series(std::iter::once(caption))
                    .map_err(draw_err)?;
            }
        }
        // Each label beside its point where it overlaps no point, no label
        // placed before it and not the pick's caption: above right, below
        // right, above left or below left, in that order.
        let mut taken: Vec<Boxed> = (0..n)
            .map(|i| {
                let (x, y) = chart.backend_coord(&point(i));
                (x - 6, y - 6, 12, 12)
            })
            .collect();
        if let Some(i) = a.pick {
            let (x, y) = chart.backend_coord(&point(i));
            taken.push((x + 20, y - 10, 36, LABEL_H));
        }
        for (p, names) in labels {
            let text = names.join(", ");
            let (x, y) = chart.backend_coord(&p);
            let w = text.chars().count() as i32 * CHAR_W;
            let places = [(8, -18), (8, 6), (-8 - w, -18), (-8 - w, 6)];
            let at = places
                .iter()
                .copied()
                .find(|&(dx, dy)| {
                    let b = (x + dx, y + dy, w, LABEL_H);
                    !taken.iter().any(|t| overlap(*t, b))
                })
                .unwrap_or(places[0]);
            taken.push((x + at.0, y + at.1, w, LABEL_H));
            let label = EmptyElement::at(p)
                + Text::new(text, at, (FONT, LABEL_SIZE - 4).into_font().color(&BLACK));
            chart
                .draw_series(std::iter::once(label))
                .map_err(draw_err)?;
        }
        Ok(())
    })
}
