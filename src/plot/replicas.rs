//! `replicas.png`, for a fleet: one map per strategy, time across and the
//! replicas up, each cell shaded by the requests the replica held (queued plus
//! in service, time-averaged), on one scale for every strategy, topped at the
//! crash limit when there is one. A cascade reads as bright rows spreading
//! from one replica to the next, a crashed replica as a dark gap, a replica
//! out of the balancer's rotation (ejected, failing its health checks,
//! starting or scaled away) as a grey one. Large fleets
//! and long runs are drawn in groups of replicas and of buckets (their means),
//! at most [`MAX_ROWS`] by [`MAX_COLUMNS`] cells.

use plotters::prelude::*;

use super::timechart;
use super::{PlotError, draw_err, render_png, style};
use crate::metrics::Report;
use crate::metrics::replicas::ReplicaBucket;

/// Most rows (replica groups) a map draws.
const MAX_ROWS: usize = 100;
/// Most columns (bucket groups) a map draws.
const MAX_COLUMNS: usize = 300;

/// Whether the report has a fleet to draw.
pub fn applies(report: &Report) -> bool {
    report.runs.iter().any(|r| r.replicas.is_some())
}

/// The colour of a cell out of the rotation.
const OUT: RGBColor = RGBColor(205, 205, 205);

/// `series` (replica by replica, `per` buckets each) as a grid of at most
/// [`MAX_ROWS`] x [`MAX_COLUMNS`] group means of (`held`, `in_rotation`):
/// rows, then columns. Rows group `ceil(replicas / MAX_ROWS)` replicas and
/// columns `ceil(per / MAX_COLUMNS)` buckets ([`groups`]).
pub fn grid(series: &[ReplicaBucket], per: usize) -> Vec<Vec<(f64, f64)>> {
    let n = series.len() / per.max(1);
    let (row_group, col_group) = groups(n, per);
    (0..n.div_ceil(row_group))
        .map(|gr| {
            (0..per.div_ceil(col_group))
                .map(|gc| {
                    let (mut held, mut rotation, mut count) = (0.0, 0.0, 0.0);
                    for r in gr * row_group..((gr + 1) * row_group).min(n) {
                        for b in gc * col_group..((gc + 1) * col_group).min(per) {
                            held += series[r * per + b].held;
                            rotation += series[r * per + b].in_rotation;
                            count += 1.0;
                        }
                    }
                    (held / f64::max(count, 1.0), rotation / f64::max(count, 1.0))
                })
                .collect()
        })
        .collect()
}

/// How many replicas a row and buckets a column of [`grid`] hold.
pub fn groups(replicas: usize, per: usize) -> (usize, usize) {
    (
        replicas.div_ceil(MAX_ROWS).max(1),
        per.div_ceil(MAX_COLUMNS).max(1),
    )
}

