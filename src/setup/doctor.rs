//! `git prove-it doctor`'s checks: each looks at one part of the set-up and says what it found
//! there as plain values, a [`Found`], and whether that is right, its [`Health`]. Each agent
//! host's trust is read by its own module (`crate::hosts`).
//!
//! Never prints, never words a finding and never changes anything: `cli/doctor.rs` hands the
//! findings to `report/doctor.rs`, which says each of them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::context::policy::{self, GatePolicy, VerifyEdits};
use crate::git::{self, Repo};
use crate::hosts::{HookEntry, HooksOff, Host, Trust, Wiring};
use crate::outcome::Outcome;
use crate::setup::demo;

/// How one check of `git prove-it doctor` came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Health {
    Ok,
    Warn,
    Fail,
}

/// What one check of `git prove-it doctor` found, as values; `report/doctor.rs` words it and
/// how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// `prove-it.toml` as the working state holds it.
    Checks(ChecksFound),
    /// verify.sh at the worktree root, and the programs it runs.
    Verify(VerifyFound),
    /// The test counts of the last run that could record a proof.
    Tests(TestsFound),
    /// `doctor --run`.
    Run(RunFound),
    /// The gate's policy in force.
    Policy(PolicyFound),
    /// One agent host's wiring, trust, cap on blocks or settings.
    Host(Host, HostFound),
    /// The `git-prove-it` git runs for `git prove-it`.
    OnPath(OnPathFound),
    /// The pre-push hook, or the hook manager that runs it.
    PrePush(PrePushFound),
    /// The identity proofs are signed off by (`Name <email>`), `missing` when git has none.
    Identity { display: String, missing: bool },
    /// `refs/notes/prove-it`.
    Proofs(ProofsFound),
    /// The push remote, and whether it has the proofs.
    Remote(RemoteFound),
    /// The man page `git help prove-it` opens, if it finds one.
    ManPage(Option<PathBuf>),
}

/// What doctor found of `prove-it.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChecksFound {
    /// It cannot be parsed (`error`, its parser's words); `needs_newer` when it asks for a
    /// later git-prove-it than this one (`min-version`).
    Unreadable { error: String, needs_newer: bool },
    /// The checks it declares, by name.
    Declared { names: Vec<String> },
    /// `check`'s script (`script`, as the file names it) cannot run, and `why`.
    NotRunnable {
        check: String,
        script: String,
        why: crate::armed::NotRunnable,
    },
    /// `count` paths of the state no check reads, the first of them `shown`.
    Uncovered { count: usize, shown: Vec<String> },
}

/// What doctor found of verify.sh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VerifyFound {
    Armed,
    Missing,
    NotExecutable,
    /// A link that cannot be followed to a file of the worktree: a stop cannot check.
    BadLink {
        armed: crate::armed::Armed,
    },
    /// Not armed for another reason.
    Unarmed {
        armed: crate::armed::Armed,
    },
    /// A program an active line runs that is not found here.
    ProgramMissing {
        program: String,
    },
}

/// What the last run that could record a proof counted of its tests, each check by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TestsFound {
    /// `check`'s test reports could not be read: `what` is the run's line, `error: ...`.
    Unreadable { check: String, what: String },
    /// The checks whose run gave no counts (none named when the run recorded no line).
    NoCounts { without: Vec<String> },
    /// Each check with its counts as the run recorded them.
    Counted { counts: Vec<(String, String)> },
}

/// What `doctor --run` came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunFound {
    /// verify.sh is not armed: nothing to run.
    NotArmed,
    /// No root verify.sh, and a checks file: `run` runs the checks.
    ChecksOnly,
    /// verify.sh passed on the working state `tree`, leaving it as it was.
    Passed { tree: String, duration_ms: u64 },
    /// verify.sh passed, but changed the working state `tree` while it ran.
    ChangedState { tree: String },
    /// verify.sh failed on `tree`; `exit` is how it ended ("exit code 1", ...).
    Failed {
        tree: String,
        exit: String,
        duration_ms: u64,
    },
}

/// What doctor found of the gate's policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PolicyFound {
    /// A setting cannot be read: `error` names it.
    Unresolved {
        error: String,
    },
    /// `PROVE_IT_SKIP` is set: the gate checks nothing in this environment.
    Skipped,
    InForce(InForce),
}

