//! Odd repository states, each in a real repository: `run`, `status`, `check` and the stop hook
//! keep working, or fail with a clear message, and never pass silently. The state tree's own
//! equality with stock git in these states is pinned in state_tree.rs; here it is the commands.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::cargo_bin;
use predicates::prelude::*;
use serde_json::{Value, json};

use crate::check::tree_of;
use crate::harness::{TestRepo, hermetic, json_stdout, with_submodule};

/// One Claude Code event for session `session` in `cwd`.
fn event(cwd: &Path, session: &str, name: &str) -> String {
    json!({
        "session_id": session,
        "transcript_path": "/t.jsonl",
        "cwd": cwd,
        "hook_event_name": name,
        "prompt_id": "p1",
        "stop_hook_active": false,
        "last_assistant_message": "Done.",
    })
    .to_string()
}

/// The hook's answer: `None` for silence, else its one JSON object.
fn hook(repo: &TestRepo, cwd: &Path, session: &str, name: &str) -> Option<Value> {
    let out = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(event(cwd, session, name))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    (!out.stdout.is_empty()).then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// The proof note of the current working state, if any.
fn proof_of_working_state(repo: &TestRepo) -> Option<String> {
    repo.note(&repo.stock_state_tree().unwrap())
}

/// `status --json` of the working state.
fn status(repo: &TestRepo) -> Value {
    json_stdout(&repo.prove_it(&["status", "--json"]).assert())
}

#[test]
fn unborn_head_proves_and_gates_the_first_commit() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.verify_passes();
    assert!(repo.git_output(&["rev-parse", "HEAD"]).status.code() != Some(0));
    repo.prove_it(&["run"]).assert().code(0);
    let note = proof_of_working_state(&repo).expect("a proof");
    assert!(note.contains("\nhead: none\n"), "{note}");
    assert_eq!(status(&repo)["proven"], true);
    // `check` has no commit to check: a clear error, not a pass.
    repo.prove_it(&["check"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("HEAD"));
    // The gate in an unborn repository: armed on disk, a change runs verify.sh and records.
    let repo = TestRepo::new();
    repo.verify_passes();
    assert_eq!(hook(&repo, &repo.root, "s", "SessionStart"), None);
    repo.write("b.txt", "b\n");
    assert_eq!(hook(&repo, &repo.root, "s", "Stop"), None);
    assert!(proof_of_working_state(&repo).is_some());
    // And the first commit of that state is proven.
    repo.commit_all("first");
    repo.prove_it(&["check"]).assert().code(0);
}

#[test]
fn detached_head_proves_and_checks() {
    let repo = TestRepo::with_commit();
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    repo.git(&["checkout", "-q", "--detach", "HEAD~1"]);
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["check", "HEAD"]).assert().code(0);
    assert_eq!(status(&repo)["proven"], true);
    assert_eq!(hook(&repo, &repo.root, "s", "SessionStart"), None);
    repo.write("c.txt", "c\n");
    assert_eq!(hook(&repo, &repo.root, "s", "Stop"), None);
    assert!(proof_of_working_state(&repo).is_some());
}

/// Proofs live in the common dir: made in one worktree, seen in another with the same content.
/// Anchors are per worktree: the same session id in two worktrees is two sessions.
#[test]
fn linked_worktrees_share_proofs_and_keep_anchors_apart() {
    let repo = TestRepo::with_commit();
    let linked = repo.home().join("linked");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "--detach",
        linked.to_str().unwrap(),
    ]);
    let in_linked = |args: &[&str]| {
        let mut cmd = repo.command(cargo_bin("git-prove-it"));
        cmd.current_dir(&linked).args(args);
        assert_cmd::Command::from_std(cmd)
    };
    repo.prove_it(&["run"]).assert().code(0);
    in_linked(&["status"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("PROVEN by"));
    in_linked(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("already proven"));

    assert_eq!(hook(&repo, &repo.root, "same-id", "SessionStart"), None);
    assert_eq!(hook(&repo, &linked, "same-id", "SessionStart"), None);
    let anchors = repo.git(&["notes", "--ref", "prove-it-anchors", "list"]);
    assert_eq!(anchors.lines().count(), 2, "{anchors}");
    // A change in the linked worktree is that session's; the main one's session is unchanged.
    std::fs::write(linked.join("l.txt"), "l\n").unwrap();
    assert_eq!(hook(&repo, &linked, "same-id", "Stop"), None);
    assert_eq!(hook(&repo, &repo.root, "same-id", "Stop"), None);
    let proofs = repo.git(&["notes", "--ref", "prove-it", "list"]);
    assert_eq!(proofs.lines().count(), 2, "{proofs}");
}

