//! What git reads from outside the worktree and the history that can change what a stop or a
//! check sees: file modes and links as config reads them, attributes files outside the
//! repository, and replaced objects. Each test is one trap, in a real repository, through the
//! real binary (`git prove-it hook claude`, `check --strict`, the pre-push hook).

use std::time::{Duration, SystemTime};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::harness::{BareRemote, TestRepo};

/// verify.sh that fails while a.txt holds "bad" or a carriage return, t.sh cannot be run, or
/// link.sh is there but no link.
const CHECKS: &str = "if grep -q bad a.txt; then echo 'a.txt is bad'; exit 1; fi\nif grep -q \"$(printf '\\r')\" a.txt; then echo 'a.txt has CRLF'; exit 1; fi\n./t.sh || { echo 't.sh cannot run'; exit 1; }\nif [ -e link.sh ] && [ ! -L link.sh ]; then echo 'link.sh is no link'; exit 1; fi\nexit 0";

const REFUSED: &str = "the clean filters or attributes set outside the worktree changed";

fn event(repo: &TestRepo, name: &str) -> String {
    json!({
        "session_id": "sealed-config",
        "transcript_path": "/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": name,
        "prompt_id": "p1",
        "stop_hook_active": false,
        "last_assistant_message": "Done, all tests pass.",
    })
    .to_string()
}

/// The hook's answer, `None` for silence, with `XDG_CONFIG_HOME` unset where `no_xdg` says.
fn hook_with(repo: &TestRepo, name: &str, no_xdg: bool) -> Option<Value> {
    let mut cmd = repo.prove_it(&["hook", "claude"]);
    if no_xdg {
        cmd.env_remove("XDG_CONFIG_HOME");
    }
    let out = cmd.write_stdin(event(repo, name)).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    (!out.stdout.is_empty()).then(|| serde_json::from_slice(&out.stdout).unwrap())
}

fn hook(repo: &TestRepo, name: &str) -> Option<Value> {
    hook_with(repo, name, false)
}

#[track_caller]
fn block_reason(answer: Option<Value>) -> String {
    let json = answer.expect("a block, not silence");
    assert_eq!(json["decision"], "block", "{json}");
    json["reason"].as_str().unwrap().to_string()
}

fn proofs(repo: &TestRepo) -> usize {
    repo.git(&["notes", "--ref", "prove-it", "list"])
        .lines()
        .count()
}

/// A committed, proven repository whose verify.sh checks a.txt and runs t.sh (an executable
/// test file), the files' mtimes an hour back so that the index's stat data is not racily
/// clean; `before` runs before the proof and the session start.
fn proven_repo(before: impl FnOnce(&TestRepo)) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    repo.write("t.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("t.sh", 0o755);
    repo.verify_script(CHECKS);
    for file in ["a.txt", "t.sh", "verify.sh"] {
        std::fs::File::options()
            .write(true)
            .open(repo.path(file))
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
    }
    repo.commit_all("initial");
    before(&repo);
    repo.prove_it(&["run"]).assert().code(0);
    repo
}

/// The refusal, then the same stop with the setting put back: verify.sh sees the edit and
/// refuses it by name. Nothing was recorded for the hidden state.
#[track_caller]
fn assert_refused_then_seen(repo: &TestRepo, recorded: usize, undo: impl FnOnce(), seen: &str) {
    let reason = block_reason(hook(repo, "Stop"));
    assert!(reason.contains(REFUSED), "{reason}");
    assert_eq!(proofs(repo), recorded, "nothing recorded");
    undo();
    let reason = block_reason(hook(repo, "Stop"));
    assert!(reason.contains(seen), "{reason}");
}

