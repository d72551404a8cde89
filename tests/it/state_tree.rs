//! The state tree must equal what stock git stages: `cp -p index tmp; GIT_INDEX_FILE=tmp git add
//! -A; git write-tree`. Each test shapes a real repository and compares both, and a seeded random
//! differential test looks for the cases nobody thought of.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::harness::{TestRepo, with_submodule};

const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The mode git recorded for `path` in `tree`, or `None` if the tree has no such path.
fn mode_in(repo: &TestRepo, tree: &str, path: &str) -> Option<String> {
    let out = repo.git(&["ls-tree", tree, "--", path]);
    out.split_whitespace().next().map(str::to_string)
}

fn head_tree(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string()
}

/// Compare with stock git, and check that our side left the user's index exactly as it was:
/// a stat refresh written back would race with the agent's own git.
#[track_caller]
fn assert_matches_git_leaving_index_alone(repo: &TestRepo) -> String {
    let index = repo.path(".git/index");
    let read = || {
        let bytes = std::fs::read(&index).ok();
        let mtime = std::fs::metadata(&index).and_then(|m| m.modified()).ok();
        (bytes, mtime)
    };
    let before = read();
    let tree = repo.assert_state_tree_matches_git();
    assert!(before == read(), "the real index changed");
    assert!(
        !repo.path(".git/index.lock").exists(),
        "an index.lock was left behind"
    );
    tree
}

fn write_os(repo: &TestRepo, name: &[u8], content: &str) {
    repo.write_bytes(Path::new(OsStr::from_bytes(name)), content.as_bytes());
}

fn set_mtime_of(path: &Path, time: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

fn set_mtime(repo: &TestRepo, rel: &str, time: SystemTime) {
    set_mtime_of(&repo.path(rel), time);
}

/// git in a directory of the test's repository, with the test's environment.
fn git_in(repo: &TestRepo, dir: &Path, args: &[&str]) -> String {
    let out = repo
        .command("git")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn clean_checkout_is_heads_tree() {
    let repo = TestRepo::with_commit();
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(tree, head_tree(&repo));
}

#[test]
fn modified_file() {
    let repo = TestRepo::with_commit();
    repo.write("a.txt", "changed\n");
    assert_matches_git_leaving_index_alone(&repo);
}

#[test]
fn deleted_file() {
    let repo = TestRepo::with_commit();
    repo.remove("a.txt");
    assert_matches_git_leaving_index_alone(&repo);
}

#[test]
fn untracked_file() {
    let repo = TestRepo::with_commit();
    repo.write("new.txt", "new\n");
    assert_matches_git_leaving_index_alone(&repo);
}

#[test]
fn untracked_file_in_new_nested_dirs() {
    let repo = TestRepo::with_commit();
    repo.write("x/y/z/new.txt", "deep\n");
    repo.write("x/other.txt", "shallow\n");
    assert_matches_git_leaving_index_alone(&repo);
}

// Ignored files must not change the state tree, whichever exclude source ignores them.
#[test]
fn ignored_files_are_not_counted() {
    let repo = TestRepo::with_commit();
    repo.write(".gitignore", "*.log\nbuild/\n");
    repo.commit_all("ignore");
    let clean = assert_matches_git_leaving_index_alone(&repo);
    repo.write("debug.log", "noise\n");
    repo.write("build/out.bin", "binary\n");
    repo.write("deep/er/trace.log", "noise\n");
    repo.write(".git/info/exclude", "secret*\n");
    repo.write("secret.txt", "hush\n");
    repo.write("sub/secret-too", "hush\n");
    assert_eq!(assert_matches_git_leaving_index_alone(&repo), clean);
}

// A tracked file that matches .gitignore is still tracked, and its changes count.
#[test]
fn tracked_file_matching_gitignore_still_counts() {
    let repo = TestRepo::with_commit();
    repo.write(".gitignore", "a.txt\n");
    repo.commit_all("ignore a tracked file");
    repo.write("a.txt", "still tracked\n");
    let tree = repo.assert_state_tree_matches_git();
    assert_ne!(tree, head_tree(&repo));
}

#[test]
fn exec_bit_added_and_removed() {
    let repo = TestRepo::with_commit();
    repo.chmod("a.txt", 0o755);
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "a.txt").as_deref(), Some("100755"));
    repo.chmod("a.txt", 0o644);
    repo.chmod("verify.sh", 0o644);
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(
        mode_in(&repo, &tree, "verify.sh").as_deref(),
        Some("100644")
    );
}

// Git looks at the owner's execute bit only: group-executable is not executable.
#[test]
fn group_exec_only_on_tracked_plain_file_stays_plain() {
    let repo = TestRepo::with_commit();
    repo.chmod("a.txt", 0o654);
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(tree, head_tree(&repo));
}

// Git looks at the owner's execute bit only: a 100755 file chmod'ed 654 becomes 100644.
#[test]
fn group_exec_only_on_tracked_executable_becomes_plain() {
    let repo = TestRepo::with_commit();
    repo.chmod("verify.sh", 0o654);
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(
        mode_in(&repo, &tree, "verify.sh").as_deref(),
        Some("100644")
    );
}

#[test]
fn group_exec_only_on_untracked_file_is_plain() {
    let repo = TestRepo::with_commit();
    repo.write("tool.sh", "#!/bin/sh\n");
    repo.chmod("tool.sh", 0o654);
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "tool.sh").as_deref(), Some("100644"));
}

