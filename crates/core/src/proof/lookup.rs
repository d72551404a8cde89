//! The one proof lookup: which records of a state tree's note prove it, best first, and which
//! one spares it a run. `status`, `run`, the gate and (through `commit_status`) `check`, `log`
//! and the pre-push hook all read proofs here, by the same rule.

use gix::ObjectId;

use super::contest::{Contested, Mark};
use super::record::{Invalid, Outcome, Proofs, Record};
use crate::git::{self, PROOFS_REF, Repo};
use crate::signing::Signature;
use crate::signing::{self, SignatureCheck, Verifier};
use time::OffsetDateTime;

/// What the note of one state tree holds, as far as proving it goes.
#[derive(Debug, Default)]
pub struct Found {
    /// The records that prove the tree through its verify.sh, best first: a plain PROVEN over
    /// one through an edited verify.sh, then the newest.
    pub valid: Vec<Record>,
    /// Records that do not parse into a proof of this tree through this verify.sh.
    pub invalid: Vec<Invalid>,
    /// Proofs through this verify.sh that a failing run contests: they do not count.
    pub contested: Vec<Contested>,
    /// Proofs through this verify.sh that a person revoked.
    pub revoked: Vec<Record>,
    /// The valid proofs that count only through a person's acceptance, with the acceptances.
    pub accepted: Vec<(Record, Vec<Mark>)>,
}

impl Found {
    /// Read `note` (the note of `tree`, if it has one) against `verify`, verify.sh's blob and
    /// mode in that tree.
    pub fn read(note: Option<&str>, tree: &gix::oid, verify: Option<(ObjectId, u32)>) -> Found {
        let Some(note) = note else {
            return Found::default();
        };
        Found::from_proofs(Proofs::from_note(note, tree, verify))
    }

    /// The proofs of one note, sorted best first.
    pub fn from_proofs(proofs: Proofs) -> Found {
        let Proofs {
            mut valid,
            invalid,
            mut contested,
            revoked,
            accepted,
        } = proofs;
        // A stable sort: of two records alike in kind and time, the one written first leads.
        valid.sort_by_key(|r| std::cmp::Reverse((r.outcome == Outcome::Proven, r.time)));
        contested.sort_by_key(|c| std::cmp::Reverse(c.proof.time));
        Found {
            valid,
            invalid,
            contested,
            revoked,
            accepted,
        }
    }

    /// The proof that spares the tree a run: the best one, among signed ones only when
    /// `signed_only` (with signing on, an unsigned proof is made again, signed; SPEC.md 3.1).
    /// Signatures are not checked here.
    pub fn best(&self, signed_only: bool) -> Option<&Record> {
        self.valid.iter().find(|record| {
            !signed_only
                || (record.signature.is_some()
                    && self
                        .acceptances(record)
                        .is_none_or(|marks| marks.iter().any(|m| m.signature.is_some())))
        })
    }

    /// The acceptances `record` counts through, when it counts only through a person's.
    fn acceptances(&self, record: &Record) -> Option<&[Mark]> {
        self.accepted
            .iter()
            .find(|(accepted, _)| accepted == record)
            .map(|(_, marks)| marks.as_slice())
    }

