//! Protected paths (SPEC.md section 2.2): an agent makes verify.sh pass by weakening what it
//! runs (a test deleted, skipped, emptied, moved away, the protect list narrowed), and the
//! gate must say so, in the stop's reply and in the proof. Each test is one trap, in a real
//! repository, through the real binary (`git prove-it hook claude`).

use serde_json::{Value, json};

use crate::harness::TestRepo;

const PYTHON_TESTS: &str = "import pytest\n\n\
def test_adds():\n    assert 1 + 1 == 2\n\n\
def test_subtracts():\n    assert 2 - 1 == 1\n";

const RUST_TESTS: &str = "#[test]\nfn adds() {\n    assert_eq!(1 + 1, 2);\n}\n\n\
#[test]\nfn subtracts() {\n    assert_eq!(2 - 1, 1);\n}\n";

fn event(repo: &TestRepo, name: &str, active: bool) -> String {
    json!({
        "session_id": "weakening-session",
        "transcript_path": "/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": name,
        "prompt_id": "p1",
        "stop_hook_active": active,
        "last_assistant_message": "Done, all tests pass.",
    })
    .to_string()
}

/// The hook's answer: `None` for silence, else its one JSON object.
fn hook(repo: &TestRepo, name: &str, active: bool) -> Option<Value> {
    let out = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(event(repo, name, active))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    (!out.stdout.is_empty()).then(|| serde_json::from_slice(&out.stdout).unwrap())
}

fn stop(repo: &TestRepo) -> Option<Value> {
    hook(repo, "Stop", false)
}

#[track_caller]
fn notice(answer: Option<Value>) -> String {
    let json = answer.expect("a notice, not silence");
    assert_ne!(json["decision"], "block", "{json}");
    json["systemMessage"].as_str().unwrap().to_string()
}

#[track_caller]
fn block_reason(answer: Option<Value>) -> String {
    let json = answer.expect("a block, not silence");
    assert_eq!(json["decision"], "block", "{json}");
    json["reason"].as_str().unwrap().to_string()
}

/// The proofs note of the working state's tree.
fn proof(repo: &TestRepo) -> String {
    let tree = repo.our_state_tree().unwrap();
    repo.note(&tree).expect("a proof of the working state")
}

/// A committed repository whose verify.sh passes, whose prove-it.toml protects `tests/`, with
/// a Python and a Rust test file, and a session started on it.
fn session(protect: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.verify_passes();
    repo.write("prove-it.toml", &format!("protect = {protect}\n"));
    repo.write("tests/test_math.py", PYTHON_TESTS);
    repo.write("tests/math.rs", RUST_TESTS);
    repo.write("src/lib.py", "def f():\n    return 1\n");
    repo.commit_all("initial");
    assert_eq!(hook(&repo, "SessionStart", false), None);
    repo
}

fn protected_session() -> TestRepo {
    session("[\"tests/\"]")
}

#[test]
fn deleting_a_test_function_is_a_weakening_shown_and_recorded() {
    let repo = protected_session();
    repo.write(
        "tests/test_math.py",
        "import pytest\n\ndef test_adds():\n    assert 1 + 1 == 2\n",
    );
    let text = notice(stop(&repo));
    assert!(text.contains("BOUNDED_CLAIM_SURVIVES"), "{text}");
    assert!(
        text.contains("tests/test_math.py: test test_subtracts is gone"),
        "{text}"
    );
    let note = proof(&repo);
    assert!(note.contains("outcome: BOUNDED_CLAIM_SURVIVES"), "{note}");
    assert!(
        note.contains("weakened: test-gone tests/test_math.py::test_subtracts"),
        "{note}"
    );
    assert!(note.contains("protect-diff:"), "{note}");
}

#[test]
fn marking_a_pytest_test_skipped_is_a_weakening() {
    let repo = protected_session();
    repo.write(
        "tests/test_math.py",
        &PYTHON_TESTS.replace(
            "def test_subtracts",
            "@pytest.mark.skip(reason='flaky')\ndef test_subtracts",
        ),
    );
    let text = notice(stop(&repo));
    assert!(
        text.contains("tests/test_math.py: test test_subtracts is now skipped"),
        "{text}"
    );
    assert!(proof(&repo).contains("weakened: test-skipped tests/test_math.py::test_subtracts"));
}

