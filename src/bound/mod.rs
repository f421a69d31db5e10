//! Worst-case bounds of a scenario's retries, from its settings alone,
//! without simulating (`sim bound`). Each bound comes with the formula it
//! was computed by, so a reader can check it by hand: a strategy's own
//! limits ([`limits`]), its bounds in time ([`wave`]) and, in a call chain,
//! the attempts at each tier ([`chain`]).
//!
//! This is an analysis of a whole configuration, chain included, and so sits
//! above `model`; the formulas of each retry mechanism it reads sit in
//! `retry`.

pub mod chain;
pub mod limits;
pub mod value;
pub mod wave;

pub use chain::chain;
pub use limits::{attempts_per_request, breaker, budget, throttle};
pub use value::{Bound, Rate, seconds, short};

use crate::retry::Strategy;

/// Every bound of a strategy's own settings, for users behind `proxies`
/// proxies: a guard the strategy does not share is one per proxy, each
/// with its floor and its allowance, so what they let through adds up.
pub fn strategy(s: &Strategy, rate: Rate, proxies: u16) -> Vec<Bound> {
    let mut out = vec![attempts_per_request(s), wave::give_up(s)];
    let copies = |shared: bool| Copies(if shared { 1 } else { proxies.max(1) });
    if let Some(b) = &s.budget {
        out.extend(budget(b, rate, copies(s.shared.budget)));
    }
    if let Some(t) = &s.throttle {
        out.extend(throttle(t, rate, copies(s.shared.throttle)));
    }
    if let Some(b) = &s.breaker {
        out.extend(breaker(b, copies(s.shared.breaker)));
    }
    out
}

/// How many copies of a guard there are: one per proxy, or one for all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copies(pub u16);

impl Copies {
    /// One guard for all the users.
    pub const ONE: Copies = Copies(1);

    /// The count, as a number.
    pub fn n(self) -> f64 {
        f64::from(self.0)
    }

    /// `formula` for one copy, with the copies in front: "N proxies x
    /// (...)" when there are several.
    pub fn times(self, formula: String) -> String {
        if self.0 > 1 {
            format!("{} proxies x ({formula})", self.0)
        } else {
            formula
        }
    }
}
