//! Contested proofs: a passing and a failing run of the same script on one key, and how a
//! person resolves them (`revoke`, `accept`).

use crate::check::{short, tree_of};
use crate::harness::{BareRemote, TestRepo};

/// A committed repository whose verify.sh fails while the ignored file `flag` exists: the
/// state tree is the same either way, so one tree can both pass and fail.
fn flaky() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", "flag\n");
    repo.write("a.txt", "a\n");
    repo.verify_script("if [ -e flag ]; then echo 'test x ... FAILED' >&2; exit 1; fi\necho ok");
    repo.commit_all("initial");
    repo
}

fn stdout(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stdout).into_owned()
}

fn stderr(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}

/// Pass, then fail on the same tree: the proof is contested.
fn passed_then_failed() -> TestRepo {
    let repo = flaky();
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("flag", "");
    repo.prove_it(&["run", "--force"]).assert().code(1);
    repo.remove("flag");
    repo
}

#[test]
fn a_pass_then_a_failure_on_one_tree_is_contested_everywhere() {
    let repo = passed_then_failed();
    let note = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    assert!(note.contains("outcome: DISPROVEN\n"), "{note}");
    assert!(note.contains("\ncontests: "), "{note}");
    assert!(
        !note.contains("output:"),
        "a contest carries no output: {note}"
    );

    let status = repo.prove_it(&["status"]).assert();
    let out = stdout(&status);
    assert_ne!(status.get_output().status.code(), Some(0), "{out}");
    assert!(out.contains("contested: proven at "), "{out}");
    assert!(out.contains(", failed at "), "{out}");

    let check = repo.prove_it(&["check", "--strict"]).assert().code(1);
    assert!(stdout(&check).contains("contested"), "{}", stdout(&check));
    let log = repo.prove_it(&["log"]).assert();
    assert!(stdout(&log).contains("contested"), "{}", stdout(&log));
    // A plain run does not take the contested proof: it runs verify.sh again.
    let run = repo.prove_it(&["run"]).assert();
    assert!(!stdout(&run).contains("already proven"), "{}", stdout(&run));
}
