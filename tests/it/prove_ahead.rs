//! Proving ahead: the after-tool hook wakes a background prover that runs verify.sh while the
//! model thinks, and the stop finds the proof made ahead. Each test is one trap, in a real
//! repository, through the real binary and Claude Code's hook JSON; the settle and idle times
//! are made small through the policy.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::harness::{BareRemote, TestRepo};

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

/// The prover is the hook forked, not this binary started again: the hook's own command line, its
/// standard streams on `/dev/null` (so the host's pipe closes when the hook answers), none of the
/// hook's other files open, and a host's `GIT_DIR` gone from what verify.sh sees.
#[test]
fn the_prover_is_the_hook_forked_holding_none_of_its_files_nor_the_callers_git_dir() {
    let repo = repository(
        "echo \"${GIT_DIR-unset} ${GIT_INDEX_FILE-unset}\" > \"$HOME/seen\"\nsleep 2\ngrep -q good a.txt",
        3,
    );
    let other = TestRepo::with_commit();
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good, better\n");
    let git_dir = other.path(".git").to_string_lossy().into_owned();
    let index = other.path(".git/index").to_string_lossy().into_owned();
    let start = Instant::now();
    hook_as(
        &repo,
        SESSION,
        "PostToolUse",
        &[("GIT_DIR", &git_dir), ("GIT_INDEX_FILE", &index)],
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "the host waited for the prover"
    );
    eventually("the prover runs verify.sh", || runs(&repo) == 1);
    let pid = prover_pid(&repo).expect("a prover holds the lock");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let args: Vec<String> = cmdline
        .split(|byte| *byte == 0)
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .collect();
    assert!(
        args.iter().any(|arg| arg == "hook") && !args.iter().any(|arg| arg == "prove-ahead"),
        "the prover is not the hook forked: {args:?}"
    );
    for fd in 0..3 {
        let target = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).unwrap();
        assert_eq!(target, Path::new("/dev/null"), "fd {fd}");
    }
    eventually("the prover proves the state", || proven(&repo));
    let seen = std::fs::read_to_string(repo.home().join("seen")).unwrap();
    assert_eq!(seen, "unset unset\n");
    assert!(other.note(&other.stock_state_tree().unwrap()).is_none());
    assert_eq!(stop(&repo), None, "the state was proven ahead");
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

/// A stop whose state the prover is running joins that run, and never starts a second one.
#[test]
fn a_stop_joins_the_run_made_ahead_for_its_state() {
    let repo = repository("sleep 2\ngrep -q good a.txt", 3);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the run ahead starts", || runs(&repo) == 1);
    let status = repo.prove_it(&["status"]).output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        status.contains("ahead:      proving ahead: verify.sh, "),
        "{status}"
    );
    assert_eq!(stop(&repo), None, "the joined run passed");
    assert_eq!(
        runs(&repo),
        1,
        "the stop started a second run of the same state"
    );
}

/// A named check that failed ahead is said once with its exit, as the failure records say it:
/// `status` names it, and does not name it again.
#[test]
fn status_names_a_check_that_failed_ahead_once() {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    repo.write(
        "prove-it.toml",
        "[checks.api]\nrun = \"api.sh\"\ninputs = [\"a.txt\"]\n",
    );
    repo.write("api.sh", "#!/bin/sh\necho run >> \"$HOME/runs\"\nexit 3\n");
    repo.chmod("api.sh", 0o755);
    repo.commit_all("initial");
    repo.git(&["config", "prove-it.settle", "100"]);
    repo.git(&["config", "prove-it.aheadIdle", "3"]);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the run ahead fails", || {
        status(&repo).contains("the last run ahead failed")
    });
    let status = status(&repo);
    assert!(
        status.contains("the last run ahead failed (api: exit code 3), which the stop"),
        "{status}"
    );
}

/// `kill -9` of the prover during its run: the stop does not wait on it, and runs itself.
#[test]
fn a_killed_prover_leaves_the_stop_to_run_itself() {
    let repo = repository("sleep 2\ngrep -q good a.txt", 3);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "bad\n");
    hook(&repo, "PostToolUse");
    eventually("the run ahead starts", || runs(&repo) == 1);
    let pid = prover_pid(&repo).expect("a prover holds the lock");
    repo.command("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(crate::harness::gone_within_5s(&pid.to_string()));
    let answer = stop(&repo).expect("the stop ran verify.sh itself and it failed");
    assert_eq!(answer["decision"], "block", "{answer}");
    assert_eq!(runs(&repo), 2);
}

