//! One stop, end to end: resolve the context, observe, decide (running verify.sh if asked),
//! act, and hand back a reply as data. Session starts record the anchor. The agent hosts'
//! hooks call these two functions and nothing else of the gate.
//!
//! Every path ends in a reply: a failure of the gate itself becomes a loud "could not check
//! this turn", never a quiet pass.

use std::path::Path;

use super::act;
use super::anchor::Anchor;
use super::decide::Verdict;
use super::error::{Error, error_chain};
use super::event::{Start, Stop};
use super::host::HostRules;
use super::ledger::append_ledger;
use super::observe::{self, Observation, lookup_anchor, verify_text, worktree};
use super::turn::{Answer, Facts};
use crate::context::policy::GatePolicy;
use crate::context::{Clock, Context, Settings};
use crate::git::{self, ANCHORS_REF, Repo, SessionFiles, session_key, session_key_blob};
use crate::proof::Script;

/// What the gate answers an event with, before it is worded (`report::reply`) and delivered in
/// the host's protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// Nothing to say: outside a repository, an opted-out one, or a session start.
    Silent,
    /// A session start in a repository where the gate was never announced: say it is armed.
    Announce,
    /// A lens or oracle run of `git prove-it claim`: its stops are not a user's turns.
    StandAside { round: String },
    /// The gate decided.
    Answer(Answer),
    /// The session's anchor could not be recorded; its stops will count as changes.
    AnchorNotRecorded(String),
    /// The gate could not decide: the turn ends unverified, loudly.
    CouldNotCheck(String),
}

/// The repository an event's `cwd` is in; `None` when it is in none (nothing to gate).
fn repository(cwd: &Path) -> Result<Option<Repo>, git::Error> {
    match Repo::discover_at(cwd) {
        Ok(repo) => Ok(Some(repo)),
        Err(git::Error::NotARepository { .. } | git::Error::Bare { .. }) => Ok(None),
        Err(error) => Err(error),
    }
}

/// `PROVE_IT_ROUND`, set by `git prove-it claim` for the agent runs of its rounds.
fn gauntlet_round() -> Option<String> {
    std::env::var(crate::claim::ROUND_ENV)
        .ok()
        .filter(|round| !round.trim().is_empty())
        .map(|round| one_line(&round))
}

/// SessionStart: record the anchor, unless this session already has one in this worktree
/// (resume, compact and clear keep the first). Repositories that are not armed get nothing.
pub(crate) fn session_start(event: &Start, announce: bool) -> Reply {
    match start(event, announce) {
        Ok(reply) => reply,
        Err(error) => Reply::AnchorNotRecorded(error_chain(&error)),
    }
}

fn start(event: &Start, announce: bool) -> Result<Reply, Error> {
    if gauntlet_round().is_some() {
        return Ok(Reply::Silent);
    }
    let Some(repo) = repository(&event.cwd)? else {
        return Ok(Reply::Silent);
    };
    if !repo.armed()?.is_armed() {
        return Ok(Reply::Silent);
    }
    let ctx = Context::resolve(repo, None);
    let gate_policy = ctx.gate.clone()?;
    let policy = ctx.policy.clone()?;
    let repo = &ctx.repo;
    let worktree = worktree(repo)?;
    let key = session_key(&event.session, &worktree);
    let files = SessionFiles::open(repo, &key)?;
    if files.load_seal().is_some() || lookup_anchor(repo, &key)?.is_some() {
        return Ok(Reply::Silent);
    }
    // A worktree the state tree cannot be computed for still gets an anchor: every stop of the
    // session then counts as a change, and the content error is reported there.
    let state = repo.state_tree(false).ok();
    let anchor = Anchor {
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
        sign: ctx.signed_only,
        verify_edits: gate_policy.verify_edits,
        verify_text: verify_text(repo),
    };
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
    // The session's own copy of its anchor, against which every stop checks the note (issue
    // 19, hole 8): a deleted or rewritten anchor is then refused, never read as "unchanged".
    if let Some(recorded) = repo.notes(ANCHORS_REF).lookup(&key)? {
        files.store_seal(recorded.as_bytes())?;
    }
    if announce && repo.mark_announced()? {
        return Ok(Reply::Announce);
    }
    Ok(Reply::Silent)
}

/// Stop: may this turn end?
pub(crate) fn stop(host: &dyn HostRules, event: &Stop) -> Reply {
    let started_ns = Clock::system().now_ns();
    let repo = match repository(&event.cwd) {
        Ok(repo) => repo,
        Err(error) => return Reply::CouldNotCheck(error_chain(&error)),
    };
    // The one read of the environment alone: skipping is a person's act, never git config's.
    let skip = match GatePolicy::resolve(&Settings::environment()) {
        Ok(policy) => policy.skip,
        Err(error) => return Reply::CouldNotCheck(error.to_string()),
    };
    // A lens or oracle run of `git prove-it claim` edits nothing it must prove; its stops are
    // not turns of the user's. Stand aside, visibly.
    if let Some(round) = gauntlet_round() {
        return Reply::StandAside { round };
    }
    let ctx = repo.map(|repo| Context::resolve(repo, None));
    let ledger_on = |ctx: &Context| ctx.gate.as_ref().is_ok_and(|policy| policy.ledger);
    // Rule 1: a person's deliberate bypass ends the turn, visibly.
    if skip {
        if let Some(ctx) = &ctx
            && ledger_on(ctx)
        {
            let actual = vec!["skipped by PROVE_IT_SKIP=1".to_string()];
            if let Err(error) = append_ledger(ctx, host, event, None, actual, None) {
                return Reply::CouldNotCheck(error_chain(&error));
            }
        }
        return Reply::Answer(Answer {
            verdict: Verdict::Skipped,
            facts: Facts::default(),
            to_the_agent: false,
        });
    }
    // Rule 2: outside a repository there is nothing to gate.
    let Some(ctx) = ctx else {
        return Reply::Silent;
    };
    match gate(&ctx, host, event, started_ns) {
        Ok(reply) => reply,
        Err(error) => {
            let text = error_chain(&error);
            if ledger_on(&ctx) {
                // The failure is reported below either way; a ledger that cannot be written
                // adds nothing the user could act on.
                let actual = vec![format!("could not check: {text}")];
                let _ = append_ledger(&ctx, host, event, None, actual, None);
            }
            Reply::CouldNotCheck(text)
        }
    }
}

/// Observe, decide and act on one stop in a repository.
fn gate(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    started_ns: u64,
) -> Result<Reply, Error> {
    let mut seen = match observe::stop(ctx, host, event, started_ns)? {
        Observation::OptedOut => return Ok(Reply::Silent),
        Observation::Answered(answer) => return Ok(Reply::Answer(answer)),
        Observation::Stop(seen) => *seen,
    };
    let (verdict, log) = act::verdict(ctx, host, event, &mut seen)?;
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
    use crate::gate::{Quiet, Why};

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
            matches!(why, Why::Failed { exit_code: Some(1), tail, .. } if tail == &["1 failed"])
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
}
