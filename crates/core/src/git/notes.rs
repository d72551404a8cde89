//! A notes ref as a store of text keyed by object id, read and written in git's notes layout
//! (any fanout depth) through gix's notes trees, and updated by compare-and-swap.

use std::time::Duration;

use gix::ObjectId;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

use super::names::PROOFS_REF;
use super::{Error, Repo};

/// How often an update is retried when another writer moved the ref between our read and write.
const MAX_ATTEMPTS: u32 = 64;

/// A ref's lock older than this was left by a writer that died (SIGKILL, a crash, a power
/// cut): git and we hold a ref's lock for milliseconds, and git gives up waiting for one after
/// 100 ms by default. The retries of an update last longer than this (each waits up to 100 ms
/// for the lock), so the run after a crash waits the dead writer's lock out instead of failing.
const STALE_LOCK: Duration = Duration::from_secs(5);

/// One notes ref of one repository.
pub struct Notes<'repo> {
    repo: &'repo gix::Repository,
    name: &'static str,
    /// The notes tree as last read, kept so that repeated lookups open each fanout level once.
    state: Option<Option<gix::note::plumbing::State>>,
    /// The notes commit to read instead of the ref's tip (`Repo::notes_at`).
    pinned: Option<ObjectId>,
    /// Every note of the ref, read in one walk (`Repo::notes_index`), used instead of the
    /// notes tree when set.
    index: Option<std::sync::Arc<NotesIndex>>,
}

/// The note this process wrote last: its ref (by common directory and name), the notes commit
/// the write left the ref at, the annotated object and the text. A lookup of that object while
/// the ref still points at that commit reads nothing more: a run's record is read back by the
/// command that wrote it (whether it is contested), and re-reading the commit, its trees and
/// the blob just written costs as much as writing them.
struct Written {
    common_dir: std::path::PathBuf,
    name: &'static str,
    tip: ObjectId,
    object: ObjectId,
    text: String,
}

static LAST_WRITTEN: std::sync::Mutex<Option<Written>> = std::sync::Mutex::new(None);

/// Every note of one notes commit as a map from the annotated object to its note blob: one
/// walk of the notes tree, for callers that look up more notes than there are fanout trees.
#[derive(Debug, Default)]
pub struct NotesIndex {
    notes: gix::hashtable::HashMap<ObjectId, ObjectId>,
}

impl Repo {
    /// The notes ref `name` of this repository, as a store of texts keyed by object id.
    pub fn notes(&self, name: &'static str) -> Notes<'_> {
        Notes::new(&self.git, name)
    }

    /// The notes ref `name` as its commit `commit` holds them, for lookups only.
    pub fn notes_at(&self, name: &'static str, commit: ObjectId) -> Notes<'_> {
        Notes {
            pinned: Some(commit),
            ..Notes::new(&self.git, name)
        }
    }

    /// Every note of the notes ref `name` as it stands, read in one walk of its tree.
    pub fn notes_index(&self, name: &'static str) -> Result<NotesIndex, Error> {
        let notes = Notes::new(&self.git, name);
        let Some(tip) = notes.tip()? else {
            return Ok(NotesIndex::default());
        };
        Ok(NotesIndex {
            notes: super::notes_sync::all_notes(&self.git, tip)?
                .into_iter()
                .collect(),
        })
    }

    /// The notes ref `name` read through `index` (its notes as [`Repo::notes_index`] read
    /// them), for lookups only.
    pub fn notes_through(
        &self,
        name: &'static str,
        index: std::sync::Arc<NotesIndex>,
    ) -> Notes<'_> {
        Notes {
            index: Some(index),
            ..Notes::new(&self.git, name)
        }
    }

    /// The commit the proofs ref points at, or `None` when no proof was ever recorded. A ref
    /// that cannot be found is the `Read` error; one that leads nowhere, `RefUnpeelable`.
    pub fn proofs_tip(&self) -> Result<Option<ObjectId>, Error> {
        let Some(mut reference) = self
            .git
            .try_find_reference(PROOFS_REF)
            .map_err(Error::read(format!("the ref {PROOFS_REF}")))?
        else {
            return Ok(None);
        };
        let id = reference.peel_to_id().map_err(|e| Error::RefUnpeelable {
            name: PROOFS_REF.to_string(),
            source: gix::Error::from_error(e),
        })?;
        Ok(Some(id.detach()))
    }

    /// Whether the ref `name` exists (a notes ref that was ever written).
    pub fn has_ref(&self, name: &str) -> Result<bool, Error> {
        Ok(self
            .git
            .try_find_reference(name)
            .map_err(Error::read(format!("the ref {name}")))?
            .is_some())
    }

    /// Every note of the notes commit `commit`, as (annotated object, note blob).
    pub fn all_notes(&self, commit: ObjectId) -> Result<Vec<(ObjectId, ObjectId)>, Error> {
        super::notes_sync::all_notes(&self.git, commit)
    }
}

impl<'repo> Notes<'repo> {
    pub fn new(repo: &'repo gix::Repository, name: &'static str) -> Self {
        Notes {
            repo,
            name,
            state: None,
            pinned: None,
            index: None,
        }
    }

