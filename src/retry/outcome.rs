//! What an attempt can end with, and sets of outcomes (which ones are retryable).

use std::fmt;

/// How one attempt ended, as the client sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Outcome {
    /// 200: the request succeeded.
    Ok = 0,
    /// No answer before the client's timeout.
    Timeout,
    /// The connection was reset while the request was in the server (crash).
    Reset,
    /// The connection was refused (the server is down).
    Refused,
    /// 400 Bad Request: fails the same way every time.
    Status400,
    /// 401 Unauthorized: fails the same way every time.
    Status401,
    /// 409 Conflict: an optimistic-concurrency write lost to another (AWS model).
    Status409,
    /// 429 Too Many Requests.
    Status429,
    /// 500 Internal Server Error.
    Status500,
    /// 502 Bad Gateway.
    Status502,
    /// 503 Service Unavailable (outage, or the queue is full).
    Status503,
    /// 504 Gateway Timeout.
    Status504,
}

impl Outcome {
    /// Every outcome, in a fixed order.
    pub const ALL: [Outcome; 12] = [
        Outcome::Ok,
        Outcome::Timeout,
        Outcome::Reset,
        Outcome::Refused,
        Outcome::Status400,
        Outcome::Status401,
        Outcome::Status409,
        Outcome::Status429,
        Outcome::Status500,
        Outcome::Status502,
        Outcome::Status503,
        Outcome::Status504,
    ];

    /// The name used in scenario files: `timeout`, `reset`, `refused`, or the status code.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "200",
            Outcome::Timeout => "timeout",
            Outcome::Reset => "reset",
            Outcome::Refused => "refused",
            Outcome::Status400 => "400",
            Outcome::Status401 => "401",
            Outcome::Status409 => "409",
            Outcome::Status429 => "429",
            Outcome::Status500 => "500",
            Outcome::Status502 => "502",
            Outcome::Status503 => "503",
            Outcome::Status504 => "504",
        }
    }

    /// Parses a scenario-file name (see [`Outcome::name`]).
    pub fn from_name(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == name)
    }

    /// The outcome with this `repr(u8)` value, used to carry outcomes in events.
    pub fn from_u8(v: u8) -> Outcome {
        Outcome::ALL
            .get(usize::from(v))
            .copied()
            .unwrap_or(Outcome::Status500)
    }

    /// True for the outcomes the client learns of from the server (not its own timer).
    pub fn is_error_response(self) -> bool {
        !matches!(self, Outcome::Ok | Outcome::Timeout)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of outcomes, as a bit mask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutcomeSet(u16);

impl OutcomeSet {
    /// The starting article's retryable set: network errors (timeout, reset,
    /// refused), 429, 502, 503 and 504; never 400 or 401 (REFERENCE.md section 2).
    pub fn default_retryable() -> OutcomeSet {
        [
            Outcome::Timeout,
            Outcome::Reset,
            Outcome::Refused,
            Outcome::Status429,
            Outcome::Status502,
            Outcome::Status503,
            Outcome::Status504,
        ]
        .into_iter()
        .collect()
    }

    /// True if `o` is in the set.
    pub fn contains(self, o: Outcome) -> bool {
        self.0 & (1 << o as u8) != 0
    }

    /// Adds `o`.
    pub fn insert(&mut self, o: Outcome) {
        self.0 |= 1 << o as u8;
    }
}

impl FromIterator<Outcome> for OutcomeSet {
    fn from_iter<I: IntoIterator<Item = Outcome>>(iter: I) -> Self {
        let mut set = OutcomeSet::default();
        for o in iter {
            set.insert(o);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::from_name(o.name()), Some(o));
            assert_eq!(Outcome::from_u8(o as u8), o);
        }
        assert_eq!(Outcome::from_name("418"), None);
    }

    #[test]
    fn default_set_retries_transient_failures_only() {
        let set = OutcomeSet::default_retryable();
        for o in ["timeout", "reset", "refused", "429", "502", "503", "504"] {
            assert!(
                set.contains(Outcome::from_name(o).unwrap()),
                "{o} should be retryable"
            );
        }
        for o in ["200", "400", "401", "409", "500"] {
            assert!(
                !set.contains(Outcome::from_name(o).unwrap()),
                "{o} should not be retryable"
            );
        }
    }
}
