use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use serde::Deserialize;

use super::commits::{self, CommitRun, Output};
use crate::context::Context;
use crate::exit;
use crate::git::{CommitInfo, ObjectId, Repo, Selection, TempWorktree};
use crate::proof::{self, CommitStatus, Standing};
use crate::report::{
    self, BisectCandidate, BisectReport, BisectStep, FailedCheck, FirstBad, How, JSON_VERSION,
    StepResult,
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
/// Each run checks the commit out into one temporary worktree, reused along the search and
/// removed at the end (also on an error, Ctrl-C or SIGTERM), and proves it there as
/// 'git prove-it run REV' does, recording its proof or its failure; the working tree and the
/// index are not touched.
///
/// A commit without verify.sh nor checks, whose checks file is in error or whose check's
/// script is missing cannot be tested: it is skipped, as by git bisect skip, and a neighbour is
/// run instead. When skipped commits hide which commit fails first, they are listed.
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

    /// Run the commits that have a failure on record again, rather than taking it as their
    /// result.
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
}

pub(crate) fn run(
    args: &Args,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let ctx = Context::resolve(Repo::discover(&cwd)?, args.timeout);
    let policy = ctx.policy.clone()?;
    let repo = &ctx.repo;
    let good = commit_of(repo, &args.good, "GOOD")?;
    let bad = commit_of(repo, &args.bad, "BAD")?;
    let line = first_parent_line(repo, &good, &bad, args)?;
    let statuses = proof::commit_standings(repo, &line)?;
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
            json: true,
            force: false,
            output: Output::Capture,
            jobs: None,
            log: None,
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
        worktree.remove()?;
    }
    let found = found?;
    let recorded = search
        .steps
        .iter()
        .filter(|s| s.how == How::Recorded)
        .count();
    let mut report = BisectReport {
        version: JSON_VERSION,
        first_bad: None,
        candidates: Vec::new(),
        between: commits.len(),
        runs: search.runs,
        recorded,
        steps: search.steps,
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
    if args.json {
        report::json(&report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(code)
}

/// The commit `rev` names (`which`: GOOD or BAD), refusing ranges.
fn commit_of(repo: &Repo, rev: &str, which: &str) -> Result<CommitInfo, super::Failure> {
    let selection = repo.select(&[rev.to_string()])?;
    match (selection.tips.as_slice(), selection.hidden.is_empty()) {
        ([id], true) => Ok(repo.commit_info(*id)?),
        _ => Err(
            super::Failure::from(anyhow::anyhow!("{rev:?} is not a single commit")).hint(format!(
                "name one commit as {which}: git prove-it bisect <good> <bad>"
            )),
        ),
    }
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
        return Err(super::Failure::from(anyhow::anyhow!(
            "{g} and {b} are the same commit, so there is nothing between them to search"
        ))
        .hint(
            "name an older commit that passes as GOOD: git log --first-parent --oneline lists them",
        ));
    }
    // `good...bad` excludes their merge base: `good` itself exactly when it is an ancestor.
    let merge = repo.select(&[format!("{}...{}", good.id, bad.id)])?;
    if merge.hidden != [good.id] {
        let refused = super::Failure::from(anyhow::anyhow!(
            "{g} is not an ancestor of {b}, so no line of history leads from one to the other"
        ));
        return Err(if merge.hidden == [bad.id] {
            refused.hint(format!(
                "{b} is an ancestor of {g}: name the older commit, which passes, first: git prove-it bisect {b} {g}"
            ))
        } else {
            refused.hint(format!(
                "a commit both share is a GOOD to start from if it passes: git merge-base {g} {b}"
            ))
        });
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

/// Why nothing could prove `status`'s commit, if nothing could.
fn untestable(status: &CommitStatus) -> Option<String> {
    match &status.standing {
        Standing::NotArmed => return Some("no verify.sh nor checks in its tree".to_string()),
        Standing::ChecksError(error) => {
            return Some(format!("its {} is in error: {error}", proof::CHECKS_FILE));
        }
        _ => {}
    }
    status
        .checks
        .iter()
        .flatten()
        .find_map(|check| match check.standing {
            Standing::ScriptMissing(why) => Some(format!(
                "check {}: its script {} {why}",
                check.name, check.run
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
        let refused = |what: String| {
            super::Failure::from(anyhow::anyhow!("{what}"))
                .hint("name a commit whose checks fail as BAD: git prove-it log shows which commits are proven")
        };
        match commits[last].known {
            Known::Good => {
                self.show_record(&commits[last])?;
                return Err(refused(format!(
                    "{b} is proven: its checks pass, so there is no failing commit to look for"
                )));
            }
            Known::Untestable => {
                let why = commits[last].untestable.clone().unwrap_or_default();
                return Err(refused(format!("{b} cannot be tested: {why}")));
            }
            Known::Bad => self.show_record(&commits[last])?,
            Known::Unknown => {
                self.run(&mut commits[last])?;
                match commits[last].known {
                    Known::Good => {
                        return Err(refused(format!(
                            "{b} passes: its checks were run and it is proven now, so there is no failing commit to look for"
                        )));
                    }
                    Known::Untestable => {
                        let why = commits[last].untestable.clone().unwrap_or_default();
                        return Err(refused(format!("{b} cannot be tested: {why}")));
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
        let worktree = match self.worktree.take() {
            Some(worktree) => {
                worktree.switch(commit.info.id)?;
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
        let result = ran(proved.code, &proved.stdout).with_context(|| {
            format!(
                "could not read what 'git prove-it run' found for {}",
                commit.info.id
            )
        })?;
        match &result {
            StepResult::Proven => commit.known = Known::Good,
            StepResult::Failed { checks, .. } => {
                commit.known = Known::Bad;
                commit.failed = checks.clone();
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
    super::Failure::from(anyhow::anyhow!(
        "interrupted: the search stopped before it found the first failing commit"
    ))
    .hint("what ran is recorded; run the same bisect again to go on from there")
}

/// What `run --json` prints in the worktree, as far as bisect reads it: the run's report (for
/// verify.sh, or for each check), or a failure's message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Ran {
    name: Option<String>,
    result: Option<String>,
    exit: Option<String>,
    exit_code: Option<i32>,
    tail: Vec<String>,
    changed_paths: Vec<String>,
    checks: Vec<Ran>,
    /// A run that found nothing armed: why.
    reason: Option<String>,
    /// A run that ended in an error: what it said.
    message: Option<String>,
}

impl Ran {
    /// This report as a failed check, if it failed.
    fn failed(&self) -> Option<FailedCheck> {
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| proof::VERIFY_CHECK.to_string());
        match self.result.as_deref()? {
            "failed" => Some(FailedCheck {
                name,
                exit: self.exit.clone().unwrap_or_else(|| "failed".to_string()),
                exit_code: self.exit_code,
                output: proof::bounded_output(&self.tail),
            }),
            "state_changed" => Some(FailedCheck {
                name,
                exit: "changed its inputs while it ran".to_string(),
                exit_code: None,
                output: self
                    .changed_paths
                    .iter()
                    .map(|path| format!("changed: {path}"))
                    .collect(),
            }),
            _ => None,
        }
    }
}

/// A run's result from its exit code and `run --json`'s report: a run that could not decide
/// (exit 2) or found nothing armed (exit 3) could not test the commit.
fn ran(code: u8, stdout: &[u8]) -> anyhow::Result<StepResult> {
    let read = serde_json::from_slice::<Ran>(stdout);
    match code {
        exit::OK => Ok(StepResult::Proven),
        exit::NOT_PROVEN => {
            let report = read.context("its report is not JSON")?;
            let checks: Vec<FailedCheck> = match report.result.as_deref() {
                Some("checks") => report.checks.iter().filter_map(Ran::failed).collect(),
                _ => report.failed().into_iter().collect(),
            };
            if checks.is_empty() {
                anyhow::bail!("it exited 1, but its report names no check that failed");
            }
            Ok(StepResult::Failed {
                checks,
                recorded_secs_ago: None,
            })
        }
        exit::NOT_ARMED => Ok(StepResult::Untestable {
            reason: format!(
                "verify.sh {}",
                read.ok()
                    .and_then(|report| report.reason)
                    .as_deref()
                    .unwrap_or("is not armed")
            ),
        }),
        exit::ERROR => Ok(StepResult::Untestable {
            reason: read
                .ok()
                .and_then(|report| report.message)
                .unwrap_or_else(|| "its run ended in an error".to_string()),
        }),
        other => anyhow::bail!("it exited {other}"),
    }
}

/// What is known of one commit of the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    Unknown,
    Good,
    Bad,
    Untestable,
}

/// What the search does next.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// Run this commit.
    Probe(usize),
    /// Nothing: it has its answer.
    Done(Answer),
}

/// Where the search ended.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// At the first failing commit: the one before it passes (or is GOOD).
    Found(usize),
    /// At one of these: the failing commit last, the untestable ones before it first.
    Ambiguous(Vec<usize>),
}

/// The search's bounds in `known` (oldest first): the first failing commit, and the last
/// passing one before it (`None`: GOOD). There must be a failing one.
fn bounds(known: &[Known]) -> (Option<usize>, usize) {
    let hi = known
        .iter()
        .position(|k| *k == Known::Bad)
        .expect("BAD is known to fail before the search");
    let lo = known[..hi].iter().rposition(|k| *k == Known::Good);
    (lo, hi)
}

/// The next step of the binary search over `known`: the commit left to run nearest the middle
/// of those that may be the first failing one, or the answer when none is left.
fn next(known: &[Known]) -> Next {
    let (lo, hi) = bounds(known);
    let start = lo.map_or(0, |lo| lo + 1);
    // Probing the middle of start..=hi leaves at most half of them, whichever way it goes.
    let middle = (start + hi) / 2;
    let probe = (start..hi)
        .filter(|&at| known[at] == Known::Unknown)
        .min_by_key(|&at| (at.abs_diff(middle), at));
    match probe {
        Some(at) => Next::Probe(at),
        None if start == hi => Next::Done(Answer::Found(hi)),
        None => Next::Done(Answer::Ambiguous((start..=hi).collect())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Known::{Bad, Good, Unknown, Untestable};

    /// `n` unknown commits and BAD, failing.
    fn line(n: usize) -> Vec<Known> {
        let mut known = vec![Unknown; n];
        known.push(Bad);
        known
    }

    #[test]
    fn the_first_probe_is_the_middle() {
        assert_eq!(next(&line(198)), Next::Probe(99));
        assert_eq!(next(&line(1)), Next::Probe(0));
    }

    #[test]
    fn a_failing_commit_after_a_passing_one_is_the_answer() {
        assert_eq!(next(&[Bad]), Next::Done(Answer::Found(0)));
        assert_eq!(next(&[Good, Bad]), Next::Done(Answer::Found(1)));
        assert_eq!(
            next(&[Good, Good, Bad, Unknown, Bad]),
            Next::Done(Answer::Found(2))
        );
    }

    #[test]
    fn records_narrow_the_search_before_anything_runs() {
        let mut known = line(20);
        known[10] = Good;
        known[15] = Bad;
        // A pass on record after the first failure on record says nothing of the first one.
        known[17] = Good;
        assert_eq!(bounds(&known), (Some(10), 15));
        assert_eq!(next(&known), Next::Probe(13));
    }

    #[test]
    fn an_untestable_middle_is_skipped_for_a_neighbour() {
        let mut known = line(9);
        known[4] = Untestable;
        assert_eq!(next(&known), Next::Probe(3));
        known[3] = Untestable;
        assert_eq!(next(&known), Next::Probe(5));
    }

    #[test]
    fn untestable_commits_before_the_failing_one_leave_candidates() {
        assert_eq!(
            next(&[Good, Untestable, Untestable, Bad]),
            Next::Done(Answer::Ambiguous(vec![1, 2, 3]))
        );
        assert_eq!(
            next(&[Untestable, Bad]),
            Next::Done(Answer::Ambiguous(vec![0, 1]))
        );
        // Untestable commits before the last pass do not matter.
        assert_eq!(next(&[Untestable, Good, Bad]), Next::Done(Answer::Found(2)));
    }

    /// Run the search on a line whose commits fail from `first` on.
    fn probes(n: usize, first: usize) -> (usize, usize) {
        let mut known = line(n);
        let mut count = 0;
        loop {
            match next(&known) {
                Next::Probe(at) => {
                    count += 1;
                    known[at] = if at >= first { Bad } else { Good };
                }
                Next::Done(Answer::Found(at)) => return (at, count),
                Next::Done(Answer::Ambiguous(candidates)) => panic!("{candidates:?}"),
            }
        }
    }

    #[test]
    fn every_first_failure_is_found_in_at_most_log2_probes() {
        for n in 0..70_usize {
            let bound = (n + 1).next_power_of_two().trailing_zeros() as usize;
            for first in 0..=n {
                let (found, count) = probes(n, first);
                assert_eq!(found, first, "n {n}");
                assert!(count <= bound, "n {n} first {first}: {count} > {bound}");
            }
        }
        assert_eq!(probes(198, 135), (135, 8));
    }

    #[test]
    fn a_run_report_reads_as_the_result_it_says() {
        let failed = br#"{"version":1,"outcome":"DISPROVEN","tree":"t","result":"failed","exit":"exit code 1","exit_code":1,"duration_ms":3,"output_bytes":5,"tail":["a","b"],"log":null,"attempts":1,"failure_recorded":null}"#;
        assert_eq!(
            ran(1, failed).unwrap(),
            StepResult::Failed {
                checks: vec![FailedCheck {
                    name: "verify.sh".into(),
                    exit: "exit code 1".into(),
                    exit_code: Some(1),
                    output: vec!["a".into(), "b".into()],
                }],
                recorded_secs_ago: None,
            }
        );
        let checks = br#"{"result":"checks","checks":[{"name":"api","result":"already_proven"},{"name":"docs","result":"failed","exit":"exit code 2","exit_code":2,"tail":[]}]}"#;
        let StepResult::Failed { checks, .. } = ran(1, checks).unwrap() else {
            panic!("not failed");
        };
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].name, "docs");
        assert_eq!(
            ran(0, br#"{"result":"proven"}"#).unwrap(),
            StepResult::Proven
        );
        assert!(matches!(
            ran(3, br#"{"result":"not_armed","reason":"is missing"}"#).unwrap(),
            StepResult::Untestable { reason } if reason == "verify.sh is missing"
        ));
        assert!(matches!(
            ran(2, br#"{"code":"error","message":"check x: its script y is missing"}"#).unwrap(),
            StepResult::Untestable { reason } if reason.contains("is missing")
        ));
        assert!(ran(1, br#"{"result":"proven"}"#).is_err());
        assert!(ran(1, b"not json").is_err());
        assert!(matches!(ran(2, b""), Ok(StepResult::Untestable { .. })));
    }
}
