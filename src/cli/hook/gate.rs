//! The gate around an agent host's events, host-neutral: observe the repository, decide (pure,
//! in `crate::gate`), act (run verify.sh, record, count), and hand a message to the host adapter.
//!
//! Every path ends in a message: a failure of the gate itself becomes a loud "could not check
//! this turn", never a quiet pass.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use gix::ObjectId;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::anchor::Anchor;
use crate::cli::sources::Sources;
use crate::gate::Message;
use crate::gate::{self, AnchorFacts, Decision, Observed, RunFacts, State, Verdict};
use crate::git::{
    self, ANCHORS_REF, LastAnswer, Notes, PROOFS_REF, Repo, SessionFiles, StateTree, ledger,
    session_key, session_key_blob,
};
use crate::hosts::{CLAUDE_BLOCK_CAP_ENV, Host, Start, Stop};
use crate::policy::{GatePolicy, Policy};
use crate::proof::{Proofs, Script};
use crate::prove::{self, Attempted};
use crate::report::{self, GateContext};

/// What the ledger says was demanded of every turn.
const EVIDENCE_DEMANDED: &str = "verify.sh exit 0";

/// The repository an event's `cwd` is in; `None` when it is in none (nothing to gate).
fn repository(cwd: &Path) -> anyhow::Result<Option<Repo>> {
    match Repo::discover_at(cwd) {
        Ok(repo) => Ok(Some(repo)),
        Err(git::Error::NotARepository { .. } | git::Error::Bare { .. }) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// The worktree as one stable path, so a session's key does not depend on how it was spelled.
fn worktree(repo: &Repo) -> Result<PathBuf, git::Error> {
    let root = repo.workdir()?;
    Ok(root.canonicalize().unwrap_or_else(|_| root.to_owned()))
}

/// SessionStart: record the anchor, unless this session already has one in this worktree
/// (resume, compact and clear keep the first). Repositories that are not armed get nothing.
pub(crate) fn session_start(event: &Start, announce: bool) -> anyhow::Result<Message> {
    if gauntlet_round().is_some() {
        return Ok(Message::Silent);
    }
    let Some(repo) = repository(&event.cwd)? else {
        return Ok(Message::Silent);
    };
    if !repo.armed()?.is_armed() {
        return Ok(Message::Silent);
    }
    let sources = Sources::of(&repo);
    let gate_policy = GatePolicy::resolve(&sources)?;
    let policy = Policy::resolve(None, &sources)?;
    let worktree = worktree(&repo)?;
    let key = session_key(&event.session, &worktree);
    let mut anchors = Notes::new(&repo.git, ANCHORS_REF);
    if anchors.lookup(&key)?.is_some() {
        return Ok(Message::Silent);
    }
    // A worktree the state tree cannot be computed for still gets an anchor: every stop of the
    // session then counts as a change, and the content error is reported there.
    let state = StateTree::compute(&repo.git, false).ok();
    let anchor = Anchor {
        session: event.session.clone(),
        worktree: worktree.display().to_string(),
        time: OffsetDateTime::now_utc()
            .replace_nanosecond(0)
            .expect("0 is a valid nanosecond"),
        state_tree: state.as_ref().map(|s| s.id),
        head_tree: repo.head_tree()?,
        verify: state
            .as_ref()
            .and_then(|s| s.verify)
            .map(|(blob, mode)| Script { blob, mode }),
        max_blocks: gate_policy.max_blocks,
        timeout_secs: policy.timeout.as_secs(),
        verify_text: verify_text(&repo),
    };
    let text = anchor.render();
    let key_blob = repo
        .git
        .write_blob(session_key_blob(&event.session, &worktree))
        .context("could not write the anchor's key")?;
    debug_assert_eq!(key_blob.detach(), key);
    anchors.update(
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
    if announce && first_announcement(&repo)? {
        return Ok(Message::Notice(
            "prove-it: the gate is armed in this repository: when a turn that changed it ends \
             on a working state never proven, verify.sh runs, and a failure sends the agent \
             back (at most 3 times a turn by default). Proofs are git notes under \
             refs/notes/prove-it; `git prove-it status` shows the current state. This notice \
             is shown once."
                .to_string(),
        ));
    }
    Ok(Message::Silent)
}

/// Whether the gate's announcement was never made in this repository; marks it made.
fn first_announcement(repo: &Repo) -> anyhow::Result<bool> {
    let marker = repo.state_dir()?.join(ANNOUNCED);
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&marker)
    {
        Ok(_) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(error) => {
            Err(anyhow::Error::from(error).context(format!("could not write {}", marker.display())))
        }
    }
}

/// The marker of the announcement, in the state directory.
const ANNOUNCED: &str = "announced";

/// Stop: may this turn end?
pub(crate) fn stop(host: Host, event: &Stop) -> Message {
    let started = now_ns();
    let repo = match repository(&event.cwd) {
        Ok(repo) => repo,
        Err(error) => return report::could_not_check(&format!("{error:#}")),
    };
    let skip = match GatePolicy::resolve(&Sources::environment()) {
        Ok(policy) => policy.skip,
        Err(error) => return report::could_not_check(&error.to_string()),
    };
    // A lens or oracle run of `git prove-it claim` edits nothing it must prove; its stops are
    // not turns of the user's. Stand aside, visibly.
    if let Some(round) = gauntlet_round() {
        return Message::Notice(format!(
            "prove-it: standing aside: this agent runs round {} of a git prove-it claim \
             gauntlet (PROVE_IT_ROUND is set), whose turns are not gated.",
            one_line(&round)
        ));
    }
    // Rule 1: a person's deliberate bypass ends the turn, visibly.
    if skip {
        if let Some(repo) = &repo
            && ledger_on(repo)
        {
            let actual = vec!["skipped by PROVE_IT_SKIP=1".to_string()];
            if let Err(error) = append_ledger(repo, host, event, None, actual, None) {
                return report::could_not_check(&format!("{error:#}"));
            }
        }
        return report::message(&Verdict::Skipped, &GateContext::default());
    }
    // Rule 2: outside a repository there is nothing to gate.
    let Some(repo) = repo else {
        return Message::Silent;
    };
    match stop_in(&repo, host, event, started) {
        Ok(message) => message,
        Err(error) => {
            let text = format!("{error:#}");
            if ledger_on(&repo) {
                // The failure is reported below either way; a ledger that cannot be written
                // adds nothing the user could act on.
                let actual = vec![format!("could not check: {text}")];
                let _ = append_ledger(&repo, host, event, None, actual, None);
            }
            report::could_not_check(&text)
        }
    }
}

/// `PROVE_IT_ROUND`, set by `git prove-it claim` for the agent runs of its rounds.
fn gauntlet_round() -> Option<String> {
    std::env::var(crate::claim::ROUND_ENV)
        .ok()
        .filter(|round| !round.trim().is_empty())
}

fn ledger_on(repo: &Repo) -> bool {
    GatePolicy::resolve(&Sources::of(repo)).is_ok_and(|policy| policy.ledger)
}

fn stop_in(repo: &Repo, host: Host, event: &Stop, started: u64) -> anyhow::Result<Message> {
    let sources = Sources::of(repo);
    let gate_policy = GatePolicy::resolve(&sources)?;
    let policy = Policy::resolve(None, &sources)?;
    let armed_now = repo.armed()?;
    let worktree = worktree(repo)?;
    let key = session_key(&event.session, &worktree);

    // A repository that is not armed and has no anchor opted out: leave no trace in it.
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
        return Ok(Message::Silent);
    }

    let files = SessionFiles::open(repo, &key)?;
    let _lock = files.lock()?;
    let mut turn_state = files.load();
    // Another hook process for this very stop decided while this one waited: give its answer.
    if let Some(last) = &turn_state.last
        && last.at_ns >= started
        && last.turn == event.turn
    {
        return Ok(from_answer(last));
    }
    // A fresh stop (not following a block) or a new turn id starts a new budget. Hosts without
    // turn ids send `turn: None` throughout, so for them only the flag tells.
    let same_turn = event.stop_hook_active && turn_state.turn == event.turn;
    let blocks = if same_turn { turn_state.blocks } else { 0 };
    let notice_told = same_turn && turn_state.notice_told;
    // The policy's budget, kept below the host's own cap on blocks.
    let claude_cap = std::env::var(CLAUDE_BLOCK_CAP_ENV).ok();
    let budget = |max_blocks| host.block_budget(max_blocks, claude_cap.as_deref());
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
            max_blocks: budget(a.max_blocks),
            timeout_secs: a.timeout_secs,
        }),
        armed_at_head,
        state: None,
        max_blocks: budget(gate_policy.max_blocks),
        timeout_secs: policy.timeout.as_secs(),
        blocks,
        run: None,
    };
    let mut before = None;
    if armed_now.is_armed() {
        observed.state = Some(match StateTree::compute(&repo.git, false) {
            Ok(state) => {
                // With signing on, an unsigned proof is made again, signed (SPEC.md 3.1).
                let signed_only = crate::signing::wanted(&|key| repo.config_string(key));
                let proof = match Notes::new(&repo.git, PROOFS_REF).lookup(&state.id)? {
                    Some(note) => Proofs::from_note(&note, &state.id, state.verify)
                        .best_where(signed_only)
                        .map(|record| record.outcome),
                    None => None,
                };
                let facts = State::Tree {
                    tree: state.id,
                    head_tree,
                    verify: state.verify.map(|(blob, mode)| Script { blob, mode }),
                    proof,
                };
                before = Some(state);
                facts
            }
            Err(error) if error.is_worktree_content() => {
                State::ContentError(format!("{:#}", anyhow::Error::from(error)))
            }
            Err(error) => return Err(error.into()),
        });
    }

    let current_verify = match &observed.state {
        Some(State::Tree { verify, .. }) => *verify,
        _ => None,
    };
    let diff = match &anchor {
        Some(anchor) if anchor.verify != current_verify => gate::verify_diff(
            anchor.verify_text.as_deref().unwrap_or(""),
            &verify_text(repo).unwrap_or_default(),
        ),
        _ => None,
    };

    let mut log = None;
    let verdict = match gate::decide(&observed) {
        Decision::Verdict(verdict) => verdict,
        Decision::Run => {
            let before = before
                .as_ref()
                .expect("a run is decided only on a computed state tree");
            if before.verify.is_none() {
                anyhow::bail!(
                    "verify.sh is not part of the working state (it is ignored), so no proof could name it"
                );
            }
            let interrupt = crate::cli::run::interrupt_flag()?;
            let attempted = prove::attempt(
                repo,
                before,
                prove::Attempt {
                    host: host.name(),
                    session: Some(&event.session),
                    anchor: anchor.as_ref().and_then(|a| a.verify),
                    verify_diff: diff.clone(),
                    timeout: policy.timeout,
                    echo: None,
                    interrupt: Some(&interrupt),
                    log: Some(files.log()),
                },
                &mut |_| {},
            );
            observed.run = Some(match attempted {
                Ok(Attempted::Proven(record)) => RunFacts::Passed(record.outcome),
                Ok(Attempted::Failed {
                    exit,
                    exit_code,
                    tail,
                    log: path,
                    ..
                }) => {
                    log = Some(path.display().to_string());
                    RunFacts::Failed {
                        exit,
                        exit_code,
                        tail,
                    }
                }
                Ok(Attempted::StateChanged { changed_paths, .. }) => RunFacts::StateChanged {
                    paths: changed_paths,
                },
                Err(prove::Error::Git(error)) if error.is_worktree_content() => {
                    RunFacts::ContentError(format!("{:#}", anyhow::Error::from(error)))
                }
                // Signing asked for and impossible ends the turn loudly, never with a proof
                // left unsigned.
                Err(error @ prove::Error::Sign(_)) => return Err(error.into()),
                Err(error) => {
                    return Err(anyhow::Error::from(error).context("could not run verify.sh"));
                }
            });
            match gate::decide(&observed) {
                Decision::Verdict(verdict) => verdict,
                Decision::Run => unreachable!("a run's result always decides"),
            }
        }
    };

    let tree = match &observed.state {
        Some(State::Tree { tree, .. }) => Some(tree.to_string()),
        _ => None,
    };
    let mut message = report::message(
        &verdict,
        &GateContext {
            tree: tree.as_deref(),
            log: log.as_deref(),
            diff: diff.as_deref(),
            anchor_missing: anchor.is_none(),
        },
    );

    // The first refusal of a turn goes into the ledger: a block, or a yield in warn-only mode.
    let refusal = match &verdict {
        Verdict::Block { why, attempt, .. } => Some((why, *attempt)),
        Verdict::Yield { why, .. } if blocks == 0 => Some((why, 1)),
        _ => None,
    };
    if gate_policy.ledger
        && let Some((why, 1)) = refusal
    {
        let (exit_code, actual) = ledger_actual(why);
        let previous = turn_state.last.as_ref().map(|last| last.at_ns);
        append_ledger(repo, host, event, exit_code, actual, previous)?;
    }

    // Where the host shows no notice, a notice (the turn's end unverified, a bounded proof) is
    // told to the agent as one last block, once a turn, for it to report; the host's cap
    // leaves room for it.
    turn_state.notice_told = notice_told;
    if let Message::Notice(text) = &message
        && !host.shows_notices()
        && !notice_told
    {
        message = Message::Block(report::notice_for_the_agent(text));
        turn_state.notice_told = true;
    }

    turn_state.turn = event.turn.clone();
    turn_state.blocks = match verdict {
        Verdict::Block { attempt, .. } => attempt,
        _ => blocks,
    };
    turn_state.last = Some(to_answer(&message, event.turn.clone()));
    files.store(&turn_state)?;
    Ok(message)
}

