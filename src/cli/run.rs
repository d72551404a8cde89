use crate::outcome::Outcome;
use std::io::Write;
use std::time::Duration;

use crate::context::Context;
use crate::context::policy::Policy;
use crate::exit;
use crate::git::{self, PROOFS_REF, Repo};
use crate::proof::lookup_proof;
use crate::proof::{self, Attempted};
use crate::report::{self, JSON_VERSION, Progress, ProofSummary, RunReport, RunResult, Unarmed};
use anyhow::Context as _;

/// Prove the working state: run verify.sh unless a proof for this exact state already exists,
/// and record a proof when it exits 0.
///
/// The working state is the tree `git add -A` would stage (tracked and untracked files that are
/// not ignored), computed without touching the index. With a commit, prove that commit instead:
/// it is checked out into a temporary worktree (removed afterwards, also on failure or
/// interrupt), verify.sh runs there without the caller's GIT_DIR and similar variables, and the
/// proof is recorded for the commit's tree; the working tree is not touched. Exit status: 0
/// proven, 1 verify.sh failed or changed the working state while it ran, 2 usage or repository
/// error, 3 verify.sh not armed.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Prove this commit rather than the working state.
    #[arg(value_name = "REV")]
    rev: Option<String>,

    /// Stream verify.sh's output to stderr while it runs.
    #[arg(short, long)]
    verbose: bool,

    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,

    /// Run verify.sh even if this state was proven before.
    #[arg(short, long)]
    force: bool,

    /// Kill verify.sh (and everything it started) after this many seconds
    /// [default: $PROVE_IT_TIMEOUT, else git config prove-it.timeout, else 300].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,

    /// Who asked for the proof (`host:` in the record): set when `run <rev>` and the pre-push
    /// hook run this command in a temporary worktree.
    #[arg(long, hide = true, default_value = "cli", value_parser = ["cli", "pre-push"])]
    host: String,
}

pub(crate) fn run(
    args: &Args,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let ctx = Context::resolve(Repo::discover(&cwd)?, args.timeout);
    let policy = ctx.policy.clone()?;
    if let Some(rev) = &args.rev {
        return run_rev(&ctx, &policy, args, rev, out);
    }
    let (code, report) = prove(&ctx, &policy, args, err)?;
    print(&report, args.json, out)?;
    Ok(code)
}

fn print(report: &RunReport, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
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
    tree: gix::ObjectId,
    verify: Option<(gix::ObjectId, u32)>,
) -> Result<Option<RunReport>, git::Error> {
    let found = lookup_proof(&ctx.repo, tree, verify)?;
    Ok(found.best(ctx.signed_only).map(|record| RunReport {
        version: JSON_VERSION,
        outcome: record.outcome,
        tree: Some(tree.to_string()),
        result: RunResult::AlreadyProven {
            proof: ProofSummary::from(record),
        },
    }))
}

