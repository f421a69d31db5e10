//! The users' look-aside cache ([`crate::model::cache`]): looked up as a
//! request starts, filled when a request the backend answered succeeds,
//! lost by a `cache-flush` trigger.

use super::Sim;
use super::clients::Users;
use crate::engine::{Purpose, SimDuration, SimTime};
use crate::metrics::cache::CacheRecorder;
use crate::model::cache::Cache;
use crate::model::event::{Event, Kind};
use crate::model::{Observer, WorldConfig};
use crate::retry::GiveUp;

/// The cache of a run and its record.
#[derive(Clone, Debug)]
pub(super) struct CacheRun {
    pub(super) cache: Cache,
    pub(super) rec: CacheRecorder,
}

impl CacheRun {
    /// The cache `world` has, if any, recorded in buckets of `bucket`.
    pub(super) fn new(
        world: &WorldConfig,
        bucket: SimDuration,
        draws: crate::engine::Draws,
    ) -> Option<Box<CacheRun>> {
        let cfg = world.cache.as_ref()?;
        let cache = Cache::new(cfg, draws);
        let rec = CacheRecorder::new(world.duration, bucket, u64::from(cache.len()));
        Some(Box::new(CacheRun { cache, rec }))
    }
}

/// What a request's lookup found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lookup {
    /// A hit: answered after one round trip.
    Hit,
    /// A miss the gate let through: the request goes to the backend.
    Miss,
    /// A miss the warm-up gate refused: the request fails at once.
    Gated,
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// The key of the request at address `id`.
    fn cache_key(&self, cache: &Cache, id: u64) -> u32 {
        cache.key(&mut self.draws.at(Purpose::Key, id))
    }

    /// The request just started in `slot` looks its key up. A hit is
    /// answered after one network round trip (the cache is another server
    /// on the same network, never the bottleneck); a gated miss fails now.
    #[cold]
    #[inline(never)]
    pub(super) fn look_up(&mut self, slot: u32) -> Lookup {
        let Some(mut run) = self.cache.take() else {
            return Lookup::Miss;
        };
        let (now, id) = (self.now, self.slots.peek(slot).id);
        let key = self.cache_key(&run.cache, id);
        let found = if run.cache.get(key, now) {
            Lookup::Hit
        } else if run.cache.gate(now) {
            Lookup::Miss
        } else {
            Lookup::Gated
        };
        let entries = u64::from(run.cache.len());
        run.rec
            .lookup(now, found == Lookup::Hit, found == Lookup::Gated, entries);
        self.cache = Some(run);
        match found {
            Lookup::Hit => {
                self.rec.cache_hit();
                // The lookup takes an attempt's number (no attempt of the
                // server's): the request is in progress, waiting for it.
                let (attempt, _) = self.slots.get(slot).next_attempt(None);
                let address = self.slots.peek(slot).address(attempt);
                let rtt = self.hop(Purpose::HopOut, address) + self.hop(Purpose::HopBack, address);
                self.queue
                    .push(now + rtt, Event::new(Kind::CacheHit, slot, attempt));
            }
            Lookup::Gated => self.refuse::<Users>(slot),
            Lookup::Miss => {}
        }
        found
    }

    /// A cache hit's answer reaches its user: the request succeeds.
    pub(super) fn on_cache_hit(&mut self, ev: Event) {
        if self.live::<Users>(ev.slot, ev.attempt).is_none() {
            return;
        }
        let latency = self.now - self.slots.peek(ev.slot).started;
        self.rec.success(self.now, latency);
        if !self.per_proxy.is_empty() {
            self.count_proxy(ev.slot, |t| t.succeeded += 1);
        }
        self.end::<Users>(ev.slot, None::<GiveUp>);
    }

    /// The request in `slot`, which the backend answered, succeeded: its
    /// answer is cached.
    #[cold]
    #[inline(never)]
    pub(super) fn cache_fill(&mut self, slot: u32) {
        let Some(mut run) = self.cache.take() else {
            return;
        };
        let key = self.cache_key(&run.cache, self.slots.peek(slot).id);
        run.cache.fill(key, self.now);
        let entries = u64::from(run.cache.len());
        run.rec.entries(self.now, entries);
        self.cache = Some(run);
    }

    /// A `cache-flush` trigger begins (`true`) or ends.
    pub(super) fn cache_flush(&mut self, begins: bool, now: SimTime) {
        if let Some(run) = &mut self.cache {
            if begins {
                run.cache.flush();
            } else {
                run.cache.restore();
            }
            let entries = u64::from(run.cache.len());
            run.rec.entries(now, entries);
        }
    }
}
