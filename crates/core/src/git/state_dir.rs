//! The state directory: local, never shared state under the common git dir (run logs, the
//! ledger, session files, the announcement marker). Nothing in it is ever pushed or fetched.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::names::{
    ANNOUNCED, COMMIT_LOGS_DIR, FAILED_LOG_SUFFIX, LAST_FAILED_RUN_LOG, LAST_RUN_LOG,
    LAST_RUN_TESTS, STATE_DIR, TOLD_INERT,
};
use super::{Error, Repo};

impl Repo {
    /// The directory for local, never shared state, created 0700 on first use. Its path is the
    /// canonical one: in a linked worktree git gives the common dir as
    /// `.git/worktrees/<name>/../..`, a path that stops existing with the worktree, and a
    /// temporary worktree's is printed after it is removed.
    pub fn state_dir(&self) -> Result<PathBuf, Error> {
        let path = self.common_dir_real().join(STATE_DIR);
        // A real folder below the canonical common dir is canonical as it is; a link there (or
        // nothing yet) is resolved as the kernel resolves it.
        if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) {
            return Ok(path);
        }
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

    /// The folder of each commit's log in `run <range>` (made when missing), keeping the
    /// newest `keep` files only: a log is capped, but a history is long.
    pub fn commit_logs(&self, keep: usize) -> Result<PathBuf, Error> {
        let dir = self.state_dir()?.join(COMMIT_LOGS_DIR);
        let made = |source| Error::StateDir {
            path: dir.clone(),
            source,
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(made)?;
        let mut logs: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&dir)
            .map_err(made)?
            .flatten()
            .filter_map(|entry| {
                let modified = entry.metadata().ok()?.modified().ok()?;
                Some((modified, entry.path()))
            })
            .collect();
        if logs.len() > keep {
            logs.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
            for (_, old) in &logs[keep..] {
                // Best effort: a log that cannot be removed costs only its space.
                let _ = std::fs::remove_file(old);
            }
        }
        Ok(dir)
    }

    /// Where the last run says what its tests were (`doctor` reads it).
    pub fn last_run_tests(&self) -> Result<PathBuf, Error> {
        Ok(self.state_dir()?.join(LAST_RUN_TESTS))
    }

    /// Where the full output of the last verify.sh run outside an agent session goes.
    pub fn last_run_log(&self) -> Result<PathBuf, Error> {
        Ok(self.state_dir()?.join(LAST_RUN_LOG))
    }

    /// Keep a copy of `log`, the full output of a run that just failed, apart from it, where the
    /// next run (which may pass) does not write over it; the copy's path. The output the agent
    /// was told to read must still be there when it reads it.
    pub fn keep_failing_log(&self, log: &Path) -> Result<PathBuf, Error> {
        let kept = failing_log_of(log);
        let write = |source| Error::WriteFile {
            path: kept.clone(),
            source,
        };
        // Copied through a temporary file and renamed, so a reader never sees half a log.
        let partial = kept.with_extension(format!("partial-{}", std::process::id()));
        let copied = (|| {
            let mut from = std::fs::File::open(log)?;
            let mut to = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&partial)?;
            std::io::copy(&mut from, &mut to)?;
            std::fs::rename(&partial, &kept)
        })();
        if let Err(source) = copied {
            let _ = std::fs::remove_file(&partial);
            return Err(write(source));
        }
        Ok(kept)
    }

    /// Mark the gate's announcement as made in this repository: `true` the first time, `false`
    /// when it was made before. Creating the marker is atomic, so of two hooks starting at once
    /// only one announces.
    pub fn mark_announced(&self) -> Result<bool, Error> {
        self.mark_once(ANNOUNCED)
    }

    /// Mark that the gate said it is inert in this repository (no armed verify.sh), as
    /// [`Repo::mark_announced`] marks its announcement: `true` the first time only.
    pub fn mark_told_inert(&self) -> Result<bool, Error> {
        self.mark_once(TOLD_INERT)
    }

    fn mark_once(&self, name: &str) -> Result<bool, Error> {
        let marker = self.state_dir()?.join(name);
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

/// A run log's text (lossily UTF-8, at most `cap` bytes), `None` when it cannot be read.
pub fn read_run_log(path: &Path, cap: u64) -> Option<String> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(cap)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Where the failing copy of `log` goes: `last-failed-run.log` beside `last-run.log`, and
/// `<key>.failed.log` beside a session's `<key>.log`.
pub fn failing_log_of(log: &Path) -> PathBuf {
    let name = log.file_name().and_then(|name| name.to_str()).unwrap_or("");
    if name == LAST_RUN_LOG {
        return log.with_file_name(LAST_FAILED_RUN_LOG);
    }
    let stem = name.strip_suffix(".log").unwrap_or(name);
    log.with_file_name(format!("{stem}{FAILED_LOG_SUFFIX}"))
}

#[cfg(test)]
mod tests {
    use super::super::test_repo::git_repo;
    use super::*;

    // The state directory's path is the canonical one: a real folder as it is, a link where
    // it leads.
    #[test]
    fn the_state_directory_is_named_by_its_canonical_path() {
        let (dir, repo) = git_repo();
        let real = dir
            .path()
            .canonicalize()
            .unwrap()
            .join(".git")
            .join(STATE_DIR);
        assert_eq!(repo.state_dir().unwrap(), real);
        let elsewhere = dir.path().canonicalize().unwrap().join("elsewhere");
        std::fs::rename(&real, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &real).unwrap();
        assert_eq!(repo.state_dir().unwrap(), elsewhere);
    }

    #[test]
    fn a_failing_log_is_kept_beside_the_log_it_copies() {
        assert_eq!(
            failing_log_of(Path::new("/r/.git/prove-it/last-run.log")),
            Path::new("/r/.git/prove-it/last-failed-run.log")
        );
        assert_eq!(
            failing_log_of(Path::new("/r/.git/prove-it/sessions/abc.log")),
            Path::new("/r/.git/prove-it/sessions/abc.failed.log")
        );
    }

    #[test]
    fn the_announcement_is_marked_once() {
        let (_dir, repo) = git_repo();
        assert!(repo.mark_announced().unwrap());
        assert!(!repo.mark_announced().unwrap());
        assert!(repo.state_dir().unwrap().join("announced").is_file());
    }
}
