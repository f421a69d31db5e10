//! The median of searches' boundaries, and its distribution-free confidence
//! interval.
//!
//! The order statistics X(j) < X(n+1-j) of n independent draws cover the
//! median with probability 1 - 2 P(B <= j - 1), B binomial(n, 1/2), whatever
//! the draws' distribution (Conover, "Practical Nonparametric Statistics",
//! 3rd ed., section 3.2). Each search gives an interval (its last bracket,
//! or a half-line beyond the range), so the ends are taken from the
//! intervals: the interval is wider by at most the resolution.

/// The median of some intervals, and a confidence interval for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MedianInterval {
    /// The median of the intervals' middles; `None` if it is not finite
    /// (half of them or more lie beyond one end of the range).
    pub median: Option<f64>,
    /// Where the median lies when it is not finite: the half-line it is in.
    pub side: Option<(f64, f64)>,
    /// The lower end of the confidence interval (may be -inf).
    pub low: f64,
    /// The upper end (may be +inf).
    pub high: f64,
    /// The interval's confidence.
    pub confidence: f64,
}

/// The median of `intervals` (each `(low, high)`, possibly half-lines) and
/// the widest-needed order-statistic interval of at least 95% confidence,
/// or the narrowest there is (X(1), X(n)) when fewer draws cannot give 95%.
pub fn median_interval(intervals: &[(f64, f64)]) -> MedianInterval {
    let n = intervals.len();
    if n == 0 {
        return MedianInterval {
            median: None,
            side: None,
            low: f64::NEG_INFINITY,
            high: f64::INFINITY,
            confidence: 0.0,
        };
    }
    let middle = |&(lo, hi): &(f64, f64)| {
        if lo == f64::NEG_INFINITY {
            f64::NEG_INFINITY
        } else if hi == f64::INFINITY {
            f64::INFINITY
        } else {
            lo + (hi - lo) / 2.0
        }
    };
    let mut sorted = intervals.to_vec();
    sorted.sort_by(|a, b| middle(a).total_cmp(&middle(b)).then(a.0.total_cmp(&b.0)));
    let (a, b) = (sorted[(n - 1) / 2], sorted[n / 2]);
    let m = (middle(&a) + middle(&b)) / 2.0;
    let (median, side) = if m.is_finite() {
        (Some(m), None)
    } else if middle(&a).is_infinite() {
        (None, Some(a))
    } else {
        (None, Some(b))
    };
    let j = order_statistic(n);
    MedianInterval {
        median,
        side,
        low: sorted[j - 1].0,
        high: sorted[n - j].1,
        confidence: coverage(n, j),
    }
}

/// The confidence of (X(j), X(n+1-j)) as an interval for the median of n
/// draws: 1 - 2 P(B <= j - 1), B binomial(n, 1/2).
pub fn coverage(n: usize, j: usize) -> f64 {
    let mut p = 0.5f64.powi(n as i32);
    let mut below = 0.0;
    for k in 0..j {
        below += p;
        p = p * (n - k) as f64 / (k + 1) as f64;
    }
    (1.0 - 2.0 * below).max(0.0)
}

/// The largest j (from 1) whose interval still has 95% confidence; 1 if none
/// has.
fn order_statistic(n: usize) -> usize {
    let mut j = 1;
    while j < n.div_ceil(2) && coverage(n, j + 1) >= 0.95 {
        j += 1;
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Conover's table: 5 draws give (X(1), X(5)) at 93.75%; 9 give (X(2),
    /// X(8)) at 96.1%; 20 give (X(6), X(15)) at 95.9%.
    #[test]
    fn the_order_statistics_are_the_binomials() {
        assert!((coverage(5, 1) - 0.9375).abs() < 1e-12);
        assert_eq!(order_statistic(5), 1);
        assert_eq!(order_statistic(9), 2);
        assert!((coverage(9, 2) - (1.0 - 2.0 * 10.0 / 512.0)).abs() < 1e-12);
        assert_eq!(order_statistic(20), 6);
        assert!(coverage(20, 6) >= 0.95 && coverage(20, 7) < 0.95);
        assert_eq!(coverage(1, 1), 0.0);
    }

    #[test]
    fn the_median_of_brackets_and_half_lines() {
        let b = |lo: f64, hi: f64| (lo, hi);
        let m = median_interval(&[b(2.0, 2.5), b(1.0, 1.5), b(3.0, 3.5)]);
        assert_eq!(m.median, Some(2.25));
        assert_eq!((m.low, m.high), (1.0, 3.5));
        assert!((m.confidence - 0.75).abs() < 1e-12);
        // Two of three beyond the range: the median is beyond it.
        let beyond = (10.0, f64::INFINITY);
        let m = median_interval(&[beyond, b(1.0, 1.5), beyond]);
        assert_eq!(m.median, None);
        assert_eq!(m.side, Some(beyond));
        assert_eq!((m.low, m.high), (1.0, f64::INFINITY));
        // An even count averages the two middles.
        let m = median_interval(&[b(1.0, 1.0), b(2.0, 2.0), b(4.0, 4.0), b(8.0, 8.0)]);
        assert_eq!(m.median, Some(3.0));
    }
}
