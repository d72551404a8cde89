//! `git prove-it run`: the working state, a commit or a range proven, or found proven on record.

use crate::outcome::Outcome;
use std::io::Write;
use std::time::Duration;

use super::commits::{CommitRun, one_commit, prove_commit};
use crate::context::Context;
use crate::context::policy::Policy;
use crate::exit;
use crate::git::{self, PROOFS_REF, Repo};
use crate::isolation::Isolation;
use crate::proof::CheckSet;
use crate::proof::lookup_proof;
use crate::proof::{self, Attempted};
use crate::report::{
    self, CheckRun, Hint, JSON_VERSION, Progress, ProofSummary, RunReport, RunResult, Unarmed,
    could_not, hint, refusal,
};
use anyhow::Context as _;

/// Prove the working state: run verify.sh unless a proof for this exact state already exists,
/// and record a proof when it exits 0.
///
/// The working state is the tree `git add -A` would stage (tracked and untracked files that are
/// not ignored), computed without touching the index. With a commit, prove that commit instead:
/// it is checked out into a worktree under ~/.cache/git-prove-it (kept between commands, one per
/// command at a time: the next moves it to its commit and removes everything else from it,
/// ignored files too), verify.sh runs there without the caller's GIT_DIR and similar
/// variables, and the proof is recorded for the commit's tree; the working tree is not touched.
/// On Linux the commit's worktree is mounted at the checkout's path for the run (a user and
/// mount namespace of its own), so paths into the checkout (an editable install, a
/// workspace link) lead into the commit; elsewhere a run that could follow such a link is
/// refused, naming it. The record says how (isolation: namespace or none). The checks file's
/// setup script (npm ci, uv sync, ...) prepares the worktree first; without one, a failure
/// while the checkout holds dependency folders the commit lacks (node_modules, a virtualenv)
/// means the commit cannot be tested.
///
/// With a prove-it.toml at the root, each check it declares is proven for its input tree (the
/// state pruned to the paths it reads): only the checks without a proof run, up to
/// PROVE_IT_JOBS (git config prove-it.jobs; default the number of cores) at once, and a passing
/// check is recorded even when another fails.
///
/// With a range (main..topic, A...B), prove every commit of it that is not proven yet,
/// oldest first, up to --jobs at once, each in one of up to --jobs such worktrees reused along
/// the range (only the changed paths written, untracked files removed between commits, ignored
/// build caches kept). A commit already proven costs a lookup;
/// one that failed before on that exact state, through the same verify.sh (or check scripts),
/// is not run again unless --retry-failed. Each commit's line is printed in history order as
/// its result arrives, then a table; each commit's full output is kept in
/// `.git/prove-it/commit-logs/<commit>.log`.
///
/// A failing run records its failure (exit, duration, the last 20 lines printed, never the
/// environment) in the local notes ref refs/notes/prove-it-failures; with git config
/// prove-it.retries N a failing check runs again up to N times, and a pass after failures is
/// recorded with flaky: N.
///
/// verify.sh (or a check) exiting 125 says the state cannot be tested (a tool it needs is
/// missing), as git bisect run has it: not a failure of the code and never a proof. It is
/// recorded as such in refs/notes/prove-it-failures (git prove-it log shows "cannot test"),
/// run again by a range, and skipped by bisect.
///
/// Exit status: 0 proven (with a range: every commit), 1 verify.sh (or a check) failed or
/// changed the working state while it ran (with a range: some commit is not proven), 2 usage
/// or repository error, 3 verify.sh not armed, 125 the state cannot be tested (verify.sh or a
/// check exited 125, and none failed).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Prove this commit rather than the working state; with a range, every commit of it.
    #[arg(value_name = "REV")]
    rev: Option<String>,

    /// With a range, prove up to this many commits at once, each in its own temporary
    /// worktree; else run up to this many checks of prove-it.toml at once [default:
    /// $PROVE_IT_JOBS, else git config prove-it.jobs, else the number of cores].
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,

    /// With a range, run again the commits whose checks failed before on that exact state (a
    /// range does not run a failure on record again otherwise; one state always runs).
    #[arg(long)]
    retry_failed: bool,

    /// Stream verify.sh's output to stderr while it runs.
    #[arg(short, long)]
    verbose: bool,

    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,

    /// Run verify.sh (every check) even if this state was proven before.
    #[arg(short, long)]
    force: bool,

    /// Kill verify.sh (and everything it started) after this many seconds
    /// [default: $PROVE_IT_TIMEOUT, else git config prove-it.timeout, else 300].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,

    /// With a commit or a range, prove each commit with this script instead of its own
    /// verify.sh or checks: a file of the working tree or any path, read once (its bytes must
    /// not change until the run ends) and run from the root of each commit's worktree. Its
    /// records are keyed by the commit's tree and the script's blob, under the check
    /// exec:NAME (NAME being the script's file name): they never prove a commit's own verify.sh or checks, and only
    /// `check --exec` counts them, for commits that have neither.
    #[arg(long, value_name = "SCRIPT", requires = "rev")]
    exec: Option<std::path::PathBuf>,
}

