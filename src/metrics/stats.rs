//! Means and 95% confidence intervals over replications (Student t).

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

#[cfg(test)]
mod tests {
    use super::*;

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
