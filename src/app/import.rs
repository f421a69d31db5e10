//! `sim import`: real retry configurations as scenario tables
//! (`crate::import` reads them).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::InputError;
use crate::import::{self, ImportError};

/// What `sim import` is asked to do.
pub(super) struct ImportOptions {
    /// The configuration files.
    pub files: Vec<PathBuf>,
    /// A scenario to add the imported strategies to.
    pub into: Option<PathBuf>,
    /// Where to write; standard output without it.
    pub out: Option<PathBuf>,
    /// Replace `out` if it exists.
    pub force: bool,
    /// The files are the tiers of a call chain, the users' first.
    pub chain: bool,
    /// A call chain `a->b->c` (or a file holding one): each service's
    /// policy picked by name from all that the files hold.
    pub graph: Option<String>,
}

fn bad(e: ImportError) -> anyhow::Error {
    InputError(e.0).into()
}

/// `sim import`.
pub(super) fn import(o: &ImportOptions) -> Result<()> {
    let mut imports = Vec::with_capacity(o.files.len());
    for f in &o.files {
        imports.extend(import::import(f).map_err(bad)?);
    }
    let graph = match &o.graph {
        Some(g) => {
            let names = graph_names(g)?;
            imports = import::pick_tiers(&imports, &names).map_err(bad)?;
            Some(names)
        }
        None => None,
    };
    let chain = o.chain || graph.is_some();
    if chain && o.into.is_none() {
        return Err(InputError(
            "--chain and --graph make a call chain in the scenario given by --into".into(),
        )
        .into());
    }
    if chain && (o.into.is_none() || imports.len() < 2) {
        return Err(InputError(
            "--chain makes a call chain of two files or more, one per tier (the users' first), in the scenario given by --into".into(),
        )
        .into());
    }
    if let Some(out) = &o.out {
        refuse_to_overwrite_an_input(out, o.files.iter().chain(&o.into))?;
    }
    let text = match &o.into {
        None => import::fragment(&imports).map_err(bad)?,
        Some(scenario) => {
            let name = scenario.display().to_string();
            let source = std::fs::read_to_string(scenario)
                .map_err(|e| InputError(format!("{name}: cannot read it: {e}")))?;
            let text = if chain {
                import::chain_into_scenario(&source, &name, &imports, graph.as_deref())
                    .map_err(bad)?
            } else {
                import::into_scenario(&source, &name, &imports).map_err(bad)?
            };
            // What is written must load: check it as the scenario it is.
            // Nothing is written when it does not, so its messages cannot name
            // --out's file: they name the text they quote.
            let shown = PathBuf::from(match &o.out {
                Some(out) => format!("(the scenario for {})", out.display()),
                None => "(the imported scenario)".to_owned(),
            });
            crate::scenario::parse(&text, &shown).map_err(|e| {
                InputError(format!(
                    "the scenario {name} with the imported strategies is not valid, so nothing was written:\n{e}"
                ))
            })?;
            text
        }
    };
    match &o.out {
        None => {
            say!("{}", text.trim_end());
            Ok(())
        }
        Some(out) => write(out, &text, o.force),
    }
}

/// The services of a call chain `a -> b -> c`, given as that text or as a
/// file holding it (`#` starts a comment): the first is the one the users
/// call (the scenario's `[server]`), each next one called by the one before.
pub(super) fn graph_names(g: &str) -> Result<Vec<String>> {
    let (text, source) = if Path::new(g).is_file() {
        let text = std::fs::read_to_string(g)
            .map_err(|e| InputError(format!("{g}: cannot read it: {e}")))?;
        (text, g.to_owned())
    } else {
        (g.to_owned(), "--graph".to_owned())
    };
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    let names: Vec<String> = match lines.as_slice() {
        [one] => one.split("->").map(|n| n.trim().to_owned()).collect(),
        _ => {
            return Err(InputError(format!(
                "{source}: expected one chain such as \"frontend -> ratings -> db\", got {} lines",
                lines.len()
            ))
            .into());
        }
    };
    if names.len() < 2 || names.iter().any(String::is_empty) {
        return Err(InputError(format!(
            "{source}: expected two services or more joined by ->, such as \"frontend -> ratings\", got \"{}\"",
            lines[0]
        ))
        .into());
    }
    Ok(names)
}

/// Refuses an `--out` that is one of the files read: `--force` replaces a
/// file, never the configuration or scenario the import is made from.
fn refuse_to_overwrite_an_input<'a>(
    out: &Path,
    inputs: impl Iterator<Item = &'a PathBuf>,
) -> Result<()> {
    let Ok(target) = out.canonicalize() else {
        return Ok(()); // does not exist yet: it is none of the inputs
    };
    for input in inputs {
        if input.canonicalize().is_ok_and(|p| p == target) {
            return Err(InputError(format!(
                "--out {} is {}, a file this import reads: give another --out",
                out.display(),
                input.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// Writes `text` to `out` whole or not at all; an existing file only with
/// `force`.
fn write(out: &Path, text: &str, force: bool) -> Result<()> {
    if out.exists() && !force {
        return Err(InputError(format!(
            "{} exists: give another --out, or --force to replace it",
            out.display()
        ))
        .into());
    }
    super::write_file(out, text.as_bytes(), "--out")?;
    say!("wrote {}", out.display());
    Ok(())
}
