//! Proving ahead (SPEC section 8, "Proving ahead"): a tool call's end wakes the worktree's one
//! background prover, which, once the working state has been quiet for the settle time, runs
//! what the session's next stop would run, exactly as that stop would (`act::run_ahead`). A stop
//! joins a run in flight for its own state; it never passes on the prover's word, only on a
//! proof it admits.
//!
//! The prover's truth is the kernel's: the `flock`s it holds (`git::AheadFiles`) and its
//! process state. Its status file only says which run to wait for.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::act::{self, How};
use super::anchor::Anchor;
use super::decide::{Decision, Failing, RunFacts, Untestable, decide};
use super::error::{Error, error_chain};
use super::event::{AfterTool, Stop};
use super::host::HostRules;
use super::observe::{self, Observation, Seen, worktree};
use super::pipeline::Reply;
use super::scope::{self, Target};
use super::session_index::SessionIndex;
use crate::context::{Clock, Context};
use crate::git::{self, ANCHORS_REF, AheadFiles, ObjectId, Repo, SessionFiles, session_key};

/// How often a waiting prover or a joining stop looks again.
const POLL: Duration = Duration::from_millis(50);

/// What the prover says it does, in `prove-it/ahead/<worktree key>.status`. Read only to know
/// which run a stop may wait for, and for `status`; never a verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Status {
    pub version: u32,
    pub pid: u32,
    pub session: String,
    pub running: Option<Running>,
    /// What failed ahead on the last state run (the session's only: never recorded).
    pub failed: Option<FailedAhead>,
    /// The state trees of the last runs ahead that passed, newest last: words only (the
    /// ledger's "answered by a run made ahead"), never a proof.
    #[serde(default)]
    pub proved: Vec<String>,
}

/// How many proven state trees the status keeps.
const PROVED_KEPT: usize = 32;

/// A run in flight.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Running {
    /// The state tree.
    pub state: String,
    /// The keys it runs: each pending check's input tree, or the state tree for verify.sh.
    pub trees: Vec<String>,
    /// The checks it runs; empty for verify.sh alone.
    pub checks: Vec<String>,
    /// When it started, ns since the epoch.
    pub since_ns: u64,
}

/// A run ahead that failed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct FailedAhead {
    pub state: String,
    /// The checks that failed, or could not test the state; empty for verify.sh alone.
    pub checks: Vec<String>,
    /// How they ended, each named with its check where checks ran ("api: exit code 1").
    pub exit: String,
}

/// What `status` shows of a worktree's prover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum View {
    /// Off in this worktree: the paths the last run changed in place.
    Off { wrote: Vec<String> },
    /// No prover holds the lock.
    NotRunning,
    /// Waiting for a change; what failed ahead on the last state, if anything.
    Idle { failed: Option<FailedAhead> },
    /// Running these checks (empty: verify.sh) for so many seconds.
    Running { checks: Vec<String>, secs: u64 },
}

/// What `status` says of `repo`'s worktree's prover; `None` where none was ever started.
pub(crate) fn view(repo: &Repo) -> Result<Option<View>, git::Error> {
    if !AheadFiles::any(repo) {
        return Ok(None);
    }
    let files = AheadFiles::open(repo, &worktree(repo)?)?;
    if let Some(off) = files.load_off() {
        return Ok(Some(View::Off {
            wrote: String::from_utf8_lossy(&off)
                .lines()
                .map(str::to_string)
                .collect(),
        }));
    }
    let Some(pid) = files.holder() else {
        return Ok(Some(View::NotRunning));
    };
    let status = load(&files).filter(|status| status.pid == pid);
    Ok(Some(match status {
        Some(Status {
            running: Some(running),
            ..
        }) if files.run_holder() == Some(pid) => View::Running {
            checks: running.checks,
            secs: Clock::system().now_ns().saturating_sub(running.since_ns) / 1_000_000_000,
        },
        status => View::Idle {
            failed: status.and_then(|status| status.failed),
        },
    }))
}