// `core.fileMode=false` set mid-session makes git (and the state tree) take every mode from the
// index, so a `chmod -x` of a test file left the state proven and the stop ended quietly.
#[test]
fn file_mode_turned_off_mid_session_is_refused() {
    let repo = proven_repo(|_| {});
    assert_eq!(hook(&repo, "SessionStart"), None);
    let recorded = proofs(&repo);
    repo.git(&["config", "core.fileMode", "false"]);
    repo.chmod("t.sh", 0o644);
    assert_refused_then_seen(
        &repo,
        recorded,
        || {
            repo.git(&["config", "core.fileMode", "true"]);
        },
        "t.sh cannot run",
    );
}

// `core.symlinks=false` set mid-session makes a link's blob the bytes of a plain file, so a
// link replaced by a file holding its target's name read as the link.
#[test]
fn symlinks_turned_off_mid_session_is_refused() {
    let repo = proven_repo(|repo| {
        repo.symlink("t.sh", "link.sh");
        repo.commit_all("a link");
    });
    assert_eq!(hook(&repo, "SessionStart"), None);
    let recorded = proofs(&repo);
    repo.git(&["config", "core.symlinks", "false"]);
    repo.remove("link.sh");
    repo.write("link.sh", "t.sh");
    assert_refused_then_seen(
        &repo,
        recorded,
        || {
            repo.git(&["config", "--unset", "core.symlinks"]);
        },
        "link.sh is no link",
    );
}

