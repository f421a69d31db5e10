//! `sim import`: real retry configurations read into scenario tables. Each
//! imported value is written with the file, line and field it came from;
//! each field the simulator cannot model is listed, never dropped silently.
//!
//! Formats (told apart by their content): a gRPC service config (JSON,
//! `methodConfig`, `retryThrottling`); Envoy configuration (YAML or JSON:
//! every `retry_policy`, with its route's `timeout`, and every cluster's
//! `circuit_breakers` and `outlier_detection`); Istio's `VirtualService`
//! and `DestinationRule`; the Gateway API's routes with the retry policies
//! attached to them (GEP-3388's and Envoy Gateway's); Linkerd's
//! `ServiceProfile` and retry and timeout annotations; resilience4j's
//! Spring Boot configuration; .NET's resilience options
//! (`appsettings.json`). Kubernetes files come as they are written or
//! listed: several documents in one file, a `kind: List` of items
//! (`kubectl get -o yaml`), or a folder of files read together.

mod dotnet;
mod envoy;
mod envoy_gateway;
mod gateway;
mod grpc;
mod istio;
mod linkerd;
mod resilience4j;
pub mod tree;
mod write;

use std::fmt::Write as _;
use std::path::Path;

use tree::Node;
pub use write::{chain_into_scenario, fragment, into_scenario};

/// How a budget, a retry circuit breaker or outlier detection that a proxy
/// keeps is read: each client's proxy (an Envoy sidecar, a Linkerd proxy)
/// counts its own, and so does the simulator, one per proxy of
/// `[clients] proxies` (one, for all clients, unless the scenario says how
/// many).
pub(crate) const PER_PROXY: &str = "counted by each proxy (each client's sidecar, or each replica of the gateway), as the simulator counts it: set [clients] proxies to how many there are (one for all clients unless set)";

/// Why a connection limit of 0 is left out: it fails every request.
pub(crate) const ZERO_LIMIT: &str = "a limit of 0 fails every request at the proxy (Envoy answers each with a 503); the simulator takes no limit that fails every request, so the default stands";

/// A proxy's connection limits as a scenario's `limits`: for each of
/// `max_connections`, `max_pending_requests` and `max_requests`, the node
/// that sets it (and its field) or None, then `default` (`why` says whose);
/// None when none is set.
pub(crate) fn limits_entry(
    ctx: &mut Ctx,
    found: [(Option<&Node>, String); 3],
    default: u64,
    why: &str,
) -> Result<Option<Entry>, ImportError> {
    if found.iter().all(|(n, _)| n.is_none()) {
        return Ok(None);
    }
    let mut keys = Vec::new();
    let mut from = Vec::new();
    let names = ["max_connections", "max_pending_requests", "max_requests"];
    for ((node, field), (name, least)) in found.iter().zip(names.into_iter().zip([1, 0, 1])) {
        let v = match node {
            Some(n) => Some((n, ctx.whole(n, field, 0)?.min(u64::from(u32::MAX)))),
            None => None,
        };
        match v {
            Some((n, v)) if v >= least => {
                keys.push(format!("{name} = {v}"));
                from.push(ctx.from(n, field));
            }
            Some((n, _)) => {
                ctx.not_modelled(n, field, ZERO_LIMIT);
                keys.push(format!("{name} = {default}"));
                from.push(format!("{field} = 0 left out: {why} {default}"));
            }
            None => {
                keys.push(format!("{name} = {default}"));
                from.push(format!("{field} absent: {why} {default}"));
            }
        }
    }
    Ok(Some(entry(
        "limits",
        format!("{{ {} }}", keys.join(", ")),
        format!("{} ({PER_PROXY})", from.join("; ")),
    )))
}

/// A value written into the scenario: `key = value`, and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The scenario key, e.g. `max_retries`.
    pub key: String,
    /// Its TOML value, e.g. `3` or `"100ms"`.
    pub value: String,
    /// Where it came from, e.g. `grpc.json:7 retryPolicy.maxAttempts = 4`,
    /// or what default or rule it follows.
    pub from: String,
}

/// `key = value`, from `from`.
pub(crate) fn entry(key: &str, value: String, from: String) -> Entry {
    Entry {
        key: key.to_owned(),
        value,
        from,
    }
}

/// `name` with what a strategy or service name may not hold made `-`
/// (`keep` lists the punctuation kept besides letters and digits).
pub(crate) fn clean_name(name: &str, keep: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || keep.contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// One imported strategy: its keys, the keys of the server it needs
/// (ejection, retries to another replica, the balancer), and the fields
/// its source had that the simulator does not model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Strategy {
    /// Its name.
    pub name: String,
    /// The strategy's keys.
    pub entries: Vec<Entry>,
    /// The server's keys (outlier detection, retries to another replica).
    pub server: Vec<Entry>,
}