fn load(files: &AheadFiles) -> Option<Status> {
    serde_json::from_slice(&files.load_status()?).ok()
}

fn store(files: &AheadFiles, status: &Status) -> Result<(), Error> {
    let bytes = serde_json::to_vec(status).expect("a status serializes");
    Ok(files.store_status(&bytes)?)
}

/// A tool call ended: in every worktree the session anchored (as a stop finds them), note the
/// wake and start the worktree's prover when none runs. Silent, but for an event from another
/// environment than the session's, which starts nothing, and a prover that could not be
/// started: both are said (on stderr only), and the stop then runs what it must itself.
pub(crate) fn after_tool(host: &dyn HostRules, event: &AfterTool) -> Reply {
    let at = Stop {
        session: event.session.clone(),
        turn: None,
        cwd: event.cwd.clone(),
        stop_hook_active: false,
        claim: None,
        transcript: None,
        background: Vec::new(),
    };
    let now = Clock::system().now_ns();
    let mut reply = Reply::Silent;
    for target in scope::stop(&SessionIndex::locate(), host, &at).targets {
        if let Target::Gate { repo, .. } = target {
            match wake(&Context::resolve(*repo, None), host, &event.session, now) {
                Ok(()) => {}
                Err(Error::ForeignEnvironment(changed)) => {
                    reply = Reply::ForeignEnvironment { changed };
                }
                Err(error) => reply = Reply::NotProvingAhead(error_chain(&error)),
            }
        }
    }
    reply
}

/// Wake one worktree's prover for `session`, starting it when no process holds its lock.
fn wake(ctx: &Context, host: &dyn HostRules, session: &str, now: u64) -> Result<(), Error> {
    let repo = &ctx.repo;
    // A session that anchored here made the state directory: without it, there is nothing of
    // the session's here, and nothing is made.
    if !repo.has_state_dir() {
        return Ok(());
    }
    let worktree = worktree(repo)?;
    let key = session_key(session, &worktree);
    // The session's own copy of its anchor: without it, nothing is the session's here.
    let Some(seal) = SessionFiles::open(repo, &key)?.load_seal() else {
        return Ok(());
    };
    let anchor = Anchor::parse(&String::from_utf8_lossy(&seal)).ok();
    if let Some(changed) = anchor
        .as_ref()
        .zip(host.environment())
        .and_then(|(anchor, now)| anchor.environment_differs(now))
    {
        return Err(Error::ForeignEnvironment(changed));
    }
    // Anchored like every policy value: off at the session's start stays off; turned off
    // since, it is off at once (running less is never laxer).
    let anchored_off = anchor.as_ref().is_some_and(|anchor| anchor.ahead_off);
    if anchored_off || !ctx.ahead.clone()?.on {
        return Ok(());
    }
    let files = AheadFiles::open(repo, &worktree)?;
    if files.load_off().is_some() {
        return Ok(());
    }
    files.wake(now)?;
    // Whether a prover holds the lock, by trying it (and letting go at once): reading the
    // kernel's lock table (`/proc/locks`) takes it for writing, which waits for an RCU grace
    // period, 10 ms on an idle machine and over 100 ms on a busy one.
    if files.try_lock()?.is_none() {
        return Ok(());
    }
    // The prover is this process forked, not this binary started again: it proves with the
    // hook's own environment and the host's rules as this hook read them.
    crate::process::fork_detached(|| prover(host, session, &worktree).is_ok())
        .map_err(Error::Prover)?;
    Ok(())
}

