//! `sim serve`: a local playground. A web page on 127.0.0.1 where a user picks
//! a shipped scenario (or opens their own file), changes the parameters that
//! matter, and sees the charts and table of a fresh run of the real engine,
//! two configurations side by side.
//!
//! The page, its script and styles and the chart library are compiled into the
//! binary. The HTTP side is axum on a small tokio runtime; each run is the same
//! `runner::simulate` as `sim run`, on a blocking thread, at most one per core at
//! a time, and refused before it starts when it is too big for a playground.

mod edit;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use crate::export::html;
use crate::export::{Exporter, summary_csv::SummaryCsv, timeseries_csv::TimeseriesCsv};
use crate::scenario;

pub use edit::{Field, apply_edits, fields};

/// The shipped scenarios the playground offers, compiled in.
pub const SCENARIOS: &[(&str, &str)] = &[
    ("outage", include_str!("../../scenarios/outage.toml")),
    (
        "ideal-server",
        include_str!("../../scenarios/ideal-server.toml"),
    ),
    ("blackhole", include_str!("../../scenarios/blackhole.toml")),
    (
        "unavailable",
        include_str!("../../scenarios/unavailable.toml"),
    ),
    ("budgets", include_str!("../../scenarios/budgets.toml")),
    (
        "metastable",
        include_str!("../../scenarios/metastable.toml"),
    ),
    (
        "server-side",
        include_str!("../../scenarios/server-side.toml"),
    ),
    (
        "open-vs-closed",
        include_str!("../../scenarios/open-vs-closed.toml"),
    ),
    ("libraries", include_str!("../../scenarios/libraries.toml")),
    ("fleet", include_str!("../../scenarios/fleet.toml")),
    ("zone", include_str!("../../scenarios/zone.toml")),
    ("autoscale", include_str!("../../scenarios/autoscale.toml")),
    (
        "call-chain",
        include_str!("../../scenarios/call-chain.toml"),
    ),
    ("hedging", include_str!("../../scenarios/hedging.toml")),
    (
        "hedged-calls",
        include_str!("../../scenarios/hedged-calls.toml"),
    ),
    ("mm1", include_str!("../../scenarios/mm1.toml")),
    ("mesh", include_str!("../../scenarios/mesh.toml")),
    ("adaptive", include_str!("../../scenarios/adaptive.toml")),
    ("cache", include_str!("../../scenarios/cache.toml")),
];

const PAGE: &str = include_str!("../../assets/serve/index.html");
const SERVE_JS: &str = include_str!("../../assets/serve/serve.js");
const SERVE_CSS: &str = include_str!("../../assets/serve/serve.css");
const REPORT_JS: &str = include_str!("../../assets/report/report.js");
const REPORT_CSS: &str = include_str!("../../assets/report/report.css");
const UPLOT_JS: &str = include_str!("../../assets/vendor/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/vendor/uplot/uPlot.min.css");
/// The guided lessons: each step's scenario, edits, text, the figures it shows
/// and the claims `tests/it/serve.rs` checks against the engine.
const LESSONS: &str = include_str!("../../assets/serve/lessons.json");

/// The largest run the playground starts: events the engine would simulate,
/// about four seconds on two cores at 30 million events per second.
pub const MAX_EVENTS: f64 = 1.2e8;
/// The largest client population, which costs memory before any event.
pub const MAX_CLIENTS: f64 = 1e6;
/// The most memory one playground request's runs may hold, as
/// [`crate::runner::run_bytes`] estimates it, all strategies together.
pub const MAX_BYTES: u64 = 512 << 20;
/// The most time buckets one request's runs may keep, all strategies
/// together: each is a row of the answer's CSV and a point of every chart
/// (the shipped scenarios have at most a few thousand).
pub const MAX_BUCKETS: u64 = 200_000;

/// What the server shares between requests.
struct AppState {
    /// One permit per core: runs beyond that wait their turn.
    runs: Semaphore,
    /// The permits in all.
    cores: u32,
}