fn to_answer(message: &Message, turn: Option<String>) -> LastAnswer {
    let (kind, text) = match message {
        Message::Silent => ("silent", String::new()),
        Message::Notice(text) => ("notice", text.clone()),
        Message::Block(text) => ("block", text.clone()),
    };
    LastAnswer {
        at_ns: now_ns(),
        turn,
        kind: kind.to_string(),
        text,
    }
}

fn from_answer(answer: &LastAnswer) -> Message {
    match answer.kind.as_str() {
        "silent" => Message::Silent,
        "block" => Message::Block(answer.text.clone()),
        _ => Message::Notice(answer.text.clone()),
    }
}

/// The session's anchor; one that does not parse is treated as missing (which only makes the
/// gate stricter: no anchor means changed).
fn lookup_anchor(repo: &Repo, key: &ObjectId) -> anyhow::Result<Option<Anchor>> {
    let Some(text) = Notes::new(&repo.git, ANCHORS_REF).lookup(key)? else {
        return Ok(None);
    };
    Ok(Anchor::parse(&text).ok())
}

/// verify.sh's text as it is on disk (through a link), for diffs; `None` when unreadable.
fn verify_text(repo: &Repo) -> Option<String> {
    std::fs::read(repo.verify_path().ok()?)
        .ok()
        .map(|data| String::from_utf8_lossy(&data).into_owned())
}

