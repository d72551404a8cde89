//! `git prove-it watch [<range>]`: a person's front door to proving ahead. It holds the
//! worktree's prover lock (the one the background prover holds, so that a worktree has one
//! prover at a time) and proves, in the foreground, each working state once it has been quiet
//! for the settle time, as `run` proves it; or, given a range, each commit of it not on record
//! as the branch moves, as `run <range>` proves one. A change that makes the run in flight
//! unable to match interrupts it (its process group killed, nothing recorded for it).

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::Failure;
use super::commits::{CommitRun, prove_in};
use super::run::{Live, Proving, prove_live};
use crate::context::Context;
use crate::context::policy::Policy;
use crate::git::{AheadFiles, CommitInfo, ObjectId, Repo, StateTree, Tally, TempWorktree};
use crate::proof::{self, CheckSet, CommitStatus, Standing};
use crate::report::{Cancelled, Known, WatchOutput, could_not};

/// How often the worktree's events, the range and the signals are looked at.
const POLL: Duration = Duration::from_millis(50);

/// While events keep coming, how many settle times a run goes on before the state is looked at.
const BUSY_SETTLES: u32 = 4;

/// `host:` in the records `watch` makes: a person's, made outside any agent session.
const HOST: &str = "watch";

/// Keep the working state proven as you edit: each change is proven once the worktree has
/// been quiet for the settle time (git config prove-it.settle, or PROVE_IT_SETTLE, in
/// milliseconds; default 1000), as 'git prove-it run' proves it, until Ctrl-C.
///
/// A run in flight that a change makes unable to match (the state tree, or with a
/// prove-it.toml the input tree of a check it runs, is no longer the one it runs) is
/// interrupted, its whole process group killed and nothing recorded for it, and the new state
/// is proven once quiet. A state is run once: one that failed runs again when it changes (or
/// with 'git prove-it run --force'). On a terminal each check of the run in flight has a line
/// updated in place (its state and seconds); elsewhere each event is one plain line. The
/// proofs are recorded with host watch, in your own environment: an agent session's stop
/// admits them only when its environment is the one its session started with (SPEC section
/// 8, rule 6).
///
/// With a range (main..HEAD, @{u}..), keep the branch's commits proven as it moves: each
/// commit of the range not on record is proven as 'git prove-it run' proves a range's, one at
/// a time in a worktree of its own, when the range has been the same for the settle time; a run
/// of a commit that leaves the range (a rebase, a reset) is interrupted.
///
/// One prover per worktree: watch holds the lock the background prover of proving ahead
/// holds. While another holds it, watch exits 2 at once, naming it. Ctrl-C (or SIGTERM,
/// SIGHUP) ends it: the run in flight is killed with its whole process group, nothing of it is
/// recorded, its worktree is let go, the lock is released, and it exits 0.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The commits to keep proven as the branch moves, such as main..HEAD or @{u}..; without
    /// it, the working state.
    #[arg(value_name = "RANGE")]
    range: Option<String>,

    /// Run up to this many checks of prove-it.toml at once [default: $PROVE_IT_JOBS, else git
    /// config prove-it.jobs, else the number of cores].
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,

    /// Stream the scripts' output to stderr while they run.
    #[arg(short, long)]
    verbose: bool,

    /// Kill verify.sh (and everything it started) after this many seconds
    /// [default: $PROVE_IT_TIMEOUT, else git config prove-it.timeout, else 300].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let ctx = Context::resolve(Repo::discover(&cwd)?, args.timeout);
    let mut policy = ctx.policy.clone()?;
    if let Some(jobs) = args.jobs {
        policy.jobs = usize::from(jobs);
    }
    let settle = ctx.ahead.clone()?.settle;
    let root = ctx.repo.workdir()?;
    // The key the background prover's files are named by: the canonical worktree path.
    let worktree = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    let files = AheadFiles::open(&ctx.repo, &worktree)?;
    let Some(_lock) = files.try_lock()? else {
        return Err(held(&files));
    };
    let quit = crate::process::interrupt_flag()?;
    let terminal = std::io::stdout().is_terminal();
    let mut output = WatchOutput::new(out, terminal);
    output.watching(
        &worktree.display().to_string(),
        args.range.as_deref(),
        settle,
    )?;
    let watch = Watch {
        ctx: &ctx,
        policy: &policy,
        settle,
        quit: &quit,
        verbose: args.verbose,
    };
    match &args.range {
        None => watch.working_state(&mut output, err)?,
        Some(range) => watch.range(range, &mut output)?,
    }
    output.ended()?;
    Ok(crate::exit::OK)
}

