//! Per-replica time series of a fleet: for each replica and time bucket, the
//! attempts that reached it, the successes it served, its crashes, and the
//! requests it held (queued plus in service) as a time average. Kept only for
//! a fleet (more than one replica), so a single server's run pays nothing.
//!
//! A replica's held count changes often and at its own times: its area under
//! the curve is added up as it changes, split at bucket boundaries, so the
//! recorder does no work per bucket per replica while nothing happens there.

use crate::engine::{SimDuration, SimTime};

/// One replica's figures over one bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReplicaBucket {
    /// Attempts that reached the replica.
    pub arrivals: u32,
    /// Successes it answered (delivered to a client still waiting).
    pub served: u32,
    /// Times it crashed.
    pub crashes: u32,
    /// Requests held, queued plus in service, time-averaged over the bucket.
    pub held: f64,
}

/// The recorder of a fleet's replicas.
#[derive(Clone, Debug)]
pub struct ReplicaRecorder {
    width: u64,
    per: usize,
    /// `replica * per + bucket`.
    buckets: Vec<ReplicaBucket>,
    /// Each replica's held count and since when.
    held: Vec<(u64, SimTime)>,
    /// Each replica's accumulated area (count x ns) in its current bucket.
    area: Vec<u128>,
}

impl ReplicaRecorder {
    /// A recorder for `replicas` over a run of `duration` in buckets of `width`.
    pub fn new(replicas: usize, duration: SimDuration, width: SimDuration) -> Self {
        let per = duration.0.div_ceil(width.0.max(1)).max(1) as usize;
        ReplicaRecorder {
            width: width.0.max(1),
            per,
            buckets: vec![ReplicaBucket::default(); replicas * per],
            held: vec![(0, SimTime::ZERO); replicas],
            area: vec![0; replicas],
        }
    }

    fn at(&mut self, replica: usize, now: SimTime) -> &mut ReplicaBucket {
        let b = ((now.0 / self.width) as usize).min(self.per - 1);
        &mut self.buckets[replica * self.per + b]
    }

    /// An attempt reached `replica` at `now`.
    pub fn arrival(&mut self, replica: usize, now: SimTime) {
        self.at(replica, now).arrivals += 1;
    }

    /// `replica` served a success at `now`.
    pub fn served(&mut self, replica: usize, now: SimTime) {
        self.at(replica, now).served += 1;
    }

    /// `replica` crashed at `now`.
    pub fn crash(&mut self, replica: usize, now: SimTime) {
        self.at(replica, now).crashes += 1;
    }

    /// `replica` holds `count` requests from `now` on.
    pub fn held(&mut self, replica: usize, now: SimTime, count: u64) {
        if self.held[replica].0 != count {
            self.accumulate(replica, now);
            self.held[replica].0 = count;
        }
    }

    /// Adds `replica`'s area from its last change to `now`, closing the
    /// buckets passed on the way.
    fn accumulate(&mut self, replica: usize, now: SimTime) {
        let (count, mut t) = self.held[replica];
        while t < now {
            let b = (t.0 / self.width) as usize;
            let end = SimTime((b as u64 + 1) * self.width).min(now);
            self.area[replica] += u128::from(count) * u128::from((end - t).0);
            if end.0 % self.width == 0 && b < self.per {
                // The bucket is over: its average is known.
                let i = replica * self.per + b;
                self.buckets[i].held = self.area[replica] as f64 / self.width as f64;
                self.area[replica] = 0;
            }
            t = end;
        }
        self.held[replica].1 = now;
    }

    /// The series, with every replica's last bucket closed at `end`:
    /// `replicas x buckets`, replica by replica.
    pub fn finish(mut self, end: SimTime) -> Vec<ReplicaBucket> {
        let end = SimTime(end.0.min(self.per as u64 * self.width));
        for r in 0..self.held.len() {
            self.accumulate(r, end);
            let b = (end.0 / self.width) as usize;
            if end.0 % self.width != 0 && b < self.per {
                // A last bucket cut short by the run's end: its average over
                // the bucket's width, as the fleet's gauges have it.
                self.buckets[r * self.per + b].held = self.area[r] as f64 / self.width as f64;
            }
        }
        self.buckets
    }

    /// Buckets per replica.
    pub fn per_replica(&self) -> usize {
        self.per
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_is_a_time_average_split_at_bucket_boundaries() {
        // Buckets of 10 ns over 30 ns, two replicas.
        let mut r = ReplicaRecorder::new(2, SimDuration(30), SimDuration(10));
        // Replica 0 holds 2 from t = 5 to t = 25, then 0.
        r.held(0, SimTime(5), 2);
        r.held(0, SimTime(25), 0);
        r.arrival(1, SimTime(12));
        r.served(1, SimTime(29));
        r.crash(1, SimTime(29));
        let b = r.finish(SimTime(30));
        let held0: Vec<f64> = b[0..3].iter().map(|x| x.held).collect();
        assert_eq!(held0, [1.0, 2.0, 1.0]);
        assert_eq!((b[4].arrivals, b[5].served, b[5].crashes), (1, 1, 1));
        assert!(b[3..6].iter().all(|x| x.held == 0.0));
    }
}