#[test]
fn ignoring_a_rust_test_is_a_weakening() {
    let repo = protected_session();
    repo.write(
        "tests/math.rs",
        &RUST_TESTS.replace("#[test]\nfn subtracts", "#[test]\n#[ignore]\nfn subtracts"),
    );
    let text = notice(stop(&repo));
    assert!(
        text.contains("tests/math.rs: test subtracts is now skipped"),
        "{text}"
    );
}

/// The anchor's list counts: emptying `protect` mid-session does not unprotect the tests.
#[test]
fn narrowing_protect_mid_session_does_not_unprotect_the_tests() {
    let repo = protected_session();
    repo.write("prove-it.toml", "protect = []\n");
    repo.remove("tests/test_math.py");
    let text = notice(stop(&repo));
    assert!(text.contains("BOUNDED_CLAIM_SURVIVES"), "{text}");
    assert!(
        text.contains("tests/test_math.py: deleted or moved out of the protected paths"),
        "{text}"
    );
}

/// Deleting the checks file, and its protect list with it, is refused as a disarming.
#[test]
fn deleting_prove_it_toml_mid_session_is_refused() {
    let repo = protected_session();
    repo.remove("prove-it.toml");
    repo.remove("tests/test_math.py");
    let reason = block_reason(stop(&repo));
    assert!(reason.contains("prove-it.toml"), "{reason}");
}

#[test]
fn moving_a_test_file_out_of_the_protected_set_is_a_weakening() {
    let repo = protected_session();
    repo.write("src/test_math.py", PYTHON_TESTS);
    repo.remove("tests/test_math.py");
    let text = notice(stop(&repo));
    assert!(
        text.contains("tests/test_math.py: deleted or moved out of the protected paths"),
        "{text}"
    );
    assert!(proof(&repo).contains("weakened: deleted tests/test_math.py"));
}

/// A renamed test is one gone and one new: the gone one is named.
#[test]
fn renaming_a_test_shows_the_old_name_as_gone() {
    let repo = protected_session();
    repo.write(
        "tests/test_math.py",
        &PYTHON_TESTS.replace("test_subtracts", "test_minus"),
    );
    let text = notice(stop(&repo));
    assert!(text.contains("test test_subtracts is gone"), "{text}");
    assert!(!text.contains("test_minus is gone"), "{text}");
}

/// Fixing an expected value is honest work: shown for review, never refused nor bounded.
#[test]
fn changing_a_tests_body_but_not_its_name_is_shown_not_weakened() {
    let repo = TestRepo::new();
    repo.git(&["config", "prove-it.weakening", "block"]);
    repo.verify_passes();
    repo.write("prove-it.toml", "protect = [\"tests/\"]\n");
    repo.write("tests/test_math.py", PYTHON_TESTS);
    repo.commit_all("initial");
    assert_eq!(hook(&repo, "SessionStart", false), None);
    repo.write(
        "tests/test_math.py",
        &PYTHON_TESTS.replace("assert 2 - 1 == 1", "assert 3 - 1 == 2"),
    );
    let text = notice(stop(&repo));
    assert!(text.starts_with("prove-it: PROVEN"), "{text}");
    assert!(text.contains("Changed:\n    tests/test_math.py"), "{text}");
    let note = proof(&repo);
    assert!(note.contains("outcome: PROVEN"), "{note}");
    assert!(note.contains("changed: tests/test_math.py"), "{note}");
    assert!(!note.contains("weakened:"), "{note}");
}

#[test]
fn emptying_a_test_file_is_a_weakening() {
    let repo = protected_session();
    repo.write("tests/math.rs", "");
    let text = notice(stop(&repo));
    assert!(text.contains("tests/math.rs: test adds is gone"), "{text}");
    assert!(
        text.contains("tests/math.rs: test subtracts is gone"),
        "{text}"
    );
}

