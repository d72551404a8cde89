//! A temporary linked worktree holding one commit, for proving a commit rather than the working
//! state. gix cannot add or remove linked worktrees, so this module runs `git worktree` for that.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::process;

use super::names::WORKTREES_DIR;
use super::{Error, Repo};

/// The variables through which a caller points git at a repository: git's own list
/// (`git rev-parse --local-env-vars`), which git itself clears before entering another
/// repository. Processes working in a temporary worktree must not see the caller's.
pub(crate) const LOCAL_ENV: &[&str] = &[
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
];

/// A linked worktree with a commit checked out (detached), removed when dropped.
pub(crate) struct TempWorktree {
    path: PathBuf,
    git_dir: PathBuf,
    removed: bool,
}

/// `git` with the caller's repository-locating variables cleared, pointed at `git_dir`, stdin
/// from `/dev/null`.
fn git(git_dir: &Path) -> process::Request<'static> {
    LOCAL_ENV
        .iter()
        .fold(process::Request::new("git"), |git, name| {
            git.env_remove(name)
        })
        .arg("--git-dir")
        .arg(git_dir)
}

fn run(git: process::Request<'_>, what: &str) -> Result<(), Error> {
    let output = git.run().map_err(|error| Error::GitSpawn {
        command: what.to_string(),
        source: error.into_source(),
    })?;
    if output.success() {
        Ok(())
    } else {
        Err(Error::GitFailed {
            command: what.to_string(),
            stderr: output.stderr_text(),
        })
    }
}

impl Repo {
    /// Check `commit` out into a new temporary worktree under the state directory.
    pub(crate) fn add_temp_worktree(&self, commit: ObjectId) -> Result<TempWorktree, Error> {
        let parent = self.state_dir()?.join(WORKTREES_DIR);
        std::fs::create_dir_all(&parent).map_err(|source| Error::StateDir {
            path: parent.clone(),
            source,
        })?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "{}-{}-{nanos}",
            &commit.to_hex().to_string()[..12],
            std::process::id()
        );
        let path = parent.join(name);
        let git_dir = self.git.git_dir().to_owned();
        let cmd = git(&git_dir)
            .args(["worktree", "add", "--detach", "--quiet"])
            .arg(&path)
            .arg(commit.to_string());
        let worktree = TempWorktree {
            path,
            git_dir,
            removed: false,
        };
        // Dropping `worktree` on failure cleans up whatever git managed to create.
        run(cmd, "worktree add")?;
        Ok(worktree)
    }
}

impl TempWorktree {
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Check `commit` out here instead, for the next run: tracked files as the commit holds
    /// them, untracked ones removed; ignored files (build caches) are kept, so that a worktree
    /// reused along a range builds incrementally. They are no part of a state tree.
    pub(crate) fn switch(&self, commit: ObjectId) -> Result<(), Error> {
        let here = |git: process::Request<'static>| {
            LOCAL_ENV
                .iter()
                .fold(git, |git, name| git.env_remove(name))
                .current_dir(&self.path)
        };
        run(
            here(process::Request::new("git"))
                .args(["checkout", "--detach", "--force", "--quiet"])
                .arg(commit.to_string()),
            "checkout",
        )?;
        run(
            here(process::Request::new("git")).args(["clean", "-ffdq"]),
            "clean",
        )
    }

    /// Remove the worktree and git's record of it.
    pub(crate) fn remove(mut self) -> Result<(), Error> {
        self.removed = true;
        self.cleanup()
    }

    fn cleanup(&self) -> Result<(), Error> {
        let cmd = git(&self.git_dir)
            .args(["worktree", "remove", "--force", "--force"])
            .arg(&self.path);
        if run(cmd, "worktree remove").is_ok() && !self.path.exists() {
            return Ok(());
        }
        // git refused (the directory is half made, or was damaged by verify.sh): remove the
        // files ourselves and let git forget the worktree.
        if self.path.exists() {
            std::fs::remove_dir_all(&self.path).map_err(|source| Error::WorktreeCleanup {
                path: self.path.clone(),
                source,
            })?;
        }
        run(
            git(&self.git_dir).args(["worktree", "prune"]),
            "worktree prune",
        )
    }
}

impl Drop for TempWorktree {
    fn drop(&mut self) {
        if !self.removed {
            let _ = self.cleanup();
        }
    }
}
