//! Policy: what a flag says, else the environment, else git config, else the default.

use std::time::Duration;

/// How long verify.sh may run before its process group is killed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
pub const TIMEOUT_ENV: &str = "PROVE_IT_TIMEOUT";
pub const TIMEOUT_CONFIG: &str = "prove-it.timeout";
/// How many checks of `prove-it.toml` run at once; the default is the number of cores.
pub const JOBS_ENV: &str = "PROVE_IT_JOBS";
pub const JOBS_CONFIG: &str = "prove-it.jobs";
/// How many times a failing check runs again before it counts as failed; default 0.
pub const RETRIES_ENV: &str = "PROVE_IT_RETRIES";
pub const RETRIES_CONFIG: &str = "prove-it.retries";
/// The most retries: a check that needs more to pass is broken, not flaky.
pub const MAX_RETRIES: u32 = 10;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name} must be {expected}, not {value:?}")]
pub struct Error {
    source_name: String,
    expected: &'static str,
    value: String,
}

/// The policy in force for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub timeout: Duration,
    /// The most checks run at once (at least 1).
    pub jobs: usize,
    /// How many times a failing check runs again (`prove-it.retries`, at most [`MAX_RETRIES`]).
    pub retries: u32,
}

/// Where policy values come from besides flags: the environment and git config.
pub trait Sources {
    fn env(&self, name: &str) -> Option<String>;
    fn config(&self, key: &str) -> Option<String>;
}

impl Policy {
    pub fn resolve(timeout_flag: Option<u64>, sources: &dyn Sources) -> Result<Policy, Error> {
        let timeout = match timeout_flag {
            Some(secs) => seconds(&secs.to_string(), "--timeout")?,
            None => match (sources.env(TIMEOUT_ENV), sources.config(TIMEOUT_CONFIG)) {
                (Some(value), _) => seconds(&value, TIMEOUT_ENV)?,
                (None, Some(value)) => seconds(&value, TIMEOUT_CONFIG)?,
                (None, None) => DEFAULT_TIMEOUT,
            },
        };
        let jobs = match (sources.env(JOBS_ENV), sources.config(JOBS_CONFIG)) {
            (Some(value), _) => jobs(&value, JOBS_ENV)?,
            (None, Some(value)) => jobs(&value, JOBS_CONFIG)?,
            (None, None) => crate::process::cpus(),
        };
        let retries = match (sources.env(RETRIES_ENV), sources.config(RETRIES_CONFIG)) {
            (Some(value), _) => retries(&value, RETRIES_ENV)?,
            (None, Some(value)) => retries(&value, RETRIES_CONFIG)?,
            (None, None) => 0,
        };
        Ok(Policy {
            timeout,
            jobs,
            retries,
        })
    }
}

/// How many times a turn may be sent back before it ends unverified; 0 is warn-only mode.
pub const DEFAULT_MAX_BLOCKS: u32 = 3;
/// Claude Code and Copilot end a turn themselves after 8 consecutive blocks: the gate's own
/// budget must stay below that, so that its loud warning is what the user sees.
pub const MAX_BLOCKS_LIMIT: u32 = 7;
pub const MAX_BLOCKS_ENV: &str = "PROVE_IT_MAX_BLOCKS";
pub const MAX_BLOCKS_CONFIG: &str = "prove-it.maxBlocks";
pub const LEDGER_ENV: &str = "PROVE_IT_LEDGER";
pub const LEDGER_CONFIG: &str = "prove-it.ledger";
/// Environment only: skipping the gate is a person's deliberate act, not something an agent can
/// `git config`.
pub const SKIP_ENV: &str = "PROVE_IT_SKIP";
/// Set by `git prove-it claim` for the agent runs of its rounds, whose stops are not a person's
/// turns.
pub const ROUND_ENV: &str = "PROVE_IT_ROUND";
pub const VERIFY_EDITS_ENV: &str = "PROVE_IT_VERIFY_EDITS";
pub const VERIFY_EDITS_CONFIG: &str = "prove-it.verifyEdits";

pub const WEAKENING_ENV: &str = "PROVE_IT_WEAKENING";
pub const WEAKENING_CONFIG: &str = "prove-it.weakening";