fn prove(
    ctx: &Context,
    policy: &Policy,
    args: &Args,
    err: &mut dyn Write,
) -> Result<(u8, RunReport), super::Failure> {
    let repo = &ctx.repo;
    let armed = repo.armed()?;
    if !armed.is_armed() {
        let report = RunReport {
            version: JSON_VERSION,
            outcome: Outcome::InsufficientEvidence,
            tree: None,
            result: RunResult::NotArmed {
                reason: armed.reason(),
                hints: unarmed(&armed).hints(),
            },
        };
        return Ok((exit::NOT_ARMED, report));
    }

    let before = repo.state_tree(false).map_err(content_hint)?;
    if before.verify.is_none() {
        // A proof names the verify.sh it ran, so one that is not part of the state cannot prove it.
        return Err(super::Failure::from(anyhow::anyhow!(
            "verify.sh is not part of the working state, so no proof could name it"
        ))
        .hint("verify.sh is ignored: remove it from .gitignore or .git/info/exclude"));
    }
    // Before "already proven": a proof of this tree never tested the submodule's changes.
    if !before.dirty_submodules().is_empty() {
        return Err(content_hint(git::Error::DirtySubmodules {
            paths: before.dirty_submodules().to_vec(),
        }));
    }
    let tree = Some(before.id.to_string());
    if !args.force
        && let Some(report) = already_proven(ctx, before.id, before.verify)?
    {
        return Ok((exit::OK, report));
    }

    let interrupt = crate::process::interrupt_flag()?;
    let mut progress = Progress::new(args.verbose);
    let attempted = proof::prove(
        repo,
        &before,
        proof::ProveOptions {
            host: &args.host,
            session: None,
            anchor: None,
            verify_diff: None,
            timeout: policy.timeout,
            echo: args
                .verbose
                .then(|| Box::new(std::io::stderr()) as Box<dyn Write + Send>),
            interrupt: Some(&interrupt),
            log: None,
            clock: ctx.clock,
        },
        &mut |elapsed| progress.tick(elapsed),
    );
    let attempted = match attempted {
        Ok(attempted) => attempted,
        Err(proof::Error::Git(error)) => return Err(content_hint(error)),
        Err(proof::Error::Sign(error)) => {
            let hint = error.hint();
            return Err(super::Failure::from(proof::Error::Sign(error)).hint(hint));
        }
        Err(error @ proof::Error::Verify(_)) => {
            return Err(super::Failure::from(error)
                .hint("verify.sh must be executable and start with a line such as #!/bin/sh"));
        }
    };
    let duration_ms = match &attempted {
        Attempted::Proven(record) => record.duration_ms,
        Attempted::Failed { duration_ms, .. } | Attempted::StateChanged { duration_ms, .. } => {
            *duration_ms
        }
    };
    progress.finish(Duration::from_millis(duration_ms), err);

    let report = match attempted {
        Attempted::Failed {
            exit,
            exit_code,
            duration_ms,
            output_bytes,
            tail,
            log,
        } => RunReport {
            version: JSON_VERSION,
            outcome: Outcome::Disproven,
            tree,
            result: RunResult::Failed {
                exit,
                exit_code,
                duration_ms,
                output_bytes,
                tail,
                log: Some(log.display().to_string()),
            },
        },
        Attempted::StateChanged {
            duration_ms,
            after,
            changed_paths,
        } => RunReport {
            version: JSON_VERSION,
            outcome: Outcome::Disproven,
            tree,
            result: RunResult::StateChanged {
                duration_ms,
                after: after.to_string(),
                changed_paths,
            },
        },
        Attempted::Proven(record) => {
            let report = RunReport {
                version: JSON_VERSION,
                outcome: record.outcome,
                tree,
                result: RunResult::Proven {
                    proof: ProofSummary::from(&record),
                    proofs_ref: PROOFS_REF,
                },
            };
            return Ok((exit::OK, report));
        }
    };
    Ok((exit::NOT_PROVEN, report))
}

/// Which fix an unarmed verify.sh needs (`status` says the same).
pub(super) fn unarmed(armed: &git::Armed) -> Unarmed {
    match armed {
        git::Armed::Missing => Unarmed::Missing,
        git::Armed::NotExecutable => Unarmed::NotExecutable,
        git::Armed::Yes
        | git::Armed::NotAFile
        | git::Armed::LinkLeadsOutside
        | git::Armed::DanglingLink => Unarmed::NotAFile,
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
        failure.hint(
            "verify.sh must be a file of the working state whose bytes git records as they are: \
             drop its filter, eol or ident attribute, or its skip-worktree or assume-unchanged flag",
        )
    } else if submodules {
        let [commit, restore] = super::status::DIRTY_SUBMODULE_HINTS;
        failure.hint(commit).hint(restore)
    } else if locked {
        failure.hint("if no git command is running, remove the lock file and run again")
    } else if content {
        failure.hint("fix or remove the path named above; git add -A would fail on it too")
    } else {
        failure
    }
}

/// Why verify.sh cannot prove a commit whose tree does not hold it.
const NOT_IN_COMMIT: &str = "does not exist at the root of that commit's tree";

/// `run <rev>`: report a commit that is already proven or not armed, else prove it.
fn run_rev(
    ctx: &Context,
    policy: &Policy,
    args: &Args,
    rev: &str,
    out: &mut dyn Write,
) -> Result<u8, super::Failure> {
    let repo = &ctx.repo;
    let info = commit_of(repo, rev)?;
    let tree = Some(info.tree.to_string());
    let early = if info.verify.is_none() {
        Some((
            exit::NOT_ARMED,
            RunReport {
                version: JSON_VERSION,
                outcome: Outcome::InsufficientEvidence,
                tree,
                result: RunResult::NotArmed {
                    reason: NOT_IN_COMMIT,
                    hints: Unarmed::NotInCommit.hints(),
                },
            },
        ))
    } else if args.force {
        None
    } else {
        already_proven(ctx, info.tree, info.verify)?.map(|report| (exit::OK, report))
    };
    if let Some((code, report)) = early {
        print(&report, args.json, out)?;
        return Ok(code);
    }
    if !args.json {
        report::commit_heading(&info.id.to_string(), &info.subject, out)?;
    }
    out.flush()?;
    prove_commit(
        repo,
        &info,
        &CommitRun {
            host: &args.host,
            timeout: policy.timeout,
            verbose: args.verbose,
            json: args.json,
            force: args.force,
            report_to_stderr: false,
        },
    )
}

