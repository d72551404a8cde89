//! What a run's ctimes cannot tell: a directory renamed away and back while verify.sh runs
//! (its files keep their ctimes and inodes), and rule files inside the worktree that hide
//! themselves. Each test is one trap, in a real repository, through the real binary.

use serde_json::{Value, json};

use crate::harness::TestRepo;

fn event(repo: &TestRepo, name: &str) -> String {
    json!({
        "session_id": "watch-session",
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

fn status(repo: &TestRepo) -> Value {
    crate::harness::json_stdout(&repo.prove_it(&["status", "--json"]).assert())
}

/// verify.sh that passes while tests/check.txt says "good", and that swaps in `tests.evil`
/// for the check when it is there, putting the real directory back before it exits.
const SWAPPING: &str = "\
if [ -d tests.evil ]; then mv tests tests.real && mv tests.evil tests; fi
grep -q good tests/check.txt || { echo 'tests/check.txt is bad'; exit 1; }
if [ -d tests.real ]; then mv tests tests.evil && mv tests.real tests; fi
exit 0";

// A directory renamed away and back during the run leaves every file's ctime and inode as they
// were: the swapped-in copy passed, the real (broken) one is back, and only a watch on the
// state's directories can tell.
#[test]
fn directory_swapped_by_rename_during_the_run_is_not_proven() {
    let repo = TestRepo::new();
    repo.write("tests/check.txt", "good\n");
    repo.write(".gitignore", "tests.evil/\n");
    repo.verify_script(SWAPPING);
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(hook(&repo, "SessionStart"), None);

    repo.write("tests/check.txt", "bad\n");
    repo.write("tests.evil/check.txt", "good\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("tests"), "{reason}");
    assert!(repo.path("tests.evil/check.txt").exists(), "swapped back");
    assert_eq!(status(&repo)["proven"], false, "{reason}");
    // The same through `run`: nothing recorded.
    let out = repo.prove_it(&["run"]).output().unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(status(&repo)["proven"], false);
}

// Ordinary runs write and rename ignored files as they go (bytecode caches, build folders,
// coverage data written through a temporary name): none of it is part of the state, so the
// run is proven, and watched.
#[test]
fn ignored_files_written_and_renamed_during_the_run_are_still_proven() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "__pycache__/\ntarget/\n.coverage*\n");
    repo.write("src/app.py", "print('hi')\n");
    repo.verify_script(
        "mkdir -p src/__pycache__ target/debug
echo x > src/__pycache__/app.pyc.tmp && mv src/__pycache__/app.pyc.tmp src/__pycache__/app.pyc
echo y > target/debug/out.tmp && mv target/debug/out.tmp target/debug/out
mv target/debug target/release
echo z > .coverage.tmp && mv .coverage.tmp .coverage
exit 0",
    );
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().code(0);
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let note = repo.note(tree.trim()).expect("a proof");
    assert!(!note.contains("renames:"), "{note}");
    assert_eq!(status(&repo)["proven"], true);
}

// The watch is read while the run goes on (each progress tick, every 200 ms): a run that
// renames three times what the kernel's queue holds (16384 events by default; each rename is
// two events) over a few seconds, none of it a path of the state, is still watched, and its
// proof says nothing of renames.
#[test]
fn a_long_run_that_renames_more_than_the_kernel_queues_is_still_watched() {
    let repo = TestRepo::new();
    repo.verify_script(
        "python3 -c '
import os, time
open(\"scratch.a\", \"w\").close()
for _ in range(6):
    for _ in range(2000):
        os.rename(\"scratch.a\", \"scratch.b\")
        os.rename(\"scratch.b\", \"scratch.a\")
    time.sleep(0.5)
os.remove(\"scratch.a\")
'",
    );
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().code(0);
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let note = repo.note(tree.trim()).expect("a proof");
    assert!(!note.contains("renames:"), "{note}");
}

// Where renames cannot be watched, the proof says so, and `check --strict` shows it.
#[test]
fn unwatched_renames_are_said_in_the_record_and_by_check() {
    let repo = TestRepo::new();
    repo.verify_passes();
    let commit = repo.commit_all("initial");
    repo.prove_it(&["run"])
        .env("PROVE_IT_TEST_NO_RENAME_WATCH", "1")
        .assert()
        .code(0);
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let note = repo.note(tree.trim()).expect("a proof");
    assert!(note.contains("renames: unwatched"), "{note}");
    let out = repo
        .prove_it(&["check", "--strict", &commit])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("renames unwatched"), "{stdout}");
}

/// A committed, proven repository whose verify.sh fails on any file under tests/ saying "bad",
/// with a session started on it.
fn proven_session_reading_tests() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("tests/check.txt", "good\n");
    repo.write(".gitignore", ".venv/\n");
    repo.verify_script("! grep -rq bad tests tests2 2>/dev/null");
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(hook(&repo, "SessionStart"), None);
    repo
}

// A new `.gitignore` that ignores itself (`*`) hides a new file verify.sh reads, and itself:
// the state tree looks as it was, and the stop ended quietly as "unchanged".
#[test]
fn a_self_ignoring_gitignore_hiding_a_new_file_is_refused_naming_both() {
    let repo = proven_session_reading_tests();
    repo.write("tests/.gitignore", "*\n");
    repo.write("tests/evil.txt", "bad\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("tests/.gitignore"), "{reason}");
    assert!(reason.contains("tests/evil.txt"), "{reason}");
    // A whole new directory hidden by its own rule file is named as one.
    repo.remove("tests/.gitignore");
    repo.remove("tests/evil.txt");
    repo.write("tests2/.gitignore", "*\n");
    repo.write("tests2/evil.txt", "bad\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("tests2/.gitignore"), "{reason}");
    assert!(reason.contains("tests2/"), "{reason}");
}

// A rule file inside a directory the state's own rules ignore (a virtual environment's
// `.venv/.gitignore`) hides nothing more than they do: the stop stays quiet.
#[test]
fn a_rule_file_inside_a_directory_ignored_by_the_state_is_not_refused() {
    let repo = proven_session_reading_tests();
    repo.write(".venv/.gitignore", "*\n");
    repo.write(".venv/lib/site.py", "x\n");
    assert_eq!(hook(&repo, "Stop"), None);
}

// pytest writes `.pytest_cache/.gitignore` holding `*` on its first run in a repository that
// does not ignore the folder: a dot-directory of its own, hiding only itself. Refusing it sent
// every honest Python session back once; a tests folder hidden the same way still is refused.
#[test]
fn a_tool_cache_that_ignores_itself_is_not_refused() {
    let repo = proven_session_reading_tests();
    repo.write(
        ".pytest_cache/.gitignore",
        "# Created by pytest automatically.\n*\n",
    );
    repo.write(".pytest_cache/v/cache/lastfailed", "{}\n");
    assert_eq!(hook(&repo, "Stop"), None);
    repo.write(".tests/.gitignore", "*\n");
    repo.write(".tests/evil.txt", "bad\n");
    repo.write("tests/.gitignore", "*\n");
    repo.write("tests/evil.txt", "bad\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("tests/evil.txt"), "{reason}");
}

// A line added to `.git/info/exclude` was refused as a changed rule source, without saying
// which new file it hides: the block now names the source and the paths.
#[test]
fn an_exclude_rule_added_mid_session_is_refused_naming_the_paths_it_hides() {
    let repo = proven_session_reading_tests();
    std::fs::write(repo.path(".git/info/exclude"), "evil.txt\n").unwrap();
    repo.write("tests/evil.txt", "bad\n");
    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains(".git/info/exclude"), "{reason}");
    assert!(reason.contains("tests/evil.txt"), "{reason}");
}
