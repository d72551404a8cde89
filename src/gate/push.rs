//! The gate at a push (git's pre-push hook), the same pipeline as at an agent's stop: observe
//! where the pushed commits stand, decide (pure: let the push go on, refuse it, or prove the
//! commits first), act by proving them, and decide again on what the notes then say.

use std::collections::HashSet;

use gix::ObjectId;

use crate::context::policy::PrePush;
use crate::git::{self, Repo, Selection};
use crate::proof::{CommitStatus, Standing, commit_standings};

/// One ref the push updates, as git's pre-push protocol gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Update {
    pub local_ref: String,
    pub local: ObjectId,
    pub remote: ObjectId,
}

/// What to do with a push, given the commits of it that are not proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PushDecision {
    /// Every commit that must be proven is: the push goes on.
    Allow,
    /// Prove these commits (`prove-it.prePush = prove`), then decide again.
    Prove(Vec<ObjectId>),
    /// Refuse the push; `tried` when the commits could not be proven.
    Refuse { tried: bool },
}

/// May the push go on? `unproven` are the pushed commits that must be proven and are not;
/// `tried` says whether the hook already tried to prove them. A commit whose tree holds no
/// verify.sh (nor a check), or whose checks file is in error, cannot be proven, so it is never
/// tried; a commit with checks is tried when any of them is not proven (`run` runs only
/// those), and a commit whose checks are all proven is not among `unproven`.
pub(crate) fn decide_push(mode: PrePush, unproven: &[CommitStatus], tried: bool) -> PushDecision {
    if mode == PrePush::Off || unproven.is_empty() {
        return PushDecision::Allow;
    }
    if mode == PrePush::Prove && !tried {
        return PushDecision::Prove(
            unproven
                .iter()
                .filter(|checked| checked.standing.provable())
                .map(|checked| checked.commit.id)
                .collect(),
        );
    }
    PushDecision::Refuse { tried }
}

/// The push refused: the commits that are not proven, and whether proving them was tried.
pub(crate) struct Refused {
    pub unproven: Vec<CommitStatus>,
    pub tried: bool,
}

/// What the gate says of a push.
#[derive(Default)]
pub(crate) struct Pushed {
    /// `Some` when the push is refused.
    pub refused: Option<Refused>,
    /// The pushed commits (every one the remote lacks, whatever the policy checks) that count
    /// as proven only through an edited verify.sh (BOUNDED_CLAIM_SURVIVES): each is warned of,
    /// whether or not the push goes on.
    pub edited: Vec<CommitStatus>,
}

/// Gate a push to `remote` of `updates` under `mode`. `prove` proves one commit (in a
/// temporary worktree) when the policy says to; its failures were reported by it, and what
/// counts is what the notes say afterwards.
pub(crate) fn push<E: From<git::Error>>(
    repo: &Repo,
    mode: PrePush,
    remote: &str,
    updates: &[Update],
    prove: &mut dyn FnMut(ObjectId) -> Result<(), E>,
) -> Result<Pushed, E> {
    if mode == PrePush::Off {
        return Ok(Pushed::default());
    }
    let ids = must_be_proven(repo, mode, remote, updates)?;
    let mut tried = false;
    loop {
        let (unproven, mut edited) = standings(repo, &ids)?;
        if mode != PrePush::All {
            // The policy checks the tips only; the warning is for every pushed commit.
            let pushed = must_be_proven(repo, PrePush::All, remote, updates)?;
            edited = standings(repo, &pushed)?.1;
        }
        match decide_push(mode, &unproven, tried) {
            PushDecision::Allow => {
                return Ok(Pushed {
                    refused: None,
                    edited,
                });
            }
            PushDecision::Refuse { tried } => {
                return Ok(Pushed {
                    refused: Some(Refused { unproven, tried }),
                    edited,
                });
            }
            PushDecision::Prove(commits) => {
                for commit in commits {
                    prove(commit)?;
                }
                tried = true;
            }
        }
    }
}

/// The commits the policy requires to be proven: the pushed tips, or (`all`) every commit the
/// remote does not have yet.
fn must_be_proven(
    repo: &Repo,
    mode: PrePush,
    remote: &str,
    updates: &[Update],
) -> Result<Vec<ObjectId>, git::Error> {
    let tips = pushed_tips(repo, updates);
    match mode {
        PrePush::All => {
            let mut hidden = repo.remote_branch_tips(remote)?;
            hidden.extend(updates.iter().filter_map(|u| repo.peeled_commit(u.remote)));
            repo.walk(&Selection { tips, hidden }, None)
        }
        PrePush::Tip | PrePush::Prove | PrePush::Off => Ok(tips),
    }
}

