//! Whether a commit is proven: a pure reading of the note attached to its tree, shared by
//! `check`, `log` and the pre-push hook. It never touches the repository.

use super::lookup::Found;
use super::record::{Invalid, Outcome, Problem, Record};
use crate::git::CommitInfo;

/// Where one commit stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Standing {
    /// A valid `PROVEN` record.
    Proven(Record),
    /// Only valid `BOUNDED_CLAIM_SURVIVES` records: proven through an edited verify.sh.
    ProvenEdited(Record),
    /// No record at all.
    Unproven,
    /// Records, none of them valid.
    Invalid,
    /// The commit's tree has no verify.sh, so nothing can prove it.
    NotArmed,
}

/// One commit, where it stands, and the records attached to its tree that do not count.
#[derive(Debug, Clone)]
pub(crate) struct CommitStatus {
    pub commit: CommitInfo,
    pub standing: Standing,
    pub invalid: Vec<Invalid>,
    /// Every record that proves the commit, the one to show first.
    pub valid: Vec<Record>,
    /// The signature of the proof shown, or why there is none to trust; `None` without records.
    pub signature: Option<SignatureStatus>,
}

/// What the signature of a commit's proof says (SPEC.md, "Signed proofs").
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub(crate) enum SignatureStatus {
    /// Made by `principal` of the allowed signers file.
    Good {
        principal: String,
        key: Option<String>,
    },
    /// The record or its signature was altered after signing.
    Bad,
    /// A sound signature by a key the allowed signers file does not allow.
    UnknownSigner { key: Option<String> },
    /// The proof carries no signature.
    Unsigned,
    /// Signed, but not checked: no allowed signers file was given or configured.
    NotVerified,
    /// No record proves the commit, and one was copied from another tree's note.
    TreeMismatch,
}

impl SignatureStatus {
    pub(crate) fn is_good(&self) -> bool {
        matches!(self, SignatureStatus::Good { .. })
    }

    /// Before any check: whether `record` is signed at all.
    fn unchecked(record: &Record) -> Self {
        if record.signature.is_some() {
            SignatureStatus::NotVerified
        } else {
            SignatureStatus::Unsigned
        }
    }
}

impl Standing {
    /// Whether the commit counts as proven; `strict` refuses proofs through an edited verify.sh.
    pub(crate) fn is_proven(&self, strict: bool) -> bool {
        match self {
            Standing::Proven(_) => true,
            Standing::ProvenEdited(_) => !strict,
            Standing::Unproven | Standing::Invalid | Standing::NotArmed => false,
        }
    }

    /// The word for it, in human output and JSON alike.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Standing::Proven(_) => "proven",
            Standing::ProvenEdited(_) => "proven-edited",
            Standing::Unproven => "unproven",
            Standing::Invalid => "invalid",
            Standing::NotArmed => "not-armed",
        }
    }

    pub(crate) fn record(&self) -> Option<&Record> {
        match self {
            Standing::Proven(record) | Standing::ProvenEdited(record) => Some(record),
            _ => None,
        }
    }
}

/// Read `note` (the note of the commit's tree, if any) against the commit's tree and verify.sh.
pub(crate) fn classify(commit: CommitInfo, note: Option<&str>) -> CommitStatus {
    let proofs = Found::read(note, &commit.tree, commit.verify);
    let best = proofs.best(false);
    let standing = match best {
        Some(record) => standing_of(record),
        None if commit.verify.is_none() => Standing::NotArmed,
        None if proofs.invalid.is_empty() => Standing::Unproven,
        None => Standing::Invalid,
    };
    let copied = proofs
        .invalid
        .iter()
        .any(|i| matches!(i.problem, Problem::TreeMismatch { .. }));
    let signature = match best {
        Some(record) => Some(SignatureStatus::unchecked(record)),
        None if copied => Some(SignatureStatus::TreeMismatch),
        None => None,
    };
    CommitStatus {
        commit,
        standing,
        signature,
        invalid: proofs.invalid,
        valid: proofs.valid,
    }
}

fn standing_of(record: &Record) -> Standing {
    if record.outcome == Outcome::Proven {
        Standing::Proven(record.clone())
    } else {
        Standing::ProvenEdited(record.clone())
    }
}

/// A base of a checked range (`<base>..<head>`) and the checked commits whose verify.sh (blob
/// or mode) is not the base's: CI's view of a verify.sh change, which needs no anchor (issue
/// 19, hole 8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VerifyChange {
    pub base: CommitInfo,
    /// The checked commits holding another verify.sh than the base (or none where it had one).
    pub commits: Vec<CommitInfo>,
}