/// What one file gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Imported {
    /// The file, as given.
    pub file: String,
    /// Its format, in words.
    pub format: &'static str,
    /// Its strategies.
    pub strategies: Vec<Strategy>,
    /// Fields the simulator does not model: `file:line field = value: why`.
    pub not_modelled: Vec<String>,
}

/// A file that cannot be imported: its name, the line and the field, and
/// what is wrong. Nothing is written.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportError(pub String);

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ImportError {}

/// The reading context: the names of the files read, for messages (a
/// node's `file` is its index here; one file, or a folder's files).
pub(crate) struct Ctx<'a> {
    pub files: &'a [String],
    /// Each document's number in its own file (a folder's documents are
    /// read together); empty when they all come from one file.
    pub numbers: Vec<usize>,
    pub not_modelled: Vec<String>,
}

impl Ctx<'_> {
    /// The number, in its file, of document `d` of those read (from 1), as
    /// messages name it: `[document 2]`.
    pub fn doc(&self, d: usize) -> usize {
        self.numbers.get(d).copied().unwrap_or(d + 1)
    }

    /// `file:line` of `node`.
    pub fn at(&self, node: &Node) -> String {
        let file = self.files.get(node.file).map_or("", String::as_str);
        format!("{file}:{}", node.line)
    }

    /// An error at `node`'s line and `field`.
    pub fn err(&self, node: &Node, field: &str, why: impl std::fmt::Display) -> ImportError {
        ImportError(format!("{}: field `{field}`: {why}", self.at(node)))
    }

    /// Where `node` came from, for a comment: `file:line field = value`.
    pub fn from(&self, node: &Node, field: &str) -> String {
        match node.text() {
            Some(t) => format!("{} {field} = {t}", self.at(node)),
            None => format!("{} {field}", self.at(node)),
        }
    }

    /// A field that is read but not modelled, and why.
    pub fn not_modelled(&mut self, node: &Node, field: &str, why: &str) {
        let mut line = self.from(node, field);
        let _ = write!(line, ": {why}");
        // A field of a shared config (resilience4j's `configs.default`) is
        // read once per instance that uses it: listed once.
        if !self.not_modelled.contains(&line) {
            self.not_modelled.push(line);
        }
    }

    /// A scalar's text, or an error naming what was expected.
    pub fn text<'n>(
        &self,
        node: &'n Node,
        field: &str,
        what: &str,
    ) -> Result<&'n str, ImportError> {
        node.text()
            .ok_or_else(|| self.err(node, field, format!("expected {what}, not a list or a map")))
    }

    /// A number.
    pub fn number(&self, node: &Node, field: &str) -> Result<f64, ImportError> {
        let t = self.text(node, field, "a number")?;
        t.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| self.err(node, field, format!("expected a number, got \"{t}\"")))
    }

    /// A whole number, at least `min`.
    pub fn whole(&self, node: &Node, field: &str, min: u64) -> Result<u64, ImportError> {
        let t = self.text(node, field, "a whole number")?;
        match t.trim().parse::<u64>() {
            Ok(n) if n >= min => Ok(n),
            _ => Err(self.err(
                node,
                field,
                format!("expected a whole number of at least {min}, got \"{t}\""),
            )),
        }
    }

    /// A duration, in nanoseconds: protobuf's JSON form (`"0.1s"`), a Go
    /// duration (`"25ms"`, `"1m30s"`), or a `{ seconds, nanos }` map.
    pub fn duration(&self, node: &Node, field: &str) -> Result<u64, ImportError> {
        if let (Some(s), n) = (node.get("seconds"), node.get("nanos")) {
            let secs = self.whole(s, &format!("{field}.seconds"), 0)?;
            let nanos = match n {
                Some(n) => self.whole(n, &format!("{field}.nanos"), 0)?,
                None => 0,
            };
            return Ok(secs * 1_000_000_000 + nanos);
        }
        let t = self.text(node, field, "a duration such as \"0.1s\" or \"25ms\"")?;
        go_duration(t.trim()).ok_or_else(|| {
            self.err(
                node,
                field,
                format!("expected a duration such as \"0.1s\" or \"25ms\", got \"{t}\""),
            )
        })
    }
}

