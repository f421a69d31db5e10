//! `sim advise`: the retry settings no other beats for a scenario, and the
//! one an objective picks (`crate::advise` searches).

use std::path::Path;
use std::time::Instant;

use anyhow::Result;

use super::{InputError, plural, progress_bar};
use crate::advise::{self, Metric, Objective};
use crate::scenario;

/// `sim advise`.
#[expect(
    clippy::too_many_lines,
    reason = "prints the search's report in the order a reader takes it"
)]
pub(super) fn advise(
    path: &Path,
    objective: &str,
    budget: usize,
    seed: u64,
    quiet: bool,
    plot: Option<&Path>,
) -> Result<()> {
    let objective = Objective::parse(objective).map_err(InputError)?;
    if budget < 10 {
        return Err(
            InputError(format!("--runs {budget}: the search needs 10 runs or more")).into(),
        );
    }
    let s = scenario::load(path)?;
    if let Some(why) = advise::refusal(&s) {
        return Err(InputError(format!("{}: cannot advise on {why}", path.display())).into());
    }
    let started = Instant::now();
    let bar = progress_bar(quiet);
    if let Some(b) = &bar {
        b.set_length(budget as u64);
    }
    let tick = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let a = advise::advise(&s, budget, seed, &objective, &tick);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let worlds = advise::worlds(s.seed);
    let services = advise::services(&s);
    // The time goes to stderr: what stdout says is the same on every run.
    if !quiet {
        eprintln!("searched in {:.1} s", started.elapsed().as_secs_f64());
    }
    say!(
        "{}: {} drawn from the grid, {} made (each with its twin)",
        path.display(),
        plural(a.drawn, "setting", "settings"),
        plural(a.runs, "run", "runs"),
    );
    say!(
        "judged in {} worlds: the outages at 1, 0.5 and 2 times their length, seeds {} and {}; the other settings are strategy \"{}\"'s",
        worlds.len(),
        s.seed,
        s.seed.wrapping_add(1),
        s.strategies[0].name
    );
    if !services.is_empty() {
        say!(
            "a call chain: each setting is the users' and, drawn on its own, that of the calls to each service ({}), shown under it",
            services.join(", ")
        );
    }
    say!(
        "\nNot beaten on all of {} (means over the worlds), {} of {} finalists:",
        Metric::ALL.map(Metric::name).join(", "),
        a.front.len(),
        a.finalists.len()
    );
    say!(
        "  #  {:<19} {:>6} {:>4} {:>2} {:>7} {:<16} {:>9} {:>9} {:>6} {:>8}",
        "backoff",
        "base",
        "cap",
        "r",
        "timeout",
        "budget",
        "failed",
        "lost",
        "peak",
        "p99 s"
    );
    for (n, &i) in a.front.iter().enumerate() {
        let (c, sc) = &a.finalists[i];
        let mark = if Some(i) == a.pick { "*" } else { " " };
        say!(
            "{mark}{:>2}  {} {:>9.1} {:>9.1} {:>6.2} {:>8.3}",
            n + 1,
            c.short(),
            sc.get(Metric::Failed),
            sc.get(Metric::SuccessesLost),
            sc.get(Metric::PeakLoad),
            sc.get(Metric::P99)
        );
        for (service, calls) in services.iter().zip(&c.calls) {
            say!("    {}  calls to {service}", calls.short());
        }
    }
    let limits: Vec<String> = objective
        .limits
        .iter()
        .map(|(m, v)| format!("{} <= {v}", m.name()))
        .collect();
    let wanted = if limits.is_empty() {
        format!("the fewest {}", objective.minimize.name())
    } else {
        format!(
            "the fewest {} with {}",
            objective.minimize.name(),
            limits.join(" and ")
        )
    };
    if let Some(file) = plot {
        let png = crate::plot::front::render(
            &format!("Retry settings searched for {}", s.name),
            &a,
            &objective,
        )?;
        super::write_file(file, &png, "--plot")?;
        say!("wrote {}", file.display());
    }
    match a.pick {
        Some(i) => {
            let n = a.front.iter().position(|&f| f == i).unwrap_or(0) + 1;
            say!("\nFor {wanted}: #{n} (*)");
            if let Some(why) = crate::advise::why_the_pick(&a, &objective) {
                say!("{why}");
            }
            say!("");
            say!("{}", a.finalists[i].0.toml("advised", &services).trim_end());
        }
        None => say!("\nFor {wanted}: no setting on the front keeps every limit"),
    }
    Ok(())
}