/// The baseline is the state the session started on, not its commit: a test written before
/// the session (not yet committed) and removed during it, by putting the file back as
/// committed, is gone, though the file is now its commit's.
#[test]
fn putting_a_protected_file_back_to_its_commit_still_counts_the_tests_the_session_removed() {
    let repo = TestRepo::new();
    repo.verify_passes();
    repo.write("prove-it.toml", "protect = [\"tests/\"]\n");
    repo.write("tests/test_math.py", PYTHON_TESTS);
    repo.commit_all("initial");
    let extra = format!("{PYTHON_TESTS}\ndef test_multiplies():\n    assert 2 * 2 == 4\n");
    repo.write("tests/test_math.py", &extra);
    assert_eq!(hook(&repo, "SessionStart", false), None);
    repo.write("tests/test_math.py", PYTHON_TESTS);
    let text = notice(stop(&repo));
    assert!(
        text.contains("tests/test_math.py: test test_multiplies is gone"),
        "{text}"
    );
}

/// Writing new tests must cost nothing: no word at all.
#[test]
fn adding_a_test_file_and_a_test_function_reports_nothing() {
    let repo = protected_session();
    repo.write("tests/test_more.py", "def test_more():\n    assert True\n");
    repo.write(
        "tests/test_math.py",
        &format!("{PYTHON_TESTS}\ndef test_multiplies():\n    assert 2 * 2 == 4\n"),
    );
    assert_eq!(stop(&repo), None);
    let note = proof(&repo);
    assert!(note.contains("outcome: PROVEN"), "{note}");
    assert!(
        !note.contains("weakened:") && !note.contains("changed:"),
        "{note}"
    );
}

/// Under `prove-it.weakening = block` the agent is sent back once, naming the weakening; the
/// next stop shows it in a bounded proof for a person.
#[test]
fn weakening_block_sends_the_agent_back_once() {
    let repo = TestRepo::new();
    repo.git(&["config", "prove-it.weakening", "block"]);
    repo.verify_passes();
    repo.write("prove-it.toml", "protect = [\"tests/\"]\n");
    repo.write("tests/test_math.py", PYTHON_TESTS);
    repo.commit_all("initial");
    assert_eq!(hook(&repo, "SessionStart", false), None);
    repo.write(
        "tests/test_math.py",
        "import pytest\n\ndef test_adds():\n    assert 1 + 1 == 2\n",
    );
    let reason = block_reason(stop(&repo));
    assert!(reason.contains("prove-it.weakening = block"), "{reason}");
    assert!(reason.contains("test test_subtracts is gone"), "{reason}");
    let text = notice(hook(&repo, "Stop", true));
    assert!(text.contains("BOUNDED_CLAIM_SURVIVES"), "{text}");
}

/// Lowering the policy mid-session is itself refused.
#[test]
fn lowering_weakening_block_mid_session_is_refused() {
    let repo = TestRepo::new();
    repo.git(&["config", "prove-it.weakening", "block"]);
    repo.verify_passes();
    repo.write("prove-it.toml", "protect = [\"tests/\"]\n");
    repo.write("tests/test_math.py", PYTHON_TESTS);
    repo.commit_all("initial");
    assert_eq!(hook(&repo, "SessionStart", false), None);
    repo.git(&["config", "prove-it.weakening", "show"]);
    repo.write("tests/test_math.py", "");
    let reason = block_reason(stop(&repo));
    assert!(reason.contains("prove-it.weakening"), "{reason}");
}

