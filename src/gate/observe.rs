//! Observing a stop: whether verify.sh is armed, the session's anchor, the state tree and its
//! proof, and the turn state. Facts only: nothing here decides, runs verify.sh or writes
//! anything but the session's lock.

use std::path::PathBuf;

use gix::ObjectId;

use super::anchor::{Anchor, Prover};
use super::decide::{AnchorFacts, ChecksFacts, HidingRule, Observed, State, Tampered};
use super::diff::{file_diff, verify_diff};
use super::error::{Error, error_chain};
use super::event::Stop;
use super::host::HostRules;
use super::turn::{Answer, TurnState};
use crate::context::Context;
use crate::git::{self, ANCHORS_REF, Repo, SessionFiles, StateTree, session_key};
use crate::outcome::Outcome;
use crate::proof::{
    CHECKS_FILE, CheckProof, CheckSet, ChecksError, Protected, Protection, Record, Script,
    SessionTrust, StopSignatures, ToRun, Uncovered, has_checks_file, lookup_proof,
    protection_since_head, state_check_proofs, state_protection,
};

/// What a stop looks like before anything is decided.
pub(crate) enum Observation {
    /// Not armed now, no anchor and nothing at HEAD: the repository opted out, and the gate
    /// leaves no trace in it.
    OptedOut,
    /// Another hook process for this very stop decided while this one waited: its answer.
    Answered(Box<Answer>),
    /// The hook was called in another environment than the session's anchor recorded (the
    /// agent's shell, say): the variables that differ. Nothing is run nor recorded.
    ForeignEnvironment(Vec<String>),
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
    /// verify.sh as the session started with it: the anchor's, else HEAD's (the record's
    /// `verify-anchor`).
    pub baseline_verify: Option<Script>,
    pub files: SessionFiles,
    /// The turn state as saved by the previous stop of this session.
    pub turn: TurnState,
    /// This stop goes on with the turn that state counts (its budget is not new).
    pub same_turn: bool,
    /// With a checks file: the checks without a proof (and not skipped), to run.
    pub pending: Vec<ToRun>,
    /// With a checks file and checks to run: the paths of the state no check reads, for the
    /// records (left empty on a cache hit, where nothing is recorded).
    pub uncovered: Uncovered,
    /// How the protected paths changed since the session started (without an anchor, since
    /// HEAD): for the reply, and for the records a run makes.
    pub protection: Protection,
    /// How the tests of the run this stop made fell short of the baseline's, one line each
    /// (prefixed with the check's name when a named check's), for the words.
    pub tests_weakened: Vec<String>,
    /// What is left of the timeout for this stop's own run, after it waited for a run made
    /// ahead: the whole wait stays within the timeout. `None`: the whole timeout.
    pub run_within: Option<std::time::Duration>,
    /// The stop passed on a proof made ahead of it, without a run of its own: for the ledger.
    pub answered_ahead: Option<super::ledger::AnsweredAhead>,
    lock: Option<git::SessionLock>,
}

impl Seen {
    /// Let other hook processes of the session go on: the prover holds no stop up while it
    /// runs ahead of one.
    pub(crate) fn unlock(&mut self) {
        self.lock = None;
    }
}

/// Which index entries may stand for their files in a session with `anchor`: those it shows
/// unchanged since it was written; without one, none.
pub(crate) fn index_trust(anchor: Option<&Anchor>) -> git::IndexTrust {
    anchor.map_or(git::IndexTrust::Disk, |anchor| {
        git::IndexTrust::of_anchor(anchor.state_tree, anchor.time.unix_timestamp())
    })
}

/// The worktree as one stable path, so a session's key does not depend on how it was spelled.
pub(crate) fn worktree(repo: &Repo) -> Result<PathBuf, git::Error> {
    let root = repo.workdir()?;
    Ok(root.canonicalize().unwrap_or_else(|_| root.to_owned()))
}

