//! The event queue: lanes merged on pop, each ordered by (time, insertion
//! sequence):
//! - a *near* heap for events due within a horizon (network hops, service
//!   completions): the busy lane, kept small so its operations stay cheap;
//! - a *far* lane for the rest (think times, backoff delays): a heap;
//! - a FIFO for events pushed in time order (fixed-length timers), in which
//!   an event can be cancelled (`super::timers`).
//!
//! An `EventQueue<E, true>` (a run with many clients) has a wheel instead: every
//! event not due before the wheel's window goes into one of its unsorted
//! buckets (a one-rung calendar queue, after Brown, "Calendar queues", CACM
//! 31(10), 1988); when the clock reaches a bucket it is sorted and popped from
//! in order, the near heap keeping only events pushed into the bucket being
//! popped, and a heap only the events beyond the wheel's span.
//!
//! Equal times come out in insertion order whichever lane holds them, because the
//! lanes share one sequence counter and the key packs `time << 64 | sequence` into
//! a `u128` (a single integer comparison; REFERENCE.md section 7 measured it faster
//! than a derived multi-field `Ord`). The horizon and the wheel only move work
//! between lanes; the order of events never depends on them.
//!
//! Why a wheel: with a heap as the far lane every think time is popped from a heap
//! with an entry per client. At 1000 clients that heap fits in cache and costs
//! little; at 100 000 clients it no longer does, and the wheel made the whole run
//! about 1.3 times faster. At a million the near heap itself held tens of
//! thousands of hops and services and no longer fitted either: sorting each
//! bucket of a few thousand events instead made the run 1.25 times faster again
//! (the book, docs/src/speed.md). Which far lane a queue has is a type
//! parameter rather than a run-time switch: the run loop is compiled once for
//! each, and the heap's stays exactly as lean as it was without the wheel.

use super::heap::{Entry, Heap};
use super::time::{SimDuration, SimTime};
use super::timers::{Ticket, Timers};
use std::cmp::Reverse;

/// Buckets in the wheel: with the width below (2.1 ms in the ideal-server
/// world), a span of 34 s, which covers the think times and most backoffs of
/// the shipped scenarios; later events wait in the overflow heap.
const WHEEL_BUCKETS: usize = 16384;

/// Far events pending above which a wheel beats a heap: 16384 entries of 32
/// bytes are 512 KiB, about a core's L2 cache. Below it the heap is as fast or
/// faster (1000 clients: runs took 1.01 to 1.05 times as long with the wheel),
/// above it much slower (100 000 clients: about 1.3 times as long).
pub const WHEEL_ABOVE: usize = 1 << 14;

/// A priority queue of events ordered by time, ties broken by insertion order;
/// `WHEEL` chooses the far lane (see the module's documentation).
#[derive(Clone)]
pub struct EventQueue<E, const WHEEL: bool = false> {
    near: Heap<E>,
    /// With the wheel: the bucket the clock is in, sorted, latest first.
    run: Vec<Entry<E>>,
    fifo: Timers<Entry<E>>,
    far: FarLane<E>,
    next_seq: u64,
    /// Events due before `now + horizon` go to the near heap.
    horizon: u64,
    /// The time of the last event popped.
    now: u64,
}

/// The far lane. Without the wheel (no buckets) it is the plain heap
/// `overflow`, merged on pop with the other lanes. With it: unsorted buckets of
/// `2^shift` ns each, a window of [`WHEEL_BUCKETS`] of them from `start`, and the
/// heap only for events beyond the window. Nothing in the buckets is sorted
/// until the clock reaches a bucket: it is then sorted whole and popped from in
/// order, so an event costs a `Vec` push and its share of a sort of a few
/// thousand, instead of a push and pop on a heap of tens of thousands.
#[derive(Clone)]
struct FarLane<E> {
    /// Empty without the wheel.
    buckets: Vec<Vec<Entry<E>>>,
    /// Entries in the buckets (not counting the overflow).
    len: usize,
    /// Every entry in the buckets and the overflow is due at or after `start`, a
    /// multiple of the bucket width. Zero without the wheel.
    start: u64,
    shift: u32,
    overflow: Heap<E>,
    /// Room for sorting a bucket.
    scratch: Vec<Entry<E>>,
}

