//! Which proof keys a commit holds: its tree, or (with a checks file) one of its checks' input
//! trees. Records of any other key name a state no commit holds (a working state proven by a
//! stop or ahead of one): they are of no use to anyone else, so they never travel to a remote,
//! and `doctor` counts them as prunable.

use std::collections::HashSet;

use gix::ObjectId;

use super::checks::{CheckSet, Parsed};
use super::failure::FAILURES_REF;
use crate::git::{self, PROOFS_REF, Repo, Tips};

/// Of `keys`, those a commit reachable from `tips` holds: its tree, or one of its checks' input
/// trees. The checks files are read only when a key left over has a record of a named check
/// (only those are keyed by an input tree other than a commit's whole tree), and the walk ends
/// once every key is found.
pub fn held_keys(
    repo: &Repo,
    tips: &[ObjectId],
    keys: &[ObjectId],
) -> Result<HashSet<ObjectId>, git::Error> {
    let mut left: HashSet<ObjectId> = keys.iter().copied().collect();
    let mut held = HashSet::new();
    if left.is_empty() {
        return Ok(held);
    }
    let trees = repo.commit_trees(tips)?;
    for tree in &trees {
        if left.remove(tree) {
            held.insert(*tree);
        }
    }
    if left.is_empty() || !any_named_check(repo, &left)? {
        return Ok(held);
    }
    let parsed = Parsed::default();
    for tree in trees {
        if left.is_empty() {
            break;
        }
        // A tree that cannot be read here (a partial clone) holds nothing as far as this
        // clone knows: its keys stay local, which only ever sends less.
        if !matches!(repo.tree_entry(tree, super::CHECKS_FILE), Ok(Some(_))) {
            continue;
        }
        // A checks file in error keys nothing: no run could have proven its checks.
        let Ok(set) = CheckSet::of_tree_in(repo, tree, &parsed) else {
            continue;
        };
        for check in &set.checks {
            let Ok(input) = repo.tree_input_tree(tree, &check.inputs) else {
                continue;
            };
            if left.remove(&input) {
                held.insert(input);
            }
        }
    }
    Ok(held)
}

/// Whether a note of `keys`, in the proofs or the failures ref, holds a record of a named
/// check (a `check:` line).
fn any_named_check(repo: &Repo, keys: &HashSet<ObjectId>) -> Result<bool, git::Error> {
    for name in [PROOFS_REF, FAILURES_REF] {
        let mut notes = repo.notes(name);
        for key in keys {
            if notes
                .lookup(key)?
                .is_some_and(|note| note.lines().any(|line| line.starts_with("check: ")))
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The trees the proofs ref holds notes of that no commit here holds: not of any ref (but the
/// notes), any worktree's `HEAD`, nor any commit their reflogs name. States proven and never committed: they
/// never travel, and may be dropped.
pub fn unheld_notes(repo: &Repo) -> Result<Vec<ObjectId>, git::Error> {
    let Some(tip) = repo.proofs_tip()? else {
        return Ok(Vec::new());
    };
    let keys: Vec<ObjectId> = repo
        .all_notes(tip)?
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    let held = held_keys(repo, &repo.commit_tips(Tips::Any)?, &keys)?;
    Ok(keys.into_iter().filter(|key| !held.contains(key)).collect())
}