/// The prover of `worktree` for `session`: hold the lock (or leave it to the one that does),
/// then prove each settled state until idle or the session's anchor is gone.
pub(crate) fn prover(
    host: &dyn HostRules,
    session: &str,
    worktree_path: &Path,
) -> Result<(), Error> {
    let ctx = Context::resolve(Repo::discover_at(worktree_path)?, None);
    let policy = ctx.ahead.clone()?;
    let worktree = worktree(&ctx.repo)?;
    let files = AheadFiles::open(&ctx.repo, &worktree)?;
    let Some(_lock) = files.try_lock()? else {
        return Ok(());
    };
    let interrupt = crate::process::interrupt_flag().map_err(Error::Interrupt)?;
    let key = session_key(session, &worktree);
    let session_files = SessionFiles::open(&ctx.repo, &key)?;
    let mut status = Status {
        version: 1,
        pid: std::process::id(),
        session: session.to_string(),
        running: None,
        failed: None,
        // An earlier prover's list: a stop after it exited was still answered ahead.
        proved: load(&files).map(|status| status.proved).unwrap_or_default(),
    };
    store(&files, &status)?;
    let nanos = |duration: Duration| u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    let mut done: Option<u64> = None;
    // Started with no wake on record (by hand): its start stands for one.
    let started = ctx.clock.now_ns();
    loop {
        let gone = session_files.load_seal().is_none()
            || ctx.repo.notes(ANCHORS_REF).lookup(&key)?.is_none();
        // The lock file removed or replaced: another prover may hold the new one, and one
        // prover per worktree is what the kernel must say.
        let replaced = files.holder() != Some(std::process::id());
        if interrupt.load(Ordering::SeqCst) || gone || replaced || files.load_off().is_some() {
            return Ok(());
        }
        let now = ctx.clock.now_ns();
        let wake = files.last_wake().unwrap_or(started);
        if done == Some(wake) {
            if now.saturating_sub(wake) >= nanos(policy.idle) {
                return Ok(());
            }
            std::thread::sleep(POLL);
            continue;
        }
        let settled = wake.saturating_add(nanos(policy.settle));
        if now < settled {
            std::thread::sleep(Duration::from_nanos(settled - now).min(POLL * 4));
            continue;
        }
        let ahead = Ahead {
            ctx: &ctx,
            host,
            session,
            worktree: &worktree,
            files: &files,
            interrupt: &interrupt,
        };
        match ahead.prove_once(&mut status, wake)? {
            Once::Done => done = Some(wake),
            Once::Cancelled => interrupt.store(false, Ordering::SeqCst),
            Once::Interrupted | Once::Foreign => return Ok(()),
        }
    }
}

/// How one settled state's run ended.
enum Once {
    /// Proven, run, failed, or nothing to run: wait for the next change.
    Done,
    /// A change made the run unable to match: settle again.
    Cancelled,
    /// A signal: the prover ends.
    Interrupted,
    /// The prover's environment is not the session's: it ends, having run nothing.
    Foreign,
}

struct Ahead<'a> {
    ctx: &'a Context,
    host: &'a dyn HostRules,
    session: &'a str,
    worktree: &'a Path,
    files: &'a AheadFiles,
    interrupt: &'a Arc<AtomicBool>,
}