#[test]
fn symlink_added() {
    let repo = TestRepo::with_commit();
    repo.symlink("a.txt", "link");
    repo.symlink("does/not/exist", "dangling");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "link").as_deref(), Some("120000"));
}

#[test]
fn symlink_retargeted() {
    let repo = TestRepo::with_commit();
    repo.symlink("a.txt", "link");
    repo.commit_all("link");
    repo.remove("link");
    repo.symlink("verify.sh", "link");
    assert_matches_git_leaving_index_alone(&repo);
}

// Same target length, same second: only the target bytes tell the two links apart.
#[test]
fn symlink_retargeted_to_same_length_target() {
    let repo = TestRepo::with_commit();
    repo.write("b.txt", "b\n");
    repo.symlink("a.txt", "link");
    repo.git(&["add", "-A"]);
    repo.remove("link");
    repo.symlink("b.txt", "link");
    assert_matches_git_leaving_index_alone(&repo);
}

#[test]
fn file_replaced_by_symlink() {
    let repo = TestRepo::with_commit();
    repo.remove("a.txt");
    repo.symlink("verify.sh", "a.txt");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "a.txt").as_deref(), Some("120000"));
}

#[test]
fn symlink_replaced_by_file() {
    let repo = TestRepo::with_commit();
    repo.symlink("a.txt", "link");
    repo.commit_all("link");
    repo.remove("link");
    repo.write("link", "a.txt");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "link").as_deref(), Some("100644"));
}

#[test]
fn tracked_file_replaced_by_directory() {
    let repo = TestRepo::with_commit();
    repo.remove("a.txt");
    repo.write("a.txt/inner.txt", "inner\n");
    repo.write("a.txt/deeper/more.txt", "more\n");
    assert_matches_git_leaving_index_alone(&repo);
}

#[test]
fn directory_replaced_by_file() {
    let repo = TestRepo::with_commit();
    repo.write("dir/x.txt", "x\n");
    repo.write("dir/sub/y.txt", "y\n");
    repo.commit_all("dir");
    repo.remove("dir");
    repo.write("dir", "now a file\n");
    assert_matches_git_leaving_index_alone(&repo);
}

// Git never follows a symlink to reach a tracked path: the files behind it count as deleted,
// and the link itself is a new symlink.
#[test]
fn leading_directory_replaced_by_symlink_deletes_its_paths() {
    let repo = TestRepo::with_commit();
    repo.write("dir/x.txt", "x\n");
    repo.write("dir/sub/y.txt", "y\n");
    repo.commit_all("dir");
    std::fs::rename(repo.path("dir"), repo.path("elsewhere")).unwrap();
    repo.symlink("elsewhere", "dir");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "dir").as_deref(), Some("120000"));
    assert_eq!(mode_in(&repo, &tree, "dir/x.txt"), None);
}

// Same as above with the link pointing outside the worktree, so no untracked copy hides a miss.
#[test]
fn leading_directory_replaced_by_symlink_outside_worktree() {
    let repo = TestRepo::with_commit();
    repo.write("dir/x.txt", "x\n");
    repo.commit_all("dir");
    let outside = repo.home().join("outside");
    std::fs::rename(repo.path("dir"), &outside).unwrap();
    repo.symlink(outside.to_str().unwrap(), "dir");
    assert_matches_git_leaving_index_alone(&repo);
}

#[test]
fn awkward_file_names() {
    let repo = TestRepo::with_commit();
    let names: &[&[u8]] = &[
        b"with space.txt",
        b"new\nline",
        b"tab\there",
        b"\"double\" and 'single'",
        b"back\\slash",
        b"latin1-\xe9t\xe9",
        b"dir \xff/inner \x80.txt",
        b"-leading-dash",
        b"unicode-\xc3\xa9\xe2\x9c\x93",
    ];
    for name in &names[..5] {
        write_os(&repo, name, "tracked\n");
    }
    repo.commit_all("awkward tracked names");
    for name in &names[..3] {
        write_os(&repo, name, "modified\n");
    }
    for name in &names[5..] {
        write_os(&repo, name, "untracked\n");
    }
    assert_matches_git_leaving_index_alone(&repo);
    repo.commit_all("all awkward names");
    std::fs::remove_file(repo.root.join(OsStr::from_bytes(names[6]))).unwrap();
    write_os(&repo, names[5], "changed again\n");
    assert_matches_git_leaving_index_alone(&repo);
}

#[test]
fn empty_files() {
    let repo = TestRepo::with_commit();
    repo.write("empty-tracked", "");
    repo.commit_all("empty");
    repo.write("empty-new", "");
    repo.write("a.txt", "");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(
        mode_in(&repo, &tree, "empty-new").as_deref(),
        Some("100644")
    );
}

// Only stat data changed: the tree must not.
#[test]
fn touched_file_with_same_content_is_unchanged() {
    let repo = TestRepo::with_commit();
    set_mtime(
        &repo,
        "a.txt",
        SystemTime::now() + Duration::from_secs(3600),
    );
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(tree, head_tree(&repo));
}

// Racy git: a rewrite in the same second with the same size leaves stat data that looks clean.
#[test]
fn racy_rewrite_same_second_same_size() {
    let repo = TestRepo::with_commit();
    repo.write("racy.txt", "aaaa\n");
    repo.git(&["add", "racy.txt"]);
    repo.write("racy.txt", "bbbb\n");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    repo.git(&["add", "racy.txt"]);
    assert_eq!(repo.git(&["write-tree"]).trim(), tree);
}

