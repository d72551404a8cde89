//! One stop, end to end: resolve the context, observe, decide (running verify.sh if asked),
//! act, and hand back a reply as data. Session starts record the anchor. The agent hosts'
//! hooks call these two functions and nothing else of the gate.
//!
//! Every path ends in a reply: a failure of the gate itself becomes a loud "could not check
//! this turn", never a quiet pass.

use std::path::Path;

use super::act;
use super::ahead;
use super::anchor::{Anchor, Prover};
use super::decide::{Verdict, decide};
use super::error::{Error, error_chain};
use super::event::{Prompt, Start, Stop, Subagent};
use super::host::HostRules;
use super::ledger::{AnsweredAhead, LedgerActual, append_ledger};
use super::observe::{self, Observation, verify_text, worktree};
use super::scope::{self, Target};
use super::session_index::{self, SessionIndex};
use super::turn::{Answer, Facts, TurnState};
use crate::context::policy::HookPolicy;
use crate::context::{Clock, Context};
use crate::git::{
    self, ANCHORS_REF, ObjectId, Repo, SessionFiles, StateTree, session_key, session_key_blob,
};
use crate::outcome::Outcome;
use crate::proof::{CheckSet, Script};
use crate::verify::Environment;

/// What the gate answers an event with, before it is worded (`report::reply`) and delivered in
/// the host's protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// Nothing to say: outside a repository, an opted-out one, or a session start.
    Silent,
    /// A session start in a repository where the gate was never announced: say it is armed.
    Announce,
    /// A session start, asked to announce, in a repository without an armed verify.sh where
    /// this was never said: the gate is inert here, and how to arm it.
    Inert,
    /// A lens or oracle run of `git prove-it claim`: its stops are not a user's turns.
    StandAside { round: String },
    /// The gate decided.
    Answer(Answer),
    /// The session's anchor could not be recorded; its stops will count as changes.
    AnchorNotRecorded(String),
    /// The session's anchor was recorded, but the session index could not be written: a stop
    /// whose cwd is elsewhere will not find this worktree.
    NotIndexed(String),
    /// The hook was called in another environment than its session started with (the agent's
    /// shell, say): nothing was run, recorded or started; the variables that differ.
    ForeignEnvironment { changed: Vec<String> },
    /// A tool call's end could not wake or start the worktree's prover: nothing is proven
    /// ahead, and the next stop runs what it must itself.
    NotProvingAhead(String),
    /// The gate could not decide: the turn ends unverified, loudly.
    CouldNotCheck(String),
    /// The stop's cwd is in an armed repository this session did not start in, while it started
    /// in others: that repository's verify.sh was not run.
    NotGated { worktree: String },
    /// The stop's cwd could not be read; the worktrees the session started in were gated.
    CwdUnreadable(String),
    /// A worktree the session started in can no longer be gated as one (bare now, its .git
    /// gone or replaced): the turn ends unverified, loudly.
    WorktreeGone { worktree: String, error: String },
    /// A stop about more than one worktree, or about one that is not the cwd's: each part's
    /// reply, named by its worktree where the words do not name it.
    Several(Vec<Part>),
    /// A stop while background tasks of the agent are still alive (as the host describes
    /// each): `reply` is about the state as of this stop, and the words say so, naming them.
    Background {
        tasks: Vec<String>,
        reply: Box<Reply>,
    },
}

/// One worktree's part of a stop's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// The worktree the reply is about, when its words must name it.
    pub worktree: Option<String>,
    pub reply: Reply,
}

