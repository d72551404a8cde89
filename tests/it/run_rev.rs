//! `git prove-it run <rev>`: proving a commit in a temporary worktree, not the working state.

use std::path::Path;
use std::time::Duration;

use predicates::prelude::*;

use crate::check::tree_of;
use crate::harness::{TestRepo, json_stdout};

/// The linked worktrees git knows besides the main one, and what is left in our worktrees dir.
pub fn leftovers(repo: &TestRepo) -> (usize, usize) {
    // Commit worktrees are kept between commands, one a slot of the user's cache: what must not
    // be left is a slot still taken once the command has ended, or anything but slots.
    let cache = repo.home().join(".cache/git-prove-it");
    let listed = repo.git(&["worktree", "list", "--porcelain"]);
    let linked = listed
        .lines()
        .filter_map(|line| line.strip_prefix("worktree "))
        .skip(1)
        .filter(|path| !free_slot(Path::new(path)))
        .count();
    let files = std::fs::read_dir(&cache)
        .into_iter()
        .flatten()
        .flatten()
        .map(|folder| {
            std::fs::read_dir(folder.path().join("worktrees"))
                .into_iter()
                .flatten()
                .flatten()
                .filter(|entry| {
                    let path = entry.path();
                    let slot = path.with_extension("");
                    !free_slot(&slot)
                })
                .count()
        })
        .sum();
    if linked + files > 0 {
        // Shown with the failing test's output: what is left, and who holds its locks.
        eprintln!("{}", left_in(&cache, &listed));
    }
    (linked, files)
}

/// The cache's worktree folders, each entry with whether its slot is free, and the processes
/// holding a lock on a file there (from `/proc/locks`), to tell a slot still held from a stray
/// file when `leftovers` finds something.
fn left_in(cache: &Path, listed: &str) -> String {
    use std::os::unix::fs::MetadataExt as _;
    let mut text = format!("git worktree list:\n{listed}\nin {}:\n", cache.display());
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    for folder in std::fs::read_dir(cache).into_iter().flatten().flatten() {
        for entry in std::fs::read_dir(folder.path().join("worktrees"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = entry.path();
            let inode = entry.metadata().map(|m| m.ino()).unwrap_or_default();
            let holders: Vec<String> = locks
                .lines()
                .filter(|line| {
                    line.split_whitespace()
                        .nth(5)
                        .and_then(|id| id.rsplit(':').next())
                        .is_some_and(|ino| ino == inode.to_string())
                })
                .filter_map(|line| line.split_whitespace().nth(4))
                .map(|pid| {
                    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                    format!(
                        "{pid} {}",
                        String::from_utf8_lossy(&cmdline).replace('\0', " ")
                    )
                })
                .collect();
            text.push_str(&format!(
                "  {} (slot free: {}; locked by: {holders:?})\n",
                path.display(),
                free_slot(&path.with_extension(""))
            ));
        }
    }
    text
}

/// Whether `path` is a slot of kept commit worktrees that no command holds.
fn free_slot(path: &Path) -> bool {
    let named = path
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.strip_prefix("slot-"))
        .is_some_and(|n| n.parse::<u32>().is_ok());
    let lock = path.with_extension("lock");
    named
        && std::fs::File::open(&lock).is_ok_and(|file| {
            rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
        })
}

#[test]
fn proves_a_commit_without_touching_the_working_tree() {
    let repo = TestRepo::with_commit();
    let first = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    repo.write("a.txt", "dirty\n");
    repo.write("untracked.txt", "u\n");
    let status = repo.git(&["status", "--porcelain"]);

    repo.prove_it(&["run", "HEAD~1"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(format!(
            "commit {} initial: checking it out in a temporary worktree\n",
            &first[..7]
        )))
        .stdout(predicate::str::contains(format!(
            "proven: tree {}",
            &tree_of(&repo, "HEAD~1")[..12]
        )));
    let note = repo
        .note(&tree_of(&repo, "HEAD~1"))
        .expect("a proof for the commit's tree");
    assert!(note.contains("host: cli"), "{note}");
    assert_eq!(repo.git(&["status", "--porcelain"]), status);
    assert_eq!(
        std::fs::read_to_string(repo.path("a.txt")).unwrap(),
        "dirty\n"
    );
    assert_eq!(
        leftovers(&repo),
        (0, 0),
        "the worktree is let go, its slot free"
    );
    repo.prove_it(&["check", "HEAD~1"]).assert().code(0);
    repo.prove_it(&["check"]).assert().code(1);

    // Proven already: nothing runs again.
    repo.prove_it(&["run", &first])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("already proven"));
    let json = json_stdout(&repo.prove_it(&["run", "--json", "HEAD"]).assert().code(0));
    assert_eq!(json["result"], "proven");
    assert_eq!(json["tree"], tree_of(&repo, "HEAD"));
}