/// Starts the playground on 127.0.0.1:`port` (0: any free port) and serves
/// until interrupted.
pub fn serve(port: u16) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .enable_time()
        .build()
        .context("cannot start the web server's runtime")?;
    runtime.block_on(async move {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
            format!("cannot listen on {addr} (is the port in use? try --port 0)")
        })?;
        let local = listener.local_addr()?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let state = Arc::new(AppState {
            runs: Semaphore::new(cores),
            cores: u32::try_from(cores).unwrap_or(1),
        });
        let app = Router::new()
            .route("/", get(page))
            .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
            .route("/api/scenarios", get(list))
            .route("/api/fields", post(field_list))
            .route("/api/run", post(run))
            .route("/api/advise", post(advise))
            .layer(DefaultBodyLimit::max(1 << 20))
            .with_state(state)
            .layer(axum::middleware::from_fn(request_deadline));
        println!("sim serve: the playground is at http://{local}/ (Ctrl-C stops it)");
        serve_connections(listener, app).await;
        Ok(())
    })
}

/// How long a connection may take to send a request's headers, and may sit
/// idle between requests, before it is closed.
const HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long one request may take, from its headers to the answer: reading
/// its body, waiting for a core, the run.
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);
/// Connections served at once. A page uses a few; when all are taken, the
/// oldest is closed to make room for the new one.
const MAX_CONNECTIONS: usize = 64;

/// Accepts connections until Ctrl-C, each served by hyper's HTTP/1 with a
/// header (and idle) timeout, within a bound on open connections: a client
/// that connects and stalls cannot hold memory for ever. When the bound is
/// reached the oldest connection is closed, so clients that hold connections
/// open (sending a body a byte a second) cannot lock the page out: the page's
/// next connection takes the place of one of theirs.
async fn serve_connections(listener: tokio::net::TcpListener, app: Router) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let open = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    // The connections being served, oldest first.
    let mut served: std::collections::VecDeque<tokio::task::AbortHandle> =
        std::collections::VecDeque::new();
    let shutdown = tokio::signal::ctrl_c();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors and the like: wait, then go on.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => return,
        };
        served.retain(|h| !h.is_finished());
        let permit = match open.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                // Close the oldest; its permit comes back when its task ends.
                if let Some(oldest) = served.pop_front() {
                    oldest.abort();
                }
                match tokio::time::timeout(
                    std::time::Duration::from_secs(1),
                    open.clone().acquire_owned(),
                )
                .await
                {
                    Ok(Ok(permit)) => permit,
                    _ => {
                        drop(stream);
                        continue;
                    }
                }
            }
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let task = tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(permit);
        });
        served.push_back(task.abort_handle());
    }
}

/// Answers 408 to a request not done within [`REQUEST_TIMEOUT`] (a body sent
/// too slowly, a run that waited too long for a core).
async fn request_deadline(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(req)).await {
        Ok(response) => response,
        Err(_) => failure(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request took more than {} s and was stopped",
                REQUEST_TIMEOUT.as_secs()
            ),
            None,
        ),
    }
}

async fn page() -> Response {
    let body = PAGE
        .replace("/*UPLOT_CSS*/", UPLOT_CSS)
        .replace("/*REPORT_CSS*/", REPORT_CSS)
        .replace("/*SERVE_CSS*/", SERVE_CSS)
        .replace("/*UPLOT_JS*/", UPLOT_JS)
        .replace("/*REPORT_JS*/", REPORT_JS)
        .replace("/*SERVE_JS*/", SERVE_JS)
        .replace("/*LESSONS*/", &LESSONS.replace("</", "<\\/"))
        .replace("{{VERSION}}", env!("CARGO_PKG_VERSION"));
    ([(header::CACHE_CONTROL, "no-store")], Html(body)).into_response()
}

#[derive(Serialize)]
struct ScenarioEntry {
    name: &'static str,
    description: String,
    text: &'static str,
    sweep: bool,
}

async fn list() -> Json<Vec<ScenarioEntry>> {
    Json(
        SCENARIOS
            .iter()
            .map(|(name, text)| {
                let parsed = scenario::parse(text, Path::new(&format!("scenarios/{name}.toml")));
                ScenarioEntry {
                    name,
                    description: parsed
                        .as_ref()
                        .map_or(String::new(), |s| s.description.clone()),
                    text,
                    sweep: parsed.is_ok_and(|s| s.sweep.is_some()),
                }
            })
            .collect(),
    )
}

