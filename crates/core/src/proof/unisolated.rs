//! The proofs that may come from commit runs of earlier versions, which ran inside the
//! checkout and could see its code: records without an `isolation:` line, made outside an
//! agent session by `run` or the pre-push hook, that no person has revoked. `doctor` lists them
//! and `revoke --unisolated` takes them back.

use gix::ObjectId;

use super::contest::{Marks, Target};
use super::record::{self, Record};
use crate::git::{self, Repo};

/// One proof that may come from an earlier version's commit run.
#[derive(Debug, Clone)]
pub struct Unisolated {
    /// The key it is attached to: a state tree, or a named check's input tree.
    pub key: ObjectId,
    pub record: Record,
    /// Its digest, by which a revocation names it.
    pub digest: ObjectId,
}

/// Each proof record of `refs/notes/prove-it` that carries no `isolation:` line, was made
/// outside an agent session by `git prove-it run` (host `cli`) or the pre-push hook, and is not
/// revoked, keys in order.
pub fn unisolated(repo: &Repo) -> Result<Vec<Unisolated>, git::Error> {
    let Some(tip) = repo.proofs_tip()? else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for (key, blob) in repo.all_notes(tip)? {
        let text = String::from_utf8_lossy(&repo.read_blob(blob)?).into_owned();
        let texts = record::split_records(&text);
        for text in &texts {
            let Ok(record) = record::parse_record(text, &key) else {
                continue;
            };
            let digest = record::digest_of_text(text);
            if suspect(&record)
                && !Marks::of_check(&texts, &key, record.check.as_deref()).revoked(&digest)
            {
                found.push(Unisolated {
                    key,
                    record,
                    digest,
                });
            }
        }
    }
    found.sort_by_key(|found| found.key);
    Ok(found)
}

/// Whether `record` may have been made by an earlier version's commit run.
pub fn suspect(record: &Record) -> bool {
    record.isolation.is_none()
        && record.session.is_none()
        && matches!(record.host.as_str(), "cli" | "pre-push")
}

/// What `revoke --unisolated` resolves: one target per key and check, naming its proofs.
pub fn targets(found: &[Unisolated]) -> Vec<Target> {
    let mut targets: Vec<Target> = Vec::new();
    for one in found {
        match targets
            .iter_mut()
            .find(|t| t.key == one.key && t.check == one.record.check)
        {
            Some(target) => target.proofs.push(one.digest),
            None => targets.push(Target {
                key: one.key,
                check: one.record.check.clone(),
                proofs: vec![one.digest],
            }),
        }
    }
    targets
}