impl<E: Copy> FarLane<E> {
    fn new(shift: u32, with_buckets: bool) -> Self {
        let buckets = if with_buckets {
            std::iter::repeat_with(Vec::new)
                .take(WHEEL_BUCKETS)
                .collect()
        } else {
            Vec::new()
        };
        FarLane {
            buckets,
            len: 0,
            start: 0,
            shift,
            overflow: Heap::new(),
            scratch: Vec::new(),
        }
    }

    /// The end of the window of the buckets (exclusive).
    fn window_end(&self) -> u64 {
        self.start
            .saturating_add((WHEEL_BUCKETS as u64) << self.shift)
    }

    fn index(&self, at: u64) -> usize {
        ((at >> self.shift) as usize) & (WHEEL_BUCKETS - 1)
    }

    /// Files an entry due at `at >= start` in the wheel.
    fn push(&mut self, at: u64, entry: Entry<E>) {
        if at < self.window_end() {
            let i = self.index(at);
            self.buckets[i].push(entry);
            self.len += 1;
        } else {
            self.overflow.push(entry);
        }
    }

    /// Moves the overflow entries that the window now covers into their buckets.
    fn refill(&mut self) {
        let end = self.window_end();
        while let Some(top) = self.overflow.peek() {
            let at = (top.key >> 64) as u64;
            if at >= end {
                break;
            }
            let Some(entry) = self.overflow.pop() else {
                break;
            };
            let i = self.index(at);
            self.buckets[i].push(entry);
            self.len += 1;
        }
    }

    /// Moves the first bucket into `run`, which it keeps sorted latest first,
    /// and slides the window on by one bucket.
    /// When the buckets are empty it first jumps the window to the bucket of the
    /// earlier of `floor` (the earliest time in the other lanes) and the overflow's
    /// first event: nothing far is due before it, and starting no later than
    /// `floor` keeps the window where the clock is. Returns false when the lane is
    /// empty.
    fn advance(&mut self, run: &mut Vec<Entry<E>>, floor: u64) -> bool {
        if self.len == 0 {
            let Some(top) = self.overflow.peek() else {
                return false;
            };
            let earliest = ((top.key >> 64) as u64).min(floor);
            let aligned = earliest >> self.shift << self.shift;
            if aligned > self.start {
                self.start = aligned;
                self.refill();
            }
            if self.len == 0 && self.window_end() == u64::MAX {
                // At the end of time (saturated timestamps) the window cannot
                // reach the overflow: hand its entries over one by one.
                if let Some(top) = self.overflow.pop() {
                    let at = run.partition_point(|e| e.key > top.key);
                    run.insert(at, top);
                }
                return true;
            }
        }
        // The bucket is left without a buffer: every bucket fills up to about
        // the same size before it is drained, but at any moment most are
        // nearly empty, and keeping their buffers would hold several times the
        // memory the pending events need. (Shrinking each to a small buffer
        // instead fragmented the allocator's memory: a call chain of 100 000
        // users held 660 MB where its events needed 30.)
        let i = self.index(self.start);
        let mut bucket = std::mem::take(&mut self.buckets[i]);
        self.len -= bucket.len();
        sort_latest_first(&mut bucket, self.start, self.shift, &mut self.scratch);
        if run.is_empty() {
            *run = bucket;
        } else {
            // Only at the end of time, where the window stops sliding: what is
            // in `run` may be due after this bucket.
            run.append(&mut bucket);
            run.sort_unstable_by_key(|e| Reverse(e.key));
        }
        self.start = self.start.saturating_add(1 << self.shift);
        self.refill();
        true
    }

    /// The earliest key, by a scan (for inspection, not for the hot path).
    fn min_key(&self) -> Option<u128> {
        let in_buckets = self.buckets.iter().flatten().map(|e| e.key).min();
        let in_overflow = self.overflow.peek().map(|e| e.key);
        in_buckets.into_iter().chain(in_overflow).min()
    }