#[test]
fn a_submodule_is_proven_by_the_commit_it_has_checked_out() {
    let (repo, _source) = with_submodule();
    let tree = repo.assert_state_tree_matches_git();
    assert_eq!(tree, tree_of(&repo, "HEAD"));
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["check"]).assert().code(0);
    // A new commit checked out in the submodule is a new state, matching git's gitlink.
    std::fs::write(repo.path("sub/new.txt"), "new\n").unwrap();
    let mut git = Command::new("git");
    hermetic(&mut git, repo.home());
    let committed = git
        .current_dir(repo.path("sub"))
        .args(["commit", "-q", "--allow-empty", "-m", "moved"])
        .status()
        .unwrap();
    assert!(committed.success());
    let moved = repo.assert_state_tree_matches_git();
    assert_ne!(moved, tree);
    assert_eq!(status(&repo)["proven"], false);
    // new.txt is still untracked inside the submodule: a change its commit does not hold, so
    // nothing may prove this state until it is committed or removed.
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("submodule 'sub'"));
    std::fs::remove_file(repo.path("sub/new.txt")).unwrap();
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(status(&repo)["proven"], true);
}

#[test]
fn a_sparse_checkout_is_proven_with_the_paths_it_does_not_check_out() {
    let repo = TestRepo::with_commit();
    repo.write("dir1/one.txt", "one\n");
    repo.write("dir2/two.txt", "two\n");
    repo.commit_all("two dirs");
    repo.git(&["sparse-checkout", "set", "--cone", "dir1"]);
    assert!(!repo.path("dir2").exists());
    assert_eq!(repo.assert_state_tree_matches_git(), tree_of(&repo, "HEAD"));
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["check"]).assert().code(0);
    repo.write("dir1/one.txt", "changed\n");
    repo.assert_state_tree_matches_git();
    assert_eq!(hook(&repo, &repo.root, "s", "SessionStart"), None);
    repo.write("dir1/more.txt", "more\n");
    assert_eq!(hook(&repo, &repo.root, "s", "Stop"), None);
    assert!(proof_of_working_state(&repo).is_some());
}

/// A verify.sh that fails while conflict markers are in a.txt.
fn refuses_conflict_markers(repo: &TestRepo) {
    repo.verify_script("! grep -q '^<<<<<<<' a.txt");
}

/// `main` and `side` both changed a.txt; verify.sh refuses conflict markers.
fn diverged() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    refuses_conflict_markers(&repo);
    repo.commit_all("initial");
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("a.txt", "side\n");
    repo.commit_all("side");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a.txt", "main\n");
    repo.commit_all("main");
    repo
}

/// In the middle of a conflicted merge the gate answers on the working state as it is: markers
/// fail verify.sh and block; the resolution proves; git's merge state is left alone.
#[test]
fn a_merge_in_progress_is_gated_on_the_working_state() {
    let repo = diverged();
    assert_eq!(hook(&repo, &repo.root, "s", "SessionStart"), None);
    assert!(!repo.git_output(&["merge", "-q", "side"]).status.success());
    assert!(repo.path(".git/MERGE_HEAD").exists());
    repo.assert_state_tree_matches_git();
    repo.prove_it(&["run"]).assert().code(1);
    let block = hook(&repo, &repo.root, "s", "Stop").expect("a block");
    assert_eq!(block["decision"], "block", "{block}");
    repo.write("a.txt", "resolved\n");
    repo.prove_it(&["run"]).assert().code(0);
    assert!(repo.path(".git/MERGE_HEAD").exists(), "the merge goes on");
    repo.git(&["add", "a.txt"]);
    repo.git(&["commit", "-q", "--no-edit"]);
    repo.prove_it(&["check"]).assert().code(0);
}