/// The error of a worktree whose prover lock another process holds.
fn held(files: &AheadFiles) -> Failure {
    crate::report::refusal::prover_held(files.holder()).into()
}

/// How one run ended.
enum Once {
    /// Proven, failed, or could not run: wait for the next change.
    Done,
    /// What it proves is no longer what is watched: nothing recorded, look again.
    Cancelled,
    /// A signal: watch ends.
    Quit,
}

struct Watch<'a> {
    ctx: &'a Context,
    policy: &'a Policy,
    settle: Duration,
    quit: &'a AtomicBool,
    verbose: bool,
}

impl Watch<'_> {
    /// Prove each working state once the worktree has been quiet, until a signal.
    fn working_state(
        &self,
        output: &mut WatchOutput<'_>,
        err: &mut dyn Write,
    ) -> Result<(), Failure> {
        let repo = &self.ctx.repo;
        let events = repo.watch_worktree()?;
        let tally = events.tally();
        let mut handled: Option<u64> = None;
        let mut done: Option<ObjectId> = None;
        while !self.quit.load(Ordering::SeqCst) {
            let (count, last) = tally.last();
            let quiet = last.is_none_or(|last| last.elapsed() >= self.settle);
            if handled == Some(count) || !quiet {
                std::thread::sleep(POLL);
                continue;
            }
            handled = Some(count);
            let state = match repo.state_tree(false) {
                Ok(state) => state,
                Err(error) => {
                    output.could_not_prove(&Failure::from(error).report())?;
                    continue;
                }
            };
            if done == Some(state.id) {
                continue;
            }
            match self.prove_state(&tally, count, &state, output, err)? {
                Once::Done => done = Some(state.id),
                // The change that cancelled it is an event of its own: the loop sees it.
                Once::Cancelled => {}
                Once::Quit => break,
            }
        }
        Ok(())
    }

    /// Prove `state` as `run` would, interrupted when a change makes it unable to match.
    fn prove_state(
        &self,
        tally: &Tally,
        since: u64,
        state: &StateTree,
        output: &mut WatchOutput<'_>,
        err: &mut dyn Write,
    ) -> Result<Once, Failure> {
        let repo = &self.ctx.repo;
        let keys = Keys::of(repo, state, self.ctx.signed_only);
        let how = Proving {
            host: HOST,
            force: false,
            verbose: self.verbose,
            progress: false,
            log: None,
            commit: None,
            exec: None,
        };
        let flags = Flags::default();
        output.state_running(&state.id.to_string())?;
        let mut said: std::io::Result<()> = Ok(());
        let proved = std::thread::scope(|scope| {
            let (watched, tally, flags, quit) = (repo.handle(), tally.clone(), &flags, self.quit);
            let (keys, settle) = (&keys, self.settle);
            scope.spawn(move || {
                let mut handled = since;
                let mut looked = Instant::now();
                flags.until_finished(quit, || {
                    let (count, last) = tally.last();
                    // A build writing its ignored files never lets the worktree be quiet: the
                    // state is looked at every few settle times all the same.
                    let busy = last.is_some_and(|last| last.elapsed() < settle)
                        && looked.elapsed() < settle * BUSY_SETTLES;
                    if count == handled || busy {
                        return false;
                    }
                    handled = count;
                    looked = Instant::now();
                    !keys.match_now(&watched)
                });
            });
            let mut on_event = |event: &proof::Progress<'_>| {
                if said.is_err() {
                    return;
                }
                if said.is_ok() {
                    said = match event {
                        proof::Progress::Tick(elapsed) => output.tick(*elapsed),
                        proof::Progress::Started(name) => output.check_started(name),
                        proof::Progress::Ended {
                            check,
                            passed,
                            duration,
                        } => output.check_ended(check, *passed, *duration),
                    };
                }
            };
            let mut live = Live {
                interrupt: Some(&flags.run),
                events: Some(&mut on_event),
            };
            let proved = prove_live(self.ctx, repo, self.policy, &how, &mut live, err);
            flags.finished.store(true, Ordering::SeqCst);
            proved
        });
        said?;
        if flags.cancelled.load(Ordering::SeqCst) {
            output.cancelled(Cancelled::StateChanged)?;
            return Ok(Once::Cancelled);
        }
        if self.quit.load(Ordering::SeqCst) {
            return Ok(Once::Quit);
        }
        match proved {
            Ok((_, report)) => output.report(&report)?,
            Err(failure) => output.could_not_prove(&failure.report())?,
        }
        Ok(Once::Done)
    }

    /// Prove each commit of `range` not on record once the range has stood still for the
    /// settle time, until a signal.
    fn range(&self, range: &str, output: &mut WatchOutput<'_>) -> Result<(), Failure> {
        let repo = &self.ctx.repo;
        let logs = repo.commit_logs(KEPT_LOGS)?;
        let mut known: HashSet<ObjectId> = HashSet::new();
        let mut unreadable: Option<String> = None;
        let mut seen: Option<(Vec<ObjectId>, Instant)> = None;
        let mut worktree: Option<TempWorktree> = None;
        while !self.quit.load(Ordering::SeqCst) {
            std::thread::sleep(POLL);
            let ids = match commits_of(repo, range) {
                Ok(ids) => {
                    unreadable = None;
                    ids
                }
                Err(failure) => {
                    let report = failure.report();
                    if unreadable.as_ref() != Some(&report.message) {
                        unreadable = Some(report.message.clone());
                        output.range_unreadable(&report)?;
                    }
                    continue;
                }
            };
            let since = match &seen {
                Some((before, since)) if *before == ids => *since,
                _ => Instant::now(),
            };
            seen = Some((ids.clone(), since));
            let new: Vec<ObjectId> = ids.into_iter().filter(|id| !known.contains(id)).collect();
            if new.is_empty() || since.elapsed() < self.settle {
                continue;
            }
            for status in proof::commit_standings(repo, &new)? {
                if self.quit.load(Ordering::SeqCst) {
                    break;
                }
                let commit = &status.commit;
                if let Some(said) = from_records(&status) {
                    output.commit_known(&commit.id.to_string(), &commit.subject, said)?;
                    known.insert(commit.id);
                    continue;
                }
                // Gone from the range since it was read: nothing to prove.
                if !commits_of(repo, range).is_ok_and(|ids| ids.contains(&commit.id)) {
                    continue;
                }
                let log = logs.join(format!("{}.log", commit.id));
                match self.prove_commit(range, commit, log, &mut worktree, output)? {
                    Once::Done => {
                        known.insert(commit.id);
                    }
                    Once::Cancelled => {}
                    Once::Quit => break,
                }
            }
        }
        if let Some(worktree) = worktree {
            crate::isolation::release(worktree.path());
            worktree.remove()?;
        }
        Ok(())
    }

    /// Prove `commit` in the temporary worktree (made, or switched to it), interrupted when it
    /// leaves `range`; a worktree whose run was interrupted is removed once nothing runs in it.
    fn prove_commit(
        &self,
        range: &str,
        commit: &CommitInfo,
        log: std::path::PathBuf,
        worktree: &mut Option<TempWorktree>,
        output: &mut WatchOutput<'_>,
    ) -> Result<Once, Failure> {
        let repo = &self.ctx.repo;
        let checkout = match worktree.take() {
            Some(reused) => match reused.switch(repo, commit.id) {
                Ok(()) => reused,
                Err(_) => {
                    crate::isolation::release(reused.path());
                    let _ = reused.remove();
                    repo.add_temp_worktree(commit.id)?
                }
            },
            None => repo.add_temp_worktree(commit.id)?,
        };
        output.commit_running(&commit.id.to_string(), &commit.subject)?;
        let how = CommitRun {
            host: HOST,
            timeout: self.policy.timeout,
            verbose: self.verbose,
            force: false,
            progress: false,
            jobs: Some(self.policy.jobs),
            log: Some(log),
            exec: None,
        };
        let flags = Flags::default();
        let proved = std::thread::scope(|scope| {
            let (watched, flags, quit, id) = (repo.handle(), &flags, self.quit, commit.id);
            scope.spawn(move || {
                flags.until_finished(quit, || {
                    !commits_of(&watched, range).is_ok_and(|ids| ids.contains(&id))
                });
            });
            let proved = prove_in(repo, &checkout, commit, &how, &flags.run);
            flags.finished.store(true, Ordering::SeqCst);
            proved
        });
        if flags.run.load(Ordering::SeqCst) || self.quit.load(Ordering::SeqCst) {
            crate::isolation::release(checkout.path());
            checkout.remove()?;
            if flags.cancelled.load(Ordering::SeqCst) {
                output.cancelled(Cancelled::LeftRange)?;
                return Ok(Once::Cancelled);
            }
            return Ok(Once::Quit);
        }
        *worktree = Some(checkout);
        match proved {
            Ok(proved) => match (&proved.cannot_test, &proved.run) {
                (Some(setup), _) => output.setup_failed(&setup.exit)?,
                (None, Ok((_, report))) => output.report(report)?,
                (None, Err(failure)) => output.could_not_prove(&failure.report())?,
            },
            Err(failure) => output.could_not_prove(&failure.report())?,
        }
        Ok(Once::Done)
    }
}

