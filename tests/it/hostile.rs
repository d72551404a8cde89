//! Hostile verify.sh and hostile input, through the real binary in real repositories: a flood
//! of output, bytes that are not UTF-8, death by a signal, and hook payloads broken in every
//! host's dialect. Cases covered elsewhere are listed in SECURITY.md with their tests (a hang,
//! a daemon child, a link leading outside, a directory, writes into the worktree).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;
use predicates::prelude::*;
use serde_json::{Value, json};

use crate::check::{hand_write_note, tree_of};
use crate::harness::TestRepo;
use crate::hosts::{self, Answer};

/// A Claude Code event of the one session these tests run.
fn event(repo: &TestRepo, name: &str) -> String {
    json!({
        "session_id": "hostile-session",
        "transcript_path": "/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": name,
        "prompt_id": "p1",
        "stop_hook_active": false,
        "last_assistant_message": "All tests pass.",
    })
    .to_string()
}

/// `git prove-it hook claude` with `stdin`, returning its stdout (checked to be nothing or one
/// JSON object) and the peak resident memory the kernel saw for it (VmHWM), in KiB.
fn hook_measured(repo: &TestRepo, stdin: &str) -> (Option<Value>, u64) {
    let mut child = repo
        .command(cargo_bin("git-prove-it"))
        .args(["hook", "claude"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
    }
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0;
    let started = Instant::now();
    // VmHWM is the high-water mark: sampling it until the process exits sees the peak.
    while child.try_wait().unwrap().is_none() {
        if let Ok(status) = std::fs::read_to_string(&status_file)
            && let Some(kib) = status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak_kib = peak_kib.max(kib);
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the hook hung"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "hooks exit 0");
    let stdout = String::from_utf8(out.stdout).expect("the hook's stdout is UTF-8");
    if stdout.is_empty() {
        return (None, peak_kib);
    }
    assert!(
        stdout.ends_with('\n') && stdout.matches('\n').count() == 1,
        "one JSON object and a newline: {stdout:?}"
    );
    (Some(serde_json::from_str(&stdout).unwrap()), peak_kib)
}

/// An armed repository whose session started, then changed: the next stop runs verify.sh.
fn session_that_changed(verify_body: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.verify_script(verify_body);
    repo.commit_all("initial");
    let (answer, _) = hook_measured(&repo, &event(&repo, "SessionStart"));
    assert_eq!(answer, None);
    repo.write("b.txt", "changed\n");
    repo
}

fn block_reason(answer: Option<Value>) -> String {
    let json = answer.expect("a block, not silence");
    assert_eq!(json["decision"], "block", "{json}");
    json["reason"].as_str().unwrap().to_string()
}

/// 100 MB of output: the hook keeps only the tail in memory (a bounded deque of capped lines)
/// and a capped log on disk, and the agent gets a short reason ending in the real last lines.
#[test]
fn a_hundred_megabytes_of_output_keep_memory_bounded_and_the_reason_short() {
    let repo = session_that_changed(
        "yes 'test output that repeats, line after line, for a very long time' | head -c 100000000\n\
         echo 'the real last line, one'\n\
         echo 'the real last line, two' >&2\n\
         exit 1",
    );
    let (answer, peak_kib) = hook_measured(&repo, &event(&repo, "Stop"));
    let reason = block_reason(answer);
    assert!(reason.len() < 8000, "{} characters", reason.len());
    let one = reason.find("the real last line, one").expect(&reason);
    let two = reason.find("the real last line, two").expect(&reason);
    assert!(one < two, "{reason}");
    assert!(reason.contains("exit code 1"), "{reason}");
    // Generous: the binary itself needs a few MiB; keeping the output would need 100.
    assert!(peak_kib > 0, "the hook's memory was never sampled");
    assert!(
        peak_kib < 64 * 1024,
        "the hook's peak memory was {peak_kib} KiB for 100 MB of output"
    );
    // The session's log keeps the first 8 MiB and says it was cut.
    let sessions = repo.path(".git/prove-it/sessions");
    let log = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|ext| ext == "log"))
        .expect("a session log");
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(size <= 8 * 1024 * 1024 + 100, "{size} bytes");
    let text = std::fs::read(&log).unwrap();
    assert!(
        String::from_utf8_lossy(&text[text.len() - 100..]).contains("log truncated after"),
        "the log says it was cut"
    );
}

/// Bytes that are not UTF-8 become U+FFFD in the reason, and the hook's JSON stays valid.
/// (`run --json` does the same: run::invalid_utf8_output_is_replaced_and_json_stays_valid.)
#[test]
fn output_that_is_not_utf8_leaves_the_hooks_json_valid() {
    let repo = session_that_changed("printf 'bad \\377\\376 bytes\\n'\nprintf '\\300\\n'\nexit 1");
    let (answer, _) = hook_measured(&repo, &event(&repo, "Stop"));
    let reason = block_reason(answer);
    assert!(reason.contains("bad \u{fffd}\u{fffd} bytes"), "{reason}");
}