/// The gate's policy in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InForce {
    /// verify.sh's timeout in seconds and the retries of a failing run; None when they cannot
    /// be read (a host's finding says why).
    pub timeout: Option<(u64, u32)>,
    /// The budget of blocks a turn (0: warn only).
    pub max_blocks: u32,
    pub ledger: bool,
    pub signed: bool,
    /// An edit of verify.sh is blocked rather than shown.
    pub verify_edits_blocked: bool,
    /// A change no check reads is blocked rather than told.
    pub uncovered_blocked: bool,
}

/// What doctor found of one agent host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostFound {
    /// Its project file cannot be read: `error`, with its causes.
    Unreadable { error: String },
    /// The gate's hooks of these events are not wired in its project file.
    NotWired { events: Vec<&'static str> },
    /// The gate's hooks are wired in its project file, with time for verify.sh.
    Wired,
    /// The stop hook may end before verify.sh's longest run does.
    StopTooShort(StopTooShort),
    /// verify.sh's timeout cannot be read: `error` names the setting.
    TimeoutUnresolved { error: String },
    /// The after-tool hook (`event`) is not wired: nothing is proven ahead of a stop.
    AfterToolMissing { event: &'static str },
    /// Whether the host trusts the folder, as its record says.
    Trust(Trust),
    /// The host reads the project's hooks only where it starts, and its user-level file
    /// (`user`) wires the gate for every folder.
    WiredEverywhere { user: PathBuf },
    /// The host reads the project's hooks only where it starts, `user` does not wire the gate,
    /// and doctor runs in `below`, a directory below `workdir`: started there, it runs no gate.
    StartedBelow {
        below: PathBuf,
        workdir: PathBuf,
        user: PathBuf,
    },
    /// As above, doctor running at the root: a session started below it runs no gate.
    StartAtRootOnly { workdir: PathBuf, user: PathBuf },
    /// The host's own cap on blocks (`setting`, at `cap` in this environment) holds the gate
    /// to `budget` blocks a turn, below its `policy`; above `raise_above` it would not.
    CapBelow {
        setting: &'static str,
        cap: u32,
        policy: u32,
        budget: u32,
        raise_above: u32,
    },
    /// Claude Code's `.claude/worktrees/` is not ignored.
    WorktreesNotIgnored,
    /// A setting of one of its layers keeps it from running the gate's hooks.
    HooksOff(HooksOff),
}

/// A stop hook whose timeout does not exceed verify.sh's longest run, in the host's own names:
/// its `event`, the `key` of its timeout, and how many milliseconds a unit of it is (`unit_ms`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StopTooShort {
    pub event: &'static str,
    pub key: &'static str,
    pub unit_ms: u64,
    /// The stop hook's timeout, in seconds.
    pub stop: u64,
    /// verify.sh's timeout, in seconds, for each of its runs under `retries`.
    pub verify: u64,
    pub retries: u32,
}

/// What doctor found of the `git-prove-it` git runs (its exec-path, then PATH).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OnPathFound {
    /// None: hooks that run `git prove-it` fail.
    Missing,
    /// The first git finds, `found[0]`, is not `running`, this binary.
    Shadowed {
        running: PathBuf,
        found: Vec<PathBuf>,
    },
    /// The first git finds, `found[0]`, is this binary.
    Ours { found: Vec<PathBuf> },
}

/// What doctor found of the pre-push hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PrePushFound {
    /// husky runs the hooks, and has no pre-push hook.
    HuskyWithoutHook,
    /// A hook manager's set-up (`file`) runs the hooks; `wired` when it runs git prove-it.
    Manager {
        file: &'static str,
        wired: bool,
    },
    /// The hook at `path` is the one `install pre-push` writes.
    Installed {
        path: PathBuf,
    },
    /// The hook at `path` is another that calls git prove-it.
    Calls {
        path: PathBuf,
    },
    /// The hook at `path` does not call git prove-it.
    Foreign {
        path: PathBuf,
    },
    Missing,
}

/// What doctor found of `refs/notes/prove-it`; each `cause` is an error's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProofsFound {
    /// The ref does not lead to a notes commit.
    RefBroken {
        cause: String,
    },
    /// The ref cannot be read.
    Unreadable {
        cause: String,
    },
    /// Its notes cannot be read.
    NotesUnreadable {
        cause: String,
    },
    NoProofs,
    /// The notes of `trees` proven trees.
    Proven {
        trees: usize,
    },
    /// `notes` of its notes name trees no commit holds.
    Unheld {
        notes: usize,
    },
    UnheldUnreadable {
        cause: String,
    },
    /// Notes merge strategy (the config `key`) is not union.
    MergeNotUnion {
        key: &'static str,
    },
    /// `records` proof records carry no isolation line, the first on tree `first`.
    Unisolated {
        records: usize,
        first: String,
    },
    IsolationUnreadable {
        cause: String,
    },
    /// Its reflog shows no records dropped by other writers.
    NoneDropped,
    /// `notes` notes lost records to updates by other writers, with the updates' messages.
    Dropped {
        notes: usize,
        messages: Vec<String>,
    },
    ReflogUnreadable {
        cause: String,
    },
}