pub const UNCOVERED_ENV: &str = "PROVE_IT_UNCOVERED";
pub const UNCOVERED_CONFIG: &str = "prove-it.uncovered";

/// What the gate does with a turn whose changes include paths no check of `prove-it.toml`
/// reads: name them in a notice, or refuse the turn.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum UncoveredPolicy {
    #[default]
    Notice,
    Block,
}

/// What the gate does with a turn that ends with verify.sh changed since the session started.
/// Ordered weakest first, so the stronger of two is their maximum.
#[derive(
    Debug,
    Default,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum VerifyEdits {
    /// The proof is BOUNDED_CLAIM_SURVIVES and the edit is shown (the seed's contract).
    #[default]
    Show,
    /// The turn is refused until verify.sh is restored or the change is left to a person.
    Block,
}

impl VerifyEdits {
    /// The word for it, as git config and the anchor spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyEdits::Show => "show",
            VerifyEdits::Block => "block",
        }
    }

    pub fn parse(value: &str) -> Option<VerifyEdits> {
        match value.trim().to_ascii_lowercase().as_str() {
            "show" => Some(VerifyEdits::Show),
            "block" => Some(VerifyEdits::Block),
            _ => None,
        }
    }
}

/// What the gate does with protected paths weakened since the session started (SPEC.md
/// section 2.2): show them in a bounded proof, or refuse the turn. The same two words, and the
/// same order, as an edited verify.sh's.
pub type Weakening = VerifyEdits;

/// What the gate at an agent's stop does besides running verify.sh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatePolicy {
    /// Blocks per turn before the turn ends unverified; 0 = warn-only.
    pub max_blocks: u32,
    /// Append a line to the ledger on the first block of each turn.
    pub ledger: bool,
    /// `PROVE_IT_SKIP=1`: end the turn without checking, and say so.
    pub skip: bool,
    /// `PROVE_IT_SKIP=api,docs`: the checks of `prove-it.toml` not to run, visibly; sorted.
    pub skip_checks: Vec<String>,
    /// `prove-it.verifyEdits`: show an edited verify.sh, or refuse the turn.
    pub verify_edits: VerifyEdits,
    /// `prove-it.uncovered`: a turn that changed paths no check reads gets a notice, or is
    /// refused.
    pub uncovered: UncoveredPolicy,
    /// `prove-it.weakening`: show weakened protected paths and tests, or refuse the turn.
    pub weakening: Weakening,
}

/// What an agent hook's own environment says before it knows a repository, read once per hook:
/// a person's `PROVE_IT_SKIP` (never git config's), and the claim gauntlet's round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookPolicy {
    /// Whether a person skipped the gate, or why the gate's variables cannot be read (which
    /// the stop reports as a loud "could not check").
    pub skip: Result<bool, Error>,
    /// `PROVE_IT_ROUND` when set and not blank, on one line: the stop stands aside.
    pub round: Option<String>,
}

impl HookPolicy {
    /// From the environment alone (`sources` without a repository).
    pub fn resolve(sources: &dyn Sources) -> HookPolicy {
        HookPolicy {
            skip: GatePolicy::resolve(sources).map(|policy| policy.skip),
            round: sources
                .env(ROUND_ENV)
                .filter(|round| !round.trim().is_empty())
                .map(|round| round.replace(['\n', '\r'], " ")),
        }
    }
}