/// The repository an event's `cwd` is in; `None` when it is in none (nothing to gate).
fn repository(cwd: &Path) -> Result<Option<Repo>, git::Error> {
    match Repo::discover_at(cwd) {
        Ok(repo) => Ok(Some(repo)),
        Err(git::Error::NotARepository { .. } | git::Error::Bare { .. }) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Whether a session start says its session goes on (resumed, cleared or compacted) rather
/// than starting.
fn resumed(event: &Start) -> bool {
    matches!(
        event.source.as_deref(),
        Some("resume" | "clear" | "compact")
    )
}

/// SessionStart: record the anchor, unless this session already has one in this worktree
/// (resume, compact and clear keep the first), and note the worktree in the per-user session
/// index. Repositories that are not armed get nothing.
/// `environment` is the hook's (`None`: not known, nothing recorded nor compared).
pub(crate) fn session_start(
    hook: &HookPolicy,
    event: &Start,
    announce: bool,
    environment: Option<&Environment>,
) -> Reply {
    session_start_in(&SessionIndex::locate(), hook, event, announce, environment)
}

fn session_start_in(
    index: &Result<SessionIndex, session_index::Error>,
    hook: &HookPolicy,
    event: &Start,
    announce: bool,
    environment: Option<&Environment>,
) -> Reply {
    // The claim gauntlet's runs are not a person's sessions: nothing is anchored for them.
    if hook.round.is_some() {
        return Reply::Silent;
    }
    match start(index, event, announce, environment) {
        Ok(reply) => reply,
        Err(Error::Index(error)) => Reply::NotIndexed(error_chain(&error)),
        Err(error) => Reply::AnchorNotRecorded(error_chain(&error)),
    }
}

fn start(
    index: &Result<SessionIndex, session_index::Error>,
    event: &Start,
    announce: bool,
    environment: Option<&Environment>,
) -> Result<Reply, Error> {
    let Some(repo) = repository(&event.cwd)? else {
        return Ok(Reply::Silent);
    };
    let armed = repo.armed()?;
    // A verify.sh link that cannot be followed is no opt-out: the anchor is tried, and says
    // why it cannot be recorded.
    if !armed.is_armed() && armed.link_problem().is_none() && !crate::proof::has_checks_file(&repo)?
    {
        // With the plugin installed user-wide, sessions start in every repository: say once
        // per repository that the gate is inert there and how to arm it.
        // A marker that cannot be written keeps the session start silent, as before.
        if announce && matches!(repo.mark_told_inert(), Ok(true)) {
            return Ok(Reply::Inert);
        }
        return Ok(Reply::Silent);
    }
    let ctx = Context::resolve(repo, None);
    let repo = &ctx.repo;
    let worktree = worktree(repo)?;
    let key = session_key(&event.session, &worktree);
    // The index is written once the anchor is there, so that an entry always has its anchor.
    let index_it = || -> Result<(), Error> {
        match index {
            Ok(index) => {
                index.prune(&event.session);
                Ok(index.add(&event.session, &worktree)?)
            }
            // The one way locating the index fails.
            Err(_) => Err(Error::Index(session_index::Error::NoHome)),
        }
    };
    let files = SessionFiles::open(repo, &key)?;
    if let Some(reply) = anchored_before(repo, &files, key, event, environment)? {
        if matches!(reply, Reply::Silent) {
            index_it()?;
        }
        return Ok(reply);
    }
    let anchor = new_anchor(&ctx, event, &worktree, environment)?;
    let text = anchor.render();
    let key_blob = repo
        .write_blob(session_key_blob(&event.session, &worktree))
        .map_err(Error::AnchorKey)?;
    debug_assert_eq!(key_blob, key);
    repo.notes(ANCHORS_REF).update(
        key,
        &format!("prove-it: anchor for session {}", one_line(&event.session)),
        |existing| {
            if existing.is_empty() {
                text.clone()
            } else {
                existing.to_string()
            }
        },
    )?;
    // The session's own copy of its anchor, against which every stop checks the note: a
    // deleted or rewritten anchor is then refused, never read as "unchanged".
    if let Some(recorded) = repo.notes(ANCHORS_REF).lookup(&key)? {
        files.store_seal(recorded.as_bytes())?;
    }
    index_it()?;
    if announce && repo.mark_announced()? {
        return Ok(Reply::Announce);
    }
    Ok(Reply::Silent)
}

/// A session start where the session already has an anchor (its copy, else the note): `Silent`
/// when the session goes on with it (its entry in the session index to be written), the
/// refusal of a start from another environment; `None` when there is no anchor yet.
fn anchored_before(
    repo: &Repo,
    files: &SessionFiles,
    key: ObjectId,
    event: &Start,
    environment: Option<&Environment>,
) -> Result<Option<Reply>, Error> {
    let seal = files
        .load_seal()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let note = repo.notes(ANCHORS_REF).lookup(&key)?;
    let Some(anchor) = seal
        .as_deref()
        .or(note.as_deref())
        .and_then(|text| Anchor::parse(text).ok())
    else {
        return Ok(None);
    };
    let Some(now) = environment.filter(|now| anchor.environment_differs(now).is_some()) else {
        return Ok(Some(Reply::Silent));
    };
    // A session resumed (or cleared, or compacted) by its host may run in another process
    // with another environment: the session goes on in that one. Only what the environment
    // digest says changes; the proofs that count from before the session do not. An untouched
    // anchor only: a tampered one stays as it is, for the stop to refuse.
    if resumed(event) && (seal.is_none() || seal == note) {
        let text = Anchor {
            env: Some(now.digest()),
            env_vars: now.by_name(&anchor.session),
            ..anchor
        }
        .render();
        let message = format!(
            "prove-it: anchor for session {}, resumed in another environment",
            one_line(&event.session)
        );
        repo.notes(ANCHORS_REF)
            .update(key, &message, |_| text.clone())?;
        files.store_seal(text.as_bytes())?;
        return Ok(Some(Reply::Silent));
    }
    // A session start from another environment (the agent's shell) starts nothing on the
    // session's behalf: not even its entry in the session index.
    let changed = anchor.environment_differs(now).unwrap_or_default();
    Ok(Some(Reply::ForeignEnvironment { changed }))
}

/// The anchor of a session starting now in `worktree`: the state it starts from and what
/// proves it, and the policy it starts under.
fn new_anchor(
    ctx: &Context,
    event: &Start,
    worktree: &std::path::Path,
    environment: Option<&Environment>,
) -> Result<Anchor, Error> {
    let repo = &ctx.repo;
    let gate_policy = ctx.gate.clone()?;
    let policy = ctx.policy.clone()?;
    // A worktree the state tree cannot be computed for still gets an anchor: every stop of the
    // session then counts as a change, and the content error is reported there.
    // Its trees are kept, for a stop to compare its state with directory by directory.
    let state = repo.anchor_state_tree().ok();
    let checks = StartingChecks::read(repo, state.as_ref())?;
    Ok(Anchor {
        session: event.session.clone(),
        worktree: worktree.display().to_string(),
        time: ctx.clock.now_seconds(),
        state_tree: state.as_ref().map(|s| s.id),
        head_tree: repo.head_tree()?,
        verify: state
            .as_ref()
            .and_then(|s| s.verify)
            .map(|(blob, mode)| Script { blob, mode }),
        max_blocks: gate_policy.max_blocks,
        timeout_secs: policy.timeout.as_secs(),
        retries: policy.retries,
        sign: ctx.signed_only,
        verify_edits: gate_policy.verify_edits,
        filters: Some(repo.filter_digest()),
        ignores: Some(repo.ignore_digest()),
        env: environment.map(Environment::digest),
        env_vars: environment.map_or_else(Vec::new, |env| env.by_name(&event.session)),
        proofs_at_start: repo.proofs_tip()?,
        verify_text: verify_text(repo),
        provers: checks.provers,
        start_inputs: checks.start_inputs,
        weakening: gate_policy.weakening,
        protect: checks.protect.patterns,
        protect_tree: checks.protect_tree,
        ahead_off: !ctx.ahead.as_ref().is_ok_and(|ahead| ahead.on),
    })
}

/// What an anchor keeps of a starting state's checks file.
#[derive(Default)]
struct StartingChecks {
    /// The checks file and every check's script, with their texts.
    provers: Option<Vec<Prover>>,
    /// Each check's key in the starting state, where a failure from before the session would
    /// be on record (`act` looks there when a check fails).
    start_inputs: Vec<(String, ObjectId)>,
    /// The protected paths' list.
    protect: crate::proof::Protected,
    /// The protected paths' tree, as the session starts.
    protect_tree: Option<ObjectId>,
}

impl StartingChecks {
    fn read(repo: &Repo, state: Option<&StateTree>) -> Result<StartingChecks, Error> {
        let Some(state) = state else {
            return Ok(StartingChecks::default());
        };
        let set = if crate::proof::has_checks_file(repo)? {
            CheckSet::of_state(repo, state)
                .ok()
                .filter(|set| set.file.is_some())
        } else {
            None
        };
        let Some(set) = set else {
            return Ok(StartingChecks::default());
        };
        let provers =
            observe::provers_of(&set, &|path| repo.state_file(state, path, "check's script"))?;
        let start_inputs = set
            .checks
            .iter()
            .filter_map(|check| {
                let tree = repo.input_tree(state, &check.inputs, false).ok()?;
                Some((check.name.clone(), tree))
            })
            .collect();
        let protect = set
            .file
            .as_ref()
            .and_then(|(_, text)| crate::proof::Protected::of_text(text).ok())
            .unwrap_or_default();
        let protect_tree = if protect.is_empty() {
            None
        } else {
            let matcher = protect.matcher();
            Some(repo.protected_tree(state, &|path| matcher.holds(path))?)
        };
        Ok(StartingChecks {
            provers: Some(provers),
            start_inputs,
            protect,
            protect_tree,
        })
    }
}

/// SubagentStart: a subagent working in a worktree of its own (Claude Code's under
/// `.claude/worktrees/`) is anchored there as a session of its own (`event.session` is
/// [`Subagent::session`]), with its own budget. One working in a worktree its session gates
/// is not: the session's stop proves the same tree, and proofs are shared by tree.
pub(crate) fn subagent_start(
    host: &dyn HostRules,
    hook: &HookPolicy,
    event: &Start,
    of: &Subagent,
    environment: Option<&Environment>,
) -> Reply {
    let index = SessionIndex::locate();
    if in_sessions_worktree(&index, host, &event.cwd, &of.parent) {
        return Reply::Silent;
    }
    session_start_in(&index, hook, event, false, environment)
}

/// Whether `cwd` is in a worktree the stops of `session` gate: one it anchored, or the host's
/// project.
fn in_sessions_worktree(
    index: &Result<SessionIndex, session_index::Error>,
    host: &dyn HostRules,
    cwd: &Path,
    session: &str,
) -> bool {
    let Ok(Some(repo)) = repository(cwd) else {
        return false;
    };
    let Ok(root) = worktree(&repo) else {
        return false;
    };
    let project = host
        .project_dir()
        .and_then(|dir| repository(&dir).ok().flatten())
        .and_then(|repo| worktree(&repo).ok());
    if project.as_ref() == Some(&root) {
        return true;
    }
    let at = Stop {
        session: session.to_string(),
        turn: None,
        cwd: cwd.to_path_buf(),
        stop_hook_active: false,
        claim: None,
        transcript: None,
        background: Vec::new(),
    };
    scope::stop(index, host, &at)
        .targets
        .iter()
        .any(|target| matches!(target, Target::Gate { worktree, anchored: true, .. } if *worktree == root))
}

/// SubagentStop: gated as a stop in the worktrees the subagent anchored at its start, and
/// nowhere else (its session's stop gates the rest). A subagent that anchored nothing (it
/// worked in its session's worktree) is answered with nothing.
pub(crate) fn subagent_stop(host: &dyn HostRules, hook: &HookPolicy, event: &Stop) -> Reply {
    stop_in(
        &SessionIndex::locate(),
        &OwnWorktrees(host),
        hook,
        event,
        true,
    )
}

/// A host's rules for a subagent's stop: the host's project is its session's, not the
/// subagent's.
struct OwnWorktrees<'a>(&'a dyn HostRules);

impl HostRules for OwnWorktrees<'_> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn block_budget(&self, policy: u32) -> u32 {
        self.0.block_budget(policy)
    }
    fn shows_notices(&self) -> bool {
        self.0.shows_notices()
    }
    fn claim(&self, stop: &Stop, previous_answer_ns: Option<u64>) -> Option<String> {
        self.0.claim(stop, previous_answer_ns)
    }
    fn environment(&self) -> Option<&Environment> {
        self.0.environment()
    }
}