/// What doctor found of the push remote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RemoteFound {
    NoRemote,
    /// None of the last `looked` commits on `remote`'s branches is the user's.
    Foreign {
        remote: String,
        looked: usize,
    },
    HasProofs {
        remote: String,
    },
    /// `remote` has no proofs; `foreign` as above, so that they belong on a fork.
    NoProofs {
        remote: String,
        foreign: bool,
    },
    /// `remote` did not answer: `cause`.
    Unanswered {
        remote: String,
        cause: String,
    },
}

impl Found {
    /// Whether what was found is right: ok, worth a warning, or a failure of doctor.
    pub(crate) fn health(&self) -> Health {
        let ok_or = |ok: bool, otherwise: Health| if ok { Health::Ok } else { otherwise };
        match self {
            Found::Checks(found) => found.health(),
            Found::Verify(found) => found.health(),
            Found::Tests(found) => ok_or(matches!(found, TestsFound::Counted { .. }), Health::Warn),
            Found::Run(found) => found.health(),
            Found::Policy(found) => ok_or(matches!(found, PolicyFound::InForce(_)), Health::Fail),
            Found::Host(_, found) => found.health(),
            Found::OnPath(OnPathFound::Missing) => Health::Fail,
            Found::OnPath(OnPathFound::Shadowed { .. }) => Health::Warn,
            Found::OnPath(OnPathFound::Ours { .. }) => Health::Ok,
            Found::PrePush(found) => found.health(),
            Found::Identity { missing, .. } => ok_or(!missing, Health::Warn),
            Found::Proofs(found) => found.health(),
            Found::Remote(found) => ok_or(
                matches!(found, RemoteFound::NoRemote | RemoteFound::HasProofs { .. }),
                Health::Warn,
            ),
            Found::ManPage(page) => ok_or(page.is_some(), Health::Warn),
        }
    }
}

impl ChecksFound {
    fn health(&self) -> Health {
        match self {
            ChecksFound::Declared { .. } => Health::Ok,
            ChecksFound::Uncovered { .. } => Health::Warn,
            ChecksFound::Unreadable { .. } | ChecksFound::NotRunnable { .. } => Health::Fail,
        }
    }
}

impl VerifyFound {
    fn health(&self) -> Health {
        match self {
            VerifyFound::Armed => Health::Ok,
            VerifyFound::ProgramMissing { .. } => Health::Warn,
            VerifyFound::Missing
            | VerifyFound::NotExecutable
            | VerifyFound::BadLink { .. }
            | VerifyFound::Unarmed { .. } => Health::Fail,
        }
    }
}

impl RunFound {
    fn health(&self) -> Health {
        match self {
            RunFound::Passed { .. } => Health::Ok,
            RunFound::ChecksOnly => Health::Warn,
            RunFound::NotArmed | RunFound::ChangedState { .. } | RunFound::Failed { .. } => {
                Health::Fail
            }
        }
    }
}

impl HostFound {
    fn health(&self) -> Health {
        match self {
            HostFound::Wired
            | HostFound::WiredEverywhere { .. }
            | HostFound::Trust(Trust::Trusted) => Health::Ok,
            HostFound::AfterToolMissing { .. }
            | HostFound::Trust(_)
            | HostFound::StartAtRootOnly { .. }
            | HostFound::CapBelow { .. }
            | HostFound::WorktreesNotIgnored => Health::Warn,
            HostFound::Unreadable { .. }
            | HostFound::NotWired { .. }
            | HostFound::StopTooShort(_)
            | HostFound::TimeoutUnresolved { .. }
            | HostFound::StartedBelow { .. }
            | HostFound::HooksOff(_) => Health::Fail,
        }
    }
}

impl PrePushFound {
    fn health(&self) -> Health {
        match self {
            PrePushFound::Installed { .. } | PrePushFound::Calls { .. } => Health::Ok,
            PrePushFound::Manager { wired: true, .. } => Health::Ok,
            PrePushFound::HuskyWithoutHook
            | PrePushFound::Manager { wired: false, .. }
            | PrePushFound::Foreign { .. }
            | PrePushFound::Missing => Health::Warn,
        }
    }
}

