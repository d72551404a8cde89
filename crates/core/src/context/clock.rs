//! The clock every record, anchor, ledger line and turn is stamped with.

use time::OffsetDateTime;

/// Moves a debug build's clock by this many seconds, so that tests can make one record later
/// than another without sleeping. Release builds never read it: an installed binary's clock is
/// the system's.
pub const CLOCK_OFFSET_ENV: &str = "PROVE_IT_TEST_CLOCK_OFFSET";

/// The time, as the process sees it: the system clock, moved only in debug builds' tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    offset: time::Duration,
}

impl Clock {
    pub fn system() -> Clock {
        let offset = if cfg!(debug_assertions) {
            std::env::var(CLOCK_OFFSET_ENV)
                .ok()
                .and_then(|secs| secs.trim().parse::<i64>().ok())
                .map_or(time::Duration::ZERO, time::Duration::seconds)
        } else {
            time::Duration::ZERO
        };
        Clock { offset }
    }

    /// A clock `offset` away from the system's, for unit tests.
    #[cfg(any(test, feature = "testing"))]
    pub fn offset_by(offset: time::Duration) -> Clock {
        Clock { offset }
    }

    pub fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc() + self.offset
    }

    /// Now in whole seconds: what records, anchors and the ledger carry, since people read them
    /// and sub-second precision adds nothing there.
    pub fn now_seconds(&self) -> OffsetDateTime {
        self.now()
            .replace_nanosecond(0)
            .expect("0 is a valid nanosecond")
    }

    /// Nanoseconds since the Unix epoch, for ordering the gate's answers within a session.
    pub fn now_ns(&self) -> u64 {
        u64::try_from(self.now().unix_timestamp_nanos()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_clock_moves_every_reading() {
        let system = Clock::offset_by(time::Duration::ZERO);
        let later = Clock::offset_by(time::Duration::seconds(10));
        let (a, b) = (system.now_seconds(), later.now_seconds());
        assert!(b - a >= time::Duration::seconds(9), "{a} {b}");
        assert_eq!(later.now_seconds().nanosecond(), 0);
        assert!(later.now_ns() > system.now_ns());
    }
}
