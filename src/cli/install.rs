//! `git prove-it install`: git-prove-it wired into a program that calls it (git's pre-push hook).

use std::io::Write;

use anyhow::Context as _;

use crate::exit;
use crate::git::{self, Repo};
use crate::report::{InstallReport, could_not, hint};

/// The pre-push hook we install: it hands over to 'git prove-it hook git pre-push'.
pub(super) const PRE_PUSH: &str = include_str!("../../hooks/pre-push");

/// git's name for the hook it runs before a push.
pub(super) const PRE_PUSH_HOOK: &str = "pre-push";

/// Wire git-prove-it into a program that calls it.
///
/// pre-push: git's pre-push hook, written into core.hooksPath when set, else the repository's
/// hooks directory. It refuses pushes of unproven commits (policy: git config prove-it.prePush =
/// tip, all, prove or off) and sends the proofs along with pushes that go through. An existing
/// hook of another origin is never overwritten. Exit status: 0 installed (or already there), 2
/// error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What to install.
    #[arg(value_enum)]
    target: Target,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Target {
    /// git's pre-push hook.
    PrePush,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let repo = Repo::discover(&cwd)?;
    match args.target {
        Target::PrePush => {
            let hook = install_pre_push(&repo)?;
            InstallReport::pre_push(hook.path, hook.already).human(out)?;
        }
    }
    Ok(exit::OK)
}

/// Install our pre-push hook where git runs it, unless it is there already. A different hook
/// in its place is an error, never overwritten.
pub(super) fn install_pre_push(repo: &Repo) -> Result<git::Hook, super::Failure> {
    repo.install_hook(PRE_PUSH_HOOK, PRE_PUSH)
        .map_err(|error| match error {
            git::Error::HookNotOurs { .. } => {
                super::Failure::from(error).hint(hint::hook_not_ours())
            }
            error => error.into(),
        })
}
