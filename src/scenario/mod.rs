//! Scenario files: TOML in, a validated [`Scenario`] out. Every input error is
//! raised here, as a [`ScenarioError`] naming the file, the key and the line.

pub mod duration;
pub mod error;
pub mod keys;
mod limits;
pub mod locate;
pub mod presets;
pub mod risk;
pub mod schema;
mod schema_defences;
mod schema_fleet;
mod schema_outages;
mod schema_search;
mod strategy;
pub mod sweep;
pub mod tip;
pub mod validate;
pub mod wording;

use std::path::Path;

pub use error::ScenarioError;
pub use sweep::{Axis, AxisValue, Point, Sweep};

use crate::metrics::MetricsConfig;
use crate::model::{Load, ServerModel, WorldConfig};
use crate::retry::Strategy;

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Name of the results folder.
    pub name: String,
    /// What the scenario shows.
    pub description: String,
    /// Seed of every random draw.
    pub seed: u64,
    /// The world every strategy runs in.
    pub world: WorldConfig,
    /// How runs are measured.
    pub metrics: MetricsConfig,
    /// The strategies to compare, in file order.
    pub strategies: Vec<Strategy>,
    /// The sweep, if the scenario is one.
    pub sweep: Option<Sweep>,
    /// The tipping-point search, if the scenario is one.
    pub tip: Option<tip::Tip>,
    /// Triggers at random and the chance they tip the world, if the
    /// scenario asks.
    pub risk: Option<risk::Risk>,
    /// Per strategy (same order): what of the world its `[[strategy]]` table
    /// replaces with its own `clients` or `server` table.
    pub overrides: Vec<WorldOverride>,
    /// The sample files it read (as the scenario names them), each with
    /// the checksum of its bytes: inputs as much as its text.
    pub inputs: Vec<(String, String)>,
}

/// The parts of the world one strategy brings its own of.
#[derive(Clone, Debug, Default)]
pub struct WorldOverride {
    /// Its own bad fraction, proxies and load.
    pub load: Option<(f64, crate::model::Proxies, Load)>,
    /// Its own server.
    pub server: Option<ServerModel>,
    /// Its own look-aside cache (the scenario has one).
    pub cache: Option<crate::model::cache::CacheConfig>,
}

impl Scenario {
    /// What identifies this scenario's inputs: the checksum of its `text`,
    /// and of the sample files it read, if any.
    pub fn fingerprint(&self, text: &str) -> String {
        let mut all = text.to_owned();
        for (name, sum) in &self.inputs {
            all.push_str(&format!("\n# sample file {name}: {sum}"));
        }
        crate::output::checksum(all.as_bytes())
    }

    /// The world strategy `i` runs in.
    pub fn world_for(&self, i: usize) -> std::borrow::Cow<'_, WorldConfig> {
        match self.overrides.get(i) {
            Some(o) if o.load.is_some() || o.server.is_some() || o.cache.is_some() => {
                let mut w = self.world.clone();
                if let Some((bad_fraction, proxies, load)) = &o.load {
                    w.load = load.clone();
                    w.bad_fraction = *bad_fraction;
                    w.proxies = *proxies;
                }
                if let Some(server) = &o.server {
                    w.server = server.clone();
                }
                if o.cache.is_some() {
                    w.cache = o.cache;
                }
                std::borrow::Cow::Owned(w)
            }
            _ => std::borrow::Cow::Borrowed(&self.world),
        }
    }
}

/// The strategy preset `p` makes on its own: its table over the built-in
/// defaults (an attempt timeout of 1 s, no breaker, no throttle).
pub fn preset_strategy(p: &presets::Preset) -> Result<Strategy, ScenarioError> {
    let file = Path::new(p.name);
    validate::Checker::new(file, "").preset_strategy(p)
}

/// Reads and validates the scenario at `path`.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let bytes = std::fs::read(path).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            "; the scenarios shipped with retry-storm are in scenarios/"
        } else {
            ""
        };
        ScenarioError::file(path, format!("cannot read the scenario file: {e}{hint}"))
    })?;
    let src = match String::from_utf8(bytes) {
        Ok(src) => src,
        Err(e) => {
            // Name the line and column of the first byte that is not UTF-8.
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
            let start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let column = String::from_utf8_lossy(&good[start..]).chars().count() + 1;
            return Err(ScenarioError::file(
                path,
                format!(
                    "line {line}, column {column}: the file is not UTF-8 text (TOML files must be); \
                     save it as UTF-8"
                ),
            ));
        }
    };
    parse_file(&src, path)
}