#[test]
fn verify_sh_runs_in_the_checkout_without_the_callers_git_variables() {
    let repo = TestRepo::with_commit();
    let seen = repo.home().join("seen");
    repo.verify_script(&format!(
        "echo \"dir=${{GIT_DIR:-unset}} index=${{GIT_INDEX_FILE:-unset}} pwd=$(pwd) git=$(git rev-parse --git-dir)\" > '{}'\ncat a.txt >> '{}'",
        seen.display(),
        seen.display()
    ));
    repo.commit_all("verify.sh reports where it runs");
    repo.write("a.txt", "working state, not the commit\n");
    let git_dir = repo.path(".git");
    repo.prove_it(&["run", "HEAD"])
        .env("GIT_DIR", &git_dir)
        .env("GIT_WORK_TREE", &repo.root)
        .env("GIT_INDEX_FILE", git_dir.join("index"))
        .assert()
        .code(0);
    let seen = std::fs::read_to_string(seen).unwrap();
    assert!(seen.starts_with("dir=unset index=unset pwd="), "{seen}");
    // The commit's worktree, shown at the checkout's path, with its own git directory.
    assert!(
        seen.contains(&format!("pwd={} ", repo.root.display())),
        "{seen}"
    );
    assert!(seen.contains("/git-prove-it/"), "{seen}");
    assert!(seen.contains("/worktrees/"), "{seen}");
    assert!(
        seen.ends_with("\na\n"),
        "verify.sh saw the commit's a.txt: {seen}"
    );
    assert!(repo.note(&tree_of(&repo, "HEAD")).is_some());
    assert_eq!(leftovers(&repo), (0, 0));
}

#[test]
fn a_failing_commit_is_not_proven_and_its_worktree_is_removed() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.verify_fails(3);
    repo.commit_all("broken");
    repo.prove_it(&["run", "HEAD"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "not proven: verify.sh exit code 3",
        ));
    assert!(repo.note(&tree_of(&repo, "HEAD")).is_none());
    assert_eq!(leftovers(&repo), (0, 0));
}

#[test]
fn a_commit_without_verify_sh_is_not_armed_and_a_range_proves_each_commit_of_it() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("no verify.sh");
    repo.prove_it(&["run", "HEAD"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "not armed: verify.sh does not exist at the root of that commit's tree",
        ));
    repo.verify_passes();
    repo.commit_all("armed");
    // A range is not one commit: each of its commits is proven (run_range.rs has the rest).
    repo.prove_it(&["run", "HEAD~1..HEAD"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("1 of 1 commit proven"));
    repo.prove_it(&["run", "no-such-rev"]).assert().code(2);
    assert_eq!(leftovers(&repo).0, 0);
}

#[test]
fn an_interrupted_run_removes_its_worktree() {
    let repo = TestRepo::with_commit();
    let started = repo.home().join("started");
    repo.verify_script(&format!("touch '{}'\nsleep 30", started.display()));
    repo.commit_all("slow");
    let mut child = repo
        .command(assert_cmd::cargo::cargo_bin("git-prove-it"))
        .args(["run", "HEAD"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "verify.sh never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "interrupted is not proven");
    assert_eq!(leftovers(&repo), (0, 0));
}

/// The log path a failed run printed, from its `full output:` line.
fn printed_log(text: &str) -> std::path::PathBuf {
    let line = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("full output: "))
        .unwrap_or_else(|| panic!("no log path in {text}"));
    std::path::PathBuf::from(line.split_whitespace().next().unwrap())
}

// `run <rev>` printed the log path through the deleted temporary worktree
// (`.git/worktrees/<tmp>/../../prove-it/...`), a path that no longer exists.
#[test]
fn a_failed_commits_log_path_is_real_and_canonical() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.verify_fails(1);
    repo.commit_all("broken");
    let assert = repo.prove_it(&["run", "HEAD"]).assert().code(1);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let log = printed_log(&stdout);
    assert!(log.is_file(), "{}: {stdout}", log.display());
    assert_eq!(log, std::fs::canonicalize(&log).unwrap(), "{stdout}");
    assert!(!log.to_string_lossy().contains("worktrees"), "{stdout}");

    let value = json_stdout(&repo.prove_it(&["run", "--json", "HEAD"]).assert().code(1));
    let log = std::path::PathBuf::from(value["log"].as_str().unwrap());
    assert!(log.is_file(), "{value}");
    assert_eq!(log, std::fs::canonicalize(&log).unwrap(), "{value}");
}