/// Observe the stop `event` of `host`'s session; `started_ns` is when this hook process began.
/// `anchored`: the session recorded its anchor in this worktree (the session index says so),
/// so an anchor gone missing is an error, never a fresh start.
pub(crate) fn stop(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    started_ns: u64,
    anchored: bool,
) -> Result<Observation, Error> {
    let repo = &ctx.repo;
    let gate_policy = ctx.gate.clone()?;
    let policy = ctx.policy.clone()?;
    let armed_now = repo.armed()?;
    // A verify.sh link that cannot be followed is never an opt-out nor a disarming to refuse
    // quietly: what would run cannot be known, so the stop cannot be checked.
    if let Some(problem) = armed_now.link_problem() {
        return Err(git::Error::ScriptLink {
            path: git::VERIFY_SCRIPT.to_string(),
            target: repo.verify_link_text()?,
            problem,
        }
        .into());
    }
    let has_checks = has_checks_file(repo)?;
    let key = session_key(&event.session, &worktree(repo)?);

    let note = repo.notes(ANCHORS_REF).lookup(&key)?;
    let anchor = note.as_deref().and_then(|text| Anchor::parse(text).ok());
    let head_tree = repo.head_tree()?;
    // Only asked when verify.sh is gone and there is no anchor to say it was armed before.
    let armed_at_head = match head_tree {
        Some(tree) if !armed_now.is_armed() && anchor.is_none() => {
            repo.tree_has_armed_verify(tree)?
        }
        _ => false,
    };
    // Only asked when the checks file is gone and there is no anchor to say it was there.
    let checks_at_head = match head_tree {
        Some(tree) if !has_checks && anchor.is_none() => {
            repo.tree_entry(tree, CHECKS_FILE)?.is_some()
        }
        _ => false,
    };
    // A worktree the session index says this session anchored is never opted out: its anchor
    // gone missing is tampering or an error, said below.
    if !armed_now.is_armed()
        && !has_checks
        && anchor.is_none()
        && !armed_at_head
        && !checks_at_head
        && !anchored
    {
        return Ok(Observation::OptedOut);
    }

    let files = SessionFiles::open(repo, &key)?;
    let lock = files.lock()?;
    let turn = TurnState::load(files.load().as_deref(), ctx.clock.now_ns());
    let seal = files
        .load_seal()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    // The session index says this session anchored here, yet neither the note nor the
    // session's own copy of it is there: nothing to compare with, so the stop cannot be
    // checked (with a copy, the tampering is refused as such below).
    if anchored && note.is_none() && seal.is_none() {
        return Err(Error::AnchorGone {
            worktree: worktree(repo)?,
        });
    }
    let tampered = tampered(seal.as_deref(), note.as_deref());
    // When the note disagrees with the session's own copy, the copy says what the session
    // started from (the stop is refused either way).
    let anchor = match (tampered, &seal) {
        (Some(_), Some(seal)) => Anchor::parse(seal).ok(),
        _ => anchor,
    };
    if let Some(changed) = anchor
        .as_ref()
        .zip(host.environment())
        .and_then(|(anchor, now)| anchor.environment_differs(now))
    {
        return Ok(Observation::ForeignEnvironment(changed));
    }
    if let Some(last) = &turn.last
        && last.at_ns >= started_ns
        && last.turn == event.turn
    {
        return Ok(Observation::Answered(Box::new(last.answer.clone())));
    }
    // A fresh stop (not following a block), a new turn id, or a person's prompt since the
    // last answer starts a new budget. Hosts without turn ids send `turn: None` throughout, so
    // for them only the flag and the prompt tell.
    let same_turn = event.stop_hook_active && turn.turn == event.turn && !turn.prompted;
    let blocks = if same_turn { turn.blocks } else { 0 };
    // With a checks file, a missing verify.sh is no disarming unless the session started with
    // one (or, without an anchor, HEAD has one).
    let verify_at_start = match &anchor {
        Some(anchor) => anchor.verify.is_some_and(|verify| verify.can_run()),
        None => armed_at_head,
    };
    let mut observed = Observed {
        skip: false,
        armed_now: if armed_now.is_armed() || (has_checks && !verify_at_start) {
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
            retries: a.retries,
            sign: a.sign,
            verify_edits: a.verify_edits,
            weakening: a.weakening,
            provers: a
                .provers
                .as_ref()
                .map(|provers| provers.iter().map(|p| (p.path.clone(), p.script)).collect()),
        }),
        armed_at_head,
        state: None,
        max_blocks: host.block_budget(gate_policy.max_blocks),
        timeout_secs: policy.timeout.as_secs(),
        retries: policy.retries,
        sign: ctx.signed_only,
        verify_edits: gate_policy.verify_edits,
        tampered,
        // Read only when the anchor recorded it: one config walk and one small file.
        filters_changed: anchor
            .as_ref()
            .and_then(|a| a.filters)
            .is_some_and(|filters| filters != repo.filter_digest()),
        hiding_rules: Vec::new(),
        ignores_changed: anchor
            .as_ref()
            .and_then(|a| a.ignores)
            .is_some_and(|ignores| ignores != repo.ignore_digest()),
        verify_at_head: None,
        provers_at_head: None,
        checks_file_now: has_checks,
        checks_file_at_head: checks_at_head,
        blocks,
        run: None,
        uncovered: (Vec::new(), 0),
        uncovered_policy: gate_policy.uncovered,
        weakened: Vec::new(),
        weakened_refused: turn.weakenings_refused.clone(),
        weakening: gate_policy.weakening,
    };
    let mut uncovered = Uncovered::default();
    let mut state = None;
    let mut pending = Vec::new();
    let mut provers_now = None;
    // The findings of a proof found on record, for its words: a weakened proof is named as
    // one whether this stop ran it or an earlier run did.
    let mut cached_weakened = Vec::new();
    let mut signatures = StopSignatures::new(repo, ctx.home.as_deref());
    let mut trust = anchor
        .as_ref()
        .and_then(|anchor| SessionTrust::new(repo, anchor.env, anchor.proofs_at_start));
    if armed_now.is_armed() || has_checks {
        // Under an anchor, only what it shows unchanged is taken from the index.
        let computed = match &anchor {
            Some(anchor) => repo.state_tree_trusting(index_trust(Some(anchor))),
            None => repo.state_tree(false),
        };
        observed.state = Some(match computed {
            // A dirty submodule is a change the tree does not show, and no proof may vouch
            // for it: decide refuses, naming the submodules.
            Ok(tree) if !tree.dirty_submodules().is_empty() => {
                let dirty = State::DirtySubmodules(tree.dirty_submodules().to_vec());
                state = Some(tree);
                dirty
            }
            Ok(tree) if has_checks => match CheckSet::of_state(repo, &tree) {
                Err(ChecksError::Git(error)) if !error.is_worktree_content() => {
                    return Err(error.into());
                }
                Err(error) => State::ContentError(error_chain(&error)),
                Ok(set) => {
                    let skip = &gate_policy.skip_checks;
                    let seen = observe_checks(ctx, &tree, &set, skip, &mut signatures, &mut trust)?;
                    // Since the commit the session started from (without an anchor, HEAD):
                    // a committed tree, so only the part of it outside the inputs is read.
                    let since = anchor.as_ref().map_or(head_tree, |a| a.head_tree);
                    let changed = uncovered_since(repo, &tree, &set, since)?;
                    observed.uncovered = (changed.paths, changed.count);
                    // Only a run records them all; a cache hit lists none.
                    if !seen.pending.is_empty() {
                        uncovered = set.uncovered(repo, &tree)?;
                    }
                    pending = seen.pending;
                    provers_now = Some(seen.provers);
                    cached_weakened = seen.weakened;
                    let facts = State::Tree {
                        tree: tree.id,
                        head_tree,
                        verify: tree.verify.map(|(blob, mode)| Script { blob, mode }),
                        proof: seen.proof,
                        checks: Some(seen.facts),
                    };
                    state = Some(tree);
                    facts
                }
            },
            Ok(tree) => {
                let found = lookup_proof(repo, tree.id, tree.verify)?
                    .admitted(&mut |record| admit(&mut trust, record))?;
                let best = found
                    .best_trusted(ctx.signed_only, &mut |signature, time| {
                        signatures.good(signature, time)
                    })
                    .map_err(Error::from)?;
                if let Some(record) = best {
                    cached_weakened.clone_from(&record.tests_weakened);
                }
                let facts = State::Tree {
                    tree: tree.id,
                    head_tree,
                    verify: tree.verify.map(|(blob, mode)| Script { blob, mode }),
                    proof: best.map(|record| record.outcome),
                    checks: None,
                };
                state = Some(tree);
                facts
            }
            Err(error) if error.is_worktree_content() => State::ContentError(error_chain(&error)),
            Err(error) => return Err(error.into()),
        });
    }
    if let (Some(anchor), Some(tree)) = (&anchor, &state) {
        let since = std::time::SystemTime::from(anchor.time);
        let outside = if observed.ignores_changed {
            repo.hidden_by_outside_rules(tree, since)?
        } else {
            Vec::new()
        };
        let inside = repo.hiding_rules(tree, since)?;
        observed.hiding_rules = outside
            .into_iter()
            .map(|found| (found, true))
            .chain(inside.into_iter().map(|found| (found, false)))
            .map(|(found, outside)| HidingRule {
                rule: found.rule,
                hidden: found.hidden,
                count: found.count,
                outside,
            })
            .collect();
    }

    let protection = protection(repo, anchor.as_ref(), state.as_ref())?;
    observed.weakened = protection
        .weakened
        .iter()
        .map(crate::proof::Finding::to_line)
        .chain(cached_weakened.iter().cloned())
        .collect();
    let current_verify = state
        .as_ref()
        .and_then(|tree| tree.verify)
        .map(|(blob, mode)| Script { blob, mode });
    // Without an anchor, HEAD's verify.sh is the baseline (only read then: the cache-hit path
    // with an anchor reads nothing more).
    let at_head = match (&anchor, head_tree) {
        (None, Some(tree)) if armed_now.is_armed() => Some(repo.tree_verify(tree)?),
        _ => None,
    };
    // The checks' baseline: the anchor's, else HEAD's when it has a checks file.
    let provers_before: Option<Vec<Prover>> = match (&anchor, head_tree) {
        (Some(anchor), _) => anchor.provers.clone(),
        (None, Some(tree)) if has_checks => match CheckSet::of_tree(repo, tree) {
            Ok(set) if set.file.is_some() => Some(provers_of(&set, &|path| match repo
                .tree_entry(tree, path)?
            {
                Some((blob, _)) => repo.read_blob(blob).map(Some),
                None => Ok(None),
            })?),
            _ => None,
        },
        _ => None,
    };
    if anchor.is_none() {
        observed.provers_at_head = provers_before
            .as_ref()
            .map(|provers| provers.iter().map(|p| (p.path.clone(), p.script)).collect());
    }
    let at_head =
        at_head.map(|found| found.map(|(blob, mode, data)| (Script { blob, mode }, data)));
    observed.verify_at_head = at_head
        .as_ref()
        .map(|found| found.as_ref().map(|(script, _)| *script));
    // HEAD's verify.sh is a baseline only where it differs: an unedited one leaves the record
    // as it always was (`verify-anchor: none` without an anchor).
    let (baseline_verify, baseline_text) = match (&anchor, at_head) {
        (Some(anchor), _) => (anchor.verify, anchor.verify_text.clone()),
        (None, Some(Some((script, data)))) if Some(script) != current_verify => (
            Some(script),
            Some(String::from_utf8_lossy(&data).into_owned()),
        ),
        (None, _) => (None, None),
    };
    let diff = match (&anchor, baseline_verify) {
        (Some(_), baseline) | (None, baseline @ Some(_)) if baseline != current_verify => {
            verify_diff(
                baseline_text.as_deref().unwrap_or(""),
                &verify_text(repo).unwrap_or_default(),
            )
        }
        _ => None,
    };
    let diff = match checks_diff(provers_before.as_deref(), provers_now.as_deref()) {
        None => diff,
        Some(more) => Some(format!("{}{more}", diff.unwrap_or_default())),
    };
    // Each check to run, with its script as the session started with it.
    let pending = pending
        .into_iter()
        .map(|found| ToRun {
            anchor: provers_before.as_ref().and_then(|provers| {
                provers
                    .iter()
                    .find(|p| p.path == found.check.run)
                    .map(|p| p.script)
            }),
            diff: diff.clone(),
            input_tree: found.input_tree,
            check: found.check,
        })
        .collect();
    // A notice told to the agent counts for the turn it was told in only.
    let mut turn = turn;
    turn.notice_told &= same_turn;
    turn.prompted = false;
    Ok(Observation::Stop(Box::new(Seen {
        observed,
        state,
        anchor,
        diff,
        baseline_verify,
        files,
        turn,
        same_turn,
        pending,
        uncovered,
        protection,
        tests_weakened: cached_weakened,
        run_within: None,
        answered_ahead: None,
        lock: Some(lock),
    })))
}

