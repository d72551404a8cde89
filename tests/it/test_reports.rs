//! The tests a run ran: the JUnit reports a script writes into `PROVE_IT_REPORTS`, the summary
//! lines of real runners, and a stop's words when they fall short of the session's start, fed
//! the JSON events Claude Code sends.

use std::process::Output;

use assert_cmd::cargo::cargo_bin;
use serde_json::{Value, json};

use crate::harness::{BareRemote, TestRepo};

const SESSION: &str = "86ca0000-reports-session";

fn hook(repo: &TestRepo, event: &Value) -> Output {
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.args(["hook", "claude"]);
    assert_cmd::Command::from_std(cmd)
        .write_stdin(event.to_string())
        .output()
        .unwrap()
}

fn start(repo: &TestRepo) {
    let out = hook(
        repo,
        &json!({
            "session_id": SESSION,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": repo.root,
            "hook_event_name": "SessionStart",
            "source": "startup",
        }),
    );
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
}

/// A stop's answer: `None` when silent, else its JSON.
fn stop(repo: &TestRepo) -> Option<Value> {
    stop_in(repo, "99ce0000-prompt-1")
}

/// A stop of the turn `prompt`.
fn stop_in(repo: &TestRepo, prompt: &str) -> Option<Value> {
    let out = hook(
        repo,
        &json!({
            "session_id": SESSION,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": repo.root,
            "prompt_id": prompt,
            "hook_event_name": "Stop",
            "stop_hook_active": false,
            "last_assistant_message": "All tests pass.",
        }),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    (!stdout.is_empty()).then(|| serde_json::from_str(&stdout).unwrap())
}

fn notice(answer: Option<Value>) -> String {
    let answer = answer.expect("a notice, not silence");
    assert!(answer.get("decision").is_none(), "{answer}");
    answer["systemMessage"].as_str().unwrap().to_string()
}

fn case(name: &str, end: &str) -> String {
    match end {
        "pass" => format!(r#"<testcase classname="suite" name="{name}"/>"#),
        "skip" => format!(r#"<testcase classname="suite" name="{name}"><skipped/></testcase>"#),
        _ => format!(r#"<testcase classname="suite" name="{name}"><failure/></testcase>"#),
    }
}

fn junit(cases: &[(&str, &str)]) -> String {
    let body: String = cases.iter().map(|(name, end)| case(name, end)).collect();
    format!(
        r#"<?xml version="1.0"?><testsuites><testsuite name="suite">{body}</testsuite></testsuites>"#
    )
}

/// A repository whose verify.sh stands for a test runner writing a JUnit report: it copies
/// `suite.xml` into `$PROVE_IT_REPORTS`. Proven at HEAD, the baseline of a session started on it.
fn reporting(cases: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("suite.xml", &junit(cases));
    repo.verify_script("cp suite.xml \"$PROVE_IT_REPORTS/report.xml\"");
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().success();
    repo
}

/// The proof record of the working state.
fn record(repo: &TestRepo) -> String {
    let tree = repo.our_state_tree().unwrap();
    repo.note(&tree).expect("a proof of the working state")
}

/// Deleting a test makes verify.sh pass with one fewer: the stop names it, by name.
#[test]
fn a_deleted_test_is_named_as_gone() {
    let repo = reporting(&[("test_a", "pass"), ("test_b", "pass")]);
    start(&repo);
    repo.write("suite.xml", &junit(&[("test_a", "pass")]));
    let text = notice(stop(&repo));
    assert!(text.contains("BOUNDED_CLAIM_SURVIVES"), "{text}");
    assert!(text.contains("passing tests gone: suite::test_b"), "{text}");
    assert!(
        text.contains("fewer passing tests: 2 before, 1 now"),
        "{text}"
    );
    let note = record(&repo);
    assert!(note.contains("outcome: BOUNDED_CLAIM_SURVIVES"), "{note}");
    assert!(
        note.contains("tests: passed=1 failed=0 skipped=0 source=junit\ntests-pass-z: "),
        "{note}"
    );
    assert!(
        note.contains("tests-weakened: passing tests gone: suite::test_b"),
        "{note}"
    );
}

/// Marking a test skipped is the commonest way to turn a run green.
#[test]
fn a_newly_skipped_test_is_named() {
    let repo = reporting(&[("test_a", "pass"), ("test_b", "pass")]);
    start(&repo);
    repo.write(
        "suite.xml",
        &junit(&[("test_a", "pass"), ("test_b", "skip")]),
    );
    let text = notice(stop(&repo));
    assert!(text.contains("newly skipped: suite::test_b"), "{text}");
    assert!(
        text.contains("more skipped tests: 0 before, 1 now"),
        "{text}"
    );
}

/// A renamed test reads as one gone and one new, the counts unchanged.
#[test]
fn a_renamed_test_shows_as_one_gone_and_one_new() {
    let repo = reporting(&[("test_a", "pass"), ("test_b", "pass")]);
    start(&repo);
    repo.write(
        "suite.xml",
        &junit(&[("test_a", "pass"), ("test_b2", "pass")]),
    );
    let text = notice(stop(&repo));
    assert!(
        text.contains("passing tests gone: suite::test_b (new: suite::test_b2)"),
        "{text}"
    );
    assert!(!text.contains("fewer passing"), "{text}");
}

/// A verify.sh that stops writing its report would hide every other weakening.
#[test]
fn a_verify_sh_that_stops_writing_reports_is_told_the_report_disappeared() {
    let repo = reporting(&[("test_a", "pass")]);
    start(&repo);
    repo.verify_script("echo no report");
    let text = notice(stop(&repo));
    assert!(text.contains("the test report disappeared"), "{text}");
}

/// A process verify.sh leaves behind writes a full report after the run: it is never read, as
/// the directory is read when the script exits and removed then.
#[test]
fn a_forged_report_written_after_the_run_is_not_read() {
    let repo = reporting(&[("test_a", "pass"), ("test_b", "pass")]);
    start(&repo);
    repo.write("suite.xml", &junit(&[("test_a", "pass")]));
    repo.write(
        "forged.xml",
        &junit(&[("test_a", "pass"), ("test_b", "pass")]),
    );
    repo.verify_script(
        "cp suite.xml \"$PROVE_IT_REPORTS/report.xml\"\n\
         dir=\"$PROVE_IT_REPORTS\"\n\
         (sleep 1; cp \"$PWD/forged.xml\" \"$dir/forged.xml\") >/dev/null 2>&1 &",
    );
    let text = notice(stop(&repo));
    assert!(text.contains("passing tests gone: suite::test_b"), "{text}");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let reports = repo.path(".git/prove-it/reports");
    let left: Vec<_> = std::fs::read_dir(&reports).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A report that names the same test twice must not count it twice.
#[test]
fn a_report_naming_a_test_twice_counts_it_once() {
    let repo = reporting(&[("test_a", "pass"), ("test_a", "pass")]);
    let note = repo.note(repo.git(&["rev-parse", "HEAD^{tree}"]).trim());
    let note = note.unwrap();
    assert!(
        note.contains("tests: passed=1 failed=0 skipped=0 source=junit"),
        "{note}"
    );
}

/// A report that does not read (malformed or over the size cap) is a clear error in the stop's
/// words and the record, never a silent pass.
#[test]
fn malformed_and_huge_reports_are_a_clear_error() {
    let repo = reporting(&[("test_a", "pass")]);
    start(&repo);
    repo.write("suite.xml", "<testsuite><testcase name=\"a\">");
    let text = notice(stop(&repo));
    assert!(
        text.contains("the test report could not be read: report.xml: not JUnit XML"),
        "{text}"
    );
    assert!(record(&repo).contains("tests-error: report.xml: "));
    repo.verify_script("head -c 40000000 /dev/zero > \"$PROVE_IT_REPORTS/huge.xml\"");
    let text = notice(stop(&repo));
    assert!(
        text.contains("huge.xml: 40000000 bytes, over the cap"),
        "{text}"
    );
}

/// A test skipped when the session started and still skipped is not new: nothing to say.
#[test]
fn a_test_skipped_at_session_start_staying_skipped_is_not_reported() {
    let repo = reporting(&[("test_a", "pass"), ("test_s", "skip")]);
    start(&repo);
    repo.write("other.txt", "more\n");
    assert_eq!(stop(&repo), None);
}

/// Writing new tests must cost nothing.
#[test]
fn an_honest_added_test_is_not_reported() {
    let repo = reporting(&[("test_a", "pass")]);
    start(&repo);
    repo.write(
        "suite.xml",
        &junit(&[("test_a", "pass"), ("test_new", "pass")]),
    );
    assert_eq!(stop(&repo), None);
    let note = record(&repo);
    assert!(note.contains("outcome: PROVEN"), "{note}");
    assert!(!note.contains("tests-weakened"), "{note}");
}

/// Without a report, a runner's summary line gives counts: here `cargo test`'s, printed by a
/// real cargo on a tiny crate when it is on PATH (else a line as cargo prints it).
#[test]
fn summary_lines_give_counts_without_a_report() {
    let repo = TestRepo::new();
    repo.verify_script(
        "echo 'test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s'",
    );
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().success();
    let note = repo.note(repo.git(&["rev-parse", "HEAD^{tree}"]).trim());
    assert!(
        note.unwrap()
            .contains("tests: passed=3 failed=0 skipped=1 source=summary"),
    );
    start(&repo);
    repo.verify_script(
        "echo 'test result: ok. 2 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.00s'",
    );
    let text = notice(stop(&repo));
    assert!(
        text.contains("fewer passing tests: 3 before, 2 now"),
        "{text}"
    );
    assert!(
        text.contains("more skipped tests: 1 before, 2 now"),
        "{text}"
    );
}

/// A Python with pytest: `PROVE_IT_TEST_PYTHON`, else `python3` from the caller's PATH when it
/// imports pytest. The real-pytest tests are ignored by a plain `cargo test`; `.ci/run` installs
/// pytest and runs them, and there a missing pytest fails them.
fn python_with_pytest() -> String {
    let python = std::env::var("PROVE_IT_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    std::process::Command::new(&python)
        .args(["-c", "import pytest, sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .expect("a python that imports pytest: set PROVE_IT_TEST_PYTHON (.ci/run installs one)")
}

/// Real pytest, with `--junitxml` into `$PROVE_IT_REPORTS` (names) and without (its summary
/// line, counts): a test newly skipped is named in the first case and counted in the second.
#[test]
#[ignore = "needs pytest: PROVE_IT_TEST_PYTHON=<python with pytest>; .ci/run installs it and runs this"]
fn real_pytest_with_and_without_junit() {
    let python = python_with_pytest();
    for junit in [true, false] {
        let repo = TestRepo::new();
        repo.write(
            "test_mod.py",
            "def test_a():\n    assert 1 == 1\n\ndef test_b():\n    assert 2 == 2\n",
        );
        let report = if junit {
            " --junitxml=\"$PROVE_IT_REPORTS/pytest.xml\""
        } else {
            ""
        };
        repo.verify_script(&format!(
            "export PYTHONDONTWRITEBYTECODE=1\nexec {python} -m pytest -p no:cacheprovider{report}"
        ));
        repo.commit_all("initial");
        repo.prove_it(&["run"]).assert().success();
        let tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
        let source = if junit { "junit" } else { "summary" };
        let note = repo.note(&tree).unwrap();
        assert!(
            note.contains(&format!(
                "tests: passed=2 failed=0 skipped=0 source={source}"
            )),
            "{note}"
        );
        start(&repo);
        repo.write(
            "test_mod.py",
            "import pytest\n\ndef test_a():\n    assert 1 == 1\n\n@pytest.mark.skip\ndef test_b():\n    assert 2 == 3\n",
        );
        let text = notice(stop(&repo));
        assert!(
            text.contains("more skipped tests: 0 before, 1 now"),
            "{text}"
        );
        assert_eq!(
            text.contains("newly skipped: test_mod::test_b"),
            junit,
            "{text}"
        );
    }
}

/// Real `cargo test` on a tiny crate: its summary line counts, and a test marked `#[ignore]`
/// is one more skipped.
#[test]
fn real_cargo_test_summary_line() {
    // cargo sets CARGO for the tests it runs: without it, this fails rather than passing
    // untested.
    let cargo = std::env::var("CARGO").expect("CARGO, set by cargo test");
    let repo = TestRepo::new();
    let target = repo.home().join("target");
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    let lib =
        |ignored: &str| format!("#[test]\nfn one() {{}}\n\n{ignored}#[test]\nfn two() {{}}\n");
    repo.write("src/lib.rs", &lib(""));
    repo.write(
        "Cargo.lock",
        "version = 4\n\n[[package]]\nname = \"tiny\"\nversion = \"0.1.0\"\n",
    );
    let rustup = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| {
        std::env::var("HOME")
            .map(|home| format!("{home}/.rustup"))
            .unwrap_or_default()
    });
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| {
        std::env::var("HOME")
            .map(|home| format!("{home}/.cargo"))
            .unwrap_or_default()
    });
    repo.verify_script(&format!(
        "export RUSTUP_HOME='{rustup}' CARGO_HOME='{cargo_home}' CARGO_TARGET_DIR='{}' PATH='{}':\"$PATH\"\nexec '{cargo}' test --offline --locked -q 2>&1",
        target.display(),
        std::path::Path::new(&cargo).parent().unwrap().display()
    ));
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().success();
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    let note = repo.note(&tree).unwrap();
    assert!(
        note.contains("tests: passed=2 failed=0 skipped=0 source=summary"),
        "{note}"
    );
    start(&repo);
    repo.write("src/lib.rs", &lib("#[ignore]\n"));
    let text = notice(stop(&repo));
    assert!(
        text.contains("fewer passing tests: 2 before, 1 now"),
        "{text}"
    );
    assert!(
        text.contains("more skipped tests: 0 before, 1 now"),
        "{text}"
    );
}

/// Outside a session the baseline is the first parent's proof: `run` on a commit that deleted
/// a test says so, and `log` and `status` show the counts.
#[test]
fn run_compares_with_the_first_parents_proof_and_log_and_status_show_counts() {
    let repo = reporting(&[("test_a", "pass"), ("test_b", "pass")]);
    repo.write("suite.xml", &junit(&[("test_a", "pass")]));
    repo.commit_all("drop test_b");
    let out = repo.prove_it(&["run"]).assert().success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        stdout.contains("tests: 1 passed, 0 failed, 0 skipped (from the JUnit reports"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  - passing tests gone: suite::test_b"),
        "{stdout}"
    );
    let log = repo.prove_it(&["log"]).assert().success();
    let log = String::from_utf8(log.get_output().stdout.clone()).unwrap();
    assert!(
        log.contains("tests 1 passed 0 failed 0 skipped, tests weakened"),
        "{log}"
    );
    let status = repo.prove_it(&["status"]).assert().success();
    let status = String::from_utf8(status.get_output().stdout.clone()).unwrap();
    assert!(
        status.contains("tests: 1 passed, 0 failed, 0 skipped"),
        "{status}"
    );
}

/// A proof bounded by its tests alone (one passing test gone since the first parent's proof)
/// counts for `check --strict` only with `--allow-weakened`: `--allow-verify-change`, which CI
/// gives a reviewed verify.sh edit, never accepts deleted tests.
#[test]
fn check_strict_accepts_a_proof_through_fewer_tests_only_with_allow_weakened() {
    let repo = reporting(&[("test_a", "pass"), ("test_b", "pass")]);
    repo.write("suite.xml", &junit(&[("test_a", "pass")]));
    repo.commit_all("drop test_b");
    repo.prove_it(&["run"]).assert().success();
    repo.prove_it(&["check", "--strict", "HEAD"])
        .assert()
        .code(1);
    repo.prove_it(&["check", "--strict", "--allow-verify-change", "HEAD"])
        .assert()
        .code(1);
    repo.prove_it(&["check", "--strict", "--allow-weakened", "HEAD"])
        .assert()
        .code(0);
}

/// `doctor` says whether the last run produced test counts: a person learns that proofs would
/// not show a deleted test before an agent deletes one.
#[test]
fn doctor_says_whether_the_last_run_produced_test_counts() {
    let repo = TestRepo::new();
    repo.verify_script("echo no tests here");
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().success();
    let out = repo.prove_it(&["doctor"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("the last run produced no test counts (verify.sh)"),
        "{text}"
    );
    repo.verify_script("echo '3 passed in 0.01s'");
    repo.prove_it(&["run"]).assert().success();
    let out = repo.prove_it(&["doctor"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "the last run produced test counts (verify.sh: passed=3 failed=0 skipped=0 source=summary)"
        ),
        "{text}"
    );
}

/// A later turn's stop finds the weakened proof on record and runs nothing: it must still name
/// the tests, never take the proof for one through an edited verify.sh.
#[test]
fn a_weakened_proof_found_on_record_is_named_as_such() {
    let repo = reporting(&[("test_a", "pass"), ("test_b", "pass")]);
    start(&repo);
    repo.write("suite.xml", &junit(&[("test_a", "pass")]));
    notice(stop(&repo));
    let text = notice(stop_in(&repo, "99ce0000-prompt-2"));
    assert!(text.contains("passing tests gone: suite::test_b"), "{text}");
    assert!(!text.contains("verify.sh was edited"), "{text}");
}

/// With a checks file, each check's tests are compared with its own baseline, its input tree
/// at the session's start, and the finding names the check.
#[test]
fn a_named_checks_tests_are_compared_with_its_own_baseline() {
    let repo = TestRepo::new();
    repo.write(
        "prove-it.toml",
        "[checks.api]\nrun = \"api/verify.sh\"\ninputs = [\"api\"]\n\n[checks.docs]\nrun = \"docs/verify.sh\"\ninputs = [\"docs\"]\n",
    );
    repo.write(
        "api/verify.sh",
        "#!/bin/sh\ncp suite.xml \"$PROVE_IT_REPORTS/api.xml\"\n",
    );
    repo.chmod("api/verify.sh", 0o755);
    repo.write(
        "api/suite.xml",
        &junit(&[("test_a", "pass"), ("test_b", "pass")]),
    );
    repo.write("docs/verify.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("docs/verify.sh", 0o755);
    repo.commit_all("two checks");
    repo.prove_it(&["run"]).assert().success();
    start(&repo);
    repo.write("api/suite.xml", &junit(&[("test_a", "pass")]));
    let text = notice(stop(&repo));
    assert!(
        text.contains("check api: passing tests gone: suite::test_b"),
        "{text}"
    );
}

/// A session started on a state never proven compares with the nearest proven ancestor of the
/// commit it started from.
#[test]
fn an_unproven_start_compares_with_the_nearest_proven_ancestor() {
    let repo = reporting(&[("test_a", "pass"), ("test_b", "pass")]);
    repo.write("notes.txt", "unproven commit\n");
    repo.commit_all("not proven");
    start(&repo);
    repo.write("suite.xml", &junit(&[("test_a", "pass")]));
    let text = notice(stop(&repo));
    assert!(text.contains("passing tests gone: suite::test_b"), "{text}");
}

/// Honest sessions with real pytest: a test file and a test function added, an expected value
/// fixed. Nothing is reported, and nothing refused.
#[test]
#[ignore = "needs pytest: PROVE_IT_TEST_PYTHON=<python with pytest>; .ci/run installs it and runs this"]
fn real_pytest_honest_sessions_report_nothing() {
    let python = python_with_pytest();
    let repo = TestRepo::new();
    repo.write("test_mod.py", "def test_a():\n    assert 1 + 1 == 2\n");
    repo.verify_script(&format!(
        "export PYTHONDONTWRITEBYTECODE=1\nexec {python} -m pytest -q -p no:cacheprovider ${{PROVE_IT_REPORTS:+\"--junitxml=$PROVE_IT_REPORTS/pytest.xml\"}}"
    ));
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().success();
    start(&repo);
    repo.write(
        "test_mod.py",
        "def test_a():\n    assert 1 + 1 == 2\n\ndef test_added():\n    assert True\n",
    );
    repo.write("test_new.py", "def test_new():\n    assert 3 == 3\n");
    assert_eq!(stop(&repo), None);
    repo.write(
        "test_mod.py",
        "def test_a():\n    assert 1 + 2 == 3\n\ndef test_added():\n    assert True\n",
    );
    assert_eq!(stop_in(&repo, "99ce0000-prompt-2"), None);
    let note = record(&repo);
    assert!(
        note.contains("tests: passed=3 failed=0 skipped=0 source=junit"),
        "{note}"
    );
}

/// The stop Claude Code sends after a block, in the same turn.
fn stop_again(repo: &TestRepo) -> Option<Value> {
    let out = hook(
        repo,
        &json!({
            "session_id": SESSION,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": repo.root,
            "prompt_id": "99ce0000-prompt-1",
            "hook_event_name": "Stop",
            "stop_hook_active": true,
            "last_assistant_message": "All tests pass.",
        }),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    (!stdout.is_empty()).then(|| serde_json::from_str(&stdout).unwrap())
}

#[track_caller]
fn block_reason(answer: Option<Value>) -> String {
    let answer = answer.expect("a block, not silence");
    assert_eq!(answer["decision"], "block", "{answer}");
    answer["reason"].as_str().unwrap().to_string()
}

/// A reporting repository under `prove-it.weakening = block`, with a session started on it.
fn blocking(cases: &[(&str, &str)]) -> TestRepo {
    let repo = reporting(cases);
    repo.git(&["config", "prove-it.weakening", "block"]);
    start(&repo);
    repo
}

/// Deleting the failing test is the commonest fake green: under `block` the agent is sent back
/// once, naming it, even where no protected path was touched.
#[test]
fn block_sends_the_agent_back_for_a_deleted_test() {
    let repo = blocking(&[("test_a", "pass"), ("test_b", "pass")]);
    repo.git(&["config", "prove-it.ledger", "true"]);
    repo.write("suite.xml", &junit(&[("test_a", "pass")]));
    let reason = block_reason(stop(&repo));
    assert!(reason.contains("prove-it.weakening = block"), "{reason}");
    assert!(
        reason.contains("passing tests gone: suite::test_b"),
        "{reason}"
    );
    assert!(
        reason.contains("fewer passing tests: 2 before, 1 now"),
        "{reason}"
    );
    // The run's proof is recorded, bounded: the next stop finds it and shows it for review.
    assert!(record(&repo).contains("outcome: BOUNDED_CLAIM_SURVIVES"));
    let text = notice(stop_again(&repo));
    assert!(text.contains("BOUNDED_CLAIM_SURVIVES"), "{text}");
    assert!(text.contains("passing tests gone: suite::test_b"), "{text}");
    let ledger = std::fs::read_to_string(repo.path(".git/prove-it/ledger.jsonl")).unwrap();
    assert!(
        ledger.contains("\"actual\":[\"weakened: ") && ledger.contains("gone: suite::test_b"),
        "{ledger}"
    );
}

/// Marking the test skipped instead of deleting it is refused the same way.
#[test]
fn block_sends_the_agent_back_for_a_newly_skipped_test() {
    let repo = blocking(&[("test_a", "pass"), ("test_b", "pass")]);
    repo.write(
        "suite.xml",
        &junit(&[("test_a", "pass"), ("test_b", "skip")]),
    );
    let reason = block_reason(stop(&repo));
    assert!(reason.contains("newly skipped: suite::test_b"), "{reason}");
    assert!(
        reason.contains("more skipped tests: 0 before, 1 now"),
        "{reason}"
    );
}

/// A verify.sh that stops writing its report hides every other weakening: refused as one.
#[test]
fn block_sends_the_agent_back_when_the_test_report_disappears() {
    let repo = blocking(&[("test_a", "pass")]);
    repo.verify_script("echo no report");
    let reason = block_reason(stop(&repo));
    assert!(reason.contains("the test report disappeared"), "{reason}");
}

/// Refused once is not accepted for good: a second, different weakening sends the agent back
/// again, and the first is not named as new.
#[test]
fn block_sends_the_agent_back_again_for_a_further_weakening() {
    let repo = blocking(&[("test_a", "pass"), ("test_b", "pass"), ("test_c", "pass")]);
    repo.write(
        "suite.xml",
        &junit(&[("test_a", "pass"), ("test_b", "pass"), ("test_c", "skip")]),
    );
    block_reason(stop(&repo));
    notice(stop_again(&repo));
    repo.write(
        "suite.xml",
        &junit(&[("test_a", "pass"), ("test_c", "skip")]),
    );
    let reason = block_reason(stop_in(&repo, "99ce0000-prompt-2"));
    assert!(
        reason.contains("passing tests gone: suite::test_b"),
        "{reason}"
    );
}

/// A weakened proof the agent made from its shell (`git prove-it run`) is found on record by
/// the stop, which runs nothing: it is refused all the same.
#[test]
fn block_refuses_a_weakened_proof_found_on_record() {
    let repo = blocking(&[("test_a", "pass"), ("test_b", "pass")]);
    repo.write("suite.xml", &junit(&[("test_a", "pass")]));
    repo.prove_it(&["run"]).assert().success();
    let reason = block_reason(stop(&repo));
    assert!(
        reason.contains("passing tests gone: suite::test_b"),
        "{reason}"
    );
}

/// The same with a checks file: the check's proof found on record names the test it lost,
/// with the check, and is refused under `block`.
#[test]
fn block_refuses_a_checks_proof_found_on_record_naming_the_lost_test() {
    let repo = TestRepo::new();
    repo.write(
        "suite.xml",
        &junit(&[("test_a", "pass"), ("test_b", "pass")]),
    );
    repo.write(
        "unit.sh",
        "#!/bin/sh\ncp suite.xml \"$PROVE_IT_REPORTS/report.xml\"\n",
    );
    repo.chmod("unit.sh", 0o755);
    repo.write(
        "prove-it.toml",
        "[checks.unit]\nrun = \"unit.sh\"\ninputs = [\"suite.xml\", \"unit.sh\"]\n",
    );
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().success();
    repo.git(&["config", "prove-it.weakening", "block"]);
    start(&repo);
    repo.write("suite.xml", &junit(&[("test_a", "pass")]));
    repo.prove_it(&["run"]).assert().success();
    let reason = block_reason(stop(&repo));
    assert!(
        reason.contains("check unit: passing tests gone: suite::test_b"),
        "{reason}"
    );
}

/// Writing new tests costs nothing under `block` either.
#[test]
fn block_stays_silent_on_an_added_test() {
    let repo = blocking(&[("test_a", "pass")]);
    repo.write(
        "suite.xml",
        &junit(&[("test_a", "pass"), ("test_new", "pass")]),
    );
    assert_eq!(stop(&repo), None);
}

/// A JUnit report of `count` pytest-style tests, less the one numbered `without`.
fn thousands(count: usize, without: Option<usize>) -> String {
    let body: String = (0..count)
        .filter(|i| Some(*i) != without)
        .map(|i| {
            format!(
                r#"<testcase classname="tests.unit.test_module_{:03}.TestBehaviour" name="test_behaviour_{i}[case-{}]"/>"#,
                i / 40,
                i % 3
            )
        })
        .collect();
    format!(
        r#"<?xml version="1.0"?><testsuites><testsuite name="pytest">{body}</testsuite></testsuites>"#
    )
}

/// The names travel packed in the record, so a baseline proved in one clone names, in another
/// that fetched the proofs, the one test that vanished among thousands (plain lines kept 2000).
#[test]
fn a_baseline_from_another_clone_names_a_test_vanished_among_thousands() {
    let remote = BareRemote::new();
    let alice = TestRepo::new();
    alice.write("suite.xml", &thousands(6000, None));
    alice.verify_script("cp suite.xml \"$PROVE_IT_REPORTS/report.xml\"");
    alice.commit_all("initial");
    alice.publish_to(&remote);
    alice.prove_it(&["run"]).assert().success();
    let note = alice
        .note(alice.git(&["rev-parse", "HEAD^{tree}"]).trim())
        .unwrap();
    assert!(
        note.contains("tests: passed=6000 failed=0 skipped=0 source=junit\ntests-pass-z: "),
        "{note}"
    );
    assert!(
        !note.contains("tests-pass:") && !note.contains("tests-pass-cut"),
        "{note}"
    );
    assert!(note.len() < 64 * 1024, "{}", note.len());
    alice.prove_it(&["sync"]).assert().success();

    let bob = TestRepo::clone_of(&remote);
    bob.prove_it(&["sync"]).assert().success();
    bob.write("suite.xml", &thousands(6000, Some(5432)));
    let out = bob.prove_it(&["run"]).assert().success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let gone =
        "passing tests gone: tests.unit.test_module_135.TestBehaviour::test_behaviour_5432[case-2]";
    assert!(stdout.contains(gone), "{stdout}");
    assert!(
        record(&bob).contains(&format!("tests-weakened: {gone}\n")),
        "{}",
        record(&bob)
    );
}