/// Nanoseconds of a Go or protobuf duration: numbers with units (`h`, `m`,
/// `s`, `ms`, `us`, `µs`, `ns`), one after another.
fn go_duration(t: &str) -> Option<u64> {
    if t.is_empty() {
        return None;
    }
    let mut rest = t;
    let mut total = 0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3.6e12,
            "m" => 6e10,
            "s" => 1e9,
            "ms" => 1e6,
            "us" | "µs" => 1e3,
            "ns" => 1.0,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += number * scale;
    }
    (0.0..1.8e19).contains(&total).then(|| total.round() as u64)
}

/// A duration in the scenario's syntax, exact: "100ms", "1500us", "3s".
pub fn toml_duration(ns: u64) -> String {
    let v = if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    };
    format!("\"{v}\"")
}

/// A TOML list of strings.
pub fn toml_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

/// The documents with each `kind: List` (as `kubectl get -o yaml` writes
/// them) replaced by its items.
fn unlisted(docs: Vec<Node>) -> Vec<Node> {
    docs.into_iter()
        .flat_map(|d| {
            let is_list =
                d.get("kind").and_then(Node::text) == Some("List") && d.get("items").is_some();
            if is_list {
                d.get("items")
                    .map(|i| i.items().to_vec())
                    .unwrap_or_default()
            } else {
                vec![d]
            }
        })
        .collect()
}

/// The format of `docs` (not empty), told by content, and its strategies.
/// `docs` with their keys in protobuf's field names (Envoy's files may
/// spell them in proto3 JSON's lowerCamelCase).
fn proto_names(docs: &[Node]) -> Vec<Node> {
    docs.iter().map(Node::proto_names).collect()
}

fn read_format(ctx: &mut Ctx, docs: &[Node]) -> Result<(&'static str, Vec<Strategy>), ImportError> {
    let is_istio = docs.iter().any(|d| {
        d.get("apiVersion")
            .and_then(Node::text)
            .is_some_and(|a| a.contains("istio.io"))
    });
    Ok(if is_istio {
        (
            "Istio VirtualService and DestinationRule",
            istio::read(ctx, docs)?,
        )
    } else if linkerd::is_linkerd(docs) {
        (
            "Linkerd ServiceProfile and retry annotations",
            linkerd::read(ctx, docs)?,
        )
    } else if docs.iter().any(gateway::is_gateway) {
        (
            "Gateway API routes and retry policies",
            gateway::read(ctx, docs)?,
        )
    } else if let Some(config) = (docs.len() == 1)
        .then(|| grpc::canonical(&docs[0]))
        .filter(|c| c.get("methodConfig").is_some() || c.get("retryThrottling").is_some())
    {
        ("gRPC service config", grpc::read(ctx, &config)?)
    } else if docs.iter().any(resilience4j::is_resilience4j) {
        let mut all = Vec::new();
        for d in docs.iter().filter(|d| resilience4j::is_resilience4j(d)) {
            all.extend(resilience4j::read(ctx, d)?);
        }
        ("resilience4j (Spring Boot)", all)
    } else if let Some((old, field)) = docs.iter().find_map(resilience4j::old_backends) {
        return Err(ctx.err(
            old,
            &field,
            "resilience4j's configuration from before 1.0 (`backends`): later releases read `instances`, and renamed keys such as `maxRetryAttempts` (now `maxAttempts`) and `ringBufferSizeInClosedState` (now `slidingWindowSize`); import a configuration of the release you run",
        ));
    } else if let Some(doc) = docs.iter().find(|d| dotnet::is_dotnet(d)) {
        (
            ".NET resilience options (Microsoft.Extensions.Http.Resilience)",
            dotnet::read(ctx, doc)?,
        )
    } else if let Some(docs) =
        Some(proto_names(docs)).filter(|d| d.iter().any(envoy::has_envoy_fields))
    {
        let dump = docs[0]
            .get("configs")
            .is_some_and(|c| c.items().iter().any(|i| i.get("@type").is_some()));
        (
            if dump {
                "Envoy config_dump"
            } else {
                "Envoy configuration"
            },
            envoy::read(ctx, &docs)?,
        )
    } else if let Some(route) = (docs.len() == 1)
        .then(|| envoy::bare_retry_policy(&docs[0].proto_names()))
        .flatten()
    {
        ("Envoy retry policy", envoy::read(ctx, &[route])?)
    } else {
        return Err(ImportError(format!(
            "{}: not a configuration sim can import: expected a gRPC service config (`methodConfig`, `retryThrottling`), Envoy configuration (a `retry_policy`, `circuit_breakers` or `outlier_detection`, or a bare retry policy: `retry_on`, `num_retries` and its other fields), an Istio VirtualService or DestinationRule, or a Gateway API HTTPRoute or GRPCRoute and the retry policies attached to it (XBackendTrafficPolicy, Envoy Gateway's BackendTrafficPolicy), a Linkerd ServiceProfile or a route or Service with retry.linkerd.io annotations, resilience4j's Spring Boot configuration (resilience4j.retry, circuitbreaker or timelimiter instances), or .NET's resilience options in appsettings.json (a section with Retry, CircuitBreaker, AttemptTimeout, TotalRequestTimeout or Hedging)",
            ctx.at(&docs[0])
        )));
    })
}

