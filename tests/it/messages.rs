//! Every error a person reads is one plain sentence and `hint:` lines that fix it,
//! and with `--json` a failure is a JSON object on stdout too.

use predicates::prelude::*;

use crate::harness::TestRepo;

/// The lines of an error message that are neither its sentence nor a hint.
fn stray_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .skip(1)
        .filter(|line| !line.starts_with("hint: "))
        .collect()
}

// Outside a repository every command said `caused by: NotFound` and no way out.
#[test]
fn outside_a_repository_every_command_says_how_to_get_into_one() {
    let repo = TestRepo::new();
    let elsewhere = repo.home().join("plain");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for command in [
        &["run"][..],
        &["status"],
        &["check"],
        &["log"],
        &["sync"],
        &["ledger"],
        &["doctor"],
    ] {
        let assert = repo
            .prove_it(command)
            .current_dir(&elsewhere)
            .env("GIT_CEILING_DIRECTORIES", repo.home())
            .assert()
            .code(2)
            .stdout("");
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert!(
            stderr.starts_with("error: not in a git repository"),
            "{command:?}: {stderr}"
        );
        assert!(!stderr.contains("caused by"), "{command:?}: {stderr}");
        assert!(
            stderr.contains("hint: ") && stderr.contains("git init"),
            "{command:?}: {stderr}"
        );
        assert!(stderr.contains("cd into"), "{command:?}: {stderr}");
    }
}

// `run nosuchrev` printed three `caused by:` lines of gix internals.
#[test]
fn an_unknown_revision_is_one_sentence_and_a_hint() {
    let repo = TestRepo::with_commit();
    for command in [
        &["run", "nosuchrev"][..],
        &["check", "nosuchrev"],
        &["log", "nosuchrev"],
    ] {
        let assert = repo.prove_it(command).assert().code(2).stdout("");
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert!(
            stderr.starts_with("error: could not resolve the revision \"nosuchrev\"\n"),
            "{command:?}: {stderr}"
        );
        assert!(stray_lines(&stderr).is_empty(), "{command:?}: {stderr}");
        assert!(
            stderr.contains("hint: name a commit"),
            "{command:?}: {stderr}"
        );
    }
}

// With --json a failure printed nothing on stdout, so a script read nothing.
#[test]
fn with_json_a_failure_is_a_json_error_object_on_stdout() {
    let repo = TestRepo::with_commit();
    let assert = repo
        .prove_it(&["run", "--json", "nosuchrev"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("error: could not resolve"));
    let value = crate::harness::json_stdout(&assert);
    assert_eq!(value["version"], 1);
    assert_eq!(value["code"], "bad_revision");
    assert_eq!(
        value["message"],
        "could not resolve the revision \"nosuchrev\""
    );
    assert!(
        value["hints"][0]
            .as_str()
            .unwrap()
            .starts_with("name a commit")
    );

    let elsewhere = repo.home().join("plain");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for command in [
        &["status", "--json"][..],
        &["sync", "--json"],
        &["ledger", "--json"],
    ] {
        let assert = repo
            .prove_it(command)
            .current_dir(&elsewhere)
            .env("GIT_CEILING_DIRECTORIES", repo.home())
            .assert()
            .code(2);
        let value = crate::harness::json_stdout(&assert);
        assert_eq!(value["code"], "not_a_repository", "{command:?}");
        assert!(
            value["hints"]
                .as_array()
                .unwrap()
                .iter()
                .any(|hint| hint.as_str().unwrap().contains("git init")),
            "{command:?}: {value}"
        );
    }
    // Without --json, stdout stays empty: the object is for scripts that asked for one.
    repo.prove_it(&["status"])
        .current_dir(&elsewhere)
        .env("GIT_CEILING_DIRECTORIES", repo.home())
        .assert()
        .code(2)
        .stdout("");
}

// A verify.sh without the execute bit was told "create an executable verify.sh".
#[test]
fn a_verify_sh_without_the_execute_bit_is_told_chmod() {
    let repo = TestRepo::new();
    repo.write("verify.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("verify.sh", 0o644);
    repo.prove_it(&["run"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "hint: make it executable: chmod +x verify.sh",
        ))
        .stdout(predicate::str::contains("create an executable").not());
    let assert = repo.prove_it(&["run", "--json"]).assert().code(3);
    let value = crate::harness::json_stdout(&assert);
    assert_eq!(value["hints"][0], "make it executable: chmod +x verify.sh");
}

// `run` with no verify.sh did not mention `init`, which writes one.
#[test]
fn run_without_verify_sh_points_at_init() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.prove_it(&["run"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "hint: write one for this project's stack: git prove-it init",
        ));
}

/// A verify.sh that fails saying `boom` until `$HOME/pass` exists, then passes saying `fine`.
fn fails_until_told(repo: &TestRepo) -> std::path::PathBuf {
    let pass = repo.home().join("pass");
    repo.verify_script(&format!(
        "if [ -e '{}' ]; then echo fine; exit 0; fi\necho 'assertion failed: boom'\nexit 1",
        pass.display()
    ));
    pass
}

/// One Claude Code hook event for session `s1` in `repo`.
pub fn claude(repo: &TestRepo, event: &serde_json::Value) -> serde_json::Value {
    let assert = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(event.to_string())
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    if stdout.trim().is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_str(&stdout).unwrap()
    }
}

