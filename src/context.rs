//! The one resolved context of a process: the repository, the policy in force, whether proofs
//! are signed, and the clock. Resolved once at the edge (`cli/`), then handed down; nothing
//! below re-reads the environment or git config for these mid-operation.

use time::OffsetDateTime;

use crate::git::Repo;
use crate::policy::{self, GatePolicy, Policy};

/// What every command that proves, observes or gates works with.
pub(crate) struct Context {
    pub repo: Repo,
    /// verify.sh's timeout, or why it could not be read.
    pub policy: Result<Policy, policy::Error>,
    /// The gate's own policy (budget, ledger, skip), or why it could not be read: commands
    /// that do not gate (`run`) never fail on it; the gate always does.
    pub gate: Result<GatePolicy, policy::Error>,
    /// `prove-it.sign`: proofs are signed, and only a signed proof spares a run (SPEC.md 3.1).
    pub signed_only: bool,
    pub clock: Clock,
}

impl Context {
    /// Resolve the policy for `repo` from a flag, else the environment, else its git config.
    /// A value that cannot be read is kept as its error, for whoever needs that value.
    pub(crate) fn resolve(repo: Repo, timeout_flag: Option<u64>) -> Context {
        let sources = Settings::of(&repo);
        let policy = Policy::resolve(timeout_flag, &sources);
        let gate = GatePolicy::resolve(&sources);
        let signed_only = crate::signing::wanted(&|key| repo.config_string(key));
        Context {
            repo,
            policy,
            gate,
            signed_only,
            clock: Clock::system(),
        }
    }
}

/// Where policy values are read besides flags (a `policy::Sources`): the process environment
/// and, inside a repository, its git config (as git resolves it for that repository).
pub(crate) struct Settings<'a>(Option<&'a Repo>);

impl<'a> Settings<'a> {
    pub(crate) fn of(repo: &'a Repo) -> Self {
        Settings(Some(repo))
    }

    /// The environment only: for what git config must not be able to say (`PROVE_IT_SKIP`).
    pub(crate) fn environment() -> Self {
        Settings(None)
    }
}

impl policy::Sources for Settings<'_> {
    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn config(&self, key: &str) -> Option<String> {
        self.0.and_then(|repo| repo.config_string(key))
    }
}

/// Moves a debug build's clock by this many seconds, so that tests can make one record later
/// than another without sleeping. Release builds never read it: an installed binary's clock is
/// the system's.
pub(crate) const CLOCK_OFFSET_ENV: &str = "PROVE_IT_TEST_CLOCK_OFFSET";

/// The time, as the process sees it: the system clock, moved only in debug builds' tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Clock {
    offset: time::Duration,
}

impl Clock {
    pub(crate) fn system() -> Clock {
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
    #[cfg(test)]
    pub(crate) fn offset_by(offset: time::Duration) -> Clock {
        Clock { offset }
    }

    pub(crate) fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc() + self.offset
    }

    /// Now in whole seconds: what records, anchors and the ledger carry, since people read them
    /// and sub-second precision adds nothing there.
    pub(crate) fn now_seconds(&self) -> OffsetDateTime {
        self.now()
            .replace_nanosecond(0)
            .expect("0 is a valid nanosecond")
    }

    /// Nanoseconds since the Unix epoch, for ordering the gate's answers within a session.
    pub(crate) fn now_ns(&self) -> u64 {
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
