//! `[server]`'s own defences: the queue's discipline (`discipline`,
//! `lifo_after`), CoDel (`[server.codel]`) and an adaptive concurrency
//! limit (`[server.limiter]`); and the look-aside cache (`[cache]`).

use super::*;
use crate::model::cache::{CacheConfig, Popularity};
use crate::model::{Aimd, Codel, EnvoyGradient, Gradient2, LimiterConfig, Vegas};
use crate::scenario::schema::{CacheFile, CodelFile, LimiterFile, LimiterKindFile};

impl Checker<'_> {
    /// The queue's discipline: `discipline`, and `lifo_after` for
    /// adaptive LIFO (100 ms, "Fail at Scale"'s interval, by default).
    pub(in crate::scenario) fn discipline(
        &self,
        s: &ServerFile,
        key: &KeyPath,
    ) -> Checked<Discipline> {
        let d = match s.discipline {
            Some(DisciplineFile::Lifo) => Discipline::Lifo,
            Some(DisciplineFile::AdaptiveLifo) => Discipline::AdaptiveLifo {
                after: self.positive(
                    s.lifo_after,
                    SimDuration::from_millis(100),
                    &key.join("lifo_after"),
                )?,
            },
            Some(DisciplineFile::Fifo) | None => Discipline::Fifo,
        };
        if s.lifo_after.is_some() && !matches!(d, Discipline::AdaptiveLifo { .. }) {
            return self.err(
                &key.join("lifo_after"),
                "lifo_after applies to discipline = \"adaptive-lifo\" only: how long the queue \
                 must stay non-empty before the newest request goes first",
            );
        }
        Ok(d)
    }

    /// `[server.codel]`: RFC 8289's target (5 ms) and interval (100 ms).
    pub(in crate::scenario) fn codel(&self, c: &CodelFile, key: &KeyPath) -> Checked<Codel> {
        let target = self.positive(c.target, SimDuration::from_millis(5), &key.join("target"))?;
        let interval = self.positive(
            c.interval,
            SimDuration::from_millis(100),
            &key.join("interval"),
        )?;
        self.ensure(target < interval, &key.join("target"), || {
            format!(
                "target ({target}) must be shorter than interval ({interval}): CoDel drops once \
                 the sojourn has stayed above target for an interval (RFC 8289 suggests 5-10% of it)"
            )
        })?;
        Ok(Codel { target, interval })
    }

    /// `[server.limiter]`: the kind's own keys, its defaults elsewhere; a
    /// key of another kind is refused.
    pub(in crate::scenario) fn limiter(
        &self,
        l: &LimiterFile,
        key: &KeyPath,
    ) -> Checked<LimiterConfig> {
        self.limiter_keys(l, key)?;
        let count = |v: Option<u32>, d: u32, field: &str| self.at_least_one(v, d, &key.join(field));
        Ok(match l.kind {
            LimiterKindFile::Gradient => LimiterConfig::Gradient(self.envoy_gradient(l, key)?),
            LimiterKindFile::Vegas => {
                let d = Vegas::default();
                let initial = count(l.initial, d.initial, "initial")?;
                let max = count(l.max, d.max, "max")?;
                self.limit_range(initial, 1, max, key)?;
                LimiterConfig::Vegas(Vegas {
                    initial,
                    max,
                    smoothing: self.smoothing(l.smoothing, d.smoothing, key)?,
                    probe_multiplier: count(
                        l.probe_multiplier,
                        d.probe_multiplier,
                        "probe_multiplier",
                    )?,
                })
            }
            LimiterKindFile::Gradient2 => {
                let d = Gradient2::default();
                let initial = count(l.initial, d.initial, "initial")?;
                let min = count(l.min, d.min, "min")?;
                let max = count(l.max, d.max, "max")?;
                self.limit_range(initial, min, max, key)?;
                LimiterConfig::Gradient2(Gradient2 {
                    initial,
                    min,
                    max,
                    smoothing: self.smoothing(l.smoothing, d.smoothing, key)?,
                    queue_size: l.queue_size.unwrap_or(d.queue_size),
                    long_window: count(l.long_window, d.long_window, "long_window")?,
                })
            }
            LimiterKindFile::Aimd => {
                let d = Aimd::default();
                let ratio = l.backoff_ratio.unwrap_or(d.backoff_ratio);
                self.ensure((0.5..1.0).contains(&ratio), &key.join("backoff_ratio"), || {
                    format!("backoff_ratio must be in [0.5, 1), as Netflix's AIMDLimit requires, got {ratio}")
                })?;
                LimiterConfig::Aimd(Aimd {
                    initial: count(l.initial, d.initial, "initial")?,
                    backoff_ratio: ratio,
                    timeout: self.positive(l.timeout, d.timeout, &key.join("timeout"))?,
                })
            }
        })
    }

    /// `[server.limiter]` of kind "gradient": Envoy's fields, percentages
    /// as Envoy writes them.
    fn envoy_gradient(&self, l: &LimiterFile, key: &KeyPath) -> Checked<EnvoyGradient> {
        let count = |v: Option<u32>, d: u32, field: &str| self.at_least_one(v, d, &key.join(field));
        let d = EnvoyGradient::default();
        let min_concurrency = count(l.min_concurrency, d.min_concurrency, "min_concurrency")?;
        let max_limit = count(l.max, d.max_limit, "max")?;
        self.ensure(max_limit >= min_concurrency, &key.join("max"), || {
            format!("max ({max_limit}) must be at least min_concurrency ({min_concurrency})")
        })?;
        let pct = |v: Option<f64>, d: f64, field: &str| -> Checked<f64> {
            v.map_or(Ok(d), |v| {
                Ok(self.percent(v, &key.join(field), field)? / 100.0)
            })
        };
        let percentile = pct(l.percentile, d.percentile, "percentile")?;
        self.ensure(percentile > 0.0, &key.join("percentile"), || {
            "percentile must be above 0: the latency percentile each window is summarised by".into()
        })?;
        Ok(EnvoyGradient {
            update_interval: self.positive(
                l.update_interval,
                d.update_interval,
                &key.join("update_interval"),
            )?,
            percentile,
            min_rtt_interval: self.positive(
                l.min_rtt_interval,
                d.min_rtt_interval,
                &key.join("min_rtt_interval"),
            )?,
            request_count: count(l.request_count, d.request_count, "request_count")?,
            jitter: pct(l.jitter, d.jitter, "jitter")?,
            min_concurrency,
            buffer: pct(l.buffer, d.buffer, "buffer")?,
            max_limit,
        })
    }

    /// Refuses a `[server.limiter]` key that belongs to another kind.
    fn limiter_keys(&self, l: &LimiterFile, key: &KeyPath) -> Checked<()> {
        let keys: [(&str, bool, &[LimiterKindFile]); 16] = {
            use LimiterKindFile::{Aimd as A, Gradient as G, Gradient2 as G2, Vegas as V};
            [
                ("update_interval", l.update_interval.is_some(), &[G]),
                ("percentile", l.percentile.is_some(), &[G]),
                ("min_rtt_interval", l.min_rtt_interval.is_some(), &[G]),
                ("request_count", l.request_count.is_some(), &[G]),
                ("jitter", l.jitter.is_some(), &[G]),
                ("min_concurrency", l.min_concurrency.is_some(), &[G]),
                ("buffer", l.buffer.is_some(), &[G]),
                ("initial", l.initial.is_some(), &[V, G2, A]),
                ("min", l.min.is_some(), &[G2]),
                ("max", l.max.is_some(), &[G, V, G2]),
                ("smoothing", l.smoothing.is_some(), &[V, G2]),
                ("probe_multiplier", l.probe_multiplier.is_some(), &[V]),
                ("queue_size", l.queue_size.is_some(), &[G2]),
                ("long_window", l.long_window.is_some(), &[G2]),
                ("backoff_ratio", l.backoff_ratio.is_some(), &[A]),
                ("timeout", l.timeout.is_some(), &[A]),
            ]
        };
        let name = |k: LimiterKindFile| match k {
            LimiterKindFile::Gradient => "gradient",
            LimiterKindFile::Vegas => "vegas",
            LimiterKindFile::Gradient2 => "gradient2",
            LimiterKindFile::Aimd => "aimd",
        };
        for (field, set, kinds) in keys {
            if set && !kinds.contains(&l.kind) {
                let of: Vec<&str> = kinds.iter().map(|&k| name(k)).collect();
                return self.err(
                    &key.join(field),
                    format!(
                        "`{field}` is a key of kind = {}, not of kind = \"{}\"",
                        of.iter()
                            .map(|k| format!("\"{k}\""))
                            .collect::<Vec<_>>()
                            .join(" or "),
                        name(l.kind)
                    ),
                );
            }
        }
        Ok(())
    }

    /// `initial` within `[min, max]`.
    fn limit_range(&self, initial: u32, min: u32, max: u32, key: &KeyPath) -> Checked<()> {
        self.ensure(min <= max, &key.join("max"), || {
            format!("max ({max}) must be at least min ({min})")
        })?;
        self.ensure((min..=max).contains(&initial), &key.join("initial"), || {
            format!("initial ({initial}) must be from {min} to {max}")
        })
    }

    /// A limiter's `smoothing`, in (0, 1].
    fn smoothing(&self, v: Option<f64>, default: f64, key: &KeyPath) -> Checked<f64> {
        let v = v.unwrap_or(default);
        self.fraction(v, &key.join("smoothing"), "smoothing", true)
    }

    /// `[cache]`: keys, popularity, and the capacity (or the steady hit rate
    /// that sets it).
    pub(in crate::scenario) fn cache(&self, c: &CacheFile, key: &KeyPath) -> Checked<CacheConfig> {
        let keys = c.keys.unwrap_or(100_000);
        self.ensure(
            (1..=MAX_CACHE_KEYS).contains(&keys),
            &key.join("keys"),
            || format!("keys must be from 1 to {MAX_CACHE_KEYS}, got {keys}"),
        )?;
        let popularity = match c.zipf {
            None => Popularity::Uniform,
            Some(s) => {
                self.ensure(
                    s.is_finite() && s > 0.0 && s <= 10.0,
                    &key.join("zipf"),
                    || {
                        format!(
                            "zipf is the popularity's exponent, above 0 and at most 10, got {s}"
                        )
                    },
                )?;
                Popularity::Zipf { s }
            }
        };
        let mut cfg = CacheConfig {
            keys,
            popularity,
            capacity: 0,
            ttl: match c.ttl {
                Some(t) => Some(self.positive(Some(t), SimDuration::ZERO, &key.join("ttl"))?),
                None => None,
            },
            warm: c.warm.unwrap_or(true),
            miss_limit: match c.miss_limit {
                Some(r) => {
                    let ok = r.is_finite() && r > 0.0 && r <= MAX_RATE;
                    self.ensure(ok, &key.join("miss_limit"), || {
                        format!(
                            "miss_limit is misses a second, above 0 and at most {MAX_RATE}, got {r}"
                        )
                    })?;
                    Some(r)
                }
                None => None,
            },
        };
        cfg.capacity = match (c.capacity, c.hit_rate) {
            (Some(n), None) => {
                self.ensure(n <= keys, &key.join("capacity"), || {
                    format!("capacity ({n}) is at most keys ({keys}): a cache holds each key once")
                })?;
                n
            }
            (None, Some(h)) => {
                let h = self.fraction(h, &key.join("hit_rate"), "hit_rate", false)?;
                // The smallest capacity whose steady hit rate reaches h.
                let reach = |n: u32| CacheConfig { capacity: n, ..cfg }.hit_rate() >= h - 1e-12;
                let (mut lo, mut hi) = (0, keys);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if reach(mid) { hi = mid } else { lo = mid + 1 }
                }
                lo
            }
            (Some(_), Some(_)) => {
                return self.err(
                    &key.join("hit_rate"),
                    "give the cache's `capacity` or its steady `hit_rate`, not both",
                );
            }
            (None, None) => {
                return self.err(key, "a cache needs `capacity` (entries) or `hit_rate` (its steady hit rate, which sets the capacity)");
            }
        };
        Ok(cfg)
    }
}
