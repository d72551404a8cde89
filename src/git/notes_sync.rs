//! Bringing two notes refs together: every note of a ref, and the merge of a fetched
//! remote-tracking notes ref into the local one, so that a push of the result is a fast-forward
//! on the remote and nothing is lost whichever side wrote it.
//!
//! Two texts of one note are joined by a [`Merge`] the caller supplies: this module stores and
//! loads texts and never knows the format of what they hold.

use gix::ObjectId;

use super::Error;
use super::notes::{backoff, committer, contention, set_ref};

/// How often the local ref is re-read and the merge re-applied when another writer moved it.
const MAX_ATTEMPTS: u32 = 64;

/// What merging a remote's proofs did to the local notes ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Merged {
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
pub(crate) type Merge<'a> = &'a dyn Fn(&str, &str) -> String;

/// The commit a ref points at, or `None` when it does not exist.
pub(crate) fn ref_tip(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>, Error> {
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
pub(crate) fn all_notes(
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
pub(crate) fn merge_notes(
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
    let committer = committer(repo)?;
    let commit = gix::objs::Commit {
        tree,
        parents: [local, theirs].into_iter().collect(),
        author: committer.clone(),
        committer,
        encoding: None,
        message: format!("{message}\n").into(),
        extra_headers: Vec::new(),
    };
    let commit = repo
        .write_object(&commit)
        .map_err(Error::write("a notes merge commit"))?
        .detach();
    Ok((commit, Merged::Joined { notes: changed }))
}
