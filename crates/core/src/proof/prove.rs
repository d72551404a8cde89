//! Acting on a decision to prove: run verify.sh on a state tree, check that the state did not
//! move under it (nor changed and changed back: every path's ctime is checked against the
//! run's start, on the filesystem's clock), and record the proof.
//!
//! Shared by `git prove-it run`, the agent hooks and the pre-push hook, so every proof is made
//! the same way. It never prints: progress goes through `on_tick`, results are values.

use std::io::Write;
use std::os::unix::fs::DirBuilderExt as _;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::checks::Check;
use super::checks_file::VERIFY_CHECK;
use super::failure::Failure;
use super::record::{Outcome, Record, Script, Signature};
use crate::context::Clock;
use crate::git::{self, PROOFS_REF, Repo, StateTree};
use crate::isolation::Isolation;
use crate::signing::{self, Signer};
use crate::verify;

/// How many lines of a failing run's output are kept for the person or agent.
pub const TAIL_LINES: usize = 20;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Verify(#[from] verify::Error),
    #[error(transparent)]
    Git(#[from] git::Error),
    /// `prove-it.sign` is on and the proof could not be signed: nothing was recorded.
    #[error("could not sign the proof; nothing was recorded")]
    Sign(#[from] signing::Error),
    /// A worktree nested inside another, on a machine without namespaces to hide the outer
    /// one, with links from the environment into it: a run would test the outer one's code.
    #[error(
        "not run: this worktree sits inside {}, and the run could reach its code ({}); this machine cannot hide it in a mount namespace",
        outer.display(),
        leaks.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Leaks {
        outer: std::path::PathBuf,
        leaks: Vec<crate::isolation::Leak>,
    },
    /// The directory for a run's test reports could not be made.
    #[error("could not make the test reports directory in {}", path.display())]
    Reports {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// How a run of the working state is kept from other bytes than its state: in its own
/// checkout; or, in a worktree nested inside another worktree of the repository, with the
/// outer one hidden in a mount namespace (the program and arguments that run each script so
/// are returned), or where that cannot be had, only once no link from the environment into
/// the outer worktree was found.
pub fn working_view(repo: &Repo) -> Result<(Isolation, crate::process::Wrap), Error> {
    let Some(outer) = repo.enclosing_worktree()? else {
        return Ok((Isolation::Checkout, crate::process::Wrap::Plain));
    };
    let inner = repo.workdir()?;
    let inner = std::fs::canonicalize(inner).unwrap_or_else(|_| inner.to_owned());
    if crate::isolation::namespaces_work() {
        let stage = repo.commit_worktrees()?.join("stage");
        std::fs::create_dir_all(&stage).map_err(|source| git::Error::StateDir {
            path: stage.clone(),
            source,
        })?;
        let view = crate::isolation::Nested {
            outer,
            source: inner.clone(),
            target: inner,
            common_dir: repo.common_dir_real(),
            stage,
        };
        return Ok((
            Isolation::Namespace,
            crate::process::Wrap::Prefix(view.prefix()),
        ));
    }
    let vars: Vec<_> = std::env::vars_os().collect();
    let leaks = crate::isolation::leaks(&outer, &inner, &vars);
    if leaks.is_empty() {
        Ok((Isolation::None, crate::process::Wrap::Plain))
    } else {
        Err(Error::Leaks { outer, leaks })
    }
}

/// Where a run's output is streamed as it runs, given the run's name where several run at once.
pub type Echo = Box<dyn Fn(Option<&str>) -> Box<dyn Write + Send> + Send + Sync>;

/// How to prove: everything about one run of verify.sh but the repository and the state tree.
pub struct ProveOptions<'a> {
    /// `PROVE_IT_HOST` for verify.sh and `host:` in the record.
    pub host: &'a str,
    pub session: Option<&'a str>,
    pub timeout: Duration,
    /// Where to stream each script's output as it runs (`--verbose`): asked for each run, with
    /// the run's name where several run at once (their lines then need telling apart).
    pub echo: Option<Echo>,
    /// The signer of the command's context (`Context::signer`): `None` when signing is off, an
    /// error when it is asked for and cannot work.
    pub signer: Result<Option<Signer>, signing::Error>,
    /// Raised by a signal: kill verify.sh's process group and give up.
    pub interrupt: Option<&'a AtomicBool>,
    /// Where the full output goes; `None` for the state directory's last-run.log. Agent sessions
    /// keep their own, so that two sessions running at once do not write over each other's.
    pub log: Option<std::path::PathBuf>,
    /// The record's `time:`.
    pub clock: Clock,
    /// How many times a failing check is run again before it counts as failed
    /// (`prove-it.retries`); a pass after failures is recorded with `flaky:`.
    pub retries: u32,
    /// How the run is kept from seeing other bytes than the tree it proves (`isolation:`).
    pub isolation: Isolation,
    /// The digest of the environment the run has (`env:`, `verify::Environment`).
    pub env: Option<gix::ObjectId>,
    /// How each script is started: plainly, or in a view of the filesystem of its own (a
    /// nested worktree's, a commit's worktree's).
    pub view: crate::process::Wrap,
    /// Variables of this process that the scripts must not inherit: a commit's run leaves out
    /// the caller's repository-locating ones (`git::LOCAL_ENV`).
    pub env_remove: &'static [&'static str],
    /// When set, a run that fails means the state cannot be tested, for this reason, rather than
    /// that its code fails: a commit's run without a `setup` in a worktree that lacks the
    /// dependency folders the checkout holds.
    pub untestable_failure: Option<String>,
    /// The paths of the state no check reads, for each record's `uncovered:` lines.
    pub uncovered: super::record::Uncovered,
    /// Which index entries may stand for their files in the state a record is keyed by: a
    /// session's anchor, else none (`IndexTrust::Disk`), so that a proof names the bytes its
    /// run read, never a blob an index entry claims for them.
    pub index_trust: git::IndexTrust,
    /// Where a commit's worktree keeps its last reading: the reading after the runs is kept
    /// there for the next commit's (and nothing, while the runs go on).
    pub read: Option<&'a std::cell::Cell<Option<git::IndexTrust>>>,
    /// How the protected paths changed since the run's baseline: each record's `weakened:`
    /// and `changed:` lines, and a BOUNDED_CLAIM_SURVIVES when anything is weakened.
    pub protection: super::weakening::Protection,
    /// Where each check's baseline proof is looked for, whose tests a run's are compared with.
    pub baseline: Baseline,
    /// Whether a failing or untestable run is recorded (`refs/notes/prove-it-failures`); a run
    /// made ahead of a stop records proofs only, since its failure may be contention with the
    /// agent's own commands.
    pub record_failures: bool,
}

/// The keys of the proofs a run's tests are compared with: in a session, the anchor's state
/// tree (then HEAD's tree at its start) and each check's input tree then; outside one, the
/// first parent's tree. Empty: no comparison (only an unreadable report is a finding).
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    /// For the root verify.sh, in order of preference.
    pub trees: Vec<git::ObjectId>,
    /// For named checks, by check name.
    pub inputs: Vec<(String, git::ObjectId)>,
}

impl Baseline {
    /// The tests of `check`'s baseline proof, from the first key that has a proof of it;
    /// `own` (the key this run proves) is never its own baseline.
    fn tests(
        &self,
        repo: &Repo,
        check: &Check,
        own: git::ObjectId,
    ) -> super::test_report::Recorded {
        let keys: Vec<git::ObjectId> = if check.is_root() {
            self.trees.clone()
        } else {
            self.inputs
                .iter()
                .filter(|(name, _)| *name == check.name)
                .map(|(_, key)| *key)
                .chain(
                    self.trees
                        .iter()
                        .filter_map(|tree| repo.tree_input_tree(*tree, &check.inputs).ok()),
                )
                .collect()
        };
        for key in keys.into_iter().filter(|key| *key != own) {
            let Ok(Some(note)) = repo.notes(PROOFS_REF).lookup(&key) else {
                continue;
            };
            // The nearest proof is the baseline, counts or not: one further back would take
            // tests removed before it for tests removed now.
            if let Some(tests) = super::record::baseline_tests(&note, &key, check.record_name()) {
                return tests;
            }
        }
        super::test_report::Recorded::default()
    }

    /// Outside a session: the tree the state was made from (HEAD's, when the state is not
    /// it), then HEAD's first parent's.
    pub fn of_head(repo: &Repo) -> Baseline {
        let trees = ["HEAD^{tree}", "HEAD^^{tree}"]
            .into_iter()
            .filter_map(|spec| repo.named_tree(spec).ok().flatten())
            .collect();
        Baseline {
            trees,
            inputs: Vec::new(),
        }
    }
}

/// What happened when verify.sh ran.
#[derive(Debug)]
pub enum Attempted {
    Proven(Box<Record>),
    Failed {
        /// How its last run ended (`exit_value` says it in words).
        ended: crate::process::Ended,
        exit_code: Option<i32>,
        duration_ms: u64,
        output_bytes: u64,
        tail: Vec<String>,
        /// The copy of this failing run's full output, kept apart from the log the next run
        /// writes over (`Repo::keep_failing_log`).
        log: std::path::PathBuf,
        /// How many runs failed: 1, or more under `prove-it.retries`.
        attempts: u32,
        /// Whether a failure record was written (`refs/notes/prove-it-failures`): not when the
        /// run was interrupted or changed the check's inputs.
        recorded: bool,
        /// The paths of what the check reads that changed while it ran, as a passing run's
        /// `StateChanged` names them (empty: none); `None` when it was interrupted or the state
        /// after it could not be read.
        wrote: Option<Vec<String>>,
    },
    /// verify.sh (or the check) exited 125: the state cannot be tested, which says nothing of
    /// whether its code passes. Never a proof, never a failure.
    CannotTest {
        /// Why, in a few words: "exit 125".
        reason: String,
        exit_code: Option<i32>,
        duration_ms: u64,
        tail: Vec<String>,
        /// This run's full output, kept as a failing run's is.
        log: std::path::PathBuf,
        /// Whether a cannot-test record was written (`refs/notes/prove-it-failures`).
        recorded: bool,
        /// The paths the run changed, as for a failure.
        wrote: Option<Vec<String>>,
    },
    /// verify.sh passed but the working state after the run is not the one it tested, or some
    /// of its paths changed while it ran (and maybe changed back).
    StateChanged {
        duration_ms: u64,
        after: git::ObjectId,
        changed_paths: Vec<String>,
    },
}

/// One check to run: what it is, its key in the state, and how the session started with it.
pub struct ToRun {
    pub check: Check,
    pub input_tree: git::ObjectId,
    /// The check's script as the session started with it (the record's `verify-anchor`).
    pub anchor: Option<Script>,
    /// The diff of what proves this check (its script, the checks file) since the session
    /// started, when it was edited: the record's `verify-diff`, and a BOUNDED_CLAIM_SURVIVES.
    pub diff: Option<String>,
}

/// What a run of several checks reports as it goes.
pub enum Progress<'a> {
    /// Every 200 ms or so, the time since the first check started.
    Tick(Duration),
    /// A check's script was started.
    Started(&'a str),
    /// A check's script ended, passing or not, after this long.
    Ended {
        check: &'a str,
        passed: bool,
        duration: Duration,
    },
}

/// Run verify.sh on `before` (the state tree computed just now, which must hold verify.sh) and
/// record a proof if it exits 0 and leaves the state as it found it. `anchor` is verify.sh as
/// the session started with it, and `diff` its edit since, if any. With `prove-it.sign` on,
/// the proof is signed, and a signer that cannot work is an error before verify.sh runs.
pub fn prove(
    repo: &Repo,
    before: &StateTree,
    anchor: Option<Script>,
    diff: Option<String>,
    attempt: ProveOptions<'_>,
    on_tick: &mut dyn FnMut(Duration),
) -> Result<Attempted, Error> {
    let (blob, mode) = before.verify.ok_or(git::Error::VerifyOutsideState {
        target: git::VERIFY_SCRIPT.to_string(),
    })?;
    let run = ToRun {
        check: Check {
            name: VERIFY_CHECK.to_string(),
            run: git::VERIFY_SCRIPT.to_string(),
            inputs: vec![String::new()],
            script: Some(Script { blob, mode }),
        },
        input_tree: before.id,
        anchor,
        diff,
    };
    let mut ran = prove_checks(repo, before, vec![run], attempt, 1, &mut |progress| {
        if let Progress::Tick(elapsed) = progress {
            on_tick(elapsed);
        }
    })?;
    Ok(ran.pop().expect("one check run, one result").1)
}

/// Run each check of `runs` on `before`, up to `jobs` at once, each script from its own
/// directory in its own process group under the timeout, and record a proof of each that
/// exits 0 and whose inputs the runs left as they found them (a check passing is recorded even
/// when another fails). Results in the order of `runs`.
pub fn prove_checks(
    repo: &Repo,
    before: &StateTree,
    runs: Vec<ToRun>,
    mut attempt: ProveOptions<'_>,
    jobs: usize,
    on_progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Vec<(String, Attempted)>, Error> {
    // Every proof is recorded here, so this is where signing is decided: asked for and
    // impossible is an error, never an unsigned proof.
    let signer = attempt.signer.clone()?.map(|signer| {
        // Only a person at `git prove-it run` can answer a passphrase prompt.
        if attempt.host == "cli" {
            signer
        } else {
            signer.without_prompt()
        }
    });
    let base_log = match &attempt.log {
        Some(log) => log.clone(),
        None => repo.last_run_log()?,
    };
    scripts_as_recorded(repo, before, &runs)?;
    let planner = Planner {
        workdir: repo.workdir()?.to_owned(),
        base_log,
        state: before.id,
        host: attempt.host,
        echo: attempt.echo.take(),
        single: runs.len() == 1,
    };
    // Whole seconds: a record is read by people, and sub-second precision adds nothing there.
    let started = attempt.clock.now_seconds();
    // A directory moved away and back keeps its files' ctimes: renames are watched instead,
    // from before the start until every run has ended.
    let mut watch = repo.watch_renames(before);
    // Each progress tick reads what the watch queued, so that a long run never overflows it.
    let mut on_progress = |progress: Progress<'_>| {
        if let Progress::Tick(_) = progress {
            watch.collect();
        }
        on_progress(progress);
    };
    // A run that ends without the reading after it leaves its worktree with no reading to
    // trust: the next reads every file.
    if let Some(read) = attempt.read {
        read.set(None);
    }
    // Last before the runs: whatever changes the state from here on is seen by its ctime.
    let run_start = repo.mark_run_start()?;
    let (outcomes, failures) =
        run_with_retries(repo, &planner, &runs, &attempt, jobs, &mut on_progress)?;
    note_the_tests(repo, &runs, &outcomes);
    let mut ending = Ending {
        repo,
        before,
        attempt: &attempt,
        signer: signer.as_ref(),
        started,
        run_start,
        after: None,
        renamed: Vec::new(),
        renames_unwatched: false,
    };
    ending.after = ending.read_after().ok();
    match watch.end(before, ending.after.as_ref().unwrap_or(before)) {
        git::Renames::Watched(paths) => ending.renamed = paths,
        git::Renames::Unwatched => ending.renames_unwatched = true,
    }
    let mut results: Vec<(String, Attempted)> = Vec::with_capacity(runs.len());
    for ((run, ran), failed_before) in runs.into_iter().zip(outcomes).zip(failures) {
        let name = run.check.name.clone();
        results.push((name, ending.result(run, ran, failed_before)?));
    }
    Ok(results)
}

/// Check that each script is run as the state records it: its bytes on disk must be the blob
/// the proof will name (the root verify.sh's are checked by the state tree itself; a script
/// from outside the history is no file of the state, its caller holds its bytes). And that no
/// submodule holds uncommitted changes: a submodule is recorded by its commit only, so they
/// would run untested by any proof of this tree.
fn scripts_as_recorded(repo: &Repo, before: &StateTree, runs: &[ToRun]) -> Result<(), Error> {
    if !before.dirty_submodules().is_empty() {
        return Err(git::Error::DirtySubmodules {
            paths: before.dirty_submodules().to_vec(),
        }
        .into());
    }
    for run in runs
        .iter()
        .filter(|run| !run.check.is_root() && !run.check.is_exec())
    {
        repo.check_on_disk(before, &run.check.run, "check's script")?;
    }
    Ok(())
}

/// How each check's script is started: its program, directory, environment, log and echo.
struct Planner<'a> {
    workdir: std::path::PathBuf,
    /// The log of the root verify.sh; each named check's is beside it.
    base_log: std::path::PathBuf,
    /// The state tree the checks run on.
    state: git::ObjectId,
    host: &'a str,
    echo: Option<Echo>,
    /// One check alone: its echoed lines need no name.
    single: bool,
}

