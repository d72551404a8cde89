//! `git prove-it hook <host> ...`: the entry points hosts call. One file per host adapter's
//! command line; the adapters themselves (JSON in, verdict out) live in `crate::hosts`.
//!
//! A hook's stdout and exit code belong to its host's protocol (ADAPTERS.md); nothing here prints
//! anything else on stdout.

mod claude;
mod gate;
mod git;

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
    Claude(claude::Args),
    Git(git::Args),
}

pub(crate) fn run(
    args: &Args,
    stdin: &mut dyn std::io::Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    match &args.host {
        Host::Claude(args) => claude::run(args, stdin, out, err),
        Host::Git(args) => git::run(args, stdin, out, err),
    }
}

/// Run `answer`, turning a panic into a loud "could not check" rather than a crash a host would
/// read as a pass.
fn guarded(answer: impl FnOnce() -> crate::report::Message) -> crate::report::Message {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(answer)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "an internal error".to_string());
        crate::report::could_not_check(&format!("git-prove-it crashed: {what}"))
    })
}