/// A prover stopped with SIGSTOP holds its lock forever: the stop must not wait for it.
#[test]
fn a_stopped_prover_leaves_the_stop_to_run_itself() {
    let repo = repository("sleep 3\ngrep -q good a.txt", 3);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "bad\n");
    hook(&repo, "PostToolUse");
    eventually("the run ahead starts", || runs(&repo) == 1);
    let pid = prover_pid(&repo)
        .expect("a prover holds the lock")
        .to_string();
    repo.command("kill").args(["-STOP", &pid]).status().unwrap();
    let start = Instant::now();
    let answer = stop(&repo).expect("a block");
    assert_eq!(answer["decision"], "block", "{answer}");
    assert_eq!(runs(&repo), 2, "the stop ran verify.sh itself");
    assert!(start.elapsed() < Duration::from_secs(10));
    repo.command("kill").args(["-9", &pid]).status().unwrap();
}

/// The prover's files sit where the agent can write: a status naming the stop's state and a
/// live pid, and a lock file naming it, make the stop wait for nothing and pass on nothing.
#[test]
fn a_forged_status_file_is_not_joined() {
    let repo = repository("grep -q good a.txt", 3);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "bad\n");
    let tree = repo.our_state_tree().unwrap();
    let mut sleeper = repo.command("sleep").arg("30").spawn().unwrap();
    let worktree = repo.root.canonicalize().unwrap();
    let key = repo.hash_object(&format!("prove-it ahead\0{}", worktree.display()), false);
    let dir = repo.path(".git/prove-it/ahead");
    std::fs::create_dir_all(&dir).unwrap();
    let status = json!({
        "version": 1, "pid": sleeper.id(), "session": SESSION, "failed": null,
        "running": {"state": tree, "trees": [tree], "checks": [], "since_ns": 0},
    });
    std::fs::write(dir.join(format!("{key}.status")), status.to_string()).unwrap();
    std::fs::write(dir.join(format!("{key}.lock")), sleeper.id().to_string()).unwrap();
    std::fs::write(dir.join(format!("{key}.run")), sleeper.id().to_string()).unwrap();
    let start = Instant::now();
    let answer = stop(&repo).expect("a block");
    assert_eq!(answer["decision"], "block", "{answer}");
    assert_eq!(runs(&repo), 1, "the stop ran verify.sh itself");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "the stop waited on a forged status"
    );
    sleeper.kill().unwrap();
    let _ = sleeper.wait();
}

/// A lock file written by the agent is no lock: the hook still starts a prover, and a lock
/// file removed under a prover makes it end rather than let a second one run beside it.
#[test]
fn a_forged_lock_file_proves_nothing() {
    let repo = repository("grep -q good a.txt", 5);
    hook(&repo, "SessionStart");
    let worktree = repo.root.canonicalize().unwrap();
    let key = repo.hash_object(&format!("prove-it ahead\0{}", worktree.display()), false);
    let dir = repo.path(".git/prove-it/ahead");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{key}.lock")), "12345\n").unwrap();
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the prover proves the state", || proven(&repo));
    let pid = prover_pid(&repo).expect("a prover holds the lock");
    std::fs::remove_file(dir.join(format!("{key}.lock"))).unwrap();
    assert!(crate::harness::gone_within_5s(&pid.to_string()));
    assert_eq!(stop(&repo), None);
    assert_eq!(runs(&repo), 1);
}