/// The commit `rev` names, refusing ranges: a proof is for one tree.
pub(crate) fn commit_of(repo: &Repo, rev: &str) -> Result<git::CommitInfo, super::Failure> {
    let selection = repo.select(&[rev.to_string()])?;
    match (selection.tips.as_slice(), selection.hidden.is_empty()) {
        ([id], true) => Ok(repo.commit_info(*id)?),
        _ => Err(
            super::Failure::from(anyhow::anyhow!("{rev:?} is not a single commit"))
                .hint("run proves one commit; to see which commits of a range are proven, use 'git prove-it check --all <range>'"),
        ),
    }
}

/// How to prove a commit in a temporary worktree.
pub(crate) struct CommitRun<'a> {
    pub host: &'a str,
    pub timeout: Duration,
    pub verbose: bool,
    pub json: bool,
    pub force: bool,
    /// Print the run's report on stderr rather than stdout (a hook's stdout is not for people).
    pub report_to_stderr: bool,
}

/// Prove `commit` in a temporary worktree and return `run`'s exit code for it.
///
/// The proving is done by this same program (`git prove-it run`) started inside the worktree
/// with the caller's repository-locating variables (`GIT_DIR`, `GIT_WORK_TREE`, ...) removed,
/// so that neither it nor verify.sh acts on the caller's repository by mistake: git sets those
/// variables for hooks. The worktree is removed afterwards, whatever happened, and on Ctrl-C,
/// SIGTERM or SIGHUP once the run has stopped.
pub(crate) fn prove_commit(
    repo: &Repo,
    commit: &git::CommitInfo,
    how: &CommitRun<'_>,
) -> Result<u8, super::Failure> {
    let interrupt = crate::process::interrupt_flag()?;
    let worktree = repo.add_temp_worktree(commit.id)?;
    let checked_out = repo
        .open_linked_worktree(worktree.path())
        .and_then(|wt| wt.state_tree(false));
    match checked_out {
        Ok(state) if state.id == commit.tree => {}
        Ok(state) => {
            worktree.remove()?;
            return Err(super::Failure::from(anyhow::anyhow!(
                "checking out {} gives the state tree {}, not the commit's tree {}, so no proof made there would prove the commit",
                commit.id,
                state.id,
                commit.tree
            ))
            .hint("clean or smudge filters (.gitattributes, git-lfs) or ignored files committed anyway change what a checkout holds")
            .hint("prove the working state instead: check the commit out and run 'git prove-it run'"));
        }
        Err(error) => {
            worktree.remove()?;
            return Err(error.into());
        }
    }
    if interrupt.load(std::sync::atomic::Ordering::SeqCst) {
        worktree.remove()?;
        return Err(anyhow::anyhow!("interrupted before verify.sh started").into());
    }
    let exe = std::env::current_exe().context("could not find the git-prove-it executable")?;
    let mut cmd = crate::process::Request::new(exe)
        .arg("run")
        .args(["--host", how.host])
        .args(["--timeout", &how.timeout.as_secs().to_string()])
        .current_dir(worktree.path())
        .stdout(if how.report_to_stderr {
            crate::process::Stream::ToStderr
        } else {
            crate::process::Stream::Inherit
        })
        .stderr(crate::process::Stream::Inherit)
        // When we are asked to stop, the request is passed on (SIGTERM) and the child waited
        // for, so the worktree is removed only once nothing runs in it.
        .forward_interrupt(&interrupt);
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
    let status = cmd
        .run()
        .map(|finished| finished.status)
        .map_err(crate::process::Error::into_source);
    worktree.remove()?;
    let status = status.context("could not run git-prove-it in the temporary worktree")?;
    Ok(status
        .code()
        .and_then(|code| u8::try_from(code).ok())
        .unwrap_or(exit::ERROR))
}
