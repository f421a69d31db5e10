//! One bound (what it bounds, its value, in words, and its formula), the
//! rate of requests a bound may use, and how numbers are shown.

/// One bound: what it bounds, its value, in words, and the formula.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// What is bounded, e.g. "attempts per request, no budget".
    pub what: String,
    /// The value (for tests and tables).
    pub value: f64,
    /// The value in words, with its unit.
    pub shown: String,
    /// How it was computed, with the strategy's numbers in it.
    pub formula: String,
}

/// The users' request rate a bound may use, from the scenario's load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// Open-loop arrivals at this rate a second: failures come at least
    /// this fast under total failure (every first attempt fails).
    AtLeast(f64),
    /// Closed-loop clients: about `clients / mean think` a second when
    /// failures are fast, less when they are slow.
    About(f64),
    /// One request per client, all at the start.
    Unknown,
}

pub(super) fn bound(what: &str, value: f64, shown: String, formula: String) -> Bound {
    Bound {
        what: what.to_owned(),
        value,
        shown,
        formula,
    }
}

/// `x` with up to 3 significant digits and no trailing zeros.
pub fn short(x: f64) -> String {
    if x.is_infinite() && x > 0.0 {
        // A product of attempts past what a float holds: still a bound.
        return "over 1.8e308".to_owned();
    }
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    if x.abs() >= 1e9 {
        // Past a billion the low digits a float prints are not the count's
        // (3^38 is ...089, its f64 ...000): three significant digits only.
        return format!("{x:.2e}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

pub fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{} ms", short(s * 1e3))
    } else {
        format!("{} s", short(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;

    #[test]
    fn short_numbers_keep_three_digits() {
        assert_eq!(short(0.090909), "0.0909");
        assert_eq!(short(4.0), "4");
        assert_eq!(short(1234.4), "1234");
        assert_eq!(short(0.1), "0.1");
        assert_eq!(seconds(0.05), "50 ms");
        assert_eq!(seconds(SimDuration::from_secs(120).as_secs_f64()), "120 s");
    }
}