impl ProofsFound {
    fn health(&self) -> Health {
        match self {
            ProofsFound::NoProofs
            | ProofsFound::Proven { .. }
            | ProofsFound::Unheld { .. }
            | ProofsFound::NoneDropped => Health::Ok,
            ProofsFound::UnheldUnreadable { .. }
            | ProofsFound::MergeNotUnion { .. }
            | ProofsFound::Unisolated { .. }
            | ProofsFound::IsolationUnreadable { .. }
            | ProofsFound::ReflogUnreadable { .. } => Health::Warn,
            ProofsFound::RefBroken { .. }
            | ProofsFound::Unreadable { .. }
            | ProofsFound::NotesUnreadable { .. }
            | ProofsFound::Dropped { .. } => Health::Fail,
        }
    }
}

/// What the checks are given: the repository, and what the command line resolved.
pub(crate) struct Inputs<'a> {
    pub repo: &'a Repo,
    /// verify.sh's timeout in force, in seconds, and the retries of a failing run
    /// (`prove-it.retries`), or why they cannot be resolved.
    pub verify_timeout: Result<(u64, u32), policy::Error>,
    /// Where git looks for this repository's hooks.
    pub hooks_dir: PathBuf,
    /// The pre-push hook `git prove-it install pre-push` writes.
    pub pre_push: &'a str,
    /// The git config `init` sets to union.
    pub merge_strategy: &'static str,
    /// The man page `git help prove-it` opens, if it finds one.
    pub man_page: Option<PathBuf>,
    /// Where doctor runs: a host started here may not read the project's hooks.
    pub cwd: PathBuf,
    /// The gate's policy in force (budget, ledger, `PROVE_IT_SKIP`, verify edits), or why it
    /// cannot be resolved.
    pub gate: Result<GatePolicy, policy::Error>,
    /// `prove-it.sign` is on.
    pub signed_only: bool,
    /// `doctor --run`: verify.sh's run on the working state, when it was asked for.
    pub ran: Option<Ran>,
    /// The directory git searches for `git-prove-it` before `PATH` (`git --exec-path`).
    pub exec_path: Option<PathBuf>,
    /// A variable of doctor's environment, where a host's own settings may be (its cap on
    /// blocks).
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// What `doctor --run` came to.
#[derive(Debug)]
pub(crate) enum Ran {
    /// verify.sh is not armed: there was nothing to run (the verify.sh check says why).
    NotArmed,
    /// No root verify.sh, and a checks file: `--run` runs the root verify.sh only.
    ChecksOnly,
    Checked(Box<demo::Checked>),
}

/// Every check, in the order doctor shows them.
pub(crate) fn checks(inputs: &Inputs) -> Result<Vec<Found>, git::Error> {
    let repo = inputs.repo;
    let mut checks = Vec::new();
    let has_checks = crate::proof::has_checks_file(repo)?;
    if has_checks {
        checks_file(repo, &mut checks)?;
    }
    let armed = repo.armed()?;
    if !(has_checks && armed == git::Armed::Missing) {
        checks.push(Found::Verify(verify_sh(armed)));
    }
    verify_programs(repo, &mut checks);
    if let Some(ran) = &inputs.ran {
        checks.push(Found::Run(run(ran)));
    }
    if let Some(found) = last_tests(repo) {
        checks.push(Found::Tests(found));
    }
    gate_policy(inputs, &mut checks);
    hosts(
        repo.workdir()?,
        &inputs.cwd,
        &inputs.verify_timeout,
        &mut checks,
    );
    if let Ok(gate) = &inputs.gate {
        host_caps(repo.workdir()?, gate.max_blocks, inputs.env, &mut checks);
    }
    checks.extend(nested_worktrees(repo)?);
    hooks_off(repo.workdir()?, &mut checks);
    checks.push(Found::OnPath(on_path(inputs.exec_path.as_deref())));
    checks.push(Found::PrePush(pre_push(
        repo.workdir()?,
        &inputs.hooks_dir,
        inputs.pre_push,
    )));
    let identity = repo.identity();
    checks.push(Found::Identity {
        display: identity.display.clone(),
        missing: identity.missing,
    });
    proofs(repo, inputs.merge_strategy, &mut checks);
    remote(repo, &mut checks);
    checks.push(Found::ManPage(inputs.man_page.clone()));
    Ok(checks)
}

