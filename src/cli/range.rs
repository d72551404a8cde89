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
use serde_json::Value;

use super::commits::{CommitRun, Output, prove_in};
use crate::context::Context;
use crate::exit;
use crate::git::{self, CommitInfo, Repo, TempWorktree};
use crate::outcome::Outcome;
use crate::proof::{self, CommitStatus, Standing};
use crate::report::{self, JSON_VERSION, RangeCommit, RangeReport, RangeResult};

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
    let standings = proof::commit_standings(repo, ids)?;
    let now = ctx.clock.now_seconds();
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
    let workers = how.jobs.min(queue.len()).max(1);
    if !how.json && !queue.is_empty() {
        writeln!(
            err,
            "proving {} of {} commits in up to {workers} temporary worktree{} at once ({} from records)",
            queue.len(),
            commits.len(),
            if workers == 1 { "" } else { "s" },
            commits.len() - queue.len()
        )?;
    }
    let logs = repo.state_dir()?.join(git::COMMIT_LOGS_DIR);
    std::fs::create_dir_all(&logs).map_err(|source| git::Error::StateDir {
        path: logs.clone(),
        source,
    })?;
    let interrupt = crate::process::interrupt_flag()?;
    let run = CommitRun {
        host: how.host,
        timeout: how.timeout,
        verbose: how.verbose,
        json: true,
        force: how.force,
        output: Output::Capture,
        jobs: Some((how.check_jobs / workers).max(1)),
        log: None,
    };
    let queue = Mutex::new(queue);
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, RangeResult)>();
    let mut printed = 0;
    let mut print_ready = |results: &[Option<RangeResult>], out: &mut dyn Write| {
        while let Some(Some(result)) = results.get(printed) {
            if !how.json {
                let commit = &commits[printed];
                let line = RangeCommit {
                    commit: commit.id.to_string(),
                    subject: commit.subject.clone(),
                    result: result.clone(),
                };
                line.human(out)?;
                out.flush()?;
            }
            printed += 1;
        }
        Ok::<(), std::io::Error>(())
    };
    print_ready(&results, out)?;
    let mut failure = None;
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let sender = sender.clone();
            let (queue, run, interrupt, logs) = (&queue, &run, &*interrupt, &logs);
            let repo = repo.handle();
            scope.spawn(move || worker(&repo, queue, run, interrupt, logs, &sender));
        }
        drop(sender);
        for (index, result) in receiver {
            results[index] = Some(result);
            if let Err(error) = print_ready(&results, out) {
                failure.get_or_insert(error);
            }
        }
    });
    if let Some(error) = failure {
        return Err(error.into());
    }
    let interrupted = interrupt.load(Ordering::SeqCst);
    // What never ran (an interrupt stopped the workers) says so.
    for result in results.iter_mut().filter(|r| r.is_none()) {
        *result = Some(RangeResult::Interrupted);
    }
    print_ready(&results, out)?;
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
    let report = RangeReport {
        version: JSON_VERSION,
        outcome: match (all, bounded) {
            (true, true) => Outcome::BoundedClaimSurvives,
            (true, false) => Outcome::Proven,
            (false, _) => Outcome::Disproven,
        },
        jobs: workers,
        commits,
        interrupted,
    };
    if how.json {
        report::json(&report, out)?;
    } else {
        report.human_summary(out)?;
    }
    Ok(if all { exit::OK } else { exit::NOT_PROVEN })
}