impl Planner<'_> {
    /// Run `n` (0 for the first) of `run`.
    fn plan(&self, run: &ToRun, n: u32) -> Plan {
        let program = self.workdir.join(&run.check.run);
        // A script from outside the history runs from the worktree's root, as verify.sh does.
        let dir = match program.parent() {
            Some(parent) if !run.check.is_exec() => parent.to_owned(),
            _ => self.workdir.clone(),
        };
        let mut env = verify::env(&run.input_tree.to_string(), self.host);
        if !run.check.is_root() {
            env.push(("PROVE_IT_CHECK".into(), run.check.name.clone().into()));
            env.push(("PROVE_IT_STATE_TREE".into(), self.state.to_string().into()));
        }
        Plan {
            name: run.check.name.clone(),
            program,
            dir,
            env,
            log: if run.check.is_root() {
                self.base_log.clone()
            } else {
                check_log(&self.base_log, &run.check.name)
            },
            echo: self.echo.as_ref().map(|echo| {
                let name = match n {
                    0 => run.check.name.clone(),
                    n => format!("{} run {}", run.check.name, n + 1),
                };
                echo((n > 0 || !self.single).then_some(name.as_str()))
            }),
        }
    }
}

/// A check's last run: how it ended, its log, the tests its reports counted.
type LastRun = (verify::Ran, std::path::PathBuf, TestsRead);