/// A prover started from the agent's own shell, with its own PATH, proves in an environment
/// the session did not start in: its proof does not spare the stop. An after-tool event piped
/// in from that shell starts nothing.
#[test]
fn a_prover_from_the_agents_shell_is_not_admitted() {
    let repo = repository("grep -q good a.txt", 1);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    let elsewhere = repo.home().join("bin");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let path = format!(
        "{}:{}",
        elsewhere.display(),
        crate::harness::path_with_our_binary().to_string_lossy()
    );
    let out = hook_as(&repo, SESSION, "PostToolUse", &[("PATH", &path)]);
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("another environment"),
        "{out:?}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        prover_pid(&repo),
        None,
        "a prover started from another environment"
    );
    let root = repo.root.to_string_lossy().into_owned();
    let prover = repo
        .prove_it(&[
            "prove-ahead",
            "--host",
            "claude",
            "--session",
            SESSION,
            &root,
        ])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(prover.status.code(), Some(0), "{prover:?}");
    assert_eq!(
        runs(&repo),
        0,
        "a prover in another environment ran verify.sh"
    );
    assert_eq!(stop(&repo), None);
    assert_eq!(runs(&repo), 1, "the stop ran verify.sh itself");
}

/// Two sessions in one worktree share its one prover: one run, whichever woke it.
#[test]
fn two_sessions_share_one_prover() {
    let repo = repository("sleep 1\ngrep -q good a.txt", 3);
    hook_as(&repo, "session-a", "SessionStart", &[]);
    hook_as(&repo, "session-b", "SessionStart", &[]);
    repo.write("a.txt", "good 1\n");
    hook_as(&repo, "session-a", "PostToolUse", &[]);
    hook_as(&repo, "session-b", "PostToolUse", &[]);
    eventually("the prover proves the state", || proven(&repo));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(runs(&repo), 1, "two provers ran the same state");
    let out = hook_as(&repo, "session-b", "Stop", &[]);
    assert!(out.stdout.is_empty(), "{out:?}");
    assert_eq!(runs(&repo), 1);
}

/// A verify.sh that never ends: the stop's whole wait, joining included, stays within the
/// timeout, and it blocks, never passing on the prover's word.
#[test]
fn a_joined_run_that_never_ends_is_killed_at_the_timeout() {
    let repo = repository("sleep 60", 3);
    repo.git(&["config", "prove-it.timeout", "4"]);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the run ahead starts", || runs(&repo) == 1);
    let start = Instant::now();
    let answer = stop(&repo).expect("a block");
    let took = start.elapsed();
    assert_eq!(answer["decision"], "block", "{answer}");
    let reason = answer["reason"].as_str().unwrap();
    assert!(
        reason.contains("could not check in time") || reason.contains("timed out"),
        "{reason}"
    );
    assert!(
        took < Duration::from_secs(6),
        "the stop waited {took:?} past its timeout"
    );
}

/// The prover ends when no event came for its idle time: it does not outlive its session.
#[test]
fn the_prover_exits_when_idle() {
    let repo = repository("grep -q good a.txt", 1);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the prover proves the state", || proven(&repo));
    eventually("the prover exits", || prover_pid(&repo).is_none());
    let status = repo.prove_it(&["status"]).output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(status.contains("ahead:      no prover runs"), "{status}");
}

/// What `status` prints.
fn status(repo: &TestRepo) -> String {
    let status = repo.prove_it(&["status"]).output().unwrap();
    String::from_utf8_lossy(&status.stdout).into_owned()
}

/// `status`'s line for proving ahead turned off by a run that wrote `path` in place.
fn off_for(path: &str) -> String {
    format!("ahead:      off: the last run of verify.sh changed files in place ({path})")
}

/// An edit and its after-tool event start no run ahead: verify.sh has run `runs_so_far` times
/// and still has.
fn stays_off(repo: &TestRepo, runs_so_far: usize, why: &str) {
    repo.write("a.txt", "good 2\n");
    hook(repo, "PostToolUse");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(runs(repo), runs_so_far, "{why}");
}

/// A verify.sh that writes files in place would race the agent's edits: after such a run,
/// proving ahead stays off in that worktree, and `status` says why.
#[test]
fn a_script_that_writes_in_place_turns_proving_ahead_off() {
    let repo = repository("echo generated > gen.txt", 3);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    let answer = stop(&repo).expect("a run that changed the state blocks");
    assert_eq!(answer["decision"], "block", "{answer}");
    assert_eq!(runs(&repo), 1);
    stays_off(&repo, 1, "proving ahead ran a script that writes in place");
    assert_eq!(prover_pid(&repo), None);
    let status = status(&repo);
    assert!(status.contains(&off_for("gen.txt")), "{status}");
}