/// A verify.sh killed by a signal fails, and the reason names the signal.
/// (`run` names it too: run::death_by_a_signal_is_named.)
#[test]
fn death_by_a_signal_is_named_in_the_block() {
    for (signal, named) in [
        ("KILL", "killed by signal 9 (SIGKILL)"),
        ("TERM", "killed by signal 15 (SIGTERM)"),
        ("SEGV", "killed by signal 11 (SIGSEGV)"),
    ] {
        let repo = session_that_changed(&format!("echo about to die\nkill -{signal} $$"));
        let (answer, _) = hook_measured(&repo, &event(&repo, "Stop"));
        let reason = block_reason(answer);
        assert!(reason.contains(named), "{signal}: {reason}");
        assert!(reason.contains("about to die"), "{reason}");
    }
}

/// Each host's own stop payload, broken in ways a host (or an attacker writing to the hook's
/// stdin) could: every answer is the host's protocol, and every one says, visibly, that the
/// turn could not be checked. (Unit-level: the property tests in src/fuzzing.rs.)
#[test]
fn broken_payloads_in_every_dialect_are_answered_visibly() {
    let repo = TestRepo::with_commit();
    for host in hosts::ALL {
        let (arg, payload) = host.stop(&repo, "s1", 0);
        let object = payload.as_object().unwrap();
        let session_key = ["session_id", "sessionId", "conversation_id"]
            .into_iter()
            .find(|key| object.contains_key(*key))
            .unwrap();
        let text = payload.to_string();
        let mut broken: Vec<(&str, Value)> = Vec::new();
        let mut without = payload.clone();
        without.as_object_mut().unwrap().remove(session_key);
        broken.push(("no session", without));
        let mut number = payload.clone();
        number[session_key] = json!(42);
        broken.push(("a number for the session", number));
        for (what, value) in broken {
            let answer = hosts::hook(&repo, host, (arg, value), &[]);
            assert_visible(host, what, answer);
        }
        // Raw bytes: cut in half, not UTF-8, nested past any sane depth.
        let raw: Vec<(&str, Vec<u8>)> = vec![
            ("cut in half", text.as_bytes()[..text.len() / 2].to_vec()),
            (
                "not UTF-8",
                text.replacen("\"s1\"", "\"s\u{0}1\"", 1)
                    .into_bytes()
                    .into_iter()
                    .map(|b| if b == 0 { 0xff } else { b })
                    .collect(),
            ),
            ("deeply nested", [&b"["[..]; 100_000].concat()),
        ];
        for (what, bytes) in raw {
            let mut cmd = repo.command(cargo_bin("git-prove-it"));
            cmd.args(["hook", host.name()]).args(arg);
            let out = assert_cmd::Command::from_std(cmd)
                .write_stdin(bytes)
                .output()
                .unwrap();
            assert_visible(host, what, host.read(&out));
        }
    }
}

#[track_caller]
fn assert_visible(host: hosts::Host, what: &str, answer: Answer) {
    match answer {
        Answer::Notice(text) | Answer::Block(text) => assert!(
            text.contains("could not check this turn"),
            "{host:?}, {what}: {text}"
        ),
        Answer::Silent => panic!("{host:?}, {what}: a broken payload passed silently"),
    }
}

/// Regression (found by the property test in src/fuzzing.rs): a hand-written record whose time
/// leaves RFC 3339's years once in UTC parsed, then crashed `check` (exit 101) when the record
/// was rendered. It is now an invalid record, named, like any other.
#[test]
fn a_hand_written_time_out_of_range_is_an_invalid_record_not_a_crash() {
    let repo = TestRepo::with_commit();
    let tree = tree_of(&repo, "HEAD");
    let record = format!(
        "prove-it-record: 1\noutcome: PROVEN\ntree: {tree}\nhead: none\n\
         verify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\nverify-anchor: none\n\
         exit-code: 0\nduration-ms: 1\ntime: 0000-01-01T00:00:00+01:00\nhost: cli\n\
         session: none\ntool: by hand\nSigned-off-by: Mallory <m@example.com>"
    );
    hand_write_note(&repo, &tree, &record);
    for args in [&["check"][..], &["status"], &["log"]] {
        let out = repo.prove_it(args).output().unwrap();
        assert!(
            matches!(out.status.code(), Some(0..=2)),
            "{args:?}: {out:?}"
        );
    }
    repo.prove_it(&["check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("out of RFC 3339's range"));
}

/// A verify.sh that leaves a daemon behind holding its output: the run ends without waiting
/// for it (and without killing it), for `run` as for the hook.
#[test]
fn a_daemon_left_holding_the_output_is_neither_waited_for_nor_killed() {
    let repo = TestRepo::with_commit();
    let pid_file = repo.home().join("daemon.pid");
    repo.verify_script(&format!(
        "sleep 30 &\necho $! > '{}'\necho started a daemon\nexit 0",
        pid_file.display()
    ));
    let started = Instant::now();
    repo.prove_it(&["run"]).assert().code(0);
    assert!(started.elapsed() < Duration::from_secs(10), "waited for it");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let alive = Command::new("kill")
        .args(["-0", pid.trim()])
        .status()
        .unwrap();
    assert!(alive.success(), "the daemon was killed");
    let _ = Command::new("kill").args(["-9", pid.trim()]).status();
}
