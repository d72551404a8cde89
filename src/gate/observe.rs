//! Observing a stop: whether verify.sh is armed, the session's anchor, the state tree and its
//! proof, and the turn state. Facts only: nothing here decides, runs verify.sh or writes
//! anything but the session's lock.

use std::path::PathBuf;
use std::time::Duration;

use gix::ObjectId;

use super::ahead::Joined;
use super::anchor::{Anchor, Prover};
use super::decide::{
    AnchorFacts, ChecksFacts, Ending, Failing, HidingRule, Observed, RunFacts, State, Tampered,
    WeakeningFound,
};
use super::diff::{file_diff, verify_diff};
use super::error::{Error, error_chain};
use super::event::Stop;
use super::host::HostRules;
use super::turn::{Answer, TurnState};
use crate::context::policy::{GatePolicy, Policy};
use crate::context::{Clock, Context};
use crate::git::{self, ANCHORS_REF, Repo, RunLock, SessionFiles, StateTree, session_key};
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
    /// How the tests of the run this stop made (or of the proof it found) fell short of the
    /// baseline's, each with the check whose run it was, for the words.
    pub tests_weakened: Vec<WeakeningFound>,
    /// What is left of the timeout for this stop's own run, after it waited for a run made
    /// ahead: the whole wait stays within the timeout. `None`: the whole timeout.
    pub run_within: Option<std::time::Duration>,
    /// This stop waited for a run made ahead of it for its state (`ahead::join`).
    pub waited_ahead: bool,
    /// The stop passed on a proof made ahead of it, without a run of its own: for the ledger.
    pub answered_ahead: Option<super::ledger::AnsweredAhead>,
    lock: Option<git::SessionLock>,
    /// The worktree's run lock, held from when a stop sees its state without a proof until its
    /// run (if it makes one) ends: one run at a time on a worktree, whichever session's.
    run_held: Option<git::SessionLock>,
}