/// A formatter that rewrites files and then fails races the agent's edits as much as one that
/// passes: a failing stop's run that wrote in place turns proving ahead off too.
#[test]
fn a_failing_script_that_writes_in_place_turns_proving_ahead_off() {
    let repo = repository("printf 'formatted\\n' > a.txt\nexit 1", 3);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    let answer = stop(&repo).expect("a failing run blocks");
    assert_eq!(answer["decision"], "block", "{answer}");
    assert_eq!(runs(&repo), 1);
    stays_off(
        &repo,
        1,
        "proving ahead ran a failing script that writes in place",
    );
    let status = status(&repo);
    assert!(status.contains(&off_for("a.txt")), "{status}");
}

/// The prover's own failing run that wrote in place turns proving ahead off as a stop's does:
/// it ran while no event came, so nothing but the script changed the file.
#[test]
fn a_failing_run_ahead_that_writes_in_place_turns_proving_ahead_off() {
    let repo = repository("printf 'formatted\\n' > a.txt\nexit 1", 3);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the run ahead ends and turns proving ahead off", || {
        status(&repo).contains(&off_for("a.txt"))
    });
    assert_eq!(runs(&repo), 1);
    eventually("the prover ends", || prover_pid(&repo).is_none());
    stays_off(&repo, 1, "proving ahead ran again while off");
}

/// A failing run that left the state as it was turns proving ahead back on, as a passing one
/// does: only writing in place keeps it off.
#[test]
fn a_failing_stop_run_that_writes_nothing_turns_proving_ahead_back_on() {
    let repo = repository("test -e fmt && printf 'formatted\\n' > a.txt\nexit 1", 3);
    hook(&repo, "SessionStart");
    repo.write("fmt", "");
    repo.write("a.txt", "good 1\n");
    stop(&repo).expect("a block");
    assert!(status(&repo).contains("ahead:      off:"));
    std::fs::remove_file(repo.path("fmt")).unwrap();
    repo.write("a.txt", "good 2\n");
    stop(&repo).expect("a block");
    let status = status(&repo);
    assert!(!status.contains("ahead:      off:"), "{status}");
}

/// `prove-it.ahead` is anchored: off when the session started, turning it on mid-session
/// starts no prover for that session.
#[test]
fn proving_ahead_off_at_the_sessions_start_stays_off() {
    let repo = repository("grep -q good a.txt", 1);
    repo.git(&["config", "prove-it.ahead", "off"]);
    hook(&repo, "SessionStart");
    repo.git(&["config", "prove-it.ahead", "on"]);
    stays_off(
        &repo,
        0,
        "a prover ran in a session anchored with proving ahead off",
    );
    assert_eq!(stop(&repo), None);
    assert_eq!(runs(&repo), 1);
}

/// A repository without verify.sh gets no state directory from the gate: an after-tool event
/// there leaves no trace either.
#[test]
fn an_after_tool_event_where_the_gate_is_not_armed_leaves_no_trace() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    hook(&repo, "SessionStart");
    repo.write("a.txt", "b\n");
    let out = hook(&repo, "PostToolUse");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    assert!(!repo.path(".git/prove-it").exists());
}

/// Proving ahead proves many states no commit will hold; they are of use to no one else. A
/// remote holding one commit (a.txt and a passing verify.sh) and a clone of it that proved
/// HEAD's tree and then a working state it never committed: the two trees.
fn a_clone_with_a_dirty_states_proof() -> (BareRemote, TestRepo, String, String) {
    let remote = BareRemote::new();
    let origin = TestRepo::with_commit();
    origin.publish_to(&remote);
    let alice = TestRepo::clone_of(&remote);
    alice.prove_it(&["run"]).assert().code(0);
    let committed = alice.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    alice.write("a.txt", "work in progress\n");
    alice.prove_it(&["run"]).assert().code(0);
    let dirty = alice.our_state_tree().unwrap();
    assert!(alice.note(&dirty).is_some());
    (remote, alice, committed, dirty)
}