impl GatePolicy {
    pub fn resolve(sources: &dyn Sources) -> Result<GatePolicy, Error> {
        let max_blocks = match (
            sources.env(MAX_BLOCKS_ENV),
            sources.config(MAX_BLOCKS_CONFIG),
        ) {
            (Some(value), _) => blocks(&value, MAX_BLOCKS_ENV)?,
            (None, Some(value)) => blocks(&value, MAX_BLOCKS_CONFIG)?,
            (None, None) => DEFAULT_MAX_BLOCKS,
        };
        let ledger = match (sources.env(LEDGER_ENV), sources.config(LEDGER_CONFIG)) {
            (Some(value), _) => boolean(&value, LEDGER_ENV)?,
            (None, Some(value)) => boolean(&value, LEDGER_CONFIG)?,
            (None, None) => false,
        };
        let (skip, skip_checks) = match sources.env(SKIP_ENV) {
            Some(value) => skipped(&value)?,
            None => (false, Vec::new()),
        };
        let verify_edits = match (
            sources.env(VERIFY_EDITS_ENV),
            sources.config(VERIFY_EDITS_CONFIG),
        ) {
            (Some(value), _) => verify_edits(&value, VERIFY_EDITS_ENV)?,
            (None, Some(value)) => verify_edits(&value, VERIFY_EDITS_CONFIG)?,
            (None, None) => VerifyEdits::Show,
        };
        let uncovered = match (sources.env(UNCOVERED_ENV), sources.config(UNCOVERED_CONFIG)) {
            (Some(value), _) => uncovered(&value, UNCOVERED_ENV)?,
            (None, Some(value)) => uncovered(&value, UNCOVERED_CONFIG)?,
            (None, None) => UncoveredPolicy::Notice,
        };
        let weakening = match (sources.env(WEAKENING_ENV), sources.config(WEAKENING_CONFIG)) {
            (Some(value), _) => self::verify_edits(&value, WEAKENING_ENV)?,
            (None, Some(value)) => self::verify_edits(&value, WEAKENING_CONFIG)?,
            (None, None) => Weakening::Show,
        };
        Ok(GatePolicy {
            max_blocks,
            ledger,
            skip,
            skip_checks,
            verify_edits,
            uncovered,
            weakening,
        })
    }
}

fn blocks(value: &str, source_name: &str) -> Result<u32, Error> {
    match value.trim().parse::<u32>() {
        Ok(n) if n <= MAX_BLOCKS_LIMIT => Ok(n),
        _ => Err(Error {
            source_name: source_name.to_string(),
            expected: "a whole number from 0 to 7",
            value: value.to_string(),
        }),
    }
}

fn verify_edits(value: &str, source_name: &str) -> Result<VerifyEdits, Error> {
    VerifyEdits::parse(value).ok_or_else(|| Error {
        source_name: source_name.to_string(),
        expected: "show or block",
        value: value.to_string(),
    })
}

fn uncovered(value: &str, source_name: &str) -> Result<UncoveredPolicy, Error> {
    match value.trim().to_ascii_lowercase().as_str() {
        "notice" => Ok(UncoveredPolicy::Notice),
        "block" => Ok(UncoveredPolicy::Block),
        _ => Err(Error {
            source_name: source_name.to_string(),
            expected: "notice or block",
            value: value.to_string(),
        }),
    }
}

/// Booleans as git config spells them; an empty environment variable is false.
fn boolean(value: &str, source_name: &str) -> Result<bool, Error> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "" | "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(Error {
            source_name: source_name.to_string(),
            expected: "true or false (1 or 0)",
            value: value.to_string(),
        }),
    }
}

/// `PROVE_IT_SKIP`: a boolean skips everything, a list of check names those checks.
fn skipped(value: &str) -> Result<(bool, Vec<String>), Error> {
    if let Ok(all) = boolean(value, SKIP_ENV) {
        return Ok((all, Vec::new()));
    }
    let mut names: Vec<String> = value
        .split(',')
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .collect();
    let valid = |name: &String| {
        name.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    if names.is_empty() || !names.iter().all(valid) {
        return Err(Error {
            source_name: SKIP_ENV.to_string(),
            expected: "1 (skip everything) or check names separated by commas",
            value: value.to_string(),
        });
    }
    names.sort();
    names.dedup();
    Ok((false, names))
}

fn jobs(value: &str, source_name: &str) -> Result<usize, Error> {
    match value.trim().parse::<usize>() {
        Ok(n) if (1..=256).contains(&n) => Ok(n),
        _ => Err(Error {
            source_name: source_name.to_string(),
            expected: "a whole number from 1 to 256",
            value: value.to_string(),
        }),
    }
}

fn retries(value: &str, source_name: &str) -> Result<u32, Error> {
    match value.trim().parse::<u32>() {
        Ok(n) if n <= MAX_RETRIES => Ok(n),
        _ => Err(Error {
            source_name: source_name.to_string(),
            expected: "a whole number from 0 to 10",
            value: value.to_string(),
        }),
    }
}

fn seconds(value: &str, source_name: &str) -> Result<Duration, Error> {
    match value.trim().parse::<u64>() {
        Ok(secs) if secs > 0 => Ok(Duration::from_secs(secs)),
        _ => Err(Error {
            source_name: source_name.to_string(),
            expected: "a whole number of seconds above 0",
            value: value.to_string(),
        }),
    }
}

/// What the pre-push hook does with the commits being pushed.
pub const PRE_PUSH_ENV: &str = "PROVE_IT_PRE_PUSH";
pub const PRE_PUSH_CONFIG: &str = "prove-it.prePush";

/// The pre-push policy: which pushed commits must be proven, and whether to prove them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrePush {
    /// Each pushed branch or tag tip must be proven (the default).
    Tip,
    /// Every commit the remote does not have yet must be proven.
    All,
    /// Unproven tips are proven on the spot (`run <rev>`) instead of refused.
    Prove,
    /// The hook does nothing.
    Off,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name} must be one of tip, all, prove or off, not {value:?}")]
