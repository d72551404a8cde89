//! No silent pass: an agent with a shell hides a change from the state tree or
//! fakes the state verify.sh tested, and the gate must not end the turn quietly. Each test is
//! one trap, in a real repository, through the real binary (`git prove-it hook claude`).

use std::path::Path;
use std::time::{Duration, SystemTime};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::harness::TestRepo;

/// verify.sh that fails while a.txt holds "bad".
const CHECKS_A: &str = "if grep -q bad a.txt; then echo 'a.txt is bad'; exit 1; fi\nexit 0";

fn event(repo: &TestRepo, name: &str) -> String {
    json!({
        "session_id": "sealed-session",
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

#[track_caller]
fn block_reason(answer: Option<Value>) -> String {
    let json = answer.expect("a block, not silence");
    assert_eq!(json["decision"], "block", "{json}");
    json["reason"].as_str().unwrap().to_string()
}

fn set_mtime(path: &Path, time: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

/// `status --json` of the working state.
fn status(repo: &TestRepo) -> Value {
    crate::harness::json_stdout(&repo.prove_it(&["status", "--json"]).assert())
}

/// A committed, proven repository whose verify.sh checks a.txt ("good\n", its mtime an hour
/// back so that the index's stat data is not racily clean), with a session started on it.
fn proven_session() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    set_mtime(
        &repo.path("a.txt"),
        SystemTime::now() - Duration::from_secs(3600),
    );
    repo.verify_script(CHECKS_A);
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(hook(&repo, "SessionStart"), None);
    repo
}

/// After the trap, the stop must refuse, leave no proof of the state, and `check --strict`
/// must not accept it.
#[track_caller]
fn assert_refused_and_unproven(repo: &TestRepo, reason_has: &str) {
    let reason = block_reason(hook(repo, "Stop"));
    assert!(reason.contains(reason_has), "{reason}");
    assert_eq!(status(repo)["proven"], false, "{reason}");
    // Commit what is on disk, whatever the index believed, so that HEAD is the hidden state.
    let blob = repo.git(&["hash-object", "-w", "a.txt"]);
    repo.git(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{},a.txt", blob.trim()),
    ]);
    repo.git(&["commit", "-q", "-m", "the hidden change"]);
    repo.prove_it(&["check", "--strict"]).assert().code(1);
}

// `git update-index --assume-unchanged` made git (and the state tree) trust the index's blob,
// so an edit behind it left the state "unchanged" and the turn ended quietly.
#[test]
fn assume_unchanged_edit_is_seen() {
    let repo = proven_session();
    repo.git(&["update-index", "--assume-unchanged", "a.txt"]);
    repo.write("a.txt", "bad, and hidden\n");
    assert_refused_and_unproven(&repo, "a.txt is bad");
}

// The same with skip-worktree, the sparse-checkout flag, on a file that is on disk.
#[test]
fn skip_worktree_edit_is_seen() {
    let repo = proven_session();
    repo.git(&["update-index", "--skip-worktree", "a.txt"]);
    repo.write("a.txt", "bad, and hidden\n");
    assert_refused_and_unproven(&repo, "a.txt is bad");
}

// core.trustctime=false and a same-size edit with its mtime set back: the stat data git keeps
// looks clean, and only ctime (which cannot be set back) tells.
#[test]
fn same_size_edit_with_restored_mtime_under_trustctime_false_is_seen() {
    let repo = proven_session();
    repo.git(&["config", "core.trustctime", "false"]);
    let mtime = std::fs::metadata(repo.path("a.txt"))
        .unwrap()
        .modified()
        .unwrap();
    repo.write("a.txt", "bad!\n");
    set_mtime(&repo.path("a.txt"), mtime);
    assert_refused_and_unproven(&repo, "a.txt is bad");
}

// A sparse checkout's skip-worktree entries absent from disk still keep their index blob: the
// state is the same as with the file checked out, and the gate stays quiet.
#[test]
fn skip_worktree_entry_absent_from_disk_keeps_its_blob() {
    let repo = proven_session();
    let before = status(&repo)["tree"].clone();
    repo.git(&["config", "core.sparseCheckout", "true"]);
    repo.git(&["update-index", "--skip-worktree", "a.txt"]);
    repo.remove("a.txt");
    assert_eq!(status(&repo)["tree"], before);
    assert_eq!(hook(&repo, "Stop"), None);
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("already proven"));
}

// Without a sparse checkout, skip-worktree (or assume-unchanged) on a deleted file kept the
// file's blob in the state: a test deleted behind either bit still counted as there.
#[test]
fn skip_worktree_or_assume_unchanged_on_a_deleted_file_without_a_sparse_checkout_is_a_deletion() {
    for bit in ["--skip-worktree", "--assume-unchanged"] {
        let repo = proven_session();
        let before = status(&repo)["tree"].clone();
        repo.git(&["update-index", bit, "a.txt"]);
        repo.remove("a.txt");
        let after = status(&repo)["tree"].as_str().unwrap().to_string();
        assert_ne!(after, before.as_str().unwrap(), "{bit}");
        // The stop proves the state as it is on disk, never the deleted file's old blob.
        hook(&repo, "Stop");
        let listed = repo.git(&["ls-tree", "--name-only", &after]);
        assert!(
            !listed.lines().any(|name| name == "a.txt"),
            "{bit}: {listed}"
        );
        assert_eq!(status(&repo)["tree"], after.as_str(), "{bit}");
    }
    // assume-unchanged is no sparse checkout's: even with one, a deleted file is deleted.
    let repo = proven_session();
    let before = status(&repo)["tree"].clone();
    repo.git(&["config", "core.sparseCheckout", "true"]);
    repo.git(&["update-index", "--assume-unchanged", "a.txt"]);
    repo.remove("a.txt");
    assert_ne!(status(&repo)["tree"], before);
}

/// The `verify:` blob of the one proof recorded for `tree`.
fn recorded_verify(repo: &TestRepo, tree: &str) -> String {
    let note = repo.note(tree).expect("a proof");
    note.lines()
        .find_map(|line| line.strip_prefix("verify: "))
        .expect("a verify: line")
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

// skip-worktree on verify.sh, then verify.sh rewritten to `exit 0`: the state tree kept the
// index's (original) blob while the file on disk ran, so the proof named a verify.sh that
// never ran. Now the proof names the bytes that ran, and the session's stop says it was edited.
#[test]
fn skip_worktree_on_verify_sh_records_the_bytes_that_ran() {
    let repo = proven_session();
    let original = repo.git(&["rev-parse", ":verify.sh"]).trim().to_string();
    repo.git(&["update-index", "--skip-worktree", "verify.sh"]);
    repo.verify_script("exit 0");
    repo.write("a.txt", "bad\n");
    let answer = hook(&repo, "Stop").expect("not silence: verify.sh was edited");
    assert!(answer.to_string().contains("edited"), "{answer}");
    let tree = status(&repo)["tree"].as_str().unwrap().to_string();
    let ran = repo.git(&["hash-object", "verify.sh"]).trim().to_string();
    assert_ne!(ran, original);
    assert_eq!(recorded_verify(&repo, &tree), ran);
}

// A clean filter on verify.sh (.git/info/attributes and filter.x.clean) that hands git the
// original script while the file on disk is `exit 0`: refused, naming the filter, at the stop
// and by `run`, and nothing is recorded.
#[test]
fn clean_filter_on_verify_sh_is_refused() {
    let repo = proven_session();
    let original = repo.home().join("original-verify.sh");
    std::fs::copy(repo.path("verify.sh"), &original).unwrap();
    repo.write(".git/info/attributes", "verify.sh filter=hide\n");
    repo.git(&[
        "config",
        "filter.hide.clean",
        &format!("cat {}", original.display()),
    ]);
    repo.verify_script("exit 0");
    repo.write("a.txt", "bad\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("verify.sh on disk is not what"), "{reason}");
    assert!(reason.contains("clean filter"), "{reason}");
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("clean filter"));
    assert_eq!(
        repo.git(&["notes", "--ref", "prove-it", "list"])
            .lines()
            .count(),
        1,
        "only the proof made before the trap"
    );
}

// verify.sh as a link to an ignored file: what ran is not part of the state, so no proof
// could name it.
#[test]
fn verify_sh_leading_to_an_ignored_file_is_refused() {
    let repo = proven_session();
    repo.write(".gitignore", "build/\n");
    repo.write("build/check.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("build/check.sh", 0o755);
    repo.remove("verify.sh");
    repo.symlink("build/check.sh", "verify.sh");
    repo.write("a.txt", "bad\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("build/check.sh"), "{reason}");
    assert!(reason.contains("not part of the working state"), "{reason}");
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("build/check.sh"));
}

/// A committed repository whose verify.sh checks a.txt after a pause, and says when it starts
/// and when it has checked (in `$HOME/said`, outside the repository), with a session started
/// on it and a.txt then broken.
fn broken_session_with_a_slow_check() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    repo.verify_script(
        "echo started >> \"$HOME/said\"\nsleep 1\n\
         if grep -q bad a.txt; then echo 'a.txt is bad'; exit 1; fi\n\
         echo checked >> \"$HOME/said\"\nsleep 1\nexit 0",
    );
    repo.commit_all("initial");
    assert_eq!(hook(&repo, "SessionStart"), None);
    repo.write("a.txt", "bad\n");
    repo
}

// A helper process puts good content in place while verify.sh runs and restores the broken
// content before it exits: before and after, the state tree is the same, so a proof was
// recorded for a state that was never tested. ctime cannot be set back, so the swap shows.
#[test]
fn files_swapped_while_verify_sh_runs_are_named_and_not_proven() {
    let repo = broken_session_with_a_slow_check();
    // Waits (10 s at most) for verify.sh to say `$1`.
    let helper = "wait_for() { i=0; until grep -q \"$1\" \"$HOME/said\" 2>/dev/null; do \
         i=$((i+1)); [ $i -gt 200 ] && exit 3; sleep 0.05; done; }\n\
         wait_for started\n\
         printf 'good\\n' > a.txt\n\
         wait_for checked\n\
         printf 'bad\\n' > a.txt\n";
    let mut helper = repo.command("sh").arg("-c").arg(helper).spawn().unwrap();
    let answer = hook(&repo, "Stop");
    assert!(helper.wait().unwrap().success(), "{answer:?}");
    let reason = block_reason(answer);
    assert!(
        reason.contains("changed the working state while it ran"),
        "{reason}"
    );
    assert!(reason.contains("    a.txt"), "{reason}");
    assert_eq!(repo.git(&["cat-file", "-p", ":a.txt"]), "good\n");
    assert_eq!(
        std::fs::read_to_string(repo.path("a.txt")).unwrap(),
        "bad\n"
    );
    assert_eq!(status(&repo)["proven"], false, "{reason}");
}

// Content written back unchanged during the run is a change all the same: the gate cannot
// tell a restore from a rewrite, and names the path.
#[test]
fn a_file_rewritten_unchanged_during_the_run_is_named() {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    repo.write("untracked.txt", "mine\n");
    repo.verify_script("printf 'mine\\n' > untracked.txt\nexit 0");
    repo.git(&["add", "a.txt", "verify.sh"]);
    repo.git(&["commit", "-q", "-m", "initial"]);
    repo.prove_it(&["run", "--json"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("\"untracked.txt\""));
    assert_eq!(status(&repo)["proven"], false);
}

// Ignored files (build output) are not part of the state: writing them during the run is fine.
#[test]
fn ignored_files_written_during_the_run_do_not_count() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "target/\n");
    repo.write("a.txt", "good\n");
    repo.verify_script("mkdir -p target && date > target/out && exit 0");
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(status(&repo)["proven"], true);
}

/// The number of proofs recorded in the repository.
fn proofs(repo: &TestRepo) -> usize {
    repo.git(&["notes", "--ref", "prove-it", "list"])
        .lines()
        .count()
}

/// git inside the submodule at `sub`, with the test's environment.
fn git_in_sub(repo: &TestRepo, args: &[&str]) {
    let status = repo
        .command("git")
        .current_dir(repo.path("sub"))
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?} in sub");
}