/// A scenario's text, its file name for messages, and edits to apply
/// (key path to a TOML value, as the page's fields write them).
#[derive(Deserialize)]
struct RunRequest {
    text: String,
    #[serde(default = "default_file")]
    file: String,
    #[serde(default)]
    edits: Vec<(String, String)>,
}

fn default_file() -> String {
    "scenario.toml".into()
}

/// A failure the page shows at the field it names, if any.
#[derive(Serialize)]
struct Failure {
    ok: bool,
    error: String,
    key: Option<String>,
}

fn failure(status: StatusCode, error: String, key: Option<String>) -> Response {
    (
        status,
        Json(Failure {
            ok: false,
            error,
            key,
        }),
    )
        .into_response()
}

async fn field_list(Json(req): Json<RunRequest>) -> Response {
    let path = Path::new(&req.file).to_path_buf();
    match tokio::task::spawn_blocking(move || {
        let text = apply_edits(&req.text, &req.edits, &path)?;
        let s = scenario::parse(&text, &path)?;
        Ok::<_, scenario::ScenarioError>(fields(&text, &s))
    })
    .await
    {
        Ok(Ok(f)) => Json(serde_json::json!({ "ok": true, "fields": f })).into_response(),
        Ok(Err(e)) => failure(StatusCode::UNPROCESSABLE_ENTITY, e.to_string(), e.key),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None),
    }
}

/// What a run sends back: the edited scenario (for export), the facts and
/// CSV files the charts draw, the summary table, and the time it took.
#[derive(Serialize)]
struct RunResponse {
    ok: bool,
    toml: String,
    facts: serde_json::Value,
    summary_csv: String,
    timeseries_csv: String,
    table: String,
    /// "What this run shows", as `report.html` has it.
    takeaway: String,
    notes: Vec<String>,
    run_ms: u64,
}

async fn run(State(state): State<Arc<AppState>>, Json(req): Json<RunRequest>) -> Response {
    let Ok(_permit) = state.runs.acquire().await else {
        return failure(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting down".into(),
            None,
        );
    };
    match tokio::task::spawn_blocking(move || run_blocking(&req)).await {
        Ok(Ok(r)) => Json(r).into_response(),
        Ok(Err((status, error, key))) => failure(status, error, key),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None),
    }
}

type RunError = (StatusCode, String, Option<String>);

/// The most runs one advise request may make.
pub const MAX_ADVISE_RUNS: usize = 400;
/// Tiers of a call chain the playground searches settings for.
pub const MAX_ADVISE_TIERS: usize = 20;
/// The most events one advise request may simulate, twins included: about
/// half a minute on two cores.
pub const MAX_ADVISE_EVENTS: f64 = 8.0 * MAX_EVENTS;

/// A search of retry settings for a scenario (`sim advise`), with the
/// budget of runs and the objective.
#[derive(Deserialize)]
struct AdviseRequest {
    #[serde(flatten)]
    scenario: RunRequest,
    runs: usize,
    objective: String,
}

/// One finalist of the search, as the front chart draws it.
#[derive(Serialize)]
struct AdvisePoint {
    /// Its number on the front (as `sim advise` prints it), or None.
    label: Option<usize>,
    pick: bool,
    failed: f64,
    successes_lost: f64,
    peak_load_ratio: f64,
    latency_p99_s: f64,
    /// The setting in one line per layer (the users', then each service's
    /// calls).
    settings: Vec<String>,
    /// The edits that give the scenario's first strategy this setting.
    edits: Vec<(String, String)>,
}

#[derive(Serialize)]
struct AdviseResponse {
    ok: bool,
    points: Vec<AdvisePoint>,
    /// The peak-load limit of the objective, if it has one.
    peak_limit: Option<f64>,
    drawn: usize,
    runs: usize,
    /// The strategy whose other settings are kept.
    template: String,
    run_ms: u64,
}

async fn advise(State(state): State<Arc<AppState>>, Json(req): Json<AdviseRequest>) -> Response {
    // The search runs on every core: it waits for all of them.
    let Ok(_permits) = state.runs.acquire_many(state.cores).await else {
        return failure(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting down".into(),
            None,
        );
    };
    match tokio::task::spawn_blocking(move || advise_blocking(&req)).await {
        Ok(Ok(r)) => Json(r).into_response(),
        Ok(Err((status, error, key))) => failure(status, error, key),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None),
    }
}

