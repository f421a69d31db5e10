//! Means and 95% confidence intervals over replications (Student t), and
//! 95% intervals for a share of runs (Wilson).

/// Two-sided 97.5% quantiles of Student's t for 1 to 30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The 97.5% quantile of Student's t with `df` degrees of freedom: a table up to
/// 30, then the Cornish-Fisher expansion in 1/df around the normal quantile
/// (Abramowitz and Stegun 26.7.5), within 0.001 of the exact value there.
pub fn t975(df: u64) -> f64 {
    if df == 0 {
        return f64::NAN;
    }
    if let Some(t) = T975.get(df as usize - 1) {
        return *t;
    }
    let z: f64 = 1.959_964;
    let n = df as f64;
    let g1 = (z.powi(3) + z) / 4.0;
    let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
    let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
    z + g1 / n + g2 / (n * n) + g3 / (n * n * n)
}

/// Median and largest value of `xs`, which may hold infinities; `None` for no
/// values. The median of an even count is the mean of the middle two (infinite
/// if either is).
pub fn median_max(xs: &[f64]) -> (Option<f64>, Option<f64>) {
    let mut v: Vec<f64> = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return (None, None);
    }
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (Some(median), Some(v[n - 1]))
}

/// Mean and the half-width of its 95% confidence interval, `t * s / sqrt(n)`.
/// With one value the half-width is `None`; with none both are `None`.
pub fn mean_ci95(xs: &[f64]) -> (Option<f64>, Option<f64>) {
    let n = xs.len();
    if n == 0 {
        return (None, None);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (Some(mean), None);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (
        Some(mean),
        Some(t975(n as u64 - 1) * (var / n as f64).sqrt()),
    )
}

/// A share of `k` runs out of `n` and its Wilson score 95% interval
/// `(share, low, high)` (Wilson 1927; the interval Brown, Cai and DasGupta 2001
/// recommend for small `n`): unlike the mean's t interval, it stays within
/// [0, 1] and is not empty at a share of 0 or 1. `None` for no runs.
pub fn wilson95(k: u64, n: u64) -> Option<(f64, f64, f64)> {
    if n == 0 {
        return None;
    }
    let z: f64 = 1.959_964;
    let (nf, p) = (n as f64, k as f64 / n as f64);
    let z2n = z * z / nf;
    let centre = (p + z2n / 2.0) / (1.0 + z2n);
    let half = z / (1.0 + z2n) * (p * (1.0 - p) / nf + z2n / (4.0 * nf)).sqrt();
    Some((p, (centre - half).max(0.0), (centre + half).min(1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_match_published_values_and_stay_in_bounds() {
        // Brown, Cai and DasGupta (2001) and Newcombe (1998), table I: 81 of
        // 263 gives 0.2553 to 0.3662; 15 of 148 gives 0.0624 to 0.1605.
        let (p, lo, hi) = wilson95(81, 263).unwrap();
        assert!((p - 81.0 / 263.0).abs() < 1e-12);
        assert!(
            (lo - 0.2553).abs() < 5e-4 && (hi - 0.3662).abs() < 5e-4,
            "{lo} {hi}"
        );
        let (_, lo, hi) = wilson95(15, 148).unwrap();
        assert!(
            (lo - 0.0624).abs() < 5e-4 && (hi - 0.1605).abs() < 5e-4,
            "{lo} {hi}"
        );
        // Newcombe's 0 of 20: 0 to 0.1611; 1 of 3 stays in [0, 1].
        let (_, lo, hi) = wilson95(0, 20).unwrap();
        assert!(lo == 0.0 && (hi - 0.1611).abs() < 5e-4, "{hi}");
        for (k, n) in [(1, 3), (0, 1), (1, 1), (2, 2)] {
            let (p, lo, hi) = wilson95(k, n).unwrap();
            assert!(
                (0.0..=p).contains(&lo) && (p..=1.0).contains(&hi),
                "{k}/{n}"
            );
        }
        assert_eq!(wilson95(0, 0), None);
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(30), 2.042);
        // Published: df 40: 2.021, 60: 2.000, 99: 1.984, 120: 1.980.
        for (df, t) in [(40, 2.021), (60, 2.000), (99, 1.984), (120, 1.980)] {
            assert!((t975(df) - t).abs() < 0.001, "df {df}: {}", t975(df));
        }
        assert!((t975(1_000_000) - 1.95996).abs() < 1e-4);
    }

    #[test]
    fn mean_and_interval_of_a_small_sample() {
        // 1..=5: mean 3, s = sqrt(2.5), half-width 2.776 * sqrt(2.5 / 5).
        let (m, h) = mean_ci95(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(m, Some(3.0));
        assert!((h.unwrap() - 2.776 * 0.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(mean_ci95(&[7.0]), (Some(7.0), None));
        assert_eq!(mean_ci95(&[]), (None, None));
    }
}