// Uncommitted changes inside a submodule leave its gitlink, and so the state tree, unchanged:
// the state looked unchanged (or proven) and nothing ran. Now the stop blocks naming the
// submodule and what to do, `run` refuses, and nothing is recorded; committing inside it and
// staging the new gitlink makes a state that can be proven.
#[test]
fn uncommitted_change_in_a_submodule_blocks_naming_it() {
    let (repo, _source) = crate::harness::with_submodule();
    repo.prove_it(&["run"]).assert().code(0);
    let recorded = proofs(&repo);
    assert_eq!(hook(&repo, "SessionStart"), None);
    repo.write("sub/a.txt", "changed inside the submodule\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(
        reason.contains("the submodule 'sub' has changes"),
        "{reason}"
    );
    assert!(reason.contains("git add <path>"), "{reason}");
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("submodule 'sub'"))
        .stderr(predicate::str::contains(
            "hint: commit inside the submodule",
        ));
    assert_eq!(proofs(&repo), recorded, "nothing recorded");
    // status agrees with the gate: the tree's proof does not count for this state.
    repo.prove_it(&["status"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("submodules: dirty: sub"))
        .stdout(predicate::str::contains("PROVEN").not())
        .stdout(predicate::str::contains(
            "hint: commit inside the submodule",
        ));
    git_in_sub(&repo, &["commit", "-q", "-am", "inside"]);
    repo.git(&["add", "sub"]);
    assert_eq!(hook(&repo, "Stop"), None, "the committed state is proven");
    assert_eq!(proofs(&repo), recorded + 1);
}

