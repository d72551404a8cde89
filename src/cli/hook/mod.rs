//! `git prove-it hook <host> ...`: the entry points hosts call. One file per host adapter's
//! command line; the adapters themselves (JSON in, verdict out) live in `crate::hosts`.
//!
//! A hook's stdout and exit code belong to its host's protocol (ADAPTERS.md); nothing here prints
//! anything else on stdout.

mod agent;
mod pre_push;

use std::io::Write;

/// Entry points for hosts: agent hosts' stop hooks and git's own hooks. Not for people to run;
/// the installers write these command lines into the hosts' configuration.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    host: Host,
}

#[derive(Debug, clap::Subcommand)]
enum Host {
    /// The agent hosts' hooks, one subcommand per host (`hosts::Host::all`).
    #[command(flatten)]
    Agent(agent::AgentHook),
    Git(pre_push::Args),
}

impl Args {
    /// Whether it is git's pre-push hook (which may prove the commits pushed).
    pub(crate) fn is_pre_push(&self) -> bool {
        matches!(self.host, Host::Git(_))
    }

    /// Whether it is an agent host's hook, whose event names the repository by its `cwd`.
    pub(crate) fn is_agent(&self) -> bool {
        matches!(self.host, Host::Agent(_))
    }
}

pub(crate) fn run(
    args: &Args,
    stdin: &mut dyn std::io::Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    match &args.host {
        Host::Agent(hook) => agent::run(
            hook.host,
            hook.event.as_deref(),
            hook.announce,
            stdin,
            out,
            err,
        ),
        Host::Git(args) => pre_push::run(args, stdin, out, err),
    }
}

/// Run `answer`, turning a panic into a loud "could not check" rather than a crash a host would
/// read as a pass.
fn guarded(answer: impl FnOnce() -> crate::gate::Reply) -> crate::gate::Reply {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(answer)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
        crate::gate::Reply::CouldNotCheck(crate::report::gate::crashed(what))
    })
}

/// The event's `cwd` names the repository. A host started with `GIT_DIR`, `GIT_WORK_TREE` or
/// `GIT_INDEX_FILE` in its environment (from inside a git hook, say) would point git, gix and
/// verify.sh elsewhere: an agent hook forgets them for the whole process, as git does before it
/// enters another repository. The background prover it forks inherits the cleared environment.
///
/// `cli::app::dispatch` calls it first, while the process has one thread (`process::remove_env`).
pub(crate) fn forget_callers_repository() {
    crate::process::remove_env(crate::git::LOCAL_ENV);
}
