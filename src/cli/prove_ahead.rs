//! `git prove-it prove-ahead` (hidden): one worktree's prover run in the foreground, for
//! debugging it and for tests. The after-tool hook never starts this command: it forks its
//! prover (`gate::after_tool`), which runs the same `gate::prover` (SPEC section 8, "Proving
//! ahead").

use std::path::PathBuf;

use crate::hosts::Host;

/// A worktree's prover, in the foreground: not for people. It proves each settled working state
/// ahead of the session's stop, exactly as the stop would, and exits when idle.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The host whose hook started it, as named in `git prove-it hook <host>`.
    #[arg(long)]
    pub host: String,
    /// The session whose anchor it proves under.
    #[arg(long)]
    pub session: String,
    /// The worktree it proves.
    pub worktree: PathBuf,
}

/// Exit 0 when it ended as it should (idle, the session gone, another prover holding the lock),
/// 2 when it could not go on; nothing is printed (its streams are closed).
pub(crate) fn run(args: &Args) -> u8 {
    crate::process::detach_self();
    let Some(host) = Host::named(&args.host) else {
        return crate::exit::ERROR;
    };
    let rules = host
        .rules(&|name| std::env::var(name).ok())
        .with_environment(Host::environment());
    match crate::gate::prover(&rules, &args.session, &args.worktree) {
        Ok(()) => crate::exit::OK,
        Err(_) => crate::exit::ERROR,
    }
}
