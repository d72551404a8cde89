//! The state directory: local, never shared state under the common git dir (run logs, the
//! ledger, session files, the announcement marker). Nothing in it is ever pushed or fetched.

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

use super::names::{ANNOUNCED, LAST_RUN_LOG, STATE_DIR};
use super::{Error, Repo};

impl Repo {
    /// The directory for local, never shared state, created 0700 on first use. Its path is the
    /// canonical one: in a linked worktree git gives the common dir as
    /// `.git/worktrees/<name>/../..`, a path that stops existing with the worktree, and a
    /// temporary worktree's is printed after it is removed (issue 21).
    pub(crate) fn state_dir(&self) -> Result<PathBuf, Error> {
        let path = self.git.common_dir().join(STATE_DIR);
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        if !path.is_dir() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&path)
                .map_err(|source| Error::StateDir {
                    path: path.clone(),
                    source,
                })?;
            return Ok(std::fs::canonicalize(&path).unwrap_or(path));
        }
        Ok(path)
    }

    /// Where the full output of the last verify.sh run outside an agent session goes.
    pub(crate) fn last_run_log(&self) -> Result<PathBuf, Error> {
        Ok(self.state_dir()?.join(LAST_RUN_LOG))
    }

    /// Mark the gate's announcement as made in this repository: `true` the first time, `false`
    /// when it was made before. Creating the marker is atomic, so of two hooks starting at once
    /// only one announces.
    pub(crate) fn mark_announced(&self) -> Result<bool, Error> {
        let marker = self.state_dir()?.join(ANNOUNCED);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&marker)
        {
            Ok(_) => Ok(true),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(source) => Err(Error::WriteFile {
                path: marker,
                source,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_repo::git_repo;

    #[test]
    fn the_announcement_is_marked_once() {
        let (_dir, repo) = git_repo();
        assert!(repo.mark_announced().unwrap());
        assert!(!repo.mark_announced().unwrap());
        assert!(repo.state_dir().unwrap().join("announced").is_file());
    }
}
