//! `[[outage]]`: the triggers, their windows, kinds and targets (replicas,
//! a share of them, a zone, a tier of a chain).

use super::*;

impl Checker<'_> {
    /// Each strategy's own client population and server, where it has them.
    /// Every replica an outage names exists in the server it hits: the
    /// scenario's, and each strategy's own.
    pub(in crate::scenario) fn outage_replicas(
        &self,
        world: &WorldConfig,
        overrides: &[WorldOverride],
    ) -> Checked<()> {
        let replicas = |m: &ServerModel| match m {
            ServerModel::Capacity(c) => c.slots() as u32,
            ServerModel::Occ => 1,
        };
        let zones = |m: &ServerModel| match m {
            ServerModel::Capacity(c) => c.fleet.zones.clone(),
            ServerModel::Occ => Vec::new(),
        };
        // Outages of a chain's services are checked against the services
        // (`Checker::outage_tiers`); a strategy's own server is tier 0.
        let aims_at_zone = world
            .outages
            .iter()
            .any(|o| o.tier == 0 && matches!(o.targets, Targets::Zone { .. }));
        for (i, o) in overrides.iter().enumerate() {
            if let Some(server) = &o.server {
                if aims_at_zone && zones(server) != zones(&world.server) {
                    return self.err(
                        &KeyPath::key("strategy").at(i).join("server").join("zones"),
                        "an outage aims at a zone, so a strategy's own server must have the \
                         scenario's zones, in the same order",
                    );
                }
            }
        }
        let servers = std::iter::once((None, replicas(&world.server))).chain(
            overrides
                .iter()
                .enumerate()
                .filter_map(|(i, o)| o.server.as_ref().map(|s| (Some(i), replicas(s)))),
        );
        for (strategy, n) in servers {
            for (i, o) in world.outages.iter().enumerate() {
                let Targets::List(list) = &o.targets else {
                    continue;
                };
                if o.tier > 0 {
                    continue;
                }
                if let Some(&bad) = list.iter().find(|&&r| r >= n) {
                    let whose = strategy.map_or("the server".to_string(), |k| {
                        format!("strategy[{k}]'s own server")
                    });
                    return self.err(
                        &KeyPath::key("outage").at(i).join("replicas"),
                        format!(
                            "replica {bad} is out of range: {whose} has {n} replica{}, {}",
                            if n == 1 { "" } else { "s" },
                            if n == 1 {
                                "index 0".to_string()
                            } else {
                                format!("indices 0 to {}", n - 1)
                            }
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// For each outage, the fleet its `zone` is looked up in. An outage of a
    /// service uses the service's zones (a service that does not exist is
    /// reported by `Checker::outage_tiers`; its zones here are none).
    pub(in crate::scenario) fn outage_zones(f: &ScenarioFile) -> Vec<ZonesOf> {
        let entry = f
            .server
            .name
            .as_deref()
            .unwrap_or(crate::model::chain::ENTRY);
        f.outages
            .iter()
            .map(|o| match o.service.as_deref() {
                Some(name) if name != entry => ZonesOf {
                    whose: format!("service \"{name}\""),
                    table: "its [[service]] table",
                    zones: f
                        .services
                        .iter()
                        .find(|s| s.name.as_deref() == Some(name))
                        .and_then(|s| s.zones.clone())
                        .unwrap_or_default(),
                },
                _ => ZonesOf {
                    whose: "the server".into(),
                    table: "[server]",
                    zones: f.server.zones.clone().unwrap_or_default(),
                },
            })
            .collect()
    }

    /// The triggers of `[[outage]]`, in order, each checked against the run's length and the zones it may name.
    #[expect(
        clippy::too_many_lines,
        reason = "checks each key of an [[outage]] in order, each with its message"
    )]
    pub(in crate::scenario) fn outages(
        &self,
        list: &[OutageFile],
        zones: &[ZonesOf],
        duration: SimDuration,
    ) -> Checked<Vec<Outage>> {
        let mut out: Vec<Outage> = Vec::with_capacity(list.len());
        for (i, o) in list.iter().enumerate() {
            let key = KeyPath::key("outage").at(i);
            let start = o.start.0;
            let end = match (o.end, o.length) {
                (Some(end), None) => end.0,
                (None, Some(length)) => SimDuration(start.0.saturating_add(length.0.0)),
                _ => {
                    return self.err(
                        &key,
                        "give the outage's `end` or its `length`, not both and not neither",
                    );
                }
            };
            let end_key = key.join(if o.end.is_some() { "end" } else { "length" });
            self.ensure(end > start, &end_key, || {
                format!("end ({end}) must be after start ({start})")
            })?;
            self.ensure(end <= duration, &end_key, || {
                format!("end ({end}) is after the end of the run ({duration})")
            })?;
            // Overlaps are checked once the tiers are known (outages of
            // different services may overlap: Checker::outage_tiers).
            if let Some(prev) = out.last() {
                let ok = SimTime(start.0) >= prev.start;
                self.ensure(ok, &key.join("start"), || {
                    format!("outages must be listed in order of their start: this one starts at {start}, before the previous one ({})", SimDuration(prev.start.0))
                })?;
            }
            if o.retry_after.is_some() && o.kind != OutageKindFile::Unavailable {
                return self.err(
                    &key.join("retry_after"),
                    "retry_after applies to kind = \"503\" only",
                );
            }
            if o.factor.is_some() && o.kind != OutageKindFile::Brownout {
                return self.err(
                    &key.join("factor"),
                    "factor applies to kind = \"brownout\" only",
                );
            }
            if o.rate.is_some() && o.kind != OutageKindFile::Spike {
                return self.err(&key.join("rate"), "rate applies to kind = \"spike\" only");
            }
            if o.p.is_some() && o.kind != OutageKindFile::Errors {
                return self.err(&key.join("p"), "p applies to kind = \"errors\" only");
            }
            let kind = match o.kind {
                OutageKindFile::Spike => {
                    let Some(rate) = o.rate else {
                        return self.err(&key, "a spike needs `rate`, the extra requests per second, e.g. rate = 2000.0");
                    };
                    let ok = rate.is_finite() && rate > 0.0 && rate <= MAX_RATE;
                    self.ensure(ok, &key.join("rate"), || {
                        format!("rate must be positive and at most {MAX_RATE}, got {rate}")
                    })?;
                    OutageKind::Spike { rate }
                }
                OutageKindFile::Errors => {
                    let Some(p) = o.p else {
                        return self.err(&key, "an errors trigger needs `p`, the probability that an attempt fails, e.g. p = 0.1");
                    };
                    OutageKind::Errors {
                        p: self.fraction(p, &key.join("p"), "p", false)?,
                    }
                }
                OutageKindFile::Reset => OutageKind::Reset,
                OutageKindFile::CacheFlush => OutageKind::CacheFlush,
                OutageKindFile::Blackhole => OutageKind::Blackhole,
                OutageKindFile::Unavailable => {
                    if let Some(ra) = o.retry_after {
                        self.whole_seconds(ra.0, &key.join("retry_after"))?;
                    }
                    OutageKind::Unavailable {
                        retry_after: o.retry_after.map(|d| d.0),
                    }
                }
                OutageKindFile::Brownout => {
                    let Some(f) = o.factor else {
                        return self.err(&key, "a brownout needs `factor`, the remaining capacity in (0, 1], e.g. factor = 0.3");
                    };
                    OutageKind::Brownout {
                        factor: self.fraction(f, &key.join("factor"), "factor", true)?,
                    }
                }
            };
            let given = [o.replicas.is_some(), o.share.is_some(), o.zone.is_some()];
            if given.iter().filter(|&&g| g).count() > 1 {
                return self.err(
                    &key.join(if o.zone.is_some() { "zone" } else { "share" }),
                    "give the replicas an outage hits by `replicas`, by `share` or by `zone`, \
                     only one",
                );
            }
            let targets = match (&o.replicas, o.share) {
                (None, None) if o.zone.is_some() => {
                    let z = o.zone.as_deref().unwrap_or_default();
                    let ZonesOf {
                        whose,
                        table,
                        zones,
                    } = &zones[i];
                    let Some(index) = zones.iter().position(|n| n == z) else {
                        return self.err(
                            &key.join("zone"),
                            if zones.is_empty() {
                                format!("zone {z:?}: {whose} has no zones; list them in {table} zones = [...]")
                            } else {
                                format!("no replica is in zone {z:?}: {whose}'s zones are {}", zones.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", "))
                            },
                        );
                    };
                    Targets::Zone {
                        index,
                        zones: zones.len(),
                    }
                }
                (None, None) => Targets::All,
                (Some(_), Some(_)) => unreachable!("refused above"),
                (Some(list), None) => {
                    self.ensure(!list.is_empty(), &key.join("replicas"), || {
                        "replicas lists the replicas the outage hits, at least one, e.g. [0]".into()
                    })?;
                    Targets::List(list.clone())
                }
                (None, Some(share)) => {
                    Targets::Share(self.fraction(share, &key.join("share"), "share", true)?)
                }
            };
            if targets != Targets::All
                && matches!(kind, OutageKind::Spike { .. } | OutageKind::CacheFlush)
            {
                return self.err(
                    &key.join(if o.share.is_some() {
                        "share"
                    } else if o.zone.is_some() {
                        "zone"
                    } else {
                        "replicas"
                    }),
                    "a load spike or a cache flush hits the whole service: it cannot aim at replicas",
                );
            }
            out.push(Outage {
                kind,
                start: SimTime(start.0),
                end: SimTime(end.0),
                targets,
                tier: 0,
            });
        }
        Ok(out)
    }
}
