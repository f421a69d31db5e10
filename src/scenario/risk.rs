//! `[risk]`: triggers at random. One trigger of the file, whose size (a
//! key: an outage's length, a spike's rate, a brownout's capacity left, a
//! failure probability) each trigger draws from a distribution, coming so
//! many times a day; what counts as tipped (requests in progress) and as
//! recovered; and how hard the estimate works (walks per level, independent
//! estimates, brute-force trials to check it against).

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp, LogNormal};

use super::Scenario;
use super::locate::{KeyPath, Seg};
use super::schema::{RiskFile, SizeFile};
use super::sweep::{Number, unify};
use super::validate::Checker;
use crate::engine::{SimDuration, SimTime};
use crate::model::sim::Watched;
use crate::model::{OutageKind, WorldConfig};

/// Most walks per level.
pub const MAX_EFFORT: u32 = 1_000_000;
/// Most independent estimates.
pub const MAX_REPEATS: u32 = 1000;
/// Most brute-force trials.
pub const MAX_BRUTE: u32 = 100_000_000;

/// A validated `[risk]`.
#[derive(Clone, Debug)]
pub struct Risk {
    /// The key each trigger draws, as written (`outage[0].rate`).
    pub trigger: String,
    /// Which outage it is.
    pub outage: usize,
    /// Which of its fields.
    pub field: Field,
    /// Whether the size is a duration (in seconds in every output).
    pub duration: bool,
    /// The size's distribution.
    pub size: Size,
    /// Triggers a day, on average.
    pub per_day: f64,
    /// What is watched.
    pub watch: Watch,
    /// The watched count at which the world counts as tipped.
    pub tipped: u64,
    /// The watched count at or under which, once the trigger is over, the
    /// world has recovered; `None`: the median at the trigger's start.
    pub calm: Option<u64>,
    /// Time given after the trigger's end.
    pub after: SimDuration,
    /// Walks per level.
    pub effort: u32,
    /// Independent estimates.
    pub repeats: u32,
    /// Brute-force trials (0: none).
    pub brute: u32,
}

/// What a walk watches: the count that climbs when a world tips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watch {
    /// Attempts held at the server, queued or in service (every
    /// replica's): the Markov twin's requests at the server.
    Held,
    /// The users' requests in progress.
    InProgress,
}

impl Watch {
    /// The count in `w`.
    #[inline]
    pub fn of(self, w: Watched) -> u64 {
        match self {
            Watch::Held => w.held,
            Watch::InProgress => w.in_progress,
        }
    }

    /// What it counts, in words.
    pub fn noun(self) -> &'static str {
        match self {
            Watch::Held => "attempts held at the server",
            Watch::InProgress => "requests in progress",
        }
    }

    /// Its name in the scenario file.
    pub fn name(self) -> &'static str {
        match self {
            Watch::Held => "held",
            Watch::InProgress => "in_progress",
        }
    }
}

/// The trigger field a risk draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Any trigger's length (seconds).
    Length,
    /// A spike's extra arrivals a second.
    Rate,
    /// A brownout's capacity left.
    Factor,
    /// A transient failure's probability.
    P,
}

/// A trigger size's distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    /// Exponential with this mean.
    Exponential {
        /// The mean.
        mean: f64,
    },
    /// Lognormal with this median and standard deviation of the logarithm.
    LogNormal {
        /// The median.
        median: f64,
        /// sigma.
        sigma: f64,
    },
    /// Uniform between two values.
    Uniform {
        /// The least.
        low: f64,
        /// The greatest.
        high: f64,
    },
}

impl Size {
    /// One size.
    pub fn sample(&self, rng: &mut impl Rng) -> f64 {
        match *self {
            Size::Exponential { mean } => Exp::new(1.0 / mean).map_or(mean, |e| e.sample(rng)),
            Size::LogNormal { median, sigma } => {
                LogNormal::new(median.ln(), sigma).map_or(median, |d| d.sample(rng))
            }
            Size::Uniform { low, high } => low + (high - low) * rng.random::<f64>(),
        }
    }

    /// The size at quantile `q`, in (0, 1).
    pub fn quantile(&self, q: f64) -> f64 {
        match *self {
            Size::Exponential { mean } => -mean * (-q).ln_1p(),
            Size::LogNormal { median, sigma } => {
                median * (sigma * crate::metrics::recovery::normal_quantile(q)).exp()
            }
            Size::Uniform { low, high } => low + (high - low) * q,
        }
    }

    /// The density at `x`.
    pub fn density(&self, x: f64) -> f64 {
        match *self {
            Size::Exponential { mean } if x >= 0.0 => (-x / mean).exp() / mean,
            Size::LogNormal { median, sigma } if x > 0.0 => {
                let z = (x / median).ln() / sigma;
                (-0.5 * z * z).exp() / (x * sigma * (2.0 * std::f64::consts::PI).sqrt())
            }
            Size::Uniform { low, high } if (low..=high).contains(&x) && high > low => {
                1.0 / (high - low)
            }
            Size::Uniform { low, high } if x == low && high == low => 1.0,
            _ => 0.0,
        }
    }