    /// The commit the ref points at, or `None` when no note was ever written.
    fn tip(&self) -> Result<Option<ObjectId>, Error> {
        if let Some(commit) = self.pinned {
            return Ok(Some(commit));
        }
        let what = || format!("the notes ref {}", self.name);
        let Some(mut reference) = self
            .repo
            .try_find_reference(self.name)
            .map_err(Error::read(what()))?
        else {
            return Ok(None);
        };
        let id = reference.peel_to_id().map_err(Error::read(what()))?;
        Ok(Some(id.detach()))
    }

    fn root_tree(&self, tip: Option<ObjectId>) -> Result<ObjectId, Error> {
        match tip {
            None => Ok(ObjectId::empty_tree(self.repo.object_hash())),
            Some(commit) => {
                let what = || format!("the notes commit {commit} of {}", self.name);
                let commit = self.repo.find_commit(commit).map_err(Error::read(what()))?;
                Ok(commit.tree_id().map_err(Error::read(what()))?.detach())
            }
        }
    }

    /// The note text attached to `object`, if any.
    pub fn lookup(&mut self, object: &gix::oid) -> Result<Option<String>, Error> {
        if let Some(index) = &self.index {
            return match index.notes.get(object) {
                Some(&note) => self.read_note(note, object).map(Some),
                None => Ok(None),
            };
        }
        if self.state.is_none() {
            let tip = self.tip()?;
            if let Some(tip) = tip
                && let Some(text) = self.last_written(tip, object)
            {
                return Ok(Some(text));
            }
            let state = match tip {
                None => None,
                Some(_) => {
                    let root = self.root_tree(tip)?;
                    Some(
                        gix::note::plumbing::State::new(root, self.repo)
                            .map_err(Error::read(format!("the notes tree of {}", self.name)))?,
                    )
                }
            };
            self.state = Some(state);
        }
        let Some(Some(state)) = self.state.as_mut() else {
            return Ok(None);
        };
        // Error texts are formatted only on error: check and log look up thousands of notes.
        let Some(note) = state
            .get(object, self.repo)
            .map_err(|e| Error::read(format!("the note for {object} in {}", self.name))(e))?
        else {
            return Ok(None);
        };
        self.read_note(note, object).map(Some)
    }

    /// The text of [`LAST_WRITTEN`] when it is `object`'s note in this ref at `tip`.
    fn last_written(&self, tip: ObjectId, object: &gix::oid) -> Option<String> {
        let written = LAST_WRITTEN.lock().ok()?;
        written
            .as_ref()
            .filter(|w| {
                w.tip == tip
                    && w.name == self.name
                    && w.object == object
                    && w.common_dir == self.repo.common_dir()
            })
            .map(|w| w.text.clone())
    }

    fn read_note(&self, note: ObjectId, object: &gix::oid) -> Result<String, Error> {
        let mut blob = self
            .repo
            .find_blob(note)
            .map_err(|e| Error::read(format!("the note {note} for {object}"))(e))?;
        String::from_utf8(std::mem::take(&mut blob.data)).map_err(|_| Error::NoteNotText {
            note,
            tree: object.to_owned(),
        })
    }

