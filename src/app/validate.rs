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
    if let Some(t) = &s.tip {
        let over = t.over.as_ref().map_or(String::new(), |a| {
            format!(" at {} values of {}", a.values.len(), a.parameter)
        });
        say!(
            "  tipping-point search of {} from {} to {} (to within {}){over}: {} searches, \
             each run {} long",
            t.parameter,
            t.display(t.from),
            t.display(t.to),
            t.display(t.resolution),
            t.searches(),
            t.levels
                .iter()
                .map(|l| l.duration)
                .max()
                .unwrap_or(s.world.duration)
        );
    }
    Ok(())
}