/// How many commit logs are kept at least, as `run <range>` keeps them.
const KEPT_LOGS: usize = 500;

/// The flags between a run and the thread that watches it.
#[derive(Default)]
struct Flags {
    /// Raised to interrupt the run: a signal, or a change it can no longer match.
    run: AtomicBool,
    /// The run was interrupted by a change.
    cancelled: AtomicBool,
    /// The run has ended: the watching thread ends.
    finished: AtomicBool,
}

impl Flags {
    /// Until the run has finished, pass a signal on to it, and interrupt it once `moved` says
    /// what it proves is no longer what is watched.
    fn until_finished(&self, quit: &AtomicBool, mut moved: impl FnMut() -> bool) {
        while !self.finished.load(Ordering::SeqCst) {
            std::thread::sleep(POLL);
            if quit.load(Ordering::SeqCst) {
                self.run.store(true, Ordering::SeqCst);
                return;
            }
            if moved() {
                self.cancelled.store(true, Ordering::SeqCst);
                self.run.store(true, Ordering::SeqCst);
                return;
            }
        }
    }
}

/// What a run of the working state proves: the input tree of each check of the checks file
/// without a proof, or the state tree (verify.sh alone).
enum Keys {
    State(ObjectId),
    Checks(Vec<(Vec<String>, ObjectId)>),
}

