//! verify.sh as a symbolic link: a proof names the bytes of the file the link leads to, an edit
//! of that file is an edit of verify.sh, `check` follows the link in a commit's tree, and a link
//! that cannot be followed is a loud "could not check", never an opt-out nor a pass. Each test
//! is one trap, in a real repository, through the real binary (`git prove-it hook claude`).

use serde_json::{Value, json};

use crate::harness::TestRepo;

/// The script verify.sh leads to: fails while a.txt holds "bad".
const CHECKS_A: &str =
    "#!/bin/sh\nif grep -q bad a.txt; then echo 'a.txt is bad'; exit 1; fi\nexit 0\n";

fn event(repo: &TestRepo, name: &str) -> String {
    json!({
        "session_id": "link-session",
        "transcript_path": "/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": name,
        "prompt_id": "p1",
        "stop_hook_active": false,
        "last_assistant_message": "Done, all tests pass.",
    })
    .to_string()
}

/// The hook's answer: `None` for silence, else its one JSON object.
fn hook(repo: &TestRepo, name: &str) -> Option<Value> {
    let out = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(event(repo, name))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    (!out.stdout.is_empty()).then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// Everything the hook said, block reason or notice, as one text; panics on silence.
#[track_caller]
fn said(answer: Option<Value>) -> String {
    let json = answer.expect("the stop said something, not silence");
    json["reason"]
        .as_str()
        .or_else(|| json["systemMessage"].as_str())
        .unwrap_or_else(|| panic!("{json}"))
        .to_string()
}

/// A committed repository whose verify.sh is a link to scripts/verify.sh, which checks a.txt.
fn linked() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    repo.write("scripts/verify.sh", CHECKS_A);
    repo.chmod("scripts/verify.sh", 0o755);
    repo.symlink("scripts/verify.sh", "verify.sh");
    repo.commit_all("initial");
    repo
}

fn notes(repo: &TestRepo) -> String {
    repo.git(&["notes", "--ref", "prove-it", "list"])
}

// The record kept the link's blob, which never changes when the file it leads to does: an edit
// of scripts/verify.sh to pass always proved a broken a.txt silently, never shown as an edit.
#[test]
fn edited_link_target_of_verify_sh_is_shown_as_an_edit_of_verify_sh() {
    let repo = linked();
    assert_eq!(hook(&repo, "SessionStart"), None);
    repo.write("a.txt", "bad\n");
    repo.write("scripts/verify.sh", "#!/bin/sh\necho fine\nexit 0\n");
    let text = said(hook(&repo, "Stop"));
    assert!(text.contains("verify.sh was edited"), "{text}");
    assert!(text.contains("+echo fine"), "{text}");
    assert!(text.contains("-if grep -q bad a.txt"), "{text}");
    // The proof is bounded by the edit, and `check --strict` refuses it once committed.
    let tree = repo.stock_state_tree().unwrap();
    let note = repo.git(&["notes", "--ref", "prove-it", "show", &tree]);
    assert!(note.contains("outcome: BOUNDED_CLAIM_SURVIVES"), "{note}");
    repo.commit_all("weakened");
    repo.prove_it(&["check", "--strict"]).assert().code(1);

    // Under prove-it.verifyEdits = block the same edit is refused before anything runs.
    let repo = linked();
    repo.git(&["config", "prove-it.verifyEdits", "block"]);
    assert_eq!(hook(&repo, "SessionStart"), None);
    repo.write("a.txt", "bad\n");
    repo.write("scripts/verify.sh", "#!/bin/sh\necho fine\nexit 0\n");
    let answer = hook(&repo, "Stop").expect("a block");
    assert_eq!(answer["decision"], "block", "{answer}");
    let reason = answer["reason"].as_str().unwrap();
    assert!(reason.contains("prove-it.verifyEdits = block"), "{reason}");
    assert!(reason.contains("+echo fine"), "{reason}");
    assert_eq!(notes(&repo), "");
}