/// Stage `aaaa` at `racy.txt` with its mtime at `file_at`, stamp the index `index_at`, then
/// rewrite it to `bbbb` (same size) with the mtime pinned just after `file_at` in the same
/// second. git is told not to look at ctime, which always moves on a rewrite; the state tree
/// looks at it anyway.
fn same_second_rewrite(file_at: SystemTime, index_at: SystemTime) -> TestRepo {
    let repo = TestRepo::with_commit();
    repo.git(&["config", "core.trustctime", "false"]);
    repo.write("racy.txt", "aaaa\n");
    set_mtime(&repo, "racy.txt", file_at);
    repo.git(&["add", "racy.txt"]);
    set_mtime(&repo, ".git/index", index_at);
    // Past the kernel's coarse timestamp tick, so the rewrite's ctime differs from the add's.
    std::thread::sleep(Duration::from_millis(20));
    repo.write("racy.txt", "bbbb\n");
    set_mtime(&repo, "racy.txt", file_at + Duration::from_millis(100));
    repo
}

// Racy git: the index was written in the same second as the file, so its stat data cannot
// vouch for the content, and the rewrite must be seen.
#[test]
fn racy_rewrite_with_identical_stat_data() {
    let second = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let repo = same_second_rewrite(
        second + Duration::from_millis(100),
        second + Duration::from_millis(700),
    );
    let tree = assert_matches_git_leaving_index_alone(&repo);
    let blob = repo.git(&["ls-tree", &tree, "--", "racy.txt"]);
    let bbbb = repo.git(&["hash-object", "racy.txt"]);
    assert!(blob.contains(bbbb.trim()), "{blob}");
}

// The other side of racy git: with the index a second newer and core.trustctime=false, git
// trusts the whole-second stat data and keeps the stale blob. A same-size edit with its mtime
// set back would hide a change that way, so the state tree compares ctime whatever
// core.trustctime says, and sees the rewrite where git does not (SPEC.md, the state tree).
#[test]
fn same_second_rewrite_behind_a_newer_index_is_seen_by_its_ctime() {
    let second = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let repo = same_second_rewrite(
        second + Duration::from_millis(100),
        second + Duration::from_millis(1_700),
    );
    let stock = repo.stock_state_tree().unwrap();
    let aaaa = repo.git(&["rev-parse", ":racy.txt"]);
    assert!(
        repo.git(&["ls-tree", &stock, "--", "racy.txt"])
            .contains(aaaa.trim()),
        "stock git no longer keeps the stale blob here"
    );
    let ours = repo.our_state_tree().unwrap();
    assert_ne!(ours, stock);
    // Ours is the tree with the rewritten content staged.
    let bbbb = repo.git(&["hash-object", "-w", "racy.txt"]);
    repo.git(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{},racy.txt", bbbb.trim()),
    ]);
    assert_eq!(repo.git(&["write-tree"]).trim(), ours);
}

// Git reads a .gitattributes that is a directory as empty; gix fell back to the index's copy
// and applied a clean filter git does not.
#[test]
fn gitattributes_turned_into_a_directory() {
    let repo = TestRepo::with_commit();
    repo.write(".gitattributes", "*.x text eol=crlf\n");
    repo.write("f.x", "x\r\ny\r\n");
    repo.commit_all("attributes");
    repo.remove(".gitattributes");
    repo.write(".gitattributes/inner", "inner\n");
    set_mtime(&repo, "f.x", SystemTime::now() + Duration::from_secs(3600));
    repo.assert_state_tree_matches_git();
}

#[test]
fn intent_to_add_entries() {
    let repo = TestRepo::with_commit();
    repo.write("planned.txt", "planned\n");
    repo.write("planned-then-gone.txt", "gone\n");
    repo.write("planned-exec.sh", "#!/bin/sh\n");
    repo.chmod("planned-exec.sh", 0o755);
    repo.git(&[
        "add",
        "-N",
        "planned.txt",
        "planned-then-gone.txt",
        "planned-exec.sh",
    ]);
    repo.remove("planned-then-gone.txt");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(
        mode_in(&repo, &tree, "planned-exec.sh").as_deref(),
        Some("100755")
    );
}

// A submodule is recorded by the commit it has checked out, not by its files.
#[test]
fn submodule_records_checked_out_commit() {
    let (repo, _source) = with_submodule();
    let clean = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(clean, head_tree(&repo));
    let sub = repo.path("sub");
    git_in(
        &repo,
        &sub,
        &["commit", "-q", "--allow-empty", "-m", "moved"],
    );
    let moved = git_in(&repo, &sub, &["rev-parse", "HEAD"]);
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_ne!(tree, clean);
    let entry = repo.git(&["ls-tree", &tree, "--", "sub"]);
    assert!(
        entry.starts_with(&format!("160000 commit {}", moved.trim())),
        "{entry}"
    );
}

// Uncommitted changes inside a submodule are not part of the superproject's state.
#[test]
fn submodule_worktree_changes_are_not_counted() {
    let (repo, _source) = with_submodule();
    repo.write("sub/a.txt", "dirty inside the submodule\n");
    repo.write("sub/untracked.txt", "new inside the submodule\n");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(tree, head_tree(&repo));
}