/// The checks of `prove-it.toml` as the working state holds them: readable, and each able to run.
fn checks_file(repo: &Repo, checks: &mut Vec<Found>) -> Result<(), git::Error> {
    let state = match repo.state_tree(false) {
        Ok(state) => state,
        // The state's own problem is told where it is met (status, run, the gate).
        Err(error) if error.is_worktree_content() => return Ok(()),
        Err(error) => return Err(error),
    };
    let set = match crate::proof::CheckSet::of_state(repo, &state) {
        Ok(set) => set,
        Err(error) => {
            checks.push(Found::Checks(ChecksFound::Unreadable {
                needs_newer: matches!(
                    &error,
                    crate::proof::ChecksError::Invalid(invalid) if invalid.needs_newer
                ),
                error: error.to_string(),
            }));
            return Ok(());
        }
    };
    checks.push(Found::Checks(ChecksFound::Declared {
        names: set.checks.iter().map(|c| c.name.clone()).collect(),
    }));
    for check in &set.checks {
        if let Err(why) = check.runnable() {
            checks.push(Found::Checks(ChecksFound::NotRunnable {
                check: check.name.clone(),
                script: check.run.clone(),
                why,
            }));
        }
    }
    let uncovered = set.uncovered(repo, &state)?;
    if uncovered.count > 0 {
        checks.push(Found::Checks(ChecksFound::Uncovered {
            count: uncovered.count,
            shown: uncovered.paths.iter().take(10).cloned().collect(),
        }));
    }
    Ok(())
}

fn verify_sh(armed: git::Armed) -> VerifyFound {
    match armed {
        git::Armed::Yes => VerifyFound::Armed,
        git::Armed::Missing => VerifyFound::Missing,
        git::Armed::NotExecutable => VerifyFound::NotExecutable,
        armed if armed.link_problem().is_some() => VerifyFound::BadLink { armed },
        armed => VerifyFound::Unarmed { armed },
    }
}

/// The programs verify.sh's active lines run that are not on PATH: such a check fails here
/// whatever the work is, and an agent is sent back for it.
fn verify_programs(repo: &Repo, checks: &mut Vec<Found>) {
    let Ok(Some(text)) = repo.read_verify() else {
        return;
    };
    let text = String::from_utf8_lossy(&text);
    let mut missing: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(program) = crate::setup::stack::program_of(line) else {
            continue;
        };
        let found = if program.contains('/') {
            repo.workdir().is_ok_and(|root| root.join(program).exists())
        } else {
            crate::setup::stack::on_path(program).is_some()
        };
        if !found && !missing.contains(&program) {
            missing.push(program);
        }
    }
    for program in missing {
        checks.push(Found::Verify(VerifyFound::ProgramMissing {
            program: program.to_string(),
        }));
    }
}

/// Whether the last run that could record a proof counted its tests (SPEC.md section 5.2);
/// nothing before any run.
fn last_tests(repo: &Repo) -> Option<TestsFound> {
    let text = std::fs::read_to_string(repo.last_run_tests().ok()?).ok()?;
    let lines: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|line| line.split_once(' '))
        .collect();
    if let Some((check, what)) = lines.iter().find(|(_, what)| what.starts_with("error: ")) {
        return Some(TestsFound::Unreadable {
            check: (*check).to_string(),
            what: (*what).to_string(),
        });
    }
    let without: Vec<String> = lines
        .iter()
        .filter(|(_, what)| *what == "none")
        .map(|(check, _)| (*check).to_string())
        .collect();
    if lines.is_empty() || !without.is_empty() {
        return Some(TestsFound::NoCounts { without });
    }
    Some(TestsFound::Counted {
        counts: lines
            .iter()
            .map(|(check, what)| ((*check).to_string(), (*what).to_string()))
            .collect(),
    })
}

/// `doctor --run`: verify.sh on the working state, judged as the gate would judge it.
fn run(ran: &Ran) -> RunFound {
    let checked = match ran {
        Ran::NotArmed => return RunFound::NotArmed,
        Ran::ChecksOnly => return RunFound::ChecksOnly,
        Ran::Checked(checked) => checked,
    };
    let shown = &checked.shown;
    let tree = checked.tree.clone();
    match shown.outcome {
        Outcome::Proven if shown.passed => RunFound::Passed {
            tree,
            duration_ms: shown.duration_ms,
        },
        _ if shown.passed => RunFound::ChangedState { tree },
        _ => RunFound::Failed {
            tree,
            exit: shown.exit.clone(),
            duration_ms: shown.duration_ms,
        },
    }
}

