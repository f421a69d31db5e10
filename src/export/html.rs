//! `report.html`: one self-contained page beside a results folder's CSV files.
//!
//! The page carries everything it shows: the scenario's description and its
//! file, the summary table (rendered here, so it reads without JavaScript),
//! the CSV files themselves, and the chart code (uPlot, vendored at a pinned
//! version with its licence, and `assets/report/report.js`), all inline. It
//! fetches nothing. The bytes depend only on the results and the scenario file,
//! so the same scenario and seed give the same page on any machine.

use std::fmt::Write as _;

use crate::metrics::figures::{FIGURES, Stat};
use crate::metrics::{Report, columns};
use crate::plot::style;
use crate::sweep::SweepReport;

/// uPlot 1.6.32 (MIT), from the npm registry; see `assets/vendor/README.md`.
const UPLOT_JS: &str = include_str!("../../assets/vendor/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/vendor/uplot/uPlot.min.css");
const UPLOT_LICENSE: &str = include_str!("../../assets/vendor/uplot/LICENSE");
const REPORT_JS: &str = include_str!("../../assets/report/report.js");
const REPORT_CSS: &str = include_str!("../../assets/report/report.css");

/// The file name inside a results folder.
pub const FILE_NAME: &str = "report.html";

/// What a run's page is made of.
pub struct RunPage<'a> {
    /// The scenario's description.
    pub description: &'a str,
    /// The scenario file's path, as given.
    pub scenario_file: &'a str,
    /// The scenario file's text.
    pub scenario_text: &'a str,
    /// The results.
    pub report: &'a Report,
    /// `summary.csv`'s bytes.
    pub summary_csv: &'a [u8],
    /// `timeseries.csv`'s bytes.
    pub timeseries_csv: &'a [u8],
}

/// The summary columns shown in the main table, with their headings and what
/// they mean (the rest are under "every column").
const MAIN_COLUMNS: [&str; 9] = [
    "failed",
    "recovery_time_s",
    "successes_lost",
    "crashes",
    "peak_at_server",
    "peak_load_ratio",
    "amplification",
    "extra_attempts",
    "latency_p99_s",
];

/// A summary column's heading in the report's table (with its unit: the
/// table shows the CSV's numbers) and its meaning, from [`columns`].
fn heading(name: &str) -> (String, &'static str) {
    match columns::summary(name) {
        Some(c)
            if matches!(
                c.shown,
                columns::Shown::Seconds(_) | columns::Shown::Latency
            ) =>
        {
            (format!("{} (s)", c.heading), c.meaning)
        }
        Some(c) => (c.heading.to_string(), c.meaning),
        None => (name.to_string(), ""),
    }
}

/// A run's facts for the charts' script, as JSON: the scenario, seed, length,
/// bucket, capacity, triggers, strategies and their colours.
pub fn run_facts(r: &Report) -> serde_json::Value {
    let mut facts = base_facts(r);
    if let Some(fleet) = fleet_facts(r) {
        facts["fleet"] = fleet;
    }
    if let Some(tiers) = tier_facts(r) {
        facts["tiers"] = tiers;
    }
    facts
}

/// A call chain's tiers for the chart of `report.js`: the services' names
/// (tier 0 first) and, per strategy, the attempts each tier received in
/// each bucket; `None` without a chain.
fn tier_facts(r: &Report) -> Option<serde_json::Value> {
    let first = r.runs.iter().find_map(|run| run.tiers.as_ref())?;
    let services: Vec<&str> = first.iter().map(|(name, _)| name.as_str()).collect();
    let attempts: Vec<Vec<&[u32]>> = r
        .runs
        .iter()
        .map(|run| {
            run.tiers
                .iter()
                .flatten()
                .map(|(_, t)| t.attempts.as_slice())
                .collect()
        })
        .collect();
    Some(serde_json::json!({ "services": services, "attempts": attempts }))
}