/// Reads `path` and imports it: a file, or a folder of them. In a folder,
/// the Kubernetes documents of every file are read together (a
/// DestinationRule in one file applies to a VirtualService in another)
/// and every other file on its own; files are taken in path order, and
/// only `.yaml`, `.yml` and `.json` files are read (hidden folders are
/// not entered).
pub fn import(path: &Path) -> Result<Vec<Imported>, ImportError> {
    if !path.is_dir() {
        let file = path.display().to_string();
        return Ok(vec![import_text(&file, &read(path)?)?]);
    }
    let mut found = Vec::new();
    configs_in(path, &mut found)?;
    let files = found
        .iter()
        .map(|f| Ok((f.display().to_string(), read(f)?)))
        .collect::<Result<Vec<_>, ImportError>>()?;
    import_folder(&path.display().to_string(), &files)
}

/// Imports the files of folder `dir`, given as their names and texts in
/// path order (read from the disk, or from a revision of a repository),
/// as [`import`] imports a folder.
pub fn import_folder(dir: &str, files: &[(String, String)]) -> Result<Vec<Imported>, ImportError> {
    if files.is_empty() {
        return Err(ImportError(format!(
            "{dir}: the folder holds no .yaml, .yml or .json file"
        )));
    }
    let mut names = Vec::new();
    let mut kubernetes = Vec::new();
    let mut out = Vec::new();
    for (name, text) in files {
        let docs = documents(name, text)?;
        let is_kubernetes = docs
            .iter()
            .all(|d| d.get("apiVersion").is_some() && d.get("kind").is_some());
        if is_kubernetes {
            kubernetes.extend(docs.into_iter().map(|d| d.in_file(names.len())));
            names.push(name.clone());
        } else {
            out.push(import_docs(std::slice::from_ref(name), &docs)?);
        }
    }
    if !kubernetes.is_empty() {
        let mut imported = import_docs(&names, &kubernetes)?;
        imported.file = format!("{dir} ({})", names.join(", "));
        out.insert(0, imported);
    }
    Ok(out)
}

/// Whether a file named `name` is one a folder's import reads: a `.yaml`,
/// `.yml` or `.json` file.
pub fn is_config_name(name: &str) -> bool {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
}

/// The text of `path`.
fn read(path: &Path) -> Result<String, ImportError> {
    std::fs::read_to_string(path)
        .map_err(|e| ImportError(format!("{}: cannot read it: {e}", path.display())))
}

/// The configuration files below `dir`, in path order.
fn configs_in(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), ImportError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| ImportError(format!("{}: cannot read the folder: {e}", dir.display())))?;
    let mut paths: Vec<std::path::PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let hidden = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if p.is_dir() && !hidden {
            configs_in(&p, out)?;
        } else if is_config_name(&p.display().to_string()) {
            out.push(p);
        }
    }
    Ok(())
}

/// The documents of `text` (named `file` in messages): `kind: List`s
/// opened, empty documents dropped.
fn documents(file: &str, text: &str) -> Result<Vec<Node>, ImportError> {
    // A NUL byte ends a YAML stream where the parser stops, so what follows
    // would be dropped without a word: no text configuration holds one.
    if let Some(at) = text.find('\0') {
        let line = text[..at].matches('\n').count() + 1;
        let column = at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
        return Err(ImportError(format!(
            "{file}:{line}:{column}: holds a NUL byte (byte {at}), which no JSON or YAML file \
             holds: is it a text configuration? Remove the byte and import it again"
        )));
    }
    let docs = tree::parse(text).map_err(|(line, why)| {
        ImportError(format!(
            "{file}:{line}: cannot be read as JSON or YAML: {why}"
        ))
    })?;
    let docs: Vec<Node> = docs
        .into_iter()
        .filter(|d| !matches!(&d.value, tree::Value::Scalar(s) if s.is_empty()))
        .collect();
    let docs = unlisted(docs);
    if docs.is_empty() {
        return Err(ImportError(format!("{file}: the file is empty")));
    }
    Ok(docs)
}