/// Stop: may this turn end? Every worktree the session anchored is gated, wherever the stop's
/// `cwd` points (`scope`).
/// `hook`: the hook's own settings, read once by its caller.
pub(crate) fn stop(host: &dyn HostRules, hook: &HookPolicy, event: &Stop) -> Reply {
    stop_in(&SessionIndex::locate(), host, hook, event, false)
}

/// `own_only`: a subagent's stop, which gates only the worktrees it anchored, and says nothing
/// of the others.
fn stop_in(
    index: &Result<SessionIndex, session_index::Error>,
    host: &dyn HostRules,
    hook: &HookPolicy,
    event: &Stop,
    own_only: bool,
) -> Reply {
    let started_ns = Clock::system().now_ns();
    // Skipping is a person's act, read from the hook's environment, never from git config.
    let skip = match &hook.skip {
        Ok(skip) => *skip,
        Err(error) => return Reply::CouldNotCheck(error.to_string()),
    };
    // A lens or oracle run of `git prove-it claim` edits nothing it must prove; its stops are
    // not turns of the user's. Stand aside, visibly.
    if let Some(round) = &hook.round {
        return Reply::StandAside {
            round: round.clone(),
        };
    }
    let mut scope = scope::stop(index, host, event);
    if own_only {
        let anchored = |target: &Target| {
            matches!(
                target,
                Target::Gate { anchored: true, .. }
                    | Target::Broken {
                        worktree: Some(_),
                        ..
                    }
            )
        };
        if !scope.targets.iter().any(anchored) {
            return Reply::Silent;
        }
        scope.targets.retain(anchored);
    }
    // Rule 1: a person's deliberate bypass ends the turn, visibly, once for every worktree.
    if skip {
        return skipped(scope.targets, host, event);
    }
    let parts = scope
        .targets
        .into_iter()
        .map(|target| part(target, host, event, started_ns));
    // Rule 2: outside a repository there is nothing to gate.
    let mut parts: Vec<Part> = parts.filter(|part| part.reply != Reply::Silent).collect();
    let cwd = scope.cwd_worktree.map(|path| path.display().to_string());
    let reply = match parts.len() {
        0 => return Reply::Silent,
        // The cwd's own worktree alone: answered as it always was, without naming it.
        1 if parts[0].worktree.is_none() || parts[0].worktree == cwd => {
            parts.pop().expect("one part").reply
        }
        _ => Reply::Several(parts),
    };
    // Work still running may change the state after this verdict: never let that pass unsaid.
    if event.background.is_empty() {
        reply
    } else {
        Reply::Background {
            tasks: event.background.clone(),
            reply: Box::new(reply),
        }
    }
}

