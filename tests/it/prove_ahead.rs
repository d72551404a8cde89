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
    repo.write("a.txt", "good 2\n");
    hook(&repo, "PostToolUse");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        runs(&repo),
        1,
        "proving ahead ran a script that writes in place"
    );
    assert_eq!(prover_pid(&repo), None);
    let status = repo.prove_it(&["status"]).output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        status.contains(
            "ahead:      off: the last run of verify.sh changed files in place (gen.txt)"
        ),
        "{status}"
    );
}

/// `prove-it.ahead` is anchored: off when the session started, turning it on mid-session
/// starts no prover for that session.
#[test]
fn proving_ahead_off_at_the_sessions_start_stays_off() {
    let repo = repository("grep -q good a.txt", 1);
    repo.git(&["config", "prove-it.ahead", "off"]);
    hook(&repo, "SessionStart");
    repo.git(&["config", "prove-it.ahead", "on"]);
    repo.write("a.txt", "good 1\n");
    hook(&repo, "PostToolUse");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        runs(&repo),
        0,
        "a prover ran in a session anchored with proving ahead off"
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
#[test]
fn a_joined_run_is_lifted_to_the_agents_priority_and_the_next_run_is_not() {
    let repo = repository(
        "sleep 1\n\
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
