//! `git prove-it run <range>`: prove every unproven commit of a range, several at once, each
//! in one of up to `--jobs` temporary worktrees that are reused along the range (untracked
//! files removed between commits, ignored build caches kept) and removed at the end, on error
//! and on interrupt. A commit already proven costs a lookup; one whose checks failed before on
//! that exact state, through the same scripts, is not run again unless `--retry-failed`.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use gix::ObjectId;

use super::commits::{CommitRun, ExecScript, Failed, FailedRun, Ran, prove_in};
use crate::context::Context;
use crate::exit;
use crate::git::{CommitInfo, Repo, TempWorktree};
use crate::outcome::Outcome;
use crate::proof::{self, CommitStatus, Standing};
use crate::report::{self, JSON_VERSION, Progress, RangeCommit, RangeReport, RangeResult};

/// How many commit logs are kept at least (the newest), whatever the range's length.
const KEPT_LOGS: usize = 500;

/// How to prove a range.
pub(crate) struct RangeRun<'a> {
    /// The most commits proven at once.
    pub jobs: usize,
    /// How many checks each commit's run may run at once, shared out between the worktrees.
    pub check_jobs: usize,
    pub force: bool,
    pub retry_failed: bool,
    pub json: bool,
    pub verbose: bool,
    pub timeout: std::time::Duration,
    pub host: &'a str,
    /// A script from outside the history that proves every commit instead of its own checks.
    pub exec: Option<&'a ExecScript>,
}

/// Prove `ids` (oldest first) and report each in that order as its result arrives.
pub(crate) fn run_range(
    ctx: &Context,
    ids: &[ObjectId],
    how: &RangeRun<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    let repo = &ctx.repo;
    let standings = match how.exec {
        Some(exec) => proof::commit_standings_with(repo, ids, proof::Exec::Every(&exec.check))?,
        None => proof::commit_standings(repo, ids)?,
    };
    let Sorted {
        commits,
        mut results,
        queue,
    } = Sorted::of(standings, how, ctx.clock.now_seconds());
    let workers = how.jobs.min(queue.len()).max(1);
    if !how.json && !queue.is_empty() {
        RangeReport::starting(queue.len(), commits.len(), workers, err)?;
    }
    let logs = repo.commit_logs(KEPT_LOGS.max(ids.len()))?;
    let interrupt = crate::process::interrupt_flag()?;
    let run = CommitRun {
        host: how.host,
        timeout: how.timeout,
        verbose: how.verbose,
        force: how.force,
        progress: false,
        jobs: Some((how.check_jobs / workers).max(1)),
        log: None,
        exec: how.exec,
    };
    // The first change of the script from outside the history, which stops every worker.
    let changed: Mutex<Option<super::Failure>> = Mutex::new(None);
    // On a terminal, a line on stderr says how far the range is, under the commits' lines.
    let mut progress = Progress::new(how.verbose || how.json);
    let mut printer = Printer {
        commits: &commits,
        json: how.json,
        printed: 0,
    };
    printer.print_ready(&results, out, &mut progress)?;
    let pool = Workers {
        repo,
        run: &run,
        count: workers,
        stop: Stop {
            interrupt: &interrupt,
            changed: &changed,
        },
        logs: &logs,
    };
    if let Some(error) = pool.prove(queue, &mut results, &mut printer, out, &mut progress) {
        return Err(error.into());
    }
    if let Some(changed) = changed.into_inner().ok().flatten() {
        return Err(changed);
    }
    let interrupted = interrupt.load(Ordering::SeqCst);
    // What never ran (an interrupt stopped the workers) says so.
    for result in results.iter_mut().filter(|r| r.is_none()) {
        *result = Some(RangeResult::Interrupted);
    }
    printer.print_ready(&results, out, &mut progress)?;
    let report = range_report(commits, results, workers, interrupted);
    let all = matches!(
        report.outcome,
        Outcome::Proven | Outcome::BoundedClaimSurvives
    );
    if how.json {
        report::json(&report, out)?;
    } else {
        report.human_summary(out)?;
    }
    Ok(if all { exit::OK } else { exit::NOT_PROVEN })
}

/// A range's commits as the records leave them before anything runs: each one's result when
/// the records spare its run, and the queue of the rest, by their place in the range.
struct Sorted {
    commits: Vec<CommitInfo>,
    results: Vec<Option<RangeResult>>,
    queue: VecDeque<(usize, CommitInfo)>,
}

impl Sorted {
    /// Sort `standings` (the range's, oldest first) out by what the records say of each.
    fn of(standings: Vec<CommitStatus>, how: &RangeRun<'_>, now: time::OffsetDateTime) -> Self {
        let mut results: Vec<Option<RangeResult>> = Vec::with_capacity(standings.len());
        let mut queue = VecDeque::new();
        let mut commits = Vec::with_capacity(standings.len());
        for (index, status) in standings.into_iter().enumerate() {
            let known = from_records(&status, how, now);
            if known.is_none() {
                queue.push_back((index, status.commit.clone()));
            }
            results.push(known);
            commits.push(status.commit);
        }
        Sorted {
            commits,
            results,
            queue,
        }
    }
}