// An emptied (deinitialised) submodule directory keeps its gitlink; a removed one is deleted.
#[test]
fn submodule_deinitialised_or_removed() {
    let (repo, _source) = with_submodule();
    repo.git(&["submodule", "deinit", "-q", "-f", "sub"]);
    assert_eq!(
        assert_matches_git_leaving_index_alone(&repo),
        head_tree(&repo)
    );
    std::fs::remove_dir(repo.path("sub")).unwrap();
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "sub"), None);
}

/// A repository with one commit at `rel` inside `repo`, not added to it; its HEAD.
fn nested_repository(repo: &TestRepo, rel: &str) -> String {
    let nested = repo.path(rel);
    std::fs::create_dir_all(&nested).unwrap();
    git_in(repo, &nested, &["init", "-q", "-b", "main"]);
    repo.write(&format!("{rel}/file.txt"), "inside\n");
    git_in(repo, &nested, &["add", "-A"]);
    git_in(repo, &nested, &["commit", "-q", "-m", "nested"]);
    git_in(repo, &nested, &["rev-parse", "HEAD"])
        .trim()
        .to_string()
}

// A submodule whose directory became a file is a file again, not a deletion.
#[test]
fn submodule_replaced_by_a_file() {
    let (repo, _source) = with_submodule();
    repo.remove("sub");
    repo.write("sub", "a file now\n");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "sub").as_deref(), Some("100644"));
}

#[test]
fn submodule_replaced_by_a_symlink() {
    let (repo, _source) = with_submodule();
    repo.remove("sub");
    repo.symlink("a.txt", "sub");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "sub").as_deref(), Some("120000"));
}

#[test]
fn submodule_replaced_by_a_plain_directory() {
    let (repo, _source) = with_submodule();
    repo.remove("sub");
    repo.write("sub/plain.txt", "no repository here\n");
    assert_matches_git_leaving_index_alone(&repo);
}

#[test]
fn submodule_replaced_by_another_repository() {
    let (repo, _source) = with_submodule();
    repo.remove("sub");
    let head = nested_repository(&repo, "sub");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert!(repo.git(&["ls-tree", &tree, "--", "sub"]).contains(&head));
}

#[test]
fn tracked_file_replaced_by_a_nested_repository() {
    let repo = TestRepo::with_commit();
    repo.remove("a.txt");
    let head = nested_repository(&repo, "a.txt");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert!(repo.git(&["ls-tree", &tree, "--", "a.txt"]).contains(&head));
}

// Git counts the file as deleted and then refuses the repository in its place.
#[test]
fn tracked_file_replaced_by_a_repository_without_commit_is_refused() {
    let repo = TestRepo::with_commit();
    repo.remove("a.txt");
    git_in(&repo, &repo.root, &["init", "-q", "a.txt"]);
    assert!(repo.stock_state_tree().is_err());
    repo.assert_state_tree_matches_git();
}

// Like a submodule that is not checked out, it keeps the recorded commit.
#[test]
fn submodule_replaced_by_a_repository_without_commit() {
    let (repo, _source) = with_submodule();
    repo.remove("sub");
    git_in(&repo, &repo.root, &["init", "-q", "sub"]);
    assert_eq!(
        assert_matches_git_leaving_index_alone(&repo),
        head_tree(&repo)
    );
}

#[test]
fn untracked_nested_repository_with_commit_is_a_gitlink() {
    let repo = TestRepo::with_commit();
    let nested = repo.path("nested");
    std::fs::create_dir(&nested).unwrap();
    git_in(&repo, &nested, &["init", "-q", "-b", "main"]);
    repo.write("nested/file.txt", "inside\n");
    git_in(&repo, &nested, &["add", "-A"]);
    git_in(&repo, &nested, &["commit", "-q", "-m", "nested"]);
    let head = git_in(&repo, &nested, &["rev-parse", "HEAD"]);
    let tree = assert_matches_git_leaving_index_alone(&repo);
    let entry = repo.git(&["ls-tree", &tree, "--", "nested"]);
    assert!(
        entry.starts_with(&format!("160000 commit {}", head.trim())),
        "{entry}"
    );
}