/// How the protected paths of `state` changed: since the anchor's tree of them, by the
/// anchor's list (a list narrowed or deleted since does not count); without an anchor, since
/// HEAD's. Nothing to read when the state is the one the session started from.
fn protection(
    repo: &Repo,
    anchor: Option<&Anchor>,
    state: Option<&StateTree>,
) -> Result<Protection, Error> {
    let Some(state) = state else {
        return Ok(Protection::default());
    };
    Ok(match anchor {
        Some(anchor) => match anchor.protect_tree {
            Some(base) if anchor.state_tree != Some(state.id) => state_protection(
                repo,
                base,
                anchor.state_tree,
                anchor.head_tree,
                &Protected::new(anchor.protect.clone()),
                state,
            )?,
            _ => Protection::default(),
        },
        None => protection_since_head(repo, state)?,
    })
}

/// The paths of `tree` no check of `set` reads that differ from the committed tree `since`
/// (all of them without one). From the state's entries and the directories of `since` that
/// differ from the state's: no file is read, and unchanged directories are not looked into.
fn uncovered_since(
    repo: &Repo,
    tree: &StateTree,
    set: &CheckSet,
    since: Option<ObjectId>,
) -> Result<Uncovered, Error> {
    match since {
        _ if set.file.is_none() => Ok(Uncovered::default()),
        Some(since) => Ok(Uncovered::of(repo.changed_outside(
            tree,
            &set.all_inputs(),
            since,
        )?)),
        None => Ok(set.uncovered(repo, tree)?),
    }
}