impl Args {
    /// Whether it proves commits rather than the working state.
    pub(crate) fn names_commits(&self) -> bool {
        self.rev.is_some()
    }
}

pub(crate) fn run(
    args: &Args,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let ctx = Context::resolve(Repo::discover(&cwd)?, args.timeout);
    let mut policy = ctx.policy.clone()?;
    if let Some(jobs) = args.jobs {
        policy.jobs = usize::from(jobs);
    }
    if let Some(rev) = &args.rev {
        let exec = match &args.exec {
            Some(path) => Some(super::commits::ExecScript::read(&ctx.repo, path)?),
            None => None,
        };
        let selection = ctx.repo.select(std::slice::from_ref(rev))?;
        let mut ids = if selection.tips.len() == 1 && selection.hidden.is_empty() {
            if exec.is_none() {
                return run_rev(&ctx, &policy, args, rev, out);
            }
            // One commit proven by a script from outside the history is a range of one.
            selection.tips.clone()
        } else {
            ctx.repo.walk(&selection, None)?
        };
        // Oldest first: a range is proven, and read, in the order it was written.
        ids.reverse();
        if ids.is_empty() {
            return Err(refusal::empty_range(rev).into());
        }
        return super::range::run_range(
            &ctx,
            &ids,
            &super::range::RangeRun {
                jobs: policy.jobs,
                check_jobs: policy.jobs,
                force: args.force,
                retry_failed: args.retry_failed,
                json: args.json,
                verbose: args.verbose,
                timeout: policy.timeout,
                host: HOST,
                exec: exec.as_ref(),
            },
            out,
            err,
        );
    }
    let how = Proving {
        host: HOST,
        force: args.force,
        verbose: args.verbose,
        progress: true,
        log: None,
        commit: None,
        exec: None,
    };
    let (code, report) = prove(&ctx, &ctx.repo, &policy, &how, err)?;
    print(&report, args.json, out)?;
    Ok(code)
}

/// Who asks for a proof at the command line (`host:` in the record).
const HOST: &str = "cli";

/// How `run` proves a state: the working state at the person's terminal, or a commit's in its
/// temporary worktree (`cli/commits.rs`), whose checks file's setup has run there.
pub(super) struct Proving<'a> {
    /// `host:` in the record, `PROVE_IT_HOST` for the scripts.
    pub host: &'a str,
    pub force: bool,
    /// Stream the scripts' output to stderr.
    pub verbose: bool,
    /// Draw a progress line on stderr when it is a terminal.
    pub progress: bool,
    /// Where the run keeps its output, when not in the state directory's last-run.log.
    pub log: Option<std::path::PathBuf>,
    /// A commit's run in its worktree: how it is isolated; `None` for the working state.
    pub commit: Option<CommitView<'a>>,
    /// A script from outside the history, proven instead of the state's own checks.
    pub exec: Option<&'a proof::Check>,
}

/// How a commit's run in its temporary worktree is kept from the checkout.
pub(super) struct CommitView<'a> {
    /// The record's `isolation:`.
    pub isolation: Isolation,
    /// The program and arguments that run each script in the commit's view (empty: plainly).
    pub view: crate::process::Wrap,
    /// When set, a failing run means the commit cannot be tested, for this reason.
    pub untestable_failure: Option<String>,
    /// The worktree's last reading of its files from disk, which spares the next one the
    /// files unchanged since (`git::IndexTrust::Since`).
    pub read: Option<&'a std::cell::Cell<Option<git::IndexTrust>>>,
    /// The state that reading found, when nothing ran in the worktree since (no setup).
    pub before: Option<git::StateTree>,
}