impl Keys {
    fn of(repo: &Repo, state: &StateTree, signed_only: bool) -> Keys {
        let pending = || -> Option<Vec<(Vec<String>, ObjectId)>> {
            if !proof::has_checks_file(repo).ok()? {
                return None;
            }
            let set = CheckSet::of_state(repo, state).ok()?;
            set.file.as_ref()?;
            let found = proof::state_check_proofs(repo, state, &set).ok()?;
            Some(
                found
                    .iter()
                    .filter(|proven| proven.best(signed_only).is_none())
                    .map(|proven| (proven.check.inputs.clone(), proven.input_tree))
                    .collect(),
            )
        };
        pending().map_or(Keys::State(state.id), Keys::Checks)
    }

    /// Whether the run can still match the working state `repo` shows now.
    fn match_now(&self, repo: &Repo) -> bool {
        let Ok(now) = repo.state_tree(false) else {
            return false;
        };
        match self {
            Keys::State(id) => now.id == *id,
            Keys::Checks(checks) => checks.iter().all(|(inputs, tree)| {
                repo.input_tree(&now, inputs, false).ok().as_ref() == Some(tree)
            }),
        }
    }
}

/// The commits of `range`, oldest first.
fn commits_of(repo: &Repo, range: &str) -> Result<Vec<ObjectId>, Failure> {
    let selection = repo.select(&[range.to_string()])?;
    let mut ids = repo.walk(&selection, None)?;
    ids.reverse();
    Ok(ids)
}

/// What the records say of a commit when they spare its run, as `run <range>` reads them:
/// proven, nothing to prove, or failed before on this very tree through the same scripts.
fn from_records(status: &CommitStatus) -> Option<Known> {
    if status.standing.record().is_some() {
        return Some(Known::Proven);
    }
    if matches!(status.standing, Standing::NotArmed) {
        return Some(Known::NotArmed);
    }
    status
        .failures()
        .into_iter()
        .max_by_key(|(_, failure)| failure.time)
        .map(|(_, failure)| Known::FailedBefore(failure.exit.clone()))
}
