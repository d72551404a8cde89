//! The one proof lookup: which records of a state tree's note prove it, best first, and which
//! one spares it a run. `status`, `run`, the gate and (through `commit_status`) `check`, `log`
//! and the pre-push hook all read proofs here, by the same rule.

use gix::ObjectId;

use super::record::{Invalid, Outcome, Proofs, Record};
use crate::git::{self, PROOFS_REF, Repo};

/// What the note of one state tree holds, as far as proving it goes.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The records that prove the tree through its verify.sh, best first: a plain PROVEN over
    /// one through an edited verify.sh, then the newest.
    pub valid: Vec<Record>,
    /// Records that do not parse into a proof of this tree through this verify.sh.
    pub invalid: Vec<Invalid>,
}

impl Found {
    /// Read `note` (the note of `tree`, if it has one) against `verify`, verify.sh's blob and
    /// mode in that tree.
    pub(crate) fn read(
        note: Option<&str>,
        tree: &gix::oid,
        verify: Option<(ObjectId, u32)>,
    ) -> Found {
        let Some(note) = note else {
            return Found::default();
        };
        let Proofs { mut valid, invalid } = Proofs::from_note(note, tree, verify);
        // A stable sort: of two records alike in kind and time, the one written first leads.
        valid.sort_by_key(|r| std::cmp::Reverse((r.outcome == Outcome::Proven, r.time)));
        Found { valid, invalid }
    }

    /// The proof that spares the tree a run: the best one, among signed ones only when
    /// `signed_only` (with signing on, an unsigned proof is made again, signed; SPEC.md 3.1).
    /// Signatures are not checked here.
    pub(crate) fn best(&self, signed_only: bool) -> Option<&Record> {
        self.valid
            .iter()
            .find(|record| !signed_only || record.signature.is_some())
    }

    /// How many valid proofs `best(signed_only)` passes over for being unsigned.
    pub(crate) fn unsigned_passed_over(&self, signed_only: bool) -> usize {
        if !signed_only {
            return 0;
        }
        self.valid.iter().filter(|r| r.signature.is_none()).count()
    }
}

/// The proofs of `tree` through `verify`, read from the repository's proofs ref.
pub(crate) fn lookup_proof(
    repo: &Repo,
    tree: ObjectId,
    verify: Option<(ObjectId, u32)>,
) -> Result<Found, git::Error> {
    let note = repo.notes(PROOFS_REF).lookup(&tree)?;
    Ok(Found::read(note.as_deref(), &tree, verify))
}