pub(super) fn print(report: &RunReport, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if json {
        report::json(report, out)
    } else {
        report.human(out)
    }
}

/// The report for a tree that already has a valid proof through `verify`, if it has one (a
/// signed one when signing is on).
fn already_proven(
    ctx: &Context,
    repo: &Repo,
    tree: gix::ObjectId,
    verify: Option<(gix::ObjectId, u32)>,
) -> Result<Option<RunReport>, git::Error> {
    let found = lookup_proof(repo, tree, verify)?;
    Ok(found.best(ctx.signed_only).map(|record| RunReport {
        version: JSON_VERSION,
        outcome: record.outcome,
        tree: Some(tree.to_string()),
        result: RunResult::AlreadyProven {
            proof: ProofSummary::from(record),
        },
    }))
}

/// Where a check stands after its run (or its proof found): a pass a failing run contests
/// counts as a failure, and a check that cannot test its inputs leaves the state unproven.
fn check_stands(result: &RunResult) -> proof::Stands {
    match result {
        RunResult::Failed { .. }
        | RunResult::StateChanged { .. }
        | RunResult::Proven {
            contested: true, ..
        } => proof::Stands::Failed,
        RunResult::CannotTest { .. } => proof::Stands::Unproven,
        RunResult::AlreadyProven { proof } | RunResult::Proven { proof, .. } => {
            proof::Stands::by_outcome(Some(proof.outcome))
        }
        RunResult::NotArmed { .. } | RunResult::Checks { .. } => proof::Stands::Proven,
    }
}

/// The report for a committed tree with a checks file whose every check has a proof, if each
/// has one.
fn all_proven(
    ctx: &Context,
    tree: gix::ObjectId,
    set: &CheckSet,
) -> Result<Option<RunReport>, git::Error> {
    let mut checks = Vec::new();
    let mut stands = Vec::new();
    for proven in proof::tree_check_proofs(&ctx.repo, tree, set)? {
        let Some(record) = proven.best(ctx.signed_only) else {
            return Ok(None);
        };
        stands.push(proof::Stands::by(Some(record)));
        checks.push(CheckRun {
            name: proven.check.name.clone(),
            run: proven.check.run.clone(),
            input_tree: proven.input_tree.to_string(),
            result: RunResult::AlreadyProven {
                proof: ProofSummary::from(record),
            },
        });
    }
    Ok(Some(RunReport {
        version: JSON_VERSION,
        outcome: proof::set_outcome(stands).unwrap_or(Outcome::Proven),
        tree: Some(tree.to_string()),
        result: RunResult::Checks {
            checks,
            uncovered: Vec::new(),
            uncovered_count: 0,
        },
    }))
}

/// The state as the bytes on disk make it, every tracked file read: the one a run is keyed by.
/// The index's stat data is anyone's to write, so it may spare a lookup, never a run. In a
/// commit's worktree, the files its last reading there shows unchanged since are not read
/// again, and this reading is kept for the next.
fn on_disk(
    repo: &Repo,
    how: &Proving<'_>,
) -> Result<(git::StateTree, git::IndexTrust), super::Failure> {
    let read = how.commit.as_ref().and_then(|commit| commit.read);
    let prior = read
        .and_then(std::cell::Cell::get)
        .unwrap_or(git::IndexTrust::Disk);
    let (tree, trust) = repo.state_tree_from_disk(prior).map_err(content_hint)?;
    if let Some(read) = read {
        read.set(Some(trust));
    }
    Ok((tree, trust))
}

/// The state to look up, and the trust it lends the state read after a run when it was read
/// from disk (a commit's worktree read just now); else as the index's stat data has it, to be
/// read from disk if anything runs.
fn state_before(
    repo: &Repo,
    how: &Proving<'_>,
) -> Result<(git::StateTree, Option<git::IndexTrust>), super::Failure> {
    let read = how.commit.as_ref().and_then(|commit| {
        let trust = commit.read.and_then(std::cell::Cell::get)?;
        Some((commit.before.clone()?, trust))
    });
    match read {
        Some((before, trust)) => Ok((before, Some(trust))),
        None => Ok((repo.state_tree(false).map_err(content_hint)?, None)),
    }
}

