//! What the server's own defences did, bucket by bucket: its adaptive
//! concurrency limit (summed over a fleet's replicas), the requests the
//! limiter answered 503 at once, and those CoDel dropped from the queue.

use crate::engine::{SimDuration, SimTime};

/// One time bucket of the defences' record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DefenceBucket {
    /// The concurrency limit at the bucket's end, the replicas' sum (`None`
    /// without a limiter).
    pub limit: Option<u64>,
    /// Requests the limiter answered 503 in the bucket.
    pub limited: u64,
    /// Requests CoDel dropped (answered 503) in the bucket.
    pub dropped: u64,
}

/// Records the defences of one run.
#[derive(Clone, Debug)]
pub struct DefenceRecorder {
    bucket_ns: u64,
    buckets: Vec<DefenceBucket>,
    /// Each replica's limit now (empty without a limiter).
    limits: Vec<u32>,
    /// Their sum.
    sum: u64,
    /// The sum at time zero.
    first: Option<u64>,
}

impl DefenceRecorder {
    /// A record over `duration` in buckets of `bucket`, for `replicas`
    /// replicas whose limits start at `initial` (`None`: no limiter).
    pub fn new(
        duration: SimDuration,
        bucket: SimDuration,
        replicas: usize,
        initial: Option<u32>,
    ) -> Self {
        let n = duration.0.div_ceil(bucket.0.max(1)).max(1) as usize;
        let limits = initial.map_or_else(Vec::new, |l| vec![l; replicas]);
        let sum = limits.iter().map(|&l| u64::from(l)).sum();
        DefenceRecorder {
            bucket_ns: bucket.0.max(1),
            buckets: vec![DefenceBucket::default(); n],
            limits,
            sum,
            first: initial.map(|_| sum),
        }
    }

    fn at(&mut self, now: SimTime) -> &mut DefenceBucket {
        let i = ((now.0 / self.bucket_ns) as usize).min(self.buckets.len() - 1);
        &mut self.buckets[i]
    }

    /// Replica `r`'s limit is `limit` at `now`.
    pub fn limit(&mut self, r: usize, now: SimTime, limit: u32) {
        let Some(old) = self.limits.get_mut(r) else {
            return;
        };
        if *old == limit {
            return;
        }
        self.sum = self.sum + u64::from(limit) - u64::from(*old);
        *old = limit;
        let sum = self.sum;
        self.at(now).limit = Some(sum);
    }

    /// The limiter answered a request 503 at `now`.
    pub fn limited(&mut self, now: SimTime) {
        self.at(now).limited += 1;
    }

    /// CoDel dropped a request at `now`.
    pub fn dropped(&mut self, now: SimTime) {
        self.at(now).dropped += 1;
    }

    /// The buckets, each limit carried forward from the last change.
    pub fn finish(mut self) -> Vec<DefenceBucket> {
        let mut last = self.first;
        for b in &mut self.buckets {
            if b.limit.is_none() {
                b.limit = last;
            }
            last = b.limit;
        }
        self.buckets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_sum_over_replicas_and_carry_forward() {
        let mut d = DefenceRecorder::new(SimDuration(40), SimDuration(10), 2, Some(3));
        d.limit(0, SimTime(12), 5);
        d.limit(1, SimTime(15), 4);
        d.limited(SimTime(15));
        d.dropped(SimTime(39));
        d.dropped(SimTime(99));
        let b = d.finish();
        let limits: Vec<_> = b.iter().map(|b| b.limit).collect();
        assert_eq!(limits, [Some(6), Some(9), Some(9), Some(9)]);
        assert_eq!(b[1].limited, 1);
        assert_eq!(b[3].dropped, 2, "past the end: the last bucket");
    }

    #[test]
    fn without_a_limiter_there_is_no_limit() {
        let mut d = DefenceRecorder::new(SimDuration(20), SimDuration(10), 1, None);
        d.limit(0, SimTime(1), 7);
        d.dropped(SimTime(1));
        let b = d.finish();
        assert_eq!(
            b[0],
            DefenceBucket {
                limit: None,
                limited: 0,
                dropped: 1
            }
        );
    }
}
