//! The one resolved context of a process, and where its settings are read.

use super::clock::Clock;
use super::policy::{self, AheadPolicy, GatePolicy, Policy, PrePush, PrePushError};
use crate::git::Repo;

/// What every command that proves, observes or gates works with.
pub struct Context {
    pub repo: Repo,
    /// verify.sh's timeout, or why it could not be read.
    pub policy: Result<Policy, policy::Error>,
    /// The gate's own policy (budget, ledger, skip), or why it could not be read: commands
    /// that do not gate (`run`) never fail on it; the gate always does.
    pub gate: Result<GatePolicy, policy::Error>,
    /// `prove-it.sign`: proofs are signed, and only a signed proof spares a run (SPEC.md 3.1).
    pub signed_only: bool,
    pub clock: Clock,
    /// `HOME`, read once: where `~/` in signing's and the allowed signers' settings leads.
    pub home: Option<std::path::PathBuf>,
    /// The signer every proof of this command is signed with (`None`: signing is off), or why
    /// signing is asked for and cannot work, which fails the first proof, before its run.
    pub signer: Result<Option<crate::signing::Signer>, crate::signing::Error>,
    /// Proving ahead's policy (on, settle, idle), or why it could not be read.
    pub ahead: Result<AheadPolicy, policy::Error>,
    /// What the pre-push hook does with the commits pushed, or why it could not be read.
    pub pre_push: Result<PrePush, PrePushError>,
    /// `PROVE_IT_ALLOW_WEAKENED`: a person lets this push through though it weakens protected
    /// paths under `prove-it.weakening = block`.
    pub allow_weakened: bool,
}

impl Context {
    /// Resolve the policy for `repo` from a flag, else the environment, else its git config.
    /// A value that cannot be read is kept as its error, for whoever needs that value.
    pub fn resolve(repo: Repo, timeout_flag: Option<u64>) -> Context {
        let sources = Settings::of(&repo);
        let policy = Policy::resolve(timeout_flag, &sources);
        let gate = GatePolicy::resolve(&sources);
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let signer =
            crate::signing::Signer::from_config(&|key| repo.config_string(key), home.as_deref());
        // `prove-it.sign` read once, with the rest of signing's settings: asked for is a signer,
        // or the reason it cannot sign.
        let signed_only = !matches!(signer, Ok(None));
        let ahead = AheadPolicy::resolve(&sources);
        let pre_push = policy::pre_push(&sources);
        let allow_weakened = policy::allow_weakened(&sources);
        Context {
            repo,
            policy,
            gate,
            signed_only,
            clock: Clock::system(),
            home,
            signer,
            ahead,
            pre_push,
            allow_weakened,
        }
    }
}

/// Where policy values are read besides flags (a `policy::Sources`): the process environment
/// and, inside a repository, its git config (as git resolves it for that repository).
pub struct Settings<'a>(Option<&'a Repo>);

impl<'a> Settings<'a> {
    pub fn of(repo: &'a Repo) -> Self {
        Settings(Some(repo))
    }

    /// Inside `repo` when there is one, else the environment alone.
    pub fn maybe(repo: Option<&'a Repo>) -> Self {
        Settings(repo)
    }

    /// The environment only: for what git config must not be able to say (`PROVE_IT_SKIP`).
    pub fn environment() -> Self {
        Settings(None)
    }
}

impl policy::Sources for Settings<'_> {
    fn env(&self, name: &str) -> Option<String> {
        env_var(name)
    }

    fn config(&self, key: &str) -> Option<String> {
        self.0.and_then(|repo| repo.config_string(key))
    }
}

thread_local! {
    /// The environment this thread's settings are read from instead of the process's, while a
    /// `Hermetic` guard lives: unit tests of the layers above must not take the developer's
    /// `PROVE_IT_*` variables for their own.
    static ENVIRONMENT: std::cell::RefCell<Option<Vec<(String, String)>>> =
        const { std::cell::RefCell::new(None) };
}

/// A variable of the environment settings are read from: the process's, unless this thread
/// holds a `Hermetic` guard.
pub fn env_var(name: &str) -> Option<String> {
    ENVIRONMENT.with(|environment| match &*environment.borrow() {
        Some(vars) => vars
            .iter()
            .find(|(set, _)| set == name)
            .map(|(_, value)| value.clone()),
        None => std::env::var(name).ok(),
    })
}

/// While it lives, this thread reads its settings from `vars` alone, not from the process's
/// environment.
#[cfg(any(test, feature = "testing"))]
#[must_use = "the environment is the process's again once the guard is dropped"]
pub struct Hermetic(());

#[cfg(any(test, feature = "testing"))]
impl Hermetic {
    pub fn with(vars: &[(&str, &str)]) -> Hermetic {
        let vars = vars
            .iter()
            .map(|(name, value)| ((*name).to_string(), (*value).to_string()))
            .collect();
        ENVIRONMENT.with(|environment| *environment.borrow_mut() = Some(vars));
        Hermetic(())
    }
}

#[cfg(any(test, feature = "testing"))]
impl Drop for Hermetic {
    fn drop(&mut self) {
        ENVIRONMENT.with(|environment| *environment.borrow_mut() = None);
    }
}