/// The section of a call chain's tiers: `tiers.csv` as a table, each
/// column's heading and meaning from [`columns::TIERS`], and with `chart`
/// the chart's place (the playground has its own); empty without a chain.
pub fn tiers_section(r: &Report, chart: bool) -> String {
    use crate::export::Exporter;
    let tiers = crate::export::tiers_csv::TiersCsv;
    if !tiers.applies(r) {
        return String::new();
    }
    let Ok(bytes) = tiers.serialize(r) else {
        return String::new();
    };
    let (header, rows) = parse_csv(&String::from_utf8_lossy(&bytes));
    let mut t = String::from(
        "<section id=\"tiers\"><h2>Tiers</h2>\
         <p class=\"hint\">Each service of the call chain, tier 0 being the one users call. \
         A tier's <i>calls</i> are the logical requests its callers made of it; its \
         <i>attempts</i> include their retries. Hover a heading for what it means; every \
         figure is from <code>tiers.csv</code>.</p>\
         <div class=\"wide\"><table class=\"summary sortable\" id=\"tiers-table\"><thead><tr>",
    );
    let cols: Vec<_> = header
        .iter()
        .map(|h| columns::TIERS.iter().find(|c| c.name == h))
        .collect();
    for (h, c) in header.iter().zip(&cols) {
        let (head, what) = c.map_or((h.as_str(), ""), |c| (c.heading, c.meaning));
        let _ = write!(t, "<th title=\"{}\">{}</th>", esc(what), esc(head));
    }
    t.push_str("</tr></thead><tbody>");
    for row in &rows {
        t.push_str("<tr>");
        for (v, c) in row.iter().zip(&cols) {
            let shown = c.map_or_else(|| v.clone(), |c| c.show(v));
            let _ = write!(t, "<td>{}</td>", esc(&shown));
        }
        t.push_str("</tr>");
    }
    t.push_str("</tbody></table></div>");
    if chart {
        t.push_str("<div class=\"chart\" id=\"chart-tiers\"></div>");
    }
    t.push_str("</section>");
    t
}

/// A fleet's replicas for the map of `report.js`: per strategy, the grid of
/// `replicas.png` (at most 100 rows of replicas by 300 columns of time), each
/// cell's requests held and share in the rotation, row by row; `None` for
/// one server.
fn fleet_facts(r: &Report) -> Option<serde_json::Value> {
    use crate::plot::replicas::{grid, groups};
    let runs: Vec<_> = r
        .runs
        .iter()
        .enumerate()
        .filter_map(|(i, run)| run.replicas.as_ref().map(|s| (i, run, s)))
        .collect();
    if runs.is_empty() {
        return None;
    }
    let round = |v: f64, k: f64| (v * k).round() / k;
    let mut peak: f64 = 0.0;
    let maps: Vec<serde_json::Value> = runs
        .iter()
        .map(|&(i, run, series)| {
            let per = run.buckets.len().max(1);
            let replicas = series.len() / per;
            let (row_group, col_group) = groups(replicas, per);
            let g = grid(series, per);
            let cells = || g.iter().flatten();
            peak = cells().fold(peak, |m, c| m.max(c.0));
            serde_json::json!({
                "i": i,
                "replicas": replicas,
                "row_group": row_group,
                "col_s": col_group as f64 * r.metrics.bucket.as_secs_f64(),
                "cols": g.first().map_or(0, Vec::len),
                "held": cells().map(|c| round(c.0, 10.0)).collect::<Vec<_>>(),
                "rotation": cells().map(|c| round(c.1, 100.0)).collect::<Vec<_>>(),
            })
        })
        .collect();
    // One scale for every strategy, topped at the crash limit (as replicas.png).
    let top = r
        .crash_limit
        .map_or(peak.max(1.0), |l| f64::from(l).max(1.0));
    Some(serde_json::json!({ "top": round(top, 10.0), "maps": maps }))
}