// The pre-push hook's `prove` printed the same path through its deleted
// temporary worktree.
#[test]
fn pre_push_prove_prints_a_log_path_that_exists() {
    let remote = crate::harness::BareRemote::new();
    let repo = TestRepo::with_commit();
    repo.git(&["remote", "add", "origin", remote.path.to_str().unwrap()]);
    repo.prove_it(&["install", "pre-push"]).assert().code(0);
    repo.git(&["config", "prove-it.prePush", "prove"]);
    repo.verify_fails(1);
    repo.commit_all("broken");
    let out = repo.git_output(&["push", "origin", "main"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let log = printed_log(&stderr);
    assert!(log.is_file(), "{}: {stderr}", log.display());
    assert_eq!(log, std::fs::canonicalize(&log).unwrap(), "{stderr}");
}

/// Two commits whose verify.sh is `script`, holding `same.txt` alike and `n.txt` as 1, then 2.
fn two_commits_of(repo: &TestRepo, script: &str) -> (String, String) {
    repo.write("same.txt", "unchanged\n");
    repo.verify_script(script);
    repo.write("n.txt", "1\n");
    let first = repo.commit_all("first");
    repo.write("n.txt", "2\n");
    (first, repo.commit_all("second"))
}

/// A commit worktree is kept for the next command: it moves to its commit writing only the
/// paths that differ (the unchanged file keeps its inode), and nothing an earlier command's
/// run left there reaches this one's, not even ignored files.
#[test]
fn the_next_command_moves_the_kept_worktree_and_finds_nothing_of_the_last() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen");
    repo.write(".gitignore", "cache/\n");
    let (first, second) = two_commits_of(
        &repo,
        &format!(
            "echo \"$(stat -c %i same.txt) $(cat n.txt) $(ls cache 2>/dev/null)\" >> '{}'\nmkdir -p cache && echo left > cache/left.txt",
            seen.display()
        ),
    );
    repo.prove_it(&["run", &first]).assert().code(0);
    repo.prove_it(&["run", &second]).assert().code(0);
    let seen = std::fs::read_to_string(&seen).unwrap();
    let runs: Vec<Vec<&str>> = seen.lines().map(|line| line.split(' ').collect()).collect();
    assert_eq!(runs.len(), 2, "{seen}");
    assert_eq!(
        runs[0][0], runs[1][0],
        "the kept worktree was written anew: {seen}"
    );
    assert_eq!([runs[0][1], runs[1][1]], ["1", "2"], "{seen}");
    assert!(
        runs[1].get(2).is_none_or(|left| left.is_empty()),
        "the first command's ignored cache reached the second's run: {seen}"
    );
    assert_eq!(leftovers(&repo), (0, 0));
}

/// The trap: the next command moves the kept worktree in place, writing only what differs
/// between the commits, so a tracked file that an earlier command's run changed, and that the
/// two commits hold alike, is not written by the move. The command's first reading trusts
/// nothing of the worktree and finds it; git writes it again before anything runs.
#[test]
fn a_tracked_file_an_earlier_command_changed_is_the_commits_again_in_the_next() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen");
    let (first, second) = two_commits_of(
        &repo,
        &format!(
            "cat same.txt >> '{}'\n[ \"$(cat n.txt)\" = 1 ] && echo tampered > same.txt\nexit 0",
            seen.display()
        ),
    );
    // The first run changed what it tested: nothing is proven there.
    repo.prove_it(&["run", &first])
        .assert()
        .code(predicate::ne(0));
    repo.prove_it(&["run", &second]).assert().code(0);
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        "unchanged\nunchanged\n"
    );
    assert_eq!(leftovers(&repo), (0, 0));
}

/// Two commands at once each take a slot of their own: neither moves the other's worktree
/// under its run.
#[test]
fn two_commands_at_once_each_take_their_own_kept_worktree() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen");
    repo.verify_script(&format!(
        "sleep 1\necho \"$(git rev-parse --git-dir) $(cat n.txt)\" >> '{}'",
        seen.display()
    ));
    repo.write("n.txt", "1\n");
    let first = repo.commit_all("first");
    repo.write("n.txt", "2\n");
    let second = repo.commit_all("second");
    let start = |rev: &str| {
        let mut command = repo.command(assert_cmd::cargo::cargo_bin("git-prove-it"));
        command
            .args(["run", rev])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        command.spawn().unwrap()
    };
    let (one, two) = (start(&first), start(&second));
    let (one, two) = (
        one.wait_with_output().unwrap(),
        two.wait_with_output().unwrap(),
    );
    assert!(
        one.status.success() && two.status.success(),
        "{one:?} {two:?}"
    );
    let seen = std::fs::read_to_string(&seen).unwrap();
    let mut runs: Vec<(&str, &str)> = seen
        .lines()
        .map(|line| line.split_once(' ').unwrap())
        .collect();
    runs.sort_by_key(|(_, n)| *n);
    assert_eq!(runs.len(), 2, "{seen}");
    assert_eq!([runs[0].1, runs[1].1], ["1", "2"], "{seen}");
    assert_ne!(runs[0].0, runs[1].0, "both ran in one worktree: {seen}");
    assert_eq!(leftovers(&repo), (0, 0));
}

/// A kept worktree damaged between commands (its `.git` file gone, files left) is made
/// again, and the commit is proven there.
#[test]
fn a_kept_worktree_damaged_between_commands_is_made_again() {
    let repo = TestRepo::with_commit();
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.prove_it(&["run", &head]).assert().code(0);
    let cache = repo.home().join(".cache/git-prove-it");
    let folder = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let slot = folder.join("worktrees/slot-0");
    std::fs::remove_file(slot.join(".git")).unwrap();
    std::fs::write(slot.join("planted.txt"), "not the commit's\n").unwrap();
    repo.prove_it(&["run", &head, "--force"]).assert().code(0);
    assert!(
        slot.join(".git").is_file(),
        "the worktree was not made again"
    );
    assert!(!slot.join("planted.txt").exists());
    assert_eq!(leftovers(&repo), (0, 0));
}