/// Refuses an advise request too big for a playground: its runs too big
/// (see [`check_size`]), its chain too deep, or its search too long.
fn check_advise_size(s: &scenario::Scenario, file: &str, runs: usize) -> Result<(), RunError> {
    let plan = crate::runner::Plan::new(s);
    check_size(&plan, file)?;
    // A run of a deep chain keeps a latency histogram and a series for each
    // tier (60 KB a tier), a run and its twin at once on each thread: 280 MB
    // for 1000 tiers on two threads, most of the playground's bound.
    let tiers = s.world.chain.as_ref().map_or(1, |c| c.tiers());
    if tiers > MAX_ADVISE_TIERS {
        return Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "{file}: a chain of {tiers} tiers is too deep to search here (at most \
                 {MAX_ADVISE_TIERS} tiers); run `sim advise`, which has no such bound"
            ),
            None,
        ));
    }
    // One run of the first strategy (and its twin) per run of the search.
    let per_run = plan.events / s.strategies.len().max(1) as f64;
    let events = per_run * runs as f64;
    if events > MAX_ADVISE_EVENTS {
        return Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "{file}: a search of {runs} runs would simulate about {:.0} million events (at most {:.0} million here, half a minute of work); lower the runs, or run `sim advise`, which has no such bound",
                events / 1e6,
                MAX_ADVISE_EVENTS / 1e6
            ),
            Some("runs".to_string()),
        ));
    }
    Ok(())
}