/// For each of `bases` (the commits a range excludes), the `checked` commits whose verify.sh
/// differs from it; bases no checked commit differs from are left out.
pub(crate) fn verify_changes(bases: &[CommitInfo], checked: &[CommitStatus]) -> Vec<VerifyChange> {
    bases
        .iter()
        .filter_map(|base| {
            let commits: Vec<CommitInfo> = checked
                .iter()
                .filter(|c| c.commit.verify != base.verify)
                .map(|c| c.commit.clone())
                .collect();
            (!commits.is_empty()).then(|| VerifyChange {
                base: base.clone(),
                commits,
            })
        })
        .collect()
}

/// Check the signatures of `checked`'s proofs with `verify`, best proof first, until one is
/// good: that one becomes the proof shown. When none is, the best proof stays, with what its
/// signature said. Unsigned records are not given to `verify`.
pub(crate) fn check_signatures<E>(
    checked: &mut CommitStatus,
    verify: &mut dyn FnMut(&Record) -> Result<SignatureStatus, E>,
) -> Result<(), E> {
    let mut first = None;
    for record in &checked.valid {
        let status = match record.signature {
            Some(_) => verify(record)?,
            None => SignatureStatus::Unsigned,
        };
        if status.is_good() {
            checked.standing = standing_of(record);
            checked.signature = Some(status);
            return Ok(());
        }
        first.get_or_insert(status);
    }
    if first.is_some() {
        checked.signature = first;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use gix::ObjectId;
    use time::OffsetDateTime;

    use super::*;
    use crate::proof::Script;

    #[test]
    fn a_verify_sh_other_than_the_bases_is_a_change_and_the_same_one_is_not() {
        let with = |n: u8, verify: Option<u8>| CommitInfo {
            id: id(n),
            tree: id(n + 50),
            subject: format!("c{n}"),
            verify: verify.map(|v| (id(v), 0o100_755)),
        };
        let base = with(1, Some(9));
        let checked: Vec<CommitStatus> = [with(2, Some(9)), with(3, Some(8)), with(4, None)]
            .into_iter()
            .map(|c| classify(c, None))
            .collect();
        let changes = verify_changes(std::slice::from_ref(&base), &checked);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].base, base);
        let ids: Vec<_> = changes[0].commits.iter().map(|c| c.id).collect();
        assert_eq!(ids, vec![id(3), id(4)]);
        // A mode change is a change too; the same verify.sh everywhere is none.
        let mut chmod = with(5, Some(9));
        chmod.verify = Some((id(9), 0o100_644));
        assert_eq!(
            verify_changes(std::slice::from_ref(&base), &[classify(chmod, None)]).len(),
            1
        );
        assert!(verify_changes(&[base], &checked[..1]).is_empty());
        assert!(verify_changes(&[], &checked).is_empty());
    }

    fn id(byte: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[byte; 20])
    }

    fn commit(verify: Option<(ObjectId, u32)>) -> CommitInfo {
        CommitInfo {
            id: id(1),
            tree: id(2),
            subject: "subject".into(),
            verify,
        }
    }

    fn record(outcome: Outcome, tree: ObjectId, blob: ObjectId) -> Record {
        Record {
            outcome,
            tree,
            check: None,
            head: None,
            verify: Script {
                blob,
                mode: 0o100_755,
            },
            verify_anchor: None,
            exit_code: 0,
            duration_ms: 10,
            time: OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap(),
            host: "cli".into(),
            session: None,
            tool: "git-prove-it test".into(),
            identity_missing: false,
            verify_diff: None,
            signed_off_by: "A <a@example.com>".into(),
            signature: None,
        }
    }

    const VERIFY: Option<(ObjectId, u32)> = None;

    fn armed() -> Option<(ObjectId, u32)> {
        Some((id(3), 0o100_755))
    }

    #[test]
    fn no_note_is_unproven_and_no_verify_sh_is_not_armed() {
        assert_eq!(classify(commit(armed()), None).standing, Standing::Unproven);
        assert_eq!(classify(commit(VERIFY), None).standing, Standing::NotArmed);
        let note = record(Outcome::Proven, id(2), id(3)).render();
        let checked = classify(commit(VERIFY), Some(&note));
        assert_eq!(checked.standing, Standing::NotArmed);
        assert_eq!(
            checked.invalid.len(),
            1,
            "the record names a verify.sh the tree lacks"
        );
    }

    #[test]
    fn a_valid_record_proves_and_an_edited_one_proves_unless_strict() {
        let proven = classify(
            commit(armed()),
            Some(&record(Outcome::Proven, id(2), id(3)).render()),
        );
        assert!(matches!(proven.standing, Standing::Proven(_)));
        assert!(proven.standing.is_proven(true));
        let edited = classify(
            commit(armed()),
            Some(&record(Outcome::BoundedClaimSurvives, id(2), id(3)).render()),
        );
        assert!(matches!(edited.standing, Standing::ProvenEdited(_)));
        assert!(edited.standing.is_proven(false));
        assert!(!edited.standing.is_proven(true));
        assert_eq!(edited.standing.label(), "proven-edited");
    }

    #[test]
    fn records_that_do_not_prove_this_tree_never_count() {
        let hand_written = "tests pass, trust me\n";
        let other_tree = record(Outcome::Proven, id(9), id(3)).render();
        let other_verify = record(Outcome::Proven, id(2), id(8)).render();
        for note in [hand_written, &other_tree, &other_verify] {
            let checked = classify(commit(armed()), Some(note));
            assert_eq!(checked.standing, Standing::Invalid, "{note}");
            assert!(!checked.standing.is_proven(false));
            assert_eq!(checked.invalid.len(), 1);
        }
    }

    #[test]
    fn a_valid_record_beside_an_invalid_one_proves_and_keeps_the_problem() {
        let note = format!(
            "garbage\n\n{}",
            record(Outcome::Proven, id(2), id(3)).render()
        );
        let checked = classify(commit(armed()), Some(&note));
        assert!(matches!(checked.standing, Standing::Proven(_)));
        assert_eq!(checked.invalid.len(), 1);
    }

    fn signed(mut record: Record) -> Record {
        record.signature = Some(crate::signing::Signature {
            armor: "-----BEGIN SSH SIGNATURE-----\n-----END SSH SIGNATURE-----\n".into(),
            signed: record.canonical(),
        });
        record
    }

    #[test]
    fn without_a_check_a_proof_is_unsigned_or_signed_but_not_verified() {
        let plain = record(Outcome::Proven, id(2), id(3));
        let checked = classify(commit(armed()), Some(&plain.render()));
        assert_eq!(checked.signature, Some(SignatureStatus::Unsigned));
        let checked = classify(commit(armed()), Some(&signed(plain).render()));
        assert_eq!(checked.signature, Some(SignatureStatus::NotVerified));
        assert_eq!(classify(commit(armed()), None).signature, None);
    }

    #[test]
    fn a_record_copied_from_another_tree_is_a_tree_mismatch() {
        let copied = signed(record(Outcome::Proven, id(9), id(3))).render();
        let checked = classify(commit(armed()), Some(&copied));
        assert_eq!(checked.standing, Standing::Invalid);
        assert_eq!(checked.signature, Some(SignatureStatus::TreeMismatch));
    }

    #[test]
    fn the_first_proof_with_a_good_signature_is_the_one_shown() {
        let newest_unsigned = {
            let mut r = record(Outcome::Proven, id(2), id(3));
            r.time += time::Duration::hours(1);
            r
        };
        let older_signed = signed(record(Outcome::Proven, id(2), id(3)));
        let note = format!("{}\n{}", newest_unsigned.render(), older_signed.render());
        let mut checked = classify(commit(armed()), Some(&note));
        assert_eq!(checked.standing, Standing::Proven(newest_unsigned.clone()));
        let good = SignatureStatus::Good {
            principal: "a@example.com".into(),
            key: None,
        };
        let mut calls = 0;
        check_signatures::<()>(&mut checked, &mut |_| {
            calls += 1;
            Ok(good.clone())
        })
        .unwrap();
        assert_eq!(calls, 1, "unsigned records are not checked");
        assert_eq!(checked.standing, Standing::Proven(older_signed.clone()));
        assert_eq!(checked.signature, Some(good));

        // None good: the best proof stays, with its own status.
        let mut checked = classify(commit(armed()), Some(&note));
        check_signatures::<()>(&mut checked, &mut |_| Ok(SignatureStatus::Bad)).unwrap();
        assert_eq!(checked.standing, Standing::Proven(newest_unsigned));
        assert_eq!(checked.signature, Some(SignatureStatus::Unsigned));
    }
}