/// Run every check, then each failing one again, up to `retries` times, until it passes (a
/// flaky one); one interrupted, or one that cannot test the state, is never run again. Each
/// check's last run, and how many of its runs failed before it.
fn run_with_retries(
    repo: &Repo,
    planner: &Planner<'_>,
    runs: &[ToRun],
    attempt: &ProveOptions<'_>,
    jobs: usize,
    on_progress: &mut dyn FnMut(Progress<'_>),
) -> Result<(Vec<LastRun>, Vec<u32>), Error> {
    let reports = repo.state_dir()?.join(REPORTS_DIR);
    let run = |plans: Vec<Plan>, on_progress: &mut dyn FnMut(Progress<'_>)| {
        run_all(
            plans,
            &reports,
            attempt.timeout,
            attempt.interrupt,
            &attempt.view,
            attempt.env_remove,
            jobs,
            on_progress,
        )
    };
    let mut outcomes = run(
        runs.iter().map(|run| planner.plan(run, 0)).collect(),
        on_progress,
    )?;
    let interrupted = || {
        attempt
            .interrupt
            .is_some_and(|flag| flag.load(std::sync::atomic::Ordering::SeqCst))
    };
    let mut failures = vec![0u32; runs.len()];
    for n in 1..=attempt.retries {
        let again: Vec<usize> = (0..runs.len())
            .filter(|&i| {
                let (ran, _, _) = &outcomes[i];
                // A state that cannot be tested stays so: running it again only costs time.
                !ran.passed() && !ran.cannot_test() && ran.exit != verify::Exit::Interrupted
            })
            .collect();
        if again.is_empty() || interrupted() {
            break;
        }
        let plans = again.iter().map(|&i| planner.plan(&runs[i], n)).collect();
        let rerun = run(plans, on_progress)?;
        for (i, ran) in again.into_iter().zip(rerun) {
            failures[i] += 1;
            outcomes[i] = ran;
        }
    }
    Ok((outcomes, failures))
}

/// What each check's result is made from once every run has ended: the state after the runs,
/// read once and only when needed, and the renames watched while they went on.
struct Ending<'r, 'a> {
    repo: &'r Repo,
    before: &'r StateTree,
    attempt: &'r ProveOptions<'a>,
    signer: Option<&'r Signer>,
    /// The records' `time:`.
    started: time::OffsetDateTime,
    run_start: git::FsTime,
    /// The reading after the runs, once read.
    after: Option<StateTree>,
    /// The paths renamed while the runs went on.
    renamed: Vec<String>,
    /// The renames could not be watched (the records say so).
    renames_unwatched: bool,
}

impl Ending<'_, '_> {
    /// The reading after the runs, kept as the worktree's last when it has one.
    fn read_after(&self) -> Result<StateTree, git::Error> {
        let (after, trust) = self
            .repo
            .state_tree_since_read(self.run_start, self.attempt.index_trust)?;
        if let Some(read) = self.attempt.read {
            read.set(Some(trust));
        }
        Ok(after)
    }

    /// The state after the runs, read now if it was not yet; `None` when it cannot be read.
    fn after(&mut self) -> Option<&StateTree> {
        if self.after.is_none() {
            self.after = self.read_after().ok();
        }
        self.after.as_ref()
    }

    /// Whether `run`'s inputs are, after the runs, as they were before: only then does a
    /// record of what the run found belong to its key.
    fn inputs_unmoved(&mut self, run: &ToRun) -> bool {
        let repo = self.repo;
        self.after()
            .and_then(|after| repo.input_tree(after, &run.check.inputs, true).ok())
            == Some(run.input_tree)
    }

    /// What a run that did not pass changed of what it tested, unless it was interrupted (then
    /// whatever changed meanwhile may be another's doing, as the prover's cancel is).
    fn wrote(&mut self, ran: &verify::Ran, run: &ToRun, moved: &[String]) -> Option<Vec<String>> {
        if ran.passed() || ran.exit == verify::Exit::Interrupted {
            return None;
        }
        let before = self.before;
        Some(changed_inputs(before, self.after()?, &run.check, moved))
    }

    /// The result of `run`, whose last run is `ran` after `failed_before` failing ones: its
    /// record written where it has one.
    fn result(
        &mut self,
        run: ToRun,
        (ran, log, tests): LastRun,
        failed_before: u32,
    ) -> Result<Attempted, Error> {
        let untestable = match &self.attempt.untestable_failure {
            _ if ran.cannot_test() => Some(super::cannot_test::EXIT_125),
            Some(reason) if !ran.passed() && ran.exit != verify::Exit::Interrupted => {
                Some(reason.as_str())
            }
            _ => None,
        };
        let moved = renamed_inputs(&self.renamed, &run.check);
        if let Some(reason) = untestable {
            return self.cannot_test(&run, ran, &log, &moved, reason);
        }
        if !ran.passed() {
            return self.failed(&run, ran, &log, &moved, failed_before);
        }
        // The proof must be for the state that was tested: if a script (or anything else)
        // changed the check's inputs while it ran, record nothing, even if they are back as
        // they were: a helper could have put good content in place for the run and restored
        // the broken one before it ended.
        if self.after.is_none() {
            self.after = Some(self.read_after()?);
        }
        let after = self.after.as_ref().expect("read just above");
        let after_input = self.repo.input_tree(after, &run.check.inputs, true)?;
        let changed_paths = changed_inputs(self.before, after, &run.check, &moved);
        if after_input != run.input_tree || !changed_paths.is_empty() {
            return Ok(Attempted::StateChanged {
                duration_ms: millis(ran.duration),
                after: after_input,
                changed_paths,
            });
        }
        let record = self.record(run, &ran, &tests, failed_before)?;
        Ok(Attempted::Proven(Box::new(record)))
    }

    /// A run that could not test the state, for `reason`: recorded as such when its inputs
    /// stayed as they were.
    fn cannot_test(
        &mut self,
        run: &ToRun,
        ran: verify::Ran,
        log: &std::path::Path,
        moved: &[String],
        reason: &str,
    ) -> Result<Attempted, Error> {
        let wrote = self.wrote(&ran, run, moved);
        let (repo, attempt) = (self.repo, self.attempt);
        let recorded = attempt.record_failures
            && moved.is_empty()
            && self.inputs_unmoved(run)
            && cannot_test_of(repo, run, &ran, attempt, self.started, reason).is_some_and(
                |record| super::cannot_test::record_cannot_test(repo, &record).is_ok(),
            );
        Ok(Attempted::CannotTest {
            reason: reason.to_string(),
            exit_code: ran.exit.code(),
            duration_ms: millis(ran.duration),
            tail: ran.tail,
            log: repo.keep_failing_log(log)?,
            recorded,
            wrote,
        })
    }

    /// A failing run: recorded for the state it ran on, not when it was interrupted (that says
    /// nothing of the check), nor when its inputs are not as they were. A failure recorded
    /// contests the proofs of the same script on its key at once.
    fn failed(
        &mut self,
        run: &ToRun,
        ran: verify::Ran,
        log: &std::path::Path,
        moved: &[String],
        failed_before: u32,
    ) -> Result<Attempted, Error> {
        let wrote = self.wrote(&ran, run, moved);
        let (repo, attempt) = (self.repo, self.attempt);
        let ended = crate::process::Ended::new(ran.exit, attempt.timeout);
        if matches!(ran.exit, verify::Exit::TimedOut | verify::Exit::Interrupted) {
            note_the_end(log, &super::exit_value(ended));
        }
        let failure = if ran.exit == verify::Exit::Interrupted || !attempt.record_failures {
            None
        } else {
            (self.inputs_unmoved(run) && moved.is_empty())
                .then(|| failure_of(repo, run, &ran, attempt, self.started, failed_before + 1))
                .flatten()
        };
        // Best effort: a failure that could not be recorded still fails the run.
        let recorded = failure.is_some_and(|failure| {
            super::failure::record_failure(repo, &failure).is_ok()
                && super::contest::on_failure(repo, &failure).is_ok()
        });
        Ok(Attempted::Failed {
            ended,
            exit_code: ran.exit.code(),
            duration_ms: millis(ran.duration),
            output_bytes: ran.output_bytes,
            tail: ran.tail,
            log: repo.keep_failing_log(log)?,
            attempts: failed_before + 1,
            recorded,
            wrote,
        })
    }

    /// The proof of `run`, which passed and left its inputs as it found them: signed when a
    /// signer is set, and written to the proofs ref beside the records on its key.
    fn record(
        &self,
        run: ToRun,
        ran: &verify::Ran,
        tests: &TestsRead,
        failed_before: u32,
    ) -> Result<Record, Error> {
        let (repo, attempt) = (self.repo, self.attempt);
        let key = run.input_tree;
        let verify = run
            .check
            .script
            .expect("a check is run only through a script the state holds");
        let edited = run.diff.is_some() || run.anchor.is_some_and(|anchor| anchor != verify);
        let tests_weakened: Vec<String> =
            super::test_report::weakenings(&attempt.baseline.tests(repo, &run.check, key), tests)
                .iter()
                .map(ToString::to_string)
                .collect();
        let weakened = !attempt.protection.weakened.is_empty() || !tests_weakened.is_empty();
        let identity = repo.identity();
        let record = Record {
            outcome: if edited || weakened {
                Outcome::BoundedClaimSurvives
            } else {
                Outcome::Proven
            },
            tree: key,
            check: run.check.record_name().map(str::to_string),
            head: repo.head_commit()?,
            verify,
            verify_anchor: run.anchor,
            exit_code: 0,
            duration_ms: millis(ran.duration),
            flaky: failed_before,
            isolation: Some(attempt.isolation),
            renames_unwatched: self.renames_unwatched,
            env: attempt.env,
            time: self.started,
            host: attempt.host.to_string(),
            session: attempt.session.map(str::to_string),
            tool: tool(),
            identity_missing: identity.missing,
            verify_diff: if edited { run.diff } else { None },
            protection: attempt.protection.clone(),
            uncovered: attempt.uncovered.clone(),
            tests: super::test_report::Recorded::of(tests),
            tests_weakened,
            signed_off_by: identity.display.clone(),
            signature: None,
        };
        let record = match self.signer {
            None => record,
            Some(signer) => {
                let signed = record.canonical();
                Record {
                    signature: Some(Signature {
                        armor: signer.sign(&signed)?,
                        signed,
                    }),
                    ..record
                }
            }
        };
        let what = match &record.check {
            Some(check) => format!("prove-it: proof of check {check} for tree {key}"),
            None => format!("prove-it: proof for tree {key}"),
        };
        let failures =
            super::contest::failures_of(repo, key, record.check.as_deref(), record.verify)?;
        repo.notes(PROOFS_REF).update(key, &what, |existing| {
            super::contest::append_proof(existing, &record, &failures)
        })?;
        Ok(record)
    }
}

/// The paths `check` reads that differ between `before` and `after` (the state after the runs)
/// or were touched while the runs went on, with the submodules left dirty and the inputs
/// `moved` (renamed) meanwhile: what a run changed of what it tested.
fn changed_inputs(
    before: &StateTree,
    after: &StateTree,
    check: &Check,
    moved: &[String],
) -> Vec<String> {
    // The script itself counts as read, wherever it lies: one swapped while it ran (a shell
    // reads a script as it goes) is not the one the record would name.
    let inside = |path: &String| {
        *path == check.run
            || check.inputs.iter().any(|input| {
                input.is_empty() || path == input || path.starts_with(&format!("{input}/"))
            })
    };
    let mut changed: Vec<String> = before
        .changed_paths(after)
        .into_iter()
        .chain(after.touched().iter().cloned())
        .filter(|path| inside(path))
        .collect();
    changed.extend(after.dirty_submodules().iter().cloned());
    changed.extend(moved.iter().cloned());
    changed.sort();
    changed.dedup();
    changed
}

/// The paths of `renamed` (renamed while the runs went on) that `check` reads, lie above what
/// it reads (a directory holding its inputs), or are its script.
fn renamed_inputs(renamed: &[String], check: &Check) -> Vec<String> {
    let under = |path: &str, dir: &str| {
        dir.is_empty()
            || path == dir
            || path
                .strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    renamed
        .iter()
        .filter(|moved| {
            under(&check.run, moved)
                || check
                    .inputs
                    .iter()
                    .any(|input| under(moved, input) || under(input, moved))
        })
        .cloned()
        .collect()
}

/// The cannot-test record of `run`'s `outcome` (exit 125, or a failure that means the state
/// could not be tested) for `reason`; `None` for a check whose script the state does not hold.
fn cannot_test_of(
    repo: &Repo,
    run: &ToRun,
    outcome: &verify::Ran,
    attempt: &ProveOptions<'_>,
    started: time::OffsetDateTime,
    reason: &str,
) -> Option<super::cannot_test::CannotTest> {
    let mut record = super::cannot_test::CannotTest::new(
        repo,
        run.input_tree,
        run.check.record_name(),
        run.check.script?,
        reason,
        attempt.host,
        started,
    );
    record.session = attempt.session.map(str::to_string);
    record.exit_code = outcome.exit.code();
    record.duration_ms = millis(outcome.duration);
    record.output = super::failure::redact(
        super::failure::bounded_output(&outcome.tail),
        &super::failure::secret_values(std::env::vars()),
    );
    Some(record)
}

/// The failure record of `run`'s failing `outcome`, its `attempts`-th failing run; `None` for a
/// check whose script the state does not hold (nothing could have run it).
fn failure_of(
    repo: &Repo,
    run: &ToRun,
    outcome: &verify::Ran,
    attempt: &ProveOptions<'_>,
    started: time::OffsetDateTime,
    attempts: u32,
) -> Option<Failure> {
    let identity = repo.identity();
    Some(Failure {
        tree: run.input_tree,
        check: run.check.record_name().map(str::to_string),
        head: repo.head_commit().ok().flatten(),
        verify: run.check.script?,
        exit: super::exit_value(crate::process::Ended::new(outcome.exit, attempt.timeout)),
        exit_code: outcome.exit.code(),
        duration_ms: millis(outcome.duration),
        attempts,
        time: started,
        host: attempt.host.to_string(),
        session: attempt.session.map(str::to_string),
        tool: tool(),
        identity_missing: identity.missing,
        output: super::failure::redact(
            super::failure::bounded_output(&outcome.tail),
            &super::failure::secret_values(std::env::vars()),
        ),
        signed_off_by: identity.display.clone(),
    })
}

/// The record's `tool:`.
fn tool() -> String {
    format!("git-prove-it {}", env!("CARGO_PKG_VERSION"))
}

/// Where one check's output goes: its own log beside the run's (`last-run.api.log`), so that
/// checks running at once never write over each other's.
fn check_log(base: &std::path::Path, check: &str) -> std::path::PathBuf {
    let name = base
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("run.log");
    let stem = name.strip_suffix(".log").unwrap_or(name);
    base.with_file_name(format!("{stem}.{check}.log"))
}

/// The variable naming a run's report directory, and the state directory's folder holding them.
pub const REPORTS_VAR: &str = "PROVE_IT_REPORTS";
const REPORTS_DIR: &str = "reports";

/// What a run's tests were, as read right after it ended.
type TestsRead = Result<Option<super::test_report::Tests>, super::test_report::Error>;

/// The tests of a run that wrote its reports into `dir` and its output into `log`: the JUnit
/// XML files there, else the runners' summary lines in the output.
fn tests_of_run(dir: &std::path::Path, log: &std::path::Path) -> TestsRead {
    if let Some(tests) = super::test_report::read_dir(dir)? {
        return Ok(Some(tests));
    }
    let output = std::fs::read(log).unwrap_or_default();
    Ok(super::test_report::summary_counts(
        String::from_utf8_lossy(&output).lines(),
    ))
}

/// Best effort: say what the tests of each check's last run were, one line each (`<check>
/// <counts>`, `<check> none` or `<check> error: <why>`), for `doctor`.
fn note_the_tests(
    repo: &Repo,
    runs: &[ToRun],
    outcomes: &[(verify::Ran, std::path::PathBuf, TestsRead)],
) {
    let mut text = String::new();
    for (run, (_, _, tests)) in runs.iter().zip(outcomes) {
        let what = match tests {
            Ok(Some(tests)) => format!("{} source={}", tests.counts, tests.source.as_str()),
            Ok(None) => "none".to_string(),
            Err(error) => format!("error: {error}"),
        };
        text.push_str(&format!(
            "{} {}\n",
            run.check.name,
            super::record::one_line(&what)
        ));
    }
    // Along a range the text is mostly the same for every commit: truncating and writing the
    // file again each time costs more than reading it.
    if let Ok(path) = repo.last_run_tests()
        && std::fs::read(&path).ok().as_deref() != Some(text.as_bytes())
    {
        let _ = std::fs::write(path, text);
    }
}

/// One script's run, ready to start.
struct Plan {
    name: String,
    program: std::path::PathBuf,
    dir: std::path::PathBuf,
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    log: std::path::PathBuf,
    echo: Option<Box<dyn Write + Send>>,
}

enum Event {
    Started(usize),
    Ended(usize, RunResult, TestsRead),
}

/// How one script's run ended: its run, or why it could not start.
type RunResult = Result<verify::Ran, verify::Error>;

/// Run every plan, `jobs` at a time, reporting progress from this thread; each plan's run and
/// log, in the plans' order. The first error to start a script is returned once all have
/// ended (the interrupt flag, shared, ends the others at once when it is raised).
#[expect(
    clippy::too_many_arguments,
    reason = "the run's parts, each used once; a struct for one caller would only rename them"
)]
fn run_all(
    plans: Vec<Plan>,
    reports: &std::path::Path,
    timeout: Duration,
    interrupt: Option<&AtomicBool>,
    view: &crate::process::Wrap,
    env_remove: &[&str],
    jobs: usize,
    on_progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Vec<LastRun>, Error> {
    let runner = Runner {
        dirs: report_dirs(reports, plans.len())?,
        timeout,
        interrupt,
        view,
        env_remove,
    };
    let names: Vec<String> = plans.iter().map(|plan| plan.name.clone()).collect();
    let logs: Vec<std::path::PathBuf> = plans.iter().map(|plan| plan.log.clone()).collect();
    let workers = jobs.clamp(1, plans.len().max(1));
    let results = if workers == 1 {
        runner.in_turn(plans, &names, on_progress)
    } else {
        runner.in_parallel(plans, workers, &names, on_progress)
    };
    let mut out = Vec::with_capacity(results.len());
    for (result, log) in results.into_iter().zip(logs) {
        match result {
            Some((Ok(ran), tests)) => out.push((ran, log, tests)),
            Some((Err(error), _)) => return Err(error.into()),
            None => unreachable!("every started check ends before the scope does"),
        }
    }
    Ok(out)
}

/// Each script's own directory for its test reports under `reports`, fresh and private
/// (0700), made before any starts.
fn report_dirs(reports: &std::path::Path, count: usize) -> Result<Vec<tempfile::TempDir>, Error> {
    let failed = |source| Error::Reports {
        path: reports.to_owned(),
        source,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(reports)
        .map_err(failed)?;
    (0..count)
        .map(|_| {
            tempfile::Builder::new()
                .prefix("run-")
                .tempdir_in(reports)
                .map_err(failed)
        })
        .collect()
}

/// What every script of one `run_all` shares: its reports' directories, the timeout, the
/// interrupt flag and how scripts are started.
struct Runner<'a> {
    dirs: Vec<tempfile::TempDir>,
    timeout: Duration,
    interrupt: Option<&'a AtomicBool>,
    view: &'a crate::process::Wrap,
    env_remove: &'a [&'a str],
}