    fn total(&self) -> usize {
        self.len + self.overflow.len()
    }
}

/// Sorts `bucket`, whose entries are due in `[start, start + 2^bits)`, latest
/// first. Its entries are in the order they were pushed (those moved in from
/// the overflow heap, all pushed earlier, in key order first), so a stable sort
/// by time alone is a sort by key: a radix sort, 11 bits of the time within
/// the bucket at a time, least significant first, then reversed. With a
/// million clients a bucket holds a few thousand events, and sorting them this
/// way instead of comparing keys made the run about 10% faster.
fn sort_latest_first<E: Copy>(
    bucket: &mut Vec<Entry<E>>,
    start: u64,
    bits: u32,
    scratch: &mut Vec<Entry<E>>,
) {
    const DIGIT: u32 = 11;
    const RADIX: usize = 1 << DIGIT;
    let Some(&first) = bucket.first() else {
        return;
    };
    if bucket.len() <= 64 {
        bucket.sort_unstable_by_key(|e| Reverse(e.key));
        return;
    }
    let offset = |e: &Entry<E>| ((e.key >> 64) as u64).wrapping_sub(start);
    let mut counts = [0usize; RADIX];
    let mut shift = 0;
    while shift < bits {
        let digit = |e: &Entry<E>| (offset(e) >> shift) as usize & (RADIX - 1);
        counts.fill(0);
        for e in bucket.iter() {
            counts[digit(e)] += 1;
        }
        let mut sum = 0;
        for c in &mut counts {
            (*c, sum) = (sum, sum + *c);
        }
        scratch.clear();
        scratch.resize(bucket.len(), first);
        for e in bucket.iter() {
            let d = digit(e);
            scratch[counts[d]] = *e;
            counts[d] += 1;
        }
        std::mem::swap(bucket, scratch);
        shift += DIGIT;
    }
    bucket.reverse();
}

impl<E: Copy, const WHEEL: bool> Default for EventQueue<E, WHEEL> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy, const WHEEL: bool> EventQueue<E, WHEEL> {
    /// An empty queue whose near lane takes everything.
    pub fn new() -> Self {
        Self::with_horizon(SimDuration(u64::MAX))
    }

    /// An empty queue whose near lane takes events due within `horizon`.
    pub fn with_horizon(horizon: SimDuration) -> Self {
        // The wheel's buckets (if it has one): about a sixteenth of the horizon
        // wide, a few thousand events each with a million clients (an eighth,
        // or a sixty-fourth, made that run 3% and 8% slower).
        let width = (horizon.0 / 16).max(1);
        let shift = (63 - width.leading_zeros()).clamp(10, 40);
        EventQueue {
            near: Heap::new(),
            run: Vec::new(),
            fifo: Timers::new(),
            far: FarLane::new(shift, WHEEL),
            next_seq: 0,
            horizon: horizon.0,
            now: 0,
        }
    }

    #[inline]
    fn heap_push(&mut self, at: SimTime, entry: Entry<E>) {
        if WHEEL {
            self.push_with_wheel(at.0, entry);
        } else if at.0.saturating_sub(self.now) < self.horizon {
            self.near.push(entry);
        } else {
            self.far.overflow.push(entry);
        }
    }

    /// [`EventQueue::heap_push`] with the wheel: events due before its window
    /// starts go to the near heap, the others to the wheel, whatever the
    /// horizon says.
    fn push_with_wheel(&mut self, at: u64, entry: Entry<E>) {
        if at < self.far.start {
            self.near.push(entry);
        } else {
            self.far.push(at, entry);
        }
    }

    fn key(&mut self, at: SimTime) -> u128 {
        let key = (u128::from(at.0) << 64) | u128::from(self.next_seq);
        self.next_seq += 1;
        key
    }