/// A rebase stopped on a conflict: HEAD is detached mid-way, and the gate and `run` work on
/// the working state; the resolved state's proof carries over to the commit the rebase makes.
#[test]
fn a_rebase_in_progress_is_gated_on_the_working_state() {
    let repo = diverged();
    assert_eq!(hook(&repo, &repo.root, "s", "SessionStart"), None);
    assert!(!repo.git_output(&["rebase", "-q", "side"]).status.success());
    let git_dir = repo.path(".git");
    assert!(git_dir.join("rebase-merge").exists() || git_dir.join("rebase-apply").exists());
    repo.prove_it(&["status"]).assert().code(1);
    let block = hook(&repo, &repo.root, "s", "Stop").expect("a block");
    assert_eq!(block["decision"], "block", "{block}");
    repo.write("a.txt", "resolved\n");
    assert_eq!(hook(&repo, &repo.root, "s", "Stop"), None);
    repo.git(&["add", "a.txt"]);
    let continued = repo
        .command("git")
        .env("GIT_EDITOR", "true")
        .args(["rebase", "--continue"])
        .output()
        .unwrap();
    assert!(continued.status.success(), "{continued:?}");
    repo.prove_it(&["check"]).assert().code(0);
}

/// Someone else's index.lock (an agent's `git add` in flight): `run` and the gate never need it,
/// never take it and never remove it.
#[test]
fn an_index_lock_held_by_someone_else_stops_nothing() {
    let repo = TestRepo::with_commit();
    let lock = repo.path(".git/index.lock");
    std::fs::write(&lock, b"held").unwrap();
    let index = std::fs::read(repo.path(".git/index")).unwrap();
    repo.write("b.txt", "b\n");
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(hook(&repo, &repo.root, "s", "SessionStart"), None);
    repo.write("c.txt", "c\n");
    assert_eq!(hook(&repo, &repo.root, "s", "Stop"), None);
    repo.write("d.txt", "d\n");
    repo.verify_fails(1);
    let block = hook(&repo, &repo.root, "s", "Stop").expect("a block");
    assert_eq!(block["decision"], "block");
    assert_eq!(std::fs::read(&lock).unwrap(), b"held");
    assert_eq!(std::fs::read(repo.path(".git/index")).unwrap(), index);
}

/// Makes a directory tree read-only for as long as it lives: `chmod -R a-w`, or, for root (whom
/// modes do not stop), the immutable attribute.
struct ReadOnly(PathBuf);

impl ReadOnly {
    fn new(dir: PathBuf) -> ReadOnly {
        let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
        let status = if root {
            Command::new("chattr")
                .arg("-R")
                .arg("+i")
                .arg(&dir)
                .status()
        } else {
            Command::new("chmod")
                .arg("-R")
                .arg("a-w")
                .arg(&dir)
                .status()
        };
        assert!(
            status.unwrap().success(),
            "could not make {dir:?} read-only"
        );
        ReadOnly(dir)
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        let _ = Command::new("chattr")
            .arg("-R")
            .arg("-i")
            .arg(&self.0)
            .output();
        let _ = Command::new("chmod")
            .arg("-R")
            .arg("u+w")
            .arg(&self.0)
            .output();
    }
}

