//! Client-side retry behaviour: outcomes and their classes, backoff delays, and the
//! policy that decides whether and when a failed attempt is tried again.

pub mod amplification;
pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod delays;
pub mod hedging;
pub mod outcome;
pub mod policy;
pub mod pool;
pub mod throttle;
pub mod window;

pub use backoff::{Backoff, BackoffKind, DelayRange, Jitter};
pub use breaker::{Breaker, BreakerConfig};
pub use budget::{Budget, BudgetConfig, ConcurrencyLimit};
pub use hedging::HedgingConfig;
pub use outcome::{Outcome, OutcomeSet};
pub use policy::{
    Decision, GiveUp, RetryAfterMode, RetryAfterUse, RetryPolicy, Shared, Strategy, TierPolicy,
};
pub use pool::{Admit, Pool, PoolLimits};
pub use throttle::{Throttle, ThrottleConfig};