// A proof named the link's blob, the same in every commit whatever the file it leads to held,
// so a record made for one target's bytes vouched for a commit whose target was another.
#[test]
fn check_follows_verify_sh_link_in_the_commit() {
    let repo = linked();
    repo.prove_it(&["run"]).assert().code(0);
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    let target = repo.git(&["rev-parse", "HEAD:scripts/verify.sh"]);
    let note = repo.git(&["notes", "--ref", "prove-it", "show", &tree]);
    assert!(
        note.contains(&format!("\nverify: {} 100755\n", target.trim())),
        "the record names the target's blob: {note}"
    );
    repo.prove_it(&["check", "--strict"]).assert().code(0);

    // The target now passes whatever a.txt holds, and a.txt is broken: A's record, moved to
    // the new tree, names bytes that are not the ones this commit runs.
    repo.write("a.txt", "bad\n");
    repo.write("scripts/verify.sh", "#!/bin/sh\nexit 0\n");
    repo.commit_all("weakened");
    let new_tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    let moved = note.replace(&tree, &new_tree);
    repo.git(&[
        "notes", "--ref", "prove-it", "add", "-f", "-m", &moved, &new_tree,
    ]);
    repo.prove_it(&["check", "--strict"]).assert().code(1);
    repo.prove_it(&["check"]).assert().code(1);
    // Only the verify.sh it names kept it out: the same record naming this commit's target
    // counts (an unsigned record is no more than its text, as SPEC says).
    let new_target = repo.git(&["rev-parse", "HEAD:scripts/verify.sh"]);
    let named = moved.replace(target.trim(), new_target.trim());
    repo.git(&[
        "notes", "--ref", "prove-it", "add", "-f", "-m", &named, &new_tree,
    ]);
    repo.prove_it(&["check", "--strict"]).assert().code(0);
    // Over a range, the edit of the file the link leads to is a verify.sh change since the base.
    let out = repo
        .prove_it(&["check", "--strict", "HEAD~1..HEAD"])
        .assert()
        .code(1);
    let said = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(said.contains("verify.sh changed"), "{said}");
}

// A verify.sh link that leads nowhere, out of the worktree, round in a loop or to a directory
// read as "not armed": a repository without an anchor was opted out, silently.
#[test]
fn unfollowable_verify_sh_link_is_could_not_check_at_the_stop() {
    let cases: [(&str, &str); 6] = [
        ("scripts/gone.sh", "leads to nothing"),
        ("../outside.sh", "leads outside"),
        ("verify.sh", "a loop"),
        ("scripts", "something other than a file"),
        // Not followed in a tree: absolute, or through a directory that is a link.
        ("ABSOLUTE", "leads outside"),
        ("dirlink/verify.sh", "leads to nothing"),
    ];
    for (target, says) in cases {
        for session in [true, false] {
            let repo = linked();
            repo.symlink("scripts", "dirlink");
            let absolute = repo.path("scripts/verify.sh");
            let target = match target {
                "ABSOLUTE" => absolute.to_str().unwrap(),
                target => target,
            };
            std::fs::write(
                repo.root.parent().unwrap().join("outside.sh"),
                "#!/bin/sh\nexit 0\n",
            )
            .unwrap();
            if session {
                assert_eq!(hook(&repo, "SessionStart"), None);
            }
            repo.remove("verify.sh");
            repo.symlink(target, "verify.sh");
            repo.write("a.txt", "bad\n");
            let text = said(hook(&repo, "Stop"));
            assert!(
                text.contains("could not check this turn") && text.contains(says),
                "{target} (session: {session}): {text}"
            );
            assert!(text.contains("NOT_PROVEN"), "{text}");
            assert_eq!(notes(&repo), "", "{target}: nothing recorded");
        }
    }
}

// A session started on a verify.sh link that leads nowhere was told the gate is inert there,
// and recorded no anchor.
#[test]
fn session_start_on_unfollowable_verify_sh_link_is_not_inert() {
    let repo = linked();
    repo.remove("verify.sh");
    repo.symlink("scripts/gone.sh", "verify.sh");
    if let Some(answer) = hook(&repo, "SessionStart") {
        assert!(!answer.to_string().contains("inert"), "{answer}");
    }
    let anchors = repo.git(&["notes", "--ref", "prove-it-anchors", "list"]);
    assert!(!anchors.is_empty(), "the session is anchored");
    let text = said(hook(&repo, "Stop"));
    assert!(text.contains("could not check this turn"), "{text}");
}

// `check` of a commit whose verify.sh link leads nowhere in its tree says it cannot check it,
// rather than reading the commit as one without verify.sh.
#[test]
fn unfollowable_verify_sh_link_in_a_commit_is_not_an_opt_out_for_check() {
    let repo = linked();
    repo.remove("verify.sh");
    repo.symlink("scripts/gone.sh", "verify.sh");
    repo.commit_all("dangling");
    let out = repo.prove_it(&["check", "--strict"]).output().unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("leads to nothing"), "{all}");
}