    /// The same shape `k` times as large: a heavier tail to draw big
    /// triggers from more often (a uniform size has no tail: itself).
    pub fn stretched(&self, k: f64) -> Size {
        match *self {
            Size::Exponential { mean } => Size::Exponential { mean: mean * k },
            Size::LogNormal { median, sigma } => Size::LogNormal {
                median: median * k,
                sigma,
            },
            u @ Size::Uniform { .. } => u,
        }
    }

    /// The distribution in words.
    pub fn describe(&self) -> String {
        match *self {
            Size::Exponential { mean } => format!("exponential (mean {})", short(mean)),
            Size::LogNormal { median, sigma } => {
                format!(
                    "lognormal (median {}, sigma {})",
                    short(median),
                    short(sigma)
                )
            }
            Size::Uniform { low, high } => {
                format!("uniform ({} to {})", short(low), short(high))
            }
        }
    }
}

/// A number to four decimals.
fn short(x: f64) -> String {
    format!("{}", (x * 1e4).round() / 1e4)
}

impl Risk {
    /// `base` with the trigger's field at `x` (clamped to the field's
    /// valid range), running until `after` past the trigger's end.
    pub fn world(&self, base: &WorldConfig, x: f64) -> WorldConfig {
        let mut w = base.clone();
        let o = &mut w.outages[self.outage];
        match (self.field, &mut o.kind) {
            (Field::Length, _) => {
                o.end = o.start + SimDuration::from_nanos_f64((x * 1e9).max(1.0));
            }
            (Field::Rate, OutageKind::Spike { rate }) => *rate = x.max(0.0),
            (Field::Factor, OutageKind::Brownout { factor }) => *factor = x.clamp(1e-9, 1.0),
            (Field::P, OutageKind::Errors { p }) => *p = x.clamp(0.0, 1.0),
            _ => {}
        }
        let end = o.end;
        w.duration = (end + self.after) - SimTime::ZERO;
        w
    }

    /// When the trigger starts and ends in `world` (one of [`Risk::world`]).
    pub fn window(&self, world: &WorldConfig) -> (SimTime, SimTime) {
        let o = &world.outages[self.outage];
        (o.start, o.end)
    }
}

