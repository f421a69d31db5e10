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
    /// The share of the bucket it could take new attempts (in service, and
    /// neither ejected nor failing its health checks).
    pub in_rotation: f64,
    /// Times it was ejected.
    pub ejections: u32,
    /// Requests that left it (served, refused by a worker, dropped or
    /// thrown out).
    pub departures: u32,
    /// Their time in it, summed, ns.
    pub sojourn_ns: u64,
}

/// A gauge's value per replica, since when, and its area in the current bucket.
#[derive(Clone, Debug)]
struct Areas {
    value: Vec<(u64, SimTime)>,
    area: Vec<u128>,
}

impl Areas {
    fn new(replicas: usize, start: u64) -> Self {
        Areas {
            value: vec![(start, SimTime::ZERO); replicas],
            area: vec![0; replicas],
        }
    }
}

/// The recorder of a fleet's replicas.
#[derive(Clone, Debug)]
pub struct ReplicaRecorder {
    width: u64,
    per: usize,
    /// `replica * per + bucket`.
    buckets: Vec<ReplicaBucket>,
    /// Each replica's held count.
    held: Areas,
    /// In how many views each replica is in the rotation (0 to `views`).
    rotation: Areas,
    /// The balancers that each have a view of the fleet (one per proxy, or
    /// one for all).
    views: u64,
    /// Each replica's departures and their time in it, for Little's law.
    departures: Vec<Departures>,
}

/// What left one replica over a run: requests served, refused by a worker,
/// dropped or thrown out, and the time they spent in it. With the requests
/// held (time-averaged) these check Little's law replica by replica.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Departures {
    /// Requests that left.
    pub count: u64,
    /// Their time in the replica, summed, ns.
    pub sojourn_ns: u128,
}

/// Which gauge.
#[derive(Clone, Copy)]
enum Which {
    Held,
    Rotation,
}

impl ReplicaRecorder {
    /// A recorder for `replicas` over a run of `duration` in buckets of
    /// `width`, the first `in_service` of them in the rotation at the start.
    pub fn new(
        replicas: usize,
        in_service: usize,
        duration: SimDuration,
        width: SimDuration,
    ) -> Self {
        let per = duration.0.div_ceil(width.0.max(1)).max(1) as usize;
        let mut rotation = Areas::new(replicas, 1);
        for v in rotation.value.iter_mut().skip(in_service) {
            v.0 = 0;
        }
        ReplicaRecorder {
            width: width.0.max(1),
            per,
            buckets: vec![ReplicaBucket::default(); replicas * per],
            held: Areas::new(replicas, 0),
            rotation,
            views: 1,
            departures: vec![Departures::default(); replicas],
        }
    }

    /// The recorder, for a fleet seen by `views` balancers of their own:
    /// `in_rotation` is then the share of their views a replica is open in.
    pub fn with_views(mut self, views: u64) -> Self {
        let views = views.max(1);
        for v in &mut self.rotation.value {
            v.0 *= views;
        }
        self.views = views;
        self
    }

    /// A request left `replica` at `now` after `sojourn` in it.
    pub fn departure(&mut self, replica: usize, now: SimTime, sojourn: SimDuration) {
        let d = &mut self.departures[replica];
        d.count += 1;
        d.sojourn_ns += u128::from(sojourn.0);
        let b = self.at(replica, now);
        b.departures += 1;
        b.sojourn_ns = b.sojourn_ns.saturating_add(sojourn.0);
    }

