//! PNG charts of a [`Report`], one file per chart. Drawing uses an embedded font
//! (DejaVu Sans) and a pure-Rust rasteriser, and the PNG encoder runs with fixed
//! settings, so the bytes are the same on every machine.

pub mod backlog;
pub mod cache;
pub mod defences;
pub mod delays;
pub mod front;
pub mod goodput;
pub mod load;
pub mod recovery;
pub mod replicas;
pub mod risk;
pub mod style;
pub mod sweep;
pub mod tiers;
mod timechart;
pub mod tip;

use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::metrics::Report;

/// A chart that could not be drawn or encoded.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The drawing backend failed.
    #[error("cannot draw chart: {0}")]
    Draw(String),
    /// The PNG encoder failed.
    #[error("cannot encode PNG: {0}")]
    Encode(#[from] png::EncodingError),
}

/// Maps any drawing error into a [`PlotError`].
pub(crate) fn draw_err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// A chart: its file name and how to draw it.
pub struct Chart {
    /// File name inside the results folder.
    pub file_name: &'static str,
    /// Draws the chart as PNG bytes.
    pub render: fn(&Report) -> Result<Vec<u8>, PlotError>,
}

/// Every chart of a scenario run, in the order they are written: the recovery
/// chart only when the scenario has a trigger to recover from, the replicas'
/// map only for a fleet.
pub fn charts(report: &Report) -> Vec<Chart> {
    let mut charts = vec![
        Chart {
            file_name: "load.png",
            render: load::render,
        },
        Chart {
            file_name: "goodput.png",
            render: goodput::render,
        },
        Chart {
            file_name: "backlog.png",
            render: backlog::render,
        },
    ];
    if !report.outages.is_empty() {
        charts.push(Chart {
            file_name: "recovery.png",
            render: recovery::render,
        });
    }
    if tiers::applies(report) {
        charts.push(Chart {
            file_name: "tiers.png",
            render: tiers::render,
        });
    }
    if defences::applies(report) {
        charts.push(Chart {
            file_name: "defences.png",
            render: defences::render,
        });
    }
    if cache::applies(report) {
        charts.push(Chart {
            file_name: "cache.png",
            render: cache::render,
        });
    }
    if replicas::applies(report) {
        charts.push(Chart {
            file_name: "replicas.png",
            render: replicas::render,
        });
    }
    charts
}

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is compiled in; failing to parse it is a build defect.
        if plotters::style::register_font(style::FONT, FontStyle::Normal, FONT).is_err() {
            unreachable!("the embedded DejaVu Sans font does not parse");
        }
    });
}

/// Draws into a white `width` x `height` RGB canvas and encodes it as PNG.
pub(crate) fn render_png(
    width: u32,
    height: u32,
    draw: impl FnOnce(&DrawingArea<BitMapBackend, Shift>) -> Result<(), PlotError>,
) -> Result<Vec<u8>, PlotError> {
    register_font();
    let mut pixels = vec![255u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
        draw(&root)?;
        root.present().map_err(draw_err)?;
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Balanced);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(out)
}
