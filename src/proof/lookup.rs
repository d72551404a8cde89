//! The one proof lookup: the record that spares a state tree a run, as `status`, `run`, the
//! gate and the pre-push hook all see it. `check` and `log` rank a commit's records by the same
//! rule (`Proofs::ranked`).

use gix::ObjectId;

use super::record::{Invalid, Proofs, Record};
use crate::git::{self, PROOFS_REF, Repo};

/// What the note of one state tree holds, as far as proving it goes.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The proof that counts, if any.
    pub best: Option<Record>,
    /// Records that do not parse into a proof of this tree through this verify.sh.
    pub invalid: Vec<Invalid>,
    /// Valid proofs passed over because they are unsigned and signing is on.
    pub unsigned_passed_over: usize,
}

/// The best valid proof of `tree` through `verify` (verify.sh's blob and mode in that tree):
/// a plain PROVEN over one through an edited verify.sh, then the newest; among signed proofs
/// only when `signed_only` (with signing on, an unsigned proof is made again, signed; SPEC.md
/// 3.1). Signatures are not checked here.
pub(crate) fn lookup_proof(
    repo: &Repo,
    tree: ObjectId,
    verify: Option<(ObjectId, u32)>,
    signed_only: bool,
) -> Result<Found, git::Error> {
    let Some(note) = repo.notes(PROOFS_REF).lookup(&tree)? else {
        return Ok(Found::default());
    };
    let proofs = Proofs::from_note(&note, &tree, verify);
    let best = proofs.best_where(signed_only).cloned();
    let unsigned_passed_over = if signed_only {
        proofs
            .valid
            .iter()
            .filter(|r| r.signature.is_none())
            .count()
    } else {
        0
    };
    Ok(Found {
        best,
        invalid: proofs.invalid,
        unsigned_passed_over,
    })
}