/// Draws the chart.
#[expect(
    clippy::too_many_lines,
    reason = "a chart's layout drawn step by step: grid, panels, legend"
)]
pub fn render(report: &Report) -> Result<Vec<u8>, PlotError> {
    let runs: Vec<_> = report
        .runs
        .iter()
        .filter_map(|r| r.replicas.as_ref().map(|s| (r, s)))
        .collect();
    let grids: Vec<Vec<Vec<(f64, f64)>>> = runs
        .iter()
        .map(|(r, s)| grid(s, r.buckets.len().max(1)))
        .collect();
    let peak = grids
        .iter()
        .flatten()
        .flatten()
        .map(|c| c.0)
        .fold(0.0, f64::max);
    let any_out = grids.iter().flatten().flatten().any(|c| c.1 < 0.5);
    // One scale for all, topped at the crash limit: brighter than that is a
    // crash coming.
    let top = match report.crash_limit {
        Some(limit) => f64::from(limit).max(1.0),
        None => peak.max(1.0),
    };
    // Each strategy may bring a fleet of its own size.
    let counts: Vec<usize> = runs
        .iter()
        .map(|(r, s)| s.len() / r.buckets.len().max(1))
        .collect();
    let panel_h = 220u32;
    let height = 90 + panel_h * runs.len().max(1) as u32;
    let title = match (counts.iter().min(), counts.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => format!("Requests held by each of the {lo} replicas"),
        _ => "Requests held by each replica".to_string(),
    };
    let sub = format!(
        "{}; dark: none, bright: {} or more{}{}",
        timechart::subtitle(report, ""),
        compact(top),
        if report.crash_limit.is_some() {
            " (the crash limit)"
        } else {
            ""
        },
        if any_out {
            "; grey: out of the rotation"
        } else {
            ""
        }
    );
    render_png(style::WIDTH, height, |root| {
        let body = timechart::title(root, &title, &sub)?;
        let (maps, key) = body.split_horizontally(style::WIDTH - 90);
        scale_key(&key, top)?;
        for ((((run, _), g), area), &replicas) in runs
            .iter()
            .zip(&grids)
            .zip(maps.split_evenly((runs.len().max(1), 1)).iter())
            .zip(&counts)
        {
            let rows = g.len().max(1);
            let cols = g.first().map_or(1, Vec::len).max(1);
            let mut chart = ChartBuilder::on(area)
                .margin(8)
                .caption(
                    if counts.iter().all(|&c| c == replicas) {
                        run.name.clone()
                    } else if g.iter().any(|row| row.first().is_some_and(|c| c.1 < 0.5)) {
                        // Some replicas were not in service at the start: an
                        // autoscaler's room to grow.
                        format!("{}: up to {replicas} replicas", run.name)
                    } else {
                        format!("{}: {replicas} replicas", run.name)
                    },
                    (style::FONT, style::LABEL_SIZE),
                )
                .x_label_area_size(35)
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..report.duration_s, -0.5..replicas as f64 - 0.5)
                .map_err(draw_err)?;
            chart
                .configure_mesh()
                .disable_mesh()
                .x_label_formatter(&|v| format!("{v:.0}"))
                .y_labels(replicas.min(8))
                .y_label_formatter(&|v| {
                    // Whole numbers at the rows' middles; nothing between.
                    if (v - v.round()).abs() < 1e-6 {
                        format!("{v:.0}")
                    } else {
                        String::new()
                    }
                })
                .x_desc("simulated time (s)")
                .y_desc("replica")
                .label_style((style::FONT, style::TICK_SIZE - 2))
                .axis_desc_style((style::FONT, style::TICK_SIZE))
                .draw()
                .map_err(draw_err)?;
            let (cw, rh) = (
                report.duration_s / cols as f64,
                replicas as f64 / rows as f64,
            );
            chart
                .draw_series(g.iter().enumerate().flat_map(|(i, row)| {
                    row.iter().enumerate().map(move |(j, &(held, rotation))| {
                        let (x, y) = (j as f64 * cw, i as f64 * rh - 0.5);
                        let colour = if rotation < 0.5 {
                            OUT.filled()
                        } else {
                            style::viridis(held / top).filled()
                        };
                        Rectangle::new([(x, y), (x + cw, y + rh)], colour)
                    })
                }))
                .map_err(draw_err)?;
            for &(start, end) in &report.outages {
                for t in [start.as_secs_f64(), end.as_secs_f64()] {
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(t, -0.5), (t, replicas as f64 - 0.5)],
                            WHITE.stroke_width(1),
                        )))
                        .map_err(draw_err)?;
                }
            }
        }
        Ok(())
    })
}

/// The colour scale: a vertical ramp from none (bottom) to `top`.
fn scale_key(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    top: f64,
) -> Result<(), PlotError> {
    let (x0, y0, h) = (20i32, 40i32, 200i32);
    let steps = 50;
    for k in 0..steps {
        let t = f64::from(k) / f64::from(steps - 1);
        let y = y0 + h - (h * (k + 1)) / steps;
        area.draw(&Rectangle::new(
            [(x0, y), (x0 + 18, y + h / steps + 1)],
            style::viridis(t).filled(),
        ))
        .map_err(draw_err)?;
    }
    let font = (style::FONT, style::TICK_SIZE - 2).into_text_style(area);
    area.draw_text(&compact(top), &font, (x0 + 22, y0 - 4))
        .map_err(draw_err)?;
    area.draw_text("0", &font, (x0 + 22, y0 + h - 10))
        .map_err(draw_err)?;
    area.draw_text("held", &font, (x0, y0 + h + 8))
        .map_err(draw_err)?;
    Ok(())
}

/// "500", "12.5".
fn compact(v: f64) -> String {
    if v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_fleets_are_drawn_in_groups_of_their_means() {
        let cell = |held| ReplicaBucket {
            held,
            in_rotation: 1.0,
            ..ReplicaBucket::default()
        };
        // 3 replicas of 2 buckets: one cell each.
        let small: Vec<_> = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0].map(cell).to_vec();
        let held = |g: Vec<Vec<(f64, f64)>>| -> Vec<Vec<f64>> {
            g.into_iter()
                .map(|r| r.into_iter().map(|c| c.0).collect())
                .collect()
        };
        assert_eq!(held(grid(&small, 2)), [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
        // 250 replicas of 600 buckets: groups of 3 replicas, 2 buckets.
        let big: Vec<_> = (0..250 * 600).map(|i| cell((i / 600) as f64)).collect();
        let g = grid(&big, 600);
        assert_eq!((g.len(), g[0].len()), (84, 300));
        assert_eq!(g[0][0], (1.0, 1.0)); // replicas 0, 1, 2
        assert_eq!(g[83][0], (249.0, 1.0)); // replica 249 alone
    }
}
