//! A real repository made by `git init` in a temporary directory, for the unit tests of `git/`.

use std::path::Path;
use std::process::Command;

use super::Repo;

/// `git` in `dir`, without the user's or the system's configuration.
pub(super) fn git(dir: &Path) -> Command {
    let mut git = Command::new("git");
    git.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C");
    git
}

/// Run `git args` in `dir` and return its stdout; panics when git fails.
pub(super) fn run(dir: &Path, args: &[&str]) -> String {
    let output = git(dir).args(args).output().expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("git prints text")
}

/// Stage everything in `dir` and commit it as `message`, with an identity of the test's own.
pub(super) fn commit_all(dir: &Path, message: &str) {
    run(dir, &["add", "-A"]);
    let identity = ["-c", "user.name=t", "-c", "user.email=t@t"];
    let mut args = identity.to_vec();
    args.extend(["commit", "-qm", message]);
    run(dir, &args);
}

/// A fresh repository with a worktree, and its temporary directory.
pub(super) fn git_repo() -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    run(dir.path(), &["init", "--quiet"]);
    let repo = Repo::discover_at(dir.path()).expect("the new repository opens");
    (dir, repo)
}
