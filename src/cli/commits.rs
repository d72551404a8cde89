//! Proving commits rather than the working state: each in a temporary linked worktree, by this
//! same program (`git prove-it run`) started there. `run <rev>`, `run <range>`, `bisect` and
//! the pre-push hook prove commits through here, so a commit is proven one way whoever asks.
//!
//! gix cannot add linked worktrees; `git::TempWorktree` runs `git worktree` for that.

use anyhow::Context as _;

use crate::exit;
use crate::git::{self, Repo, TempWorktree};
use crate::outcome::Outcome;

/// Where the run in the worktree writes its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    /// Our stdout.
    Inherit,
    /// Our stderr (a hook's stdout is not for people).
    ToStderr,
    /// Kept, for the caller to read (with `json`, one JSON object).
    Capture,
}

/// How to prove a commit in a temporary worktree.
#[derive(Clone)]
pub(crate) struct CommitRun<'a> {
    pub host: &'a str,
    pub timeout: std::time::Duration,
    pub verbose: bool,
    pub json: bool,
    pub force: bool,
    pub output: Output,
    /// How many checks the run may run at once (`PROVE_IT_JOBS`), when not the policy's: a
    /// range proves several commits at once and shares the cores between them.
    pub jobs: Option<usize>,
    /// Where the run keeps its output (`run --log`), when not in the state directory's
    /// last-run.log: a range gives each commit its own.
    pub log: Option<std::path::PathBuf>,
}

/// The one commit `rev` names, or an error with `hint` for a range: a proof, a step of a
/// search, is for one tree.
pub(crate) fn one_commit(
    repo: &Repo,
    rev: &str,
    hint: impl Into<String>,
) -> Result<git::CommitInfo, super::Failure> {
    let selection = repo.select(&[rev.to_string()])?;
    match (selection.tips.as_slice(), selection.hidden.is_empty()) {
        ([id], true) => Ok(repo.commit_info(*id)?),
        _ => {
            Err(super::Failure::from(anyhow::anyhow!("{rev:?} is not a single commit")).hint(hint))
        }
    }
}

/// A commit proven in a worktree: `run`'s exit code, and its report when it was captured.
pub(crate) struct Proved {
    pub code: u8,
    pub stdout: Vec<u8>,
}

/// Prove `commit` in a new temporary worktree and return `run`'s exit code for it. The
/// worktree is removed afterwards, whatever happened, and on Ctrl-C, SIGTERM or SIGHUP once
/// the run has stopped.
pub(crate) fn prove_commit(
    repo: &Repo,
    commit: &git::CommitInfo,
    how: &CommitRun<'_>,
) -> Result<u8, super::Failure> {
    let interrupt = crate::process::interrupt_flag()?;
    let worktree = repo.add_temp_worktree(commit.id)?;
    let proved = prove_in(repo, &worktree, commit, how, &interrupt);
    worktree.remove()?;
    Ok(proved?.code)
}

/// Prove `commit`, checked out in `worktree`, there.
///
/// The proving is done by this same program (`git prove-it run`) started inside the worktree
/// with the caller's repository-locating variables (`GIT_DIR`, `GIT_WORK_TREE`, ...) removed,
/// so that neither it nor verify.sh acts on the caller's repository by mistake: git sets those
/// variables for hooks. When `interrupt` is raised, the request is passed on (SIGTERM) and the
/// run waited for, so that the worktree is removed only once nothing runs in it.
pub(crate) fn prove_in(
    repo: &Repo,
    worktree: &TempWorktree,
    commit: &git::CommitInfo,
    how: &CommitRun<'_>,
    interrupt: &std::sync::atomic::AtomicBool,
) -> Result<Proved, super::Failure> {
    let state = repo
        .open_linked_worktree(worktree.path())
        .and_then(|wt| wt.state_tree(false))?;
    if state.id != commit.tree {
        return Err(super::Failure::from(anyhow::anyhow!(
            "checking out {} gives the state tree {}, not the commit's tree {}, so no proof made there would prove the commit",
            commit.id,
            state.id,
            commit.tree
        ))
        .hint("clean or smudge filters (.gitattributes, git-lfs) or ignored files committed anyway change what a checkout holds")
        .hint("prove the working state instead: check the commit out and run 'git prove-it run'"));
    }
    if interrupt.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(anyhow::anyhow!("interrupted before verify.sh started").into());
    }
    let exe = std::env::current_exe().context("could not find the git-prove-it executable")?;
    let mut cmd = crate::process::Request::new(exe)
        .arg("run")
        .args(["--host", how.host])
        .args(["--timeout", &how.timeout.as_secs().to_string()])
        .current_dir(worktree.path())
        .stdout(match how.output {
            Output::Inherit => crate::process::Stream::Inherit,
            Output::ToStderr => crate::process::Stream::ToStderr,
            Output::Capture => crate::process::Stream::ALL,
        })
        .stderr(crate::process::Stream::Inherit)
        .forward_interrupt(interrupt);
    for (flag, on) in [
        ("--verbose", how.verbose),
        ("--json", how.json),
        ("--force", how.force),
    ] {
        if on {
            cmd = cmd.arg(flag);
        }
    }
    for name in git::LOCAL_ENV {
        cmd = cmd.env_remove(name);
    }
    if let Some(log) = &how.log {
        cmd = cmd.arg("--log").arg(log);
    }
    if let Some(jobs) = how.jobs {
        cmd = cmd.env(crate::context::policy::JOBS_ENV, jobs.to_string());
    }
    let finished = cmd
        .run()
        .map_err(crate::process::Error::into_source)
        .context("could not run git-prove-it in the temporary worktree")?;
    Ok(Proved {
        code: finished
            .status
            .code()
            .and_then(|code| u8::try_from(code).ok())
            .unwrap_or(exit::ERROR),
        stdout: finished.stdout,
    })
}

