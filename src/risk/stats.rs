//! Intervals for the estimates: Student's t for the mean of independent
//! estimates, Wilson's score interval for a proportion.

/// An estimate and its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// The estimate.
    pub mean: f64,
    /// The interval's lower end.
    pub low: f64,
    /// Its upper end.
    pub high: f64,
}

/// Student's t at 97.5% for 1 to 30 degrees of freedom (any table, e.g.
/// NIST/SEMATECH e-Handbook of Statistical Methods, section 1.3.6.7.2).
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The t quantile at 97.5% for `df` degrees of freedom (beyond 30, the
/// normal's 1.96 plus the first two terms of the Cornish-Fisher expansion
/// (Abramowitz and Stegun 26.7.5), within 0.001 of the table there).
fn t975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T975[df - 1],
        _ => {
            let (z, n): (f64, f64) = (1.959_964, df as f64);
            z + (z.powi(3) + z) / (4.0 * n)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n)
        }
    }
}

/// The mean of independent estimates and its 95% t interval (the lower end
/// no less than 0: the estimates are probabilities).
pub fn mean_interval(xs: &[f64]) -> Interval {
    let n = xs.len();
    if n == 0 {
        return Interval {
            mean: f64::NAN,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = if n > 1 {
        xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        f64::INFINITY
    };
    let half = t975(n - 1) * (var / n as f64).sqrt();
    Interval {
        mean,
        low: (mean - half).max(0.0),
        high: (mean + half).min(1.0),
    }
}

/// `k` of `n` and Wilson's 95% score interval (Wilson, JASA 1927): unlike
/// the normal approximation, sensible at 0 of `n` (from 0 to 3.84 / n).
pub fn wilson(k: u64, n: u64) -> Interval {
    if n == 0 {
        return Interval {
            mean: f64::NAN,
            low: 0.0,
            high: 1.0,
        };
    }
    let z2 = 1.959_964_f64.powi(2);
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = (z2.sqrt() / (1.0 + z2 / n)) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Interval {
        mean: p,
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_t_interval_of_known_numbers() {
        // Mean 2, sample sd 1 (1, 2, 3), n 3: half-width 4.303 / sqrt(3).
        let i = mean_interval(&[0.1, 0.2, 0.3]);
        assert!((i.mean - 0.2).abs() < 1e-12);
        let half = 4.303 * 0.1 / 3f64.sqrt();
        assert!((i.high - (0.2 + half)).abs() < 1e-12);
        assert!(i.low == 0.0 || (i.low - (0.2 - half)).abs() < 1e-12);
    }

    #[test]
    fn the_t_quantile_beyond_the_table_meets_it() {
        assert!((t975(31) - 2.040).abs() < 1e-3);
        assert!((t975(120) - 1.980).abs() < 1e-3);
    }

    #[test]
    fn wilson_against_hand_figures() {
        // 0 of 100: from 0 to z^2 / (n + z^2) = 3.8415 / 103.8415.
        let i = wilson(0, 100);
        assert_eq!(i.low, 0.0);
        assert!((i.high - 3.841_459 / 103.841_459).abs() < 1e-6);
        // 50 of 100: 0.4038 to 0.5962 (Newcombe, Stat. Med. 1998, table I's method 3).
        let i = wilson(50, 100);
        assert!((i.low - 0.4038).abs() < 1e-4 && (i.high - 0.5962).abs() < 1e-4);
    }
}
