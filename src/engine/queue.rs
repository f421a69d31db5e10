//! The event queue: a binary heap keyed by (time, insertion sequence), plus a FIFO
//! lane for events pushed in time order (fixed-length timers), merged on pop.
//!
//! Equal times come out in insertion order whichever lane holds them, because both
//! lanes share one sequence counter and the key packs `time << 64 | sequence` into a
//! `u128` (a single integer comparison; REFERENCE.md section 7 measured it faster
//! than a derived multi-field `Ord`).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::time::SimTime;

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
    heap: BinaryHeap<Reverse<Entry<E>>>,
    fifo: VecDeque<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            fifo: VecDeque::new(),
            next_seq: 0,
        }
    }

    fn key(&mut self, at: SimTime) -> u128 {
        let key = (u128::from(at.0) << 64) | u128::from(self.next_seq);
        self.next_seq += 1;
        key
    }

    /// Schedules `event` at `at`.
    pub fn push(&mut self, at: SimTime, event: E) {
        let key = self.key(at);
        self.heap.push(Reverse(Entry { key, event }));
    }

    /// Schedules `event` at `at`, cheaply when `at` is no earlier than the last event
    /// pushed this way (the case of timers that all have the same length); otherwise
    /// it falls back to the heap. Order is the same as with [`EventQueue::push`].
    pub fn push_in_order(&mut self, at: SimTime, event: E) {
        let key = self.key(at);
        match self.fifo.back() {
            Some(last) if last.key > key => self.heap.push(Reverse(Entry { key, event })),
            _ => self.fifo.push_back(Entry { key, event }),
        }
    }

    /// Removes and returns the earliest event with its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let from_fifo = match (self.fifo.front(), self.heap.peek()) {
            (Some(f), Some(Reverse(h))) => f.key < h.key,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let entry = if from_fifo {
            self.fifo.pop_front()?
        } else {
            self.heap.pop()?.0
        };
        Some((SimTime((entry.key >> 64) as u64), entry.event))
    }

    /// The time of the earliest event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        let f = self.fifo.front().map(|e| e.key);
        let h = self.heap.peek().map(|Reverse(e)| e.key);
        let key = match (f, h) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(SimTime((key >> 64) as u64))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.fifo.len()
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