/// The stop's answer when a person skipped the check (`PROVE_IT_SKIP=1`): on the ledger of
/// every worktree it would have gated.
fn skipped(targets: Vec<Target>, host: &dyn HostRules, event: &Stop) -> Reply {
    for target in targets {
        if let Target::Gate { repo, .. } = target {
            let ctx = Context::resolve(*repo, None);
            if ledger_on(&ctx) {
                let actual = LedgerActual::Skipped(None);
                if let Err(error) = append_ledger(&ctx, host, event, None, actual, None) {
                    return Reply::CouldNotCheck(error_chain(&error));
                }
            }
        }
    }
    Reply::Answer(Answer {
        verdict: Verdict::Skipped,
        facts: Facts::default(),
        to_the_agent: false,
    })
}

/// One target's part of a stop's answer: a worktree gated, or what keeps one from being so.
fn part(target: Target, host: &dyn HostRules, event: &Stop, started_ns: u64) -> Part {
    match target {
        Target::Gate {
            repo,
            worktree,
            anchored,
        } => Part {
            reply: gate_worktree(
                &Context::resolve(*repo, None),
                host,
                event,
                started_ns,
                anchored,
            ),
            worktree: Some(worktree.display().to_string()),
        },
        Target::NotGated { worktree } => Part {
            worktree: None,
            reply: Reply::NotGated {
                worktree: worktree.display().to_string(),
            },
        },
        Target::Broken {
            worktree: Some(worktree),
            error,
        } => Part {
            worktree: None,
            reply: Reply::WorktreeGone {
                worktree: worktree.display().to_string(),
                error: error_chain(&error),
            },
        },
        Target::Broken {
            worktree: None,
            error,
        } => Part {
            worktree: None,
            reply: Reply::CouldNotCheck(error_chain(&error)),
        },
        Target::CwdUnreadable { error } => Part {
            worktree: None,
            reply: Reply::CwdUnreadable(error_chain(&error)),
        },
    }
}