impl Ahead<'_> {
    /// Look at the state as the session's stop would (once: the prover waits for no run, it is
    /// the run a stop waits for), and run what that stop would run.
    fn prove_once(&self, status: &mut Status, wake: u64) -> Result<Once, Error> {
        let event = Stop {
            session: self.session.to_string(),
            turn: None,
            cwd: self.worktree.to_owned(),
            stop_hook_active: false,
            claim: None,
            transcript: None,
            background: Vec::new(),
        };
        let mut seen =
            match observe::look(self.ctx, self.host, &event, self.ctx.clock.now_ns(), true)? {
                Observation::Stop(seen) => *seen,
                Observation::ForeignEnvironment(_) => return Ok(Once::Foreign),
                Observation::OptedOut | Observation::Answered(_) => return Ok(Once::Done),
            };
        if !matches!(decide(&seen.observed), Decision::Run) {
            return Ok(Once::Done);
        }
        seen.unlock();
        let Some(state) = seen.state.as_ref().map(|state| state.id) else {
            return Ok(Once::Done);
        };
        let Some(_run) = self.files.try_lock_run()? else {
            return Ok(Once::Done);
        };
        // Below the agent again, should a stop have lifted the last run it joined.
        crate::process::set_group_nice(std::process::id(), crate::process::BELOW_THE_AGENT);
        let watched = Watched::of(&seen, state);
        status.running = Some(Running {
            state: state.to_string(),
            trees: watched.keys().iter().map(ToString::to_string).collect(),
            checks: seen
                .pending
                .iter()
                .map(|run| run.check.name.clone())
                .collect(),
            since_ns: self.ctx.clock.now_ns(),
        });
        store(self.files, status)?;
        let cancelled = Arc::new(AtomicBool::new(false));
        let finished = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (files, worktree) = (self.files.clone(), self.worktree.to_owned());
            let (interrupt, cancelled, finished) = (
                Arc::clone(self.interrupt),
                Arc::clone(&cancelled),
                Arc::clone(&finished),
            );
            let trust = observe::index_trust(seen.anchor.as_ref());
            std::thread::spawn(move || {
                watched.watch(&files, &worktree, trust, wake, &finished, || {
                    cancelled.store(true, Ordering::SeqCst);
                    interrupt.store(true, Ordering::SeqCst);
                });
            })
        };
        let how = How {
            interrupt: self.interrupt,
            ahead: true,
        };
        let facts = act::run_ahead(self.ctx, self.host, &event, &mut seen, how);
        finished.store(true, Ordering::SeqCst);
        let _ = watcher.join();
        status.running = None;
        let woke = self.files.last_wake() != Some(wake);
        let once = if cancelled.load(Ordering::SeqCst) {
            Once::Cancelled
        } else if self.interrupt.load(Ordering::SeqCst) {
            Once::Interrupted
        } else {
            let (facts, wrote) = facts?;
            // Nothing else changed the state while it ran (no wake came): whatever changed,
            // the script wrote in place, whether it passed or not.
            if let Some(wrote) = wrote.filter(|wrote| !wrote.is_empty() && !woke) {
                self.files.store_off(wrote.join("\n").as_bytes())?;
            }
            status.ran(state, facts);
            Once::Done
        };
        store(self.files, status)?;
        Ok(once)
    }
}

impl Status {
    /// What a run of `state` that ended showed: its failure, or its proof among the last ones.
    fn ran(&mut self, state: ObjectId, facts: RunFacts) {
        match facts {
            RunFacts::Failed { failing, .. } => {
                self.failed = Some(FailedAhead {
                    state: state.to_string(),
                    checks: Failing::checks(&failing),
                    // The prover's own run always ends: each failing script's `exit:`.
                    exit: Failing::exits(&failing, |ending| {
                        ending.exit_value().unwrap_or_default()
                    }),
                });
            }
            RunFacts::CannotTest { reason, said } => {
                let checks = Untestable::checks(&said);
                let exit = match checks.as_slice() {
                    [] => reason,
                    named => named
                        .iter()
                        .map(|check| format!("{check}: {reason}"))
                        .collect::<Vec<_>>()
                        .join("; "),
                };
                self.failed = Some(FailedAhead {
                    state: state.to_string(),
                    checks,
                    exit,
                });
            }
            RunFacts::Passed(_) => {
                self.failed = None;
                self.proved.push(state.to_string());
                let over = self.proved.len().saturating_sub(PROVED_KEPT);
                self.proved.drain(..over);
            }
            _ => self.failed = None,
        }
    }
}

/// What a run in flight proves: each pending check's inputs and input tree, or the state tree
/// (verify.sh alone).
struct Watched {
    state: ObjectId,
    checks: Vec<(Vec<String>, ObjectId)>,
}

