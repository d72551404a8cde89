//! git-prove-it: a repository's verify.sh, enforced at an agent's stop and recorded as git notes
//! keyed by the tree of the working state.
//!
//! The library exists for the binary and its tests; everything but the CLI entry is crate-private.

pub(crate) mod claim;
pub mod cli;
pub(crate) mod context;
pub mod exit;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod gate;
pub(crate) mod git;
pub(crate) mod hosts;
pub(crate) mod isolation;
pub(crate) mod outcome;
pub(crate) mod process;
pub(crate) mod proof;
pub(crate) mod report;
pub(crate) mod setup;
pub(crate) mod signing;
pub(crate) mod verify;