fn base_facts(r: &Report) -> serde_json::Value {
    serde_json::json!({
        "kind": "run",
        "scenario": r.scenario,
        "seed": r.seed,
        "duration_s": r.duration_s,
        "bucket_s": r.metrics.bucket.as_secs_f64(),
        "capacity_per_s": r.capacity_per_s,
        "crash_limit": r.crash_limit,
        "outages": r.outages.iter().map(|(a, b)| [a.as_secs_f64(), b.as_secs_f64()]).collect::<Vec<_>>(),
        "strategies": r.runs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        "colours": (0..r.runs.len()).map(|i| hex(style::colour(i))).collect::<Vec<_>>(),
    })
}

/// The run page's header: the scenario, what was run, and the way round
/// the page.
fn run_header(p: &RunPage) -> String {
    let r = p.report;
    let has_trigger = !r.outages.is_empty();
    let mut body = String::new();
    let _ = write!(
        body,
        "<header><h1>{name}</h1><p class=\"description\">{desc}</p>\
         <p class=\"meta\">{n} {strategies}, seed {seed}, {dur} s simulated in buckets of {bucket} s{cap}{trig}. \
         Made by <code>sim run {file}</code>; the same scenario and seed give this page byte for byte.</p>\
         <nav><a href=\"#summary\">Summary</a> <a href=\"#charts\">Charts</a> \
         <a href=\"#reading\">How to read it</a> <a href=\"#scenario\">The scenario</a></nav></header>",
        name = esc(&r.scenario),
        desc = esc(p.description),
        n = r.runs.len(),
        strategies = if r.runs.len() == 1 {
            "strategy"
        } else {
            "strategies"
        },
        seed = r.seed,
        dur = r.duration_s,
        bucket = r.metrics.bucket.as_secs_f64(),
        cap = r.capacity_per_s.map_or(String::new(), |c| format!(
            ", server capacity {c:.0} requests/s"
        )),
        trig = if has_trigger {
            format!(
                ", trigger {}",
                r.outages
                    .iter()
                    .map(|(a, b)| format!("{} s to {} s", a.as_secs_f64(), b.as_secs_f64()))
                    .collect::<Vec<_>>()
                    .join(" and ")
            )
        } else {
            ", no trigger".into()
        },
        file = esc(p.scenario_file),
    );
    body
}

/// The page of one run's folder.
pub fn run_page(p: &RunPage) -> String {
    let r = p.report;
    let facts = run_facts(r);
    let summary = String::from_utf8_lossy(p.summary_csv);
    let timeseries = String::from_utf8_lossy(p.timeseries_csv);
    let has_trigger = !r.outages.is_empty();
    let mut body = run_header(p);
    body.push_str(&takeaway_section(r));
    body.push_str("<section id=\"summary\"><h2>Summary</h2>");
    body.push_str(&summary_table(&summary, has_trigger));
    body.push_str(
        "<p class=\"hint\">Click a heading to sort; hover it for what it means. \
         Every figure is from <code>summary.csv</code>, which holds them all:</p>",
    );
    body.push_str("<details><summary>Every column of summary.csv</summary>");
    body.push_str(&full_table(&summary));
    body.push_str("</details></section>");
    body.push_str(&tiers_section(r, true));
    let _ = write!(
        body,
        "<section id=\"charts\"><h2>Charts</h2>\
         <div class=\"toggles\" id=\"toggles\" aria-label=\"strategies shown\"></div>\
         <p class=\"hint\">Hover a chart for the values at that time; drag across it to zoom in on \
         the time axis (all charts follow), double-click to zoom out; click a strategy above to \
         show or hide it everywhere.</p>\
         <div class=\"chart\" id=\"chart-load\"></div>\
         <div class=\"chart\" id=\"chart-goodput\"></div>\
         <div class=\"chart\" id=\"chart-backlog\"></div>{fleet}\
         <noscript><p>The charts need JavaScript; the PNG charts beside this file show the same.</p></noscript>\
         </section>",
        fleet = if facts.get("fleet").is_some() {
            "<div class=\"chart\" id=\"chart-fleet\"></div>"
        } else {
            ""
        },
    );
    body.push_str(READING);
    let _ = write!(
        body,
        "<section id=\"scenario\"><h2>The scenario</h2><p>The file <code>{}</code>, as it was run:</p>\
         <pre class=\"toml\">{}</pre></section>",
        esc(p.scenario_file),
        esc(p.scenario_text)
    );
    page(
        &r.scenario,
        &facts,
        &[("summary-csv", &summary), ("timeseries-csv", &timeseries)],
        &body,
    )
}

