//! The event queue's lane for events pushed in time order (the timeouts of
//! one length): a FIFO, in which an event can be cancelled by the ticket its
//! push returned.
//!
//! A timeout is nearly always stale: the answer came first. Popped, it
//! would be handled only to find its attempt over, and that first look at
//! the attempt's request is a load from main memory once the requests no
//! longer fit in cache (a million clients). Cancelled, it sets a bit here,
//! in a bit set of one bit per pending timer (150 KiB for a million of
//! them, where the entries take 32 MiB), and is skipped when it reaches the
//! front of the lane without being looked at.
//!
//! The lane keeps the invariant that its front entry, if any, is live, so
//! the queue compares lanes exactly as without cancellation: a cancelled
//! entry never takes part in the order.

use std::collections::VecDeque;

/// Names a timer in the lane: its position, counted from the first ever
/// pushed, modulo 2^31. Pending timers are far fewer than 2^31 (they would
/// need 64 GiB), so the position is unambiguous. [`Ticket::NONE`] names
/// nothing (a timer that went to another lane, which cannot be cancelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u32);

/// Positions wrap at this.
const WRAP: u64 = 1 << 31;

impl Ticket {
    /// No timer: cancelling it does nothing.
    pub const NONE: Ticket = Ticket(u32::MAX);

    /// The ticket as 32 bits, to be carried in an event.
    pub fn to_bits(self) -> u32 {
        self.0
    }

    /// The ticket [`Ticket::to_bits`] gave.
    pub fn from_bits(bits: u32) -> Ticket {
        Ticket(bits)
    }
}

/// The FIFO with its cancelled entries marked.
#[derive(Clone)]
pub(super) struct Timers<T> {
    entries: VecDeque<T>,
    /// Position of the front entry, counted from the first ever pushed.
    head: u64,
    /// One bit per position from `base` on, set when cancelled.
    dead: VecDeque<u64>,
    /// A multiple of 64, at or before `head`.
    base: u64,
    /// Cancelled entries still in `entries`.
    cancelled: usize,
}

impl<T> Timers<T> {
    pub(super) fn new() -> Self {
        Timers {
            entries: VecDeque::new(),
            head: 0,
            dead: VecDeque::new(),
            base: 0,
            cancelled: 0,
        }
    }

    /// The live entries.
    pub(super) fn len(&self) -> usize {
        self.entries.len() - self.cancelled
    }

    /// The first entry (live, by the invariant).
    #[inline(always)]
    pub(super) fn front(&self) -> Option<&T> {
        self.entries.front()
    }

    /// The latest entry held (perhaps cancelled): no entry held is later.
    #[inline(always)]
    pub(super) fn back(&self) -> Option<&T> {
        self.entries.back()
    }

    /// Appends `entry`; its ticket cancels it.
    #[inline]
    pub(super) fn push_back(&mut self, entry: T) -> Ticket {
        let at = self.head + self.entries.len() as u64;
        if ((at - self.base) >> 6) as usize >= self.dead.len() {
            self.dead.push_back(0);
        }
        self.entries.push_back(entry);
        Ticket((at % WRAP) as u32)
    }

    /// Takes the first entry (live, by the invariant), and drops the
    /// cancelled entries behind it.
    #[inline]
    pub(super) fn pop_front(&mut self) -> Option<T> {
        let entry = self.entries.pop_front()?;
        self.step();
        self.skip_cancelled();
        Some(entry)
    }

    /// The `depth`-th entry from the front, if it is live.
    #[inline(always)]
    pub(super) fn get_live(&self, depth: usize) -> Option<&T> {
        let entry = self.entries.get(depth)?;
        (!self.is_cancelled(self.head + depth as u64)).then_some(entry)
    }

    /// Cancels the entry `ticket` names, if it is still pending; a ticket of
    /// an entry already popped or cancelled, or [`Ticket::NONE`], does nothing.
    #[inline]
    pub(super) fn cancel(&mut self, ticket: Ticket) {
        if ticket == Ticket::NONE {
            return;
        }
        let behind = (u64::from(ticket.0) + WRAP - self.head % WRAP) % WRAP;
        if behind >= self.entries.len() as u64 {
            return;
        }
        self.mark(self.head + behind);
        if behind == 0 {
            self.skip_cancelled();
        }
    }