// An untracked (not ignored) file inside a submodule is a change its commit does not hold;
// an ignored one is not.
#[test]
fn untracked_file_in_a_submodule_blocks_and_an_ignored_one_does_not() {
    let (repo, _source) = crate::harness::with_submodule();
    assert_eq!(hook(&repo, "SessionStart"), None);
    let exclude = repo.git(&["-C", "sub", "rev-parse", "--git-path", "info/exclude"]);
    let exclude = repo.path("sub").join(exclude.trim());
    std::fs::create_dir_all(exclude.parent().unwrap()).unwrap();
    std::fs::write(&exclude, "*.log\n").unwrap();
    repo.write("sub/build.log", "ignored inside the submodule\n");
    repo.write("b.txt", "a change of the superproject\n");
    assert_eq!(hook(&repo, "Stop"), None, "an ignored file is no change");
    repo.write("sub/new.txt", "untracked inside the submodule\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(
        reason.contains("the submodule 'sub' has changes"),
        "{reason}"
    );
}

// A file inside a submodule written while verify.sh runs, its content put back as it was: the
// submodule is clean after the run, and its gitlink the same, but the write shows by its ctime.
#[test]
fn a_file_rewritten_inside_a_submodule_during_the_run_is_named() {
    let (repo, _source) = crate::harness::with_submodule();
    repo.verify_script("printf 'a\\n' > sub/a.txt\nexit 0");
    repo.commit_all("verify.sh writes into the submodule");
    assert_eq!(hook(&repo, "SessionStart"), None);
    repo.write("b.txt", "a change\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("    sub/a.txt"), "{reason}");
    assert_eq!(status(&repo)["proven"], false, "{reason}");
}

// A clean filter set from outside the worktree (`.git/config` and `.git/info/attributes`,
// neither part of the state) mapped every edit back to its proven blob: the state looked
// unchanged and the stop ended quietly while verify.sh failed on the file on disk. The filter
// configuration is anchored now, and changing it mid-session is refused like a lower budget.
#[test]
fn a_clean_filter_configured_mid_session_is_refused() {
    let repo = proven_session();
    let recorded = proofs(&repo);
    std::fs::create_dir_all(repo.path(".git/info")).unwrap();
    std::fs::write(repo.path(".git/info/attributes"), "a.txt filter=hide\n").unwrap();
    repo.git(&["config", "filter.hide.clean", "echo good"]);
    repo.write("a.txt", "bad, and hidden\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(
        reason.contains("the clean filters or attributes set outside the worktree changed"),
        "{reason}"
    );
    assert_eq!(proofs(&repo), recorded, "nothing recorded");
    // Without the filter the edit is plain, and verify.sh refuses it.
    repo.git(&["config", "--unset", "filter.hide.clean"]);
    std::fs::remove_file(repo.path(".git/info/attributes")).unwrap();
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("a.txt is bad"), "{reason}");
}