/// What a stop sees of a state's checks.
struct ChecksSeen {
    facts: ChecksFacts,
    /// `Some` when every check not skipped has a trusted proof (BOUNDED_CLAIM_SURVIVES if one
    /// of them is).
    proof: Option<Outcome>,
    /// The checks without one, to run.
    pending: Vec<CheckProof>,
    /// The checks file and the scripts, with their texts.
    provers: Vec<Prover>,
    /// The tests the proofs on record lost against their baselines (their `tests-weakened:`
    /// lines), each named with its check.
    weakened: Vec<String>,
}

/// Each check of `set` in `tree`: whether it can run, whether `PROVE_IT_SKIP` names it, and
/// its best trusted proof.
fn observe_checks(
    ctx: &Context,
    tree: &StateTree,
    set: &CheckSet,
    skip: &[String],
    signatures: &mut StopSignatures<'_>,
    trust: &mut Option<SessionTrust<'_>>,
) -> Result<ChecksSeen, Error> {
    let repo = &ctx.repo;
    let provers = provers_of(set, &|path| repo.state_file(tree, path, "check's script"))?;
    let mut facts = ChecksFacts {
        provers: provers.iter().map(|p| (p.path.clone(), p.script)).collect(),
        unrunnable: set.checks.iter().find_map(|check| {
            check.runnable().err().map(|why| {
                (
                    check.name.clone(),
                    format!("its script {} {why}", check.run),
                )
            })
        }),
        skipped: Vec::new(),
    };
    let mut stands = Vec::new();
    let mut pending = Vec::new();
    let mut weakened = Vec::new();
    for mut found in state_check_proofs(repo, tree, set)? {
        if skip.contains(&found.check.name) {
            facts.skipped.push(found.check.name.clone());
            continue;
        }
        found.found =
            std::mem::take(&mut found.found).admitted(&mut |record| admit(trust, record))?;
        let best = found
            .found
            .best_trusted(ctx.signed_only, &mut |signature, time| {
                signatures.good(signature, time)
            })?;
        if let Some(record) = best {
            let name = &found.check.name;
            weakened.extend(
                record
                    .tests_weakened
                    .iter()
                    .map(|finding| format!("check {name}: {finding}")),
            );
        }
        stands.push(crate::proof::Stands::by(best));
        if best.is_none() {
            pending.push(found);
        }
    }
    // Every check skipped: nothing of the set is left to prove.
    let proof = match crate::proof::set_outcome(stands) {
        None => Some(Outcome::Proven),
        Some(Outcome::NotProven) => None,
        outcome => outcome,
    };
    Ok(ChecksSeen {
        facts,
        proof,
        pending,
        provers,
        weakened,
    })
}

