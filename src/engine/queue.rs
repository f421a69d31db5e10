//! The event queue: three lanes merged on pop, each ordered by (time, insertion
//! sequence):
//! - a *near* binary heap for events due within a horizon (network hops, service
//!   completions): the busy lane, kept small so its operations stay cheap;
//! - a *far* binary heap for the rest (think times, backoff delays), touched
//!   once per such event;
//! - a FIFO for events pushed in time order (fixed-length timers).
//!
//! Equal times come out in insertion order whichever lane holds them, because the
//! lanes share one sequence counter and the key packs `time << 64 | sequence` into
//! a `u128` (a single integer comparison; REFERENCE.md section 7 measured it faster
//! than a derived multi-field `Ord`). The horizon only moves work between lanes;
//! the order of events never depends on it.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::time::{SimDuration, SimTime};

/// One scheduled entry: the packed key and its payload.
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// A priority queue of events ordered by time, ties broken by insertion order.
pub struct EventQueue<E> {
    near: BinaryHeap<Reverse<Entry<E>>>,
    far: BinaryHeap<Reverse<Entry<E>>>,
    fifo: VecDeque<Entry<E>>,
    next_seq: u64,
    /// Events due before `now + horizon` go to the near heap.
    horizon: u64,
    /// The time of the last event popped.
    now: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue whose near lane takes everything.
    pub fn new() -> Self {
        Self::with_horizon(SimDuration(u64::MAX))
    }

    /// An empty queue whose near lane takes events due within `horizon`.
    pub fn with_horizon(horizon: SimDuration) -> Self {
        EventQueue {
            near: BinaryHeap::new(),
            far: BinaryHeap::new(),
            fifo: VecDeque::new(),
            next_seq: 0,
            horizon: horizon.0,
            now: 0,
        }
    }

    #[inline]
    fn heap_push(&mut self, at: SimTime, entry: Entry<E>) {
        if at.0.saturating_sub(self.now) < self.horizon {
            self.near.push(Reverse(entry));
        } else {
            self.far.push(Reverse(entry));
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
    #[inline]
    pub fn push_in_order(&mut self, at: SimTime, event: E) {
        let key = self.key(at);
        match self.fifo.back() {
            Some(last) if last.key > key => self.heap_push(at, Entry { key, event }),
            _ => self.fifo.push_back(Entry { key, event }),
        }
    }

    /// Removes and returns the earliest event with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        const NONE: u128 = u128::MAX;
        let fifo = self.fifo.front().map_or(NONE, |e| e.key);
        let near = self.near.peek().map_or(NONE, |Reverse(e)| e.key);
        let far = self.far.peek().map_or(NONE, |Reverse(e)| e.key);
        // Keys are unique, so at most one lane holds the minimum; NONE only
        // wins when every lane is empty.
        let entry = if near < fifo && near < far {
            self.near.pop()?.0
        } else if fifo < far {
            self.fifo.pop_front()?
        } else {
            self.far.pop()?.0
        };
        self.now = (entry.key >> 64) as u64;
        Some((SimTime(self.now), entry.event))
    }

    /// The time of the earliest event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        let fifo = self.fifo.front().map(|e| e.key);
        let near = self.near.peek().map(|Reverse(e)| e.key);
        let far = self.far.peek().map(|Reverse(e)| e.key);
        let key = [fifo, near, far].into_iter().flatten().min()?;
        Some(SimTime((key >> 64) as u64))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.near.len() + self.far.len() + self.fifo.len()
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
