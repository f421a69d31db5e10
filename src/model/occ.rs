//! The optimistic-concurrency server of the AWS "Exponential Backoff and Jitter"
//! experiment (Brooker, AWS Architecture Blog, 2015; its simulator is
//! aws-samples/aws-arch-backoff-simulator): one record with a version number,
//! read and conditionally written, answered instantly, with no capacity limit.

use crate::engine::SimTime;

/// The record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Occ {
    version: u32,
    /// When the last write was accepted (None before the first).
    last_accepted: Option<SimTime>,
}

impl Occ {
    /// The current version, as a read returns it.
    pub fn read(&self) -> u32 {
        self.version
    }

    /// A write at `now` that read `version`: accepted (and the version
    /// bumped) only if no other write came in between.
    pub fn write(&mut self, version: u32, now: SimTime) -> bool {
        let accepted = version == self.version;
        if accepted {
            self.accept(now);
        }
        accepted
    }

    /// A write at `now` whose read reached the record at `read` and was
    /// never an event of its own: accepted only if no write was accepted at
    /// or after `read`. Writes come in time order, so this is the version
    /// check of [`Occ::write`] with the read taken as it would have been
    /// handled, but that a write accepted at the very nanosecond of the
    /// read counts as after it.
    pub fn write_read_at(&mut self, read: SimTime, now: SimTime) -> bool {
        let accepted = self.last_accepted.is_none_or(|t| t < read);
        if accepted {
            self.accept(now);
        }
        accepted
    }

    fn accept(&mut self, now: SimTime) {
        self.version = self.version.wrapping_add(1);
        self.last_accepted = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_write_of_a_version_wins() {
        let mut r = Occ::default();
        let (a, b) = (r.read(), r.read());
        assert!(r.write(a, at(1)));
        assert!(!r.write(b, at(2)), "b read the version a replaced");
        let c = r.read();
        assert_eq!(c, 1);
        assert!(r.write(c, at(3)));
    }

    fn at(ns: u64) -> SimTime {
        SimTime(ns)
    }

    #[test]
    fn a_read_taken_later_sees_the_writes_before_it() {
        let mut r = Occ::default();
        assert!(r.write_read_at(at(5), at(10)), "nothing written before");
        assert!(
            !r.write_read_at(at(10), at(12)),
            "a write at the read's nanosecond"
        );
        assert!(!r.write_read_at(at(9), at(13)), "a write after the read");
        assert!(r.write_read_at(at(11), at(14)));
        // The two kinds of read see each other's writes.
        let v = r.read();
        assert!(!r.write_read_at(at(14), at(15)));
        assert!(r.write(v, at(16)));
        assert!(!r.write_read_at(at(16), at(17)));
        assert!(!r.write(v, at(18)), "the eager read's version is gone");
    }
}
