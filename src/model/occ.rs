//! The optimistic-concurrency server of the AWS "Exponential Backoff and Jitter"
//! experiment (REFERENCE.md section 3; aws-samples/aws-arch-backoff-simulator): one
//! record with a version number, read and conditionally written, answered
//! instantly, with no capacity limit.

/// The record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Occ {
    version: u32,
}

impl Occ {
    /// The current version, as a read returns it.
    pub fn read(&self) -> u32 {
        self.version
    }

    /// A write that read `version`: accepted (and the version bumped) only if no
    /// other write came in between.
    pub fn write(&mut self, version: u32) -> bool {
        let accepted = version == self.version;
        if accepted {
            self.version = self.version.wrapping_add(1);
        }
        accepted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_write_of_a_version_wins() {
        let mut r = Occ::default();
        let (a, b) = (r.read(), r.read());
        assert!(r.write(a));
        assert!(!r.write(b), "b read the version a replaced");
        let c = r.read();
        assert_eq!(c, 1);
        assert!(r.write(c));
    }
}