// Where git itself set `core.fileMode=false` (a filesystem without modes), the setting is the
// session's starting point: an ordinary edit is gated as ever, and a good one proven quietly.
#[test]
fn file_mode_off_before_the_session_is_not_refused() {
    let repo = proven_repo(|repo| {
        repo.git(&["config", "core.fileMode", "false"]);
    });
    assert_eq!(hook(&repo, "SessionStart"), None);
    repo.write("a.txt", "bad\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("a.txt is bad"), "{reason}");
    assert!(!reason.contains(REFUSED), "{reason}");
    repo.write("a.txt", "good, again\n");
    assert_eq!(hook(&repo, "Stop"), None);
}

// git reads `$XDG_CONFIG_HOME/git/attributes` when `core.attributesFile` is unset; the anchor
// left it out, so an eol rule written there mid-session normalised a CRLF edit back to the
// proven blob and the stop ended quietly while verify.sh failed on the file on disk.
#[test]
fn eol_rule_in_the_xdg_attributes_file_mid_session_is_refused() {
    let repo = proven_repo(|_| {});
    assert_eq!(hook(&repo, "SessionStart"), None);
    let recorded = proofs(&repo);
    let attributes = repo.home().join(".config/git/attributes");
    std::fs::create_dir_all(attributes.parent().unwrap()).unwrap();
    std::fs::write(&attributes, "a.txt text eol=lf\n").unwrap();
    repo.write("a.txt", "good\r\n");
    assert_refused_then_seen(
        &repo,
        recorded,
        || std::fs::remove_file(&attributes).unwrap(),
        "a.txt has CRLF",
    );
}

// Without `XDG_CONFIG_HOME`, git reads `~/.config/git/attributes`: a clean filter named there
// mid-session (its driver configured before the session) is refused the same way.
#[test]
fn filter_rule_in_the_home_attributes_file_mid_session_is_refused() {
    let repo = proven_repo(|repo| {
        repo.git(&["config", "filter.hide.clean", "echo good"]);
    });
    assert_eq!(hook_with(&repo, "SessionStart", true), None);
    let recorded = proofs(&repo);
    let attributes = repo.home().join(".config/git/attributes");
    std::fs::create_dir_all(attributes.parent().unwrap()).unwrap();
    std::fs::write(&attributes, "a.txt filter=hide\n").unwrap();
    repo.write("a.txt", "bad, and hidden\n");
    let reason = block_reason(hook_with(&repo, "Stop", true));
    assert!(reason.contains(REFUSED), "{reason}");
    assert_eq!(proofs(&repo), recorded, "nothing recorded");
    std::fs::remove_file(&attributes).unwrap();
    let reason = block_reason(hook_with(&repo, "Stop", true));
    assert!(reason.contains("a.txt is bad"), "{reason}");
}

/// A proven commit, then a broken one on top, replaced by the proven one with `git replace`.
fn broken_commit_replaced_by_a_proven_one(repo: &TestRepo) -> String {
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("a.txt", "bad\n");
    let proven = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let broken = repo.commit_all("broken");
    repo.git(&["replace", &broken, &proven]);
    // git itself now reads the broken commit as the proven one.
    assert_eq!(
        repo.git(&["rev-parse", "HEAD^{tree}"]),
        repo.git(&["rev-parse", &format!("{proven}^{{tree}}")])
    );
    broken
}

// `git replace <broken> <proven>` made every object lookup read the proven commit in the broken
// one's place, so `check --strict` accepted the broken commit; replacements are never read.
#[test]
fn a_replaced_broken_commit_is_refused_by_check_strict() {
    let repo = proven_repo(|_| {});
    let broken = broken_commit_replaced_by_a_proven_one(&repo);
    repo.prove_it(&["check", "--strict"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(&broken[..7]).and(predicate::str::contains("broken")));
    // The same with the replacement under another base that git is pointed at.
    let target = repo.git(&["rev-parse", &format!("refs/replace/{broken}")]);
    repo.git(&["update-ref", &format!("refs/other/{broken}"), target.trim()]);
    repo.git(&["update-ref", "-d", &format!("refs/replace/{broken}")]);
    repo.prove_it(&["check", "--strict"])
        .env("GIT_REPLACE_REF_BASE", "refs/other/")
        .assert()
        .code(1);
}

// The same replacement made the pre-push hook pass the broken commit to the remote.
#[test]
fn a_replaced_broken_commit_is_refused_by_the_pre_push_hook() {
    let remote = BareRemote::new();
    let repo = proven_repo(|_| {});
    repo.git(&["remote", "add", "origin", remote.path.to_str().unwrap()]);
    repo.prove_it(&["install", "pre-push"]).assert().code(0);
    let broken = broken_commit_replaced_by_a_proven_one(&repo);
    let out = repo.git_output(&["push", "origin", "main"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("refusing to push"), "{stderr}");
    assert!(stderr.contains(&broken[..7]), "{stderr}");
    assert_eq!(remote.ref_id("refs/heads/main"), None, "nothing pushed");
}

// Proving the replaced commit checked out the proven one's files in the temporary worktree and
// recorded the run under the broken commit's name; it must run the broken commit's files.
#[test]
fn a_replaced_broken_commit_is_run_as_it_is_stored() {
    let repo = proven_repo(|_| {});
    let broken = broken_commit_replaced_by_a_proven_one(&repo);
    let recorded = proofs(&repo);
    repo.prove_it(&["run", "--force", &broken])
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("a.txt is bad").or(predicate::str::contains("not proven")),
        );
    assert_eq!(proofs(&repo), recorded, "nothing proven");
    repo.prove_it(&["check", "--strict", &broken])
        .assert()
        .code(1);
}

// git reads `info/grafts` (deprecated, still honoured) to give a commit other parents, which
// would leave a broken commit out of `base..head`; the walk that judges a range never reads it.
#[test]
fn a_graft_hiding_a_broken_commit_from_a_range_is_not_honoured() {
    let repo = proven_repo(|_| {});
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.write("a.txt", "bad\n");
    let broken = repo.commit_all("broken");
    repo.write("a.txt", "good again\n");
    let fixed = repo.commit_all("fixed");
    repo.prove_it(&["run"]).assert().code(0);
    std::fs::write(repo.path(".git/info/grafts"), format!("{fixed} {base}\n")).unwrap();
    // git itself now walks from the fixed commit straight to the base.
    let listed = repo.git(&["rev-list", &format!("{base}..HEAD")]);
    assert!(!listed.contains(&broken), "{listed}");
    repo.prove_it(&["check", "--strict", "--all", &format!("{base}..HEAD")])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(&broken[..7]));
}
