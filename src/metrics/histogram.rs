//! A log-linear histogram of durations (HDR-style) with bounded relative error.
//!
//! Values below 2^SUB_BITS ns are counted exactly; above, each power-of-two range
//! is split into 2^SUB_BITS equal sub-buckets, so a bucket's width is at most
//! 2^-SUB_BITS of its lower bound. Quantiles report the bucket midpoint, within
//! 2^-(SUB_BITS+1) = 0.39% of the true sample quantile. Size: under 60 KiB.

use crate::engine::SimDuration;

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = ((64 - SUB_BITS + 1) as usize) * SUB as usize;

/// Counts of durations in log-linear buckets.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Index of the bucket that holds `v`.
fn index_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = msb - SUB_BITS;
    let mantissa = (v >> shift) - SUB; // in [0, SUB)
    ((u64::from(shift) + 1) * SUB + mantissa) as usize
}

/// The smallest value and the width of bucket `i`.
fn bounds_of(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, 1);
    }
    let shift = i / SUB - 1;
    let mantissa = i % SUB;
    ((SUB + mantissa) << shift, 1 << shift)
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Histogram {
            counts: vec![0; BUCKETS],
            total: 0,
        }
    }

    /// Counts one value.
    pub fn record(&mut self, d: SimDuration) {
        self.counts[index_of(d.0)] += 1;
        self.total += 1;
    }

    /// Number of values counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The `q`-quantile (0 <= q <= 1): the midpoint of the bucket that holds the
    /// value of rank ceil(q * n). `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<SimDuration> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, width) = bounds_of(i);
                return Some(SimDuration(lo + (width - 1) / 2));
            }
        }
        None
    }

    /// How many values are above `d`: those in the buckets above the one
    /// that holds `d` (a value in that bucket, at most 2^-SUB_BITS above
    /// `d`, counts as not above it).
    pub fn count_above(&self, d: SimDuration) -> u64 {
        self.counts
            .get(index_of(d.0) + 1..)
            .map_or(0, |above| above.iter().sum())
    }

    /// Adds the counts of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_whole_range() {
        let mut next = 0u64;
        for i in 0..BUCKETS {
            let (lo, width) = bounds_of(i);
            assert_eq!(lo, next, "bucket {i}");
            assert_eq!(index_of(lo), i);
            assert_eq!(index_of(lo + (width - 1)), i);
            next = lo.wrapping_add(width);
        }
        assert_eq!(next, 0, "the last bucket ends at u64::MAX");
    }

    #[test]
    fn relative_error_is_bounded() {
        for v in [
            1u64,
            127,
            128,
            129,
            1_000,
            65_432,
            1_234_567,
            987_654_321_000,
            u64::MAX / 3,
        ] {
            let (lo, width) = bounds_of(index_of(v));
            let mid = lo + (width - 1) / 2;
            let err = (mid as f64 - v as f64).abs() / v as f64;
            assert!(err <= 1.0 / 256.0, "{v}: midpoint {mid}, error {err}");
        }
    }

    #[test]
    fn quantiles_of_a_known_sample() {
        let mut h = Histogram::new();
        for ms in 1..=1000u64 {
            h.record(SimDuration::from_millis(ms));
        }
        let p50 = h.quantile(0.5).unwrap().as_nanos_f64();
        let p99 = h.quantile(0.99).unwrap().as_nanos_f64();
        assert!((p50 / 500e6 - 1.0).abs() < 0.004, "p50 {p50}");
        assert!((p99 / 990e6 - 1.0).abs() < 0.004, "p99 {p99}");
        assert_eq!(Histogram::new().quantile(0.5), None);
    }
}