/// The report of a working state that nothing arms: why, and the hints that fix it.
fn not_armed(armed: &git::Armed) -> RunReport {
    RunReport {
        version: JSON_VERSION,
        outcome: Outcome::InsufficientEvidence,
        tree: None,
        result: RunResult::NotArmed {
            reason: report::armed::verify(*armed),
            hints: unarmed(armed).hints(),
        },
    }
}

/// Prove the working state of `repo` (the command's checkout, or a commit's worktree): verify.sh,
/// or each check of its checks file, unless proven already.
pub(super) fn prove(
    ctx: &Context,
    repo: &Repo,
    policy: &Policy,
    how: &Proving<'_>,
    err: &mut dyn Write,
) -> Result<(u8, RunReport), super::Failure> {
    prove_live(ctx, repo, policy, how, &mut Live::default(), err)
}

/// What a caller that follows a run as it goes (`watch`) hands it: its own flag that ends the
/// run (a signal's or a change's), and where each step of the run's progress goes as well.
/// By default the run takes the signals' flag when it starts, and reports to the terminal only.
#[derive(Default)]
pub(super) struct Live<'a> {
    pub interrupt: Option<&'a std::sync::atomic::AtomicBool>,
    pub events: Option<&'a mut dyn FnMut(&proof::Progress<'_>)>,
}

impl<'a> Live<'a> {
    /// The flag that interrupts the run: the caller's, else the signals' (registered now and
    /// kept in `signals`).
    fn interrupt_or<'b>(
        &self,
        signals: &'b mut Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    ) -> std::io::Result<&'b std::sync::atomic::AtomicBool>
    where
        'a: 'b,
    {
        match self.interrupt {
            Some(flag) => Ok(flag),
            None => Ok(signals.insert(crate::process::interrupt_flag()?)),
        }
    }

    fn event(&mut self, event: &proof::Progress<'_>) {
        if let Some(events) = self.events.as_mut() {
            events(event);
        }
    }
}

/// As `prove`, followed by `live`.
pub(super) fn prove_live(
    ctx: &Context,
    repo: &Repo,
    policy: &Policy,
    how: &Proving<'_>,
    live: &mut Live<'_>,
    err: &mut dyn Write,
) -> Result<(u8, RunReport), super::Failure> {
    if let Some(exec) = how.exec {
        let (before, read_from_disk) = state_before(repo, how)?;
        // The script stands for the state's own checks: its key is the state tree itself.
        let set = CheckSet {
            checks: vec![exec.clone()],
            ..CheckSet::default()
        };
        return prove_checks(ctx, policy, how, &before, &set, read_from_disk, live, err);
    }
    let armed = repo.armed()?;
    let checks_file = proof::has_checks_file(repo)?;
    if !armed.is_armed() && !checks_file {
        return Ok((exit::NOT_ARMED, not_armed(&armed)));
    }

    let (before, read_from_disk) = state_before(repo, how)?;
    if checks_file {
        let set = CheckSet::of_state(repo, &before).map_err(checks_hint)?;
        if set.file.is_some() {
            return prove_checks(ctx, policy, how, &before, &set, read_from_disk, live, err);
        }
    }
    if !armed.is_armed() {
        return Ok((exit::NOT_ARMED, not_armed(&armed)));
    }
    if before.verify.is_none() {
        // A proof names the verify.sh it ran, so one that is not part of the state cannot prove it.
        return Err(refusal::verify_not_in_state().into());
    }
    // Before "already proven": a proof of this tree never tested the submodule's changes.
    refuse_dirty_submodules(&before)?;
    if !how.force
        && let Some(report) = already_proven(ctx, repo, before.id, before.verify)?
    {
        return Ok((exit::OK, report));
    }
    let looked_up = before.id;
    let (before, trust) = match read_from_disk {
        Some(trust) => (before, trust),
        None => on_disk(repo, how)?,
    };
    if before.id != looked_up
        && !how.force
        && let Some(report) = already_proven(ctx, repo, before.id, before.verify)?
    {
        return Ok((exit::OK, report));
    }

    let mut signals = None;
    let interrupt = live.interrupt_or(&mut signals)?;
    let mut progress = Progress::new(how.verbose || !how.progress);
    let attempted = proof::prove(
        repo,
        &before,
        None,
        None,
        options(
            ctx,
            repo,
            policy,
            how,
            interrupt,
            proof::Uncovered::default(),
            trust,
            &before,
        )?,
        &mut |elapsed| {
            progress.tick(elapsed);
            live.event(&proof::Progress::Tick(elapsed));
        },
    );
    let attempted = attempted.map_err(|error| prove_failure(error, Some(hint::verify_starts())))?;
    let duration_ms = match &attempted {
        Attempted::Proven(record) => record.duration_ms,
        Attempted::Failed { duration_ms, .. }
        | Attempted::StateChanged { duration_ms, .. }
        | Attempted::CannotTest { duration_ms, .. } => *duration_ms,
    };
    progress.finish(Duration::from_millis(duration_ms), err);
    verify_report(repo, attempted, before.id)
}