/// What `run --json` printed in a worktree, as the commands that prove commits read it: the
/// run's report (for verify.sh, or for each check), or a failure's message.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Report {
    name: Option<String>,
    outcome: Option<String>,
    result: Option<String>,
    exit: Option<String>,
    exit_code: Option<i32>,
    duration_ms: u64,
    tail: Vec<String>,
    log: Option<String>,
    changed_paths: Vec<String>,
    proof: Option<ProofReport>,
    checks: Vec<Report>,
    /// A run that found nothing armed: why.
    reason: Option<String>,
    /// A run that ended in an error: what it said.
    message: Option<String>,
    /// A pass whose proof a failing run of the same script contests.
    contested: bool,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct ProofReport {
    duration_ms: u64,
    flaky: u32,
}

/// One check (or verify.sh) that failed on a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FailedRun {
    /// `verify.sh` for the root verify.sh, else the check's name.
    pub name: String,
    /// "exit code 1", "timed out after 300 s", or "changed its inputs while it ran".
    pub exit: String,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// Its last lines (for inputs that changed, `changed: <path>` lines).
    pub tail: Vec<String>,
    pub log: Option<String>,
    /// Passed, but its inputs changed while it ran: nothing was recorded.
    pub state_changed: bool,
}

/// What became of a commit proven in a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ran {
    /// Proven: `ran` when something ran (a proof made now), with the longest run's time and
    /// the most failures before a pass (`flaky`).
    Proven {
        outcome: Outcome,
        ran: bool,
        duration_ms: u64,
        flaky: u32,
        /// It passed, and a failing run of the same script on the same key contests the proof
        /// it made: a pass to `bisect`, not proven to a range.
        contested: bool,
    },
    /// Each check (or verify.sh) that failed, or changed its inputs while it ran.
    Failed(Vec<FailedRun>),
    /// Nothing is armed at the commit: why.
    NotArmed(String),
    /// The run ended in an error (exit 2): what it said.
    Error(String),
}

impl Proved {
    /// The run's result, read from its exit code and its `run --json` report.
    pub(crate) fn ran(&self) -> Ran {
        let report = serde_json::from_slice::<Report>(&self.stdout);
        let outcome = |report: &Report| {
            report
                .outcome
                .as_deref()
                .and_then(Outcome::parse)
                .unwrap_or(Outcome::Proven)
        };
        match (self.code, report) {
            (exit::NOT_ARMED, report) => {
                Ran::NotArmed(report.ok().and_then(|report| report.reason).map_or_else(
                    || "verify.sh is not armed".to_string(),
                    |r| format!("verify.sh {r}"),
                ))
            }
            (exit::OK, Ok(report)) => {
                let proofs: Vec<&ProofReport> = match report.result.as_deref() {
                    Some("checks") => report
                        .checks
                        .iter()
                        .filter(|c| c.result.as_deref() == Some("proven"))
                        .filter_map(|c| c.proof.as_ref())
                        .collect(),
                    Some("proven") => report.proof.iter().collect(),
                    _ => Vec::new(),
                };
                Ran::Proven {
                    outcome: outcome(&report),
                    ran: !proofs.is_empty(),
                    duration_ms: proofs.iter().map(|p| p.duration_ms).max().unwrap_or(0),
                    flaky: proofs.iter().map(|p| p.flaky).max().unwrap_or(0),
                    contested: false,
                }
            }
            (exit::NOT_PROVEN, Ok(report)) => {
                let (failed, contested): (Vec<FailedRun>, Vec<&Report>) =
                    match report.result.as_deref() {
                        Some("checks") => (
                            report.checks.iter().filter_map(failed_run).collect(),
                            report.checks.iter().filter(|c| c.contested).collect(),
                        ),
                        _ => (
                            failed_run(&report).into_iter().collect(),
                            [&report].into_iter().filter(|r| r.contested).collect(),
                        ),
                    };
                if failed.is_empty() && !contested.is_empty() {
                    let proofs: Vec<&ProofReport> =
                        contested.iter().filter_map(|c| c.proof.as_ref()).collect();
                    return Ran::Proven {
                        outcome: Outcome::NotProven,
                        ran: true,
                        duration_ms: proofs.iter().map(|p| p.duration_ms).max().unwrap_or(0),
                        flaky: proofs.iter().map(|p| p.flaky).max().unwrap_or(0),
                        contested: true,
                    };
                }
                if failed.is_empty() {
                    Ran::Error("its run exited 1, but its report names no check that failed".into())
                } else {
                    Ran::Failed(failed)
                }
            }
            (exit::ERROR, report) => Ran::Error(
                report
                    .ok()
                    .and_then(|report| report.message)
                    .unwrap_or_else(|| "its run ended in an error".to_string()),
            ),
            (code, _) => Ran::Error(format!("git prove-it run exited with {code} and no report")),
        }
    }
}