// A filter in place before the session started (Git LFS, say) is the session's starting point:
// stops are gated as ever, on the state as the filter makes it.
#[test]
fn a_clean_filter_set_before_the_session_is_not_refused() {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    repo.verify_script(CHECKS_A);
    repo.commit_all("initial");
    std::fs::create_dir_all(repo.path(".git/info")).unwrap();
    std::fs::write(repo.path(".git/info/attributes"), "*.bin filter=keep\n").unwrap();
    repo.git(&["config", "filter.keep.clean", "cat"]);
    assert_eq!(hook(&repo, "SessionStart"), None);
    repo.write("a.txt", "bad\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("a.txt is bad"), "{reason}");
    assert!(!reason.contains("clean filters"), "{reason}");
    repo.write("a.txt", "good\n");
    repo.write("b.bin", "data\n");
    assert_eq!(hook(&repo, "Stop"), None, "proven through the filter");
}

// An ignore rule added during the session outside the worktree (.git/info/exclude,
// core.excludesFile, or git's default ~/.config/git/ignore) hid a new file that verify.sh
// reads: the state tree looked unchanged and the stop ended silently.
#[test]
fn an_ignore_rule_added_mid_session_outside_the_worktree_is_refused() {
    const READS_EXTRA: &str = "if [ -f extra.txt ] && grep -q bad extra.txt; then echo 'extra.txt is bad'; exit 1; fi\nexit 0";
    for how in ["info/exclude", "excludesFile", "xdg"] {
        let repo = TestRepo::new();
        repo.write("a.txt", "good\n");
        repo.verify_script(READS_EXTRA);
        repo.commit_all("initial");
        repo.prove_it(&["run"]).assert().code(0);
        assert_eq!(hook(&repo, "SessionStart"), None);
        let recorded = proofs(&repo);
        match how {
            "info/exclude" => {
                std::fs::create_dir_all(repo.path(".git/info")).unwrap();
                std::fs::write(repo.path(".git/info/exclude"), "extra.txt\n").unwrap();
            }
            "excludesFile" => {
                let file = repo.home().join("my-ignores");
                std::fs::write(&file, "extra.txt\n").unwrap();
                repo.git(&["config", "core.excludesFile", file.to_str().unwrap()]);
            }
            _ => {
                let dir = repo.home().join(".config/git");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("ignore"), "extra.txt\n").unwrap();
            }
        }
        repo.write("extra.txt", "bad\n");
        let reason = block_reason(hook(&repo, "Stop"));
        assert!(
            reason.contains("the ignore rules set outside the worktree changed"),
            "{how}: {reason}"
        );
        // The new file the rule hides is named.
        assert!(reason.contains("    extra.txt\n"), "{how}: {reason}");
        assert_eq!(proofs(&repo), recorded, "{how}: nothing recorded");
    }
}