/// The gate's policy in force, and `PROVE_IT_SKIP`, which turns it off for every stop.
fn gate_policy(inputs: &Inputs, checks: &mut Vec<Found>) {
    let gate = match &inputs.gate {
        Ok(gate) => gate,
        Err(error) => {
            checks.push(Found::Policy(PolicyFound::Unresolved {
                error: error.to_string(),
            }));
            return;
        }
    };
    if gate.skip {
        checks.push(Found::Policy(PolicyFound::Skipped));
    }
    checks.push(Found::Policy(PolicyFound::InForce(InForce {
        timeout: inputs.verify_timeout.as_ref().ok().copied(),
        max_blocks: gate.max_blocks,
        ledger: gate.ledger,
        signed: inputs.signed_only,
        verify_edits_blocked: gate.verify_edits == VerifyEdits::Block,
        uncovered_blocked: gate.uncovered == policy::UncoveredPolicy::Block,
    })));
}

fn hosts(
    workdir: &Path,
    cwd: &Path,
    timeout: &Result<(u64, u32), policy::Error>,
    checks: &mut Vec<Found>,
) {
    for &host in Host::all() {
        let path = workdir.join(host.config_path());
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut found = |found: HostFound| checks.push(Found::Host(host, found));
        let wired = match host.wired_timeouts(&text) {
            Ok(wired) => wired,
            Err(error) => {
                found(HostFound::Unreadable {
                    error: crate::gate::error_chain(&error),
                });
                continue;
            }
        };
        let missing: Vec<&'static str> = wired
            .iter()
            .filter(|(entry, wiring)| *wiring == Wiring::Missing && !entry.ahead)
            .map(|(entry, _)| entry.event)
            .collect();
        if !missing.is_empty() {
            found(HostFound::NotWired { events: missing });
            continue;
        }
        found(stop_timeout(host, &wired, timeout));
        // Without the after-tool hook the gate holds; only nothing is proven ahead.
        let ahead_missing = wired
            .iter()
            .find(|(entry, wiring)| *wiring == Wiring::Missing && entry.ahead);
        if let Some((entry, _)) = ahead_missing {
            found(HostFound::AfterToolMissing { event: entry.event });
        }
        if let Some(trust) = host.trust(workdir) {
            found(HostFound::Trust(trust));
        }
        if let Some(start) = start_dir(host, workdir, cwd) {
            found(start);
        }
    }
}

/// Whether the host's stop hook may outlast verify.sh's longest run (each of its runs under the
/// retries), with what it takes to say so in the host's own names and units.
fn stop_timeout(
    host: Host,
    wired: &[(HookEntry, Wiring)],
    timeout: &Result<(u64, u32), policy::Error>,
) -> HostFound {
    let stop_entry = wired.iter().find(|(entry, _)| entry.stop);
    let event = stop_entry.map_or("Stop", |(entry, _)| entry.event);
    let stop = stop_entry.and_then(|(_, wiring)| match wiring {
        Wiring::Wired(timeout) => *timeout,
        Wiring::Missing => None,
    });
    // Gemini's AfterAgent hook counts milliseconds.
    let (key, unit_ms) = host.timeout_field().unwrap_or(("timeout", 1000));
    match (stop, timeout) {
        (_, Err(error)) => HostFound::TimeoutUnresolved {
            error: error.to_string(),
        },
        // The longest a stop may run verify.sh: each of its runs under the retries.
        (Some(stop), Ok((verify, retries))) if stop <= verify * (1 + u64::from(*retries)) => {
            HostFound::StopTooShort(StopTooShort {
                event,
                key,
                unit_ms,
                stop,
                verify: *verify,
                retries: *retries,
            })
        }
        _ => HostFound::Wired,
    }
}

/// A wired host whose own cap on blocks, as this environment sets it, is below the gate's
/// budget: the gate gives fewer blocks, so that its yield still reaches the agent before the
/// host stops honouring blocks. Said, so that a person does not wonder where the blocks went.
fn host_caps(
    workdir: &Path,
    policy: u32,
    env: &dyn Fn(&str) -> Option<String>,
    checks: &mut Vec<Found>,
) {
    for &host in Host::all() {
        if std::fs::metadata(workdir.join(host.config_path())).is_err() {
            continue;
        }
        let Some((cap, budget, setting)) = host.cap_below(policy, env) else {
            continue;
        };
        checks.push(Found::Host(
            host,
            HostFound::CapBelow {
                setting,
                cap,
                policy,
                budget,
                // Where the host shows no notices, the gate's yield is one more block.
                raise_above: policy + u32::from(!host.shows_notices()),
            },
        ));
    }
}