/// An error for a state with a submodule whose changes its commit does not record: no proof
/// of the state's tree tested them.
fn refuse_dirty_submodules(before: &git::StateTree) -> Result<(), super::Failure> {
    if before.dirty_submodules().is_empty() {
        return Ok(());
    }
    Err(content_hint(git::Error::DirtySubmodules {
        paths: before.dirty_submodules().to_vec(),
    }))
}

/// The report, and `run`'s exit code, of verify.sh's attempt on the state tree `tree`: a
/// contested pass is not proven (1); a state that cannot be tested says so (125).
fn verify_report(
    repo: &Repo,
    attempted: Attempted,
    tree: gix::ObjectId,
) -> Result<(u8, RunReport), super::Failure> {
    let (_, result) = check_result(repo, attempted, tree)?;
    let outcome = match &result {
        RunResult::Proven {
            contested: true, ..
        } => Outcome::NotProven,
        RunResult::Proven { proof, .. } => proof.outcome,
        RunResult::CannotTest { .. } => Outcome::NotProven,
        _ => Outcome::Disproven,
    };
    let code = match (&result, outcome) {
        (RunResult::CannotTest { .. }, _) => exit::CANNOT_TEST,
        (_, Outcome::Disproven | Outcome::NotProven) => exit::NOT_PROVEN,
        _ => exit::OK,
    };
    Ok((
        code,
        RunReport {
            version: JSON_VERSION,
            outcome,
            tree: Some(tree.to_string()),
            result,
        },
    ))
}

/// A state with a checks file: run the checks without a proof (every one with `--force`), up
/// to `prove-it.jobs` at once, and report each.
#[expect(
    clippy::too_many_arguments,
    reason = "the state, its checks and how they are run and followed, each from a different owner"
)]
fn prove_checks(
    ctx: &Context,
    policy: &Policy,
    how: &Proving<'_>,
    before: &git::StateTree,
    set: &CheckSet,
    read_from_disk: Option<git::IndexTrust>,
    live: &mut Live<'_>,
    err: &mut dyn Write,
) -> Result<(u8, RunReport), super::Failure> {
    let repo = &ctx.repo;
    // Before "already proven": a proof of this tree never tested the submodule's changes.
    refuse_dirty_submodules(before)?;
    scripts_runnable(set)?;
    let found = proof::state_check_proofs(repo, before, set)?;
    let uncovered = set.uncovered(repo, before)?;
    let (reports, to_run) = proven_or_to_run(&found, ctx.signed_only, how.force);
    // What runs are the bytes on disk: a state whose index claims others is looked up again,
    // and run, as the disk has it.
    let mut trust = read_from_disk.unwrap_or(git::IndexTrust::Disk);
    if !to_run.is_empty() && read_from_disk.is_none() {
        let (disk, from_disk) = on_disk(repo, how)?;
        if disk.id != before.id {
            let set = match how.exec {
                Some(_) => set.clone(),
                None => CheckSet::of_state(repo, &disk).map_err(checks_hint)?,
            };
            return prove_checks(ctx, policy, how, &disk, &set, Some(from_disk), live, err);
        }
        trust = from_disk;
    }
    let mut results = Vec::new();
    if !to_run.is_empty() {
        let mut signals = None;
        let interrupt = live.interrupt_or(&mut signals)?;
        let mut progress = Progress::for_checks(how.verbose || !how.progress, to_run.len());
        let many = to_run.len() > 1;
        let ran = proof::prove_checks(
            repo,
            before,
            to_run,
            options(
                ctx,
                repo,
                policy,
                how,
                interrupt,
                uncovered.clone(),
                trust,
                before,
            )?,
            policy.jobs,
            &mut |event| {
                live.event(&event);
                match event {
                    proof::Progress::Tick(elapsed) => progress.tick(elapsed),
                    proof::Progress::Started(check) if many => progress.check(check, None),
                    proof::Progress::Ended {
                        check,
                        passed,
                        duration,
                    } if many => progress.check(check, Some((passed, duration))),
                    _ => {}
                }
            },
        );
        results = ran.map_err(|error| prove_failure(error, Some(hint::check_scripts_start())))?;
        progress.finish(Duration::ZERO, err);
    }
    let checks = with_results(repo, &found, reports, results)?;
    let outcome = proof::set_outcome(checks.iter().map(|check| check_stands(&check.result)))
        .unwrap_or(Outcome::Proven);
    let code = outcome_code(outcome);
    Ok((
        code,
        RunReport {
            version: JSON_VERSION,
            outcome,
            tree: Some(before.id.to_string()),
            result: RunResult::Checks {
                checks,
                uncovered: uncovered.paths,
                uncovered_count: uncovered.count,
            },
        },
    ))
}

