//! `sim validate`: a scenario checked without running it.

use std::path::Path;

use anyhow::Result;

use super::plural;
use crate::scenario;

/// `sim validate`.
pub(super) fn validate(path: &Path) -> Result<()> {
    let s = scenario::load(path)?;
    say!(
        "{}: ok: scenario \"{}\", {}, {}, {} simulated",
        path.display(),
        s.name,
        plural(s.strategies.len(), "strategy", "strategies"),
        plural(s.world.outages.len(), "outage", "outages"),
        s.world.duration
    );
    for note in scenario::retry_after_notes(&s) {
        say!("  note: {note}");
    }
    if let Some(sw) = &s.sweep {
        let axes: Vec<String> = sw
            .axes
            .iter()
            .map(|a| format!("{} ({} values)", a.parameter, a.values.len()))
            .collect();
        say!(
            "  sweep of {}: {} points, {} replications, {} runs",
            axes.join(" by "),
            sw.points.len(),
            sw.replications,
            sw.runs()
        );
    }
    Ok(())
}
