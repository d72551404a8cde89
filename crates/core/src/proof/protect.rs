//! The change of a state's (or a commit's) protected paths since a baseline tree of them
//! (SPEC.md section 2.2): each file read from the object database and classified by
//! `weakening`. A protected file holds at most [`TEXT_CAP`] bytes worth reading: a bigger one
//! is compared by its blob alone, and changed, never read.

use std::collections::BTreeMap;

use gix::ObjectId;

use super::checks_file::{CHECKS_FILE, Protected};
use super::weakening::{Finding, Protection, classify};
use crate::git::{self, Repo, StateTree};

/// The most of a protected file read for its tests; past it, a change is shown, not read.
const TEXT_CAP: usize = 4 << 20;
/// The most lines of diff a record keeps of the protected files.
const DIFF_LINE_CAP: usize = 5_000;

type Files = BTreeMap<String, ObjectId>;

fn files(list: Vec<git::protected::File>) -> Files {
    list.into_iter().map(|(path, id, _)| (path, id)).collect()
}

/// The state's protected files since the protected tree `baseline`, protected by `protected`
/// (the anchor's list: a list narrowed since does not count).
///
/// `baseline` holds the protected files of `anchor_state`, the state the session started on:
/// when that tree's directories are in the object database, only the paths that differ from it
/// are looked at (a directory whose tree is the anchor's is not entered), and the baseline is
/// read at those paths alone, so that the work grows with what changed during the session, not
/// with the size of the state nor of the protected set. Otherwise, with `since`, the committed
/// tree the session started on, the paths that differ from it and the baseline's own are.
pub fn state_protection(
    repo: &Repo,
    baseline: ObjectId,
    anchor_state: Option<ObjectId>,
    since: Option<ObjectId>,
    protected: &Protected,
    state: &StateTree,
) -> Result<Protection, git::Error> {
    let matcher = protected.matcher();
    let keep = |path: &str| matcher.holds(path);
    // What changed since the anchor: as the state tree found it while it was built under that
    // anchor, else by comparing the two again.
    let since_anchor = anchor_state.and_then(|tree| match state.changed_since_anchor(tree) {
        Some(changed) => Some(changed.to_vec()),
        None => repo.changed_outside(state, &[], tree).ok(),
    });
    // A path the anchor's list does not hold is in neither the baseline nor the protected set.
    if let Some(changed) = since_anchor {
        let (mut before, mut now) = (Files::new(), Files::new());
        for path in changed.into_iter().filter(|path| keep(path)) {
            if let Some((id, mode)) = repo.tree_entry(baseline, &path)?
                && mode != MODE_TREE
                && mode != MODE_GITLINK
            {
                before.insert(path.clone(), id);
            }
            if let Some((id, _)) = state.entry(&path) {
                now.insert(path, id);
            }
        }
        return compare(repo, &before, &now, &state_reader(repo, state));
    }
    // The baseline holds only what the same patterns protected: its paths need no matching.
    let before = files(repo.tree_files(baseline, &|_| true)?);
    let now = match since {
        Some(since) => {
            let mut now: Files = before
                .keys()
                .filter_map(|path| state.entry(path).map(|(id, _)| (path.clone(), id)))
                .collect();
            for path in repo.changed_outside(state, &[], since)? {
                if !now.contains_key(&path)
                    && keep(&path)
                    && let Some((id, _)) = state.entry(&path)
                {
                    now.insert(path, id);
                }
            }
            now
        }
        None => files(repo.state_files(state, &keep)),
    };
    compare(repo, &before, &now, &state_reader(repo, state))
}

/// Reads a protected file of `state`: one the state only hashed is read from disk, as the
/// state records it.
fn state_reader<'a>(
    repo: &'a Repo,
    state: &'a StateTree,
) -> impl Fn(&str, ObjectId) -> Result<Option<String>, git::Error> + 'a {
    move |path, _| {
        Ok(repo
            .state_file(state, path, "protected file")?
            .filter(|data| data.len() <= TEXT_CAP)
            .map(|data| String::from_utf8_lossy(&data).into_owned()))
    }
}