/// A read-only object database: verify.sh passes, but the proof cannot be written. `run` fails
/// loudly (exit 2, naming what it could not write), the hook says it could not check, and
/// nothing is half-written: the notes ref is where it was and fsck is clean.
#[test]
fn a_read_only_object_database_fails_to_record_loudly() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(hook(&repo, &repo.root, "s", "SessionStart"), None);
    let tip = repo.git(&["rev-parse", "refs/notes/prove-it"]);
    repo.write("b.txt", "new content, new objects\n");
    {
        let _read_only = ReadOnly::new(repo.path(".git/objects"));
        repo.prove_it(&["run"])
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with("error: could not write"));
        let notice = hook(&repo, &repo.root, "s", "Stop").expect("a notice");
        let text = notice["systemMessage"].as_str().unwrap();
        assert!(
            text.starts_with("prove-it: could not check this turn: ")
                && text.contains("could not write"),
            "{text}"
        );
        repo.prove_it(&["status"]).assert().code(1);
    }
    assert_eq!(repo.git(&["rev-parse", "refs/notes/prove-it"]), tip);
    let fsck = repo.git_output(&["fsck", "--no-dangling", "--no-progress"]);
    assert!(fsck.status.success() && fsck.stdout.is_empty(), "{fsck:?}");
    // Writable again, the same state proves.
    repo.prove_it(&["run"]).assert().code(0);
}

/// Bare repositories have no working state, and outside a repository there is nothing: clear
/// errors from the commands that prove or set up (SPEC.md section 7), silence from the hooks
/// (nothing to gate). `check`, `log` and `sync` need no worktree and work (tests/it/bare.rs).
#[test]
fn bare_repositories_and_non_repositories_get_clear_messages() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    let bare = repo.home().join("bare.git");
    repo.git(&["clone", "-q", "--mirror", ".", bare.to_str().unwrap()]);
    let worktree_commands: [&[&str]; 7] = [
        &["run"],
        &["run", "HEAD"],
        &["status"],
        &["init", "--yes"],
        &["doctor"],
        &["install", "pre-push"],
        &["claim", "--record", "it works"],
    ];
    for args in worktree_commands {
        repo.prove_it(args)
            .current_dir(&bare)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains("is a bare repository"));
    }
    // Nothing was written where there is nothing to prove.
    assert!(!bare.join("prove-it").exists());
    assert!(!bare.join("hooks/pre-push").exists());
    repo.prove_it(&["hook", "git", "pre-push", "origin"])
        .current_dir(&bare)
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a bare repository"));
    assert_eq!(hook(&repo, &bare, "s", "SessionStart"), None);
    assert_eq!(hook(&repo, &bare, "s", "Stop"), None);
    // The mirror has the proofs, and CI can check them there.
    repo.prove_it(&["check"])
        .current_dir(&bare)
        .assert()
        .code(0);
    repo.prove_it(&["log"])
        .current_dir(&bare)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("proven"));

    let elsewhere = repo.home().join("plain");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for args in [&["run"][..], &["status"], &["check"], &["log"], &["sync"]] {
        repo.prove_it(args)
            .current_dir(&elsewhere)
            .env("GIT_CEILING_DIRECTORIES", repo.home())
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with(
                "error: not in a git repository",
            ));
    }
}

/// `GIT_DIR` and `GIT_WORK_TREE` from the caller are honoured as git honours them: `run` and
/// `status` from another directory act on the repository they name. (The agent hooks instead
/// re-run themselves without them, as the event's cwd names the repository:
/// gate::verify_sh_does_not_see_the_hosts_git_variables.)
#[test]
fn git_dir_and_git_work_tree_from_the_caller_are_honoured() {
    let repo = TestRepo::with_commit();
    repo.write("b.txt", "b\n");
    let elsewhere = repo.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let with_env = |args: &[&str]| {
        let mut cmd = repo.prove_it(args);
        cmd.current_dir(&elsewhere)
            .env("GIT_DIR", repo.path(".git"))
            .env("GIT_WORK_TREE", &repo.root);
        cmd
    };
    with_env(&["status"]).assert().code(1);
    with_env(&["run"]).assert().code(0);
    assert!(proof_of_working_state(&repo).is_some());
    with_env(&["status"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("PROVEN by"));
    // GIT_DIR alone, from the worktree's root: git takes the current directory as the worktree.
    repo.write("c.txt", "c\n");
    repo.prove_it(&["run"])
        .env("GIT_DIR", repo.path(".git"))
        .assert()
        .code(0);
    assert!(proof_of_working_state(&repo).is_some());
}