/// Claude Code puts the worktrees of subagents (and of `--worktree` sessions) in
/// `.claude/worktrees/` of the checkout. Unless ignored, the session's own state holds each as
/// an embedded repository, and its stop is refused while a subagent's worktree holds changes.
fn nested_worktrees(repo: &Repo) -> Result<Option<Found>, git::Error> {
    let workdir = repo.workdir()?;
    if std::fs::metadata(workdir.join(Host::Claude.config_path())).is_err() {
        return Ok(None);
    }
    Ok(match repo.ignores(".claude/worktrees/agent") {
        Some(false) => Some(Found::Host(Host::Claude, HostFound::WorktreesNotIgnored)),
        _ => None,
    })
}

/// Where the host runs no gate although its project file wires it: a host that reads the
/// project's hooks only in the directory it starts in, started in a subdirectory.
/// Run from a subdirectory, that is where doctor is, and a failure; from the root, a warning.
fn start_dir(host: Host, workdir: &Path, cwd: &Path) -> Option<HostFound> {
    if host.reads_project_hooks_below_root() {
        return None;
    }
    let (user, wired) = host.user_wiring()?;
    if wired {
        return Some(HostFound::WiredEverywhere { user });
    }
    let workdir = workdir.to_owned();
    let here = canonical(cwd);
    let root = canonical(&workdir);
    Some(match here.strip_prefix(&root) {
        Ok(below) if !below.as_os_str().is_empty() => HostFound::StartedBelow {
            below: below.to_owned(),
            workdir,
            user,
        },
        _ => HostFound::StartAtRootOnly { workdir, user },
    })
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

/// The settings of a host that keep it from running the gate's hooks, for each host wired here
/// (its project file) or for every folder (its user-level file): the gate is then never asked.
fn hooks_off(workdir: &Path, checks: &mut Vec<Found>) {
    for &host in Host::all() {
        let wired = workdir.join(host.config_path()).is_file()
            || host.user_wiring().is_some_and(|(_, wired)| wired);
        if !wired {
            continue;
        }
        for off in host.hooks_off(workdir) {
            checks.push(Found::Host(host, HostFound::HooksOff(off)));
        }
    }
}

/// Hooks run `git prove-it`, for which git runs the first `git-prove-it` in its exec-path,
/// then on PATH: every one found is listed, and one that shadows the running binary is named.
fn on_path(exec_path: Option<&Path>) -> OnPathFound {
    let path = std::env::var_os("PATH");
    let dirs = exec_path
        .map(Path::to_owned)
        .into_iter()
        .chain(path.iter().flat_map(std::env::split_paths));
    let mut found: Vec<PathBuf> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for file in dirs.map(|dir| dir.join("git-prove-it")) {
        let is_program = std::fs::metadata(&file)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0);
        if is_program && !seen.contains(&canonical(&file)) {
            seen.push(canonical(&file));
            found.push(file);
        }
    }
    let Some(first) = found.first() else {
        return OnPathFound::Missing;
    };
    let running = std::env::current_exe().ok().map(|exe| canonical(&exe));
    match running {
        Some(running) if canonical(first) != running => OnPathFound::Shadowed { running, found },
        _ => OnPathFound::Ours { found },
    }
}

fn pre_push(workdir: &Path, hooks_dir: &Path, ours: &str) -> PrePushFound {
    // A hook manager runs the pre-push hooks where its set-up is at the root: the gate is
    // wired through it, or not at all (`init --pre-push` wires it or prints its snippet).
    let managers = std::iter::once(".husky/pre-push")
        .chain(crate::setup::pre_push::LEFTHOOK_FILES.iter().copied())
        .chain([".pre-commit-config.yaml"]);
    let husky = workdir.join(".husky").is_dir();
    for file in managers {
        let Ok(text) = std::fs::read_to_string(workdir.join(file)) else {
            if husky && file == ".husky/pre-push" {
                return PrePushFound::HuskyWithoutHook;
            }
            continue;
        };
        let wired = text.contains(crate::setup::pre_push::COMMAND) || text.contains("id: prove-it");
        return PrePushFound::Manager { file, wired };
    }
    let path = hooks_dir.join("pre-push");
    match std::fs::read_to_string(&path) {
        Ok(text) if text == ours => PrePushFound::Installed { path },
        Ok(text) if text.contains("git prove-it hook git pre-push") => PrePushFound::Calls { path },
        Ok(_) => PrePushFound::Foreign { path },
        Err(_) => PrePushFound::Missing,
    }
}

