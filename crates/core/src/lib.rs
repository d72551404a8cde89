//! git-prove-it's core, the layers below the gate: git objects, refs, the index and state trees
//! (`git`), the one supervisor of child processes and the namespaces a commit's run enters
//! (`process`, `isolation`), running verify.sh (`verify`), SSH signatures (`signing`), the
//! settings a command runs with (`context`), and the proof records, their lookup and the making
//! of a proof (`proof`); the five outcomes (`outcome`) and the exit codes (`exit`) all share.
//!
//! It exists for the `git-prove-it` binary: its items are public to that crate, not an API.
//! The dependencies between these modules point one way (`tests/it/architecture.rs`); the
//! layers above (gate, hosts, claim, report, setup, cli) are the binary's crate, which this one
//! cannot name.

// Its documentation is read with the private items (`cargo doc --document-private-items`),
// where a public item's link to a private one resolves.
#![allow(rustdoc::private_intra_doc_links)]

pub mod armed;
pub mod context;
pub mod exit;
pub mod git;
pub mod isolation;
pub mod outcome;
pub mod process;
pub mod proof;
pub mod signing;
pub mod verify;
