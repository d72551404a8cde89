//! Why the gate could not decide. Every one of these ends the turn loudly as "could not check",
//! never as a pass (`report::could_not_check`).

use std::path::PathBuf;

use crate::context::policy;
use crate::git;
use crate::proof;

#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error(transparent)]
    Git(#[from] git::Error),
    #[error(transparent)]
    Policy(#[from] policy::Error),
    #[error(
        "verify.sh is not part of the working state (it is ignored), so no proof could name it"
    )]
    VerifyNotInState,
    /// Signals could not be watched, so an interrupted verify.sh could not be stopped.
    #[error(transparent)]
    Interrupt(std::io::Error),
    /// Signing was asked for and is impossible: the turn ends loudly, never with a proof left
    /// unsigned.
    #[error(transparent)]
    Sign(proof::Error),
    /// With signing on, a cached proof's signature could not be checked.
    #[error(transparent)]
    CheckSignature(#[from] proof::SignatureError),
    #[error("could not run verify.sh")]
    Run(#[source] proof::Error),
    /// The hook's environment is not the one its session was anchored with: the variables that
    /// differ (a prompt then marks nothing).
    #[error("this hook call's environment is not its session's ({})", .0.join(", "))]
    ForeignEnvironment(Vec<String>),
    #[error("could not write the anchor's key")]
    AnchorKey(#[source] git::Error),
    /// The session index says this session anchored the worktree, and its anchor is not there
    /// (the repository was replaced, or the note removed or made unreadable).
    #[error(
        "this session's anchor in {} is gone (its .git was replaced, or the anchor note was removed or edited)",
        .worktree.display()
    )]
    AnchorGone { worktree: PathBuf },
    /// A worktree the session anchored cannot be opened as the worktree it was.
    #[error("the worktree {} this session started in is no longer a worktree", .worktree.display())]
    NotAWorktree {
        worktree: PathBuf,
        #[source]
        source: git::Error,
    },
    /// A worktree the session anchored now opens as part of another one.
    #[error(
        "the worktree {} this session started in is no longer a worktree of its own: it opens as part of {}",
        .worktree.display(),
        .inside.display()
    )]
    MovedInto { worktree: PathBuf, inside: PathBuf },
    #[error(transparent)]
    Index(#[from] super::session_index::Error),
    /// The worktree's prover could not be started, or its status not written.
    #[error("could not start the prover that proves ahead")]
    Prover(#[source] std::io::Error),
}

impl From<proof::Error> for Error {
    fn from(error: proof::Error) -> Error {
        match error {
            error @ proof::Error::Sign(_) => Error::Sign(error),
            error => Error::Run(error),
        }
    }
}

/// An error and its causes on one line, `: `-separated, for messages that must stay one line.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