fn advise_blocking(req: &AdviseRequest) -> Result<AdviseResponse, RunError> {
    use crate::advise::{Metric, Objective};
    let started = Instant::now();
    let file = &req.scenario.file;
    let path = Path::new(file);
    let refuse = |message: String, key: &str| {
        Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            message,
            Some(key.to_string()),
        ))
    };
    let objective = match Objective::parse(&req.objective) {
        Ok(o) => o,
        Err(e) => return refuse(e, "objective"),
    };
    if !(10..=MAX_ADVISE_RUNS).contains(&req.runs) {
        return refuse(
            format!(
                "runs = {}: the search needs 10 runs or more, and the playground makes at most {MAX_ADVISE_RUNS} (`sim advise --runs` has no such bound)",
                req.runs
            ),
            "runs",
        );
    }
    let bad = |e: scenario::ScenarioError| (StatusCode::UNPROCESSABLE_ENTITY, e.to_string(), e.key);
    let text = apply_edits(&req.scenario.text, &req.scenario.edits, path).map_err(bad)?;
    let s = scenario::parse(&text, path).map_err(bad)?;
    if let Some(why) = crate::advise::refusal(&s) {
        return Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("{file}: cannot advise on {why}"),
            None,
        ));
    }
    check_advise_size(&s, file, req.runs)?;
    let a = crate::advise::advise(&s, req.runs, 1, &objective, &|| {});
    let services = crate::advise::services(&s);
    let points = a
        .finalists
        .iter()
        .enumerate()
        .map(|(i, (c, sc))| AdvisePoint {
            label: a.front.iter().position(|&f| f == i).map(|n| n + 1),
            pick: a.pick == Some(i),
            failed: sc.get(Metric::Failed),
            successes_lost: sc.get(Metric::SuccessesLost),
            peak_load_ratio: sc.get(Metric::PeakLoad),
            latency_p99_s: sc.get(Metric::P99),
            settings: std::iter::once(c.short().trim_end().to_string())
                .chain(
                    services
                        .iter()
                        .zip(&c.calls)
                        .map(|(n, k)| format!("{} (calls to {n})", k.short().trim_end())),
                )
                .collect(),
            edits: c.edits(0, &services),
        })
        .collect();
    Ok(AdviseResponse {
        ok: true,
        points,
        peak_limit: objective
            .limits
            .iter()
            .find(|(m, _)| *m == Metric::PeakLoad)
            .map(|&(_, v)| v),
        drawn: a.drawn,
        runs: a.runs,
        template: s.strategies[0].name.clone(),
        run_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

fn run_blocking(req: &RunRequest) -> Result<RunResponse, RunError> {
    let started = Instant::now();
    let path = Path::new(&req.file);
    let bad = |e: scenario::ScenarioError| (StatusCode::UNPROCESSABLE_ENTITY, e.to_string(), e.key);
    let text = apply_edits(&req.text, &req.edits, path).map_err(bad)?;
    let mut s = scenario::parse(&text, path).map_err(bad)?;
    // A sweep runs here at the values its file writes: one point.
    let sweep_note = s.sweep.take().map(|sw| {
        format!(
            "{} is a sweep of {} runs ({}); the playground runs it once, at the values the file \
             writes: change a field to see another point, and run the whole sweep with `sim run`.",
            req.file,
            sw.runs(),
            sw.axes
                .iter()
                .map(|a| a.parameter.as_str())
                .collect::<Vec<_>>()
                .join(" and ")
        )
    });
    let plan = crate::runner::Plan::new(&s);
    check_size(&plan, &req.file)?;
    let report = plan.simulate();
    if let Some(r) = report.runs.iter().find(|r| r.aborted.is_some()) {
        return Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "{}: strategy \"{}\": {}",
                req.file,
                r.name,
                r.aborted.as_deref().unwrap_or_default()
            ),
            None,
        ));
    }
    let internal =
        |e: crate::export::ExportError| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None);
    let summary = SummaryCsv.serialize(&report).map_err(internal)?;
    let timeseries = TimeseriesCsv.serialize(&report).map_err(internal)?;
    let summary = String::from_utf8_lossy(&summary).into_owned();
    let facts = html::run_facts(&report);
    Ok(RunResponse {
        ok: true,
        // A call chain's tiers follow the summary, with their chart's place.
        table: html::summary_table(&summary, !report.outages.is_empty())
            + &html::tiers_section(&report, false),
        takeaway: html::takeaway_section(&report),
        toml: edit::export_text(&text, &s.name),
        facts,
        summary_csv: summary,
        timeseries_csv: String::from_utf8_lossy(&timeseries).into_owned(),
        notes: sweep_note
            .into_iter()
            .chain(scenario::retry_after_notes(&s))
            .collect(),
        run_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

/// Refuses a run too big for a playground, with what to change: too many
/// events (time), clients or bytes (memory), or time buckets (the size of the
/// answer and of the charts).
fn check_size(plan: &crate::runner::Plan, file: &str) -> Result<(), RunError> {
    let (s, events) = (plan.scenario, plan.events);
    let mut clients: f64 = 0.0;
    let mut bytes: u64 = 0;
    let mut buckets: u64 = 0;
    for w in &plan.worlds {
        if let crate::model::Load::Closed { clients: c, .. }
        | crate::model::Load::OneShot { clients: c } = w.load
        {
            clients = clients.max(f64::from(c));
        }
        bytes += crate::runner::run_bytes(w, s.metrics.bucket);
        buckets += w.duration.0 / s.metrics.bucket.0.max(1) + 1;
    }
    let refuse = |what: String, key: &str| {
        Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "{file}: too big for the playground: {what}; run it with `sim run`, which \
                 has no such bound"
            ),
            Some(key.to_string()),
        ))
    };
    if events > MAX_EVENTS || clients > MAX_CLIENTS {
        return refuse(
            format!(
                "about {:.0} million events and {clients:.0} clients (at most {:.0} million \
                 events and {:.0} clients here, a few seconds of work); shorten the duration \
                 or lower the load, a load spike's rate or the number of strategies",
                events / 1e6,
                MAX_EVENTS / 1e6,
                MAX_CLIENTS
            ),
            "duration",
        );
    }
    if bytes > MAX_BYTES {
        return refuse(
            format!(
                "about {} MB of memory (at most {} MB here); lower the clients or a load \
                 spike's rate",
                bytes >> 20,
                MAX_BYTES >> 20
            ),
            "duration",
        );
    }
    if buckets > MAX_BUCKETS {
        return refuse(
            format!(
                "{buckets} time buckets over the strategies (at most {MAX_BUCKETS} here); \
                 widen metrics.bucket or shorten the duration"
            ),
            "metrics.bucket",
        );
    }
    Ok(())
}
