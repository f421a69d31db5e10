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

/// Every bound of a strategy's own settings.
pub fn strategy(s: &Strategy, rate: Rate) -> Vec<Bound> {
    let mut out = vec![attempts_per_request(s), wave::give_up(s)];
    if let Some(b) = &s.budget {
        out.extend(budget(b, rate));
    }
    if let Some(t) = &s.throttle {
        out.extend(throttle(t, rate));
    }
    if let Some(b) = &s.breaker {
        out.extend(breaker(b));
    }
    out
}