    /// Replace the note of `object` with `update(existing note text)`, as one commit on the
    /// notes ref. The ref moves by compare-and-swap; when another writer got there first, the
    /// update is re-applied on top of theirs, so concurrent writers never lose each other's
    /// notes. Returns `false` when `update` left the note as it was and nothing was written.
    pub fn update(
        &mut self,
        object: ObjectId,
        message: &str,
        update: impl Fn(&str) -> String,
    ) -> Result<bool, Error> {
        self.state = None;
        self.index = None;
        for attempt in 0..MAX_ATTEMPTS {
            let tip = self.tip()?;
            let root = self.root_tree(tip)?;
            let mut state = gix::note::plumbing::State::new(root, self.repo)
                .map_err(Error::read(format!("the notes tree of {}", self.name)))?;
            let existing = match state.get(&object, self.repo).map_err(Error::read(format!(
                "the note for {object} in {}",
                self.name
            )))? {
                Some(note) => self.read_note(note, &object)?,
                None => String::new(),
            };
            let text = update(&existing);
            if text == existing {
                return Ok(false);
            }
            let blob = self
                .repo
                .write_blob(text.as_bytes())
                .map_err(Error::write(format!("the note for {object}")))?
                .detach();
            let edit = state
                .replace(object, blob, self.repo)
                .map_err(Error::write(format!("the notes tree of {}", self.name)))?;
            let commit = write_notes_commit(
                self.repo,
                edit.tree,
                tip,
                message,
                format!("a notes commit for {}", self.name),
            )?;
            // Another writer moved the ref, or holds its lock: read again and retry.
            if set_ref(self.repo, self.name, commit, tip, message)? {
                if let Ok(mut written) = LAST_WRITTEN.lock() {
                    *written = Some(Written {
                        common_dir: self.repo.common_dir().to_owned(),
                        name: self.name,
                        tip: commit,
                        object,
                        text,
                    });
                }
                return Ok(true);
            }
            std::thread::sleep(backoff(attempt));
        }
        Err(contention(self.repo, self.name, MAX_ATTEMPTS))
    }
}

/// The error for an update that kept failing: the ref's lock when one is still there (held by a
/// live writer, or left too recently to call stale), else the writers that kept moving it.
pub(super) fn contention(repo: &gix::Repository, name: &str, attempts: u32) -> Error {
    let lock = lock_path(repo, name);
    if lock.exists() {
        Error::RefLocked {
            name: name.to_string(),
            lock,
        }
    } else {
        Error::RefContention {
            name: name.to_string(),
            attempts,
        }
    }
}

/// Where git and gix lock a shared ref such as a notes ref: `<ref>.lock` in the common dir.
fn lock_path(repo: &gix::Repository, name: &str) -> std::path::PathBuf {
    repo.common_dir().join(format!("{name}.lock"))
}

/// Remove the lock of `name` when a writer that died left it behind (older than
/// [`STALE_LOCK`]); a lock a live writer holds is never touched. Git itself never breaks a
/// lock and asks a person to; the ref's value is checked by compare-and-swap either way, so
/// breaking a dead writer's lock cannot lose an update.
fn break_stale_lock(repo: &gix::Repository, name: &str) {
    let lock = lock_path(repo, name);
    let stale = std::fs::symlink_metadata(&lock)
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .is_some_and(|age| age >= STALE_LOCK);
    if stale {
        // Failing to remove it leaves it for the error that names it.
        let _ = std::fs::remove_file(&lock);
    }
}

/// Point `name` at `new` if it still points at `expected` (or does not exist, for `None`).
/// Returns `false` when another writer got there first.
pub(super) fn set_ref(
    repo: &gix::Repository,
    name: &str,
    new: ObjectId,
    expected: Option<ObjectId>,
    message: &str,
) -> Result<bool, Error> {
    let expected = expected.map_or(PreviousValue::MustNotExist, |tip| {
        PreviousValue::MustExistAndMatch(gix::refs::Target::Object(tip))
    });
    let edit = RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: format!("notes: {message}").into(),
            },
            expected,
            new: gix::refs::Target::Object(new),
        },
        name: name.try_into().map_err(|e| Error::Write {
            what: format!("the ref {name}"),
            source: gix::Error::from_error(e),
        })?,
        deref: false,
    };
    match repo.edit_reference(edit) {
        Ok(_) => Ok(true),
        Err(err) if err.is_conflict() || err.is_retryable() => {
            break_stale_lock(repo, name);
            Ok(false)
        }
        Err(source) => Err(Error::Write {
            what: format!("the ref {name}"),
            source,
        }),
    }
}