/// A person's prompt: in every worktree this session anchored (as a stop finds them, `scope`),
/// a turn whose last answer let it end is marked, so that the next stop starts a new turn and
/// a new budget (`TurnState::prompt`). Always silent: the host must not take anything from the
/// gate as its answer to a prompt (Gemini CLI would block the prompt, Claude Code add it to the
/// model's context), and a worktree whose mark could not be written keeps its count, which is
/// only ever stricter.
/// A prompt from another environment than the session's marks nothing, and is said (the
/// hook says it on stderr only).
pub(crate) fn prompt(host: &dyn HostRules, hook: &HookPolicy, event: &Prompt) -> Reply {
    prompt_in(&SessionIndex::locate(), host, hook, event)
        .into_iter()
        .find_map(|marked| match marked {
            Err(Error::ForeignEnvironment(changed)) => Some(Reply::ForeignEnvironment { changed }),
            _ => None,
        })
        .unwrap_or(Reply::Silent)
}

/// [`prompt`], saying per worktree gated whether its next stop starts a new turn.
fn prompt_in(
    index: &Result<SessionIndex, session_index::Error>,
    host: &dyn HostRules,
    hook: &HookPolicy,
    event: &Prompt,
) -> Vec<Result<bool, Error>> {
    if hook.round.is_some() {
        return Vec::new();
    }
    // A stop of the same session from the same cwd finds the worktrees its turn is counted in.
    let at = Stop {
        session: event.session.clone(),
        turn: None,
        cwd: event.cwd.clone(),
        stop_hook_active: false,
        claim: None,
        transcript: None,
        background: Vec::new(),
    };
    scope::stop(index, host, &at)
        .targets
        .into_iter()
        .filter_map(|target| match target {
            Target::Gate { repo, anchored, .. } => Some(mark_prompt(
                &Context::resolve(*repo, None),
                host,
                event,
                anchored,
            )),
            _ => None,
        })
        .collect()
}

/// Mark the prompt in one worktree's turn state, under the session's lock.
fn mark_prompt(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Prompt,
    anchored: bool,
) -> Result<bool, Error> {
    let repo = &ctx.repo;
    // A repository the session did not anchor and that is not armed has no turn state, and
    // gets none.
    if !anchored && !repo.armed()?.is_armed() {
        return Ok(false);
    }
    let files = SessionFiles::open(repo, &session_key(&event.session, &worktree(repo)?))?;
    let _lock = files.lock()?;
    let seal = files
        .load_seal()
        .and_then(|bytes| Anchor::parse(&String::from_utf8_lossy(&bytes)).ok());
    if let Some(changed) = seal
        .zip(host.environment())
        .and_then(|(anchor, now)| anchor.environment_differs(now))
    {
        return Err(Error::ForeignEnvironment(changed));
    }
    let Some(bytes) = files.load() else {
        return Ok(false);
    };
    let mut turn = TurnState::load(Some(&bytes), ctx.clock.now_ns());
    if !turn.prompt() {
        return Ok(false);
    }
    files.store(&turn.to_bytes())?;
    Ok(true)
}

fn ledger_on(ctx: &Context) -> bool {
    ctx.gate.as_ref().is_ok_and(|policy| policy.ledger)
}

/// One worktree's answer: its errors are a loud "could not check", in the ledger too.
fn gate_worktree(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    started_ns: u64,
    anchored: bool,
) -> Reply {
    match gate(ctx, host, event, started_ns, anchored) {
        Ok(reply) => reply,
        Err(error) => {
            let text = error_chain(&error);
            if ledger_on(ctx) {
                // The failure is reported below either way; a ledger that cannot be written
                // adds nothing the user could act on.
                let actual = LedgerActual::CouldNotCheck(&text);
                let _ = append_ledger(ctx, host, event, None, actual, None);
            }
            Reply::CouldNotCheck(text)
        }
    }
}