// Git refuses to add a nested repository that has no commit; so must we, naming the path.
#[test]
fn untracked_nested_repository_without_commit_is_refused() {
    let repo = TestRepo::with_commit();
    let nested = repo.path("deep/nested");
    std::fs::create_dir_all(&nested).unwrap();
    git_in(&repo, &nested, &["init", "-q", "-b", "main"]);
    repo.write("deep/nested/file.txt", "inside\n");
    let stock = repo.stock_state_tree();
    assert!(stock.is_err(), "git accepted it: {stock:?}");
    let out = repo.prove_it(&["status", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("deep/nested"), "{stderr}");
    assert!(!repo.path(".git/index.lock").exists());
}

// An ignored nested repository is never looked at, commits or not.
#[test]
fn ignored_nested_repository_without_commit_is_fine() {
    let repo = TestRepo::with_commit();
    repo.write(".gitignore", "vendor/\n");
    let nested = repo.path("vendor/nested");
    std::fs::create_dir_all(&nested).unwrap();
    git_in(&repo, &nested, &["init", "-q", "-b", "main"]);
    assert!(repo.assert_state_tree_matches_git().len() == 40);
}

fn with_two_dirs() -> TestRepo {
    let repo = TestRepo::with_commit();
    repo.write("dir1/one.txt", "one\n");
    repo.write("dir1/deep/two.txt", "two\n");
    repo.write("dir2/three.txt", "three\n");
    repo.write("dir2/deep/four.txt", "four\n");
    repo.commit_all("two dirs");
    repo
}

// Paths outside the sparse cone are absent from disk but still part of the state.
#[test]
fn sparse_checkout_cone() {
    let repo = with_two_dirs();
    repo.git(&["sparse-checkout", "set", "--cone", "dir1"]);
    assert!(!repo.path("dir2").exists());
    assert_eq!(
        assert_matches_git_leaving_index_alone(&repo),
        head_tree(&repo)
    );
    repo.write("dir1/one.txt", "changed\n");
    repo.write("dir1/new.txt", "new\n");
    repo.write("top.txt", "top\n");
    assert_matches_git_leaving_index_alone(&repo);
}

// A sparse index stores dir2 as one "dir2/" tree entry.
#[test]
fn sparse_index_directory_entries() {
    let repo = with_two_dirs();
    repo.git(&["sparse-checkout", "init", "--cone", "--sparse-index"]);
    repo.git(&["sparse-checkout", "set", "dir1"]);
    assert!(!repo.path("dir2").exists());
    let ls = repo.git(&["ls-files", "--sparse", "-s"]);
    assert!(ls.contains("dir2/"), "not a sparse index: {ls}");
    assert_eq!(
        assert_matches_git_leaving_index_alone(&repo),
        head_tree(&repo)
    );
    repo.write("dir1/one.txt", "changed\n");
    repo.write("dir1/deep/new.txt", "new\n");
    repo.remove("a.txt");
    assert_matches_git_leaving_index_alone(&repo);
}

/// A merge of `side` into main left a.txt conflicted, with markers on disk.
fn with_conflict() -> TestRepo {
    let repo = TestRepo::with_commit();
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("a.txt", "side\n");
    repo.write("b.txt", "side only\n");
    repo.commit_all("side");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a.txt", "main\n");
    repo.commit_all("main");
    let merge = repo.git_output(&["merge", "-q", "side"]);
    assert!(!merge.status.success(), "the merge did not conflict");
    assert!(repo.git(&["ls-files", "-u"]).contains("a.txt"));
    repo
}

#[test]
fn conflict_left_with_markers() {
    let repo = with_conflict();
    assert_matches_git_leaving_index_alone(&repo);
}

#[test]
fn conflict_resolved_by_deleting() {
    let repo = with_conflict();
    repo.remove("a.txt");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "a.txt"), None);
}

// A conflict with no stage 2 ("deleted by us") is missed by gix's directory walk lookup, which
// then reported the file as untracked too: the tree held the path twice.
#[test]
fn conflict_deleted_on_our_side_is_not_also_untracked() {
    let repo = TestRepo::with_commit();
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("a.txt", "side\n");
    repo.write("both.txt", "added on side\n");
    repo.commit_all("side");
    repo.git(&["checkout", "-q", "main"]);
    repo.remove("a.txt");
    repo.write("both.txt", "added on main\n");
    repo.commit_all("main deletes");
    let merge = repo.git_output(&["merge", "-q", "side"]);
    assert!(!merge.status.success(), "the merge did not conflict");
    let unmerged = repo.git(&["ls-files", "-u"]);
    assert!(unmerged.contains(" 3\ta.txt") && !unmerged.contains(" 2\ta.txt"));
    assert_matches_git_leaving_index_alone(&repo);
}

// A modify/delete conflict has no stage 2 when we deleted: git falls back on stage 1's mode.
#[test]
fn conflict_modify_delete_with_filemode_false() {
    let repo = TestRepo::with_commit();
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("verify.sh", "#!/bin/sh\necho side\n");
    repo.commit_all("side");
    repo.git(&["checkout", "-q", "main"]);
    repo.remove("verify.sh");
    repo.commit_all("main deletes");
    let merge = repo.git_output(&["merge", "-q", "side"]);
    assert!(!merge.status.success(), "the merge did not conflict");
    repo.git(&["config", "core.fileMode", "false"]);
    repo.chmod("verify.sh", 0o644);
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(
        mode_in(&repo, &tree, "verify.sh").as_deref(),
        Some("100755")
    );
}

// With core.fileMode=false the index, not the disk, says what is executable.
#[test]
fn core_filemode_false() {
    let repo = TestRepo::with_commit();
    repo.git(&["config", "core.fileMode", "false"]);
    repo.chmod("a.txt", 0o755);
    repo.chmod("verify.sh", 0o644);
    repo.write("new.sh", "#!/bin/sh\n");
    repo.chmod("new.sh", 0o755);
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(mode_in(&repo, &tree, "a.txt").as_deref(), Some("100644"));
    assert_eq!(
        mode_in(&repo, &tree, "verify.sh").as_deref(),
        Some("100755")
    );
    assert_eq!(mode_in(&repo, &tree, "new.sh").as_deref(), Some("100644"));
}

// The clean filter turns CRLF into LF before hashing.
#[test]
fn autocrlf_true_crlf_file() {
    let repo = TestRepo::with_commit();
    repo.git(&["config", "core.autocrlf", "true"]);
    repo.write("crlf.txt", "one\r\ntwo\r\n");
    repo.write("a.txt", "a\r\n");
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(tree, {
        repo.git(&["add", "-A"]);
        repo.git(&["write-tree"]).trim().to_string()
    });
}