/// Write a commit of a notes ref: `tree` on `parents`, by [`committer`], with `message`; `what`
/// names it in an error.
pub(super) fn write_notes_commit(
    repo: &gix::Repository,
    tree: ObjectId,
    parents: impl IntoIterator<Item = ObjectId>,
    message: &str,
    what: impl Into<String>,
) -> Result<ObjectId, Error> {
    let committer = committer(repo)?;
    let commit = gix::objs::Commit {
        tree,
        parents: parents.into_iter().collect(),
        author: committer.clone(),
        committer,
        encoding: None,
        message: format!("{message}\n").into(),
        extra_headers: Vec::new(),
    };
    Ok(repo
        .write_object(&commit)
        .map_err(Error::write(what))?
        .detach())
}

/// Who commits to a notes ref: git's committer identity (`Repo` sets a fallback when none is
/// configured, so this fails only on a broken configuration).
pub(super) fn committer(repo: &gix::Repository) -> Result<gix::actor::Signature, Error> {
    repo.committer()
        .and_then(Result::ok)
        .and_then(|sig| sig.to_owned().ok())
        .ok_or_else(|| Error::Read {
            what: "the committer identity for the notes commit".into(),
            source: gix::Error::from_error(std::io::Error::other("no committer identity")),
        })
}

/// A jittered, growing pause: writers that collided must not collide again in lockstep.
pub(super) fn backoff(attempt: u32) -> Duration {
    use std::hash::{BuildHasher, RandomState};
    let jitter = RandomState::new().hash_one((attempt, std::process::id())) % 1000;
    let base_us = 500u64 << attempt.min(6);
    Duration::from_micros(base_us + jitter * base_us / 1000)
}

#[cfg(test)]
mod tests {
    use super::super::test_repo::{git_repo, run};
    use super::*;

    #[test]
    fn the_proofs_tip_is_where_git_sees_the_ref_and_its_notes_are_listed() {
        let (dir, repo) = git_repo();
        assert_eq!(repo.proofs_tip().unwrap(), None);
        let key = repo.write_blob(b"annotated\n").unwrap();
        repo.notes(PROOFS_REF)
            .update(key, "prove-it: a test note", |_| "a record".to_string())
            .unwrap();
        let tip = repo.proofs_tip().unwrap().expect("a proof was recorded");
        assert_eq!(
            format!("{tip}\n"),
            run(dir.path(), &["rev-parse", PROOFS_REF])
        );
        let notes = repo.all_notes(tip).unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].0, key);
        assert_eq!(
            run(
                dir.path(),
                &["notes", "--ref", PROOFS_REF, "show", &key.to_string()]
            ),
            "a record"
        );
    }

    // The note just written is read back without reading the objects again, but only while
    // the ref is where the write left it: once another writer moves it, the note is read.
    #[test]
    fn a_note_read_back_after_another_writer_is_the_other_writers() {
        let (dir, repo) = git_repo();
        let key = repo.write_blob(b"annotated\n").unwrap();
        repo.notes(PROOFS_REF)
            .update(key, "prove-it: a test note", |_| "ours\n".to_string())
            .unwrap();
        assert_eq!(
            repo.notes(PROOFS_REF).lookup(&key).unwrap().as_deref(),
            Some("ours\n")
        );
        let hex = key.to_string();
        run(
            dir.path(),
            &[
                "-c",
                "user.name=Other",
                "-c",
                "user.email=other@example.com",
                "notes",
                "--ref",
                PROOFS_REF,
                "add",
                "-f",
                "-m",
                "theirs",
                &hex,
            ],
        );
        assert_eq!(
            repo.notes(PROOFS_REF).lookup(&key).unwrap().as_deref(),
            Some("theirs\n")
        );
    }

    #[test]
    fn a_proofs_ref_leading_nowhere_is_told_apart_from_none() {
        let (dir, repo) = git_repo();
        let refs = dir.path().join(".git/refs/notes");
        std::fs::create_dir_all(&refs).unwrap();
        std::fs::write(
            refs.join("prove-it"),
            "1111111111111111111111111111111111111111\n",
        )
        .unwrap();
        let error = repo.proofs_tip().unwrap_err();
        assert!(matches!(error, Error::RefUnpeelable { .. }), "{error:?}");
    }
}