/// Whether a proof may spare this stop a run: every one, unless the session's anchor recorded
/// its environment (`SessionTrust`).
fn admit(trust: &mut Option<SessionTrust<'_>>, record: &Record) -> Result<bool, git::Error> {
    trust
        .as_mut()
        .map_or(Ok(true), |trust| trust.admits(record))
}

/// Reads a file of a state or a tree by path; `None` when it has none there.
pub(crate) type ReadFile<'a> = &'a dyn Fn(&str) -> Result<Option<Vec<u8>>, git::Error>;

/// The checks file and each named check's script in `set`, by path, with their texts read
/// through `read`; sorted by path, each path once.
pub(crate) fn provers_of(set: &CheckSet, read: ReadFile<'_>) -> Result<Vec<Prover>, git::Error> {
    let mut provers = Vec::new();
    if let Some((script, text)) = &set.file {
        provers.push(Prover {
            path: CHECKS_FILE.to_string(),
            script: *script,
            text: text.clone(),
        });
    }
    for check in set.checks.iter().filter(|check| !check.is_root()) {
        let Some(script) = check.script else {
            continue;
        };
        if provers.iter().any(|p: &Prover| p.path == check.run) {
            continue;
        }
        let text = read(&check.run)?.unwrap_or_default();
        provers.push(Prover {
            path: check.run.clone(),
            script,
            text: String::from_utf8_lossy(&text).into_owned(),
        });
    }
    provers.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(provers)
}