#[test]
fn gitattributes_text_auto_crlf_file() {
    let repo = TestRepo::with_commit();
    repo.write(".gitattributes", "* text=auto\n");
    repo.write("crlf.txt", "one\r\ntwo\r\n");
    repo.write("binary.bin", "bin\0ary\r\n");
    assert_matches_git_leaving_index_alone(&repo);
    repo.commit_all("attributes");
    repo.write("crlf.txt", "one\r\ntwo\r\nthree\r\n");
    assert_matches_git_leaving_index_alone(&repo);
}

// `ident` collapses an expanded $Id$ back before hashing.
#[test]
fn gitattributes_ident() {
    let repo = TestRepo::with_commit();
    repo.write(".gitattributes", "*.c ident\n");
    repo.write("x.c", "/* $Id$ */\n");
    repo.commit_all("ident");
    repo.remove("x.c");
    repo.git(&["checkout", "--", "x.c"]);
    let on_disk = std::fs::read_to_string(repo.path("x.c")).unwrap();
    assert!(on_disk.contains("$Id: "), "not expanded: {on_disk}");
    assert_eq!(
        assert_matches_git_leaving_index_alone(&repo),
        head_tree(&repo)
    );
    repo.write(
        "y.c",
        "/* $Id: 0123456789012345678901234567890123456789 $ */\n",
    );
    assert_matches_git_leaving_index_alone(&repo);
}

// `git add -A` stages the deletion of .gitattributes before hashing what sorts after it, so
// its rules no longer apply; gix fell back to the index's copy and still normalised CRLF.
#[test]
fn deleted_gitattributes_no_longer_filters() {
    let repo = TestRepo::with_commit();
    repo.write(".gitattributes", "*.x text eol=crlf\n");
    repo.write("old.x", "x\r\ny\r\n");
    repo.commit_all("attributes");
    repo.remove(".gitattributes");
    repo.write("new.x", "x\r\ny\r\n");
    set_mtime(
        &repo,
        "old.x",
        SystemTime::now() + Duration::from_secs(3600),
    );
    assert_matches_git_leaving_index_alone(&repo);
}

// A .gitattributes left off disk by a sparse checkout still applies: git reads the index's copy.
#[test]
fn sparse_gitattributes_off_disk_still_filters() {
    let repo = TestRepo::with_commit();
    repo.write(".gitattributes", "*.x text eol=crlf\n");
    repo.write("dir1/old.x", "x\r\ny\r\n");
    repo.commit_all("attributes");
    repo.git(&["sparse-checkout", "set", "--no-cone", "/dir1/"]);
    assert!(!repo.path(".gitattributes").exists());
    repo.write("dir1/new.x", "x\r\ny\r\n");
    set_mtime(
        &repo,
        "dir1/old.x",
        SystemTime::now() + Duration::from_secs(3600),
    );
    let tree = assert_matches_git_leaving_index_alone(&repo);
    assert_eq!(
        repo.git(&["rev-parse", &format!("{tree}:dir1/new.x")]),
        repo.git(&["rev-parse", "HEAD:dir1/old.x"]),
    );
}

#[test]
fn unborn_head_with_untracked_files_only() {
    let repo = TestRepo::new();
    repo.write("one.txt", "one\n");
    repo.write("dir/two.txt", "two\n");
    assert_matches_git_leaving_index_alone(&repo);
}

#[test]
fn empty_repository_is_the_empty_tree() {
    let repo = TestRepo::new();
    // No index, so the harness's own comparison is exact here (see `stock_state_tree`).
    assert_eq!(repo.assert_state_tree_matches_git(), EMPTY_TREE);
    assert!(!repo.path(".git/index").exists());
    assert!(!repo.path(".git/index.lock").exists());
}

#[test]
fn deleted_then_recreated_with_same_size_content() {
    let repo = TestRepo::with_commit();
    repo.remove("a.txt");
    repo.write("a.txt", "b\n");
    assert_matches_git_leaving_index_alone(&repo);
}

// Someone else's index.lock must not stop us, and we must not take or remove it.
#[test]
fn index_lock_held_by_someone_else() {
    let repo = TestRepo::with_commit();
    repo.write("a.txt", "changed\n");
    repo.write("new.txt", "new\n");
    let lock = repo.path(".git/index.lock");
    std::fs::write(&lock, b"held").unwrap();
    let index = std::fs::read(repo.path(".git/index")).unwrap();
    let ours = repo
        .our_state_tree()
        .expect("status works under a held lock");
    assert_eq!(std::fs::read(&lock).unwrap(), b"held");
    assert_eq!(std::fs::read(repo.path(".git/index")).unwrap(), index);
    std::fs::remove_file(&lock).unwrap();
    assert_eq!(Ok(ours), repo.stock_state_tree());
}

/// A tiny xorshift generator: reproducible scenarios without a new crate.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| &items[self.below(items.len())])
    }
}

/// Few names and shallow depth, so paths collide and files clash with directories.
const NAMES: &[&str] = &["a", "b", "c d", "e.x"];
const CONTENTS: &[&str] = &["", "one\n", "two\n", "three\n", "x\r\ny\r\n", "#!/bin/sh\n"];
const IGNORES: &[&str] = &["a", "*.x", "b/", "/c d", "!a", "e.*", "c d/a"];
const ATTRIBUTES: &[&str] = &[
    "* text=auto",
    "*.x text eol=crlf",
    "a -text",
    "* ident",
    "b text",
];
const CONFIGS: &[(&str, &str)] = &[
    ("core.fileMode", "false"),
    ("core.symlinks", "false"),
    ("core.autocrlf", "true"),
    ("core.autocrlf", "input"),
];

