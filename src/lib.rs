//! git-prove-it: a repository's verify.sh, enforced at an agent's stop and recorded as git notes
//! keyed by the tree of the working state.
//!
//! The library exists for the binary and its tests; everything but the CLI entry is crate-private.

pub mod cli;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod gate;
pub(crate) mod hosts;
pub(crate) mod report;
pub(crate) mod setup;

// The layers below the gate live in the core crate; named here as the modules they were, so
// that `crate::git`, `crate::proof` and the like read the same in every layer above.
pub(crate) use git_prove_it_claim as claim;
pub use git_prove_it_core::exit;
pub(crate) use git_prove_it_core::{
    armed, context, git, isolation, outcome, process, proof, signing, verify,
};