impl Watched {
    fn of(seen: &Seen, state: ObjectId) -> Watched {
        Watched {
            state,
            checks: seen
                .pending
                .iter()
                .map(|run| (run.check.inputs.clone(), run.input_tree))
                .collect(),
        }
    }

    fn keys(&self) -> Vec<ObjectId> {
        if self.checks.is_empty() {
            vec![self.state]
        } else {
            self.checks.iter().map(|(_, tree)| *tree).collect()
        }
    }

    /// Whether the run can still match the working state `repo` shows now.
    fn matches(&self, repo: &Repo, trust: git::IndexTrust) -> bool {
        let Ok(now) = repo.state_tree_trusting(trust) else {
            return false;
        };
        if self.checks.is_empty() {
            return now.id == self.state;
        }
        self.checks
            .iter()
            .all(|(inputs, tree)| repo.input_tree(&now, inputs, false).ok().as_ref() == Some(tree))
    }

    /// Until `finished`, look at the state after each new wake, and `cancel` once the run can
    /// no longer match it.
    fn watch(
        &self,
        files: &AheadFiles,
        worktree: &Path,
        trust: git::IndexTrust,
        mut wake: u64,
        finished: &AtomicBool,
        cancel: impl Fn(),
    ) {
        while !finished.load(Ordering::SeqCst) {
            std::thread::sleep(POLL);
            let Some(now) = files.last_wake().filter(|now| *now != wake) else {
                continue;
            };
            wake = now;
            let Ok(repo) = Repo::discover_at(worktree) else {
                continue;
            };
            if !self.matches(&repo, trust) {
                cancel();
                return;
            }
        }
    }
}

/// How a stop's wait for a run made ahead ended.
pub(super) enum Joined {
    /// No run in flight for this state, or none the kernel vouches for: the stop goes on.
    Not,
    /// The run ended (or its prover died or was stopped): look the proofs up again.
    Ended,
    /// The run would outlast the stop's timeout: it was interrupted.
    OutOfTime,
}

/// When the prover runs the stop's state tree (or a pending check's input tree), and the
/// kernel says its pid holds both locks and is not stopped, wait for that run within the
/// timeout counted from `started_ns`.
pub(super) fn join(ctx: &Context, seen: &Seen, started_ns: u64) -> Joined {
    let Some(state) = &seen.state else {
        return Joined::Not;
    };
    let Ok(files) = worktree(&ctx.repo).and_then(|wt| AheadFiles::open(&ctx.repo, &wt)) else {
        return Joined::Not;
    };
    let Some(status) = load(&files) else {
        return Joined::Not;
    };
    let Some(running) = &status.running else {
        return Joined::Not;
    };
    let wanted: Vec<String> = std::iter::once(state.id)
        .chain(seen.pending.iter().map(|run| run.input_tree))
        .map(|tree| tree.to_string())
        .collect();
    let pid = status.pid;
    let vouched = |files: &AheadFiles| {
        files.holder() == Some(pid)
            && files.run_holder() == Some(pid)
            && !crate::process::stopped(pid)
    };
    if !running.trees.iter().any(|tree| wanted.contains(tree)) {
        // A run for another state can no longer match: a wake makes the prover look again
        // and cancel it, rather than compete with the stop's own run.
        let _ = files.wake(Clock::system().now_ns());
        return Joined::Not;
    }
    if !vouched(&files) {
        return Joined::Not;
    }
    // The agent now waits for this run: below the agent's priority, on a busy machine it took
    // longer than the stop's own run would have.
    crate::process::set_group_nice(pid, 0);
    let timeout = ctx
        .policy
        .as_ref()
        .map_or(crate::context::policy::DEFAULT_TIMEOUT, |policy| {
            policy.timeout
        });
    let deadline = started_ns.saturating_add(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX));
    loop {
        if !vouched(&files) || load(&files).as_ref() != Some(&status) {
            return Joined::Ended;
        }
        if Clock::system().now_ns() >= deadline {
            crate::process::signal(pid);
            return Joined::OutOfTime;
        }
        std::thread::sleep(POLL);
    }
}