/// What a file that is not TOML looks like instead, from its name or its
/// first line that says anything: YAML or JSON, the formats `sim import`
/// reads.
fn foreign_format(src: &str, path: &Path) -> Option<&'static str> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext.to_ascii_lowercase().as_str() {
        "yaml" | "yml" => return Some("YAML"),
        "json" => return Some("JSON"),
        _ => {}
    }
    let first = src
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))?;
    if first.starts_with('{') || first.starts_with("[{") {
        Some("JSON")
    } else if first == "---"
        || first.starts_with("- ")
        || (first.contains(": ") || first.ends_with(':')) && !first.contains('=')
    {
        Some("YAML")
    } else {
        None
    }
}

/// Validates scenario text `src`; `path` is only used in messages and for the
/// default name. A sample file the scenario names is refused: this text may
/// not come from the disk (the playground's come from a browser).
pub fn parse(src: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    parse_text(src, path, false)
}

/// [`parse`] for the text of the scenario file at `path`, reading the
/// sample files it names from beside it.
pub fn parse_file(src: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    parse_text(src, path, true)
}

fn parse_text(src: &str, path: &Path, read_files: bool) -> Result<Scenario, ScenarioError> {
    // Syntax first: a syntax error has a position but no key to blame.
    if let Err(e) = toml::de::DeTable::parse(src) {
        let mut message = e.message().trim_end().to_owned();
        if let Some(what) = foreign_format(src, path) {
            message.push_str(&format!(
                "; this looks like {what}, and a scenario is TOML: to use a gRPC service config, \
                 Envoy or Istio YAML, run `sim import FILE --into SCENARIO`, which writes its \
                 retry settings into a scenario"
            ));
        }
        let mut err = ScenarioError::at_offset(path, src, e.span().map(|s| s.start), &message);
        err.key = None;
        return Err(err);
    }
    let file: schema::ScenarioFile = toml::from_str(src).map_err(|e| {
        // An error about the whole document (a missing top-level table) comes
        // with an empty span or one over everything: no useful position.
        let offset = e
            .span()
            .filter(|s| !(s.start == 0 && (s.end == 0 || s.end >= src.len())))
            .map(|s| s.start);
        let mut err = ScenarioError::at_offset(path, src, offset, e.message().trim_end());
        err.message = wording::humanize(&err.message, err.key.as_deref());
        err
    })?;
    let checker = if read_files {
        validate::Checker::reading_files(path, src)
    } else {
        validate::Checker::new(path, src)
    };
    checker.scenario(file)
}

/// Where a Retry-After replaces a strategy's backoff in this scenario: a note
/// per strategy that honours a Retry-After the world sends (a `503` outage's
/// `retry_after`, or the server's `shed_retry_after`), so that a comparison of
/// backoffs under it does not silently compare the same delays.
pub fn retry_after_notes(s: &Scenario) -> Vec<String> {
    let mut notes = Vec::new();
    for (i, st) in s.strategies.iter().enumerate() {
        let world = s.world_for(i);
        let mut sent: Vec<(String, crate::engine::SimDuration)> = world
            .outages
            .iter()
            .enumerate()
            .filter_map(|(k, o)| match o.kind {
                crate::model::OutageKind::Unavailable {
                    retry_after: Some(ra),
                } => Some((format!("outage[{k}]'s 503s"), ra)),
                _ => None,
            })
            .collect();
        if let crate::model::ServerModel::Capacity(c) = &world.server {
            if let Some(ra) = c.shed.and_then(|sh| sh.retry_after) {
                sent.push(("the server's 429s (shedding)".to_string(), ra));
            }
        }
        for (what, ra) in sent {
            let used = st.policy.retry_after_use(ra);
            if used == crate::retry::RetryAfterUse::Ignored {
                continue;
            }
            notes.push(format!(
                "strategy \"{}\": after {what} (Retry-After: {ra}) the Retry-After {}{}",
                st.name,
                used.words(),
                if used.replaces_backoff() {
                    " (use_retry_after = true, the default; set it to false to compare \
                     backoffs there)"
                } else {
                    ""
                }
            ));
        }
    }
    notes
}