fn random_path(rng: &mut Rng) -> String {
    let depth = 1 + rng.below(3);
    (0..depth)
        .map(|_| *rng.pick(NAMES).unwrap())
        .collect::<Vec<_>>()
        .join("/")
}

/// Every file, symlink and directory in the worktree outside any `.git`, without following
/// links.
fn worktree_entries(root: &Path) -> (Vec<String>, Vec<String>) {
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        let mut names: Vec<_> = std::fs::read_dir(root.join(&dir))
            .unwrap()
            .map(|e| e.unwrap())
            .collect();
        names.sort_by_key(std::fs::DirEntry::file_name);
        for entry in names {
            let name = entry.file_name().into_string().unwrap();
            if name == ".git" {
                continue;
            }
            let rel = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            if entry.file_type().unwrap().is_dir() {
                dirs.push(rel.clone());
                stack.push(rel);
            } else {
                files.push(rel);
            }
        }
    }
    (files, dirs)
}

/// Write `content` at `rel` if nothing is in the way: no file or link among its parents and
/// no directory at the path itself.
fn place_file(root: &Path, rel: &str, content: &str) -> bool {
    let path = root.join(rel);
    let mut parent = path.parent();
    while let Some(dir) = parent {
        if dir == root {
            break;
        }
        if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir()) {
            return false;
        }
        parent = dir.parent();
    }
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    if std::fs::symlink_metadata(&path).is_ok() {
        std::fs::remove_file(&path).unwrap();
    }
    std::fs::write(&path, content).unwrap();
    true
}

/// One random change to the worktree (or, rarely, the index), described for the failure report.
fn random_operation(repo: &TestRepo, rng: &mut Rng) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let root = &repo.root;
    let (files, dirs) = worktree_entries(root);
    let regular: Vec<String> = files
        .iter()
        .filter(|f| !repo.path(f).is_symlink())
        .cloned()
        .collect();
    match rng.below(16) {
        0 | 1 => {
            let file = rng.pick(&regular)?;
            let content = *rng.pick(CONTENTS).unwrap();
            std::fs::write(repo.path(file), content).unwrap();
            Some(format!("modify {file:?} to {content:?}"))
        }
        2 => {
            let file = rng.pick(&files)?;
            std::fs::remove_file(repo.path(file)).unwrap();
            Some(format!("delete {file:?}"))
        }
        3 => {
            let dir = rng.pick(&dirs)?;
            std::fs::remove_dir_all(repo.path(dir)).unwrap();
            Some(format!("delete dir {dir:?}"))
        }
        4 | 5 => {
            let path = random_path(rng);
            let content = *rng.pick(CONTENTS).unwrap();
            place_file(root, &path, content).then(|| format!("write {path:?} {content:?}"))
        }
        6 => {
            let file = rng.pick(&regular)?;
            let mode = *rng.pick(&[0o755, 0o644, 0o654, 0o744, 0o611]).unwrap();
            std::fs::set_permissions(repo.path(file), std::fs::Permissions::from_mode(mode))
                .unwrap();
            Some(format!("chmod {mode:o} {file:?}"))
        }
        7 => {
            let path = random_path(rng);
            let target = if rng.below(3) == 0 {
                "nowhere".to_string()
            } else {
                let mut candidates = files.clone();
                candidates.extend(dirs.iter().cloned());
                rng.pick(&candidates)?.clone()
            };
            if !place_file(root, &path, "") {
                return None;
            }
            std::fs::remove_file(repo.path(&path)).unwrap();
            // Relative to the link's own directory, so links into directories resolve.
            let up = "../".repeat(path.matches('/').count());
            std::os::unix::fs::symlink(format!("{up}{target}"), repo.path(&path)).unwrap();
            Some(format!("symlink {path:?} -> {up}{target}"))
        }
        8 => {
            let dir = if rng.below(2) == 0 {
                String::new()
            } else {
                rng.pick(&dirs)?.clone()
            };
            let gitignore = if dir.is_empty() {
                ".gitignore".to_string()
            } else {
                format!("{dir}/.gitignore")
            };
            let pattern = *rng.pick(IGNORES).unwrap();
            let mut text = std::fs::read_to_string(repo.path(&gitignore)).unwrap_or_default();
            text.push_str(pattern);
            text.push('\n');
            // A rename or file-to-dir step may have made .gitignore a directory.
            std::fs::write(repo.path(&gitignore), text).ok()?;
            Some(format!("ignore {pattern:?} in {gitignore:?}"))
        }
        9 => {
            let file = rng.pick(&files)?;
            let inner = *rng.pick(NAMES).unwrap();
            std::fs::remove_file(repo.path(file)).unwrap();
            std::fs::create_dir(repo.path(file)).unwrap();
            std::fs::write(repo.path(&format!("{file}/{inner}")), "inner\n").unwrap();
            Some(format!("replace {file:?} by a dir holding {inner:?}"))
        }
        10 => {
            let dir = rng.pick(&dirs)?;
            std::fs::remove_dir_all(repo.path(dir)).unwrap();
            std::fs::write(repo.path(dir), "was a dir\n").unwrap();
            Some(format!("replace dir {dir:?} by a file"))
        }
        11 => {
            let file = rng.pick(&files)?;
            let to = random_path(rng);
            if !place_file(root, &to, "") {
                return None;
            }
            std::fs::rename(repo.path(file), repo.path(&to)).ok()?;
            Some(format!("rename {file:?} to {to:?}"))
        }
        12 => {
            let line = *rng.pick(ATTRIBUTES).unwrap();
            let mut text = std::fs::read_to_string(repo.path(".gitattributes")).unwrap_or_default();
            text.push_str(line);
            text.push('\n');
            std::fs::write(repo.path(".gitattributes"), text).ok()?;
            Some(format!("attribute {line:?}"))
        }
        13 => {
            let dir = rng.pick(&dirs)?;
            let moved = format!("{dir}.moved");
            if std::fs::symlink_metadata(repo.path(&moved)).is_ok() {
                return None;
            }
            std::fs::rename(repo.path(dir), repo.path(&moved)).unwrap();
            let name = Path::new(&moved).file_name().unwrap().to_str().unwrap();
            std::os::unix::fs::symlink(name, repo.path(dir)).unwrap();
            Some(format!("replace dir {dir:?} by a symlink to {moved:?}"))
        }
        14 => {
            let path = random_path(rng);
            if !place_file(root, &path, "") {
                return None;
            }
            std::fs::remove_file(repo.path(&path)).unwrap();
            let commit = rng.below(3) != 0;
            if commit {
                nested_repository(repo, &path);
            } else {
                git_in(repo, root, &["init", "-q", &path]);
            }
            Some(format!("nested repository at {path:?}, commit: {commit}"))
        }
        _ => {
            let file = rng.pick(&files)?;
            let how = *rng.pick(&["add", "add -N", "rm --cached -q"]).unwrap();
            let mut args: Vec<&str> = how.split(' ').collect();
            args.extend(["--", file.as_str()]);
            repo.git_output(&args)
                .status
                .success()
                .then(|| format!("git {how} {file:?}"))
        }
    }
}