/// An error naming the first check of `set` whose script cannot run, with the fix.
fn scripts_runnable(set: &CheckSet) -> Result<(), super::Failure> {
    for check in &set.checks {
        if let Err(why) = check.runnable() {
            return Err(refusal::script_not_runnable(&check.name, &check.run, why).into());
        }
    }
    Ok(())
}

/// Each check's report when a proof spares its run (none with `force`), else `None` in its
/// place and the check among those to run, in the checks' order.
fn proven_or_to_run(
    found: &[proof::CheckProof],
    signed_only: bool,
    force: bool,
) -> (Vec<Option<CheckRun>>, Vec<proof::ToRun>) {
    let mut reports: Vec<Option<CheckRun>> = Vec::with_capacity(found.len());
    let mut to_run = Vec::new();
    for proven in found {
        let report = |result| CheckRun {
            name: proven.check.name.clone(),
            run: proven.check.run.clone(),
            input_tree: proven.input_tree.to_string(),
            result,
        };
        match proven.best(signed_only) {
            Some(record) if !force => reports.push(Some(report(RunResult::AlreadyProven {
                proof: ProofSummary::from(record),
            }))),
            _ => {
                reports.push(None);
                to_run.push(proof::ToRun {
                    check: proven.check.clone(),
                    input_tree: proven.input_tree,
                    anchor: None,
                    diff: None,
                });
            }
        }
    }
    (reports, to_run)
}

/// Every check's report, in the checks' order: the proof found, or the result of its run
/// (`results` holds one for each check without a report, in that order).
fn with_results(
    repo: &Repo,
    found: &[proof::CheckProof],
    reports: Vec<Option<CheckRun>>,
    results: Vec<(String, Attempted)>,
) -> Result<Vec<CheckRun>, super::Failure> {
    let mut results = results.into_iter();
    let mut checks = Vec::with_capacity(found.len());
    for (proven, report) in found.iter().zip(reports) {
        let report = match report {
            Some(report) => report,
            None => {
                let (_, attempted) = results.next().expect("one result for each check run");
                let (input_tree, result) = check_result(repo, attempted, proven.input_tree)?;
                CheckRun {
                    name: proven.check.name.clone(),
                    run: proven.check.run.clone(),
                    input_tree,
                    result,
                }
            }
        };
        checks.push(report);
    }
    Ok(checks)
}

/// `run`'s exit code for the outcome of what it ran: a failure, a state that cannot be tested,
/// or a proof.
fn outcome_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Disproven => exit::NOT_PROVEN,
        Outcome::NotProven => exit::CANNOT_TEST,
        _ => exit::OK,
    }
}

