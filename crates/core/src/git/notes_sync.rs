//! Bringing two notes refs together: every note of a ref, and the merge of a fetched
//! remote-tracking notes ref into the local one, so that a push of the result is a fast-forward
//! on the remote and nothing is lost whichever side wrote it.
//!
//! Two texts of one note are joined by a [`Merge`] the caller supplies: this module stores and
//! loads texts and never knows the format of what they hold.
//!
//! What a push sends is the remote's notes with only the local notes that may travel set on
//! top ([`notes_ahead`], [`notes_onto`]), the caller saying which ([`Travels`]) from the
//! commits the refs hold ([`super::Repo::commit_tips`], [`super::Repo::commit_trees`]).

use std::collections::HashSet;

use gix::ObjectId;

use super::Error;
use super::notes::{backoff, contention, set_ref, write_notes_commit};

/// How often the local ref is re-read and the merge re-applied when another writer moved it.
const MAX_ATTEMPTS: u32 = 64;

/// What merging a remote's proofs did to the local notes ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merged {
    /// The local ref already held everything the remote has.
    UpToDate,
    /// The local ref had nothing the remote lacks, and now points where the remote's does.
    FastForward,
    /// Both sides had proofs the other lacked: a merge commit joins them. `notes` counts the
    /// notes that gained records from the remote.
    Joined { notes: usize },
}

/// How two texts of one note become one (ours first, then theirs): for proofs, the union of
/// their records. A merge that returns ours unchanged means theirs added nothing.
pub type Merge<'a> = &'a dyn Fn(&str, &str) -> String;

/// Of the given notes keys (trees), the ones that may travel to a remote: those a commit holds.
/// The caller decides (this module never reads a checks file).
pub type Travels<'a> = &'a dyn Fn(&[ObjectId]) -> Result<HashSet<ObjectId>, Error>;

/// Whose commits hold a tree, for [`super::Repo::commit_tips`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tips {
    /// What others can have: the branches, the tags and the remote-tracking branches.
    Shared,
    /// Anything a commit here holds: every ref but the notes, each worktree's `HEAD`, and
    /// every commit their reflogs name.
    Any,
}

impl super::Repo {
    /// The commits `tips` names (tags peeled; notes refs never count).
    pub fn commit_tips(&self, tips: Tips) -> Result<Vec<ObjectId>, Error> {
        let what = || "the repository's refs".to_string();
        let platform = self.git.references().map_err(Error::read(what()))?;
        let mut ids = HashSet::new();
        let mut add = |id: ObjectId| {
            if let Some(commit) = self.peeled_commit(id) {
                ids.insert(commit);
            }
        };
        let refs = platform.all().map_err(Error::read(what()))?;
        for reference in refs.filter_map(Result::ok) {
            let name = reference.name().as_bstr().to_string();
            let shared = ["refs/heads/", "refs/tags/", "refs/remotes/"]
                .iter()
                .any(|prefix| name.starts_with(prefix));
            if name.starts_with("refs/notes/") || (tips == Tips::Shared && !shared) {
                continue;
            }
            if let Some(id) = reference.try_id() {
                add(id.detach());
            }
            if tips == Tips::Any {
                reflog_commits(&reference, &mut add);
            }
        }
        if tips == Tips::Any {
            // Every worktree's HEAD, a detached one included, and what its reflog names: the
            // main worktree's, this one's, and each linked one's.
            let mut repos = vec![self.git.clone()];
            repos.extend(self.git.main_repo().ok());
            for proxy in self.git.worktrees().unwrap_or_default() {
                repos.extend(proxy.into_repo().ok());
            }
            for repo in &repos {
                if let Some(id) = repo.head_id().ok().map(gix::Id::detach) {
                    add(id);
                }
                if let Ok(head) = repo.find_reference("HEAD") {
                    reflog_commits(&head, &mut add);
                }
            }
        }
        Ok(ids.into_iter().collect())
    }

    /// The tree of every commit reachable from `tips`, each once, newest commits first.
    pub fn commit_trees(&self, tips: &[ObjectId]) -> Result<Vec<ObjectId>, Error> {
        if tips.is_empty() {
            return Ok(Vec::new());
        }
        let selection = super::Selection {
            tips: tips.to_vec(),
            hidden: Vec::new(),
        };
        let mut seen = HashSet::new();
        let mut trees = Vec::new();
        for commit in self.walk(&selection, None)? {
            let tree = commit_tree(&self.git, commit)?;
            if seen.insert(tree) {
                trees.push(tree);
            }
        }
        Ok(trees)
    }
}

