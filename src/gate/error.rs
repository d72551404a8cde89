//! Why the gate could not decide. Every one of these ends the turn loudly as "could not check",
//! never as a pass (`report::could_not_check`).

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
    /// With signing on, a cached proof's signature could not be checked (issue 19, hole 9).
    #[error(transparent)]
    CheckSignature(#[from] proof::SignatureError),
    #[error("could not run verify.sh")]
    Run(#[source] proof::Error),
    #[error("could not write the anchor's key")]
    AnchorKey(#[source] git::Error),
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
