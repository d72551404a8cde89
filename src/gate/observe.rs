//! Observing a stop: whether verify.sh is armed, the session's anchor, the state tree and its
//! proof, and the turn state. Facts only: nothing here decides, runs verify.sh or writes
//! anything but the session's lock.

use std::path::PathBuf;

use gix::ObjectId;

use super::anchor::Anchor;
use super::decide::{AnchorFacts, Observed, State};
use super::diff::verify_diff;
use super::error::{Error, error_chain};
use super::event::Stop;
use super::host::HostRules;
use super::turn::{Answer, TurnState};
use crate::context::Context;
use crate::git::{self, ANCHORS_REF, Repo, SessionFiles, StateTree, session_key};
use crate::proof::Script;
use crate::proof::lookup_proof;

/// What a stop looks like before anything is decided.
pub(crate) enum Observation {
    /// Not armed now, no anchor and nothing at HEAD: the repository opted out, and the gate
    /// leaves no trace in it.
    OptedOut,
    /// Another hook process for this very stop decided while this one waited: its answer.
    Answered(Answer),
    Stop(Box<Seen>),
}

/// Everything observed at one stop, and what acting on it needs. The session's lock is held
/// for as long as this lives.
pub(crate) struct Seen {
    /// The facts `decide` reads.
    pub observed: Observed,
    /// The state tree, when verify.sh is armed and the worktree could be read.
    pub state: Option<StateTree>,
    pub anchor: Option<Anchor>,
    /// verify.sh's diff since the session started, when it was edited.
    pub diff: Option<String>,
    pub files: SessionFiles,
    /// The turn state as saved by the previous stop of this session.
    pub turn: TurnState,
    _lock: git::SessionLock,
}

/// The worktree as one stable path, so a session's key does not depend on how it was spelled.
pub(crate) fn worktree(repo: &Repo) -> Result<PathBuf, git::Error> {
    let root = repo.workdir()?;
    Ok(root.canonicalize().unwrap_or_else(|_| root.to_owned()))
}

/// Observe the stop `event` of `host`'s session; `started_ns` is when this hook process began.
pub(crate) fn stop(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    started_ns: u64,
) -> Result<Observation, Error> {
    let repo = &ctx.repo;
    let gate_policy = ctx.gate.clone()?;
    let policy = ctx.policy.clone()?;
    let armed_now = repo.armed()?;
    let key = session_key(&event.session, &worktree(repo)?);

    let anchor = lookup_anchor(repo, &key)?;
    let head_tree = repo.head_tree()?;
    // Only asked when verify.sh is gone and there is no anchor to say it was armed before.
    let armed_at_head = match head_tree {
        Some(tree) if !armed_now.is_armed() && anchor.is_none() => {
            repo.tree_has_armed_verify(tree)?
        }
        _ => false,
    };
    if !armed_now.is_armed() && anchor.is_none() && !armed_at_head {
        return Ok(Observation::OptedOut);
    }

    let files = SessionFiles::open(repo, &key)?;
    let lock = files.lock()?;
    let turn = TurnState::from_bytes(files.load().as_deref());
    if let Some(last) = &turn.last
        && last.at_ns >= started_ns
        && last.turn == event.turn
    {
        return Ok(Observation::Answered(last.answer.clone()));
    }
    // A fresh stop (not following a block) or a new turn id starts a new budget. Hosts without
    // turn ids send `turn: None` throughout, so for them only the flag tells.
    let same_turn = event.stop_hook_active && turn.turn == event.turn;
    let blocks = if same_turn { turn.blocks } else { 0 };
    let mut observed = Observed {
        skip: false,
        armed_now: if armed_now.is_armed() {
            Ok(())
        } else {
            Err(armed_now.reason())
        },
        anchor: anchor.as_ref().map(|a| AnchorFacts {
            armed: true,
            state_tree: a.state_tree,
            head_tree: a.head_tree,
            verify: a.verify,
            max_blocks: host.block_budget(a.max_blocks),
            timeout_secs: a.timeout_secs,
        }),
        armed_at_head,
        state: None,
        max_blocks: host.block_budget(gate_policy.max_blocks),
        timeout_secs: policy.timeout.as_secs(),
        blocks,
        run: None,
    };
    let mut state = None;
    if armed_now.is_armed() {
        observed.state = Some(match repo.state_tree(false) {
            // A dirty submodule is a change the tree does not show, and no proof may vouch
            // for it: decide refuses, naming the submodules.
            Ok(tree) if !tree.dirty_submodules().is_empty() => {
                let dirty = State::DirtySubmodules(tree.dirty_submodules().to_vec());
                state = Some(tree);
                dirty
            }
            Ok(tree) => {
                let facts = State::Tree {
                    tree: tree.id,
                    head_tree,
                    verify: tree.verify.map(|(blob, mode)| Script { blob, mode }),
                    proof: lookup_proof(repo, tree.id, tree.verify)?
                        .best(ctx.signed_only)
                        .map(|record| record.outcome),
                };
                state = Some(tree);
                facts
            }
            Err(error) if error.is_worktree_content() => State::ContentError(error_chain(&error)),
            Err(error) => return Err(error.into()),
        });
    }

    let current_verify = state
        .as_ref()
        .and_then(|tree| tree.verify)
        .map(|(blob, mode)| Script { blob, mode });
    let diff = match &anchor {
        Some(anchor) if anchor.verify != current_verify => verify_diff(
            anchor.verify_text.as_deref().unwrap_or(""),
            &verify_text(repo).unwrap_or_default(),
        ),
        _ => None,
    };
    // A notice told to the agent counts for the turn it was told in only.
    let mut turn = turn;
    turn.notice_told &= same_turn;
    Ok(Observation::Stop(Box::new(Seen {
        observed,
        state,
        anchor,
        diff,
        files,
        turn,
        _lock: lock,
    })))
}

/// The session's anchor; one that does not parse is treated as missing (which only makes the
/// gate stricter: no anchor means changed).
pub(crate) fn lookup_anchor(repo: &Repo, key: &ObjectId) -> Result<Option<Anchor>, Error> {
    let Some(text) = repo.notes(ANCHORS_REF).lookup(key)? else {
        return Ok(None);
    };
    Ok(Anchor::parse(&text).ok())
}

/// verify.sh's text as it is on disk (through a link), for diffs; `None` when unreadable.
pub(crate) fn verify_text(repo: &Repo) -> Option<String> {
    repo.read_verify()
        .ok()
        .flatten()
        .map(|data| String::from_utf8_lossy(&data).into_owned())
}
