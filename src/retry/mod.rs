//! Client-side retry behaviour: outcomes and their classes, backoff delays, and the
//! policy that decides whether and when a failed attempt is tried again.

pub mod backoff;
pub mod budget;
pub mod outcome;
pub mod policy;

pub use backoff::{Backoff, BackoffKind};
pub use budget::{Budget, BudgetConfig};
pub use outcome::{Outcome, OutcomeSet};
pub use policy::{Decision, GiveUp, RetryPolicy, Strategy};
