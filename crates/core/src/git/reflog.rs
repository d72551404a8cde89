//! What the reflog of `refs/notes/prove-it` says about other writers. Stock `git notes add -f`,
//! `git notes remove` or a forced fetch into the ref replace a note wholesale and do no
//! compare-and-swap, so they can drop proof records ours would have kept (SPEC section 4);
//! the reflog still names the commits that held them.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;

use super::names::PROOFS_REF;
use super::notes_sync::{Merge, all_notes};
use super::{Error, Notes, Repo};

/// The reflog message of our own updates: `notes: ` and the notes commit's message, which always
/// starts with `prove-it:` (see `Notes::update` and the sync merge).
const OURS: &str = "notes: prove-it:";

/// A note whose records an update by another writer dropped, and that are still missing.
#[derive(Debug, Clone)]
pub struct Overwrite {
    /// The reflog message of the update that dropped them.
    pub message: String,
    /// The annotated object (a state tree).
    pub key: ObjectId,
    /// The note as it was before the update.
    pub lost: String,
}

impl Repo {
    /// Every note that an update not made by git-prove-it dropped records from, according to
    /// the reflog, whose records the current proofs do not hold. Empty without a reflog.
    /// `merge` is the proofs' union of records: a lost note counts when joining it to the
    /// current one gives something other than the current one joined to nothing.
    pub fn overwritten_notes(&self, merge: Merge<'_>) -> Result<Vec<Overwrite>, Error> {
        let what = || format!("the reflog of {PROOFS_REF}");
        let Some(reference) = self
            .git
            .try_find_reference(PROOFS_REF)
            .map_err(Error::read(what()))?
        else {
            return Ok(Vec::new());
        };
        let mut platform = reference.log_iter();
        let Some(lines) = platform
            .all()
            .map_err(|e| Error::read(what())(gix::Error::from_error(e)))?
        else {
            return Ok(Vec::new());
        };
        let entries: Vec<(ObjectId, ObjectId, String)> = lines
            .filter_map(Result::ok)
            .map(|line| {
                (
                    line.previous_oid(),
                    line.new_oid(),
                    line.message.to_string(),
                )
            })
            .filter(|(old, _, message)| !old.is_null() && !message.starts_with(OURS))
            .collect();
        drop(platform);

        let mut current = Notes::new(&self.git, PROOFS_REF);
        let mut found = Vec::new();
        let mut seen = HashSet::new();
        for (old, new, message) in entries {
            // A commit the reflog names may have been pruned since: nothing to recover then.
            let Ok(before) = all_notes(&self.git, old) else {
                continue;
            };
            let after: HashMap<ObjectId, ObjectId> = if new.is_null() {
                HashMap::new()
            } else {
                all_notes(&self.git, new)
                    .unwrap_or_default()
                    .into_iter()
                    .collect()
            };
            for (key, blob) in before {
                if after.get(&key) == Some(&blob) || !seen.insert((key, blob)) {
                    continue;
                }
                let Ok(text) = self.git.find_blob(blob).map(|b| b.data.clone()) else {
                    continue;
                };
                let lost = String::from_utf8_lossy(&text).into_owned();
                let now = current.lookup(&key)?.unwrap_or_default();
                // Compared in the union's own form, so that only a missing record counts.
                if merge(&now, &lost) != merge(&now, "") {
                    found.push(Overwrite {
                        message: message.clone(),
                        key,
                        lost,
                    });
                }
            }
        }
        Ok(found)
    }

    /// Put the records of `overwrite` back into the proofs, beside whatever the note holds now,
    /// joined by `merge` (the proofs' union of records).
    pub fn restore_records(&self, overwrite: &Overwrite, merge: Merge<'_>) -> Result<bool, Error> {
        Notes::new(&self.git, PROOFS_REF).update(
            overwrite.key,
            &format!(
                "prove-it: restore the records of tree {} dropped by: {}",
                overwrite.key, overwrite.message
            ),
            |existing| merge(existing, &overwrite.lost),
        )
    }
}
