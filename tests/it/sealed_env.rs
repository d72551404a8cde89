//! A proof made in the agent's own shell must not spare the stop: the session's start records
//! a digest of the hook's environment, a record made during the session proves a state at its
//! stop only with that digest, and a hook call from another environment runs, records and
//! starts nothing. Each test is one trap, in a real repository, through the real binary.

use std::path::PathBuf;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::harness::{TestRepo, path_with_our_binary};

/// The event `name`; "Stop again" is a stop that follows a block in the same turn.
fn event(repo: &TestRepo, name: &str) -> String {
    let (name, active, source) = match name {
        "Stop again" => ("Stop", true, "startup"),
        "SessionStart resume" => ("SessionStart", false, "resume"),
        other => (other, false, "startup"),
    };
    json!({
        "session_id": "env-session",
        "transcript_path": "/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": name,
        "prompt_id": "p1",
        "stop_hook_active": active,
        "last_assistant_message": "Done, all tests pass.",
        "prompt": "go on",
        "source": source,
    })
    .to_string()
}

/// A hook call with `env` on top of the host's environment: stdout and stderr.
fn hook_with(repo: &TestRepo, name: &str, env: &[(&str, &str)]) -> (Option<Value>, String) {
    let mut cmd = repo.prove_it(&["hook", "claude"]);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = cmd.write_stdin(event(repo, name)).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    (
        (!out.stdout.is_empty()).then(|| serde_json::from_slice(&out.stdout).unwrap()),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[track_caller]
fn block_reason(answer: Option<Value>) -> String {
    let json = answer.expect("a block, not silence");
    assert_eq!(json["decision"], "block", "{json}");
    json["reason"].as_str().unwrap().to_string()
}

/// A repository whose verify.sh runs `the-tests`, a tool on PATH that fails while a.txt holds
/// "bad"; and a directory holding a `the-tests` that always passes, for the agent's PATH.
fn repository() -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    for dir in ["tools", "lying"] {
        std::fs::create_dir_all(repo.home().join(dir)).unwrap();
    }
    let honest = repo.home_script(
        "tools/the-tests",
        "if grep -q bad a.txt; then echo 'a.txt is bad'; exit 1; fi\nexit 0",
    );
    let lying = repo.home_script("lying/the-tests", "exit 0");
    repo.write("a.txt", "good\n");
    assert!(honest.ends_with("tools/the-tests"));
    repo.verify_script("the-tests");
    repo.commit_all("initial");
    (repo, lying.parent().unwrap().to_owned())
}

/// PATH with the honest tool's directory; the agent's puts its lying one first.
fn paths(repo: &TestRepo, lying: &std::path::Path) -> (String, String) {
    let tools = repo.home().join("tools");
    let host = format!(
        "{}:{}",
        tools.display(),
        path_with_our_binary().to_string_lossy()
    );
    let agent = format!("{}:{host}", lying.display());
    (host, agent)
}

fn proofs(repo: &TestRepo) -> usize {
    repo.git_output(&["notes", "--ref=prove-it", "list"])
        .stdout
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .count()
}

// The agent edited, then ran `git prove-it run` itself with a PATH whose test tool always
// passes: the record looked like the gate's, and the real stop found the state proven and
// ended the turn silently.
#[test]
fn a_proof_made_in_the_agents_shell_with_its_own_path_does_not_spare_the_stop() {
    let (repo, lying) = repository();
    let (host, agent) = paths(&repo, &lying);
    assert_eq!(hook_with(&repo, "SessionStart", &[("PATH", &host)]).0, None);
    repo.write("a.txt", "bad\n");
    repo.prove_it(&["run"])
        .env("PATH", &agent)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("proven"));
    let note = repo.git(&["notes", "--ref=prove-it", "list"]);
    assert!(!note.is_empty(), "the agent's run recorded its proof");
    let (answer, _) = hook_with(&repo, "Stop", &[("PATH", &host)]);
    let reason = block_reason(answer);
    assert!(reason.contains("a.txt is bad"), "{reason}");
}

// The same proof, made in the session's own environment (the same PATH, the same variables),
// is the gate's own: the stop finds it and ends quietly.
#[test]
fn a_proof_made_in_the_sessions_environment_spares_the_stop() {
    let (repo, lying) = repository();
    let (host, _) = paths(&repo, &lying);
    assert_eq!(hook_with(&repo, "SessionStart", &[("PATH", &host)]).0, None);
    repo.write("a.txt", "better\n");
    repo.prove_it(&["run"]).env("PATH", &host).assert().code(0);
    let runs = proofs(&repo);
    assert_eq!(hook_with(&repo, "Stop", &[("PATH", &host)]).0, None);
    assert_eq!(proofs(&repo), runs, "nothing was run again");
}

// A record made before the session counts as it always did, whatever environment made it.
#[test]
fn a_proof_made_before_the_session_in_another_environment_still_counts() {
    let (repo, lying) = repository();
    let (host, agent) = paths(&repo, &lying);
    repo.write("a.txt", "other\n");
    repo.prove_it(&["run"]).env("PATH", &agent).assert().code(0);
    repo.write("a.txt", "good\n");
    assert_eq!(hook_with(&repo, "SessionStart", &[("PATH", &host)]).0, None);
    repo.write("a.txt", "other\n");
    assert_eq!(hook_with(&repo, "Stop", &[("PATH", &host)]).0, None);
}