/// `sync` sends the proofs of trees a branch holds, never those of a state no commit holds;
/// the local ref keeps them, and once the state is committed its proof travels.
#[test]
fn sync_sends_no_proof_of_a_state_no_commit_holds() {
    let (remote, alice, committed, dirty) = a_clone_with_a_dirty_states_proof();
    alice.prove_it(&["sync"]).assert().code(0).stdout(
        "sync: origin has no proofs yet; pushed our proofs to origin; 1 note of trees no commit holds stays here\n",
    );
    assert!(
        remote.note(&committed).is_some(),
        "the commit's proof stayed"
    );
    assert!(
        remote.note(&dirty).is_none(),
        "a dirty state's proof travelled"
    );
    assert!(alice.note(&dirty).is_some(), "the local ref was rewritten");
    // Synced again with nothing new: nothing more is sent.
    alice.prove_it(&["sync"]).assert().code(0).stdout(
        "sync: nothing new from origin; origin has all our proofs of committed trees; 1 note of trees no commit holds stays here\n",
    );
    assert!(remote.note(&dirty).is_none());
    alice.commit_all("work in progress");
    alice.prove_it(&["sync"]).assert().code(0);
    assert_eq!(
        remote.note(&dirty),
        alice.note(&dirty),
        "a committed tree's proof stayed"
    );
}