pub struct PrePushError {
    source_name: &'static str,
    value: String,
}

/// The pre-push policy from the environment, else git config, else `tip`.
/// Environment only: a person lets one push through that weakens protected paths under
/// `prove-it.weakening = block`, knowingly, for that push.
pub const ALLOW_WEAKENED_ENV: &str = "PROVE_IT_ALLOW_WEAKENED";

pub const AHEAD_ENV: &str = "PROVE_IT_AHEAD";
pub const AHEAD_CONFIG: &str = "prove-it.ahead";
pub const SETTLE_ENV: &str = "PROVE_IT_SETTLE";
pub const SETTLE_CONFIG: &str = "prove-it.settle";
pub const AHEAD_IDLE_ENV: &str = "PROVE_IT_AHEAD_IDLE";
pub const AHEAD_IDLE_CONFIG: &str = "prove-it.aheadIdle";
/// How long the working state must be quiet before the prover runs: a burst of tool calls in
/// one model answer comes within tens of milliseconds, the model's thinking takes seconds.
pub const DEFAULT_SETTLE: Duration = Duration::from_millis(1000);
pub const DEFAULT_AHEAD_IDLE: Duration = Duration::from_secs(600);

/// Proving ahead (SPEC section 8, "Proving ahead"): whether the after-tool hook starts the
/// worktree's prover, how long the state must be quiet before it runs, and how long it waits
/// for an event before it exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AheadPolicy {
    pub on: bool,
    pub settle: Duration,
    pub idle: Duration,
}

impl AheadPolicy {
    pub fn resolve(sources: &dyn Sources) -> Result<AheadPolicy, Error> {
        let on = match (sources.env(AHEAD_ENV), sources.config(AHEAD_CONFIG)) {
            (Some(value), _) => boolean(&value, AHEAD_ENV)?,
            (None, Some(value)) => boolean(&value, AHEAD_CONFIG)?,
            (None, None) => true,
        };
        let settle = match (sources.env(SETTLE_ENV), sources.config(SETTLE_CONFIG)) {
            (Some(value), _) => millis(&value, SETTLE_ENV)?,
            (None, Some(value)) => millis(&value, SETTLE_CONFIG)?,
            (None, None) => DEFAULT_SETTLE,
        };
        let idle = match (
            sources.env(AHEAD_IDLE_ENV),
            sources.config(AHEAD_IDLE_CONFIG),
        ) {
            (Some(value), _) => seconds(&value, AHEAD_IDLE_ENV)?,
            (None, Some(value)) => seconds(&value, AHEAD_IDLE_CONFIG)?,
            (None, None) => DEFAULT_AHEAD_IDLE,
        };
        Ok(AheadPolicy { on, settle, idle })
    }
}

fn millis(value: &str, source_name: &str) -> Result<Duration, Error> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms <= 3_600_000)
        .map(Duration::from_millis)
        .ok_or_else(|| Error {
            source_name: source_name.to_string(),
            expected: "a number of milliseconds up to 3600000",
            value: value.to_string(),
        })
}

