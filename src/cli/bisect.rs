//! `git prove-it bisect`: the first commit whose checks fail, between one that passes and one
//! that fails, along the first-parent line, using every record on file.

use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;

use super::commits::{self, CommitRun, Failed, Proved, Ran};
use crate::context::Context;
use crate::exit;
use crate::git::{CommitInfo, ObjectId, Repo, Selection, TempWorktree};
use crate::proof::{self, Answer, CommitStatus, Known, Next, Standing, bounds, next};
use crate::report::{
    self, BisectCandidate, BisectReport, BisectStep, FailedCheck, FirstBad, How, JSON_VERSION,
    StepResult, could_not, hint, refusal,
};

/// Find the first commit whose checks fail, between a commit that passes and one that fails.
///
/// The search follows the first-parent line from BAD back to GOOD, as git bisect --first-parent
/// does: GOOD is taken to pass and is not run, BAD must fail, and GOOD must be an ancestor of
/// BAD. Commits merged in from a side branch are not searched: a merge stands for them.
///
/// Results on record come first: a commit that is proven counts as passing, one with a failure
/// on record for its exact state (refs/notes/prove-it-failures) as failing. Only the rest are
/// run, halving the commits left each time, so about log2(n) of them run. BAD itself is run
/// first when nothing is recorded for it; a BAD that is proven, or passes, is refused.
///
/// Each run checks the commit out into one worktree under ~/.cache/git-prove-it, reused along
/// the search and kept for the next command (its scripts ended on an error, Ctrl-C or
/// SIGTERM), and proves it there as
/// 'git prove-it run REV' does, recording its proof or its failure; the working tree and the
/// index are not touched.
///
/// A commit whose verify.sh or check exits 125 (as git bisect run has it), or that has a
/// cannot-test record for its exact state, cannot be tested; nor can one without verify.sh nor
/// checks, whose checks file is in error or whose check's script is missing. It is skipped, as
/// by git bisect skip, and a neighbour is run instead. When skipped commits leave the search
/// unable to narrow it down, the commits the first failing one could be are listed.
///
/// Exit status: 0 the first failing commit was found, 1 commits that cannot be tested hide
/// which one it is, 2 usage or repository error (also a BAD that is proven or passes, a GOOD
/// that is not an ancestor of BAD, and an interrupted search).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A commit whose checks pass (taken as passing, never run).
    #[arg(value_name = "GOOD")]
    good: String,

    /// A commit whose checks fail.
    #[arg(value_name = "BAD")]
    bad: String,

    /// Run the commits that have a failure (or a cannot-test record) on record again, rather
    /// than taking it as their result.
    #[arg(long)]
    retry_failed: bool,

    /// Stream verify.sh's output to stderr while it runs.
    #[arg(short, long)]
    verbose: bool,

    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,

    /// Kill verify.sh (and everything it started) after this many seconds
    /// [default: $PROVE_IT_TIMEOUT, else git config prove-it.timeout, else 300].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,

    /// Search with this script instead of each commit's own verify.sh or checks, for history
    /// from before the repository had them: a file of the working tree or any path, read once
    /// (its bytes must not change until the search ends) and run from the root of each
    /// commit's worktree. Only its own records (check exec:NAME, NAME being the script's file name) count as results.
    #[arg(long, value_name = "SCRIPT")]
    exec: Option<std::path::PathBuf>,
}