/// Of the notes keys `keys` (trees), those whose notes a push of `updates` to `remote` sends
/// with it: the trees of the pushed commits and of their history, and of what the remote's
/// branches already hold (a push with nothing new still sends the proofs of those), with
/// those commits' checks' input trees. A proof of a state no such commit holds stays here.
pub(crate) fn travelling(
    repo: &Repo,
    remote: &str,
    updates: &[Update],
    keys: &[ObjectId],
) -> Result<HashSet<ObjectId>, git::Error> {
    let mut tips = pushed_tips(repo, updates);
    tips.extend(repo.remote_branch_tips(remote)?);
    crate::proof::held_keys(repo, &tips, keys)
}

/// The commits at the tips being pushed. Deletions (an all-zero local id) are never checked,
/// nor are notes refs (proofs themselves) or tags of things that are not commits.
fn pushed_tips(repo: &Repo, updates: &[Update]) -> Vec<ObjectId> {
    let mut tips = Vec::new();
    for update in updates {
        if update.local.is_null() || update.local_ref.starts_with("refs/notes/") {
            continue;
        }
        if let Some(commit) = repo.peeled_commit(update.local)
            && !tips.contains(&commit)
        {
            tips.push(commit);
        }
    }
    tips
}

/// Where each of `ids` stands: those that are not proven, and those proven only through an
/// edited verify.sh.
type Split = (Vec<CommitStatus>, Vec<CommitStatus>);

fn standings(repo: &Repo, ids: &[ObjectId]) -> Result<Split, git::Error> {
    let (unproven, proven): Split = commit_standings(repo, ids)?
        .into_iter()
        .partition(|checked| !checked.standing.is_proven(false));
    let edited = proven
        .into_iter()
        .filter(|checked| matches!(checked.standing, Standing::ProvenEdited(_)))
        .collect();
    Ok((unproven, edited))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::CommitInfo;
    use crate::proof::{classify, classify_checks};

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    fn checked(n: u8, armed: bool) -> CommitStatus {
        classify(
            CommitInfo {
                id: id(n),
                tree: id(n + 100),
                subject: format!("commit {n}"),
                verify: armed.then(|| (id(200), 0o100755)),
                checks_file: None,
            },
            None,
        )
    }

    /// A commit whose checks file is in error: no run could prove it.
    fn checks_in_error(n: u8) -> CommitStatus {
        let mut commit = checked(n, true).commit;
        commit.checks_file = Some((id(201), 0o100644));
        classify_checks(commit, Err("line 2: bad".into()))
    }

    /// A commit whose checks (api, docs) have no proof: `run` runs them.
    fn checks_unproven(n: u8) -> CommitStatus {
        let mut commit = checked(n, false).commit;
        commit.checks_file = Some((id(201), 0o100644));
        let check = |name: &str| crate::proof::CheckProof {
            check: crate::proof::Check {
                name: name.into(),
                run: format!("{name}/verify.sh"),
                inputs: vec![name.into()],
                script: Some(crate::proof::Script {
                    blob: id(202),
                    mode: 0o100755,
                }),
            },
            input_tree: id(203),
            found: crate::proof::Found::default(),
        };
        classify_checks(commit, Ok(vec![check("api"), check("docs")]))
    }

    #[test]
    fn a_push_decides_by_the_policy_and_the_commits_standing() {
        use PushDecision::*;
        let none: &[CommitStatus] = &[];
        let two = [checked(1, true), checked(2, false)];
        let three = [checked(1, true), checked(2, false), checks_in_error(3)];
        let with_checks = [checks_unproven(4), checked(2, false)];
        let table = [
            // (mode, unproven, tried, decision)
            (PrePush::Tip, none, false, Allow),
            (PrePush::Tip, &two[..], false, Refuse { tried: false }),
            (PrePush::All, &two[..], false, Refuse { tried: false }),
            (PrePush::Off, &two[..], false, Allow),
            // Proving skips a commit without verify.sh: nothing could prove it.
            (PrePush::Prove, &two[..], false, Prove(vec![id(1)])),
            (PrePush::Prove, &two[..], true, Refuse { tried: true }),
            // Nor one whose checks file is in error: it names the line to fix.
            (PrePush::Prove, &three[..], false, Prove(vec![id(1)])),
            // A commit with checks not all proven is proven, without verify.sh at its root.
            (PrePush::Prove, &with_checks[..], false, Prove(vec![id(4)])),
            (PrePush::Prove, none, true, Allow),
        ];
        for (mode, unproven, tried, want) in table {
            assert_eq!(
                decide_push(mode, unproven, tried),
                want,
                "{mode:?} tried {tried}"
            );
        }
    }
}