/// Imports the documents `docs`, read from the files `names`.
fn import_docs(names: &[String], docs: &[Node]) -> Result<Imported, ImportError> {
    let mut numbers = Vec::with_capacity(docs.len());
    for (k, d) in docs.iter().enumerate() {
        let same_file = k > 0 && docs[k - 1].file == d.file;
        numbers.push(if same_file { numbers[k - 1] + 1 } else { 1 });
    }
    let mut ctx = Ctx {
        files: names,
        numbers,
        not_modelled: Vec::new(),
    };
    let (format, strategies) = read_format(&mut ctx, docs)?;
    Ok(Imported {
        file: names.join(", "),
        format,
        strategies,
        not_modelled: ctx.not_modelled,
    })
}

/// Whether strategy `s` of import `i` is service `name`'s policy: named
/// after it (`ratings`), or after it and a route (`ratings-default`,
/// `ratings.prod.svc`), or the only strategy of a file named after it.
pub fn is_service(i: &Imported, s: &Strategy, name: &str) -> bool {
    let stem = Path::new(&i.file)
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s == name);
    s.name == name
        || s.name.starts_with(&format!("{name}-"))
        || s.name.starts_with(&format!("{name}."))
        || (i.strategies.len() == 1 && stem)
}

/// One import per service of a call chain `names`, each holding the one
/// strategy of all `imports` that is that service's: named after it
/// (`ratings`), or after it and a route (`ratings-default`,
/// `ratings.prod.svc`), or the only strategy of a file named after it.
pub fn pick_tiers(imports: &[Imported], names: &[String]) -> Result<Vec<Imported>, ImportError> {
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let found: Vec<(&Imported, &Strategy)> = imports
            .iter()
            .flat_map(|i| i.strategies.iter().map(move |s| (i, s)))
            .filter(|(i, s)| is_service(i, s, name))
            .collect();
        match found.as_slice() {
            [(i, s)] => out.push(Imported {
                file: i.file.clone(),
                format: i.format,
                strategies: vec![(*s).clone()],
                not_modelled: i.not_modelled.clone(),
            }),
            _ => {
                let all: Vec<&str> = imports
                    .iter()
                    .flat_map(|i| i.strategies.iter().map(|s| s.name.as_str()))
                    .collect();
                let why = if found.is_empty() {
                    "no imported policy is named after it".to_owned()
                } else {
                    let several: Vec<&str> = found.iter().map(|(_, s)| s.name.as_str()).collect();
                    format!("several policies could be its: {}", several.join(", "))
                };
                return Err(ImportError(format!(
                    "--graph: service \"{name}\": {why}; the policies imported are {}",
                    all.join(", ")
                )));
            }
        }
    }
    Ok(out)
}

/// Imports `text`, named `file` in messages.
pub fn import_text(file: &str, text: &str) -> Result<Imported, ImportError> {
    import_docs(&[file.to_owned()], &documents(file, text)?)
}

#[cfg(test)]
pub(crate) mod tests {
    /// The first strategy's `key = value` pairs from importing `text` (the
    /// readers' own tests use it).
    pub(crate) fn keys(text: &str) -> Vec<(String, String)> {
        let imported = super::import_text("t", text).unwrap_or_else(|e| panic!("{e}"));
        imported.strategies[0]
            .entries
            .iter()
            .map(|e| (e.key.clone(), e.value.clone()))
            .collect()
    }

    /// The value of `key` in `keys`.
    pub(crate) fn value<'k>(keys: &'k [(String, String)], key: &str) -> &'k str {
        keys.iter()
            .find(|(k, _)| k == key)
            .map_or_else(|| panic!("no {key} in {keys:?}"), |(_, v)| v.as_str())
    }

    use super::*;

    #[test]
    fn durations_of_every_syntax() {
        assert_eq!(go_duration("0.1s"), Some(100_000_000));
        assert_eq!(go_duration("25ms"), Some(25_000_000));
        assert_eq!(go_duration("1m30s"), Some(90_000_000_000));
        assert_eq!(go_duration("1.5s"), Some(1_500_000_000));
        assert_eq!(go_duration("10"), None);
        assert_eq!(go_duration("5 parsecs"), None);
        assert_eq!(toml_duration(100_000_000), "\"100ms\"");
        assert_eq!(toml_duration(1_500_000_000), "\"1500ms\"");
        assert_eq!(toml_duration(3_000_000_000), "\"3s\"");
        assert_eq!(toml_duration(1_500), "\"1500ns\"");
    }
}
