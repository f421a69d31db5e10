//! `[server]` (and each `[[service]]`'s server): workers, queue, service
//! times, discipline, shedding, crash and restart.

use super::*;

impl Checker<'_> {
    /// The server model of `[server]` (or a `[[service]]`'s, or a strategy's own).
    #[expect(
        clippy::too_many_lines,
        reason = "checks each key of [server] in order, each with its message"
    )]
    pub(in crate::scenario) fn server(
        &self,
        s: &ServerFile,
        key: &KeyPath,
    ) -> Checked<ServerModel> {
        let key = key.clone();
        if s.kind == Some(ServerKindFile::Occ) {
            for (field, set) in [
                ("workers", s.workers.is_some()),
                ("queue", s.queue.is_some()),
                ("service", s.service.is_some()),
                ("discipline", s.discipline.is_some()),
                ("lifo_after", s.lifo_after.is_some()),
                ("codel", s.codel.is_some()),
                ("limiter", s.limiter.is_some()),
                ("drop_expired", s.drop_expired.is_some()),
                ("shed_at", s.shed_at.is_some()),
                ("shed_retry_after", s.shed_retry_after.is_some()),
                ("crash_at", s.crash_at.is_some()),
                ("restart", s.restart.is_some()),
                ("cold_start", s.cold_start.is_some()),
                ("warmup", s.warmup.is_some()),
                ("reject_cost", s.reject_cost.is_some()),
                ("contention", s.contention.is_some()),
                ("coherency", s.coherency.is_some()),
                ("replicas", s.replicas.is_some()),
                ("balancer", s.balancer.is_some()),
                ("zones", s.zones.is_some()),
                ("retry_other_replica", s.retry_other_replica.is_some()),
                (
                    "healthy_panic_threshold",
                    s.healthy_panic_threshold.is_some(),
                ),
                ("outlier", s.outlier.is_some()),
                ("health_check", s.health_check.is_some()),
                ("autoscale", s.autoscale.is_some()),
            ] {
                if set {
                    return self.err(&key.join(field), format!("`{field}` applies to kind = \"capacity\" only: the OCC record answers instantly"));
                }
            }
            return Ok(ServerModel::Occ);
        }
        let need =
            |field: &str| format!("a capacity server needs `{field}` (or set kind = \"occ\")");
        let Some(workers) = s.workers else {
            return self.err(&key, need("workers"));
        };
        let Some(queue) = s.queue else {
            return self.err(&key, need("queue"));
        };
        let Some(service) = &s.service else {
            return self.err(&key, need("service"));
        };
        let ok = (1..=MAX_WORKERS).contains(&workers);
        self.ensure(ok, &key.join("workers"), || {
            format!("workers must be from 1 to {MAX_WORKERS}, got {workers}")
        })?;
        let service = self.dist(service, &key.join("service"))?;
        self.ensure(service.mean_nanos() > 0.0, &key.join("service"), || {
            "the mean service time must be positive".into()
        })?;
        let shed = match (s.shed_at, s.shed_retry_after) {
            (Some(at), ra) => {
                if let Some(ra) = ra {
                    self.whole_seconds(ra.0, &key.join("shed_retry_after"))?;
                }
                Some(Shedding {
                    at,
                    retry_after: ra.map(|d| d.0),
                })
            }
            (None, Some(_)) => {
                return self.err(
                    &key.join("shed_retry_after"),
                    "shed_retry_after needs shed_at, the queue length at which to shed",
                );
            }
            (None, None) => None,
        };
        let overload = self.overload(s, &key)?;
        let replicas = s.replicas.unwrap_or(1);
        self.ensure(
            (1..=MAX_REPLICAS).contains(&replicas),
            &key.join("replicas"),
            || format!("replicas must be from 1 to {MAX_REPLICAS}, got {replicas}"),
        )?;
        self.ensure(
            u64::from(replicas) * u64::from(workers) <= u64::from(MAX_WORKERS),
            &key.join("replicas"),
            || {
                format!(
                    "{replicas} replicas of {workers} workers are {} workers in all, over the \
                     {MAX_WORKERS} a run may hold: fewer replicas or workers",
                    u64::from(replicas) * u64::from(workers)
                )
            },
        )?;
        let fleet = self.fleet(s, replicas, workers, &key)?;
        let slots = fleet.autoscale.map_or(replicas, |a| a.max.max(replicas));
        let replica_service = self.replica_service(s, slots, &key)?;
        Ok(ServerModel::Capacity(ServerConfig {
            fleet,
            replicas,
            balancer: match s.balancer {
                None | Some(BalancerFile::RoundRobin) => Balancer::RoundRobin,
                Some(BalancerFile::Random) => Balancer::Random,
                Some(BalancerFile::LeastOutstanding) => Balancer::LeastOutstanding,
                Some(BalancerFile::PowerOfTwo) => Balancer::PowerOfTwo,
                Some(BalancerFile::PickFirst) => Balancer::PickFirst,
            },
            overload,
            workers,
            queue_capacity: queue,
            service,
            discipline: self.discipline(s, &key)?,
            drop_expired: s.drop_expired.unwrap_or(false),
            shed,
            codel: match &s.codel {
                Some(c) => Some(self.codel(c, &key.join("codel"))?),
                None => None,
            },
            limiter: match &s.limiter {
                Some(l) => Some(self.limiter(l, &key.join("limiter"))?),
                None => None,
            },
            replica_service,
        }))
    }

    /// The overload behaviours of a capacity server's table.
    pub(in crate::scenario) fn overload(&self, s: &ServerFile, key: &KeyPath) -> Checked<Overload> {
        let mut o = Overload::default();
        if let Some(at) = s.crash_at {
            self.ensure(at >= 1, &key.join("crash_at"), || {
                "crash_at must be at least 1: the number of requests held (queued plus in service) past which the server crashes".into()
            })?;
            o.crash_at = Some(at);
        }
        if let Some(r) = s.restart {
            self.ensure(s.crash_at.is_some(), &key.join("restart"), || {
                "restart is the down time after a crash: it needs crash_at".into()
            })?;
            self.ensure(r.0.0 > 0, &key.join("restart"), || {
                "restart must be positive, e.g. \"10s\"".into()
            })?;
            o.restart = r.0;
        }
        match (s.cold_start, s.warmup) {
            (Some(c), Some(w)) => {
                o.cold_capacity = self.fraction(c, &key.join("cold_start"), "cold_start", true)?;
                self.ensure(w.0.0 > 0, &key.join("warmup"), || {
                    "warmup must be positive, e.g. \"30s\"".into()
                })?;
                o.warmup = w.0;
            }
            (None, None) => {}
            (Some(_), None) => {
                return self.err(
                    &key.join("cold_start"),
                    "cold_start needs warmup, the time to get back to full capacity",
                );
            }
            (None, Some(_)) => {
                return self.err(
                    &key.join("warmup"),
                    "warmup needs cold_start, the share of capacity right after a restart",
                );
            }
        }
        if let Some(c) = s.reject_cost {
            self.ensure(c.0.0 > 0, &key.join("reject_cost"), || {
                "reject_cost must be positive, e.g. \"1ms\" (leave it out for free refusals)".into()
            })?;
            o.reject_cost = Some(c.0);
        }
        for (field, v, slot) in [
            ("contention", s.contention, &mut o.contention),
            ("coherency", s.coherency, &mut o.coherency),
        ] {
            if let Some(v) = v {
                self.ensure(
                    v.is_finite() && (0.0..=1.0).contains(&v),
                    &key.join(field),
                    || format!("{field} must be from 0 to 1, got {v}"),
                )?;
                *slot = v;
            }
        }
        Ok(o)
    }
}
