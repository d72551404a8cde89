//! No silent pass: an agent with a shell tampers with the
//! session's anchor, with signatures, with the signing and verify.sh-edit policy, or hides a
//! weakening of verify.sh in a long diff. Each trap drives the real binary in a real temporary
//! repository, through Claude Code's hook protocol, and asserts what the gate answers, what
//! ran and what was recorded.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin;
use serde_json::{Value, json};

use crate::check::hand_write_note;
use crate::harness::TestRepo;

const SESSION: &str = "86ca0000-tamper-session";

/// What the hook answered: a block reason, a notice, or nothing.
#[derive(Debug)]
enum Answer {
    Silent,
    Block(String),
    Notice(String),
}

impl Answer {
    fn from(out: &Output) -> Answer {
        assert_eq!(out.status.code(), Some(0), "hooks always exit 0: {out:?}");
        let stdout = String::from_utf8(out.stdout.clone()).unwrap();
        if stdout.is_empty() {
            return Answer::Silent;
        }
        let json: Value = serde_json::from_str(&stdout).unwrap();
        if json["decision"] == "block" {
            Answer::Block(json["reason"].as_str().unwrap().to_string())
        } else {
            Answer::Notice(json["systemMessage"].as_str().unwrap().to_string())
        }
    }

    #[track_caller]
    fn block(self) -> String {
        match self {
            Answer::Block(reason) => reason,
            other => panic!("expected a block, got {other:?}"),
        }
    }

    #[track_caller]
    fn notice(self) -> String {
        match self {
            Answer::Notice(text) => text,
            other => panic!("expected a notice, got {other:?}"),
        }
    }

    #[track_caller]
    fn silent(self) {
        assert!(
            matches!(self, Answer::Silent),
            "expected silence, got {self:?}"
        );
    }
}