/// Build and compare one random scenario; the error names what was done.
fn random_scenario(seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let repo = TestRepo::new();
    let mut ops = Vec::new();
    if rng.below(3) == 0 {
        let (key, value) = *rng.pick(CONFIGS).unwrap();
        repo.git(&["config", key, value]);
        ops.push(format!("git config {key} {value}"));
    }
    for _ in 0..3 + rng.below(10) {
        let path = random_path(&mut rng);
        let content = *rng.pick(CONTENTS).unwrap();
        if place_file(&repo.root, &path, content) {
            ops.push(format!("write {path:?} {content:?}"));
        }
    }
    for _ in 0..rng.below(3) {
        ops.extend(random_operation(&repo, &mut rng));
    }
    if rng.below(5) != 0 {
        // Git refuses to add a nested repository without a commit; then nothing is committed.
        let added = repo.git_output(&["add", "-A"]).status.success();
        if added {
            repo.git(&["commit", "-q", "--allow-empty", "-m", "random"]);
        }
        ops.push(format!("commit (added: {added})"));
    }
    for _ in 0..=rng.below(8) {
        ops.extend(random_operation(&repo, &mut rng));
    }
    let ours = repo.our_state_tree();
    let stock = repo.stock_state_tree();
    let agree = match (&ours, &stock) {
        (Ok(a), Ok(b)) => a == b,
        (Err(_), Err(_)) => true,
        _ => false,
    };
    if agree {
        Ok(())
    } else {
        Err(format!(
            "seed {seed}: ours {ours:?} vs git {stock:?} after:\n  {}",
            ops.join("\n  ")
        ))
    }
}

/// Random worktrees, each compared with stock git; a failure prints the seed and the steps.
#[test]
fn random_worktrees_match_git() {
    let number = |name| std::env::var(name).ok().and_then(|n| n.parse::<u64>().ok());
    let seeds = match number("STATE_TREE_SEED") {
        Some(seed) => seed..=seed,
        None => 1..=number("STATE_TREE_SEEDS").unwrap_or(200),
    };
    let count = seeds.clone().count();
    let failures: Vec<String> = seeds
        .filter_map(|seed| {
            std::panic::catch_unwind(|| random_scenario(seed))
                .unwrap_or_else(|_| Err(format!("seed {seed}: panicked (see above)")))
                .err()
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {count} scenarios differ (replay one with STATE_TREE_SEED=n):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// Above a few thousand entries the index is checked on several threads, each with its own
// cache of verified directories; the split must not change the result.
#[test]
fn a_large_index_checked_on_several_threads() {
    let repo = TestRepo::new();
    for i in 0..3000 {
        repo.write(
            &format!("d{}/e{}/f{i}.txt", i % 7, i % 5),
            &format!("{i}\n"),
        );
    }
    repo.commit_all("many files");
    repo.write("d3/e2/f2003.txt", "changed\n");
    repo.remove("d6/e1/f6.txt");
    repo.chmod("d0/e0/f0.txt", 0o755);
    repo.write("d1/new.txt", "new\n");
    // A leading directory that became a symlink: the paths below it count as deleted.
    std::fs::rename(repo.path("d2/e4"), repo.path("moved")).unwrap();
    repo.symlink("../moved", "d2/e4");
    assert_matches_git_leaving_index_alone(&repo);
}