/// Prints the commits' lines in the range's order, each as soon as it and every commit before
/// it has its result (nothing with `--json`, whose report comes whole at the end).
struct Printer<'a> {
    commits: &'a [CommitInfo],
    json: bool,
    /// How many commits are printed, the first ones of the range.
    printed: usize,
}

impl Printer<'_> {
    /// Print the results that follow those printed, up to the first still missing.
    fn print_ready(
        &mut self,
        results: &[Option<RangeResult>],
        out: &mut dyn Write,
        progress: &mut Progress,
    ) -> std::io::Result<()> {
        while let Some(Some(result)) = results.get(self.printed) {
            if !self.json {
                progress.clear();
                let commit = &self.commits[self.printed];
                let line = RangeCommit {
                    commit: commit.id.to_string(),
                    subject: commit.subject.clone(),
                    result: result.clone(),
                };
                line.human(out)?;
                out.flush()?;
            }
            self.printed += 1;
        }
        Ok(())
    }
}

/// The workers that prove a range's queue, and what they share: the repository, how a commit
/// is run, what stops them, and the directory of the commits' logs.
struct Workers<'a> {
    repo: &'a Repo,
    run: &'a CommitRun<'a>,
    /// How many run at once, each in its own worktree.
    count: usize,
    stop: Stop<'a>,
    logs: &'a std::path::Path,
}

impl Workers<'_> {
    /// Prove the commits of `queue`, putting each result in its place in `results` and
    /// printing the lines it makes ready as it comes, while the progress line says how far
    /// the range is. Returns once every worker has ended, with the first error printing.
    fn prove(
        &self,
        queue: VecDeque<(usize, CommitInfo)>,
        results: &mut [Option<RangeResult>],
        printer: &mut Printer<'_>,
        out: &mut dyn Write,
        progress: &mut Progress,
    ) -> Option<std::io::Error> {
        let to_run = queue.len();
        let queue = Mutex::new(queue);
        let (sender, receiver) = std::sync::mpsc::channel::<(usize, RangeResult)>();
        let mut failure = None;
        let began = std::time::Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..self.count {
                let sender = sender.clone();
                let (queue, run, stop, logs) = (&queue, self.run, &self.stop, self.logs);
                let repo = self.repo.handle();
                scope.spawn(move || {
                    worker(&repo, queue, run, stop, logs, &sender);
                });
            }
            drop(sender);
            let mut ran = 0;
            loop {
                match receiver.recv_timeout(std::time::Duration::from_millis(200)) {
                    Ok((index, result)) => {
                        results[index] = Some(result);
                        ran += 1;
                        if let Err(error) = printer.print_ready(results, out, progress) {
                            failure.get_or_insert(error);
                        }
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        progress.commits(to_run, ran);
                        progress.tick(began.elapsed());
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            progress.clear();
        });
        failure
    }
}

/// The range's report from its commits and their results (every one has its result by now):
/// proven when every commit is, bounded when one is only through a bounded proof.
fn range_report(
    commits: Vec<CommitInfo>,
    results: Vec<Option<RangeResult>>,
    jobs: usize,
    interrupted: bool,
) -> RangeReport {
    let commits: Vec<RangeCommit> = commits
        .into_iter()
        .zip(results)
        .map(|(commit, result)| RangeCommit {
            commit: commit.id.to_string(),
            subject: commit.subject,
            result: result.expect("every commit has a result by now"),
        })
        .collect();
    let all = commits.iter().all(|c| c.result.proven());
    let bounded = commits.iter().any(|c| {
        matches!(
            c.result,
            RangeResult::AlreadyProven {
                outcome: Outcome::BoundedClaimSurvives
            } | RangeResult::Proven {
                outcome: Outcome::BoundedClaimSurvives,
                ..
            }
        )
    });
    RangeReport {
        version: JSON_VERSION,
        outcome: match (all, bounded) {
            (true, true) => Outcome::BoundedClaimSurvives,
            (true, false) => Outcome::Proven,
            (false, _) => Outcome::Disproven,
        },
        jobs,
        commits,
        interrupted,
    }
}