/// One stop in a repository, flowing down once: observe (settled: a run in flight for the
/// state waited for), decide, act (the run, when asked for, and the turn's state saved), and
/// the answer the report words.
fn gate(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    started_ns: u64,
    anchored: bool,
) -> Result<Reply, Error> {
    let mut seen = match observe::stop(ctx, host, event, started_ns, anchored)? {
        Observation::OptedOut => return Ok(Reply::Silent),
        Observation::Answered(answer) => return Ok(Reply::Answer(*answer)),
        Observation::ForeignEnvironment(changed) => {
            return Ok(Reply::ForeignEnvironment { changed });
        }
        Observation::Stop(seen) => *seen,
    };
    let decision = decide(&seen.observed);
    let (verdict, log) = act::verdict(ctx, host, event, &mut seen, decision)?;
    // Asked only where the ledger would say it: a cache hit's stop stays as fast as it was.
    if seen.observed.run.is_none()
        && ledger_on(ctx)
        && matches!(
            verdict.outcome(),
            Outcome::Proven | Outcome::BoundedClaimSurvives
        )
        && (seen.waited_ahead || ahead::made_ahead(ctx, &seen))
    {
        let waited = Clock::system().now_ns().saturating_sub(started_ns) / 1_000_000;
        seen.answered_ahead = Some(AnsweredAhead {
            joined: seen.waited_ahead,
            waited_ms: waited,
        });
    }
    Ok(Reply::Answer(act::record(
        ctx, host, event, seen, verdict, log,
    )?))
}

