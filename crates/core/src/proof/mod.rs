//! Proofs: the record format, version 1 (`record`: one parser, one renderer, the union merge),
//! the one lookup that says whether a state tree is proven (`lookup`), where a commit stands
//! (`commit_status`, for `check`, `log` and the pre-push hook), and making a proof by running
//! verify.sh and recording what it proved (`prove`).
//!
//! It never prints and never decides a turn: the gate and the commands do, with what it returns.

mod bisect;
mod cannot_test;
mod checks;
mod checks_file;
pub mod codec;
mod commit_status;
mod contest;
mod failure;
mod held;
mod lookup;
mod protect;
mod prove;
mod record;
mod standing;
mod test_names;
mod test_report;
mod unisolated;
mod weakening;

pub use bisect::{Answer, Known, Next, bounds, next};
pub use cannot_test::{CannotTest, EXIT_125, record_cannot_test};
pub use checks::Check;
pub use checks::{
    CheckProof, CheckSet, ChecksError, has_checks_file, state_check_proofs, tree_check_proofs,
};
pub use checks_file::{CHECKS_FILE, Protected, VERIFY_CHECK, is_check_name};
pub use commit_status::{
    Changed, CheckStatus, CommitStatus, Exec, SignatureStatus, Standing, VerifyChange,
    check_signatures, commit_standings, commit_standings_with, verify_changes,
};
#[cfg(any(test, feature = "testing"))]
pub use commit_status::{classify, classify_checks};
pub use contest::{
    Contested, Kind as MarkKind, Resolver, Target, is_contested, merge_unrevoked, resolve,
    targets_of_tree,
};
pub use failure::{FAILURES_REF, Failure, bounded_output, exit_value, lookup_failure};
pub use held::{held_keys, unheld_notes};
#[cfg(any(test, feature = "fuzzing", feature = "testing"))]
pub use lookup::Found;
pub use lookup::{SessionTrust, SignatureError, StopSignatures, lookup_proof};
pub use protect::{protection_since_head, state_protection, tree_protection};
pub use prove::{
    Attempted, Baseline, Echo, Error, Progress, ProveOptions, TAIL_LINES, ToRun, millis, prove,
    prove_checks, working_view,
};
pub use record::{Outcome, Record, Script, Uncovered, merge};
#[cfg(any(test, feature = "fuzzing", feature = "testing"))]
pub use record::{Proofs, parse_note, split_records};
pub use standing::{Stands, set_outcome};
pub use unisolated::{targets as unisolated_targets, unisolated};
pub use weakening::{Finding, Protection};