/// `report` as a failed run, if it failed or changed its inputs.
fn failed_run(report: &Report) -> Option<FailedRun> {
    let name = report
        .name
        .clone()
        .unwrap_or_else(|| crate::proof::VERIFY_CHECK.to_string());
    match report.result.as_deref()? {
        "failed" => Some(FailedRun {
            name,
            exit: report.exit.clone().unwrap_or_else(|| "failed".to_string()),
            exit_code: report.exit_code,
            duration_ms: report.duration_ms,
            tail: report.tail.clone(),
            log: report.log.clone(),
            state_changed: false,
        }),
        "state_changed" => Some(FailedRun {
            name,
            exit: "changed its inputs while it ran".to_string(),
            exit_code: None,
            duration_ms: report.duration_ms,
            tail: report
                .changed_paths
                .iter()
                .map(|path| format!("changed: {path}"))
                .collect(),
            log: None,
            state_changed: true,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(code: u8, json: &str) -> Ran {
        Proved {
            code,
            stdout: json.as_bytes().to_vec(),
        }
        .ran()
    }

    /// Regression: a contested pass exits 1 with a `proven` result, which read as "exited 1,
    /// but its report names no check that failed" instead of the pass it was.
    #[test]
    fn a_contested_pass_reads_as_not_a_pass() {
        assert_eq!(
            ran(
                1,
                r#"{"outcome":"NOT_PROVEN","result":"proven","contested":true,"proof":{"duration_ms":40}}"#,
            ),
            Ran::Proven {
                outcome: Outcome::NotProven,
                ran: true,
                duration_ms: 40,
                flaky: 0,
                contested: true,
            }
        );
    }

    #[test]
    fn a_run_report_reads_as_the_result_it_says() {
        assert_eq!(
            ran(
                0,
                r#"{"outcome":"PROVEN","result":"proven","proof":{"duration_ms":40,"flaky":1}}"#
            ),
            Ran::Proven {
                outcome: Outcome::Proven,
                ran: true,
                duration_ms: 40,
                flaky: 1,
                contested: false,
            }
        );
        assert!(matches!(
            ran(
                0,
                r#"{"outcome":"PROVEN","result":"already_proven","proof":{}}"#
            ),
            Ran::Proven { ran: false, .. }
        ));
        let Ran::Failed(failed) = ran(
            1,
            r#"{"outcome":"DISPROVEN","result":"checks","checks":[
                {"name":"api","result":"already_proven"},
                {"name":"docs","result":"failed","exit":"exit code 3","exit_code":3,"tail":["x"]},
                {"name":"web","result":"state_changed","changed_paths":["web/a"]}]}"#,
        ) else {
            panic!("not a failure")
        };
        assert_eq!(failed.len(), 2);
        assert_eq!(
            (failed[0].name.as_str(), failed[0].exit_code),
            ("docs", Some(3))
        );
        assert!(failed[1].state_changed && failed[1].tail == ["changed: web/a"]);
        assert_eq!(
            ran(3, r#"{"result":"not_armed","reason":"does not exist"}"#),
            Ran::NotArmed("verify.sh does not exist".into())
        );
        assert_eq!(
            ran(2, r#"{"code":"error","message":"boom"}"#),
            Ran::Error("boom".into())
        );
        assert!(matches!(ran(1, "not json"), Ran::Error(_)));
    }
}