    /// The proof that spares the tree a run at an agent's stop: `best(false)` when signing is
    /// off; with it on, the best signed proof whose signature `good` accepts, so that a signed record copied to another tree with its `tree:` edited is not taken
    /// on its word. `good` is asked nothing when signing is off.
    /// A proof that counts only through a person's acceptance of its contest needs, with
    /// signing on, an acceptance whose signature `good` accepts too.
    pub fn best_trusted<E>(
        &self,
        signed_only: bool,
        good: &mut dyn FnMut(&Signature, OffsetDateTime) -> Result<bool, E>,
    ) -> Result<Option<&Record>, E> {
        if !signed_only {
            return Ok(self.best(false));
        }
        for record in &self.valid {
            let Some(signature) = &record.signature else {
                continue;
            };
            if !good(signature, record.time)? {
                continue;
            }
            let accepted = match self.acceptances(record) {
                None => true,
                Some(marks) => {
                    let mut any = false;
                    for mark in marks {
                        if let Some(signature) = &mark.signature
                            && good(signature, mark.time)?
                        {
                            any = true;
                            break;
                        }
                    }
                    any
                }
            };
            if accepted {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }

    /// These proofs less the ones `admit` refuses (an agent session's stop: `SessionTrust`).
    pub fn admitted<E>(
        mut self,
        admit: &mut dyn FnMut(&Record) -> Result<bool, E>,
    ) -> Result<Found, E> {
        let mut kept = Vec::with_capacity(self.valid.len());
        for record in self.valid {
            if admit(&record)? {
                kept.push(record);
            }
        }
        self.valid = kept;
        Ok(self)
    }

    /// The contest that keeps the tree from being proven: the newest contested proof, when no
    /// proof counts.
    pub fn contest(&self) -> Option<&Contested> {
        if self.valid.is_empty() {
            self.contested.first()
        } else {
            None
        }
    }

    /// How many valid proofs `best(signed_only)` passes over for being unsigned.
    pub fn unsigned_passed_over(&self, signed_only: bool) -> usize {
        if !signed_only {
            return 0;
        }
        self.valid.iter().filter(|r| r.signature.is_none()).count()
    }
}

/// The proofs of `tree` through `verify`, read from the repository's proofs ref.
pub fn lookup_proof(
    repo: &Repo,
    tree: ObjectId,
    verify: Option<(ObjectId, u32)>,
) -> Result<Found, git::Error> {
    let note = repo.notes(PROOFS_REF).lookup(&tree)?;
    Ok(Found::read(note.as_deref(), &tree, verify))
}

/// Which proofs may spare the stop of an agent session whose anchor recorded the hook's
/// environment: one made in that environment (`env:` equal to the anchor's), or one the
/// proofs ref already held when the session started. A proof made during the session in
/// another environment (the agent's own shell, with a `PATH` of its choosing) does not.
pub struct SessionTrust<'a> {
    repo: &'a Repo,
    env: ObjectId,
    /// The proofs ref's commit at session start.
    at_start: Option<ObjectId>,
    notes: Option<git::Notes<'a>>,
}

impl<'a> SessionTrust<'a> {
    /// `None` without a recorded environment (an anchor from before it was recorded, or no
    /// anchor): every proof is admitted, as before.
    pub fn new(
        repo: &'a Repo,
        env: Option<ObjectId>,
        at_start: Option<ObjectId>,
    ) -> Option<SessionTrust<'a>> {
        Some(SessionTrust {
            repo,
            env: env?,
            at_start,
            notes: None,
        })
    }

    /// Whether `record` may spare the session's stop a run.
    pub fn admits(&mut self, record: &Record) -> Result<bool, git::Error> {
        if record.env == Some(self.env) {
            return Ok(true);
        }
        let Some(commit) = self.at_start else {
            return Ok(false);
        };
        let repo = self.repo;
        let notes = self
            .notes
            .get_or_insert_with(|| repo.notes_at(PROOFS_REF, commit));
        let Some(text) = notes.lookup(&record.tree)? else {
            return Ok(false);
        };
        Ok(super::record::split_records(&text)
            .iter()
            .any(|old| super::record::parse_record(old, &record.tree).as_ref() == Ok(record)))
    }
}

/// A cached proof's signature could not be checked at a stop: ssh-keygen or the allowed
/// signers file failed.
#[derive(Debug, thiserror::Error)]
#[error("could not check a proof's signature")]
pub struct SignatureError(#[source] signing::Error);

/// How a stop checks a cached proof's signature with signing on: a good signature by an
/// allowed signer when an allowed signers file is configured (`prove-it.allowedSigners`, else
/// `gpg.ssh.allowedSignersFile`), else a sound one by any key. Made only when a signed proof is
/// there to check, so ssh-keygen is paid for only with signing on.
pub struct StopSignatures<'a> {
    repo: &'a Repo,
    /// `HOME`, as the command's context read it.
    home: Option<&'a std::path::Path>,
    verifier: Option<Option<Verifier>>,
}

impl<'a> StopSignatures<'a> {
    pub fn new(repo: &'a Repo, home: Option<&'a std::path::Path>) -> Self {
        StopSignatures {
            repo,
            home,
            verifier: None,
        }
    }

    /// Whether a signature made at `time` (a record's `time:`) counts at a stop.
    pub fn good(
        &mut self,
        signature: &Signature,
        time: OffsetDateTime,
    ) -> Result<bool, SignatureError> {
        let repo = self.repo;
        let config = |key: &str| repo.config_string(key);
        if self.verifier.is_none() {
            let base = repo.workdir().map(std::path::Path::to_owned).ok();
            let path =
                base.and_then(|base| signing::allowed_signers(None, &config, self.home, &base));
            self.verifier = Some(match path {
                Some(path) => Some(Verifier::new(&config, path).map_err(SignatureError)?),
                None => None,
            });
        }
        match self.verifier.as_ref().and_then(Option::as_ref) {
            Some(verifier) => Ok(matches!(
                verifier.check(signature, time).map_err(SignatureError)?,
                SignatureCheck::Good { .. }
            )),
            None => signing::is_sound(&config, signature).map_err(SignatureError),
        }
    }
}