    fn areas(&mut self, which: Which) -> &mut Areas {
        match which {
            Which::Held => &mut self.held,
            Which::Rotation => &mut self.rotation,
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

    /// `replica` was ejected at `now`.
    pub fn ejection(&mut self, replica: usize, now: SimTime) {
        self.at(replica, now).ejections += 1;
    }

    /// `replica` holds `count` requests from `now` on.
    pub fn held(&mut self, replica: usize, now: SimTime, count: u64) {
        self.set(Which::Held, replica, now, count);
    }

    /// `replica` is in the rotation of `views` of the views from `now` on
    /// (of one view: 1 in it, 0 not).
    pub fn rotation(&mut self, replica: usize, now: SimTime, views: u64) {
        self.set(Which::Rotation, replica, now, views);
    }

    fn set(&mut self, which: Which, replica: usize, now: SimTime, value: u64) {
        if self.areas(which).value[replica].0 != value {
            self.accumulate(which, replica, now);
            self.areas(which).value[replica].0 = value;
        }
    }

    /// Adds `replica`'s area from its last change to `now`, closing the
    /// buckets passed on the way.
    fn accumulate(&mut self, which: Which, replica: usize, now: SimTime) {
        let (width, per) = (self.width, self.per);
        let (count, mut t) = self.areas(which).value[replica];
        while t < now {
            let b = (t.0 / width) as usize;
            let end = SimTime((b as u64 + 1) * width).min(now);
            self.areas(which).area[replica] += u128::from(count) * u128::from((end - t).0);
            if end.0 % width == 0 && b < per {
                // The bucket is over: its average is known.
                let avg =
                    std::mem::take(&mut self.areas(which).area[replica]) as f64 / width as f64;
                self.write(which, replica * per + b, avg);
            }
            t = end;
        }
        self.areas(which).value[replica].1 = now;
    }

    fn write(&mut self, which: Which, i: usize, avg: f64) {
        match which {
            Which::Held => self.buckets[i].held = avg,
            Which::Rotation => self.buckets[i].in_rotation = avg / self.views as f64,
        }
    }

    /// The series, with every replica's last bucket closed at `end`:
    /// `replicas x buckets`, replica by replica; and each replica's departures.
    pub fn finish(mut self, end: SimTime) -> (Vec<ReplicaBucket>, Vec<Departures>) {
        let end = SimTime(end.0.min(self.per as u64 * self.width));
        for which in [Which::Held, Which::Rotation] {
            for r in 0..self.held.value.len() {
                self.accumulate(which, r, end);
                let b = (end.0 / self.width) as usize;
                if end.0 % self.width != 0 && b < self.per {
                    // A last bucket cut short by the run's end: its average
                    // over the bucket's width, as the fleet's gauges have it.
                    let avg = self.areas(which).area[r] as f64 / self.width as f64;
                    self.write(which, r * self.per + b, avg);
                }
            }
        }
        (self.buckets, self.departures)
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
        let mut r = ReplicaRecorder::new(2, 2, SimDuration(30), SimDuration(10));
        // Replica 0 holds 2 from t = 5 to t = 25, then 0.
        r.held(0, SimTime(5), 2);
        r.held(0, SimTime(25), 0);
        r.arrival(1, SimTime(12));
        r.served(1, SimTime(29));
        r.crash(1, SimTime(29));
        let (b, _) = r.finish(SimTime(30));
        let held0: Vec<f64> = b[0..3].iter().map(|x| x.held).collect();
        assert_eq!(held0, [1.0, 2.0, 1.0]);
        assert_eq!((b[4].arrivals, b[5].served, b[5].crashes), (1, 1, 1));
        assert!(b[3..6].iter().all(|x| x.held == 0.0));
        assert!(b.iter().all(|x| x.in_rotation == 1.0));
    }

    #[test]
    fn rotation_is_the_share_of_each_bucket_in_service() {
        // Replica 1 starts out of service, joins at 15, leaves at 22.
        let mut r = ReplicaRecorder::new(2, 1, SimDuration(30), SimDuration(10));
        r.rotation(1, SimTime(15), 1);
        r.rotation(1, SimTime(22), 0);
        r.ejection(1, SimTime(22));
        let (b, _) = r.finish(SimTime(30));
        let rot: Vec<f64> = b[3..6].iter().map(|x| x.in_rotation).collect();
        assert_eq!(rot, [0.0, 0.5, 0.2]);
        assert_eq!(b[5].ejections, 1);
    }
}