impl super::Repo {
    /// Drop the notes of `keys` from the notes ref `name`, as one commit that moves the ref by
    /// compare-and-swap (re-applied when another writer moved it meanwhile); how many were
    /// there to drop. Its reflog message is ours, so `doctor` never takes it for records
    /// another writer lost.
    pub fn drop_notes(&self, name: &str, keys: &[ObjectId], message: &str) -> Result<usize, Error> {
        let repo = &self.git;
        let what = "the notes tree without the dropped notes";
        for attempt in 0..MAX_ATTEMPTS {
            let Some(tip) = ref_tip(repo, name)? else {
                return Ok(0);
            };
            let mut state = gix::note::plumbing::State::new(commit_tree(repo, tip)?, repo)
                .map_err(Error::read(what))?;
            let mut dropped = 0;
            for key in keys {
                if state.get(key, repo).map_err(Error::read(what))?.is_some() {
                    state.edit(*key, None, repo).map_err(Error::write(what))?;
                    dropped += 1;
                }
            }
            if dropped == 0 {
                return Ok(0);
            }
            let tree = state.write(repo).map_err(Error::write(what))?;
            let commit = write_notes_commit(repo, tree, [tip], message, "a notes commit")?;
            if set_ref(repo, name, commit, Some(tip), message)? {
                return Ok(dropped);
            }
            std::thread::sleep(backoff(attempt));
        }
        Err(contention(repo, name, MAX_ATTEMPTS))
    }
}

/// Each commit the reflog of `reference` names (none without a reflog).
fn reflog_commits(reference: &gix::Reference<'_>, add: &mut impl FnMut(ObjectId)) {
    let mut platform = reference.log_iter();
    let Ok(Some(lines)) = platform.all() else {
        return;
    };
    for line in lines.filter_map(Result::ok) {
        let new = line.new_oid();
        if !new.is_null() {
            add(new);
        }
    }
}

/// The commit a ref points at, or `None` when it does not exist.
pub fn ref_tip(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>, Error> {
    let what = || format!("the ref {name}");
    let Some(mut reference) = repo.try_find_reference(name).map_err(Error::read(what()))? else {
        return Ok(None);
    };
    Ok(Some(
        reference
            .peel_to_id()
            .map_err(Error::read(what()))?
            .detach(),
    ))
}

fn commit_tree(repo: &gix::Repository, commit: ObjectId) -> Result<ObjectId, Error> {
    let what = || format!("the notes commit {commit}");
    let commit = repo.find_commit(commit).map_err(Error::read(what()))?;
    Ok(commit.tree_id().map_err(Error::read(what()))?.detach())
}

/// Every note in the notes tree of `commit`, as (annotated object, note blob), at any fanout
/// depth. Entries that are not notes (git keeps them, so do we) are skipped.
pub fn all_notes(
    repo: &gix::Repository,
    commit: ObjectId,
) -> Result<Vec<(ObjectId, ObjectId)>, Error> {
    let mut notes = Vec::new();
    let root = commit_tree(repo, commit)?;
    collect(repo, root, &mut String::new(), &mut notes)?;
    Ok(notes)
}

fn collect(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &mut String,
    notes: &mut Vec<(ObjectId, ObjectId)>,
) -> Result<(), Error> {
    let hex_len = repo.object_hash().len_in_hex();
    let tree = repo
        .find_tree(tree)
        .map_err(Error::read(format!("the notes tree {tree}")))?;
    let decoded = tree
        .decode()
        .map_err(|e| Error::Read {
            what: format!("the notes tree {}", tree.id),
            source: gix::Error::from_error(e),
        })?
        .to_owned();
    for entry in decoded.entries {
        let Ok(name) = std::str::from_utf8(&entry.filename) else {
            continue;
        };
        if !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let len = prefix.len();
        if entry.mode.is_tree() && name.len() == 2 && len + 2 < hex_len {
            prefix.push_str(name);
            collect(repo, entry.oid, prefix, notes)?;
            prefix.truncate(len);
        } else if entry.mode.is_blob() && len + name.len() == hex_len {
            prefix.push_str(name);
            if let Ok(key) = ObjectId::from_hex(prefix.as_bytes()) {
                notes.push((key, entry.oid));
            }
            prefix.truncate(len);
        }
    }
    Ok(())
}

fn note_text(repo: &gix::Repository, blob: ObjectId, key: ObjectId) -> Result<String, Error> {
    let data = repo
        .find_blob(blob)
        .map_err(Error::read(format!("the note {blob} for {key}")))?
        .data
        .clone();
    String::from_utf8(data).map_err(|_| Error::NoteNotText {
        note: blob,
        tree: key,
    })
}

/// Merge the notes commit `theirs` (a fetched remote-tracking notes ref) into the local notes
/// ref `ours`, joining the two texts of a note both sides hold with `merge`. The local ref moves
/// by compare-and-swap and the merge is re-applied when another writer moved it meanwhile.
pub fn merge_notes(
    repo: &gix::Repository,
    ours: &str,
    theirs: ObjectId,
    message: &str,
    merge: Merge<'_>,
) -> Result<Merged, Error> {
    for attempt in 0..MAX_ATTEMPTS {
        let local = ref_tip(repo, ours)?;
        let (new, merged) = match local {
            None => (theirs, Merged::FastForward),
            Some(local) if local == theirs => return Ok(Merged::UpToDate),
            Some(local) => {
                let base = repo
                    .merge_base(local, theirs)
                    .map_err(Error::read(format!("the history of {ours}")))?
                    .map(gix::Id::detach);
                if base == Some(theirs) {
                    return Ok(Merged::UpToDate);
                } else if base == Some(local) {
                    (theirs, Merged::FastForward)
                } else {
                    merge_commit(repo, local, theirs, message, merge)?
                }
            }
        };
        if set_ref(repo, ours, new, local, message)? {
            // A merge that brought no record (the remote's notes built on ours) leaves the
            // local notes as they were: up to date, though the histories are joined.
            if merged == (Merged::Joined { notes: 0 }) {
                return Ok(Merged::UpToDate);
            }
            return Ok(merged);
        }
        std::thread::sleep(backoff(attempt));
    }
    Err(contention(repo, ours, MAX_ATTEMPTS))
}

/// A commit with parents `local` and `theirs` whose notes tree holds, for each annotated object,
/// both sides' notes joined by `merge`.
fn merge_commit(
    repo: &gix::Repository,
    local: ObjectId,
    theirs: ObjectId,
    message: &str,
    merge: Merge<'_>,
) -> Result<(ObjectId, Merged), Error> {
    let what = "the merged notes tree";
    let mut state = gix::note::plumbing::State::new(commit_tree(repo, local)?, repo)
        .map_err(Error::read(what))?;
    let mut changed = 0;
    for (key, their_blob) in all_notes(repo, theirs)? {
        let our_blob = state.get(&key, repo).map_err(Error::read(what))?;
        let blob = match our_blob {
            Some(ours) if ours == their_blob => continue,
            Some(ours) => {
                let ours_text = note_text(repo, ours, key)?;
                let merged = merge(&ours_text, &note_text(repo, their_blob, key)?);
                if merged == ours_text {
                    continue;
                }
                repo.write_blob(merged.as_bytes())
                    .map_err(Error::write(format!("the merged note for {key}")))?
                    .detach()
            }
            None => their_blob,
        };
        state
            .edit(key, Some(blob), repo)
            .map_err(Error::write(what))?;
        changed += 1;
    }
    let tree = state.write(repo).map_err(Error::write(what))?;
    let commit = write_notes_commit(repo, tree, [local, theirs], message, "a notes merge commit")?;
    Ok((commit, Merged::Joined { notes: changed }))
}

/// A note of ours the remote's notes lack, or hold with other text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ahead {
    /// The annotated object (a tree).
    pub key: ObjectId,
    /// Our note's blob.
    pub blob: ObjectId,
    /// The remote holds a note of this object (with other text).
    pub on_remote: bool,
}