fn ledger_actual(why: &gate::Why) -> (Option<i32>, Vec<String>) {
    use gate::Why;
    match why {
        Why::Failed {
            exit,
            exit_code,
            tail,
        } => (*exit_code, report::summary_lines(tail, exit)),
        Why::Disarmed { reason } => (None, vec![format!("verify.sh {reason}")]),
        Why::Weakened(weakened) => (None, vec![report::weakened_text(weakened)]),
        Why::Content { message } => (None, vec![message.clone()]),
        Why::StateChanged { paths } => (
            None,
            vec![format!("verify.sh changed {} path(s)", paths.len())],
        ),
    }
}

fn append_ledger(
    repo: &Repo,
    host: Host,
    event: &Stop,
    exit_code: Option<i32>,
    actual: Vec<String>,
    // The gate's previous answer in this session (ns since the epoch): a transcript message
    // older than it is no claim of this turn's.
    previous_answer: Option<u64>,
) -> anyhow::Result<()> {
    let entry = ledger::Entry {
        ts: OffsetDateTime::now_utc()
            .replace_nanosecond(0)
            .expect("0 is a valid nanosecond")
            .format(&Rfc3339)
            .context("could not format the time")?,
        repo: worktree(repo)?.display().to_string(),
        host: host.name().to_string(),
        session: event.session.clone(),
        claim: event.claim.clone().or_else(|| {
            let transcript = event.transcript.as_deref()?;
            crate::hosts::copilot::last_answer(transcript, previous_answer)
        }),
        evidence_demanded: EVIDENCE_DEMANDED.to_string(),
        exit_code,
        actual,
        attempt: 1,
    };
    ledger::append(repo, &entry)?;
    Ok(())
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn one_line(value: &str) -> String {
    value.replace(['\n', '\r'], " ")
}
