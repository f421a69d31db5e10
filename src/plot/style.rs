//! Colours, sizes and fonts of every chart, in one place.

use plotters::style::RGBColor;

/// Font family name under which the embedded font is registered.
pub const FONT: &str = "sans-serif";
/// Chart width, pixels.
pub const WIDTH: u32 = 1200;
/// Height of a single-panel chart, pixels.
pub const HEIGHT: u32 = 700;
/// Height of one panel of a small-multiples chart, pixels.
pub const PANEL_HEIGHT: u32 = 230;
/// Title font size.
pub const TITLE_SIZE: u32 = 26;
/// Axis label font size.
pub const LABEL_SIZE: u32 = 18;
/// Tick label font size.
pub const TICK_SIZE: u32 = 15;

/// The Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2008), which
/// stays distinguishable under the common colour-vision deficiencies. Black is
/// kept for reference lines.
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xF0, 0xE4, 0x42), // yellow
];

/// Reference lines (capacity, baseline).
pub const REFERENCE: RGBColor = RGBColor(0, 0, 0);
/// Secondary lines (retries under attempts).
pub const REFERENCE_GREY: RGBColor = RGBColor(0x66, 0x66, 0x66);
/// Shading of trigger (outage) windows.
pub const OUTAGE_SHADE: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
/// The recovery marker (a dotted vertical line).
pub const RECOVERY: RGBColor = RGBColor(0x22, 0x22, 0x22);
/// Bars of runs that never recovered: dark, unlike any palette colour and
/// unlike the light grey of trigger shading.
pub const NEVER: RGBColor = RGBColor(0x4D, 0x4D, 0x4D);

/// The colour of series `i`.
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The line pattern of series `i` where lines share a chart: solid for the
/// first seven (one per colour), then dashed, then dotted, so up to 21 series
/// differ in colour or pattern. `None` is solid; `Some((dash, gap))` in pixels.
pub fn pattern(i: usize) -> Option<(u32, u32)> {
    match (i / PALETTE.len()) % 3 {
        0 => None,
        1 => Some((10, 6)),
        _ => Some((3, 4)),
    }
}

/// The marker of series `i` where lines share a chart: circle, triangle or
/// square in turn, so that two series with the same values (one line drawn
/// over the other) still show both markers.
pub fn marker(i: usize) -> usize {
    i % 3
}

/// Viridis (van der Walt and Smith, matplotlib 2.0), at five stops: perceptually
/// uniform and readable in grey and under colour-vision deficiencies.
const VIRIDIS: [(u8, u8, u8); 5] = [
    (0x44, 0x01, 0x54),
    (0x3B, 0x52, 0x8B),
    (0x21, 0x91, 0x8C),
    (0x5E, 0xC9, 0x62),
    (0xFD, 0xE7, 0x25),
];

/// The colour at `t` in [0, 1] of the map.
pub fn viridis(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (t.floor() as usize).min(VIRIDIS.len() - 2);
    let u = t - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * u).round() as u8;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_one_series_are_all_different() {
        let looks: std::collections::BTreeSet<_> = (0..21)
            .map(|i| {
                let c = colour(i);
                ((c.0, c.1, c.2), pattern(i), marker(i))
            })
            .collect();
        assert_eq!(looks.len(), 21);
    }
}