/// What a sweep's page is made of.
pub struct SweepPage<'a> {
    /// The scenario's description.
    pub description: &'a str,
    /// The scenario file's path, as given (or as the shards recorded it).
    pub scenario_file: &'a str,
    /// The scenario file's text.
    pub scenario_text: &'a str,
    /// The results.
    pub report: &'a SweepReport,
    /// The sweep's `summary.csv`.
    pub summary_csv: &'a [u8],
    /// Its `timeline.csv`.
    pub timeline_csv: &'a [u8],
}

/// The page of a sweep's folder (a run's or a merge's).
#[expect(
    clippy::too_many_lines,
    reason = "the sweep page as markup, section by section"
)]
pub fn sweep_page(p: &SweepPage) -> String {
    let r = p.report;
    let sw = &r.sweep;
    let mut strategies: Vec<&str> = Vec::new();
    for row in &r.rows {
        if !strategies.contains(&row.strategy.as_str()) {
            strategies.push(&row.strategy);
        }
    }
    let axes: Vec<_> = sw
        .axes
        .iter()
        .map(|a| {
            serde_json::json!({
                "parameter": a.parameter,
                "column": a.column,
                "values": a.values.iter().map(|v| v.x).collect::<Vec<_>>(),
                "labels": a.values.iter().map(|v| v.label.as_str()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let charts: Vec<_> = sw
        .charts
        .iter()
        .map(|&(f, log)| {
            let fig = &FIGURES[f];
            let suffixes = fig.suffixes();
            serde_json::json!({
                "name": fig.name,
                "label": fig.label,
                "column": format!("{}_{}", fig.name, suffixes[0]),
                "stat": match fig.stat {
                    Stat::Mean => "mean",
                    Stat::Median => "median",
                    Stat::Share => "share",
                },
                "log": log,
            })
        })
        .collect();
    let facts = serde_json::json!({
        "kind": "sweep",
        "scenario": r.scenario,
        "seed": r.seed,
        "replications": sw.replications,
        "bucket_s": r.metrics.bucket.as_secs_f64(),
        "axes": axes,
        "timeline_at": sw.points.get(sw.timeline_point).map(|pt| sw.describe(pt)),
        "charts": charts,
        "strategies": strategies,
        "colours": (0..strategies.len()).map(|i| hex(style::colour(i))).collect::<Vec<_>>(),
    });
    let summary = String::from_utf8_lossy(p.summary_csv);
    let timeline = String::from_utf8_lossy(p.timeline_csv);
    let mut body = String::new();
    let axes_text = sw
        .axes
        .iter()
        .map(|a| {
            format!(
                "<code>{}</code> over {}",
                esc(&a.parameter),
                esc(&a
                    .values
                    .iter()
                    .map(|v| v.label.as_str())
                    .collect::<Vec<_>>()
                    .join(", "))
            )
        })
        .collect::<Vec<_>>()
        .join(" by ");
    // The same words for a whole run and a merge of its shards, whose folders
    // are byte for byte the same.
    let how = format!(
        "Made by <code>sim run {}</code> (or by <code>sim merge</code> of its shards, which gives the same folder)",
        esc(p.scenario_file)
    );
    let _ = write!(
        body,
        "<header><h1>{name}</h1><p class=\"description\">{desc}</p>\
         <p class=\"meta\">A sweep of {axes_text}: {points} points, {n} {strategies}, {reps} runs each \
         ({runs} runs), seed {seed}. {how}; the same scenario and seed give this page byte for byte.</p>\
         <nav><a href=\"#charts\">Charts</a> <a href=\"#summary\">Summary</a> \
         <a href=\"#reading\">How to read it</a> <a href=\"#scenario\">The scenario</a></nav></header>",
        name = esc(&r.scenario),
        desc = esc(p.description),
        points = sw.points.len(),
        n = strategies.len(),
        strategies = if strategies.len() == 1 {
            "strategy"
        } else {
            "strategies"
        },
        reps = sw.replications,
        runs = sw.runs(),
        seed = r.seed,
    );
    body.push_str(
        "<section id=\"charts\"><h2>Charts</h2>\
         <div class=\"toggles\" id=\"toggles\" aria-label=\"strategies shown\"></div>\
         <p class=\"hint\">Hover a chart for its values; click a strategy above to show or hide it. \
         A point where the median run never recovered is drawn as a gap in the line (or a dark cell) and \
         marked <i>never</i>.</p><div id=\"sweep-charts\"></div>\
         <div class=\"chart\" id=\"chart-timeline\"></div>\
         <noscript><p>The charts need JavaScript; the PNG charts beside this file show the same.</p></noscript>\
         </section>",
    );
    body.push_str("<section id=\"summary\"><h2>Summary</h2>");
    let mut main: Vec<(String, String, String)> = sw
        .axes
        .iter()
        .map(|a| {
            (
                a.column.clone(),
                a.parameter.clone(),
                "the swept parameter's value".to_string(),
            )
        })
        .collect();
    main.push((
        "strategy".into(),
        "strategy".into(),
        "the strategy's name in the scenario".into(),
    ));
    main.push((
        "runs".into(),
        "runs".into(),
        "replications at this point".into(),
    ));
    main.push((
        "recovered_runs".into(),
        "recovered".into(),
        "runs that were back to normal before their end".into(),
    ));
    for &(f, _) in &sw.charts {
        let fig = &FIGURES[f];
        for (i, (suffix, what)) in fig.suffixes().iter().zip(fig.column_meanings()).enumerate() {
            let heading = if i == 0 {
                format!("{} ({suffix})", fig.name)
            } else {
                suffix.to_string()
            };
            main.push((
                format!("{}_{suffix}", fig.name),
                heading,
                format!("{}: {what}", fig.label),
            ));
        }
    }
    body.push_str(&column_table(&summary, &main));
    body.push_str(
        "<p class=\"hint\">Click a heading to sort; hover it for what it means. \
         Every figure is from <code>summary.csv</code>, which holds them all:</p>",
    );
    body.push_str("<details><summary>Every column of summary.csv</summary>");
    body.push_str(&full_table(&summary));
    body.push_str("</details></section>");
    body.push_str(SWEEP_READING);
    let _ = write!(
        body,
        "<section id=\"scenario\"><h2>The scenario</h2><p>The file <code>{}</code>, as it was run:</p>\
         <pre class=\"toml\">{}</pre></section>",
        esc(p.scenario_file),
        esc(p.scenario_text)
    );
    page(
        &r.scenario,
        &facts,
        &[("summary-csv", &summary), ("timeline-csv", &timeline)],
        &body,
    )
}

/// How to read a sweep's page.
const SWEEP_READING: &str = "<section id=\"reading\"><h2>How to read it</h2>\
<ul>\
<li>Each <b>point</b> of the sweep is one value of the swept parameter (or one pair, for a map); each strategy runs there as many times as the sweep's replications, with different seeds.</li>\
<li><b>Means</b> come with the half-width of their 95% confidence interval (<code>_ci95</code>); the charts draw the mean.</li>\
<li><b>Recovery</b> is summarised by its median and largest value over the runs, because a run that never recovers has no finite time: <i>never</i> counts as longer than any.</li>\
<li>The <b>timeline</b> is the first run at one point (the last, unless the sweep's <code>timeline_at</code> names another): attempts per second over time, to show what one run there looks like.</li>\
</ul></section>";

/// A table of the named columns of `csv_text`, in the order given:
/// (column, heading, what it means); columns the file lacks are left out.
fn column_table(csv_text: &str, columns: &[(String, String, String)]) -> String {
    let (header, rows) = parse_csv(csv_text);
    let shown: Vec<_> = columns
        .iter()
        .filter_map(|(c, h, w)| header.iter().position(|x| x == c).map(|i| (i, h, w)))
        .collect();
    let mut t = String::from(
        "<div class=\"wide\"><table class=\"summary sortable\" id=\"summary-table\"><thead><tr>",
    );
    for (_, h, w) in &shown {
        let _ = write!(t, "<th title=\"{}\">{}</th>", esc(w), esc(h));
    }
    t.push_str("</tr></thead><tbody>");
    for row in &rows {
        t.push_str("<tr>");
        for (i, _, _) in &shown {
            let v = row.get(*i).map_or("", |s| s);
            let _ = write!(
                t,
                "<td>{}</td>",
                if v.is_empty() {
                    "&ndash;".into()
                } else {
                    esc(&readable(v))
                }
            );
        }
        t.push_str("</tr>");
    }
    t.push_str("</tbody></table></div>");
    t
}

/// A CSV value as a table shows it: a decimal with four significant digits
/// (the CSV keeps every digit), anything else as it is.
fn readable(v: &str) -> String {
    match v.parse::<f64>() {
        Ok(x) if v.contains('.') && x.is_finite() && x != 0.0 => {
            let magnitude = x.abs().log10().floor() as i32;
            // No more decimals than the CSV wrote: 8.2 stays 8.2.
            let written = v.split('.').nth(1).map_or(0, str::len) as i32;
            let decimals = (3 - magnitude).clamp(0, 6).min(written) as usize;
            format!("{x:.decimals$}")
        }
        _ => v.to_string(),
    }
}

/// How to read the figures and charts, for every run's page.
const READING: &str = "<section id=\"reading\"><h2>How to read it</h2>\
<ul>\
<li><b>The trigger</b> (grey band) is what the scenario does to the server: an outage, a crash, a spike of load or of errors.</li>\
<li><b>Load</b> is attempts per second at the server, first attempts and retries; the dashed line is the server's capacity. A retry storm is load above capacity after the trigger.</li>\
<li><b>Goodput</b> is successes per second; the dashed line of the same colour is the same run without the trigger (the same seed, so the same arrivals): the normal that recovery is judged against.</li>\
<li><b>At the server</b> is requests queued or in service there: what a crash limit (dashed) counts. <b>Waiting to retry</b> (grey) is requests waiting out a backoff. Together they are the <b>backlog</b>: work the clients still owe.</li>\
<li><b>Recovery</b> is the time from the end of the trigger until goodput and backlog are back within the run-without-trigger's noise for good (a dotted line in the charts); <i>never</i> means not within the run.</li>\
<li><b>Successes lost</b> and <b>extra attempts</b> compare the run with its twin from the trigger to recovery: what the trigger cost the users, and what it cost the server. Extra attempts are negative when the run sent fewer than its twin (clients waiting out timeouts, breakers open, requests given up).</li>\
<li>Read <b>recovery</b> with <b>failed</b>: a strategy that gives up at once recovers at once, and its users see the failures.</li>\
</ul></section>";

/// "What this run shows": [`crate::metrics::takeaway`]'s sentences as one
/// paragraph, for the top of a run's page and the playground.
pub fn takeaway_section(r: &Report) -> String {
    let text = crate::metrics::takeaway::takeaway(r).join(" ");
    if text.is_empty() {
        return String::new();
    }
    format!(
        "<section class=\"takeaway\" id=\"takeaway\"><h2>What this run shows</h2><p>{}</p></section>",
        esc(&text)
    )
}

/// The main table: the strategy and [`MAIN_COLUMNS`], from `summary.csv`.
pub fn summary_table(csv_text: &str, has_trigger: bool) -> String {
    let (header, rows) = parse_csv(csv_text);
    let at = |name: &str| header.iter().position(|h| h == name);
    let mut t = String::from(
        "<div class=\"wide\"><table class=\"summary sortable\" id=\"summary-table\"><thead><tr><th title=\"the strategy's name in the scenario\">strategy</th>",
    );
    let shown: Vec<_> = MAIN_COLUMNS
        .iter()
        .filter_map(|col| {
            let (head, what) = heading(col);
            at(col).map(|i| (i, *col, head, what))
        })
        .collect();
    for (_, _, head, what) in &shown {
        let _ = write!(t, "<th title=\"{}\">{}</th>", esc(what), esc(head));
    }
    t.push_str("</tr></thead><tbody>");
    for row in &rows {
        let _ = write!(t, "<tr><td>{}</td>", esc(row.first().map_or("", |s| s)));
        for (i, col, _, _) in &shown {
            let v = row.get(*i).map_or("", |s| s);
            let cell = match (*col, v.is_empty(), has_trigger) {
                ("recovery_time_s", true, true) => "never".to_string(),
                (_, true, _) => "&ndash;".to_string(),
                _ => esc(&readable(v)),
            };
            let _ = write!(t, "<td>{cell}</td>");
        }
        t.push_str("</tr>");
    }
    t.push_str("</tbody></table></div>");
    t
}

/// Every column of `summary.csv`, as it is.
fn full_table(csv_text: &str) -> String {
    let (header, rows) = parse_csv(csv_text);
    let mut t = String::from("<div class=\"wide\"><table class=\"all\"><thead><tr>");
    for h in &header {
        let _ = write!(t, "<th>{}</th>", esc(h));
    }
    t.push_str("</tr></thead><tbody>");
    for row in &rows {
        t.push_str("<tr>");
        for v in row {
            let _ = write!(t, "<td>{}</td>", esc(v));
        }
        t.push_str("</tr>");
    }
    t.push_str("</tbody></table></div>");
    t
}

fn parse_csv(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    let mut rows: Vec<Vec<String>> = r
        .records()
        .filter_map(Result::ok)
        .map(|rec| rec.iter().map(str::to_owned).collect())
        .collect();
    if rows.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let header = rows.remove(0);
    (header, rows)
}

/// The whole page around `body`: styles, data and scripts inline.
fn page(title: &str, facts: &serde_json::Value, data: &[(&str, &str)], body: &str) -> String {
    let mut out = String::with_capacity(body.len() + UPLOT_JS.len() + 4096);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"retry-storm {version}\">\
         <title>{title} - retry-storm report</title><style>{UPLOT_CSS}\n{REPORT_CSS}</style></head>\n<body>\n{body}\n\
         <footer>retry-storm {version}. Charts drawn with uPlot 1.6.32 (MIT licence, included in this file).</footer>\n\
         <script type=\"application/json\" id=\"facts\">{facts}</script>\n",
        version = env!("CARGO_PKG_VERSION"),
        title = esc(title),
        facts = script_safe(&facts.to_string()),
    );
    for (id, text) in data {
        let _ = writeln!(
            out,
            "<script type=\"application/json\" id=\"{id}\">{}</script>",
            json_string(text)
        );
    }
    let _ = write!(
        out,
        "<script>/*\n{}*/\n{}</script>\n<script>\n{}</script>\n</body></html>\n",
        UPLOT_LICENSE.replace("*/", "* /"),
        UPLOT_JS,
        REPORT_JS
    );
    out
}

/// JSON text made safe inside a `<script>` element: `<`, `>` and `&` can only
/// stand in its strings, where their `\u` escapes mean the same.
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// `s` as a JSON string literal that is also safe inside a `<script>` element.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `s` with HTML's special characters escaped, for text and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn hex(c: plotters::style::RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

#[cfg(test)]
mod tests;