pub fn stop_event(repo: &TestRepo, active: bool) -> serde_json::Value {
    serde_json::json!({
        "session_id": "s1-messages",
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": repo.root,
        "prompt_id": "p1",
        "hook_event_name": "Stop",
        "stop_hook_active": active,
        "last_assistant_message": "All tests pass.",
    })
}

// The block pointed at the session's log, and the next (passing) run wrote over
// it, so the failing output the agent was told to read was gone.
#[test]
fn the_failing_output_the_agent_was_told_to_read_survives_the_next_run() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let pass = fails_until_told(&repo);
    repo.commit_all("initial");
    claude(
        &repo,
        &serde_json::json!({
            "session_id": "s1-messages",
            "transcript_path": "/nonexistent/t.jsonl",
            "cwd": repo.root,
            "hook_event_name": "SessionStart",
            "source": "startup",
        }),
    );
    repo.write("a.txt", "changed\n");
    let block = claude(&repo, &stop_event(&repo, false));
    assert_eq!(block["decision"], "block", "{block}");
    let reason = block["reason"].as_str().unwrap();
    let failing = reason
        .lines()
        .find_map(|line| line.strip_prefix("Full output: "))
        .map_or_else(|| panic!("no log in {reason}"), std::path::PathBuf::from);
    assert!(reason.contains("this failing run's output, kept apart from the latest run's log"));

    std::fs::write(&pass, "").unwrap();
    let passed = claude(&repo, &stop_event(&repo, true));
    assert_ne!(passed["decision"], "block", "{passed}");
    let kept = std::fs::read_to_string(&failing).unwrap();
    assert!(kept.contains("assertion failed: boom"), "{kept}");
    assert!(!kept.contains("fine"), "{kept}");
    // The latest run's log, beside it, is the passing run's.
    let latest = std::fs::read_dir(failing.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|e| e == "log") && *path != failing)
        .expect("the session's latest log");
    assert_eq!(std::fs::read_to_string(latest).unwrap(), "fine\n");
}

