//! `sim run` of a scenario with a `[risk]`: the chance that a trigger at
//! random tips the world, each strategy's, by multilevel splitting (and
//! brute force if asked), its files and its table.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};

use super::{InputError, progress_bar_of};
use crate::export::risk_csv;
use crate::output::write_atomic;
use crate::plot;
use crate::risk::{self, Estimate, Interval};
use crate::scenario::risk::Risk;

/// `sim run` of a scenario with a `[risk]`.
pub(super) fn run_risk(job: &super::run::Job, r: &Risk, out: &Path) -> Result<()> {
    let (opts, s) = (job.opts, job.scenario());
    if !opts.quiet {
        say!("{}", describe(r));
    }
    let simulated = Instant::now();
    let bar = progress_bar_of(opts.quiet, "estimates");
    let progress = |done: usize, total: usize| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    };
    let estimates = risk::estimate(s, r, &progress);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let estimates = estimates.map_err(|e| {
        InputError(format!(
            "{}: strategy \"{}\": {}",
            opts.scenario.display(),
            s.strategies[e.strategy].name,
            e.message
        ))
    })?;
    let sim_wall = simulated.elapsed();
    write_atomic(out, "risk.csv", &risk_csv::summary(r, &estimates)?)?;
    write_atomic(out, "risk-levels.csv", &risk_csv::levels(&estimates)?)?;
    if opts.plots {
        let bytes = plot::risk::render(&s.name, r, &estimates).context("cannot draw risk.png")?;
        write_atomic(out, "risk.png", &bytes)?;
    }
    if !opts.quiet {
        say!(
            "\nscenario {} ({}), seed {}",
            s.name,
            opts.scenario.display(),
            s.seed
        );
        print_risk(r, &estimates);
        say!(
            "\nsimulated in {:.3} s; total wall time {:.3} s",
            sim_wall.as_secs_f64(),
            job.started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// What the estimate will do, before it starts.
fn describe(r: &Risk) -> String {
    let unit = if r.duration { ", in seconds" } else { "" };
    let brute = if r.brute > 0 {
        format!(", and {} brute-force walks to check it", r.brute)
    } else {
        String::new()
    };
    format!(
        "rare-event estimate: {} triggers a day, each with {} at random, {}{unit}; \
         tipped at {} {}; {} walks a level by multilevel splitting, {} independent \
         estimates{brute}",
        r.per_day,
        r.trigger,
        r.size.describe(),
        r.tipped,
        r.watch.noun(),
        r.effort,
        r.repeats
    )
}

/// A probability in three significant digits, in scientific notation
/// when small.
pub(crate) fn prob(p: f64) -> String {
    if !p.is_finite() {
        "-".into()
    } else if p == 0.0 {
        "0".into()
    } else if p >= 0.01 {
        format!("{p:.3}")
    } else {
        format!("{p:.2e}")
    }
}

fn interval(i: Interval) -> String {
    format!("{} ({} to {})", prob(i.mean), prob(i.low), prob(i.high))
}

/// The estimates on stdout.
fn print_risk(r: &Risk, estimates: &[Estimate]) {
    say!(
        "the chance that one trigger tips the world (reaches {} {} before they are back at \
         calm), and that one of {} a day does; 95% intervals\n",
        r.tipped,
        r.watch.noun(),
        r.per_day
    );
    let width = estimates
        .iter()
        .map(|e| e.strategy.len())
        .max()
        .unwrap_or(8)
        .max(8);
    say!(
        "{:width$}  {:>30}  {:>30}  brute force",
        "strategy",
        "one trigger",
        "within a day"
    );
    for e in estimates {
        let brute = e.brute.as_ref().map_or("-".to_string(), |b| {
            let last = b.reached.len() - 1;
            format!(
                "{} of {}: {}",
                b.reached[last],
                b.trials,
                interval(b.reach(last))
            )
        });
        say!(
            "{:width$}  {:>30}  {:>30}  {brute}",
            e.strategy,
            interval(e.tip),
            interval(e.day)
        );
    }
    say!("");
    for e in estimates {
        let levels: Vec<String> = e.levels.iter().map(u64::to_string).collect();
        say!(
            "{}: calm at {}; levels {}; {} walks ({} out of time); from the top, {} of {} \
             walks got back to calm within {}",
            e.strategy,
            if e.calm == 0 {
                "0".to_string()
            } else {
                format!("{} or under", e.calm)
            },
            levels.join(", "),
            e.walks,
            e.timed_out,
            e.fell_back.0,
            e.fell_back.1,
            r.after
        );
        if e.leaves_the_top() {
            say!(
                "  note: most walks got back from {} {}: {} does not stay tipped there, so \
                 its figure is the chance of reaching that count, not of a storm it cannot \
                 leave",
                r.tipped,
                r.watch.noun(),
                e.strategy
            );
        }
    }
}