/// How `run` proves: as the person at the terminal, streaming with `--verbose`; a commit's
/// run as its worktree was isolated, without the caller's repository-locating variables, the
/// working state as `proof::working_view` says; the state after the run taking from the index
/// only what `index_trust` (the state read from disk just before) shows unchanged.
#[expect(
    clippy::too_many_arguments,
    reason = "each is one part of how a run is made, from a different owner"
)]
fn options<'a>(
    ctx: &'a Context,
    repo: &Repo,
    policy: &Policy,
    how: &'a Proving<'a>,
    interrupt: &'a std::sync::atomic::AtomicBool,
    uncovered: proof::Uncovered,
    index_trust: git::IndexTrust,
    state: &git::StateTree,
) -> Result<proof::ProveOptions<'a>, super::Failure> {
    // Outside a session, protected paths are compared with HEAD's (a commit's worktree: the
    // commit's first parent's).
    let protection = proof::protection_since_head(repo, state).map_err(super::Failure::from)?;
    let per_event = crate::hosts::Host::per_event_env();
    let (isolation, view, env_remove, env) = match &how.commit {
        Some(commit) => (
            commit.isolation,
            commit.view.clone(),
            git::LOCAL_ENV,
            crate::gate::Environment::of(
                std::env::vars_os()
                    .filter(|(name, _)| !git::LOCAL_ENV.iter().any(|local| name == *local)),
                &per_event,
            ),
        ),
        None => {
            let (isolation, view) =
                proof::working_view(repo).map_err(|error| prove_failure(error, None))?;
            (
                isolation,
                view,
                &[][..],
                crate::gate::Environment::of_process(&per_event),
            )
        }
    };
    Ok(proof::ProveOptions {
        signer: ctx.signer.clone(),
        record_failures: true,
        host: how.host,
        session: None,
        timeout: policy.timeout,
        echo: how
            .verbose
            .then(|| Box::new(crate::report::echo_to_stderr) as proof::Echo),
        interrupt: Some(interrupt),
        log: how.log.clone(),
        clock: ctx.clock,
        retries: policy.retries,
        isolation,
        // The same digest a hook's stop takes: a proof made here spares an agent session's
        // stop only when this environment is the session's.
        env: Some(env.digest()),
        view,
        env_remove,
        untestable_failure: how
            .commit
            .as_ref()
            .and_then(|commit| commit.untestable_failure.clone()),
        uncovered,
        index_trust,
        read: how.commit.as_ref().and_then(|commit| commit.read),
        protection,
        baseline: proof::Baseline::of_head(&ctx.repo),
    })
}

/// A proof that could not be attempted, with the hint that fixes it; `start` is the hint for a
/// script that could not be started (none where no script starts).
fn prove_failure(error: proof::Error, start: Option<Hint>) -> super::Failure {
    match error {
        proof::Error::Git(error) => content_hint(error),
        proof::Error::Sign(error) => {
            let hint = super::signers::signing_hint(&error);
            super::Failure::from(proof::Error::Sign(error)).hint(hint)
        }
        error @ proof::Error::Verify(_) => super::Failure::from(error).hints(start),
        error @ proof::Error::Reports { .. } => super::Failure::from(error),
        error @ proof::Error::Leaks { .. } => {
            super::Failure::from(error).hints(hint::hide_the_enclosing_worktree())
        }
    }
}

/// One check's attempt as its report: its input tree (after the run, when it changed) and
/// result.
fn check_result(
    repo: &Repo,
    attempted: Attempted,
    input_tree: gix::ObjectId,
) -> Result<(String, RunResult), crate::git::Error> {
    Ok(match attempted {
        Attempted::Proven(record) => (
            record.tree.to_string(),
            RunResult::Proven {
                proof: ProofSummary::from(&*record),
                proofs_ref: PROOFS_REF,
                contested: crate::proof::is_contested(repo, &record)?,
            },
        ),
        Attempted::Failed {
            ended,
            exit_code,
            duration_ms,
            output_bytes,
            tail,
            log,
            attempts,
            recorded,
            ..
        } => (
            input_tree.to_string(),
            RunResult::Failed {
                exit: crate::proof::exit_value(ended),
                exit_code,
                duration_ms,
                output_bytes,
                tail,
                log: Some(log.display().to_string()),
                attempts,
                failure_recorded: recorded.then_some(git::FAILURES_REF),
            },
        ),
        Attempted::CannotTest {
            reason,
            exit_code,
            duration_ms,
            tail,
            log,
            recorded,
            ..
        } => (
            input_tree.to_string(),
            RunResult::CannotTest {
                reason,
                exit_code,
                duration_ms,
                tail,
                log: Some(log.display().to_string()),
                cannot_test_recorded: recorded.then_some(git::FAILURES_REF),
            },
        ),
        Attempted::StateChanged {
            duration_ms,
            after,
            changed_paths,
        } => (
            input_tree.to_string(),
            RunResult::StateChanged {
                duration_ms,
                after: after.to_string(),
                changed_paths,
            },
        ),
    })
}

