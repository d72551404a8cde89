//! Proving commits rather than the working state: each in a temporary linked worktree, by this
//! same program (`git prove-it run`) started there. `run <rev>`, `run <range>`, `bisect` and
//! the pre-push hook prove commits through here, so a commit is proven one way whoever asks.
//!
//! gix cannot add linked worktrees; `git::TempWorktree` runs `git worktree` for that.

use anyhow::Context as _;

use crate::exit;
use crate::git::{self, Repo, TempWorktree};

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