/// The diffs of the checks file and the check scripts since `before`, each under its path;
/// `None` when none changed.
fn checks_diff(before: Option<&[Prover]>, now: Option<&[Prover]>) -> Option<String> {
    let (before, now) = (before.unwrap_or(&[]), now.unwrap_or(&[]));
    let mut paths: Vec<&str> = before.iter().chain(now).map(|p| p.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    let text = |provers: &[Prover], path: &str| {
        provers
            .iter()
            .find(|p| p.path == path)
            .map(|p| p.text.clone())
            .unwrap_or_default()
    };
    let mut out = String::new();
    for path in paths {
        let was = before.iter().find(|p| p.path == path).map(|p| p.script);
        let is = now.iter().find(|p| p.path == path).map(|p| p.script);
        if was == is {
            continue;
        }
        if let Some(diff) = file_diff(path, &text(before, path), &text(now, path)) {
            out.push_str(&diff);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// How the anchor's note disagrees with the session's own copy of it, if it does.
fn tampered(seal: Option<&str>, note: Option<&str>) -> Option<Tampered> {
    match (seal, note) {
        (None, None) => None,
        (Some(seal), Some(note)) if seal == note => None,
        (Some(_), Some(_)) => Some(Tampered::Changed),
        (Some(_), None) => Some(Tampered::Missing),
        (None, Some(_)) => Some(Tampered::Unsealed),
    }
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
