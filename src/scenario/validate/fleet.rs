//! A server's fleet: replicas, the balancer, outlier ejection, health checks
//! and the autoscaler.

use super::*;

impl Checker<'_> {
    /// A fleet's zones, retries to another replica, ejection, health checks
    /// and autoscaling.
    pub(in crate::scenario) fn fleet(
        &self,
        s: &ServerFile,
        replicas: u32,
        workers: u32,
        key: &KeyPath,
    ) -> Checked<FleetOptions> {
        let mut f = FleetOptions::default();
        if let Some(a) = &s.autoscale {
            f.autoscale = Some(self.autoscale(a, replicas, workers, &key.join("autoscale"))?);
        }
        let slots = f.autoscale.map_or(replicas, |a| a.max);
        let needs_fleet = |field: &str| {
            format!(
                "`{field}` acts on a fleet: give the server replicas = 2 or more (or an autoscale \
                 table)"
            )
        };
        if let Some(zones) = &s.zones {
            let k = key.join("zones");
            self.ensure(!zones.is_empty(), &k, || {
                "zones lists zone names, e.g. [\"a\", \"b\", \"c\"]; leave it out for none".into()
            })?;
            self.ensure(zones.len() as u32 <= slots, &k, || {
                format!(
                    "{} zones for {slots} replica{}: replica i is in zone i mod {}, so a zone \
                     would have no replica; list at most {slots}",
                    zones.len(),
                    if slots == 1 { "" } else { "s" },
                    zones.len()
                )
            })?;
            for (i, z) in zones.iter().enumerate() {
                self.ensure(!z.trim().is_empty(), &k.at(i), || {
                    "a zone needs a name".into()
                })?;
                self.ensure(!zones[..i].contains(z), &k.at(i), || {
                    format!("zone {z:?} is listed twice")
                })?;
            }
            f.zones = zones.clone();
        }
        if let Some(other) = s.retry_other_replica {
            self.ensure(
                !other || slots > 1,
                &key.join("retry_other_replica"),
                || needs_fleet("retry_other_replica"),
            )?;
            f.retry_other_replica = other;
        }
        if let Some(p) = s.healthy_panic_threshold {
            let k = key.join("healthy_panic_threshold");
            self.percent(p, &k, "healthy_panic_threshold")?;
            f.panic_threshold = p / 100.0;
        }
        if let Some(o) = &s.outlier {
            let k = key.join("outlier");
            self.ensure(slots > 1, &k, || needs_fleet("outlier"))?;
            f.outlier = Some(self.outlier(o, &k)?);
        }
        if let Some(h) = &s.health_check {
            let k = key.join("health_check");
            self.ensure(slots > 1, &k, || needs_fleet("health_check"))?;
            let d = HealthCheckConfig::default();
            let c = HealthCheckConfig {
                interval: self.positive(h.interval, d.interval, &k.join("interval"))?,
                timeout: self.positive(h.timeout, d.timeout, &k.join("timeout"))?,
                unhealthy_threshold: self.at_least_one(
                    h.unhealthy_threshold,
                    d.unhealthy_threshold,
                    &k.join("unhealthy_threshold"),
                )?,
                healthy_threshold: self.at_least_one(
                    h.healthy_threshold,
                    d.healthy_threshold,
                    &k.join("healthy_threshold"),
                )?,
            };
            f.health_check = Some(c);
        }
        Ok(f)
    }

    /// The replicas of a fleet of `slots` whose service time is their own
    /// (`[[server.replica_service]]`): each replica once, within the fleet.
    pub(in crate::scenario) fn replica_service(
        &self,
        s: &ServerFile,
        slots: u32,
        key: &KeyPath,
    ) -> Checked<Vec<(usize, Dist)>> {
        let Some(list) = &s.replica_service else {
            return Ok(Vec::new());
        };
        let key = key.join("replica_service");
        self.ensure(slots > 1, &key, || {
            "`replica_service` acts on a fleet: give the server replicas = 2 or more (one \
             server's service time is `service`)"
                .into()
        })?;
        let mut out: Vec<(usize, Dist)> = Vec::new();
        for (i, entry) in list.iter().enumerate() {
            let k = key.at(i);
            self.ensure(!entry.replicas.is_empty(), &k.join("replicas"), || {
                "replicas lists the replicas, by index from 0, e.g. [0]".into()
            })?;
            let dist = self.dist(&entry.service, &k.join("service"))?;
            self.ensure(dist.mean_nanos() > 0.0, &k.join("service"), || {
                "a service time's mean must be positive".into()
            })?;
            for (j, &r) in entry.replicas.iter().enumerate() {
                let rk = k.join("replicas").at(j);
                self.ensure(r < slots, &rk, || {
                    format!(
                        "replica {r} is not in a fleet of {slots}: from 0 to {}",
                        slots - 1
                    )
                })?;
                self.ensure(!out.iter().any(|(o, _)| *o == r as usize), &rk, || {
                    format!("replica {r} has its service time set twice")
                })?;
                out.push((r as usize, dist.clone()));
            }
        }
        Ok(out)
    }

    pub(in crate::scenario) fn outlier(
        &self,
        o: &OutlierFile,
        key: &KeyPath,
    ) -> Checked<OutlierConfig> {
        let d = OutlierConfig::default();
        let consecutive = match o.consecutive_5xx {
            Some(0) => None,
            Some(n) => Some(n),
            None => d.consecutive_5xx,
        };
        let failure_percentage = match o.failure_percentage_threshold {
            Some(t) => Some(FailurePercentage {
                threshold: self.percent(
                    t,
                    &key.join("failure_percentage_threshold"),
                    "failure_percentage_threshold",
                )? / 100.0,
                minimum_hosts: o.failure_percentage_minimum_hosts.unwrap_or(5),
                request_volume: o.failure_percentage_request_volume.unwrap_or(50),
            }),
            None => {
                for (field, set) in [
                    (
                        "failure_percentage_minimum_hosts",
                        o.failure_percentage_minimum_hosts.is_some(),
                    ),
                    (
                        "failure_percentage_request_volume",
                        o.failure_percentage_request_volume.is_some(),
                    ),
                ] {
                    if set {
                        return self.err(&key.join(field), format!("`{field}` needs failure_percentage_threshold, the failure percentage that ejects (Envoy's default is 85)"));
                    }
                }
                None
            }
        };
        let success_rate = self.success_rate(o, key)?;
        self.ensure(consecutive.is_some() || failure_percentage.is_some() || success_rate.is_some(), &key.join("consecutive_5xx"), || {
            "with consecutive_5xx = 0, enforcing_success_rate = 0 and no failure_percentage_threshold nothing can eject: remove the outlier table or turn one detector on".into()
        })?;
        let c = OutlierConfig {
            consecutive_5xx: consecutive,
            interval: self.positive(o.interval, d.interval, &key.join("interval"))?,
            base_ejection_time: self.positive(
                o.base_ejection_time,
                d.base_ejection_time,
                &key.join("base_ejection_time"),
            )?,
            max_ejection_time: self.positive(
                o.max_ejection_time,
                d.max_ejection_time,
                &key.join("max_ejection_time"),
            )?,
            max_ejection_share: match o.max_ejection_percent {
                Some(p) => {
                    self.percent(p, &key.join("max_ejection_percent"), "max_ejection_percent")?
                        / 100.0
                }
                None => d.max_ejection_share,
            },
            failure_percentage,
            success_rate,
        };
        Ok(c)
    }

    /// Envoy's success-rate detector, on unless `enforcing_success_rate`
    /// is 0 (partial enforcement, a coin per ejection, is not modelled).
    fn success_rate(&self, o: &OutlierFile, key: &KeyPath) -> Checked<Option<SuccessRate>> {
        let d = SuccessRate::default();
        let on = match o.enforcing_success_rate {
            None => true,
            Some(p) => {
                self.ensure(p == 0.0 || p == 100.0, &key.join("enforcing_success_rate"), || {
                    format!("enforcing_success_rate must be 100 (Envoy's default: every outlier found is ejected) or 0 (off), got {p}; ejecting a share of them is not modelled")
                })?;
                p == 100.0
            }
        };
        let factor = o
            .success_rate_stdev_factor
            .unwrap_or(1000.0 * d.stdev_factor);
        self.ensure(factor.is_finite() && factor >= 0.0, &key.join("success_rate_stdev_factor"), || {
            format!("success_rate_stdev_factor is the factor times 1000 (Envoy's default 1900 for 1.9), a number >= 0, got {factor}")
        })?;
        Ok(on.then(|| SuccessRate {
            stdev_factor: factor / 1000.0,
            minimum_hosts: o.success_rate_minimum_hosts.unwrap_or(d.minimum_hosts),
            request_volume: o.success_rate_request_volume.unwrap_or(d.request_volume),
        }))
    }

    pub(in crate::scenario) fn autoscale(
        &self,
        a: &AutoscaleFile,
        replicas: u32,
        workers: u32,
        key: &KeyPath,
    ) -> Checked<AutoscaleConfig> {
        let Some(max) = a.max_replicas else {
            return self.err(
                key,
                "an autoscaler needs max_replicas, the most replicas it may run",
            );
        };
        let Some(target) = a.average_utilization else {
            return self.err(key, "an autoscaler needs average_utilization, the percentage of busy workers it aims at, e.g. 60");
        };
        let Some(startup) = a.startup else {
            return self.err(key, "an autoscaler needs startup, the time from its decision to a replica in service (scheduling, image pull, start, readiness), e.g. \"45s\"");
        };
        let min = a.min_replicas.unwrap_or(1);
        self.ensure(min >= 1, &key.join("min_replicas"), || {
            "min_replicas must be at least 1".into()
        })?;
        self.ensure(
            (1..=MAX_REPLICAS).contains(&max),
            &key.join("max_replicas"),
            || format!("max_replicas must be from 1 to {MAX_REPLICAS}, got {max}"),
        )?;
        self.ensure(min <= replicas && replicas <= max, &key.join("max_replicas"), || {
            format!("the server starts with replicas = {replicas}, which must be from min_replicas ({min}) to max_replicas ({max})")
        })?;
        self.ensure(
            u64::from(max) * u64::from(workers) <= u64::from(MAX_WORKERS),
            &key.join("max_replicas"),
            || format!("{max} replicas of {workers} workers are over the {MAX_WORKERS} workers a run may hold"),
        )?;
        let target = self.percent(
            target,
            &key.join("average_utilization"),
            "average_utilization",
        )?;
        self.ensure(target > 0.0, &key.join("average_utilization"), || {
            "average_utilization must be above 0".into()
        })?;
        let tolerance = a.tolerance.unwrap_or(0.1);
        self.ensure(
            tolerance.is_finite() && (0.0..1.0).contains(&tolerance),
            &key.join("tolerance"),
            || format!("tolerance must be in [0, 1), got {tolerance}"),
        )?;
        Ok(AutoscaleConfig {
            min,
            max,
            target: target / 100.0,
            sync: self.positive(
                a.sync_period,
                SimDuration::from_secs(15),
                &key.join("sync_period"),
            )?,
            tolerance,
            down_window: a
                .scale_down_stabilization
                .map_or(SimDuration::from_secs(300), |d| d.0),
            up_window: a.scale_up_stabilization.map_or(SimDuration::ZERO, |d| d.0),
            startup: startup.0,
        })
    }
}