/// Whether `PROVE_IT_ALLOW_WEAKENED` lets this push weaken protected paths.
pub fn allow_weakened(sources: &dyn Sources) -> bool {
    sources.env(ALLOW_WEAKENED_ENV).is_some_and(|value| {
        matches!(
            value.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

pub fn pre_push(sources: &dyn Sources) -> Result<PrePush, PrePushError> {
    let (value, source_name) = match (sources.env(PRE_PUSH_ENV), sources.config(PRE_PUSH_CONFIG)) {
        (Some(value), _) => (value, PRE_PUSH_ENV),
        (None, Some(value)) => (value, PRE_PUSH_CONFIG),
        (None, None) => return Ok(PrePush::Tip),
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "tip" => Ok(PrePush::Tip),
        "all" => Ok(PrePush::All),
        "prove" => Ok(PrePush::Prove),
        "off" => Ok(PrePush::Off),
        _ => Err(PrePushError { source_name, value }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake {
        env: Option<&'static str>,
        config: Option<&'static str>,
    }

    impl Sources for Fake {
        fn env(&self, _: &str) -> Option<String> {
            self.env.map(String::from)
        }
        fn config(&self, _: &str) -> Option<String> {
            self.config.map(String::from)
        }
    }

    #[test]
    fn flag_beats_environment_beats_config_beats_default() {
        let all = Fake {
            env: Some("7"),
            config: Some("9"),
        };
        let secs = |p: Policy| p.timeout.as_secs();
        assert_eq!(secs(Policy::resolve(Some(5), &all).unwrap()), 5);
        assert_eq!(secs(Policy::resolve(None, &all).unwrap()), 7);
        assert_eq!(
            secs(
                Policy::resolve(
                    None,
                    &Fake {
                        env: None,
                        config: Some("9")
                    }
                )
                .unwrap()
            ),
            9
        );
        assert_eq!(
            Policy::resolve(
                None,
                &Fake {
                    env: None,
                    config: None
                }
            )
            .unwrap()
            .timeout,
            DEFAULT_TIMEOUT
        );
    }

    #[test]
    fn nonsense_is_an_error_naming_its_source() {
        for bad in ["0", "-3", "ten", ""] {
            let err = Policy::resolve(
                None,
                &Fake {
                    env: Some(bad),
                    config: None,
                },
            )
            .unwrap_err();
            assert!(
                err.to_string().starts_with("PROVE_IT_TIMEOUT must be"),
                "{err}"
            );
        }
        let err = Policy::resolve(
            None,
            &Fake {
                env: None,
                config: Some("x"),
            },
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("prove-it.timeout must be"),
            "{err}"
        );
    }

    struct Table(
        &'static [(&'static str, &'static str)],
        &'static [(&'static str, &'static str)],
    );

    impl Sources for Table {
        fn env(&self, name: &str) -> Option<String> {
            self.0
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
        fn config(&self, key: &str) -> Option<String> {
            self.1
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn gate_policy_defaults_to_three_blocks_no_ledger_no_skip() {
        let policy = GatePolicy::resolve(&Table(&[], &[])).unwrap();
        assert_eq!(
            policy,
            GatePolicy {
                max_blocks: 3,
                ledger: false,
                skip: false,
                skip_checks: Vec::new(),
                verify_edits: VerifyEdits::Show,
                uncovered: UncoveredPolicy::Notice,
                weakening: Weakening::Show,
            }
        );
        let block = GatePolicy::resolve(&Table(&[], &[("prove-it.weakening", "block")]));
        assert_eq!(block.map(|p| p.weakening), Ok(Weakening::Block));
        let block = GatePolicy::resolve(&Table(&[], &[("prove-it.uncovered", "block")]));
        assert_eq!(block.map(|p| p.uncovered), Ok(UncoveredPolicy::Block));
        assert!(GatePolicy::resolve(&Table(&[], &[("prove-it.uncovered", "warn")])).is_err());
    }

    #[test]
    fn skip_takes_a_boolean_or_check_names_and_jobs_a_count() {
        let skip = |value: &'static str| {
            let env: &'static [(&'static str, &'static str)] =
                Box::leak(Box::new([("PROVE_IT_SKIP", value)]));
            GatePolicy::resolve(&Table(env, &[])).map(|p| (p.skip, p.skip_checks))
        };
        assert_eq!(skip("1"), Ok((true, vec![])));
        assert_eq!(skip("0"), Ok((false, vec![])));
        assert_eq!(
            skip("docs, api,docs"),
            Ok((false, vec!["api".to_string(), "docs".to_string()]))
        );
        assert!(skip("api docs").is_err());
        let jobs = |value: &'static str| {
            let env: &'static [(&'static str, &'static str)] =
                Box::leak(Box::new([("PROVE_IT_JOBS", value)]));
            Policy::resolve(None, &Table(env, &[("prove-it.jobs", "7")])).map(|p| p.jobs)
        };
        assert_eq!(jobs("3"), Ok(3));
        assert!(jobs("0").is_err());
        assert_eq!(
            Policy::resolve(None, &Table(&[], &[("prove-it.jobs", "7")])).map(|p| p.jobs),
            Ok(7)
        );
    }

    #[test]
    fn verify_edits_is_show_or_block_and_the_environment_beats_config() {
        let read = |env: &'static [(&'static str, &'static str)], config| {
            GatePolicy::resolve(&Table(env, config)).map(|p| p.verify_edits)
        };
        assert_eq!(
            read(&[], &[("prove-it.verifyEdits", "Block")]),
            Ok(VerifyEdits::Block)
        );
        assert_eq!(
            read(
                &[("PROVE_IT_VERIFY_EDITS", "show")],
                &[("prove-it.verifyEdits", "block")]
            ),
            Ok(VerifyEdits::Show)
        );
        let err = read(&[], &[("prove-it.verifyEdits", "warn")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "prove-it.verifyEdits must be show or block, not \"warn\""
        );
        assert!(VerifyEdits::Show < VerifyEdits::Block);
    }

    #[test]
    fn gate_policy_environment_beats_config() {
        let policy = GatePolicy::resolve(&Table(
            &[("PROVE_IT_MAX_BLOCKS", "1"), ("PROVE_IT_LEDGER", "0")],
            &[("prove-it.maxBlocks", "5"), ("prove-it.ledger", "true")],
        ))
        .unwrap();
        assert_eq!((policy.max_blocks, policy.ledger), (1, false));
        let policy = GatePolicy::resolve(&Table(
            &[],
            &[("prove-it.maxBlocks", "0"), ("prove-it.ledger", "yes")],
        ))
        .unwrap();
        assert_eq!((policy.max_blocks, policy.ledger), (0, true));
    }

    #[test]
    fn skip_is_read_from_the_environment_only() {
        let config = GatePolicy::resolve(&Table(&[], &[("prove-it.skip", "1")])).unwrap();
        assert!(!config.skip);
        let env = GatePolicy::resolve(&Table(&[("PROVE_IT_SKIP", "1")], &[])).unwrap();
        assert!(env.skip);
    }

    #[test]
    fn a_budget_at_or_above_the_hosts_own_cap_is_refused() {
        let err = GatePolicy::resolve(&Table(&[("PROVE_IT_MAX_BLOCKS", "8")], &[])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "PROVE_IT_MAX_BLOCKS must be a whole number from 0 to 7, not \"8\""
        );
        let err = GatePolicy::resolve(&Table(&[], &[("prove-it.ledger", "maybe")])).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("prove-it.ledger must be true or false"),
            "{err}"
        );
    }

    #[test]
    fn pre_push_defaults_to_tip_and_the_environment_beats_config() {
        let fake = |env, config| Fake { env, config };
        assert_eq!(pre_push(&fake(None, None)).unwrap(), PrePush::Tip);
        assert_eq!(pre_push(&fake(None, Some("all"))).unwrap(), PrePush::All);
        assert_eq!(
            pre_push(&fake(Some("off"), Some("all"))).unwrap(),
            PrePush::Off
        );
        assert_eq!(
            pre_push(&fake(None, Some("Prove"))).unwrap(),
            PrePush::Prove
        );
        let err = pre_push(&fake(None, Some("sometimes"))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "prove-it.prePush must be one of tip, all, prove or off, not \"sometimes\""
        );
    }
}