    /// Schedules `event` at `at`.
    #[inline]
    pub fn push(&mut self, at: SimTime, event: E) {
        let key = self.key(at);
        self.heap_push(at, Entry { key, event });
    }

    /// Schedules `event` at `at`, cheaply when `at` is no earlier than the last event
    /// pushed this way (the case of timers that all have the same length); otherwise
    /// it falls back to the heap. Order is the same as with [`EventQueue::push`].
    /// The ticket cancels the event ([`EventQueue::cancel`]); it is
    /// [`Ticket::NONE`] when the event went to the heap.
    #[inline]
    pub fn push_in_order(&mut self, at: SimTime, event: E) -> Ticket {
        let key = self.key(at);
        match self.fifo.back() {
            Some(last) if last.key > key => {
                self.heap_push(at, Entry { key, event });
                Ticket::NONE
            }
            _ => self.fifo.push_back(Entry { key, event }),
        }
    }

    /// Cancels the event pushed in order that `ticket` names: it will not be
    /// popped. Does nothing if it was popped already, or for [`Ticket::NONE`].
    #[inline]
    pub fn cancel(&mut self, ticket: Ticket) {
        self.fifo.cancel(ticket);
    }

    /// Removes and returns the earliest event with its time.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if WHEEL {
            return self.pop_with_wheel();
        }
        const NONE: u128 = u128::MAX;
        let fifo = self.fifo.front().map_or(NONE, |e| e.key);
        let near = self.near.peek().map_or(NONE, |e| e.key);
        let far = self.far.overflow.peek().map_or(NONE, |e| e.key);
        // Keys are unique, so at most one lane holds the minimum; NONE only wins
        // when every lane is empty.
        let entry = if near < fifo && near < far {
            self.near.pop()?
        } else if fifo < far {
            self.fifo.pop_front()?
        } else {
            self.far.overflow.pop()?
        };
        self.now = (entry.key >> 64) as u64;
        Some((SimTime(self.now), entry.event))
    }

    /// [`EventQueue::pop`] with the wheel.
    fn pop_with_wheel(&mut self) -> Option<(SimTime, E)> {
        loop {
            let fifo = self.fifo.front().map_or(u128::MAX, |e| e.key);
            let near = self.near.peek().map_or(u128::MAX, |e| e.key);
            let run = self.run.last().map_or(u128::MAX, |e| e.key);
            // Every far event is due at or after the wheel's start, so an earlier
            // one here is the earliest of all. Otherwise bring the next bucket in
            // and look again.
            let best_time = (near.min(fifo).min(run) >> 64) as u64;
            if best_time >= self.far.start && self.far.advance(&mut self.run, best_time) {
                continue;
            }
            let entry = if run < near && run < fifo {
                self.run.pop()?
            } else if near < fifo {
                self.near.pop()?
            } else {
                self.fifo.pop_front()?
            };
            self.now = (entry.key >> 64) as u64;
            return Some((SimTime(self.now), entry.event));
        }
    }

    /// Events soon to be popped, cheaply, for a hint to fetch what they
    /// will touch (never for the order): the `depth`-th of the wheel's
    /// sorted run and of the FIFO lane, and the near heap's first. An event
    /// handled `depth` pops from now has had its memory asked for while
    /// `depth` others were handled, long enough for a load from main memory.
    #[inline]
    pub fn upcoming(&self, depth: usize, mut hint: impl FnMut(&E)) {
        if let Some(e) = self.run.len().checked_sub(depth + 1).map(|i| &self.run[i]) {
            hint(&e.event);
        }
        if let Some(e) = self.fifo.get_live(depth) {
            hint(&e.event);
        }
        if let Some(e) = self.near.peek() {
            hint(&e.event);
        }
    }

    /// The time of the earliest event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        let fifo = self.fifo.front().map(|e| e.key);
        let near = self.near.peek().map(|e| e.key);
        let run = self.run.last().map(|e| e.key);
        let key = [fifo, near, run, self.far.min_key()]
            .into_iter()
            .flatten()
            .min()?;
        Some(SimTime((key >> 64) as u64))
    }

    /// Keeps only the events `keep` accepts; the others are dropped. The
    /// order of those kept is unchanged (their keys are).
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        self.near.retain(&mut keep);
        self.run.retain(|e| keep(&e.event));
        self.fifo.retain(|e| keep(&e.event));
        for b in &mut self.far.buckets {
            b.retain(|e| keep(&e.event));
        }
        self.far.len = self.far.buckets.iter().map(Vec::len).sum();
        self.far.overflow.retain(&mut keep);
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.near.len() + self.run.len() + self.far.total() + self.fifo.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue<u32>) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect()
    }

    /// A pop that finds nothing leaves nothing behind: what is pushed next
    /// comes out, in either heap.
    #[test]
    fn a_pop_from_an_empty_queue_changes_nothing() {
        let mut q = EventQueue::with_horizon(SimDuration(100));
        assert_eq!(q.pop(), None);
        q.push(SimTime(500), 1);
        q.push(SimTime(50), 2);
        assert_eq!(q.len(), 2);
        assert_eq!(drain(&mut q), vec![(50, 2), (500, 1)]);
        assert_eq!(q.pop(), None);
        assert_eq!(q.len(), 0);
    }

    /// After a pop, a push goes where it belongs whatever its key: earlier
    /// than every other, between, or last.
    #[test]
    fn a_push_after_a_pop_goes_where_it_belongs() {
        for (at, expected) in [
            (15, vec![(15, 9), (20, 1), (30, 2), (40, 3)]),
            (25, vec![(20, 1), (25, 9), (30, 2), (40, 3)]),
            (45, vec![(20, 1), (30, 2), (40, 3), (45, 9)]),
        ] {
            let mut q = EventQueue::new();
            for (t, e) in [(10, 0), (20, 1), (30, 2), (40, 3)] {
                q.push(SimTime(t), e);
            }
            assert_eq!(q.pop(), Some((SimTime(10), 0)));
            q.push(SimTime(at), 9);
            assert_eq!(q.len(), 4);
            assert_eq!(drain(&mut q), expected);
        }
    }

    #[test]
    fn earlier_time_comes_first() {
        let mut q = EventQueue::new();
        q.push(SimTime(30), 3);
        q.push(SimTime(10), 1);
        q.push(SimTime(20), 2);
        assert_eq!(drain(&mut q), vec![(10, 1), (20, 2), (30, 3)]);
    }

    #[test]
    fn equal_times_come_out_in_insertion_order() {
        let mut q = EventQueue::new();
        for i in 0..100 {
            q.push(SimTime(7), i);
        }
        let order: Vec<u32> = drain(&mut q).into_iter().map(|(_, e)| e).collect();
        assert_eq!(order, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn ties_across_lanes_keep_insertion_order() {
        let mut q = EventQueue::new();
        q.push_in_order(SimTime(5), 0);
        q.push(SimTime(5), 1);
        q.push_in_order(SimTime(5), 2);
        q.push(SimTime(5), 3);
        assert_eq!(drain(&mut q), vec![(5, 0), (5, 1), (5, 2), (5, 3)]);
    }

    /// A cancelled timer never comes out; the others come out in order,
    /// whichever lane they went to; a ticket of a timer already popped
    /// cancels nothing; the count is of the live events.
    #[test]
    fn a_cancelled_timer_never_comes_out() {
        for wheel in [false, true] {
            let mut q = EventQueue::<u32>::with_horizon(SimDuration(10));
            let mut w = EventQueue::<u32, true>::with_horizon(SimDuration(10));
            let mut push = |at, e| {
                if wheel {
                    w.push_in_order(SimTime(at), e)
                } else {
                    q.push_in_order(SimTime(at), e)
                }
            };
            let a = push(10, 0);
            let b = push(20, 1);
            let c = push(15, 2); // out of order: to the heap, no ticket
            let d = push(30, 3);
            assert_eq!(c, Ticket::NONE);
            let mut out = Vec::new();
            let mut step = |ticket: Option<Ticket>| {
                let (len, popped) = if wheel {
                    ticket.into_iter().for_each(|t| w.cancel(t));
                    (w.len(), w.pop())
                } else {
                    ticket.into_iter().for_each(|t| q.cancel(t));
                    (q.len(), q.pop())
                };
                out.push((len, popped.map(|(t, e)| (t.0, e))));
            };
            step(Some(b));
            step(Some(a)); // popped already
            step(Some(c));
            step(None);
            step(Some(d));
            assert_eq!(
                out,
                vec![
                    (3, Some((10, 0))),
                    (2, Some((15, 2))),
                    (1, Some((30, 3))),
                    (0, None),
                    (0, None)
                ],
                "wheel {wheel}"
            );
        }
    }

    #[test]
    fn the_horizon_never_changes_the_order() {
        use rand::{RngExt, SeedableRng};
        let orders: Vec<Vec<(u64, u32)>> = [1, 50, 1_000, u64::MAX]
            .into_iter()
            .map(|h| {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
                let mut q = EventQueue::with_horizon(SimDuration(h));
                let mut out = Vec::new();
                let mut now = 0;
                for i in 0..20_000u32 {
                    if rng.random_bool(0.5) {
                        q.push(SimTime(now + rng.random_range(0..3_000u64)), i);
                    } else if let Some((t, e)) = q.pop() {
                        now = t.0;
                        out.push((t.0, e));
                    }
                }
                out.extend(drain(&mut q));
                out
            })
            .collect();
        assert!(orders.windows(2).all(|w| w[0] == w[1]));
        assert!(orders[0].windows(2).all(|w| w[0].0 <= w[1].0));
    }

    fn drain_wheel(q: &mut EventQueue<u32, true>) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect()
    }

    /// Drives a queue and a sorted reference with the same random pushes and pops;
    /// `delay` draws how far ahead of the clock each push is.
    fn agrees_with_a_reference<const WHEEL: bool>(
        horizon: u64,
        seed: u64,
        delay: impl Fn(&mut rand_chacha::ChaCha8Rng) -> u64,
    ) {
        use rand::{RngExt, SeedableRng};
        use std::collections::BTreeMap;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut q = EventQueue::<u32, WHEEL>::with_horizon(SimDuration(horizon));
        let mut reference = BTreeMap::new();
        let (mut now, mut seq) = (0u64, 0u32);
        for _ in 0..30_000 {
            if rng.random_bool(0.55) {
                let at = now.saturating_add(delay(&mut rng));
                if rng.random_bool(0.2) {
                    q.push_in_order(SimTime(at), seq);
                } else {
                    q.push(SimTime(at), seq);
                }
                reference.insert((at, seq), ());
                seq += 1;
            } else {
                let expected = reference.pop_first().map(|((at, s), ())| (at, s));
                let got = q.pop().map(|(t, e)| (t.0, e));
                assert_eq!(got, expected);
                if let Some((at, _)) = got {
                    now = at;
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        let rest: Vec<(u64, u32)> = reference.into_keys().collect();
        let left: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
        assert_eq!(left, rest);
    }

    #[test]
    fn both_far_lanes_keep_the_order_of_near_far_and_overflowing_events() {
        use rand::RngExt;
        // Horizon 8 us: 1 us buckets, a 2 ms span. Delays from 0 to 10 ms cover the
        // near heap, the buckets, the overflow heap and jumps over empty stretches.
        // A horizon shorter than the narrowest bucket (1 us) puts far events in the
        // bucket of the clock itself.
        let delay = |rng: &mut rand_chacha::ChaCha8Rng| match rng.random_range(0..4) {
            0 => rng.random_range(0..8_000),
            1 => rng.random_range(0..2_000_000),
            2 => rng.random_range(0..10_000_000),
            _ => 1_000 * rng.random_range(0..3), // ties
        };
        for horizon in [8_000, 500] {
            agrees_with_a_reference::<true>(horizon, 2, delay);
            agrees_with_a_reference::<false>(horizon, 2, delay);
        }
    }

    #[test]
    fn the_wheel_keeps_the_order_of_sparse_events() {
        use rand::RngExt;
        // Few events, mostly far beyond the span: the wheel is empty and jumps.
        agrees_with_a_reference::<true>(50_000, 3, |rng| {
            rng.random_range(0..1_000_000_000) * rng.random_range(0..2)
        });
    }

    #[test]
    fn crowded_buckets_with_equal_times_keep_the_order() {
        use rand::RngExt;
        // Horizon 80 ms: 4 ms buckets holding hundreds of events each, sorted by
        // the radix sort; times on a 20 us grid, so many are equal and only
        // the order they were pushed in can tell them apart.
        let delay = |rng: &mut rand_chacha::ChaCha8Rng| rng.random_range(0..2_000u64) * 20_000;
        agrees_with_a_reference::<true>(80_000_000, 5, delay);
        agrees_with_a_reference::<false>(80_000_000, 5, delay);
    }

    #[test]
    fn events_at_the_end_of_time_come_out() {
        use rand::RngExt;
        // Saturated times (a "never" computed as now + a huge delay) pile up at
        // u64::MAX, where the wheel's window cannot reach.
        let delay = |rng: &mut rand_chacha::ChaCha8Rng| match rng.random_range(0..3) {
            0 => u64::MAX,
            1 => u64::MAX - rng.random_range(0..5_000_000),
            _ => rng.random_range(0..1_000_000),
        };
        agrees_with_a_reference::<true>(8_000, 4, delay);
        agrees_with_a_reference::<false>(8_000, 4, delay);
    }

    #[test]
    fn far_events_in_the_clocks_own_bucket_come_out_in_order() {
        // Horizon 500 ns, so 1 us buckets: at time 0, 600 and 700 are far but in
        // the clock's own bucket, 5000 four buckets on.
        let mut q = EventQueue::<u32, true>::with_horizon(SimDuration(500));
        for at in [5_000, 600, 700] {
            q.push(SimTime(at), at as u32);
        }
        assert_eq!(q.far.len, 3, "all three wait in buckets");
        assert_eq!(
            drain_wheel(&mut q),
            vec![(600, 600), (700, 700), (5_000, 5_000)]
        );
    }

    #[test]
    fn buckets_give_back_their_memory() {
        // A burst of far events fills one bucket; once it is drained, the bucket
        // keeps no buffer.
        let mut q = EventQueue::<u32, true>::with_horizon(SimDuration(8_000));
        for i in 0..10_000 {
            q.push(SimTime(1_000_000), i);
        }
        assert_eq!(q.pop(), Some((SimTime(1_000_000), 0)));
        assert!(q.far.buckets.iter().all(|b| b.capacity() == 0));
        assert_eq!(drain_wheel(&mut q).len(), 9_999);
    }

    #[test]
    fn out_of_order_push_in_order_falls_back_to_the_heap() {
        let mut q = EventQueue::new();
        q.push_in_order(SimTime(50), 0);
        q.push_in_order(SimTime(10), 1);
        q.push(SimTime(30), 2);
        assert_eq!(q.peek_time(), Some(SimTime(10)));
        assert_eq!(drain(&mut q), vec![(10, 1), (30, 2), (50, 0)]);
    }

    #[test]
    fn matches_a_sorted_reference_on_random_input() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut q = EventQueue::new();
        let mut reference = Vec::new();
        let mut fifo_clock = 0;
        for i in 0..5_000u32 {
            let t = if rng.random_bool(0.5) {
                fifo_clock += rng.random_range(0..3u64);
                q.push_in_order(SimTime(fifo_clock), i);
                fifo_clock
            } else {
                let t = rng.random_range(0..2_000u64);
                q.push(SimTime(t), i);
                t
            };
            reference.push((t, i));
        }
        reference.sort(); // i is the insertion order, so this is (time, seq) order
        assert_eq!(q.len(), reference.len());
        assert_eq!(drain(&mut q), reference);
        assert!(q.is_empty());
    }
}