impl Checker<'_> {
    /// Validates `[risk]`.
    pub(super) fn risk(&self, r: &RiskFile, base: &Scenario) -> Result<Risk, super::ScenarioError> {
        let key = KeyPath::key("risk");
        if base.sweep.is_some() || base.tip.is_some() {
            return self.err(
                &key,
                "a scenario has one of [sweep], [tip] and [risk]: run each from its own file",
            );
        }
        if base.world.cache.is_some() {
            return self.err(
                &key,
                "a world with a look-aside cache cannot be branched (a request's key is \
                 drawn again when it is filled): remove the [cache] table",
            );
        }
        let (outage, field) = self.risk_trigger(&r.trigger, base, &key)?;
        let (size, duration) = self.risk_size(&r.size, field, &key.join("size"))?;
        self.ensure(
            r.per_day.is_finite() && r.per_day > 0.0,
            &key.join("per_day"),
            || "per_day must be above zero: the triggers expected in a day".into(),
        )?;
        let watch = match r.watch.as_deref() {
            None | Some("held") => Watch::Held,
            Some("in_progress") => Watch::InProgress,
            Some(other) => {
                return self.err(
                    &key.join("watch"),
                    format!(
                        "\"{other}\" is not a count to watch; valid: \"held\" (attempts held \
                         at the server) or \"in_progress\" (the users' requests)"
                    ),
                );
            }
        };
        self.ensure(r.tipped >= 2, &key.join("tipped"), || {
            "tipped must be at least 2".into()
        })?;
        if let Some(c) = r.calm {
            self.ensure(c < r.tipped, &key.join("calm"), || {
                format!("calm must be under tipped ({}), got {c}", r.tipped)
            })?;
        }
        let effort = r.effort.unwrap_or(1000);
        self.ensure(
            (10..=MAX_EFFORT).contains(&effort),
            &key.join("effort"),
            || format!("effort (walks per level) must be from 10 to {MAX_EFFORT}"),
        )?;
        let repeats = r.repeats.unwrap_or(10);
        self.ensure(
            (2..=MAX_REPEATS).contains(&repeats),
            &key.join("repeats"),
            || format!("repeats must be from 2 (an interval needs two) to {MAX_REPEATS}"),
        )?;
        let brute = r.brute.unwrap_or(0);
        self.ensure(brute <= MAX_BRUTE, &key.join("brute"), || {
            format!("brute must be at most {MAX_BRUTE} trials")
        })?;
        let after = self.risk_after(r, base, &key)?;
        Ok(Risk {
            trigger: r.trigger.clone(),
            outage,
            field,
            duration,
            size,
            per_day: r.per_day,
            watch,
            tipped: r.tipped,
            calm: r.calm,
            after,
            effort,
            repeats,
            brute,
        })
    }

    /// The trigger key, checked against the file's outages.
    fn risk_trigger(
        &self,
        trigger: &str,
        base: &Scenario,
        key: &KeyPath,
    ) -> Result<(usize, Field), super::ScenarioError> {
        let tkey = key.join("trigger");
        let outages = &base.world.outages;
        if outages.is_empty() {
            return self.err(
                &tkey,
                "the scenario has no trigger: add an [[outage]] whose size the random \
                 triggers draw",
            );
        }
        let help = format!(
            "valid: outage[N].length (any trigger), .rate (a spike), .factor (a brownout) \
             or .p (errors), N from 0 to {}",
            outages.len() - 1
        );
        let parsed = KeyPath::parse(trigger);
        let Some([Seg::Key(o), Seg::Index(i), Seg::Key(f)]) = parsed.as_ref().map(|p| &p.0[..])
        else {
            return self.err(
                &tkey,
                format!("\"{trigger}\" is not a trigger's key; {help}"),
            );
        };
        let (i, f) = (*i, f.as_str());
        if o != "outage" || i >= outages.len() {
            return self.err(
                &tkey,
                format!("\"{trigger}\" is not a trigger's key; {help}"),
            );
        }
        let kind = outages[i].kind;
        let field = match (f, kind) {
            ("length", _) => Field::Length,
            ("rate", OutageKind::Spike { .. }) => Field::Rate,
            ("factor", OutageKind::Brownout { .. }) => Field::Factor,
            ("p", OutageKind::Errors { .. }) => Field::P,
            _ => {
                return self.err(
                    &tkey,
                    format!(
                        "outage[{i}] is a {} with no random `{f}`; {help}",
                        kind.name()
                    ),
                );
            }
        };
        Ok((i, field))
    }

    /// The size's distribution, checked against the field's range.
    fn risk_size(
        &self,
        s: &SizeFile,
        field: Field,
        key: &KeyPath,
    ) -> Result<(Size, bool), super::ScenarioError> {
        let read = |v: &Option<toml::Value>, name: &str| -> Result<Number, super::ScenarioError> {
            match v {
                Some(v) => Number::read(v).or_else(|m| self.err(&key.join(name), m)),
                None => self.err(&key.join(name), format!("a {} size needs `{name}`", s.dist)),
            }
        };
        let (size, numbers) = match s.dist.as_str() {
            "exponential" => {
                let m = read(&s.mean, "mean")?;
                (Size::Exponential { mean: m.x() }, vec![m])
            }
            "lognormal" => {
                let m = read(&s.median, "median")?;
                let sigma = s.sigma.unwrap_or(f64::NAN);
                self.ensure(sigma.is_finite() && sigma > 0.0, &key.join("sigma"), || {
                    "a lognormal size needs sigma above zero (the logarithm's standard deviation)"
                        .into()
                })?;
                (
                    Size::LogNormal {
                        median: m.x(),
                        sigma,
                    },
                    vec![m],
                )
            }
            "uniform" => {
                let (l, h) = (read(&s.low, "low")?, read(&s.high, "high")?);
                (
                    Size::Uniform {
                        low: l.x(),
                        high: h.x(),
                    },
                    vec![l, h],
                )
            }
            other => {
                return self.err(
                    &key.join("dist"),
                    format!(
                        "\"{other}\" is not a size distribution; valid: \"exponential\" \
                         (mean), \"lognormal\" (median, sigma), \"uniform\" (low, high)"
                    ),
                );
            }
        };
        let numbers = unify(numbers).or_else(|m| self.err(key, m))?;
        let duration = matches!(numbers[0], Number::Duration(_));
        self.ensure(duration == (field == Field::Length), key, || {
            if field == Field::Length {
                "a length's size is a duration, such as \"2s\"".into()
            } else {
                "this field's size is a number, not a duration".into()
            }
        })?;
        let (lo, hi, bounded) = match size {
            Size::Exponential { mean } => (mean, mean, false),
            Size::LogNormal { median, .. } => (median, median, false),
            Size::Uniform { low, high } => (low, high, true),
        };
        self.ensure(lo > 0.0 && lo <= hi, key, || {
            "sizes must be above zero (and low at most high)".into()
        })?;
        if matches!(field, Field::Factor | Field::P) {
            self.ensure(bounded && hi <= 1.0, key, || {
                "a factor or a probability lies in (0, 1]: give it a uniform size with \
                 high at most 1"
                    .into()
            })?;
        }
        Ok((size, duration))
    }

    /// `after`, or the file's own time after its trigger.
    fn risk_after(
        &self,
        r: &RiskFile,
        base: &Scenario,
        key: &KeyPath,
    ) -> Result<SimDuration, super::ScenarioError> {
        let after = match &r.after {
            Some(a) => a.0,
            None => {
                let end = base.world.trigger_windows().iter().map(|w| w.1).max();
                SimDuration(end.map_or(0, |e| base.world.duration.0.saturating_sub(e.0)))
            }
        };
        self.ensure(after.0 > 0, &key.join("after"), || {
            "the file leaves no time after its trigger: set `after`, the time each walk may \
             take after the trigger's end"
                .into()
        })?;
        Ok(after)
    }
}