impl Runner<'_> {
    /// Plan `index`'s run, and the tests its reports name.
    fn run_one(
        &self,
        index: usize,
        plan: Plan,
        on_tick: &mut dyn FnMut(Duration),
    ) -> (RunResult, TestsRead) {
        let dir = self.dirs[index].path();
        let mut env = plan.env.clone();
        env.push((REPORTS_VAR.into(), dir.into()));
        let ran = verify::run(
            verify::Request {
                program: &plan.program,
                workdir: &plan.dir,
                env: &env,
                timeout: self.timeout,
                log_path: Some(&plan.log),
                log_cap: verify::LOG_CAP,
                tail_lines: TAIL_LINES,
                echo: plan.echo,
                interrupt: self.interrupt,
                view: self.view,
                env_remove: self.env_remove,
            },
            on_tick,
        );
        // Read at once, then removed: what a process the script left behind writes there
        // later is never read.
        let tests = tests_of_run(dir, &plan.log);
        let _ = std::fs::remove_dir_all(dir);
        (ran, tests)
    }

    /// One at a time: each on this thread, the progress ticking from its own wait.
    fn in_turn(
        &self,
        plans: Vec<Plan>,
        names: &[String],
        on_progress: &mut dyn FnMut(Progress<'_>),
    ) -> Vec<Option<(RunResult, TestsRead)>> {
        let began = std::time::Instant::now();
        let mut results = Vec::with_capacity(plans.len());
        for (index, plan) in plans.into_iter().enumerate() {
            on_progress(Progress::Started(&names[index]));
            let (ran, tests) = self.run_one(index, plan, &mut |_| {
                on_progress(Progress::Tick(began.elapsed()));
            });
            report_end(&names[index], &ran, on_progress);
            results.push(Some((ran, tests)));
        }
        results
    }

    /// `workers` at once, each a thread taking the next plan; the progress is reported from
    /// this thread, ticking every 200 ms.
    fn in_parallel(
        &self,
        plans: Vec<Plan>,
        workers: usize,
        names: &[String],
        on_progress: &mut dyn FnMut(Progress<'_>),
    ) -> Vec<Option<(RunResult, TestsRead)>> {
        let count = plans.len();
        let mut results: Vec<Option<(RunResult, TestsRead)>> = (0..count).map(|_| None).collect();
        let queue = std::sync::Mutex::new(plans.into_iter().enumerate().collect::<Vec<_>>());
        let (sender, receiver) = std::sync::mpsc::channel::<Event>();
        let began = std::time::Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let sender = sender.clone();
                let queue = &queue;
                scope.spawn(move || {
                    loop {
                        let next = queue.lock().map(|mut queue| {
                            if queue.is_empty() {
                                None
                            } else {
                                Some(queue.remove(0))
                            }
                        });
                        let Ok(Some((index, plan))) = next else {
                            break;
                        };
                        let _ = sender.send(Event::Started(index));
                        let (ran, tests) = self.run_one(index, plan, &mut |_| {});
                        let _ = sender.send(Event::Ended(index, ran, tests));
                    }
                });
            }
            drop(sender);
            let mut done = 0;
            while done < count {
                match receiver.recv_timeout(Duration::from_millis(200)) {
                    Ok(Event::Started(index)) => on_progress(Progress::Started(&names[index])),
                    Ok(Event::Ended(index, ran, tests)) => {
                        done += 1;
                        report_end(&names[index], &ran, on_progress);
                        results[index] = Some((ran, tests));
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        on_progress(Progress::Tick(began.elapsed()));
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        });
        results
    }
}

/// Report that check `name`'s script ended, when it ran.
fn report_end(name: &str, ran: &RunResult, on_progress: &mut dyn FnMut(Progress<'_>)) {
    if let Ok(ran) = ran {
        on_progress(Progress::Ended {
            check: name,
            passed: ran.passed(),
            duration: ran.duration,
        });
    }
}

pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Ends the log of a run we killed (timed out, interrupted) with what ended it: a run killed at the
/// timeout may have printed nothing (cargo is silent until it finishes), and an empty log says
/// nothing about why. Best effort: the run's verdict stands without it.
fn note_the_end(log: &std::path::Path, exit: &str) {
    use std::io::Write as _;
    if let Ok(mut file) = std::fs::OpenOptions::new().append(true).open(log) {
        let _ = writeln!(
            file,
            "[git-prove-it: verify.sh {exit}; it and everything it started were killed]"
        );
    }
}