/// CI: a commit that deleted a test is refused by `check --strict` against its base, and
/// accepted with `--allow-weakened`; `--allow-verify-change` does not accept it.
#[test]
fn check_strict_refuses_a_weakened_commit_unless_allow_weakened() {
    let repo = TestRepo::new();
    repo.verify_passes();
    repo.write("prove-it.toml", "protect = [\"tests/\"]\n");
    repo.write("tests/math.rs", RUST_TESTS);
    repo.commit_all("initial");
    repo.write(
        "tests/math.rs",
        "#[test]\nfn adds() {\n    assert_eq!(1 + 1, 2);\n}\n",
    );
    repo.commit_all("drop a test");
    let run = repo.prove_it(&["run"]).assert().code(0);
    let said = String::from_utf8_lossy(&run.get_output().stdout).into_owned();
    assert!(
        said.contains("BOUNDED_CLAIM_SURVIVES: protected tests or configs weakened"),
        "{said}"
    );
    assert!(
        said.contains("  tests/math.rs: test subtracts is gone"),
        "{said}"
    );
    // Outside a session, a clean checkout is compared with its commit's first parent.
    let note = proof(&repo);
    assert!(note.contains("outcome: BOUNDED_CLAIM_SURVIVES"), "{note}");
    assert!(
        note.contains("weakened: test-gone tests/math.rs::subtracts"),
        "{note}"
    );
    repo.prove_it(&["check", "HEAD~1..HEAD"]).assert().code(0);
    let refused = repo
        .prove_it(&["check", "--strict", "HEAD~1..HEAD"])
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&refused.get_output().stdout).into_owned();
    assert!(text.contains("weakened since"), "{text}");
    assert!(
        text.contains("tests/math.rs: test subtracts is gone"),
        "{text}"
    );
    repo.prove_it(&["check", "--strict", "--allow-verify-change", "HEAD~1..HEAD"])
        .assert()
        .code(1);
    repo.prove_it(&["check", "--strict", "--allow-weakened", "HEAD~1..HEAD"])
        .assert()
        .code(0);
}

/// A real runner: pytest (or unittest) behind verify.sh, with protect, and a test skipped.
#[test]
fn a_real_python_runner_with_protect_shows_a_skipped_test() {
    let python = ["python3"].into_iter().find(|p| {
        std::process::Command::new(p)
            .arg("--version")
            .output()
            .is_ok()
    });
    // python3 is one of the tools the tests need (.ci/run makes its virtual environments
    // with it): missing, this fails rather than passing untested.
    let python = python.expect("python3 on PATH");
    let repo = TestRepo::new();
    let pytest = std::process::Command::new(python)
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    let runner = if pytest {
        format!("{python} -m pytest -q tests")
    } else {
        format!("{python} -m unittest discover -s tests -p 'test_*.py'")
    };
    repo.verify_script(&format!("export PYTHONDONTWRITEBYTECODE=1\n{runner}"));
    repo.write("prove-it.toml", "protect = [\"tests/\"]\n");
    repo.write(
        "tests/test_math.py",
        "import unittest\n\nclass TestMath(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(1 + 1, 2)\n\n    def test_subtracts(self):\n        self.assertEqual(2 - 1, 1)\n",
    );
    repo.commit_all("initial");
    assert_eq!(hook(&repo, "SessionStart", false), None);
    repo.write(
        "tests/test_math.py",
        "import unittest\n\nclass TestMath(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(1 + 1, 2)\n\n    @unittest.skip('later')\n    def test_subtracts(self):\n        self.assertEqual(2 - 1, 3)\n",
    );
    let text = notice(stop(&repo));
    assert!(
        text.contains("test TestMath.test_subtracts is now skipped"),
        "{text}"
    );
}

/// `status` says it, and once committed, `log` marks the commit and `log -p` shows each
/// weakening and its diff.
#[test]
fn status_and_log_show_a_proof_made_through_a_weakening() {
    let repo = protected_session();
    repo.write(
        "tests/test_math.py",
        "import pytest\n\ndef test_adds():\n    assert 1 + 1 == 2\n",
    );
    notice(stop(&repo));
    let status = repo.prove_it(&["status"]).assert().code(0);
    let text = String::from_utf8_lossy(&status.get_output().stdout).into_owned();
    assert!(
        text.contains("weakened: tests/test_math.py: test test_subtracts is gone"),
        "{text}"
    );
    repo.commit_all("drop a test");
    let log = repo.prove_it(&["log", "-n", "1", "-p"]).assert().code(0);
    let text = String::from_utf8_lossy(&log.get_output().stdout).into_owned();
    assert!(
        text.contains("weakened: tests/test_math.py: test test_subtracts is gone"),
        "{text}"
    );
    assert!(text.contains("-def test_subtracts():"), "{text}");
}