/// One worktree's loop: take the next commit, check it out here (the first in a new
/// worktree), prove it, send its result; the worktree is removed when the queue is empty or
/// an interrupt came.
fn worker(
    repo: &Repo,
    queue: &Mutex<VecDeque<(usize, CommitInfo)>>,
    how: &CommitRun<'_>,
    stop: &Stop<'_>,
    logs: &std::path::Path,
    results: &std::sync::mpsc::Sender<(usize, RangeResult)>,
) {
    let interrupt = stop.interrupt;
    let mut worktree: Option<TempWorktree> = None;
    loop {
        if interrupt.load(Ordering::SeqCst) || stop.changed() {
            break;
        }
        if let Some(exec) = how.exec
            && let Err(failure) = exec.unchanged(repo)
        {
            if let Ok(mut changed) = stop.changed.lock() {
                changed.get_or_insert(failure);
            }
            break;
        }
        let Some((index, commit)) = queue.lock().ok().and_then(|mut q| q.pop_front()) else {
            break;
        };
        let checked_out = match &worktree {
            Some(worktree) => worktree.switch(repo, commit.id),
            None => repo.add_temp_worktree(commit.id).map(|new| {
                worktree = Some(new);
            }),
        };
        let result = match (checked_out, &worktree) {
            (Ok(()), Some(worktree)) => {
                let log = logs.join(format!("{}.log", commit.id));
                let how = CommitRun {
                    log: Some(log),
                    ..how.clone()
                };
                match prove_in(repo, worktree, &commit, &how, interrupt) {
                    _ if interrupt.load(Ordering::SeqCst) => RangeResult::Interrupted,
                    Ok(proved) => result_of(proved.ran()),
                    Err(failure) => RangeResult::CannotProve {
                        message: failure.report().message,
                    },
                }
            }
            (Err(error), _) => RangeResult::CannotProve {
                message: error.to_string(),
            },
            (Ok(()), None) => unreachable!("a worktree was just made"),
        };
        if results.send((index, result)).is_err() {
            break;
        }
    }
    if let Some(worktree) = worktree {
        // Dropped, it is removed all the same; removing it here reports nothing more.
        crate::isolation::release(worktree.path());
        let _ = worktree.remove();
    }
}

/// What stops the workers: an interrupt, or a change of the script from outside the history.
struct Stop<'a> {
    interrupt: &'a AtomicBool,
    changed: &'a Mutex<Option<super::Failure>>,
}

impl Stop<'_> {
    fn changed(&self) -> bool {
        self.changed
            .lock()
            .map_or(true, |changed| changed.is_some())
    }
}

/// What the records say of a commit, when they spare a run: proven, not armed, not provable,
/// or failed before on this exact state (unless `--retry-failed` or `--force`).
fn from_records(
    status: &CommitStatus,
    how: &RangeRun<'_>,
    now: time::OffsetDateTime,
) -> Option<RangeResult> {
    if let Some(record) = status.standing.record()
        && !how.force
    {
        return Some(RangeResult::AlreadyProven {
            outcome: record.outcome,
        });
    }
    match &status.standing {
        Standing::NotArmed => return Some(RangeResult::NotArmed),
        Standing::ChecksError(message) => {
            return Some(RangeResult::CannotProve {
                message: report::commits::checks_file_error(message),
            });
        }
        _ => {}
    }
    for check in status.checks.iter().flatten() {
        if let Standing::ScriptMissing(why) = check.standing {
            return Some(RangeResult::CannotProve {
                message: report::commits::script_missing(&check.name, &check.run, why),
            });
        }
    }
    let failures = status.failures();
    if failures.is_empty() || how.retry_failed || how.force {
        return None;
    }
    let (_, newest) = failures
        .iter()
        .max_by_key(|(_, failure)| failure.time)
        .expect("not empty");
    Some(RangeResult::FailedBefore {
        checks: failures
            .iter()
            .filter_map(|(check, _)| check.map(str::to_string))
            .collect(),
        exit: newest.exit.clone(),
        time: newest
            .time
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
        ago: report::ago(newest.time, now),
        output: newest.output.clone(),
    })
}

/// A commit's result from its run in a worktree.
fn result_of(ran: Ran) -> RangeResult {
    match ran {
        Ran::Proven {
            outcome,
            ran: false,
            ..
        } => RangeResult::AlreadyProven { outcome },
        // It passed, and does not count: not proven, as `check` would say.
        Ran::Proven {
            contested: true,
            duration_ms,
            ..
        } => RangeResult::Failed {
            checks: Vec::new(),
            exit: report::commits::contested_pass(),
            duration_ms,
            tail: Vec::new(),
            log: None,
        },
        Ran::Proven {
            outcome,
            duration_ms,
            flaky,
            ..
        } => RangeResult::Proven {
            outcome,
            duration_ms,
            flaky,
        },
        Ran::Failed(runs) if runs.iter().all(|run| run.run().is_none()) => {
            RangeResult::StateChanged {
                changed_paths: runs
                    .into_iter()
                    .flat_map(|run| match run {
                        Failed::InputsChanged { paths, .. } => paths,
                        Failed::Run(_) => Vec::new(),
                    })
                    .collect(),
            }
        }
        Ran::Failed(runs) => {
            let failed: Vec<&FailedRun> = runs.iter().filter_map(Failed::run).collect();
            let first = failed[0];
            RangeResult::Failed {
                checks: failed
                    .iter()
                    .filter(|run| run.name != proof::VERIFY_CHECK)
                    .map(|run| run.name.clone())
                    .collect(),
                exit: first.exit.clone(),
                duration_ms: failed.iter().map(|run| run.duration_ms).max().unwrap_or(0),
                tail: first.tail.clone(),
                log: first.log.clone(),
            }
        }
        Ran::CannotTest(reason) => RangeResult::CannotTest { reason },
        Ran::NotArmed(_) => RangeResult::NotArmed,
        Ran::Error(message) => RangeResult::CannotProve { message },
    }
}
