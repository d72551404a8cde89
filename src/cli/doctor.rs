//! `git prove-it doctor`: the set-up checked, with how to fix what is not right.

use std::io::Write;

use anyhow::Context as _;

use super::init::MERGE_STRATEGY;
use super::{install, install_man};
use crate::context::Context;
use crate::exit;
use crate::git::Repo;
use crate::report::{self, DoctorReport, could_not};
use crate::setup::{demo, doctor};

/// Check the set-up and say how to fix what is not right.
///
/// One line per check, `ok`, `warn` or `FAIL`, with a `fix:` line when it is not ok: verify.sh
/// armed; the hooks of each agent host whose project configuration exists (and whether the host
/// likely trusts this folder, and any of its settings that turns its hooks off:
/// disableAllHooks, Gemini CLI's hooksConfig, Codex's hooks feature); every git-prove-it git
/// would run, in its order (git --exec-path, then PATH), warning where the first is not this one;
/// the pre-push hook; the git identity proofs
/// are signed off by; the proofs ref, how many of its notes name trees no commit holds, and its
/// merge strategy; proof records dropped by other
/// writers (stock `git notes add -f`, say) according to the ref's reflog; whether the push
/// remote (branch.NAME.pushRemote, remote.pushDefault, else the branch's remote or origin) has
/// the proofs (asked with git ls-remote, which may use the network; given up after 10 s), and
/// a warning when that remote looks like someone else's project;
/// whether `git help prove-it` finds the man page. It also reports the gate's policy in force
/// (verify.sh's timeout, the budget of blocks a turn, the ledger, signing, what an edit of
/// verify.sh gets) and fails while PROVE_IT_SKIP is set, since the gate then checks nothing.
/// With --run, verify.sh runs on the working state as the gate would run it, and doctor fails
/// when the gate would refuse it; nothing is recorded. Exit status: 0 nothing failed (warnings
/// allowed), 1 something is broken, 2 error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the checks as one JSON object on stdout.
    #[arg(long)]
    json: bool,

    /// Put proof records that other writers dropped (see the reflog check) back into
    /// refs/notes/prove-it, beside whatever the notes hold now; never a proof a person revoked
    /// ('git prove-it revoke').
    #[arg(long)]
    restore: bool,

    /// Run verify.sh on the working state as the gate would, and fail when the gate would
    /// refuse it. Nothing is recorded.
    #[arg(long)]
    run: bool,

    /// Drop from refs/notes/prove-it the notes of trees no commit here holds (not of any ref,
    /// any worktree's HEAD, nor their reflogs): working states proven and never committed, which sync and
    /// the pre-push hook never send. A state committed later is proven again by its next run.
    #[arg(long)]
    prune_unreachable: bool,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let repo = Repo::discover(&cwd)?;
    let mut restored = 0;
    if args.restore {
        for overwrite in repo.overwritten_notes(&crate::proof::merge_unrevoked)? {
            if repo.restore_records(&overwrite, &crate::proof::merge_unrevoked)? {
                restored += 1;
            }
        }
    }
    let pruned = if args.prune_unreachable {
        let unheld = crate::proof::unheld_notes(&repo)?;
        repo.drop_notes(
            crate::git::PROOFS_REF,
            &unheld,
            "prove-it: drop the notes of trees no commit holds",
        )?
    } else {
        0
    };
    let context = Context::resolve(repo, None);
    let repo = &context.repo;
    let ran = if args.run {
        Some(if repo.armed()?.is_armed() {
            let interrupt = crate::process::interrupt_flag()?;
            let settings = demo::DemoRun {
                timeout: context.policy.clone()?.timeout,
                max_blocks: context.gate.clone()?.max_blocks,
                interrupt: Some(&interrupt),
            };
            doctor::Ran::Checked(Box::new(demo::check(repo, &settings)?))
        } else if crate::proof::has_checks_file(repo)? {
            doctor::Ran::ChecksOnly
        } else {
            doctor::Ran::NotArmed
        })
    } else {
        None
    };
    let inputs = doctor::Inputs {
        repo,
        verify_timeout: context
            .policy
            .clone()
            .map(|p| (p.timeout.as_secs(), p.retries)),
        hooks_dir: repo.hooks_dir()?,
        pre_push: install::PRE_PUSH,
        merge_strategy: MERGE_STRATEGY,
        man_page: install_man::man_page_location(),
        cwd,
        gate: context.gate.clone(),
        signed_only: context.signed_only,
        ran,
        exec_path: repo.exec_path(),
        env: &|name| std::env::var(name).ok(),
    };
    let report = DoctorReport::new(&doctor::checks(&inputs)?, restored, pruned);
    if args.json {
        report::json(&report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(if report.ok {
        exit::OK
    } else {
        exit::NOT_PROVEN
    })
}
