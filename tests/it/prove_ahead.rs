//! Proving ahead: the after-tool hook wakes a background prover that runs verify.sh while the
//! model thinks, and the stop finds the proof made ahead. Each test is one trap, in a real
//! repository, through the real binary and Claude Code's hook JSON; the settle and idle times
//! are made small through the policy.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::TestRepo;

const SESSION: &str = "ahead-session";

/// Claude Code's event `name` for `session`.
fn event(repo: &TestRepo, session: &str, name: &str) -> String {
    json!({
        "session_id": session,
        "transcript_path": "/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": name,
        "prompt_id": "p1",
        "permission_mode": "default",
        "stop_hook_active": false,
        "last_assistant_message": "Done, all tests pass.",
        "source": "startup",
        "tool_name": "Edit",
        "tool_input": {"file_path": repo.root.join("a.txt")},
        "tool_response": {"success": true},
        "tool_use_id": "toolu_01",
    })
    .to_string()
}

fn hook_as(repo: &TestRepo, session: &str, name: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = repo.prove_it(&["hook", "claude"]);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = cmd
        .write_stdin(event(repo, session, name))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    out
}

fn hook(repo: &TestRepo, name: &str) -> Output {
    hook_as(repo, SESSION, name, &[])
}

/// The stop's answer: `None` for silence (proven).
fn stop(repo: &TestRepo) -> Option<Value> {
    let out = hook(repo, "Stop");
    (!out.stdout.is_empty()).then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// A repository whose verify.sh notes each run in `$HOME/runs`, then runs `body`; proving ahead
/// settles after 100 ms and its prover exits after `idle` seconds without an event.
fn repository(body: &str, idle: u32) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    repo.verify_script(&format!("echo run >> \"$HOME/runs\"\n{body}"));
    repo.commit_all("initial");
    repo.git(&["config", "prove-it.settle", "100"]);
    repo.git(&["config", "prove-it.aheadIdle", &idle.to_string()]);
    repo
}

/// How many times verify.sh ran.
fn runs(repo: &TestRepo) -> usize {
    std::fs::read_to_string(repo.home().join("runs")).map_or(0, |runs| runs.lines().count())
}

/// Wait up to 20 s for `done`.
#[track_caller]
fn eventually(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(20), "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The state tree now and whether a proof of it is on record.
fn proven(repo: &TestRepo) -> bool {
    let tree = repo.our_state_tree().unwrap();
    repo.note(&tree).is_some()
}

/// The prover's pid, as the kernel's lock table says (the lock on the prover's file).
fn prover_pid(repo: &TestRepo) -> Option<u32> {
    let dir = Path::new(repo.git(&["rev-parse", "--git-common-dir"]).trim()).join("prove-it/ahead");
    let dir = if dir.is_absolute() {
        dir
    } else {
        repo.root.join(dir)
    };
    let lock = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "lock"))?;
    let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&lock).ok()?);
    std::fs::read_to_string("/proc/locks")
        .ok()?
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let inode = fields.get(5)?.rsplit(':').next()?.parse::<u64>().ok()?;
            (fields.get(1) == Some(&"FLOCK") && inode == ino).then(|| fields[4].parse().ok())?
        })
}

/// The prover's files in the state directory, by their extension.
fn ahead_file(repo: &TestRepo, ext: &str) -> std::path::PathBuf {
    let lock = std::fs::read_dir(repo.path(".git/prove-it/ahead"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|e| e == "lock"))
        .expect("a prover's lock file");
    lock.with_extension(ext)
}

/// The after-tool hook must never hold the agent up: it answers with nothing, having run
/// nothing, and the prover's proof then spares the stop its run.
#[test]
fn the_after_tool_hook_answers_at_once_and_the_stop_finds_the_proof_made_ahead() {
    let repo = repository("sleep 1\ngrep -q good a.txt", 3);
    assert!(hook(&repo, "SessionStart").stdout.is_empty());
    repo.write("a.txt", "good, better\n");
    let start = Instant::now();
    let out = hook(&repo, "PostToolUse");
    let took = start.elapsed();
    assert!(out.stdout.is_empty(), "{out:?}");
    assert_eq!(runs(&repo), 0, "the hook ran verify.sh itself");
    // 50 ms on a quiet machine; a loaded test machine gets a wider margin.
    assert!(took < Duration::from_secs(2), "the hook took {took:?}");
    eventually("the prover proves the state", || proven(&repo));
    assert_eq!(runs(&repo), 1);
    let start = Instant::now();
    assert_eq!(stop(&repo), None, "the state was proven ahead");
    assert!(start.elapsed() < Duration::from_secs(1));
    assert_eq!(runs(&repo), 1, "the stop ran verify.sh again");
    let tree = repo.our_state_tree().unwrap();
    let note = repo.note(&tree).unwrap();
    assert!(note.contains("host: claude"), "{note}");
    assert!(note.contains(&format!("session: {SESSION}")), "{note}");
}

/// A file edited while the prover's run goes on: that run proves nothing, and the stop runs.
#[test]
fn an_edit_during_a_background_run_records_nothing() {
    let repo = repository("sleep 2\ngrep -q good a.txt", 3);
    // The prover is not woken for the edit during its run: the change alone must void it.
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    let first = repo.our_state_tree().unwrap();
    hook(&repo, "PostToolUse");
    eventually("the run ahead starts", || runs(&repo) == 1);
    repo.write("b.txt", "an edit while it runs\n");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        repo.note(&first).is_none(),
        "a run whose state changed recorded a proof"
    );
    assert_eq!(stop(&repo), None);
    assert!(proven(&repo));
    assert_eq!(runs(&repo), 2, "the stop ran verify.sh on the new state");
}

/// An edit after the prover's run: the stop's state is not the one proven ahead, so it runs.
#[test]
fn an_edit_after_the_run_made_ahead_is_a_new_state_the_stop_runs() {
    let repo = repository("grep -q good a.txt", 3);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the prover proves the state", || proven(&repo));
    repo.write("a.txt", "bad now\n");
    let reason = stop(&repo).expect("a block");
    assert_eq!(reason["decision"], "block", "{reason}");
    assert_eq!(runs(&repo), 2);
}
