//! Runs that can be paused, watched and branched: what multilevel splitting
//! needs (the tipping-point search's rare-event estimate). A [`Walker`] is a
//! run of one strategy on one world that goes on until a watch says stop
//! (the requests in progress reached a level, or fell back), and that can
//! be copied there to go on on other random numbers ([`Walker::branch`]).
//!
//! A branch is the run's whole state (every pending event, every request,
//! the server's queue) with a new key for the draws it has not made yet.
//! Every draw is addressed by what it is for (see [`crate::engine::rng`]),
//! and each is made once, when its event is scheduled: a branch's future
//! is then a fresh one from the same present, which is what splitting
//! asks. Two exceptions keep their key: a server limiter's jitter and a
//! look-aside cache's keys (the cache draws a request's key again when it
//! fills it, so a new key would change a key already looked up). The first
//! only makes sibling branches alike, not wrong; worlds with a cache are
//! refused by the callers.

use super::state::ServerState;
use super::{LoopState, Sim, count, wheel_pays};
use crate::engine::{Draws, Purpose, SimDuration, SimTime};
use crate::model::event::Kind;
use crate::model::{NoObserver, WorldConfig};
use crate::retry::Strategy;

use super::Abort;
use crate::metrics::recorder::Gauge;
use crate::model::Observer;

/// What a walk watches after every event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Watched {
    /// The users' requests in progress (begun, not yet answered or given
    /// up on).
    pub in_progress: u64,
    /// Attempts held at the server, queued or in service (every replica's).
    pub held: u64,
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// What a walk watches, now.
    #[inline(always)]
    pub(super) fn watched(&self) -> Watched {
        Watched {
            in_progress: self.slots.active(),
            held: self.rec.gauge(Gauge::Queue) + self.rec.gauge(Gauge::Busy),
        }
    }
}

/// Why a walk ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// The watch said stop.
    Stopped,
    /// The world's end came first.
    Ended,
    /// The run had to stop (a stalled clock, too many events).
    Aborted(Abort),
}

/// A run that walks until told to stop, and branches.
pub struct Walker<'w> {
    inner: Inner<'w>,
}

enum Inner<'w> {
    Plain(Box<Paused<'w, false>>),
    Wheel(Box<Paused<'w, true>>),
}

struct Paused<'w, const WHEEL: bool> {
    sim: Sim<'w, NoObserver, WHEEL>,
    state: LoopState,
    bucket: SimDuration,
}

/// An observer to lend a walker for as long as it lives. `NoObserver` has
/// no size, so boxing it allocates nothing and leaking the box loses
/// nothing.
fn silent() -> &'static mut NoObserver {
    Box::leak(Box::new(NoObserver))
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// Draws again, from this run's draws, the clocks already running that
    /// have no memory: the next open-loop arrival and the next arrival of a
    /// load spike (Poisson processes), and the completions of exponential
    /// services on one server. Their time left has the law of a whole
    /// draw whatever has happened, so drawing it again keeps the branch's
    /// law; and a branch that kept them would share them with every
    /// sibling from the same pause: a service that happens to be long
    /// there would push all of them up together, and splitting's estimate
    /// would swing with the luck of a few clocks. Other clocks (hops,
    /// timeouts, backoffs, services of other shapes) stay as drawn: their
    /// time left depends on how long they have run.
    fn redraw_memoryless(&mut self) {
        let service = match &self.server {
            ServerState::One(s) => s.memoryless_service().map(|d| (d.clone(), s.epoch())),
            _ => None,
        };
        let open = self.arrivals.is_some();
        let mut moved = Vec::new();
        self.queue.retain(|e| {
            let again = match e.kind() {
                Kind::ServiceDone => service.as_ref().is_some_and(|s| e.attempt == s.1),
                Kind::Arrival => open,
                Kind::SpikeArrival => true,
                _ => false,
            };
            if again {
                moved.push(*e);
            }
            !again
        });
        for ev in moved {
            match ev.kind() {
                Kind::ServiceDone => {
                    let (dist, epoch) = service.as_ref().expect("kept only with a service");
                    let ServerState::One(server) = &self.server else {
                        continue;
                    };
                    let Some((job, _)) = server.holding(ev.slot, *epoch) else {
                        continue;
                    };
                    let left = dist.sample(&mut self.draws.at(Purpose::Service, job.addr));
                    self.queue.push(self.now + left, ev);
                }
                Kind::Arrival => self.schedule_arrival(count(ev)),
                Kind::SpikeArrival => {
                    let index = ev.aux as usize;
                    let end = self.world.outages[index].end;
                    self.schedule_spike_arrival(index, end, count(ev));
                }
                _ => {}
            }
        }
    }
}

impl<'w, const WHEEL: bool> Paused<'w, WHEEL> {
    fn new(world: &'w WorldConfig, strategy: &'w Strategy, seed: u64) -> Self {
        // One bucket: a walk's figures are its watch's, not its series.
        let bucket = world.duration.max(SimDuration(1));
        let mut sim = Sim::new(world, strategy, seed, bucket, silent());
        sim.schedule_start();
        let state = LoopState::new(sim.queue.len(), bucket);
        Paused { sim, state, bucket }
    }

    fn walk(&mut self, mut stop: impl FnMut(SimTime, Watched) -> bool) -> Walk {
        let end = SimTime::ZERO + self.sim.world.duration;
        let mut stopped = false;
        let aborted = self
            .sim
            .run_watched::<true>(self.bucket, end, &mut self.state, |t, n| {
                stopped = stop(t, n);
                stopped
            });
        match aborted {
            Some(a) => Walk::Aborted(a),
            None if stopped => Walk::Stopped,
            None => {
                self.sim.now = end;
                Walk::Ended
            }
        }
    }

