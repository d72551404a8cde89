//! The proofs that may come from commit runs of earlier versions, which ran inside the
//! checkout and could see its code: records without an `isolation:` line, made outside an
//! agent session by `run` or the pre-push hook. `doctor` lists them and `revoke --unisolated`
//! takes them back.

use gix::ObjectId;

use super::record::{Record, parse_note};
use crate::git::{self, Repo};

/// Each proof record of `refs/notes/prove-it` that carries no `isolation:` line and was made
/// outside an agent session by `git prove-it run` (host `cli`) or the pre-push hook, with the
/// key it is attached to, keys in order.
pub(crate) fn unisolated(repo: &Repo) -> Result<Vec<(ObjectId, Record)>, git::Error> {
    let Some(tip) = repo.proofs_tip()? else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for (key, blob) in repo.all_notes(tip)? {
        let text = String::from_utf8_lossy(&repo.read_blob(blob)?).into_owned();
        for record in parse_note(&text, &key).into_iter().flatten() {
            if suspect(&record) {
                found.push((key, record));
            }
        }
    }
    found.sort_by_key(|(key, _)| *key);
    Ok(found)
}

/// Whether `record` may have been made by an earlier version's commit run.
pub(crate) fn suspect(record: &Record) -> bool {
    record.isolation.is_none()
        && record.session.is_none()
        && matches!(record.host.as_str(), "cli" | "pre-push")
}