fn proofs(repo: &Repo, merge_strategy: &'static str, checks: &mut Vec<Found>) {
    let mut found = |found: ProofsFound| checks.push(Found::Proofs(found));
    let tip = match repo.proofs_tip() {
        Ok(tip) => tip,
        Err(git::Error::RefUnpeelable { source, .. }) => {
            found(ProofsFound::RefBroken {
                cause: source.to_string(),
            });
            return;
        }
        Err(error) => {
            let cause = std::error::Error::source(&error)
                .map_or_else(|| error.to_string(), std::string::ToString::to_string);
            found(ProofsFound::Unreadable { cause });
            return;
        }
    };
    found(match tip.map(|tip| repo.all_notes(tip)) {
        None => ProofsFound::NoProofs,
        Some(Ok(notes)) => ProofsFound::Proven { trees: notes.len() },
        Some(Err(error)) => ProofsFound::NotesUnreadable {
            cause: crate::gate::error_chain(&error),
        },
    });
    // How many notes name trees no commit here holds (working states proven and never
    // committed, many with proving ahead): harmless, never sent, and droppable.
    match crate::proof::unheld_notes(repo) {
        Ok(unheld) if unheld.is_empty() => {}
        Ok(unheld) => found(ProofsFound::Unheld {
            notes: unheld.len(),
        }),
        Err(error) => found(ProofsFound::UnheldUnreadable {
            cause: crate::gate::error_chain(&error),
        }),
    }
    if repo
        .config_string(merge_strategy)
        .is_none_or(|value| value != "union")
    {
        found(ProofsFound::MergeNotUnion {
            key: merge_strategy,
        });
    }
    match crate::proof::unisolated(repo) {
        Ok(unisolated) if unisolated.is_empty() => {}
        Ok(unisolated) => found(ProofsFound::Unisolated {
            records: unisolated.len(),
            first: unisolated[0].key.to_string(),
        }),
        Err(error) => found(ProofsFound::IsolationUnreadable {
            cause: crate::gate::error_chain(&error),
        }),
    }
    found(
        match repo.overwritten_notes(&crate::proof::merge_unrevoked) {
            Ok(lost) if lost.is_empty() => ProofsFound::NoneDropped,
            Ok(lost) => {
                let mut messages: Vec<String> = lost.iter().map(|o| o.message.clone()).collect();
                messages.dedup();
                ProofsFound::Dropped {
                    notes: lost.len(),
                    messages,
                }
            }
            Err(error) => ProofsFound::ReflogUnreadable {
                cause: crate::gate::error_chain(&error),
            },
        },
    );
}

/// How long doctor waits for the remote to list its proofs.
const REMOTE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The remote's proofs, asked with `git ls-remote`: gix cannot talk to every remote git can
/// (credential helpers, ssh configuration), and sync already relies on git for the same.
fn remote(repo: &Repo, checks: &mut Vec<Found>) {
    let mut found = |found: RemoteFound| checks.push(Found::Remote(found));
    if repo.remote_names().is_empty() {
        found(RemoteFound::NoRemote);
        return;
    }
    // Proofs travel where pushes go: a contributor's fork, not the project they cloned.
    let remote = repo.push_remote();
    let foreign = remote == repo.default_remote() && looks_foreign(repo, &remote);
    if foreign {
        found(RemoteFound::Foreign {
            remote: remote.clone(),
            looked: OWN_COMMITS,
        });
    }
    found(
        match repo.remote_proofs_tip_within(&remote, REMOTE_TIMEOUT) {
            Ok(Some(_)) => RemoteFound::HasProofs { remote },
            Ok(None) => RemoteFound::NoProofs { remote, foreign },
            Err(error) => RemoteFound::Unanswered {
                cause: crate::gate::error_chain(&error),
                remote,
            },
        },
    );
}

/// How far back doctor looks for a commit of the user's own.
const OWN_COMMITS: usize = 200;

/// A clone whose remote's recent history holds nothing the user wrote: most likely a project
/// they contribute to rather than own. The remote's branches are what count, not HEAD: the
/// commits a contributor makes here are theirs, and the project stays someone else's. Without
/// an identity, or with no branch of the remote known here, there is nothing to compare.
fn looks_foreign(repo: &Repo, remote: &str) -> bool {
    let identity = repo.identity();
    if identity.missing {
        return false;
    }
    let Some(email) = identity
        .display
        .rsplit_once('<')
        .and_then(|(_, rest)| rest.strip_suffix('>'))
    else {
        return false;
    };
    matches!(
        repo.authored_any_on(remote, email, OWN_COMMITS),
        Ok(Some(false))
    )
}