/// The pre-push hook warns of a pushed commit that weakens protected paths, and under
/// `prove-it.weakening = block` refuses it unless `PROVE_IT_ALLOW_WEAKENED=1` is set for
/// that push.
#[test]
fn the_pre_push_hook_warns_of_a_weakening_and_refuses_it_under_block() {
    let remote = crate::harness::BareRemote::new();
    let repo = TestRepo::new();
    repo.git(&["remote", "add", "origin", remote.path.to_str().unwrap()]);
    repo.prove_it(&["install", "pre-push"]).assert().code(0);
    repo.verify_passes();
    repo.write("prove-it.toml", "protect = [\"tests/\"]\n");
    repo.write("tests/math.rs", RUST_TESTS);
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().code(0);
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(out.status.success(), "{out:?}");

    repo.write(
        "tests/math.rs",
        "#[test]\nfn adds() {\n    assert_eq!(1 + 1, 2);\n}\n",
    );
    repo.commit_all("drop a test");
    repo.prove_it(&["run"]).assert().code(0);
    let out = repo.git_output(&["push", "origin", "main"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: BOUNDED_CLAIM_SURVIVES"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tests/math.rs: test subtracts is gone"),
        "{stderr}"
    );

    repo.git(&["config", "prove-it.weakening", "block"]);
    repo.write("tests/math.rs", "");
    repo.commit_all("drop every test");
    repo.prove_it(&["run"]).assert().code(0);
    let out = repo.git_output(&["push", "origin", "main"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("push refused"), "{stderr}");
    assert!(stderr.contains("PROVE_IT_ALLOW_WEAKENED=1"), "{stderr}");
    let out = repo
        .command("git")
        .args(["push", "origin", "main"])
        .env("PROVE_IT_ALLOW_WEAKENED", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// A real runner: `cargo test` behind verify.sh in a tiny crate with protect; an `#[ignore]`
/// that makes it pass is shown, and a new test is not.
#[test]
fn a_real_cargo_runner_with_protect_shows_an_ignored_test() {
    let Some(sysroot) = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
    else {
        // The toolchain that builds these tests is there: missing, this fails, never passes.
        panic!("rustc --print sysroot failed");
    };
    let repo = TestRepo::new();
    repo.verify_script(&format!(
        "export RUSTC='{sysroot}/bin/rustc' RUSTDOC='{sysroot}/bin/rustdoc' CARGO_HOME=\"$PWD/.cargo-home\"\n\
         '{sysroot}/bin/cargo' test --quiet --offline 2>&1"
    ));
    repo.write(".gitignore", "target/\n.cargo-home/\nCargo.lock\n");
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.write(
        "src/lib.rs",
        "pub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    );
    repo.write("prove-it.toml", "protect = [\"tests/\"]\n");
    repo.write(
        "tests/math.rs",
        "#[test]\nfn subtracts() {\n    assert_eq!(tiny::sub(2, 1), 1);\n}\n",
    );
    repo.commit_all("initial");
    assert_eq!(hook(&repo, "SessionStart", false), None);
    // The agent breaks sub and ignores the test that says so.
    repo.write(
        "src/lib.rs",
        "pub fn sub(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    repo.write(
        "tests/math.rs",
        "#[test]\n#[ignore]\nfn subtracts() {\n    assert_eq!(tiny::sub(2, 1), 1);\n}\n\n\
         #[test]\nfn adds_itself() {\n    assert_eq!(tiny::sub(0, 0), 0);\n}\n",
    );
    let text = notice(stop(&repo));
    assert!(text.contains("BOUNDED_CLAIM_SURVIVES"), "{text}");
    assert!(
        text.contains("tests/math.rs: test subtracts is now skipped"),
        "{text}"
    );
    assert!(!text.contains("test adds_itself is"), "{text}");
}
