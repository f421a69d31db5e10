//! Checks a call chain: `[[service]]` tables, the `calls` of each tier, and
//! the policy each strategy gives the calls to each service.

use std::collections::BTreeMap;

use super::{Checked, Checker};
use crate::engine::SimDuration;
use crate::model::chain::{CallMode, Calls, ChainConfig, Service};
use crate::model::{ServerConfig, ServerModel};
use crate::scenario::locate::KeyPath;
use crate::scenario::schema::{CallFile, CallModeFile, RetryFile, ScenarioFile, ServerFile};

fn mode(m: Option<CallModeFile>) -> Option<CallMode> {
    m.map(|m| match m {
        CallModeFile::Sequence => CallMode::Sequence,
        CallModeFile::Parallel => CallMode::Parallel,
    })
}

impl Checker<'_> {
    /// The chain the file declares, if it declares one (a `[[service]]`, or
    /// `calls` on the server).
    #[expect(
        clippy::too_many_lines,
        reason = "checks each key of the chain in the file order, each with its message"
    )]
    pub(in crate::scenario) fn chain(
        &self,
        f: &ScenarioFile,
        tier0: &ServerModel,
        network_mean_ns: f64,
        duration: SimDuration,
    ) -> Checked<Option<ChainConfig>> {
        let server = KeyPath::key("server");
        if f.services.is_empty() {
            for (field, set) in [
                ("name", f.server.name.is_some()),
                ("calls", f.server.calls.is_some()),
                ("calls_mode", f.server.calls_mode.is_some()),
            ] {
                if set {
                    return self.err(
                        &server.join(field),
                        format!("`{field}` names services the server calls: declare each in a [[service]] table with its `name`"),
                    );
                }
            }
            return Ok(None);
        }
        let ServerModel::Capacity(tier0) = tier0 else {
            return self.err(
                &KeyPath::key("service"),
                "the OCC record calls no services: remove the [[service]] tables",
            );
        };
        let entry = f
            .server
            .name
            .clone()
            .unwrap_or_else(|| crate::model::chain::ENTRY.to_owned());
        self.service_name(&entry, &server.join("name"))?;
        let tables = std::iter::once((&f.server, server.clone())).chain(
            f.services
                .iter()
                .enumerate()
                .map(|(i, s)| (s, KeyPath::key("service").at(i))),
        );
        for (t, key) in tables {
            for (field, set) in [
                ("codel", t.codel.is_some()),
                ("limiter", t.limiter.is_some()),
            ] {
                if set {
                    return self.err(
                        &key.join(field),
                        format!("`{field}` is not modelled in a call chain yet: put it on a server without [[service]] tables"),
                    );
                }
            }
        }
        let mut names = vec![entry.clone()];
        let mut services = Vec::with_capacity(f.services.len());
        for (i, s) in f.services.iter().enumerate() {
            let key = KeyPath::key("service").at(i);
            let Some(name) = s.name.clone() else {
                return self.err(&key, "every [[service]] needs a `name`, which `calls` use");
            };
            self.service_name(&name, &key.join("name"))?;
            if names.contains(&name) {
                return self.err(
                    &key.join("name"),
                    format!("two tiers are named \"{name}\"; names must be unique (the [server] is \"{entry}\")"),
                );
            }
            names.push(name.clone());
            let model = self.server(s, &key)?;
            let ServerModel::Capacity(cfg) = model else {
                return self.err(
                    &key.join("kind"),
                    "a service is a capacity server: remove `kind`",
                );
            };
            services.push(Service { name, server: cfg });
        }
        let tables: Vec<(&ServerFile, KeyPath)> = std::iter::once((&f.server, server.clone()))
            .chain(
                f.services
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (s, KeyPath::key("service").at(i))),
            )
            .collect();
        let mut calls = Vec::with_capacity(tables.len());
        for (t, key) in &tables {
            let (mut to, mut probability) = (Vec::new(), Vec::new());
            for (j, call) in t.calls.iter().flatten().enumerate() {
                let (callee, p) = match call {
                    CallFile::Name(n) => (n, 1.0),
                    CallFile::Table {
                        service,
                        probability,
                    } => {
                        let p = probability.unwrap_or(1.0);
                        let ok = p.is_finite() && p > 0.0 && p <= 1.0;
                        self.ensure(ok, &key.join("calls").at(j).join("probability"), || {
                            format!("the probability a call is made must be in (0, 1], got {p}")
                        })?;
                        (service, p)
                    }
                };
                let Some(k) = names.iter().position(|n| n == callee) else {
                    return self.err(
                        &key.join("calls").at(j),
                        format!(
                            "no service is named \"{callee}\"; the services are {}",
                            names[1..]
                                .iter()
                                .map(|n| format!("\"{n}\""))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    );
                };
                to.push(k);
                probability.push(p);
            }
            if t.calls_mode.is_some() && to.is_empty() {
                return self.err(&key.join("calls_mode"), "`calls_mode` needs `calls`");
            }
            calls.push(Calls {
                to,
                probability,
                mode: mode(t.calls_mode),
            });
        }
        self.acyclic(&calls, &names, &tables)?;
        // Every service is called by someone, through the server.
        let mut reached = vec![false; names.len()];
        reached[0] = true;
        for k in crate::model::chain::topological(&calls) {
            if reached[k] {
                for &c in &calls[k].to {
                    reached[c] = true;
                }
            }
        }
        if let Some(k) = reached.iter().position(|r| !r) {
            return self.err(
                &KeyPath::key("service").at(k - 1).join("name"),
                format!("nothing the server calls calls \"{}\": add it to a tier's `calls`, or remove it", names[k]),
            );
        }
        let chain = ChainConfig {
            entry,
            services,
            calls,
        };
        self.finishes(&chain, tier0, network_mean_ns, duration, &tables)?;
        Ok(Some(chain))
    }

    /// The tier each outage hits (`service`), checked against the chain.
    pub(in crate::scenario) fn outage_tiers(
        &self,
        files: &[crate::scenario::schema::OutageFile],
        mut outages: Vec<crate::model::Outage>,
        chain: Option<&ChainConfig>,
    ) -> Checked<Vec<crate::model::Outage>> {
        for (i, (f, o)) in files.iter().zip(outages.iter_mut()).enumerate() {
            let Some(name) = &f.service else {
                continue;
            };
            let key = KeyPath::key("outage").at(i).join("service");
            let Some(chain) = chain else {
                return self.err(&key, "`service` aims at a service of a call chain: declare it in a [[service]] table");
            };
            let Some(k) = (0..chain.tiers()).find(|&k| chain.name(k) == name) else {
                return self.err(
                    &key,
                    format!(
                        "no tier is named \"{name}\"; the tiers are {}",
                        (0..chain.tiers())
                            .map(|k| format!("\"{}\"", chain.name(k)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            };
            if k > 0 {
                let n = chain.services[k - 1].server.slots();
                if let crate::model::Targets::List(list) = &o.targets {
                    if let Some(&bad) = list.iter().find(|&&r| r as usize >= n) {
                        return self.err(
                            &KeyPath::key("outage").at(i).join("replicas"),
                            format!(
                                "replica {bad} is out of range: \"{name}\" has {n} (from 0 to {})",
                                n - 1
                            ),
                        );
                    }
                }
                if matches!(o.kind, crate::model::OutageKind::Spike { .. }) {
                    return self.err(
                        &key,
                        "a load spike adds users' requests: it hits the server",
                    );
                }
            }
            o.tier = k;
        }
        // One server is in one outage at a time: outages of the same tier
        // must not overlap; those of different tiers may.
        for (i, o) in outages.iter().enumerate() {
            if let Some(prev) = outages[..i].iter().rev().find(|p| p.tier == o.tier) {
                let ok = o.start >= prev.end;
                self.ensure(ok, &KeyPath::key("outage").at(i).join("start"), || {
                    let whose = match chain {
                        Some(c) => format!("\"{}\"", c.name(o.tier)),
                        None => "the server".to_string(),
                    };
                    format!(
                        "outages of the same service must not overlap: this one on {whose} starts at {}, before the previous one on it ends ({}); outages of different services may",
                        SimDuration(o.start.0),
                        SimDuration(prev.end.0)
                    )
                })?;
            }
        }
        Ok(outages)
    }

    fn service_name(&self, name: &str, key: &KeyPath) -> Checked<()> {
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c));
        self.ensure(ok, key, || {
            format!("service name \"{name}\": use letters, digits, '-' and '_' only")
        })
    }

    /// A cycle of calls never ends: the error is at the call that closes it.
    fn acyclic(
        &self,
        calls: &[Calls],
        names: &[String],
        tables: &[(&ServerFile, KeyPath)],
    ) -> Checked<()> {
        // 0 unvisited, 1 on the path, 2 done.
        fn visit(
            k: usize,
            calls: &[Calls],
            state: &mut [u8],
            path: &mut Vec<usize>,
        ) -> Option<(usize, usize)> {
            state[k] = 1;
            path.push(k);
            for (j, &c) in calls[k].to.iter().enumerate() {
                match state[c] {
                    1 => return Some((k, j)),
                    0 => {
                        if let Some(found) = visit(c, calls, state, path) {
                            return Some(found);
                        }
                    }
                    _ => {}
                }
            }
            path.pop();
            state[k] = 2;
            None
        }
        let mut state = vec![0u8; calls.len()];
        for start in 0..calls.len() {
            if state[start] != 0 {
                continue;
            }
            let mut path = Vec::new();
            if let Some((k, j)) = visit(start, calls, &mut state, &mut path) {
                let back = calls[k].to[j];
                let from = path.iter().position(|&p| p == back).unwrap_or(0);
                let cycle: Vec<&str> = path[from..]
                    .iter()
                    .chain(std::iter::once(&back))
                    .map(|&p| names[p].as_str())
                    .collect();
                return self.err(
                    &tables[k].1.join("calls").at(j),
                    format!(
                        "calls go round in a cycle ({}): a request would never end",
                        cycle.join(" -> ")
                    ),
                );
            }
        }
        Ok(())
    }

    /// A request that cannot get through the chain within the run is an
    /// error: the fastest pass (mean service times, two network hops a
    /// call, parallel calls overlapping) must fit in the duration.
    fn finishes(
        &self,
        chain: &ChainConfig,
        tier0: &ServerConfig,
        network_mean_ns: f64,
        duration: SimDuration,
        tables: &[(&ServerFile, KeyPath)],
    ) -> Checked<()> {
        let time = chain.hold_ns(tier0, network_mean_ns);
        let total = time[0] + 2.0 * network_mean_ns;
        self.ensure(total < duration.0 as f64, &tables[0].1.join("calls"), || {
            format!(
                "one request through the chain takes at least {} on average (service times and network hops), longer than the run ({duration}): fewer calls, faster services or a longer duration",
                SimDuration::from_nanos_f64(total)
            )
        })
    }

    /// Without services, no table may ask for deadlines or cancellations
    /// to propagate: there are no calls to carry them.
    fn no_propagation(&self, defaults: &RetryFile, list: &[RetryFile]) -> Checked<()> {
        let tables = std::iter::once((defaults, KeyPath::key("retry"))).chain(
            list.iter()
                .enumerate()
                .map(|(i, s)| (s, KeyPath::key("strategy").at(i))),
        );
        for (t, key) in tables {
            for (set, name) in [
                (t.propagate_deadline.is_some(), "propagate_deadline"),
                (t.propagate_cancel.is_some(), "propagate_cancel"),
            ] {
                if set {
                    return self.err(
                        &key.join(name),
                        format!("`{name}` applies to calls between services: declare the services in [[service]] tables"),
                    );
                }
            }
        }
        Ok(())
    }

    /// Each strategy's policy for the calls to each service (tier 1 first):
    /// `[strategy.tiers.NAME]` over the strategy's own keys.
    pub(in crate::scenario) fn tier_tables<'f>(
        &self,
        chain: Option<&ChainConfig>,
        defaults: &'f RetryFile,
        list: &'f [RetryFile],
    ) -> Checked<Vec<Vec<Option<&'f RetryFile>>>> {
        if chain.is_none() {
            self.no_propagation(defaults, list)?;
        }
        let mut out = Vec::with_capacity(list.len());
        for (i, s) in list.iter().enumerate() {
            let key = KeyPath::key("strategy").at(i);
            let tiers: &BTreeMap<String, RetryFile> = match &s.tiers {
                Some(t) => t,
                None => {
                    out.push(chain.map_or(Vec::new(), |c| vec![None; c.services.len()]));
                    continue;
                }
            };
            let Some(chain) = chain else {
                return self.err(
                    &key.join("tiers"),
                    "`tiers` sets the policy of calls between services: declare the services in [[service]] tables",
                );
            };
            for (name, t) in tiers {
                let tk = key.join("tiers").join(name);
                if !chain.services.iter().any(|s| &s.name == name) {
                    return self.err(
                        &tk,
                        format!(
                            "no service is named \"{name}\"; the services are {}",
                            chain
                                .services
                                .iter()
                                .map(|s| format!("\"{}\"", s.name))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    );
                }
                for (field, set) in [
                    ("name", t.name.is_some()),
                    ("clients", t.clients.is_some()),
                    ("server", t.server.is_some()),
                    ("tiers", t.tiers.is_some()),
                ] {
                    if set {
                        return self.err(
                            &tk.join(field),
                            format!("`{field}` cannot be set for one service's calls"),
                        );
                    }
                }
            }
            out.push(
                chain
                    .services
                    .iter()
                    .map(|svc| tiers.get(&svc.name))
                    .collect(),
            );
        }
        if defaults.tiers.is_some() {
            return self.err(
                &KeyPath::key("retry").join("tiers"),
                "`tiers` belongs to each [[strategy]]",
            );
        }
        Ok(out)
    }
}