impl Seen {
    /// The worktree's run lock, which `stop` took for a state it saw unproven; taken now if it
    /// was not.
    pub(crate) fn hold_run(&mut self, repo: &git::Repo) -> Result<git::SessionLock, Error> {
        match self.run_held.take() {
            Some(held) => Ok(held),
            None => Ok(RunLock::of(repo, &worktree(repo)?)?.hold()?),
        }
    }

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

/// Observe a stop until what it sees is settled. A changed state without a proof may be proven at
/// this moment by someone else: by the prover, running it ahead of this stop (waited for
/// within the timeout, `ahead::join`), or by another session's stop on the same worktree
/// (waited for on the worktree's run lock). Either way the state is looked at again, so that
/// the proof made counts; the prover's word is never the verdict. A state still unproven is
/// left to act with the run lock held (`Seen::hold_run`).
///
/// Arguments as [`look`].
pub(crate) fn stop(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    started_ns: u64,
    anchored: bool,
) -> Result<Observation, Error> {
    let mut waited_ahead = false;
    let mut waited_run = false;
    loop {
        let mut seen = match look(ctx, host, event, started_ns, anchored)? {
            Observation::Stop(seen) => *seen,
            other => return Ok(other),
        };
        seen.waited_ahead = waited_ahead;
        if !super::decide::may_run(&seen.observed) {
            return Ok(Observation::Stop(Box::new(seen)));
        }
        if waited_ahead {
            // Its own run gets what is left of the timeout: the whole wait stays within it.
            let waited = Duration::from_nanos(Clock::system().now_ns().saturating_sub(started_ns));
            let left = Duration::from_secs(seen.observed.timeout_secs).saturating_sub(waited);
            seen.run_within = Some(left);
            if left < Duration::from_secs(1) {
                seen.observed.run = Some(out_of_time(seen.observed.timeout_secs));
                return Ok(Observation::Stop(Box::new(seen)));
            }
        } else {
            match super::ahead::join(ctx, &seen, started_ns) {
                Joined::Not => {}
                Joined::Ended => {
                    waited_ahead = true;
                    continue;
                }
                Joined::OutOfTime => {
                    seen.observed.run = Some(out_of_time(seen.observed.timeout_secs));
                    return Ok(Observation::Stop(Box::new(seen)));
                }
            }
        }
        let lock = RunLock::of(&ctx.repo, &worktree(&ctx.repo)?)?;
        seen.run_held = match lock.try_hold()? {
            Some(held) => Some(held),
            // Another session's run on this worktree: wait for it to end, then look again
            // (with this session's lock let go), taking its proof if it is this state's.
            None if !waited_run => {
                drop(lock.hold()?);
                waited_run = true;
                continue;
            }
            None => Some(lock.hold()?),
        };
        return Ok(Observation::Stop(Box::new(seen)));
    }
}

/// A stop whose wait for a run made ahead took its whole timeout: it blocks as a timeout does.
fn out_of_time(timeout_secs: u64) -> RunFacts {
    RunFacts::Failed {
        failing: vec![Failing {
            check: None,
            ending: Ending::AheadOutlasted { timeout_secs },
            log: None,
            lines: Vec::new(),
        }],
        exit_code: None,
        predates: Vec::new(),
    }
}

/// One look at the stop `event` of `host`'s session: its anchor and turn, the state and its
/// proofs. `started_ns` is when this hook process began. `anchored`: the session recorded its
/// anchor in this worktree (the session index says so), so an anchor gone missing is an error,
/// never a fresh start.
pub(crate) fn look(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    started_ns: u64,
    anchored: bool,
) -> Result<Observation, Error> {
    let repo = &ctx.repo;
    let gate_policy = ctx.gate.clone()?;
    let policy = ctx.policy.clone()?;
    let armed_now = armed_now(repo)?;
    let has_checks = has_checks_file(repo)?;
    let key = session_key(&event.session, &worktree(repo)?);
    let note = repo.notes(ANCHORS_REF).lookup(&key)?;
    let anchor = note.as_deref().and_then(|text| Anchor::parse(text).ok());
    let head_tree = repo.head_tree()?;
    let arming = Arming::read(repo, armed_now, has_checks, anchor.is_some(), head_tree)?;
    // A worktree the session index says this session anchored is never opted out: its anchor
    // gone missing is tampering or an error, said below.
    if !arming.any() && anchor.is_none() && !anchored {
        return Ok(Observation::OptedOut);
    }
    let session = Session::open(ctx, &key, note.as_deref(), anchor, anchored)?;
    if let Some(changed) = session
        .anchor
        .as_ref()
        .zip(host.environment())
        .and_then(|(anchor, now)| anchor.environment_differs(now))
    {
        return Ok(Observation::ForeignEnvironment(changed));
    }
    if let Some(last) = &session.turn.last
        && last.at_ns >= started_ns
        && last.turn == event.turn
    {
        return Ok(Observation::Answered(Box::new(last.answer.clone())));
    }
    let Session {
        files,
        lock,
        mut turn,
        tampered,
        anchor,
    } = session;
    // A fresh stop (not following a block), a new turn id, or a person's prompt since the
    // last answer starts a new budget. Hosts without turn ids send `turn: None` throughout, so
    // for them only the flag and the prompt tell.
    let same_turn = event.stop_hook_active && turn.turn == event.turn && !turn.prompted;
    let blocks = if same_turn { turn.blocks } else { 0 };
    let mut observed = Observed {
        tampered,
        blocks,
        weakened_refused: turn.weakenings_refused.clone(),
        ..first_facts(ctx, host, &gate_policy, &policy, &arming, anchor.as_ref())
    };
    let (seen, protection, baselines) = observe_worktree(
        ctx,
        &gate_policy,
        &arming,
        anchor.as_ref(),
        head_tree,
        &mut observed,
    )?;
    let pending = to_run(seen.pending, &baselines);
    // A notice told to the agent counts for the turn it was told in only.
    turn.notice_told &= same_turn;
    turn.prompted = false;
    Ok(Observation::Stop(Box::new(Seen {
        observed,
        state: seen.state,
        anchor,
        diff: baselines.diff,
        baseline_verify: baselines.verify,
        files,
        turn,
        same_turn,
        pending,
        uncovered: seen.uncovered,
        protection,
        tests_weakened: seen.cached_weakened,
        run_within: None,
        waited_ahead: false,
        answered_ahead: None,
        lock: Some(lock),
        run_held: None,
    })))
}

/// The worktree's side of a stop, into `observed`: its state and proofs (when anything is
/// armed), the ignore rules that hide paths of it, its protected paths against the session's
/// start, and the scripts the session started with.
fn observe_worktree(
    ctx: &Context,
    gate_policy: &GatePolicy,
    arming: &Arming,
    anchor: Option<&Anchor>,
    head_tree: Option<ObjectId>,
    observed: &mut Observed,
) -> Result<(StateSeen, Protection, Baselines), Error> {
    let repo = &ctx.repo;
    let seen = if arming.armed_now.is_armed() || arming.has_checks {
        observe_state(ctx, &gate_policy.skip_checks, anchor, head_tree, observed)?
    } else {
        StateSeen::default()
    };
    if let (Some(anchor), Some(tree)) = (anchor, &seen.state) {
        observed.hiding_rules = hiding_rules(repo, anchor, tree, observed.ignores_changed)?;
    }
    let protection = protection(repo, anchor, seen.state.as_ref())?;
    observed.weakened = protection
        .weakened
        .iter()
        .map(|finding| WeakeningFound::of_state(finding.to_line()))
        .chain(seen.cached_weakened.iter().cloned())
        .collect();
    let baselines = Baselines::read(repo, arming, anchor, head_tree, &seen, observed)?;
    Ok((seen, protection, baselines))
}

/// Each check to run, with its script as the session started with it.
fn to_run(pending: Vec<CheckProof>, baselines: &Baselines) -> Vec<ToRun> {
    pending
        .into_iter()
        .map(|found| ToRun {
            anchor: baselines.provers.as_ref().and_then(|provers| {
                provers
                    .iter()
                    .find(|p| p.path == found.check.run)
                    .map(|p| p.script)
            }),
            diff: baselines.diff.clone(),
            input_tree: found.input_tree,
            check: found.check,
        })
        .collect()
}

/// Whether verify.sh is armed now. A link that cannot be followed is never an opt-out nor a
/// disarming to refuse quietly: what would run cannot be known, so the stop cannot be checked.
fn armed_now(repo: &Repo) -> Result<git::Armed, Error> {
    let armed = repo.armed()?;
    if let Some(problem) = armed.link_problem() {
        return Err(git::Error::ScriptLink {
            path: git::VERIFY_SCRIPT.to_string(),
            target: repo.verify_link_text()?,
            problem,
        }
        .into());
    }
    Ok(armed)
}

/// What arms a stop: verify.sh and the checks file, now and at HEAD.
struct Arming {
    armed_now: git::Armed,
    has_checks: bool,
    /// HEAD has an armed verify.sh; only asked when verify.sh is gone and there is no anchor
    /// to say it was armed before.
    armed_at_head: bool,
    /// HEAD has a checks file; only asked when the checks file is gone and there is no anchor
    /// to say it was there.
    checks_at_head: bool,
}

impl Arming {
    fn read(
        repo: &Repo,
        armed_now: git::Armed,
        has_checks: bool,
        has_anchor: bool,
        head_tree: Option<ObjectId>,
    ) -> Result<Arming, Error> {
        let armed_at_head = match head_tree {
            Some(tree) if !armed_now.is_armed() && !has_anchor => {
                repo.tree_has_armed_verify(tree)?
            }
            _ => false,
        };
        let checks_at_head = match head_tree {
            Some(tree) if !has_checks && !has_anchor => {
                repo.tree_entry(tree, CHECKS_FILE)?.is_some()
            }
            _ => false,
        };
        Ok(Arming {
            armed_now,
            has_checks,
            armed_at_head,
            checks_at_head,
        })
    }

