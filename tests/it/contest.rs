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

#[test]
fn a_failure_then_a_pass_on_one_tree_is_contested_and_run_says_so() {
    let repo = flaky();
    repo.write("flag", "");
    repo.prove_it(&["run"]).assert().code(1);
    repo.remove("flag");
    let run = repo.prove_it(&["run"]).assert().code(1);
    let out = stdout(&run);
    assert!(out.contains("passed: tree "), "{out}");
    assert!(
        out.contains("contested: a run of the same script failed"),
        "{out}"
    );
    let note = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    assert!(note.contains("\ncontests: "), "{note}");
    repo.prove_it(&["status"]).assert().code(1);
    repo.prove_it(&["check"]).assert().code(1);
}

/// The contest travels in the proofs ref: a clone that fetched only the proofs (no failure
/// record) after a plain push agrees the proof is contested.
#[test]
fn a_contested_proof_is_not_proven_in_a_fresh_clone_after_a_plain_push() {
    let remote = BareRemote::new();
    let repo = passed_then_failed();
    repo.publish_to(&remote);
    repo.prove_it(&["sync"]).assert().code(0);
    assert!(
        remote
            .note(&tree_of(&repo, "HEAD"))
            .is_some_and(|n| n.contains("\ncontests: ")),
        "the contest reached the remote"
    );
    let clone = TestRepo::clone_of(&remote);
    clone.prove_it(&["sync"]).assert().code(0);
    assert!(
        !clone
            .git_output(&[
                "rev-parse",
                "-q",
                "--verify",
                "refs/notes/prove-it-failures"
            ])
            .status
            .success(),
        "no failure record was fetched"
    );
    let check = clone.prove_it(&["check", "--strict"]).assert().code(1);
    let out = stdout(&check);
    assert!(out.contains("contested: proven at "), "{out}");
    clone.prove_it(&["check"]).assert().code(1);
}