/// The notes of the notes commit `local` that `theirs` (a remote's notes commit; `None`: it
/// has none) lacks, or holds with other text.
pub fn notes_ahead(
    repo: &gix::Repository,
    local: ObjectId,
    theirs: Option<ObjectId>,
) -> Result<Vec<Ahead>, Error> {
    let theirs: std::collections::HashMap<ObjectId, ObjectId> = match theirs {
        Some(theirs) => all_notes(repo, theirs)?.into_iter().collect(),
        None => std::collections::HashMap::new(),
    };
    Ok(all_notes(repo, local)?
        .into_iter()
        .filter(|(key, blob)| theirs.get(key) != Some(blob))
        .map(|(key, blob)| Ahead {
            key,
            blob,
            on_remote: theirs.contains_key(&key),
        })
        .collect())
}

/// A notes commit on top of `theirs` (a remote's notes commit; `None`: a first commit) whose
/// notes are theirs with each of `notes` (annotated object, note blob) set: what a push sends
/// when only some of the local notes may travel. The local ref is left as it is.
pub fn notes_onto(
    repo: &gix::Repository,
    theirs: Option<ObjectId>,
    notes: &[(ObjectId, ObjectId)],
    message: &str,
) -> Result<ObjectId, Error> {
    let what = "the notes tree to push";
    let base = match theirs {
        Some(theirs) => commit_tree(repo, theirs)?,
        None => ObjectId::empty_tree(repo.object_hash()),
    };
    let mut state = gix::note::plumbing::State::new(base, repo).map_err(Error::read(what))?;
    for (key, blob) in notes {
        state
            .edit(*key, Some(*blob), repo)
            .map_err(Error::write(what))?;
    }
    let tree = state.write(repo).map_err(Error::write(what))?;
    write_notes_commit(repo, tree, theirs, message, "the notes commit to push")
}