    /// Cancels every entry `keep` rejects (their positions, and so every
    /// ticket, stay as they were).
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let rejected: Vec<u64> = (self.entries.iter().enumerate())
            .filter(|(_, e)| !keep(e))
            .map(|(i, _)| self.head + i as u64)
            .collect();
        for at in rejected {
            self.mark(at);
        }
        self.skip_cancelled();
    }

    /// Whether the entry at position `at` (pending) is cancelled.
    #[inline(always)]
    fn is_cancelled(&self, at: u64) -> bool {
        let i = at - self.base;
        self.dead
            .get((i >> 6) as usize)
            .is_some_and(|w| w >> (i & 63) & 1 == 1)
    }

    /// Marks the pending entry at position `at` cancelled.
    fn mark(&mut self, at: u64) {
        let i = at - self.base;
        if let Some(w) = self.dead.get_mut((i >> 6) as usize) {
            let bit = 1 << (i & 63);
            if *w & bit == 0 {
                *w |= bit;
                self.cancelled += 1;
            }
        }
    }

    /// The front entry is gone: the head moves on, and the bit set with it.
    #[inline(always)]
    fn step(&mut self) {
        self.head += 1;
        if self.head - self.base == 64 {
            self.dead.pop_front();
            self.base += 64;
        }
    }

    /// Drops cancelled entries from the front, so the front is live.
    #[inline(always)]
    fn skip_cancelled(&mut self) {
        while self.cancelled > 0 && self.is_cancelled(self.head) {
            self.entries.pop_front();
            self.cancelled -= 1;
            self.step();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(t: &mut Timers<u32>) -> Vec<u32> {
        std::iter::from_fn(|| t.pop_front()).collect()
    }

    #[test]
    fn cancelled_entries_never_come_out_and_the_others_keep_their_order() {
        let mut t = Timers::new();
        let tickets: Vec<Ticket> = (0..300).map(|i| t.push_back(i)).collect();
        // Cancel the front, a run across a word of the bit set, and the last.
        for i in [0, 1, 62, 63, 64, 65, 127, 128, 299] {
            t.cancel(tickets[i as usize]);
        }
        assert_eq!(t.len(), 291);
        assert_eq!(t.front(), Some(&2), "the front is live");
        let out = drain(&mut t);
        let expected: Vec<u32> = (0..300)
            .filter(|i| ![0, 1, 62, 63, 64, 65, 127, 128, 299].contains(i))
            .collect();
        assert_eq!(out, expected);
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn a_stale_ticket_cancels_nothing() {
        let mut t = Timers::new();
        let a = t.push_back(1);
        t.push_back(2);
        assert_eq!(t.pop_front(), Some(1));
        t.cancel(a); // already popped
        t.cancel(a); // and again
        t.cancel(Ticket::NONE);
        let c = t.push_back(3);
        t.cancel(c);
        t.cancel(c); // cancelled twice counts once
        assert_eq!(t.len(), 1);
        assert_eq!(drain(&mut t), vec![2]);
    }

    /// Interleaved pushes, pops and cancels give what a plain list with the
    /// cancelled entries removed gives, over many words of the bit set.
    #[test]
    fn matches_a_plain_list() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut t = Timers::new();
        let mut plain: VecDeque<(u32, Ticket)> = VecDeque::new();
        for i in 0..50_000u32 {
            match rng.random_range(0..10) {
                0..=4 => plain.push_back((i, t.push_back(i))),
                5..=7 => assert_eq!(t.pop_front(), plain.pop_front().map(|p| p.0)),
                _ => {
                    if !plain.is_empty() {
                        let k = rng.random_range(0..plain.len());
                        let (_, ticket) = plain.remove(k).unwrap();
                        t.cancel(ticket);
                    }
                }
            }
            assert_eq!(t.len(), plain.len());
            assert_eq!(t.front(), plain.front().map(|p| &p.0));
            // The latest held may be cancelled, never earlier than the
            // latest live.
            assert!(t.back() >= plain.back().map(|p| &p.0));
            for depth in [0, 3] {
                if let Some(&e) = t.get_live(depth) {
                    assert!(plain.iter().any(|p| p.0 == e), "a live entry is held");
                }
            }
        }
        assert_eq!(drain(&mut t), plain.iter().map(|p| p.0).collect::<Vec<_>>());
    }

    #[test]
    fn retain_keeps_the_tickets_of_what_it_keeps() {
        let mut t = Timers::new();
        let tickets: Vec<Ticket> = (0..10).map(|i| t.push_back(i)).collect();
        t.retain(|&e| e % 2 == 1);
        t.cancel(tickets[5]);
        assert_eq!(drain(&mut t), vec![1, 3, 7, 9]);
    }

    /// Positions wrap at 2^31 without confusing a ticket: the lane's head
    /// is moved near the wrap by hand.
    #[test]
    fn tickets_survive_the_wrap() {
        let mut t: Timers<u32> = Timers::new();
        t.head = WRAP - 3;
        t.base = (WRAP - 3) / 64 * 64;
        let tickets: Vec<Ticket> = (0..6).map(|i| t.push_back(i)).collect();
        assert_eq!(tickets[3], Ticket(0));
        t.cancel(tickets[4]);
        t.cancel(tickets[1]);
        assert_eq!(drain(&mut t), vec![0, 2, 3, 5]);
    }
}