/// Whether the proof a stop found for its state (without a run of its own) was made by a run
/// ahead of it, as the prover's status says: words for the ledger only, never a verdict.
pub(super) fn made_ahead(ctx: &Context, seen: &Seen) -> bool {
    let Some(state) = &seen.state else {
        return false;
    };
    // No prover ever ran here: nothing to read, and no directory made for it.
    if !AheadFiles::any(&ctx.repo) {
        return false;
    }
    let Ok(files) = worktree(&ctx.repo).and_then(|wt| AheadFiles::open(&ctx.repo, &wt)) else {
        return false;
    };
    let state = state.id.to_string();
    // The prover records its proof before it rewrites its status: a stop that found the proof
    // in between waits for the status, as long as the prover still holds its run for this state.
    let settling = u64::try_from(SETTLING.as_nanos()).unwrap_or(u64::MAX);
    let deadline = Clock::system().now_ns().saturating_add(settling);
    loop {
        let Some(status) = load(&files) else {
            return false;
        };
        if status.proved.contains(&state) {
            return true;
        }
        let finishing = status
            .running
            .as_ref()
            .is_some_and(|running| running.state == state)
            && files.run_holder() == Some(status.pid);
        if !finishing || Clock::system().now_ns() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// How long a stop waits for the prover to say a proof it found was its own.
const SETTLING: Duration = Duration::from_secs(5);

/// After a stop's own run, passing, failing or unable to test: whether it left the state as it
/// found it (`wrote`, the paths it changed; `None`: not known) decides whether proving ahead
/// may run this worktree's scripts (one that writes in place would race the agent).
pub(super) fn note_run(ctx: &Context, wrote: Option<&[String]>) {
    let Some(wrote) = wrote else {
        return;
    };
    let Ok(files) = worktree(&ctx.repo).and_then(|wt| AheadFiles::open(&ctx.repo, &wt)) else {
        return;
    };
    // Best effort: a marker that cannot be written leaves proving ahead as it was.
    let _ = if wrote.is_empty() {
        files.clear_off()
    } else {
        files.store_off(wrote.join("\n").as_bytes())
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Ending;

    /// A failed run ahead keeps each failing check's `exit:` under its name, as the failure
    /// records say it, for `status`.
    #[test]
    fn a_run_ahead_that_fails_names_each_checks_exit() {
        let mut status = Status::default();
        let failing = |check: &str, code| Failing {
            check: Some(check.into()),
            ending: Ending::code(code),
            log: None,
            lines: Vec::new(),
        };
        let state = ObjectId::empty_tree(gix::hash::Kind::Sha1);
        status.ran(
            state,
            RunFacts::Failed {
                failing: vec![failing("api", 1), failing("docs", 2)],
                exit_code: Some(1),
                predates: Vec::new(),
            },
        );
        let failed = status.failed.clone().expect("the failure is kept");
        assert_eq!(failed.checks, ["api", "docs"]);
        assert_eq!(failed.exit, "api: exit code 1; docs: exit code 2");
        // Checks that could not test the state: each named with the reason.
        let said = |check: &str| Untestable {
            check: Some(check.into()),
            log: String::new(),
            lines: Vec::new(),
        };
        status.ran(
            state,
            RunFacts::CannotTest {
                reason: "exit code 125".into(),
                said: vec![said("api"), said("docs")],
            },
        );
        let failed = status.failed.clone().expect("the failure is kept");
        assert_eq!(failed.exit, "api: exit code 125; docs: exit code 125");
        status.ran(state, RunFacts::Passed(crate::outcome::Outcome::Proven));
        assert_eq!(status.failed, None);
        assert_eq!(status.proved, [state.to_string()]);
    }
}