    fn branch(&self, seed: u64) -> Self {
        let mut sim = self
            .sim
            .fork_to(self.sim.world, self.sim.strategy, silent());
        sim.draws = Draws::new(seed);
        sim.redraw_memoryless();
        Paused {
            sim,
            state: self.state,
            bucket: self.bucket,
        }
    }
}

impl<'w> Walker<'w> {
    /// A run of `strategy` on `world` with `seed`, at its start.
    pub fn new(world: &'w WorldConfig, strategy: &'w Strategy, seed: u64) -> Self {
        let inner = if wheel_pays(world) {
            Inner::Wheel(Box::new(Paused::new(world, strategy, seed)))
        } else {
            Inner::Plain(Box::new(Paused::new(world, strategy, seed)))
        };
        Walker { inner }
    }

    /// Goes on until, after an event, `stop` (given the clock and what it
    /// watches) says so, or the world's end.
    pub fn walk(&mut self, stop: impl FnMut(SimTime, Watched) -> bool) -> Walk {
        match &mut self.inner {
            Inner::Plain(p) => p.walk(stop),
            Inner::Wheel(p) => p.walk(stop),
        }
    }

    /// This run's state, going on on the draws of `seed` (see the module's
    /// notes).
    pub fn branch(&self, seed: u64) -> Self {
        let inner = match &self.inner {
            Inner::Plain(p) => Inner::Plain(Box::new(p.branch(seed))),
            Inner::Wheel(p) => Inner::Wheel(Box::new(p.branch(seed))),
        };
        Walker { inner }
    }

    /// The clock.
    pub fn now(&self) -> SimTime {
        match &self.inner {
            Inner::Plain(p) => p.sim.now,
            Inner::Wheel(p) => p.sim.now,
        }
    }

    /// What it watches, now.
    pub fn watched(&self) -> Watched {
        match &self.inner {
            Inner::Plain(p) => p.sim.watched(),
            Inner::Wheel(p) => p.sim.watched(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Metafor's one-server world and its strategy (scenarios/metafor.toml).
    fn small_world() -> (WorldConfig, Strategy) {
        let s = crate::scenario::load(std::path::Path::new("scenarios/metafor.toml"))
            .expect("the shipped scenario is valid");
        (s.world, s.strategies[0].clone())
    }

    #[test]
    fn a_walk_to_the_end_is_the_run() {
        let (world, strategy) = small_world();
        let mut w = Walker::new(&world, &strategy, 3);
        let mut most = 0;
        assert_eq!(
            w.walk(|_, n| {
                most = most.max(n.in_progress);
                false
            }),
            Walk::Ended
        );
        assert!(most > 0);
        assert_eq!(w.now(), SimTime::ZERO + world.duration);
    }

    /// The walk of a branch is a function of its seed: two branches on one
    /// seed walk one path, branches on two seeds two.
    #[test]
    fn a_branch_is_its_seeds() {
        let (world, strategy) = small_world();
        let mut w = Walker::new(&world, &strategy, 3);
        let half = SimTime::ZERO + SimDuration(world.duration.0 / 2);
        assert_eq!(w.walk(|t, _| t >= half), Walk::Stopped);
        let path = |mut w: Walker| {
            let mut seen = Vec::new();
            w.walk(|t, n| {
                seen.push((t, n));
                false
            });
            seen
        };
        let here = path(w.branch(4));
        assert_eq!(path(w.branch(4)), here);
        assert_ne!(path(w.branch(5)), here);
    }

    /// A branch goes on as the walk it branched from would have, in law:
    /// from the first time a burst leaves 8 attempts at Metafor's server
    /// (at half load), the walk itself and a branch of it climb to 16
    /// before the server empties equally often (3000 walks: the two
    /// counts, about 230 each, differ by under four standard deviations of
    /// their difference): a branch neither keeps nor loses anything of the
    /// state that decides the climb.
    #[test]
    fn a_branch_climbs_as_the_walk_itself_would() {
        let (mut world, strategy) = small_world();
        world.load = crate::model::Load::Open { rate_per_s: 5.0 };
        if let crate::model::OutageKind::Spike { rate } = &mut world.outages[0].kind {
            *rate = 8000.0;
        }
        let start = world.outages[0].start;
        let end = world.outages[0].end;
        let stop =
            |t: SimTime, x: Watched| t >= start && (x.held >= 16 || (t >= end && x.held == 0));
        let (mut itself, mut branch, mut n) = (0u32, 0u32, 0u32);
        for seed in 0..3000u64 {
            let mut w = Walker::new(&world, &strategy, seed);
            if w.walk(|t, x| t >= start && x.held >= 8) != Walk::Stopped || w.watched().held != 8 {
                continue;
            }
            n += 1;
            let mut b = w.branch(seed + 1_000_000);
            w.walk(stop);
            b.walk(stop);
            itself += u32::from(w.watched().held >= 16);
            branch += u32::from(b.watched().held >= 16);
        }
        let p = f64::from(itself + branch) / f64::from(2 * n);
        let sd = (2.0 * f64::from(n) * p * (1.0 - p)).sqrt();
        assert!(n > 1000 && itself > 100, "{n} walks, {itself} climbed");
        assert!(
            (f64::from(itself) - f64::from(branch)).abs() < 4.0 * sd,
            "of {n}: the walks themselves {itself}, their branches {branch}"
        );
    }
}