    /// Anything arms the stop, now or at HEAD.
    fn any(&self) -> bool {
        self.armed_now.is_armed() || self.has_checks || self.armed_at_head || self.checks_at_head
    }
}

/// The session's files in this worktree, locked, and what they say.
struct Session {
    files: SessionFiles,
    lock: git::SessionLock,
    turn: TurnState,
    /// How the anchor note differs from the session's own copy of it.
    tampered: Option<Tampered>,
    /// The anchor the session started from: the copy's when the note was tampered with.
    anchor: Option<Anchor>,
}

impl Session {
    /// Lock the session's files under `key` and read them beside the anchor `note` (parsed as
    /// `anchor`). `anchored`: the session index says the session anchored here.
    fn open(
        ctx: &Context,
        key: &ObjectId,
        note: Option<&str>,
        anchor: Option<Anchor>,
        anchored: bool,
    ) -> Result<Session, Error> {
        let repo = &ctx.repo;
        let files = SessionFiles::open(repo, key)?;
        let lock = files.lock()?;
        let turn = TurnState::load(files.load().as_deref(), ctx.clock.now_ns());
        let seal = files
            .load_seal()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        // The session index says this session anchored here, yet neither the note nor the
        // session's own copy of it is there: nothing to compare with, so the stop cannot be
        // checked (with a copy, the tampering is refused as such by `decide`).
        if anchored && note.is_none() && seal.is_none() {
            return Err(Error::AnchorGone {
                worktree: worktree(repo)?,
            });
        }
        let tampered = tampered(seal.as_deref(), note);
        // When the note disagrees with the session's own copy, the copy says what the session
        // started from (the stop is refused either way).
        let anchor = match (tampered, &seal) {
            (Some(_), Some(seal)) => Anchor::parse(seal).ok(),
            _ => anchor,
        };
        Ok(Session {
            files,
            lock,
            turn,
            tampered,
            anchor,
        })
    }
}

/// The facts of a stop known before its state is read: arming, the anchor's settings and the
/// policy's. The turn's (`tampered`, `blocks`, `weakened_refused`) are the caller's to fill in.
fn first_facts(
    ctx: &Context,
    host: &dyn HostRules,
    gate_policy: &GatePolicy,
    policy: &Policy,
    arming: &Arming,
    anchor: Option<&Anchor>,
) -> Observed {
    let repo = &ctx.repo;
    // With a checks file, a missing verify.sh is no disarming unless the session started with
    // one (or, without an anchor, HEAD has one).
    let verify_at_start = match anchor {
        Some(anchor) => anchor.verify.is_some_and(|verify| verify.can_run()),
        None => arming.armed_at_head,
    };
    Observed {
        skip: false,
        armed_now: if arming.armed_now.is_armed() || (arming.has_checks && !verify_at_start) {
            Ok(())
        } else {
            Err(arming.armed_now)
        },
        anchor: anchor.map(|a| AnchorFacts {
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
        armed_at_head: arming.armed_at_head,
        state: None,
        max_blocks: host.block_budget(gate_policy.max_blocks),
        timeout_secs: policy.timeout.as_secs(),
        retries: policy.retries,
        sign: ctx.signed_only,
        verify_edits: gate_policy.verify_edits,
        tampered: None,
        // Read only when the anchor recorded it: one config walk and one small file.
        filters_changed: anchor
            .and_then(|a| a.filters)
            .is_some_and(|filters| filters != repo.filter_digest()),
        hiding_rules: Vec::new(),
        ignores_changed: anchor
            .and_then(|a| a.ignores)
            .is_some_and(|ignores| ignores != repo.ignore_digest()),
        verify_at_head: None,
        provers_at_head: None,
        checks_file_now: arming.has_checks,
        checks_file_at_head: arming.checks_at_head,
        blocks: 0,
        run: None,
        uncovered: (Vec::new(), 0),
        uncovered_policy: gate_policy.uncovered,
        weakened: Vec::new(),
        weakened_refused: Vec::new(),
        weakening: gate_policy.weakening,
    }
}

/// What a stop read of the working state, beyond the facts it set in `Observed`.
#[derive(Default)]
struct StateSeen {
    /// The state tree, when the worktree could be read.
    state: Option<StateTree>,
    /// With a checks file: the checks without a proof (and not skipped).
    pending: Vec<CheckProof>,
    /// With a checks file: its scripts now, with their texts.
    provers_now: Option<Vec<Prover>>,
    /// The findings of a proof found on record, for its words: a weakened proof is named as
    /// one whether this stop ran it or an earlier run did.
    cached_weakened: Vec<WeakeningFound>,
    /// With checks to run: the paths of the state no check reads, for the records.
    uncovered: Uncovered,
}

/// Read the working state and its proofs, setting `observed.state` (and `observed.uncovered`
/// with a checks file). `skip`: the checks `PROVE_IT_SKIP` names.
fn observe_state(
    ctx: &Context,
    skip: &[String],
    anchor: Option<&Anchor>,
    head_tree: Option<ObjectId>,
    observed: &mut Observed,
) -> Result<StateSeen, Error> {
    let repo = &ctx.repo;
    let mut signatures = StopSignatures::new(repo, ctx.home.as_deref());
    let mut trust =
        anchor.and_then(|anchor| SessionTrust::new(repo, anchor.env, anchor.proofs_at_start));
    // Under an anchor, only what it shows unchanged is taken from the index.
    let computed = match anchor {
        Some(anchor) => repo.state_tree_trusting(index_trust(Some(anchor))),
        None => repo.state_tree(false),
    };
    let mut seen = StateSeen::default();
    let facts = match computed {
        // A dirty submodule is a change the tree does not show, and no proof may vouch for
        // it: decide refuses, naming the submodules.
        Ok(tree) if !tree.dirty_submodules().is_empty() => {
            let dirty = State::DirtySubmodules(tree.dirty_submodules().to_vec());
            seen.state = Some(tree);
            dirty
        }
        Ok(tree) if observed.checks_file_now => match CheckSet::of_state(repo, &tree) {
            Err(ChecksError::Git(error)) if !error.is_worktree_content() => {
                return Err(error.into());
            }
            Err(error) => State::ContentError(error_chain(&error)),
            Ok(set) => {
                let checks = observe_checks(ctx, &tree, &set, skip, &mut signatures, &mut trust)?;
                // Since the commit the session started from (without an anchor, HEAD): a
                // committed tree, so only the part of it outside the inputs is read.
                let since = anchor.map_or(head_tree, |a| a.head_tree);
                let changed = uncovered_since(repo, &tree, &set, since)?;
                observed.uncovered = (changed.paths, changed.count);
                // Only a run records them all; a cache hit lists none.
                if !checks.pending.is_empty() {
                    seen.uncovered = set.uncovered(repo, &tree)?;
                }
                seen.pending = checks.pending;
                seen.provers_now = Some(checks.provers);
                seen.cached_weakened = checks.weakened;
                let facts = tree_facts(&tree, head_tree, checks.proof, Some(checks.facts));
                seen.state = Some(tree);
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
                seen.cached_weakened = record
                    .tests_weakened
                    .iter()
                    .map(WeakeningFound::of_state)
                    .collect();
            }
            let facts = tree_facts(&tree, head_tree, best.map(|record| record.outcome), None);
            seen.state = Some(tree);
            facts
        }
        Err(error) if error.is_worktree_content() => State::ContentError(error_chain(&error)),
        Err(error) => return Err(error.into()),
    };
    observed.state = Some(facts);
    Ok(seen)
}

/// The facts of a state read whole: its tree, HEAD's, its verify.sh, how it stands on record.
fn tree_facts(
    tree: &StateTree,
    head_tree: Option<ObjectId>,
    proof: Option<Outcome>,
    checks: Option<ChecksFacts>,
) -> State {
    State::Tree {
        tree: tree.id,
        head_tree,
        verify: tree.verify.map(|(blob, mode)| Script { blob, mode }),
        proof,
        checks,
    }
}

/// The rules that hide paths of `tree` on disk, changed since the session's `anchor`: those of
/// ignored `.gitignore` files inside the worktree, and, when `ignores_changed`, those from
/// outside it.
fn hiding_rules(
    repo: &Repo,
    anchor: &Anchor,
    tree: &StateTree,
    ignores_changed: bool,
) -> Result<Vec<HidingRule>, Error> {
    let since = std::time::SystemTime::from(anchor.time);
    let outside = if ignores_changed {
        repo.hidden_by_outside_rules(tree, since)?
    } else {
        Vec::new()
    };
    let inside = repo.hiding_rules(tree, since)?;
    Ok(outside
        .into_iter()
        .map(|found| (found, true))
        .chain(inside.into_iter().map(|found| (found, false)))
        .map(|(found, outside)| HidingRule {
            rule: found.rule,
            hidden: found.hidden,
            count: found.count,
            outside,
        })
        .collect())
}

/// What the session started from, to compare the stop's scripts with: verify.sh and the checks'
/// scripts as the anchor recorded them, else as HEAD has them.
struct Baselines {
    /// verify.sh as the session started with it (the record's `verify-anchor`).
    verify: Option<Script>,
    /// The diff of verify.sh and of the checks' scripts since then, when any was edited.
    diff: Option<String>,
    /// The checks file and the checks' scripts then, with their texts.
    provers: Option<Vec<Prover>>,
}

impl Baselines {
    /// Read the baselines, setting `observed.verify_at_head` and, without an anchor,
    /// `observed.provers_at_head`.
    fn read(
        repo: &Repo,
        arming: &Arming,
        anchor: Option<&Anchor>,
        head_tree: Option<ObjectId>,
        seen: &StateSeen,
        observed: &mut Observed,
    ) -> Result<Baselines, Error> {
        let current_verify = seen
            .state
            .as_ref()
            .and_then(|tree| tree.verify)
            .map(|(blob, mode)| Script { blob, mode });
        // Without an anchor, HEAD's verify.sh is the baseline (only read then: the cache-hit
        // path with an anchor reads nothing more).
        let at_head = match (anchor, head_tree) {
            (None, Some(tree)) if arming.armed_now.is_armed() => Some(repo.tree_verify(tree)?),
            _ => None,
        };
        let provers = provers_before(repo, anchor, head_tree, arming.has_checks)?;
        if anchor.is_none() {
            observed.provers_at_head = provers
                .as_ref()
                .map(|provers| provers.iter().map(|p| (p.path.clone(), p.script)).collect());
        }
        let at_head =
            at_head.map(|found| found.map(|(blob, mode, data)| (Script { blob, mode }, data)));
        observed.verify_at_head = at_head
            .as_ref()
            .map(|found| found.as_ref().map(|(script, _)| *script));
        // HEAD's verify.sh is a baseline only where it differs: an unedited one leaves the
        // record as it always was (`verify-anchor: none` without an anchor).
        let (verify, text) = match (anchor, at_head) {
            (Some(anchor), _) => (anchor.verify, anchor.verify_text.clone()),
            (None, Some(Some((script, data)))) if Some(script) != current_verify => (
                Some(script),
                Some(String::from_utf8_lossy(&data).into_owned()),
            ),
            (None, _) => (None, None),
        };
        let diff = match (anchor, verify) {
            (Some(_), baseline) | (None, baseline @ Some(_)) if baseline != current_verify => {
                verify_diff(
                    text.as_deref().unwrap_or(""),
                    &verify_text(repo).unwrap_or_default(),
                )
            }
            _ => None,
        };
        let diff = match checks_diff(provers.as_deref(), seen.provers_now.as_deref()) {
            None => diff,
            Some(more) => Some(format!("{}{more}", diff.unwrap_or_default())),
        };
        Ok(Baselines {
            verify,
            diff,
            provers,
        })
    }
}

/// The checks' baseline: the anchor's, else HEAD's when it has a checks file.
fn provers_before(
    repo: &Repo,
    anchor: Option<&Anchor>,
    head_tree: Option<ObjectId>,
    has_checks: bool,
) -> Result<Option<Vec<Prover>>, Error> {
    Ok(match (anchor, head_tree) {
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
    })
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
    weakened: Vec<WeakeningFound>,
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
            check
                .runnable()
                .err()
                .map(|why| (check.name.clone(), check.run.clone(), why))
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
                    .map(|line| WeakeningFound::of_check(name, line)),
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