fn hook(repo: &TestRepo, event: &Value, env: &[(&str, &str)]) -> Answer {
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.args(["hook", "claude"])
        .envs(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    Answer::from(&out)
}

fn start(repo: &TestRepo) -> Answer {
    start_with(repo, &[])
}

fn start_with(repo: &TestRepo, env: &[(&str, &str)]) -> Answer {
    let event = json!({
        "session_id": SESSION,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    hook(repo, &event, env)
}

fn stop(repo: &TestRepo) -> Answer {
    stop_with(repo, &[])
}

fn stop_with(repo: &TestRepo, env: &[(&str, &str)]) -> Answer {
    let event = json!({
        "session_id": SESSION,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": repo.root,
        "prompt_id": "99ce0000-prompt-1",
        "hook_event_name": "Stop",
        "stop_hook_active": false,
        "last_assistant_message": "All tests pass.",
    });
    hook(repo, &event, env)
}

/// A committed repository whose verify.sh counts its runs outside the repository, then runs
/// `check` (a command that passes or fails).
fn armed(check: &str) -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let counter = repo.home().join("runs");
    repo.verify_script(&format!("echo run >> '{}'\n{check}", counter.display()));
    repo.commit_all("initial");
    (repo, counter)
}

fn runs(counter: &Path) -> usize {
    std::fs::read_to_string(counter).map_or(0, |s| s.lines().count())
}

/// The one anchor note of the repository: its key and its text.
fn the_anchor(repo: &TestRepo) -> (String, String) {
    let list = repo.git(&["notes", "--ref", "prove-it-anchors", "list"]);
    let key = list.split_whitespace().nth(1).unwrap().to_string();
    let text = repo.git(&["notes", "--ref", "prove-it-anchors", "show", &key]);
    (key, text)
}

/// Rewriting the anchor's `state-tree:` to the current tree made a changed session
/// look unchanged, so a failing verify.sh never ran.
#[test]
fn rewriting_the_anchors_state_tree_to_the_current_one_is_refused() {
    let (repo, counter) = armed("exit 1");
    start(&repo).silent();
    repo.write("b.txt", "untested\n");
    let (key, text) = the_anchor(&repo);
    let now = repo.stock_state_tree().unwrap();
    let rewritten: String = text
        .lines()
        .map(|line| {
            if line.starts_with("state-tree: ") {
                format!("state-tree: {now}\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    repo.git(&[
        "notes",
        "--ref",
        "prove-it-anchors",
        "add",
        "-f",
        "-m",
        &rewritten,
        &key,
    ]);
    let block = stop(&repo).block();
    assert!(
        block.contains("DISPROVEN (attempt 1 of 3")
            && block.contains("this session's anchor in refs/notes/prove-it-anchors was rewritten"),
        "{block}"
    );
    assert!(block.contains("hint: "), "{block}");
    assert_eq!(runs(&counter), 0, "nothing runs on a tampered anchor");
    assert_eq!(repo.note(&now), None, "and nothing is recorded");
}

/// Deleting the anchors ref, then weakening verify.sh, gave a plain PROVEN record that
/// `check --strict` accepted.
#[test]
fn deleting_the_anchors_then_weakening_verify_sh_is_refused_and_proves_nothing() {
    let (repo, counter) = armed("exit 1");
    start(&repo).silent();
    repo.git(&["update-ref", "-d", "refs/notes/prove-it-anchors"]);
    repo.verify_script("exit 0");
    repo.write("b.txt", "untested\n");
    let block = stop(&repo).block();
    assert!(
        block.contains("this session's anchor was deleted from refs/notes/prove-it-anchors"),
        "{block}"
    );
    let tree = repo.stock_state_tree().unwrap();
    assert_eq!(repo.note(&tree), None, "no proof that check could accept");
    // A resumed session does not re-anchor on the weakened state either.
    let event = json!({
        "session_id": SESSION,
        "cwd": repo.root,
        "hook_event_name": "SessionStart",
        "source": "resume",
    });
    hook(&repo, &event, &[]).silent();
    assert_eq!(
        repo.git(&["notes", "--ref", "prove-it-anchors", "list"]),
        ""
    );
    assert!(stop(&repo).block().contains("anchor was deleted"));
    assert_eq!(runs(&counter), 0);
}

/// The session's own copy of its anchor deleted (so that a rewritten note could pass)
/// is refused too.
#[test]
fn deleting_the_sessions_own_copy_of_its_anchor_is_refused() {
    let (repo, counter) = armed("exit 0");
    start(&repo).silent();
    let sessions = repo.path(".git/prove-it/sessions");
    let copies: Vec<_> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "anchor"))
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    std::fs::remove_file(&copies[0]).unwrap();
    repo.write("b.txt", "b\n");
    let block = stop(&repo).block();
    assert!(
        block.contains("this session's own copy of its anchor is missing"),
        "{block}"
    );
    assert_eq!(runs(&counter), 0);
}

/// The anchor and the session's copy both deleted, then verify.sh weakened (left
/// uncommitted). While the per-user session index still says this session anchored the
/// worktree, the stop cannot be checked and says so loudly. With the index deleted too, there
/// is no anchor at all: the edit is told against HEAD's verify.sh, so the proof is BOUNDED,
/// never a plain PROVEN that `check --strict` would accept once committed.
#[test]
fn deleting_the_anchor_and_its_copy_then_weakening_verify_sh_proves_only_bounded() {
    let (repo, _) = armed("test -f a.txt");
    start(&repo).silent();
    repo.git(&["update-ref", "-d", "refs/notes/prove-it-anchors"]);
    std::fs::remove_dir_all(repo.path(".git/prove-it/sessions")).unwrap();
    let head_verify = repo
        .git(&["rev-parse", "HEAD:verify.sh"])
        .trim()
        .to_string();
    repo.verify_script("exit 0");
    repo.remove("a.txt");
    let notice = stop(&repo).notice();
    assert!(notice.contains("could not check this turn"), "{notice}");
    assert!(notice.contains("NOT_PROVEN"), "{notice}");
    assert_eq!(repo.git(&["notes", "--ref", "prove-it", "list"]), "");
    std::fs::remove_dir_all(repo.home().join(".local/state/git-prove-it/sessions")).unwrap();
    let notice = stop(&repo).notice();
    assert!(
        notice.starts_with("prove-it: BOUNDED_CLAIM_SURVIVES"),
        "{notice}"
    );
    assert!(notice.contains("No session-start anchor"), "{notice}");
    assert!(notice.contains("-test -f a.txt"), "{notice}");
    let note = repo.note(&repo.stock_state_tree().unwrap()).unwrap();
    assert!(note.contains("outcome: BOUNDED_CLAIM_SURVIVES\n"), "{note}");
    assert!(
        note.contains(&format!("verify-anchor: {head_verify} 100755\n")),
        "{note}"
    );
    repo.commit_all("weakened");
    repo.prove_it(&["check", "--strict"]).assert().code(1);
}

/// With prove-it.sign on, a signed record copied from another state with its `tree:`
/// edited (so its signature is BAD) ended the turn without running anything.
#[test]
fn a_copied_record_with_a_bad_signature_does_not_spare_a_run() {
    let (repo, counter) = armed("exit 0");
    let (key, _) = crate::signed::keygen(&repo, "alice");
    crate::signed::sign_with(&repo, key.to_str().unwrap());
    start(&repo).silent();
    // A proof of another state, signed.
    repo.write("b.txt", "proven\n");
    repo.prove_it(&["run"]).assert().code(0);
    let proven = repo.stock_state_tree().unwrap();
    let record = repo.note(&proven).unwrap();
    assert_eq!(runs(&counter), 1);
    // The agent's state, given that record with its tree edited.
    repo.write("b.txt", "never tested\n");
    let tree = repo.stock_state_tree().unwrap();
    hand_write_note(
        &repo,
        &tree,
        &record.replace(&format!("tree: {proven}"), &format!("tree: {tree}")),
    );
    stop(&repo).silent();
    assert_eq!(
        runs(&counter),
        2,
        "the forged proof did not count: verify.sh ran"
    );
    let note = repo.note(&tree).unwrap();
    assert_eq!(note.matches("prove-it-record: 1").count(), 2, "{note}");
    // The good proof it made then counts at the next stop.
    stop(&repo).silent();
    assert_eq!(runs(&counter), 2);
}

/// With an allowed signers file configured, only its signers' proofs spare a run.
#[test]
fn with_allowed_signers_a_proof_by_another_key_does_not_spare_a_run() {
    let (repo, counter) = armed("exit 0");
    let (mallory, _) = crate::signed::keygen(&repo, "mallory");
    let (_, alice) = crate::signed::keygen(&repo, "alice");
    let allowed = repo.home().join("allowed_signers");
    std::fs::write(&allowed, format!("alice@example.com {alice}\n")).unwrap();
    repo.git(&[
        "config",
        "prove-it.allowedSigners",
        allowed.to_str().unwrap(),
    ]);
    crate::signed::sign_with(&repo, mallory.to_str().unwrap());
    start(&repo).silent();
    repo.write("b.txt", "b\n");
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(runs(&counter), 1);
    stop(&repo).silent();
    assert_eq!(runs(&counter), 2, "mallory's proof is not alice's");
}

/// Turning prove-it.sign off mid-session would let unsigned proofs count again.
#[test]
fn turning_signing_off_mid_session_is_refused_like_a_lower_budget() {
    let (repo, counter) = armed("exit 0");
    let (key, _) = crate::signed::keygen(&repo, "alice");
    crate::signed::sign_with(&repo, key.to_str().unwrap());
    start(&repo).silent();
    let (_, anchor) = the_anchor(&repo);
    assert!(anchor.contains("\nsign: on\n"), "{anchor}");
    repo.git(&["config", "prove-it.sign", "false"]);
    repo.write("b.txt", "b\n");
    let block = stop(&repo).block();
    assert!(
        block.contains("the gate's policy was weakened during this session: signing of proofs turned off (prove-it.sign)"),
        "{block}"
    );
    assert_eq!(runs(&counter), 0);
}

/// `prove-it.verifyEdits = block` refuses a turn that ends with verify.sh edited,
/// and says to restore it or leave it to a person; restoring it ends the turn proven.
#[test]
fn verify_edits_block_refuses_an_edited_verify_sh_until_it_is_restored() {
    let (repo, counter) = armed("test -f a.txt");
    repo.git(&["config", "prove-it.verifyEdits", "block"]);
    start(&repo).silent();
    let (_, anchor) = the_anchor(&repo);
    assert!(anchor.contains("\nverify-edits: block\n"), "{anchor}");
    let original = std::fs::read_to_string(repo.path("verify.sh")).unwrap();
    repo.write(
        "verify.sh",
        &original.replace("test -f a.txt", "test -f a.txt || true"),
    );
    repo.write("b.txt", "b\n");
    let block = stop(&repo).block();
    assert!(
        block.contains("verify.sh was changed during this session, and this repository refuses such edits (prove-it.verifyEdits = block)"),
        "{block}"
    );
    assert!(
        block.contains("hint: restore verify.sh") && block.contains("leave the change to a person"),
        "{block}"
    );
    assert!(block.contains("+test -f a.txt || true"), "{block}");
    assert_eq!(runs(&counter), 0, "nothing ran through the edit");
    assert_eq!(repo.note(&repo.stock_state_tree().unwrap()), None);
    // Restored, the turn is gated as usual: verify.sh runs and proves it.
    repo.write("verify.sh", &original);
    stop(&repo).silent();
    assert_eq!(runs(&counter), 1);
}

/// The default `show` keeps the seed's contract (a BOUNDED notice), and lowering
/// `block` to `show` mid-session is refused like a lower budget.
#[test]
fn verify_edits_is_anchored_and_show_stays_the_default() {
    let (repo, _) = armed("exit 0");
    start(&repo).silent();
    repo.verify_script("exit 0 # weakened");
    repo.write("b.txt", "b\n");
    let notice = stop(&repo).notice();
    assert!(
        notice.starts_with("prove-it: BOUNDED_CLAIM_SURVIVES"),
        "{notice}"
    );

    let (repo, counter) = armed("exit 0");
    start_with(&repo, &[("PROVE_IT_VERIFY_EDITS", "block")]).silent();
    repo.write("b.txt", "b\n");
    let block = stop(&repo).block();
    assert!(
        block.contains("edits of verify.sh shown instead of refused (PROVE_IT_VERIFY_EDITS or prove-it.verifyEdits)"),
        "{block}"
    );
    assert_eq!(runs(&counter), 0);
    stop_with(&repo, &[("PROVE_IT_VERIFY_EDITS", "block")]).silent();
    assert_eq!(runs(&counter), 1);
}

/// The BOUNDED notice and the stored `verify-diff:` stopped at 200 lines, so a
/// weakening after 250 lines of padding was neither shown nor stored.
#[test]
fn a_weakening_after_250_padding_lines_is_shown_and_stored() {
    let (repo, _) = armed("cargo test");
    start(&repo).silent();
    let padding: String = (0..250)
        .map(|i| {
            format!("echo 'step {i} of the setup, with a long explanation of why it is here'\n")
        })
        .collect();
    repo.verify_script(&format!("{padding}cargo test || true"));
    repo.write("b.txt", "b\n");
    let notice = stop(&repo).notice();
    assert!(
        notice.starts_with("prove-it: BOUNDED_CLAIM_SURVIVES"),
        "{notice}"
    );
    assert!(
        notice.contains("\n-cargo test\n+cargo test || true\n"),
        "the weakening is shown beside the check it replaced: {notice}"
    );
    assert!(
        notice.contains("changed lines come first") && notice.contains("hint: the whole diff"),
        "{notice}"
    );
    let tree = repo.stock_state_tree().unwrap();
    let note = repo.note(&tree).unwrap();
    assert!(note.contains("\n +cargo test || true\n"), "{note}");
    assert!(!note.contains("more lines of diff"), "stored whole: {note}");
}