pub(crate) fn run(
    args: &Args,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let ctx = Context::resolve(Repo::discover(&cwd)?, args.timeout);
    let policy = ctx.policy.clone()?;
    let repo = &ctx.repo;
    let good = commits::one_commit(repo, &args.good, hint::one_commit_as_good())?;
    let bad = commits::one_commit(repo, &args.bad, hint::one_commit_as_bad())?;
    let line = first_parent_line(repo, &good, &bad, args)?;
    let exec = match &args.exec {
        Some(path) => Some(commits::ExecScript::read(repo, path)?),
        None => None,
    };
    let statuses = match &exec {
        Some(exec) => proof::commit_standings_with(repo, &line, proof::Exec::Every(&exec.check))?,
        None => proof::commit_standings(repo, &line)?,
    };
    let now = ctx.clock.now();
    let mut commits: Vec<Commit> = statuses
        .into_iter()
        .map(|status| Commit::of(status, args.retry_failed, now))
        .collect();

    let interrupt = crate::process::interrupt_flag()?;
    let mut search = Bisect {
        repo,
        how: CommitRun {
            host: "cli",
            timeout: policy.timeout,
            verbose: args.verbose,
            force: false,
            progress: true,
            jobs: None,
            log: None,
            exec: exec.as_ref(),
        },
        interrupt: &interrupt,
        worktree: None,
        steps: Vec::new(),
        runs: 0,
        err,
    };
    let found = search.search(&mut commits, &args.bad);
    // Removed here, not only on drop, so that a worktree git will not let go of is an error.
    if let Some(worktree) = search.worktree.take() {
        crate::isolation::release(worktree.path());
        worktree.remove()?;
    }
    let found = found?;
    let (report, code) = bisect_report(found, &commits, search.runs, search.steps);
    if args.json {
        report::json(&report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(code)
}

/// The search's report, with the steps it took (`runs` of them run), and `bisect`'s exit
/// code: the first failing commit found (0), or the candidates for it that commits which
/// cannot be tested leave (1).
fn bisect_report(
    found: Answer,
    commits: &[Commit],
    runs: usize,
    steps: Vec<BisectStep>,
) -> (BisectReport, u8) {
    let recorded = steps.iter().filter(|s| s.how == How::Recorded).count();
    let mut report = BisectReport {
        version: JSON_VERSION,
        first_bad: None,
        candidates: Vec::new(),
        between: commits.len(),
        runs,
        recorded,
        steps,
    };
    let code = match found {
        Answer::Found(at) => {
            let commit = &commits[at];
            let first = commit.failed.first();
            report.first_bad = Some(FirstBad {
                commit: commit.info.id.to_string(),
                subject: commit.info.subject.clone(),
                exit: first.map(|f| f.exit.clone()).unwrap_or_default(),
                output: first.map(|f| f.output.clone()).unwrap_or_default(),
                checks: commit.failed.clone(),
            });
            exit::OK
        }
        Answer::Ambiguous(candidates) => {
            report.candidates = candidates
                .into_iter()
                .map(|at| {
                    let commit = &commits[at];
                    BisectCandidate {
                        commit: commit.info.id.to_string(),
                        subject: commit.info.subject.clone(),
                        untestable: commit.untestable.clone(),
                    }
                })
                .collect();
            exit::NOT_PROVEN
        }
    };
    (report, code)
}

/// The commits on the first-parent line from `bad` back to `good`, oldest first, `good` left
/// out: each first parent in turn, up to the first that `good` reaches (`good` itself, or an
/// ancestor of it when `good` lies on a merged branch). Refused when `good` is not an ancestor
/// of `bad`, or is `bad`.
fn first_parent_line(
    repo: &Repo,
    good: &CommitInfo,
    bad: &CommitInfo,
    args: &Args,
) -> Result<Vec<ObjectId>, super::Failure> {
    let (g, b) = (&args.good, &args.bad);
    if good.id == bad.id {
        return Err(refusal::same_commit(g, b).into());
    }
    // `good...bad` excludes their merge base: `good` itself exactly when it is an ancestor.
    let merge = repo.select(&[format!("{}...{}", good.id, bad.id)])?;
    if merge.hidden != [good.id] {
        let way_out = if merge.hidden == [bad.id] {
            hint::swap_good_and_bad(g, b)
        } else {
            hint::start_from_merge_base(g, b)
        };
        return Err(super::Failure::from(refusal::not_an_ancestor(g, b)).hint(way_out));
    }
    let inside: HashSet<ObjectId> = repo
        .walk(
            &Selection {
                tips: vec![bad.id],
                hidden: vec![good.id],
            },
            None,
        )?
        .into_iter()
        .collect();
    let mut line = Vec::new();
    let mut at = Some(bad.id);
    while let Some(id) = at.filter(|id| inside.contains(id)) {
        line.push(id);
        at = repo.select(&[format!("{id}^@")])?.tips.first().copied();
    }
    line.reverse();
    Ok(line)
}

/// One commit of the line, and what is known of it.
struct Commit {
    info: CommitInfo,
    known: Known,
    /// Why it cannot be tested, when it cannot.
    untestable: Option<String>,
    /// The checks that failed on it, when it fails.
    failed: Vec<FailedCheck>,
    /// What its record says, when a record decides it: the step to show when the search uses it.
    recorded: Option<StepResult>,
}

impl Commit {
    /// Where `status` leaves the commit before anything runs: proven is good, a failure on
    /// record bad (unless `retry_failed`), a tree nothing can test untestable.
    fn of(status: CommitStatus, retry_failed: bool, now: time::OffsetDateTime) -> Commit {
        let mut commit = Commit {
            info: status.commit.clone(),
            known: Known::Unknown,
            untestable: None,
            failed: Vec::new(),
            recorded: None,
        };
        let failures = status.failures();
        if status.standing.is_proven(false) {
            commit.known = Known::Good;
            commit.recorded = Some(StepResult::Proven);
        } else if !retry_failed && !failures.is_empty() {
            commit.known = Known::Bad;
            commit.failed = failures
                .iter()
                .map(|(check, failure)| FailedCheck {
                    name: check.unwrap_or(proof::VERIFY_CHECK).to_string(),
                    exit: failure.exit.clone(),
                    exit_code: failure.exit_code,
                    output: failure.output.clone(),
                })
                .collect();
            let newest = failures.iter().map(|(_, f)| f.time).max();
            commit.recorded = Some(StepResult::Failed {
                checks: commit.failed.clone(),
                recorded_secs_ago: newest.map(|time| (now - time).whole_seconds()),
            });
        } else if let Some(reason) = untestable(&status) {
            commit.known = Known::Untestable;
            commit.untestable = Some(reason);
        } else if let (false, Some(reason)) = (retry_failed, cannot_test_on_record(&status)) {
            commit.known = Known::Untestable;
            commit.recorded = Some(StepResult::Untestable {
                reason: reason.clone(),
            });
            commit.untestable = Some(reason);
        }
        commit
    }

    fn step(&self, how: How, result: StepResult) -> BisectStep {
        BisectStep {
            commit: self.info.id.to_string(),
            subject: self.info.subject.clone(),
            how,
            result,
        }
    }
}

/// Why the commit's last run on record could not test it (`exit 125`, or `check api: exit
/// 125`), when a cannot-test record says so: skipped like a commit nothing can test.
fn cannot_test_on_record(status: &CommitStatus) -> Option<String> {
    let records = status.cannot_tests();
    if records.is_empty() {
        return None;
    }
    Some(
        records
            .iter()
            .map(|(check, record)| match check {
                Some(check) => report::commits::of_check(check, &record.reason),
                None => record.reason.clone(),
            })
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// Why nothing could prove `status`'s commit, if nothing could.
fn untestable(status: &CommitStatus) -> Option<String> {
    match &status.standing {
        Standing::NotArmed => return Some(report::commits::nothing_to_run()),
        Standing::ChecksError(error) => {
            return Some(report::commits::checks_file_in_error(error));
        }
        _ => {}
    }
    status
        .checks
        .iter()
        .flatten()
        .find_map(|check| match check.standing {
            Standing::ScriptMissing(why) => Some(report::commits::script_missing(
                &check.name,
                &check.run,
                why,
            )),
            _ => None,
        })
}

/// The search in progress: where it runs commits, and what it has said.
struct Bisect<'a> {
    repo: &'a Repo,
    how: CommitRun<'a>,
    interrupt: &'a AtomicBool,
    /// Made at the first run, then switched from commit to commit.
    worktree: Option<TempWorktree>,
    steps: Vec<BisectStep>,
    runs: usize,
    err: &'a mut dyn Write,
}

impl Bisect<'_> {
    /// Settle BAD (the last of `commits`), then halve the rest until the first failing commit
    /// is found, or the commits that cannot be tested hide it.
    fn search(&mut self, commits: &mut [Commit], bad_rev: &str) -> Result<Answer, super::Failure> {
        let last = commits.len() - 1;
        let b = bad_rev;
        match commits[last].known {
            Known::Good => {
                self.show_record(&commits[last])?;
                return Err(refusal::bad_is_proven(b).into());
            }
            Known::Untestable => {
                let why = commits[last].untestable.clone().unwrap_or_default();
                return Err(refusal::bad_cannot_be_tested(b, &why).into());
            }
            Known::Bad => self.show_record(&commits[last])?,
            Known::Unknown => {
                self.run(&mut commits[last])?;
                match commits[last].known {
                    Known::Good => {
                        return Err(refusal::bad_passes(b).into());
                    }
                    Known::Untestable => {
                        let why = commits[last].untestable.clone().unwrap_or_default();
                        return Err(refusal::bad_cannot_be_tested(b, &why).into());
                    }
                    Known::Bad | Known::Unknown => {}
                }
            }
        }
        // The records that narrow the search before anything else runs.
        let known: Vec<Known> = commits.iter().map(|c| c.known).collect();
        let (lo, hi) = bounds(&known);
        if hi != last {
            self.show_record(&commits[hi])?;
        }
        if let Some(lo) = lo {
            self.show_record(&commits[lo])?;
        }
        loop {
            let known: Vec<Known> = commits.iter().map(|c| c.known).collect();
            match next(&known) {
                Next::Probe(at) => self.run(&mut commits[at])?,
                Next::Done(answer) => return Ok(answer),
            }
        }
    }

    /// Say what the record of `commit` decided.
    fn show_record(&mut self, commit: &Commit) -> std::io::Result<()> {
        if let Some(result) = &commit.recorded {
            let step = commit.step(How::Recorded, result.clone());
            step.human(self.err)?;
            self.steps.push(step);
        }
        Ok(())
    }

    /// Run `commit`'s checks in the temporary worktree and learn whether it passes.
    fn run(&mut self, commit: &mut Commit) -> Result<(), super::Failure> {
        if self.interrupt.load(Ordering::SeqCst) {
            return Err(interrupted());
        }
        if let Some(exec) = self.how.exec {
            exec.unchanged(self.repo)?;
        }
        let worktree = match self.worktree.take() {
            Some(worktree) => {
                worktree.switch(self.repo, commit.info.id)?;
                worktree
            }
            None => self.repo.add_temp_worktree(commit.info.id)?,
        };
        let worktree = self.worktree.insert(worktree);
        let proved =
            commits::prove_in(self.repo, worktree, &commit.info, &self.how, self.interrupt)?;
        if self.interrupt.load(Ordering::SeqCst) {
            return Err(interrupted());
        }
        self.runs += 1;
        let result =
            ran(&proved).with_context(|| could_not::read_what_run_found(commit.info.id))?;
        match &result {
            StepResult::Proven => commit.known = Known::Good,
            StepResult::Failed { checks, .. } => {
                commit.known = Known::Bad;
                commit.failed.clone_from(checks);
            }
            StepResult::Untestable { reason } => {
                commit.known = Known::Untestable;
                commit.untestable = Some(reason.clone());
            }
        }
        let step = commit.step(How::Ran, result);
        step.human(self.err)?;
        self.steps.push(step);
        Ok(())
    }
}

fn interrupted() -> super::Failure {
    refusal::bisect_interrupted().into()
}

/// A run's result as a step of the search: a run that could not decide (exit 2) or found
/// nothing armed (exit 3) could not test the commit; a failure whose report cannot be read is
/// an error, never a guess.
fn ran(proved: &Proved) -> anyhow::Result<StepResult> {
    Ok(match proved.ran() {
        Ran::Proven { .. } => StepResult::Proven,
        Ran::Failed(runs) => StepResult::Failed {
            checks: runs.into_iter().map(failed_check).collect(),
            recorded_secs_ago: None,
        },
        Ran::Error(message) if proved.code() == exit::NOT_PROVEN => anyhow::bail!("{message}"),
        Ran::CannotTest(reason) | Ran::NotArmed(reason) | Ran::Error(reason) => {
            StepResult::Untestable { reason }
        }
    })
}

/// A check that kept a commit from being proven, as a step of the search records it; one whose
/// inputs changed as it ran, with the paths as its output.
fn failed_check(failed: Failed) -> FailedCheck {
    match failed {
        Failed::Run(run) => FailedCheck {
            name: run.name,
            exit: run.exit,
            exit_code: run.exit_code,
            output: proof::bounded_output(&run.tail),
        },
        Failed::InputsChanged { name, paths } => FailedCheck {
            name,
            exit: report::commits::inputs_changed(),
            exit_code: None,
            output: proof::bounded_output(&report::commits::changed_lines(&paths)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::commits::tests::{failed, report};
    use crate::outcome::Outcome;
    use crate::report::RunResult;

    #[test]
    fn a_failure_whose_report_names_no_failing_check_is_an_error_not_a_skip() {
        let proved = |code, result| Proved {
            cannot_test: None,
            run: Ok((code, report(Outcome::Disproven, result))),
        };
        assert!(
            ran(&proved(
                1,
                RunResult::AlreadyProven {
                    proof: crate::cli::commits::tests::proof(1, 0)
                }
            ))
            .is_err()
        );
        assert!(matches!(
            ran(&proved(1, failed("exit code 1", Some(1), &[]))),
            Ok(StepResult::Failed { .. })
        ));
        let error = Proved {
            cannot_test: None,
            run: Err(crate::cli::Failure::from(anyhow::anyhow!("boom"))),
        };
        assert!(matches!(ran(&error), Ok(StepResult::Untestable { .. })));
        assert!(matches!(
            ran(&proved(
                3,
                RunResult::NotArmed {
                    reason: "is missing",
                    hints: Vec::new()
                }
            )),
            Ok(StepResult::Untestable { reason }) if reason == "verify.sh is missing"
        ));
    }

    #[test]
    fn a_check_whose_inputs_changed_fails_the_step_with_the_paths_as_its_output() {
        let changed = RunResult::StateChanged {
            duration_ms: 5,
            after: String::new(),
            changed_paths: vec!["web/a".into(), "web/b".into()],
        };
        let proved = Proved {
            cannot_test: None,
            run: Ok((1, report(Outcome::NotProven, changed))),
        };
        let Ok(StepResult::Failed { checks, .. }) = ran(&proved) else {
            panic!("not a failed step")
        };
        assert_eq!(
            checks,
            [FailedCheck {
                name: crate::proof::VERIFY_CHECK.into(),
                exit: "changed its inputs while it ran".into(),
                exit_code: None,
                output: vec!["changed: web/a".into(), "changed: web/b".into()],
            }]
        );
    }
}