#[test]
fn the_pre_push_hook_refuses_a_contested_commit_and_carries_the_contest() {
    let remote = BareRemote::new();
    let repo = passed_then_failed();
    repo.git(&["remote", "add", "origin", remote.path.to_str().unwrap()]);
    repo.prove_it(&["install", "pre-push"]).assert().code(0);
    for mode in ["tip", "prove"] {
        repo.git(&["config", "prove-it.prePush", mode]);
        let out = repo.git_output(&["push", "origin", "main"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{mode}: {err}");
        assert!(err.contains("contested"), "{mode}: {err}");
        assert_eq!(remote.ref_id("refs/heads/main"), None, "{mode}");
    }
    // Accepted by a person, it goes, and so do the contest and its acceptance.
    repo.prove_it(&[
        "accept",
        "HEAD",
        "--reason",
        "the flag file is a test fixture",
    ])
    .assert()
    .code(0);
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(out.status.success(), "{out:?}");
    let note = remote.note(&tree_of(&repo, "HEAD")).unwrap();
    assert!(
        note.contains("\ncontests: ") && note.contains("\naccepts: "),
        "{note}"
    );
}

#[test]
fn revoke_makes_a_proof_never_count_and_a_later_pass_counts_again() {
    let repo = flaky();
    repo.prove_it(&["run"]).assert().code(0);
    let head = short(&repo, "HEAD");
    let revoke = repo
        .prove_it(&[
            "revoke",
            "HEAD",
            "--reason",
            "ran against the main checkout",
        ])
        .assert()
        .code(0);
    assert!(
        stdout(&revoke).contains("revoked 1 proof of verify.sh on tree "),
        "{}",
        stdout(&revoke)
    );
    let note = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    assert!(note.contains("outcome: NOT_PROVEN\n"), "{note}");
    assert!(note.contains("\nrevokes: "), "{note}");
    assert!(
        note.contains("\nreason: ran against the main checkout\n"),
        "{note}"
    );
    let status = repo.prove_it(&["status"]).assert().code(1);
    assert!(
        stdout(&status).contains("a proof revoked by a person"),
        "{}",
        stdout(&status)
    );
    repo.prove_it(&["check"]).assert().code(1);
    // Nothing is left to revoke.
    let again = repo
        .prove_it(&["revoke", "HEAD", "--reason", "again"])
        .assert()
        .code(2);
    assert!(
        stderr(&again).contains("no proof to revoke in HEAD"),
        "{}",
        stderr(&again)
    );
    // A new passing run makes a new proof, which counts (a minute later: a record made in the
    // same second by the same run would be the very record revoked, byte for byte).
    repo.prove_it(&["run"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "60")
        .assert()
        .code(0);
    repo.prove_it(&["check", &head]).assert().code(0);
}

#[test]
fn revoke_after_a_contest_resolves_it_and_a_later_pass_counts() {
    let repo = passed_then_failed();
    repo.prove_it(&["revoke", "HEAD", "--reason", "the failure is real"])
        .assert()
        .code(0);
    let status = repo.prove_it(&["status"]).assert().code(1);
    assert!(
        !stdout(&status).contains("contested"),
        "{}",
        stdout(&status)
    );
    // The failure was resolved by the revocation: a later pass is not contested by it.
    repo.prove_it(&["run"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "60")
        .assert()
        .code(0);
    repo.prove_it(&["check", "--strict"]).assert().code(0);
}

#[test]
fn accept_makes_a_contested_pass_count_and_keeps_the_failure_as_history() {
    let repo = passed_then_failed();
    repo.prove_it(&[
        "accept",
        "HEAD",
        "--reason",
        "flaky network test, fixed upstream",
    ])
    .assert()
    .code(0);
    repo.prove_it(&["status"]).assert().code(0);
    repo.prove_it(&["check", "--strict"]).assert().code(0);
    let note = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    assert!(note.contains("\ncontests: "), "the contest stays: {note}");
    // Nothing contested is left to accept.
    repo.prove_it(&["accept", "HEAD", "--reason", "again"])
        .assert()
        .code(2);
    // A new failure contests the accepted proof again.
    repo.write("flag", "");
    repo.prove_it(&["run", "--force"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "60")
        .assert()
        .code(1);
    repo.remove("flag");
    repo.prove_it(&["check"]).assert().code(1);
}

#[test]
fn revoke_takes_a_tree_a_range_and_one_check() {
    let repo = TestRepo::new();
    repo.write("api/verify.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("api/verify.sh", 0o755);
    repo.write("docs/verify.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("docs/verify.sh", 0o755);
    repo.write(
        "prove-it.toml",
        "[checks.api]\nrun = \"api/verify.sh\"\ninputs = [\"api\"]\n\n[checks.docs]\nrun = \"docs/verify.sh\"\ninputs = [\"docs\"]\n",
    );
    repo.commit_all("one");
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("api/x", "x\n");
    repo.commit_all("two");
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["check", "HEAD~1", "HEAD"]).assert().code(0);

    repo.prove_it(&[
        "revoke",
        "HEAD~1..HEAD",
        "--check",
        "docs",
        "--reason",
        "docs build lied",
    ])
    .assert()
    .code(0);
    let check = repo.prove_it(&["check", "HEAD"]).assert().code(1);
    assert!(stdout(&check).contains("docs"), "{}", stdout(&check));
    // docs' input tree is the same at both commits: the first commit lost its proof too.
    repo.prove_it(&["check", "HEAD~1"]).assert().code(1);

    let tree = tree_of(&repo, "HEAD~1");
    repo.prove_it(&["revoke", &tree, "--check", "api", "--reason", "by tree"])
        .assert()
        .code(0);
    repo.prove_it(&["revoke", "HEAD", "--check", "nope", "--reason", "x"])
        .assert()
        .code(2);
}

/// `doctor --restore` puts back what other writers dropped, but never a revoked proof.
#[test]
fn doctor_restore_never_brings_back_a_revoked_proof() {
    let repo = flaky();
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["revoke", "HEAD", "--reason", "false proof"])
        .assert()
        .code(0);
    let tree = tree_of(&repo, "HEAD");
    repo.git(&["notes", "--ref", "prove-it", "remove", &tree]);
    let restore = repo.prove_it(&["doctor", "--restore"]).assert();
    assert!(
        stdout(&restore).contains("restored 1 overwritten proof note"),
        "the revocation comes back: {}",
        stdout(&restore)
    );
    assert!(repo.note(&tree).is_some_and(|n| n.contains("\nrevokes: ")));
    let note = repo.note(&tree).unwrap_or_default();
    assert!(!note.contains("outcome: PROVEN"), "{note}");
    repo.prove_it(&["check"]).assert().code(1);
    repo.prove_it(&["status"]).assert().code(1);
    let doctor = repo.prove_it(&["doctor"]).assert();
    assert!(
        !stdout(&doctor).contains("lost records"),
        "a revoked proof is not a lost record: {}",
        stdout(&doctor)
    );
}

/// A stop on a contested state runs verify.sh (the contested proof spares nothing); its pass
/// ends the turn with a flaky notice, and the contest stays.
#[test]
fn a_stop_on_a_contested_state_runs_verify_sh_and_ends_flaky() {
    let repo = TestRepo::new();
    let counter = repo.home().join("runs");
    repo.write(".gitignore", "flag\n");
    repo.write("a.txt", "a\n");
    repo.verify_script(&format!(
        "echo run >> '{}'\nif [ -e flag ]; then exit 1; fi\necho ok",
        counter.display()
    ));
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("flag", "");
    repo.prove_it(&["run", "--force"]).assert().code(1);
    repo.remove("flag");
    let runs = || std::fs::read_to_string(&counter).map_or(0, |s| s.lines().count());
    assert_eq!(runs(), 2);

    let event = serde_json::json!({
        "session_id": "86ca0000-contest",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": repo.path(""),
        "hook_event_name": "Stop",
        "stop_hook_active": false,
        "last_assistant_message": "Done.",
    });
    let out = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(event.to_string())
        .assert()
        .code(0);
    assert_eq!(runs(), 3, "the stop ran verify.sh");
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(answer.get("decision").is_none(), "not a block: {answer}");
    let notice = answer["systemMessage"].as_str().unwrap();
    assert!(
        notice.contains("NOT_PROVEN") && notice.contains("flaky"),
        "{notice}"
    );
    repo.prove_it(&["check"]).assert().code(1);
}

/// With `prove-it.sign` on, a person's revocation is signed over its canonical text, and stock
/// ssh-keygen verifies it as it verifies a proof.
#[test]
fn a_revocation_is_signed_when_signing_is_on() {
    let repo = flaky();
    let (key, public) = crate::signed::keygen(&repo, "alice");
    crate::signed::sign_with(&repo, key.to_str().unwrap());
    repo.prove_it(&["run"]).assert().code(0);
    let revoke = repo
        .prove_it(&["revoke", "HEAD", "--reason", "signed by a person"])
        .assert()
        .code(0);
    assert!(stdout(&revoke).contains("(signed)"), "{}", stdout(&revoke));
    let note = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    let record = note
        .split("\n\n")
        .find(|r| r.contains("\nrevokes: "))
        .unwrap()
        .to_string();
    let (signed, armor) = record.split_at(record.find("ssh-signature:").unwrap());
    let armor: String = armor
        .lines()
        .map(|l| l.strip_prefix("ssh-signature: ").unwrap().to_string() + "\n")
        .collect();
    let sig = repo.home().join("revoke.sig");
    std::fs::write(&sig, armor).unwrap();
    let allowed = repo.home().join("allowed");
    std::fs::write(&allowed, format!("alice@example.com {public}\n")).unwrap();
    let out = assert_cmd::Command::from_std(repo.command("ssh-keygen"))
        .args([
            "-Y",
            "verify",
            "-n",
            "git-prove-it",
            "-I",
            "alice@example.com",
            "-f",
        ])
        .arg(&allowed)
        .arg("-s")
        .arg(&sig)
        .write_stdin(signed.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    repo.prove_it(&["check"]).assert().code(1);
}

/// With a checks file, each check is contested on its own input tree: the other check stays
/// proven, and every reader names the contested one.
#[test]
fn a_contested_check_is_named_by_status_check_and_the_gate() {
    let repo = TestRepo::new();
    let counter = repo.home().join("api-runs");
    repo.write(".gitignore", "flag\n");
    repo.write(
        "api/verify.sh",
        &format!(
            "#!/bin/sh\necho run >> '{}'\nif [ -e ../flag ]; then exit 1; fi\n",
            counter.display()
        ),
    );
    repo.chmod("api/verify.sh", 0o755);
    repo.write("docs/verify.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("docs/verify.sh", 0o755);
    repo.write(
        "prove-it.toml",
        "[checks.api]\nrun = \"api/verify.sh\"\ninputs = [\"api\"]\n\n[checks.docs]\nrun = \"docs/verify.sh\"\ninputs = [\"docs\"]\n",
    );
    repo.commit_all("one");
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("flag", "");
    repo.prove_it(&["run", "--force"]).assert().code(1);
    repo.remove("flag");

    let status = repo.prove_it(&["status"]).assert().code(1);
    let out = stdout(&status);
    assert!(out.contains("checks:     1 of 2 proven"), "{out}");
    assert!(out.contains("not proven, contested: proven at "), "{out}");
    assert!(
        out.contains("hint: a pass and a failure of the same script"),
        "{out}"
    );

    let check = repo.prove_it(&["check", "--json"]).assert().code(1);
    let json: serde_json::Value = serde_json::from_str(&stdout(&check)).unwrap();
    let commit = &json["commits"][0];
    assert_eq!(commit["status"], "contested", "{json}");
    let api = &commit["checks"][0];
    assert_eq!(api["name"], "api", "{json}");
    assert_eq!(api["standing"], "contested", "{json}");
    assert_eq!(api["contested"]["failed_by"], "cli", "{json}");
    let text = repo.prove_it(&["check"]).assert().code(1);
    assert!(
        stdout(&text).contains("contested: api"),
        "{}",
        stdout(&text)
    );

    let runs = || std::fs::read_to_string(&counter).map_or(0, |s| s.lines().count());
    let before = runs();
    let event = serde_json::json!({
        "session_id": "86ca0000-contest-checks",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": repo.path(""),
        "hook_event_name": "Stop",
        "stop_hook_active": false,
        "last_assistant_message": "Done.",
    });
    let out = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(event.to_string())
        .assert()
        .code(0);
    assert_eq!(runs(), before + 1, "the stop ran the contested check");
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let notice = answer["systemMessage"].as_str().unwrap();
    assert!(
        notice.contains("check api passed") && notice.contains("flaky"),
        "{notice}"
    );
}

/// With signing on, an acceptance written without a signature (by hand, or with signing off)
/// does not make a contested signed proof count for `status`, `run` or a stop; a signed one does.
#[test]
fn with_signing_on_an_unsigned_acceptance_settles_nothing() {
    let repo = flaky();
    let (key, _) = crate::signed::keygen(&repo, "alice");
    crate::signed::sign_with(&repo, key.to_str().unwrap());
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("flag", "");
    repo.prove_it(&["run", "--force"]).assert().code(1);
    repo.remove("flag");
    repo.git(&["config", "prove-it.sign", "false"]);
    repo.prove_it(&["accept", "HEAD", "--reason", "unsigned"])
        .assert()
        .code(0);
    repo.prove_it(&["status"]).assert().code(0);
    repo.git(&["config", "prove-it.sign", "true"]);
    repo.prove_it(&["status"]).assert().code(1);
    let run = repo.prove_it(&["run"]).assert();
    assert!(!stdout(&run).contains("already proven"), "{}", stdout(&run));

    // Signed, it settles the contest.
    let repo = passed_then_failed();
    let (key, _) = crate::signed::keygen(&repo, "alice");
    crate::signed::sign_with(&repo, key.to_str().unwrap());
    repo.prove_it(&["run"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "60")
        .assert()
        .code(1);
    repo.prove_it(&["accept", "HEAD", "--reason", "signed"])
        .assert()
        .code(0);
    repo.prove_it(&["status"]).assert().code(0);
}
