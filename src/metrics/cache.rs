//! What the look-aside cache did, bucket by bucket: lookups that hit, that
//! missed (and went to the backend), that the warm-up gate failed at once,
//! and the entries held at the bucket's end.

use crate::engine::{SimDuration, SimTime};

/// One time bucket of the cache's record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheBucket {
    /// Requests answered from the cache.
    pub hits: u64,
    /// Requests that missed and went to the backend.
    pub misses: u64,
    /// Requests that missed and the warm-up gate failed at once.
    pub gated: u64,
    /// Entries held at the bucket's end.
    pub entries: u64,
}

/// Records the cache of one run.
#[derive(Clone, Debug)]
pub struct CacheRecorder {
    bucket_ns: u64,
    buckets: Vec<CacheBucket>,
    /// Entries at time zero.
    first: u64,
    /// Whether each bucket's entries were set.
    set: Vec<bool>,
}

impl CacheRecorder {
    /// A record over `duration` in buckets of `bucket`, the cache holding
    /// `entries` at time zero.
    pub fn new(duration: SimDuration, bucket: SimDuration, entries: u64) -> Self {
        let n = duration.0.div_ceil(bucket.0.max(1)).max(1) as usize;
        CacheRecorder {
            bucket_ns: bucket.0.max(1),
            buckets: vec![CacheBucket::default(); n],
            first: entries,
            set: vec![false; n],
        }
    }

    fn index(&self, now: SimTime) -> usize {
        ((now.0 / self.bucket_ns) as usize).min(self.buckets.len() - 1)
    }

    /// A lookup at `now`: a hit, a miss sent on, or a miss gated; the
    /// cache holds `entries` after it.
    pub fn lookup(&mut self, now: SimTime, hit: bool, gated: bool, entries: u64) {
        let i = self.index(now);
        let b = &mut self.buckets[i];
        match (hit, gated) {
            (true, _) => b.hits += 1,
            (false, false) => b.misses += 1,
            (false, true) => b.gated += 1,
        }
        self.entries(now, entries);
    }

    /// The cache holds `entries` at `now`.
    pub fn entries(&mut self, now: SimTime, entries: u64) {
        let i = self.index(now);
        self.buckets[i].entries = entries;
        self.set[i] = true;
    }

    /// The buckets, each bucket's entries carried forward from the last
    /// change.
    pub fn finish(mut self) -> Vec<CacheBucket> {
        let mut last = self.first;
        for (b, set) in self.buckets.iter_mut().zip(&self.set) {
            if !set {
                b.entries = last;
            }
            last = b.entries;
        }
        self.buckets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lookups_and_carries_entries_forward() {
        let mut r = CacheRecorder::new(SimDuration(30), SimDuration(10), 5);
        r.lookup(SimTime(12), true, false, 5);
        r.lookup(SimTime(13), false, false, 5);
        r.lookup(SimTime(14), false, true, 5);
        r.entries(SimTime(15), 6);
        let b = r.finish();
        assert_eq!(b[0].entries, 5);
        assert_eq!(
            b[1],
            CacheBucket {
                hits: 1,
                misses: 1,
                gated: 1,
                entries: 6
            }
        );
        assert_eq!(b[2].entries, 6);
    }
}
