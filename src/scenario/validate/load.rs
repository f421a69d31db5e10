//! `[clients]`: the load the clients offer (closed, open, a population, one-shot)
//! and the share of bad requests.

use super::*;

impl Checker<'_> {
    pub(in crate::scenario) fn bad_fraction(&self, c: &ClientsFile, key: &KeyPath) -> Checked<f64> {
        match c.bad_fraction {
            Some(v) => self.fraction(v, &key.join("bad_fraction"), "bad_fraction", false),
            None => Ok(0.0),
        }
    }

    /// The proxies of `[clients]` (or a strategy's own), for `load`: at
    /// least one, none without clients behind it, a count a request's slot
    /// can name.
    pub(in crate::scenario) fn proxies(
        &self,
        c: &ClientsFile,
        load: &Load,
        key: &KeyPath,
    ) -> Checked<crate::model::Proxies> {
        let default = crate::model::Proxies::default();
        let own_view = c
            .proxy_view
            .map_or(default.own_view, |v| v == ProxyViewFile::Own);
        let Some(n) = c.proxies else {
            return Ok(crate::model::Proxies {
                own_view,
                ..default
            });
        };
        let key = key.join("proxies");
        let max = u32::from(u16::MAX);
        self.ensure((1..=max).contains(&n), &key, || {
            format!("proxies must be from 1 (one proxy for all the clients) to {max}, got {n}")
        })?;
        if let Load::Closed { clients, .. } | Load::OneShot { clients } = load {
            self.ensure(n <= *clients, &key, || {
                format!(
                    "proxies ({n}) must be at most the clients ({clients}): client c is behind \
                     proxy c % proxies, so more proxies than clients leaves a proxy with none"
                )
            })?;
        }
        Ok(crate::model::Proxies {
            count: n as u16,
            own_view,
        })
    }

    /// The load of `[clients]` (or a strategy's own).
    #[expect(
        clippy::too_many_lines,
        reason = "checks each key of [clients] in order, each with its message"
    )]
    pub(in crate::scenario) fn load(&self, c: &ClientsFile, key: &KeyPath) -> Checked<Load> {
        let key = key.clone();
        let misplaced = |field: &str, model: &str| {
            self.err(
                &key.join(field),
                format!(
                    "`{field}` applies to {model}-loop load only (clients.model = \"{model}\")"
                ),
            )
        };
        match c.model {
            LoadModel::Closed => {
                if c.rate.is_some() {
                    return misplaced("rate", "open");
                }
                if c.every.is_some() {
                    return misplaced("every", "open");
                }
                let clients = c.count.unwrap_or(1000);
                let ok = (1..=MAX_CLIENTS).contains(&clients);
                self.ensure(ok, &key.join("count"), || {
                    format!("count must be from 1 to {MAX_CLIENTS}, got {clients}")
                })?;
                let Some(think) = &c.think else {
                    return self.err(&key, "closed-loop load needs `think`, e.g. think = { dist = \"exponential\", mean = \"1s\" }");
                };
                Ok(Load::Closed {
                    clients,
                    think: self.dist(think, &key.join("think"))?,
                })
            }
            LoadModel::OneShot => {
                for (field, set) in [
                    ("rate", c.rate.is_some()),
                    ("think", c.think.is_some()),
                    ("every", c.every.is_some()),
                ] {
                    if set {
                        return self.err(&key.join(field), format!("`{field}` does not apply to one-shot load: each client sends one request at t = 0"));
                    }
                }
                let clients = c.count.unwrap_or(1000);
                let ok = (1..=MAX_CLIENTS).contains(&clients);
                self.ensure(ok, &key.join("count"), || {
                    format!("count must be from 1 to {MAX_CLIENTS}, got {clients}")
                })?;
                Ok(Load::OneShot { clients })
            }
            LoadModel::Open => {
                if c.think.is_some() {
                    return misplaced("think", "closed");
                }
                let rate = match (c.rate, c.count, c.every) {
                    (Some(_), Some(_), _) => {
                        return self.err(
                            &key.join("count"),
                            "open-loop load takes either `rate` (requests per second from all \
                             sources) or `count` and `every` (a population of clients, each \
                             sending a new request every so often), not both",
                        );
                    }
                    (Some(_), None, Some(_)) => {
                        return self.err(
                            &key.join("every"),
                            "`every` goes with `count` (each of `count` clients sends a new \
                             request every so often); with `rate` leave it out",
                        );
                    }
                    (Some(rate), None, None) => rate,
                    (None, Some(count), Some(every)) => {
                        let ok = (1..=MAX_CLIENTS).contains(&count);
                        self.ensure(ok, &key.join("count"), || {
                            format!("count must be from 1 to {MAX_CLIENTS}, got {count}")
                        })?;
                        self.ensure(every.0.0 > 0, &key.join("every"), || {
                            "every must be positive, e.g. every = \"1s\"".into()
                        })?;
                        f64::from(count) / every.0.as_secs_f64()
                    }
                    (None, Some(_), None) => {
                        return self.err(
                            &key.join("every"),
                            "open-loop load from a population needs `every`, each client's mean \
                             time between new requests, e.g. count = 1000 and every = \"1s\"",
                        );
                    }
                    (None, None, Some(_)) => {
                        return self.err(
                            &key.join("count"),
                            "`every` needs `count`, the number of clients, e.g. count = 1000",
                        );
                    }
                    (None, None, None) => {
                        return self.err(
                            &key,
                            "open-loop load needs `rate`, logical requests per second (rate = \
                             500.0), or a population: `count` clients each sending a new request \
                             `every` so often (count = 1000, every = \"1s\")",
                        );
                    }
                };
                let ok = rate.is_finite() && rate > 0.0 && rate <= MAX_RATE;
                let field = if c.rate.is_some() { "rate" } else { "every" };
                self.ensure(ok, &key.join(field), || {
                    format!(
                        "the open-loop rate must be a positive number of requests per second, \
                         at most {MAX_RATE:e}, got {rate}"
                    )
                })?;
                Ok(Load::Open { rate_per_s: rate })
            }
        }
    }
}