/// The pre-push hook sends the proofs of the pushed commits, not those of the working state
/// proven since.
#[test]
fn the_pre_push_hook_sends_no_proof_of_a_state_no_commit_holds() {
    let (remote, alice, _, _) = a_clone_with_a_dirty_states_proof();
    alice.prove_it(&["install", "pre-push"]).assert().code(0);
    alice.commit_all("work in progress");
    let pushed = alice.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    alice.write("b.txt", "more work\n");
    alice.prove_it(&["run"]).assert().code(0);
    let dirty = alice.our_state_tree().unwrap();
    let out = alice.git_output(&["push", "-q", "origin", "main"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        remote.note(&pushed).is_some(),
        "the pushed commit's proof stayed"
    );
    assert!(
        remote.note(&dirty).is_none(),
        "a dirty state's proof travelled"
    );
    assert!(alice.note(&dirty).is_some());
}

/// A revocation (as a contest or an acceptance) travels with the proof it names: it lives in
/// the same note, so a remote never gets a proof without the word that takes it back.
#[test]
fn a_revocation_travels_with_the_proof_it_names() {
    let (remote, alice, committed, dirty) = a_clone_with_a_dirty_states_proof();
    let revoked = alice
        .prove_it(&["revoke", "HEAD", "--reason", "flaky"])
        .output()
        .unwrap();
    assert_eq!(revoked.status.code(), Some(0), "{revoked:?}");
    alice.prove_it(&["sync"]).assert().code(0);
    let note = remote.note(&committed).expect("the proof travelled");
    assert!(note.contains("revokes:"), "{note}");
    assert!(remote.note(&dirty).is_none());
}

/// `doctor` counts the notes of trees no commit holds, and `--prune-unreachable` drops those
/// alone; a commit a reflog still names holds its tree. The drop is git-prove-it's own, so
/// the reflog check never takes it for records another writer lost.
#[test]
fn doctor_counts_the_proofs_of_states_no_commit_holds_and_prunes_only_those() {
    let (_remote, alice, committed, dirty) = a_clone_with_a_dirty_states_proof();
    let doctor = |args: &[&str]| {
        let mut all = vec!["doctor"];
        all.extend(args);
        let out = alice.prove_it(&all).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let line = "ok    refs/notes/prove-it: 1 note of trees no commit holds (working states proven and never committed): they stay in this clone, never sent; git prove-it doctor --prune-unreachable drops them\n";
    assert!(doctor(&[]).contains(line), "{}", doctor(&[]));
    // Committed, then reset away: the reflog still names the commit, which holds the tree.
    alice.commit_all("work in progress");
    alice.git(&["reset", "-q", "--hard", "HEAD~1"]);
    assert!(!doctor(&[]).contains("no commit holds"), "{}", doctor(&[]));
    alice.git(&["reflog", "expire", "--expire=now", "--all"]);
    let report = doctor(&["--prune-unreachable"]);
    assert!(
        report.starts_with("dropped 1 note of trees no commit holds from refs/notes/prove-it\n"),
        "{report}"
    );
    assert!(!report.contains("no commit holds ("), "{report}");
    assert!(
        report.contains("ok    no proof records dropped by other writers"),
        "{report}"
    );
    assert!(alice.note(&dirty).is_none());
    assert!(alice.note(&committed).is_some());
}

/// The ledger's entries, as `ledger --json` gives them.
fn ledger(repo: &TestRepo) -> Vec<Value> {
    let out = repo.prove_it(&["ledger", "--json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["entries"].as_array().unwrap().clone()
}

/// What proving ahead spares must be seen: a stop that passed on a proof the prover made has a
/// ledger line saying so, with its wait; a stop that ran verify.sh itself has none.
#[test]
fn the_ledger_notes_a_stop_answered_by_a_proof_made_ahead() {
    let repo = repository("grep -q good a.txt", 3);
    repo.git(&["config", "prove-it.ledger", "true"]);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the prover proves the state", || proven(&repo));
    assert_eq!(stop(&repo), None);
    let entries = ledger(&repo);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = &entries[0];
    assert_eq!(entry["outcome"], "PROVEN", "{entry}");
    assert_eq!(entry["exit_code"], 0, "{entry}");
    assert_eq!(entry["ahead"]["joined"], false, "{entry}");
    assert!(
        entry["ahead"]["waited_ms"].as_u64().unwrap() < 5000,
        "{entry}"
    );
    let actual = entry["actual"][0].as_str().unwrap();
    assert!(
        actual.starts_with("answered by a run made ahead: proven before the stop, waited "),
        "{actual}"
    );
    let summary = repo.prove_it(&["ledger", "--summary"]).output().unwrap();
    let summary = String::from_utf8_lossy(&summary.stdout).into_owned();
    assert!(
        summary.starts_with(
            "ledger: 1 entry, 0 turns ended unverified, 1 stop answered by a run made ahead\n"
        ),
        "{summary}"
    );
    // The next turn's stop runs verify.sh itself: no line.
    repo.git(&["config", "prove-it.ahead", "off"]);
    repo.write("a.txt", "good 2\n");
    assert_eq!(stop(&repo), None);
    assert_eq!(
        ledger(&repo).len(),
        1,
        "a stop's own passing run is on the ledger"
    );
}

/// A stop that joined the prover's run in flight says so, with the wait it spent on it.
///
/// The run waits (up to 10 s) to be joined, which lifts it to the agent's priority, then runs
/// on for 0.6 s: a fixed two seconds left the stop, started late under the whole suite, less
/// than the half second of wait this asserts.
#[test]
fn the_ledger_notes_a_stop_that_joined_the_run_made_ahead() {
    let repo = repository(
        "if [ -r /proc/$$/autogroup ]; then\n\
           i=0\n\
           while [ $i -lt 100 ] && ! grep -q 'nice 0' /proc/$$/autogroup; do\n\
             sleep 0.1; i=$((i + 1))\n\
           done\n\
           sleep 0.6\n\
         else\n\
           sleep 2\n\
         fi\n\
         grep -q good a.txt",
        3,
    );
    repo.git(&["config", "prove-it.ledger", "true"]);
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the run ahead starts", || runs(&repo) == 1);
    assert_eq!(stop(&repo), None, "the joined run passed");
    assert_eq!(runs(&repo), 1);
    let entries = ledger(&repo);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = &entries[0];
    assert_eq!(entry["ahead"]["joined"], true, "{entry}");
    assert!(
        entry["ahead"]["waited_ms"].as_u64().unwrap() >= 500,
        "{entry}"
    );
    let actual = entry["actual"][0].as_str().unwrap();
    assert!(
        actual.starts_with("answered by a run made ahead: joined it, waited "),
        "{actual}"
    );
    let out = repo.prove_it(&["ledger"]).output().unwrap();
    let human = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        human.contains("    actual: answered by a run made ahead: joined it, waited "),
        "{human}"
    );
}

/// A commit only a linked worktree's detached HEAD holds is still a commit: `doctor` neither
/// counts its proof among those of states no commit holds nor drops it.
#[test]
fn a_commit_a_detached_worktree_holds_keeps_its_proof_from_the_prune() {
    let repo = TestRepo::with_commit();
    let dir = repo.home().join("detached");
    repo.git(&["worktree", "add", "-q", "--detach", dir.to_str().unwrap()]);
    std::fs::write(dir.join("b.txt"), "b\n").unwrap();
    let git = |args: &[&str]| {
        let out = repo
            .command("git")
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["add", "b.txt"]);
    git(&["commit", "-q", "-m", "detached work"]);
    repo.prove_it(&["run"]).current_dir(&dir).assert().code(0);
    let tree = git(&["rev-parse", "HEAD^{tree}"]);
    assert!(repo.note(&tree).is_some());
    repo.git(&["reflog", "expire", "--expire=now", "--all"]);
    let out = repo
        .prove_it(&["doctor", "--prune-unreachable"])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!report.contains("no commit holds"), "{report}");
    assert!(
        repo.note(&tree).is_some(),
        "the prune dropped a commit's proof"
    );
}

/// With `prove-it.toml`, a check's proof is keyed by its input tree, which no commit's tree is:
/// the one a commit holds travels, the one of a working state's edit does not.
#[test]
fn sync_sends_a_committed_checks_input_tree_proof_and_not_a_dirty_ones() {
    let remote = BareRemote::new();
    let alice = crate::checks::monorepo("exit 0", "exit 0");
    alice.publish_to(&remote);
    let committed = crate::checks::stock_input_tree(&alice, &["docs", "prove-it.toml"]);
    alice.prove_it(&["run"]).assert().code(0);
    alice.write("docs/index.md", "docs, edited\n");
    let dirty = crate::checks::stock_input_tree(&alice, &["docs", "prove-it.toml"]);
    alice.prove_it(&["run"]).assert().code(0);
    assert!(alice.note(&dirty).is_some());
    alice.prove_it(&["sync"]).assert().code(0);
    assert!(
        remote.note(&committed).is_some(),
        "a commit's check proof stayed"
    );
    assert!(
        remote.note(&dirty).is_none(),
        "a dirty state's check proof travelled"
    );
}

/// The notes commit a filtered push sends is built on the remote's: the proofs another clone
/// sent stay there, and that clone then fetches ours as a fast-forward, without the dirty one.
#[test]
fn a_filtered_push_builds_on_the_remotes_proofs_and_loses_none() {
    let (remote, alice, committed, dirty) = a_clone_with_a_dirty_states_proof();
    let bob = TestRepo::clone_of(&remote);
    bob.write("b.txt", "bob\n");
    bob.commit_all("bob's work");
    bob.prove_it(&["run"]).assert().code(0);
    let bobs = bob.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    bob.prove_it(&["sync"]).assert().code(0);
    alice.prove_it(&["sync"]).assert().code(0).stdout(
        "sync: merged proofs from origin into ours (1 note gained records); pushed our proofs to origin; 1 note of trees no commit holds stays here\n",
    );
    assert!(remote.note(&bobs).is_some(), "bob's proof was lost");
    assert!(remote.note(&committed).is_some());
    assert!(remote.note(&dirty).is_none());
    bob.prove_it(&["sync"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("fetched new proofs from origin"));
    assert_eq!(bob.note(&committed), alice.note(&committed));
    assert!(bob.note(&dirty).is_none());
}

/// A run ahead must yield the CPU to the agent: the prover's session of its own is also a
/// scheduling group of its own where the kernel has autogroups, and a nice value weighs only
/// inside one, so its runs at nice 10 took half the CPU from the agent's own test run.
#[test]
fn a_run_ahead_runs_below_the_agent_in_its_scheduling_group_too() {
    let repo = repository(
        "set -- $(sed 's/.*) //' /proc/$$/stat)\n\
         echo \"${17}\" > \"$HOME/nice\"\n\
         cat /proc/$$/autogroup > \"$HOME/autogroup\" 2> /dev/null\n\
         true",
        1,
    );
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the prover proves the state", || proven(&repo));
    let read = |name: &str| std::fs::read_to_string(repo.home().join(name)).unwrap_or_default();
    assert_eq!(read("nice").trim(), "10");
    // `/autogroup-N nice M` where the kernel has autogroups; nothing where it has none.
    let group = read("autogroup");
    assert!(
        group.is_empty() || group.trim_end().ends_with("nice 10"),
        "{group}"
    );
}

/// A run the stop joins is one the agent waits for: kept below the agent's priority, on a busy
/// machine it took longer than the stop's own run would have. It is lifted while joined, and
/// the next run ahead is below the agent again.
///
/// The first run waits (up to 10 s) to be lifted before it says its group, so that the stop
/// joins it while it runs however loaded the machine is: a fixed second was not always enough
/// for the stop to start, under the whole suite.
#[test]
fn a_joined_run_is_lifted_to_the_agents_priority_and_the_next_run_is_not() {
    let repo = repository(
        "if [ -r /proc/$$/autogroup ] && grep -q 'good 1' a.txt; then\n\
           i=0\n\
           while [ $i -lt 100 ] && ! grep -q 'nice 0' /proc/$$/autogroup; do\n\
             sleep 0.1; i=$((i + 1))\n\
           done\n\
         else\n\
           sleep 1\n\
         fi\n\
         cat /proc/$$/autogroup >> \"$HOME/groups\" 2> /dev/null\n\
         grep -q good a.txt",
        2,
    );
    hook(&repo, "SessionStart");
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    eventually("the run ahead starts", || runs(&repo) == 1);
    assert_eq!(stop(&repo), None);
    assert_eq!(runs(&repo), 1, "the stop ran verify.sh itself");
    repo.write("a.txt", "good 2\n");
    hook(&repo, "PostToolUse");
    eventually("the next run ahead proves the state", || proven(&repo));
    let groups = std::fs::read_to_string(repo.home().join("groups")).unwrap_or_default();
    // Nothing where the kernel has no autogroups.
    if !groups.is_empty() {
        let groups: Vec<&str> = groups.lines().collect();
        assert_eq!(groups.len(), 2, "{groups:?}");
        assert!(groups[0].ends_with("nice 0"), "{groups:?}");
        assert!(groups[1].ends_with("nice 10"), "{groups:?}");
    }
}

/// The trap of a hook that had a second thread: Qwen Code's rules read its settings on a thread
/// of their own (a file that never answers costs the hook a bound, not its host's timeout), and
/// a hook that forked the prover before that thread was gone refused to fork, silently: about
/// one after-tool event in three proved nothing ahead, and the stop ran verify.sh itself. Each
/// of several fresh sessions, whose host reads its settings file, must start its prover.
#[test]
fn a_hook_that_read_its_hosts_settings_on_a_thread_still_starts_the_prover() {
    for attempt in 0..16 {
        let repo = repository("grep -q good a.txt", 1);
        repo.write(".qwen/settings.json", "{\"stopHookBlockingCap\": 5}\n");
        repo.commit_all("the host's settings");
        let qwen = |name: &str| {
            let event = json!({"session_id": "qwen-ahead", "transcript_path": "/t.jsonl",
                               "cwd": repo.root, "hook_event_name": name, "source": "startup",
                               "tool_name": "run_shell_command"});
            let out = repo
                .prove_it(&["hook", "qwen"])
                .env("QWEN_PROJECT_DIR", &repo.root)
                .write_stdin(event.to_string())
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            out
        };
        qwen("SessionStart");
        repo.write("a.txt", "good, better\n");
        let out = qwen("PostToolUse");
        assert!(out.stderr.is_empty(), "attempt {attempt}: {out:?}");
        eventually(
            &format!("attempt {attempt}: the prover proves the state"),
            || proven(&repo),
        );
        assert_eq!(runs(&repo), 1, "attempt {attempt}");
    }
}

/// A prover that cannot be started is said on stderr (which the host logs), never on stdout
/// (which it reads), and costs nothing but the next stop's own run: here a setting of proving
/// ahead that is not a number.
#[test]
fn a_prover_that_cannot_start_is_said_on_stderr_and_the_stop_runs_itself() {
    let repo = repository("grep -q good a.txt", 1);
    hook(&repo, "SessionStart");
    repo.git(&["config", "prove-it.settle", "soon"]);
    repo.write("a.txt", "good, better\n");
    let out = hook(&repo, "PostToolUse");
    assert!(out.stdout.is_empty(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("prove-it: nothing is being proven ahead: ")
            && stderr.contains("prove-it.settle")
            && stderr.contains("The next stop runs the checks itself."),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(runs(&repo), 0, "a prover ran");
    repo.git(&["config", "prove-it.settle", "100"]);
    assert_eq!(stop(&repo), None);
    assert_eq!(runs(&repo), 1, "the stop ran verify.sh itself");
}