/// A checks file that cannot be read is the repository's to fix.
fn checks_hint(error: proof::ChecksError) -> super::Failure {
    match error {
        proof::ChecksError::Git(error) => content_hint(error),
        error @ proof::ChecksError::Invalid(_) => {
            super::Failure::from(error).hint(hint::fix_the_checks_file())
        }
        proof::ChecksError::MissingInput { check, input, line } => {
            let hint = hint::correct_the_input(&input);
            super::Failure::from(proof::ChecksError::MissingInput { check, input, line }).hint(hint)
        }
        error @ proof::ChecksError::NotInState => {
            super::Failure::from(error).hint(hint::checks_file_in_state())
        }
        error @ proof::ChecksError::NoChecks => {
            super::Failure::from(error).hint(hint::declare_a_check())
        }
    }
}

/// Which fix an unarmed verify.sh needs (`status` says the same).
pub(super) fn unarmed(armed: &git::Armed) -> Unarmed {
    match armed {
        git::Armed::Missing => Unarmed::Missing,
        git::Armed::NotExecutable => Unarmed::NotExecutable,
        git::Armed::Yes
        | git::Armed::NotAFile
        | git::Armed::LinkLeadsOutside
        | git::Armed::DanglingLink
        | git::Armed::LinkLoop
        | git::Armed::LinkNotToFile => Unarmed::NotAFile,
    }
}

/// Errors caused by the worktree's content are the repository's to fix; say how.
fn content_hint(error: git::Error) -> super::Failure {
    let content = error.is_worktree_content();
    let locked = matches!(error, git::Error::RefLocked { .. });
    let submodules = matches!(error, git::Error::DirtySubmodules { .. });
    let verify = matches!(
        error,
        git::Error::VerifyNotAsRecorded { .. } | git::Error::VerifyOutsideState { .. }
    );
    let failure = super::Failure::from(error);
    if verify {
        failure.hint(hint::verify_as_recorded())
    } else if submodules {
        failure.hints(hint::dirty_submodules())
    } else if locked {
        failure.hint(hint::remove_the_lock())
    } else if content {
        failure.hint(hint::fix_the_path())
    } else {
        failure
    }
}

/// `run <rev>`: report a commit that is already proven or not armed, else prove it.
fn run_rev(
    ctx: &Context,
    policy: &Policy,
    args: &Args,
    rev: &str,
    out: &mut dyn Write,
) -> Result<u8, super::Failure> {
    let repo = &ctx.repo;
    // A range was sent to run_range: this is one commit.
    let info = one_commit(repo, rev, hint::one_commit_or_range())?;
    let tree = Some(info.tree.to_string());
    let set = match repo.tree_entry(info.tree, proof::CHECKS_FILE)? {
        Some(_) => Some(CheckSet::of_tree(repo, info.tree).map_err(checks_hint)?),
        None => None,
    };
    let early = if info.verify.is_none() && set.is_none() {
        Some((
            exit::NOT_ARMED,
            RunReport {
                version: JSON_VERSION,
                outcome: Outcome::InsufficientEvidence,
                tree,
                result: RunResult::NotArmed {
                    reason: report::NOT_IN_COMMIT,
                    hints: Unarmed::NotInCommit.hints(),
                },
            },
        ))
    } else if args.force {
        None
    } else if let Some(set) = &set {
        all_proven(ctx, info.tree, set)?.map(|report| (exit::OK, report))
    } else {
        already_proven(ctx, repo, info.tree, info.verify)?.map(|report| (exit::OK, report))
    };
    if let Some((code, report)) = early {
        print(&report, args.json, out)?;
        return Ok(code);
    }
    if !args.json {
        report::commit_heading(&info.id.to_string(), &info.subject, out)?;
    }
    out.flush()?;
    let (code, report) = prove_commit(
        repo,
        &info,
        &CommitRun {
            host: HOST,
            timeout: policy.timeout,
            verbose: args.verbose,
            force: args.force,
            progress: true,
            jobs: args.jobs.map(usize::from),
            log: None,
            exec: None,
        },
    )?
    .map_err(|failure| failure.json(args.json))?;
    print(&report, args.json, out)?;
    Ok(code)
}