/// The working state's protected files outside a session (`run`, a stop without an anchor):
/// since HEAD's tree, or, when the state is HEAD's (a clean checkout proves its commit), since
/// HEAD's first parent's; protected by that baseline's checks file's list, or, when it has
/// none, by the state's own. Empty on an unborn branch or a root commit, and without a list.
/// Only the paths that differ from the baseline are looked at.
pub fn protection_since_head(repo: &Repo, state: &StateTree) -> Result<Protection, git::Error> {
    let Some(mut head) = repo.head_tree()? else {
        return Ok(Protection::default());
    };
    if head == state.id {
        let parent = match repo.head_commit()? {
            Some(commit) => repo.first_parent_tree(commit)?,
            None => None,
        };
        let Some(parent) = parent else {
            return Ok(Protection::default());
        };
        head = parent;
    }
    let of = |data: Option<Vec<u8>>| {
        data.and_then(|data| String::from_utf8(data).ok())
            .and_then(|text| Protected::of_text(&text).ok())
            .unwrap_or_default()
    };
    let at_head = match repo.tree_entry(head, CHECKS_FILE)? {
        Some((blob, _)) => of(Some(repo.read_blob(blob)?)),
        None => Protected::default(),
    };
    let protected = if at_head.is_empty() {
        of(repo.state_file(state, CHECKS_FILE, "checks file")?)
    } else {
        at_head
    };
    if protected.is_empty() {
        return Ok(Protection::default());
    }
    let matcher = protected.matcher();
    let (mut before, mut now) = (Files::new(), Files::new());
    for path in repo.changed_outside(state, &[], head)? {
        if !matcher.holds(&path) {
            continue;
        }
        if let Some((id, mode)) = repo.tree_entry(head, &path)?
            && mode != MODE_TREE
            && mode != MODE_GITLINK
        {
            before.insert(path.clone(), id);
        }
        if let Some((id, _)) = state.entry(&path) {
            now.insert(path, id);
        }
    }
    compare(repo, &before, &now, &state_reader(repo, state))
}

const MODE_TREE: u32 = 0o040000;
const MODE_GITLINK: u32 = 0o160000;

/// The committed `tree`'s protected files since the committed tree `base`, both pruned by
/// `protected`.
pub fn tree_protection(
    repo: &Repo,
    base: ObjectId,
    tree: ObjectId,
    protected: &Protected,
) -> Result<Protection, git::Error> {
    let matcher = protected.matcher();
    let keep = |path: &str| matcher.holds(path);
    let before = files(repo.tree_files(base, &keep)?);
    let now = files(repo.tree_files(tree, &keep)?);
    compare(repo, &before, &now, &|_, id| text(repo, id))
}

/// The text of a protected file; `None` when it is too big to read, or not in the object
/// database (a file a clean filter rewrote at session start): its change is then shown as a
/// change, never read.
fn text(repo: &Repo, id: ObjectId) -> Result<Option<String>, git::Error> {
    let Ok(data) = repo.read_blob(id) else {
        return Ok(None);
    };
    if data.len() > TEXT_CAP {
        return Ok(None);
    }
    Ok(Some(String::from_utf8_lossy(&data).into_owned()))
}

type ReadNow<'a> = &'a dyn Fn(&str, ObjectId) -> Result<Option<String>, git::Error>;

fn compare(
    repo: &Repo,
    before: &Files,
    now: &Files,
    read_now: ReadNow<'_>,
) -> Result<Protection, git::Error> {
    let mut protection = Protection::default();
    let mut diff = String::new();
    let new_blobs: BTreeMap<ObjectId, &String> = now
        .iter()
        .filter(|(path, _)| !before.contains_key(*path))
        .map(|(path, id)| (*id, path))
        .collect();
    for (path, id) in before {
        match now.get(path) {
            None => match new_blobs.get(id) {
                // Renamed within the protected paths, unchanged: shown, as a move.
                Some(to) => protection.changed.push(format!("{path} -> {to}")),
                None => {
                    protection
                        .weakened
                        .push(Finding::Deleted { path: path.clone() });
                    let old = text(repo, *id)?.unwrap_or_default();
                    push_diff(&mut diff, path, &old, "");
                }
            },
            Some(now_id) if now_id == id => {}
            Some(now_id) => {
                let (old, new) = (text(repo, *id)?, read_now(path, *now_id)?);
                let (Some(old), Some(new)) = (old, new) else {
                    protection.changed.push(path.clone());
                    continue;
                };
                match classify(path, &old, &new) {
                    Ok(false) => continue,
                    Ok(true) => protection.changed.push(path.clone()),
                    Err(findings) => protection.weakened.extend(findings),
                }
                push_diff(&mut diff, path, &old, &new);
            }
        }
    }
    protection.weakened.sort();
    protection.changed.sort();
    protection.diff = (!diff.is_empty()).then(|| cap(diff));
    Ok(protection)
}

fn push_diff(out: &mut String, path: &str, before: &str, after: &str) {
    out.push_str(
        &similar::TextDiff::from_lines(before, after)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{path} (baseline)"), &format!("b/{path} (now)"))
            .to_string(),
    );
}

fn cap(diff: String) -> String {
    let total = diff.lines().count();
    if total <= DIFF_LINE_CAP {
        return diff;
    }
    let mut cut: String = diff
        .lines()
        .take(DIFF_LINE_CAP)
        .flat_map(|line| [line, "\n"])
        .collect();
    cut.push_str(&format!(
        "... ({} more lines of diff of the protected paths)\n",
        total - DIFF_LINE_CAP
    ));
    cut
}