fn one_line(value: &str) -> String {
    value.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::process::Command;

    use super::*;
    use crate::gate::{Failing, Quiet, Why};

    /// The gate's settings read from no environment but the test's own: never the developer's
    /// `PROVE_IT_SKIP` or `PROVE_IT_BUDGET`.
    fn hermetic() -> crate::context::Hermetic {
        crate::context::Hermetic::with(&[])
    }

    /// The hook's settings, read as the hook reads them: from the test's environment alone.
    fn hook_policy() -> HookPolicy {
        HookPolicy::resolve(&crate::context::Settings::environment())
    }

    /// A host without a cap that shows no notices, as Codex does.
    struct NoNotices;

    impl HostRules for NoNotices {
        fn name(&self) -> &'static str {
            "test"
        }
        fn block_budget(&self, policy: u32) -> u32 {
            policy
        }
        fn shows_notices(&self) -> bool {
            false
        }
        fn claim(&self, stop: &Stop, _: Option<u64>) -> Option<String> {
            stop.claim.clone()
        }
    }

    /// A repository in a temporary directory with one commit of `files`.
    fn repo(files: &[(&str, &str, u32)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
                .args(args)
                .current_dir(dir.path())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        git(&["init", "-q"]);
        for (name, text, mode) in files {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(*mode))
                .unwrap();
        }
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "initial"]);
        dir
    }

    /// Each test's own session index, beside its repository's objects: the tests share session
    /// ids, and must never write into the user's home.
    fn index_of(dir: &Path) -> Result<SessionIndex, session_index::Error> {
        Ok(SessionIndex::at(
            dir.join(".git").join("test-session-index"),
        ))
    }

    fn session_start(event: &Start, announce: bool) -> Reply {
        let _hermetic = hermetic();
        session_start_in(&index_of(&event.cwd), &hook_policy(), event, announce, None)
    }

    fn stop(host: &dyn HostRules, event: &Stop) -> Reply {
        let _hermetic = hermetic();
        stop_in(&index_of(&event.cwd), host, &hook_policy(), event, false)
    }

    fn start(dir: &Path) -> Start {
        Start {
            session: "s1".into(),
            cwd: dir.to_path_buf(),
            source: None,
        }
    }

    fn stop_event(dir: &Path, active: bool) -> Stop {
        Stop {
            session: "s1".into(),
            turn: None,
            cwd: dir.to_path_buf(),
            stop_hook_active: active,
            claim: Some("all tests pass".into()),
            transcript: None,
            background: Vec::new(),
        }
    }

    fn answer(reply: Reply) -> Answer {
        match reply {
            Reply::Answer(answer) => answer,
            other => panic!("not an answer: {other:?}"),
        }
    }

    fn state_dir(dir: &Path) -> PathBuf {
        dir.join(".git").join("prove-it")
    }

    #[test]
    fn a_repository_without_verify_sh_is_left_without_a_trace() {
        let dir = repo(&[("a.txt", "a\n", 0o644)]);
        assert_eq!(session_start(&start(dir.path()), false), Reply::Silent);
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        assert_eq!(
            stop(&NoNotices, &stop_event(dir.path(), false)),
            Reply::Silent
        );
        assert!(!state_dir(dir.path()).exists());
    }

    #[test]
    fn an_unchanged_session_ends_quietly_and_runs_nothing() {
        let dir = repo(&[("verify.sh", "#!/bin/sh\nexit 1\n", 0o755)]);
        assert_eq!(session_start(&start(dir.path()), false), Reply::Silent);
        let answer = answer(stop(&NoNotices, &stop_event(dir.path(), false)));
        assert_eq!(answer.verdict, Verdict::Quiet(Quiet::Unchanged));
        assert!(!answer.to_the_agent);
    }

    /// A stop on its own thread, its verdict sent back when it answers.
    fn stop_on_a_thread(dir: &Path) -> std::sync::mpsc::Receiver<Verdict> {
        let (tx, rx) = std::sync::mpsc::channel();
        let dir = dir.to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(answer(stop(&NoNotices, &stop_event(&dir, false))).verdict);
        });
        rx
    }

    /// Another session's run holds the worktree: a stop whose session changed nothing has
    /// nothing to run, and answers at once instead of waiting for that run to end.
    #[test]
    fn a_stop_that_changed_nothing_never_waits_for_another_sessions_run() {
        let dir = repo(&[("verify.sh", "#!/bin/sh\nexit 1\n", 0o755)]);
        session_start(&start(dir.path()), false);
        let repo = Repo::discover_at(dir.path()).unwrap();
        let _other = git::RunLock::of(&repo, &worktree(&repo).unwrap())
            .unwrap()
            .hold()
            .unwrap();
        let verdict = stop_on_a_thread(dir.path())
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the stop answers while the other run goes on");
        assert_eq!(verdict, Verdict::Quiet(Quiet::Unchanged));
    }

    /// A stop with a state to prove waits for another session's run on the worktree to end,
    /// then looks again and runs: one run at a time on a worktree.
    #[test]
    fn a_stop_with_a_change_waits_for_another_sessions_run_then_runs() {
        let dir = repo(&[("verify.sh", "#!/bin/sh\necho 1 failed\nexit 1\n", 0o755)]);
        session_start(&start(dir.path()), false);
        std::fs::write(dir.path().join("new.txt"), "work\n").unwrap();
        let repo = Repo::discover_at(dir.path()).unwrap();
        let other = git::RunLock::of(&repo, &worktree(&repo).unwrap())
            .unwrap()
            .hold()
            .unwrap();
        let answered = stop_on_a_thread(dir.path());
        assert!(
            answered
                .recv_timeout(std::time::Duration::from_secs(2))
                .is_err(),
            "the stop waits while the other run holds the worktree"
        );
        drop(other);
        let verdict = answered
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the stop answers once the other run ended");
        assert!(
            matches!(verdict, Verdict::Block { attempt: 1, .. }),
            "{verdict:?}"
        );
    }

    /// The saved turn state is the verdict and its facts, so a second hook process for the same
    /// stop gives the same answer without reading rendered text back.
    #[test]
    fn a_failing_change_blocks_and_the_saved_turn_is_the_verdict_as_data() {
        let dir = repo(&[("verify.sh", "#!/bin/sh\necho 1 failed\nexit 1\n", 0o755)]);
        session_start(&start(dir.path()), false);
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let first = answer(stop(&NoNotices, &stop_event(dir.path(), false)));
        let Verdict::Block { why, attempt, max } = &first.verdict else {
            panic!("a block: {first:?}")
        };
        assert_eq!((*attempt, *max), (1, 3));
        assert!(
            matches!(why, Why::Failed { exit_code: Some(1), failing, .. } if Failing::lines(failing) == ["1 failed"])
        );
        assert!(first.facts.log.is_some() && first.facts.tree.is_some());

        let sessions = state_dir(dir.path()).join("sessions");
        let saved = std::fs::read_dir(&sessions)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.extension().is_some_and(|e| e == "json"))
            .unwrap();
        let turn = super::super::turn::TurnState::from_bytes(Some(&std::fs::read(saved).unwrap()));
        assert_eq!(turn.blocks, 1);
        assert_eq!(turn.last.unwrap().answer, first);
    }

    /// Where the host shows no notices, the turn's end unverified is told to the agent as one
    /// last block, once.
    #[test]
    fn a_spent_budget_is_told_to_the_agent_once_where_notices_are_not_shown() {
        let dir = repo(&[("verify.sh", "#!/bin/sh\nexit 1\n", 0o755)]);
        session_start(&start(dir.path()), false);
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let first = answer(stop(&NoNotices, &stop_event(dir.path(), false)));
        assert!(matches!(first.verdict, Verdict::Block { attempt: 1, .. }));
        for attempt in 2..=3 {
            let next = answer(stop(&NoNotices, &stop_event(dir.path(), true)));
            assert!(
                matches!(next.verdict, Verdict::Block { attempt: a, .. } if a == attempt),
                "{next:?}"
            );
        }
        let spent = answer(stop(&NoNotices, &stop_event(dir.path(), true)));
        assert!(matches!(spent.verdict, Verdict::Yield { max: 3, .. }));
        assert!(spent.to_the_agent, "told to the agent as a last block");
        let again = answer(stop(&NoNotices, &stop_event(dir.path(), true)));
        assert!(matches!(again.verdict, Verdict::Yield { .. }));
        assert!(!again.to_the_agent, "only once a turn");
    }

    fn prompt(dir: &Path) -> Vec<bool> {
        let event = Prompt {
            session: "s1".into(),
            cwd: dir.to_path_buf(),
        };
        let _hermetic = hermetic();
        prompt_in(&index_of(dir), &NoNotices, &hook_policy(), &event)
            .into_iter()
            .map(Result::unwrap)
            .collect()
    }

    /// On a host without a turn id whose every stop may continue the
    /// counted turn (Gemini CLI), a person's next prompt after the yield got no block at all.
    #[test]
    fn a_prompt_after_the_yield_gives_the_next_turn_its_whole_budget() {
        let dir = repo(&[("verify.sh", "#!/bin/sh\nexit 1\n", 0o755)]);
        session_start(&start(dir.path()), false);
        assert_eq!(prompt(dir.path()), [false], "nothing answered yet");
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let attempts = |expected: &[u32]| {
            for &attempt in expected {
                let next = answer(stop(&NoNotices, &stop_event(dir.path(), true)));
                assert!(
                    matches!(next.verdict, Verdict::Block { attempt: a, .. } if a == attempt),
                    "{next:?}"
                );
            }
        };
        attempts(&[1, 2, 3]);
        let spent = answer(stop(&NoNotices, &stop_event(dir.path(), true)));
        assert!(matches!(spent.verdict, Verdict::Yield { .. }) && spent.to_the_agent);
        // The agent, told the yield as a last block, is still at work: a prompt now is its own.
        assert_eq!(prompt(dir.path()), [false]);
        let ended = answer(stop(&NoNotices, &stop_event(dir.path(), true)));
        assert!(matches!(ended.verdict, Verdict::Yield { .. }) && !ended.to_the_agent);
        // The person's next prompt: the same stop (same turn id, flag set) starts afresh.
        assert_eq!(prompt(dir.path()), [true]);
        attempts(&[1, 2, 3]);
        let spent = answer(stop(&NoNotices, &stop_event(dir.path(), true)));
        assert!(spent.to_the_agent, "the new turn is told its yield too");
    }

    /// The trap of a prompt starting a new turn: the agent can run `git prove-it hook <host>` from its shell
    /// with a prompt's payload. Mid-turn (after a block) that resets nothing.
    #[test]
    fn a_forged_prompt_mid_turn_resets_no_budget() {
        let dir = repo(&[("verify.sh", "#!/bin/sh\nexit 1\n", 0o755)]);
        session_start(&start(dir.path()), false);
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        for attempt in 1..=3 {
            assert_eq!(prompt(dir.path()), [false]);
            let next = answer(stop(&NoNotices, &stop_event(dir.path(), true)));
            assert!(
                matches!(next.verdict, Verdict::Block { attempt: a, .. } if a == attempt),
                "{next:?}"
            );
        }
        assert_eq!(prompt(dir.path()), [false]);
        let spent = answer(stop(&NoNotices, &stop_event(dir.path(), true)));
        assert!(matches!(spent.verdict, Verdict::Yield { .. }), "{spent:?}");
    }

    /// A prompt marks every worktree the session anchored, wherever its cwd is, and leaves a
    /// repository that is not armed without a trace.
    #[test]
    fn a_prompt_reaches_every_anchored_worktree_and_no_unarmed_one() {
        let dir = repo(&[("verify.sh", "#!/bin/sh\nexit 0\n", 0o755)]);
        session_start(&start(dir.path()), false);
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let passed = answer(stop(&NoNotices, &stop_event(dir.path(), false)));
        assert_eq!(passed.verdict, Verdict::Quiet(Quiet::Proven));
        let plain = repo(&[("a.txt", "a\n", 0o644)]);
        let event = Prompt {
            session: "s1".into(),
            cwd: plain.path().to_path_buf(),
        };
        let _hermetic = hermetic();
        let marked: Vec<bool> =
            prompt_in(&index_of(dir.path()), &NoNotices, &hook_policy(), &event)
                .into_iter()
                .map(Result::unwrap)
                .collect();
        assert_eq!(marked, [true]);
        assert_eq!(prompt(plain.path()), [false]);
        assert!(!state_dir(plain.path()).exists());
    }

    /// A stop whose cwd moved out of the repository (to a directory in no
    /// repository, or to one that does not exist) still gates the worktree the session started
    /// in, and names it.
    #[test]
    fn a_stop_whose_cwd_moved_away_gates_the_anchored_worktree() {
        let dir = repo(&[("verify.sh", "#!/bin/sh\nexit 1\n", 0o755)]);
        session_start(&start(dir.path()), false);
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let index = index_of(dir.path());
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().display().to_string();
        for cwd in [outside.path().to_owned(), dir.path().join("no/such/dir")] {
            let mut event = stop_event(&cwd, false);
            event.cwd = cwd;
            let _hermetic = hermetic();
            let Reply::Several(parts) = stop_in(&index, &NoNotices, &hook_policy(), &event, false)
            else {
                panic!("the anchored worktree is gated and named")
            };
            let gated = parts
                .iter()
                .find(|part| part.worktree.as_deref() == Some(root.as_str()))
                .expect("the anchored worktree");
            assert!(
                matches!(&gated.reply, Reply::Answer(a) if matches!(a.verdict, Verdict::Block { .. })),
                "{parts:?}"
            );
        }
    }
}