/// One worktree's loop: take the next commit, check it out here (the first in a new
/// worktree), prove it, send its result; the worktree is removed when the queue is empty or
/// an interrupt came.
fn worker(
    repo: &Repo,
    queue: &Mutex<VecDeque<(usize, CommitInfo)>>,
    how: &CommitRun<'_>,
    interrupt: &AtomicBool,
    logs: &std::path::Path,
    results: &std::sync::mpsc::Sender<(usize, RangeResult)>,
) {
    let mut worktree: Option<TempWorktree> = None;
    loop {
        if interrupt.load(Ordering::SeqCst) {
            break;
        }
        let Some((index, commit)) = queue.lock().ok().and_then(|mut q| q.pop_front()) else {
            break;
        };
        let checked_out = match &worktree {
            Some(worktree) => worktree.switch(commit.id),
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
                    Ok(proved) => result_of(proved.code, &proved.stdout),
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
        let _ = worktree.remove();
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
                message: format!("{}: {message}", proof::CHECKS_FILE),
            });
        }
        _ => {}
    }
    for check in status.checks.iter().flatten() {
        if let Standing::ScriptMissing(why) = check.standing {
            return Some(RangeResult::CannotProve {
                message: format!("check {}: its script {} {why}", check.name, check.run),
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

/// A commit's result from `run --json`'s report in its worktree (exit status `code`).
fn result_of(code: u8, stdout: &[u8]) -> RangeResult {
    let Ok(report) = serde_json::from_slice::<Value>(stdout) else {
        return RangeResult::CannotProve {
            message: format!("git prove-it run exited with {code} and no report"),
        };
    };
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    let number = |value: &Value| value.as_u64().unwrap_or_default();
    let lines = |value: &Value| {
        value
            .as_array()
            .map(|lines| lines.iter().map(text).collect())
            .unwrap_or_default()
    };
    let outcome = Outcome::parse(report["outcome"].as_str().unwrap_or_default())
        .unwrap_or(Outcome::Disproven);
    match report["result"].as_str() {
        Some("already_proven") => RangeResult::AlreadyProven { outcome },
        Some("proven") => RangeResult::Proven {
            outcome,
            duration_ms: number(&report["proof"]["duration_ms"]),
            flaky: u32::try_from(number(&report["proof"]["flaky"])).unwrap_or(u32::MAX),
        },
        Some("failed") => RangeResult::Failed {
            checks: Vec::new(),
            exit: text(&report["exit"]),
            duration_ms: number(&report["duration_ms"]),
            tail: lines(&report["tail"]),
            log: report["log"].as_str().map(str::to_string),
        },
        Some("state_changed") => RangeResult::StateChanged {
            changed_paths: lines(&report["changed_paths"]),
        },
        Some("not_armed") => RangeResult::NotArmed,
        Some("checks") => {
            let checks = report["checks"].as_array().cloned().unwrap_or_default();
            let failed: Vec<&Value> = checks.iter().filter(|c| c["result"] == "failed").collect();
            if let Some(first) = failed.first() {
                return RangeResult::Failed {
                    checks: failed.iter().map(|c| text(&c["name"])).collect(),
                    exit: text(&first["exit"]),
                    duration_ms: failed
                        .iter()
                        .map(|c| number(&c["duration_ms"]))
                        .max()
                        .unwrap_or(0),
                    tail: lines(&first["tail"]),
                    log: first["log"].as_str().map(str::to_string),
                };
            }
            let changed: Vec<String> = checks
                .iter()
                .filter(|c| c["result"] == "state_changed")
                .flat_map(|c| lines(&c["changed_paths"]))
                .collect();
            if !changed.is_empty() {
                return RangeResult::StateChanged {
                    changed_paths: changed,
                };
            }
            let ran: Vec<&Value> = checks.iter().filter(|c| c["result"] == "proven").collect();
            if ran.is_empty() {
                return RangeResult::AlreadyProven { outcome };
            }
            RangeResult::Proven {
                outcome,
                duration_ms: ran
                    .iter()
                    .map(|c| number(&c["proof"]["duration_ms"]))
                    .max()
                    .unwrap_or(0),
                flaky: ran
                    .iter()
                    .map(|c| u32::try_from(number(&c["proof"]["flaky"])).unwrap_or(u32::MAX))
                    .max()
                    .unwrap_or(0),
            }
        }
        _ => RangeResult::CannotProve {
            message: report["message"].as_str().map_or_else(
                || format!("git prove-it run exited with {code}"),
                str::to_string,
            ),
        },
    }
}