// For `run`: last-run.log is the latest run's, last-failed-run.log the last
// failing one's, and the failure says which is which.
#[test]
fn run_keeps_the_last_failing_log_apart_from_the_last_runs() {
    let repo = TestRepo::with_commit();
    let pass = fails_until_told(&repo);
    let assert = repo.prove_it(&["run"]).assert().code(1);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let failing = repo.path(".git/prove-it/last-failed-run.log");
    let failing = std::fs::canonicalize(failing).unwrap();
    assert!(
        stdout.contains(&format!("full output: {}\n", failing.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains("last-run.log beside it holds the latest run's"),
        "{stdout}"
    );
    std::fs::write(&pass, "").unwrap();
    // A pass after a failure on the same tree is contested (SPEC.md section 3.3), so `run`
    // exits 1; the logs are what this is about.
    repo.prove_it(&["run"]).assert().code(1);
    let dir = repo.path(".git/prove-it");
    assert_eq!(
        std::fs::read_to_string(dir.join("last-run.log")).unwrap(),
        "fine\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("last-failed-run.log")).unwrap(),
        "assertion failed: boom\n"
    );
}

// With RUST_BACKTRACE=1 the last 20 lines of a failing `cargo test` are
// backtrace frames, and the assertion's `left:`/`right:` never reached the agent.
#[test]
fn the_assertion_before_a_backtrace_reaches_the_agent() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.verify_script(
        "echo 'running 1 test'\n\
         echo \"thread 'tests::adds' panicked at src/lib.rs:9:9:\"\n\
         echo 'assertion `left == right` failed'\n\
         echo '  left: 4'\n\
         echo ' right: 5'\n\
         echo 'stack backtrace:'\n\
         i=0; while [ $i -lt 40 ]; do echo \"  $i: core::panicking::panic_fmt\"; i=$((i+1)); done\n\
         echo 'test result: FAILED. 0 passed; 1 failed'\n\
         exit 101",
    );
    repo.commit_all("initial");
    claude(
        &repo,
        &serde_json::json!({
            "session_id": "s1-messages",
            "transcript_path": "/nonexistent/t.jsonl",
            "cwd": repo.root,
            "hook_event_name": "SessionStart",
            "source": "startup",
        }),
    );
    repo.write("a.txt", "changed\n");
    let block = claude(&repo, &stop_event(&repo, false));
    let reason = block["reason"].as_str().unwrap();
    let last = reason.find("Last 20 lines of output:").expect(reason);
    for key in [
        "panicked at src/lib.rs:9:9:",
        "assertion `left == right` failed",
        "  left: 4",
        " right: 5",
    ] {
        let at = reason
            .find(key)
            .unwrap_or_else(|| panic!("{key:?} not in {reason}"));
        assert!(
            at < last,
            "{key:?} is not among the earlier key lines: {reason}"
        );
    }
    assert!(
        reason.contains("test result: FAILED. 0 passed; 1 failed"),
        "{reason}"
    );
    assert!(reason.contains("PROVE_IT_SKIP=1"), "{reason}");
}

/// node's test runner (TAP) filled a block's key lines with `ok ... # SKIP` lines, which hold a
/// number and the word "skipped", and left out the assertion's expected and actual values.
#[test]
fn node_test_runner_key_lines_are_the_failure_and_its_values_not_skips() {
    let repo = TestRepo::new();
    let mut tests =
        String::from("import test from 'node:test';\nimport assert from 'node:assert';\n");
    tests.push_str(
        "for (let i = 0; i < 8; i++) test(`skipped ${i}`, { skip: 'later' }, () => {});\n",
    );
    tests.push_str("test('adds', () => { assert.strictEqual(1 + 1, 3); });\n");
    tests.push_str("for (let i = 0; i < 8; i++) test(`passes ${i}`, () => {});\n");
    repo.write("a.test.mjs", &tests);
    repo.verify_script("exec node --test --test-reporter=tap a.test.mjs");
    repo.commit_all("initial");
    claude(
        &repo,
        &serde_json::json!({
            "session_id": "s1-tap",
            "transcript_path": "/nonexistent/t.jsonl",
            "cwd": repo.root,
            "hook_event_name": "SessionStart",
            "source": "startup",
        }),
    );
    repo.write("a.txt", "changed\n");
    let block = claude(&repo, &stop_event(&repo, false));
    let reason = block["reason"].as_str().unwrap();
    let start = reason.find("Key lines from earlier").expect(reason);
    let last = reason.find("Last 20 lines of output:").expect(reason);
    let keys = &reason[start..last];
    for key in [
        "not ok 9 - adds",
        "Expected values to be strictly equal:",
        "2 !== 3",
        "expected: 3",
        "actual: 2",
        "operator: 'strictEqual'",
    ] {
        assert!(
            keys.contains(key),
            "{key:?} not among the key lines: {keys}"
        );
    }
    assert!(!keys.contains("# SKIP"), "{keys}");
    assert!(!keys.contains("\nok "), "{keys}");
    assert!(!keys.contains("# Subtest"), "{keys}");
}

// A failed git command put git's whole paragraph on the error line.
#[test]
fn a_failed_git_command_is_one_sentence_then_gits_words_then_a_hint() {
    let repo = TestRepo::with_commit();
    let assert = repo
        .prove_it(&["sync", "nowhere"])
        .assert()
        .code(2)
        .stdout("");
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines[0].starts_with("error: git ls-remote -- nowhere"),
        "{stderr}"
    );
    assert!(
        lines[1..]
            .iter()
            .all(|line| line.starts_with("caused by: ") || line.starts_with("hint: ")),
        "{stderr}"
    );
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("hint: check that 'nowhere' is a remote"),
        "{stderr}"
    );
}

// For `status` too: it told an unarmed repository to run `git prove-it run`,
// which refuses there; it now gives run's hints, in text and in JSON.
#[test]
fn status_of_an_unarmed_verify_sh_gives_runs_hints_not_run() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.prove_it(&["status"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "hint: write one for this project's stack: git prove-it init",
        ))
        .stdout(predicate::str::contains("run 'git prove-it run'").not());
    repo.write("verify.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("verify.sh", 0o644);
    let assert = repo.prove_it(&["status", "--json"]).assert().code(3);
    let value = crate::harness::json_stdout(&assert);
    assert_eq!(value["hints"][0], "make it executable: chmod +x verify.sh");
    repo.chmod("verify.sh", 0o755);
    let assert = repo.prove_it(&["status", "--json"]).assert();
    let value = crate::harness::json_stdout(&assert);
    assert!(value.get("hints").is_none(), "{value}");
}