// The agent piped a Stop event of its own session into `git prove-it hook claude` from its
// shell, with its PATH: the run looked like the gate's own. A hook call whose environment is
// not the session's runs nothing, records nothing, and says so.
#[test]
fn a_stop_piped_from_the_agents_shell_runs_and_records_nothing() {
    let (repo, lying) = repository();
    let (host, agent) = paths(&repo, &lying);
    assert_eq!(hook_with(&repo, "SessionStart", &[("PATH", &host)]).0, None);
    repo.write("a.txt", "bad\n");
    let before = proofs(&repo);
    let (answer, stderr) = hook_with(&repo, "Stop", &[("PATH", &agent)]);
    let text = answer.map(|json| json.to_string()).unwrap_or_default() + &stderr;
    assert!(text.contains("another environment"), "{text}");
    assert!(text.contains("PATH"), "the variable is named: {text}");
    assert_eq!(proofs(&repo), before, "no proof was recorded");
    // A variable verify.sh might read, set in the agent's shell, is as foreign.
    let (answer, _) = hook_with(&repo, "Stop", &[("PATH", &host), ("SKIP_SLOW_TESTS", "1")]);
    let text = answer.map(|json| json.to_string()).unwrap_or_default();
    assert!(text.contains("SKIP_SLOW_TESTS"), "{text}");
    // The host's own stop is not spared anything.
    let reason = block_reason(hook_with(&repo, "Stop", &[("PATH", &host)]).0);
    assert!(reason.contains("a.txt is bad"), "{reason}");
}

// A prompt or a session start piped from the agent's shell starts nothing for the session: no
// new budget, no new anchor.
#[test]
fn a_prompt_or_session_start_from_another_environment_starts_nothing() {
    let (repo, lying) = repository();
    let (host, agent) = paths(&repo, &lying);
    assert_eq!(hook_with(&repo, "SessionStart", &[("PATH", &host)]).0, None);
    let anchors = repo.git(&["notes", "--ref=prove-it-anchors", "list"]);
    let (answer, stderr) = hook_with(&repo, "SessionStart", &[("PATH", &agent)]);
    let text = answer.map(|json| json.to_string()).unwrap_or_default() + &stderr;
    assert!(text.contains("another environment"), "{text}");
    assert_eq!(
        repo.git(&["notes", "--ref=prove-it-anchors", "list"]),
        anchors
    );
    repo.write("a.txt", "bad\n");
    // Three blocks spend the turn's budget; a prompt from the agent's shell does not give it
    // a new one, so the next stop yields instead of running again.
    block_reason(hook_with(&repo, "Stop", &[("PATH", &host)]).0);
    for _ in 0..2 {
        block_reason(hook_with(&repo, "Stop again", &[("PATH", &host)]).0);
    }
    let (answer, stderr) = hook_with(&repo, "UserPromptSubmit", &[("PATH", &agent)]);
    assert_eq!(answer, None, "a prompt is never answered on stdout");
    assert!(stderr.contains("another environment"), "{stderr}");
    let after = hook_with(&repo, "Stop again", &[("PATH", &host)]).0;
    let text = after.map(|json| json.to_string()).unwrap_or_default();
    assert!(!text.contains("\"decision\":\"block\""), "{text}");
    assert!(
        text.contains("NOT_PROVEN") || text.contains("unverified"),
        "{text}"
    );
}

// What the host sets for some hook calls only (Claude Code's CLAUDE_ENV_FILE at SessionStart,
// CLAUDE_EFFORT at the others) is not the environment: the host's own calls agree.
#[test]
fn what_the_host_sets_per_event_is_left_out() {
    let (repo, lying) = repository();
    let (host, _) = paths(&repo, &lying);
    assert_eq!(
        hook_with(
            &repo,
            "SessionStart",
            &[("PATH", &host), ("CLAUDE_ENV_FILE", "/tmp/env-file")]
        )
        .0,
        None
    );
    repo.write("a.txt", "bad\n");
    let reason =
        block_reason(hook_with(&repo, "Stop", &[("PATH", &host), ("CLAUDE_EFFORT", "high")]).0);
    assert!(reason.contains("a.txt is bad"), "{reason}");
}

// A session its host resumes runs in a new process, with another environment (Claude Code's
// CLAUDE_PID, a new terminal): the session goes on in that one, and a proof made during the
// session in the earlier environment is made again rather than taken on its word.
#[test]
fn a_resumed_session_goes_on_in_its_new_environment() {
    let (repo, lying) = repository();
    let (host, _) = paths(&repo, &lying);
    let first = [("PATH", host.as_str()), ("HOST_PROCESS", "1")];
    let second = [("PATH", host.as_str()), ("HOST_PROCESS", "2")];
    assert_eq!(hook_with(&repo, "SessionStart", &first).0, None);
    repo.write("a.txt", "better\n");
    assert_eq!(hook_with(&repo, "Stop", &first).0, None);
    let proven = proofs(&repo);
    assert_eq!(hook_with(&repo, "SessionStart resume", &second).0, None);
    assert_eq!(hook_with(&repo, "Stop", &second).0, None);
    let status = crate::harness::json_stdout(&repo.prove_it(&["status", "--json"]).assert());
    let note = repo.note(status["tree"].as_str().unwrap());
    assert_eq!(
        note.unwrap_or_default().matches("outcome: PROVEN").count(),
        2,
        "proven again in the new environment"
    );
    assert_eq!(proofs(&repo), proven, "the same tree, one note");
    // The earlier process's environment is no longer the session's.
    let (answer, _) = hook_with(&repo, "Stop", &first);
    let text = answer.map(|json| json.to_string()).unwrap_or_default();
    assert!(text.contains("HOST_PROCESS"), "{text}");
}
