//! The per-user index of the worktrees each agent session anchored, outside every repository
//! (`$XDG_STATE_HOME/git-prove-it/sessions/`, else `~/.local/state/git-prove-it/sessions/`).
//!
//! A stop's `cwd` follows the agent's shell, so it cannot be what finds the session's
//! repositories; the session start writes them here. The index only ever adds worktrees to gate:
//! an entry that is missing, torn or unreadable falls back to what the stop itself shows (its
//! cwd, the host's project directory), never to a pass. It is the agent's to edit like every
//! file of the user's (SECURITY.md says what that leaves open).
//!
//! One file per session, named after a hash of the session id (so no id names a path), holding
//! absolute worktree paths, each ended by a NUL byte (which no path holds). Entries are appended
//! with one `write` in append mode, so concurrent hook processes never tear each other's; a
//! record without its NUL (a write cut short) is ignored, and so are duplicates.

use std::io::Write as _;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// Where the index lives under the user's state directory.
const INDEX_DIR: &str = "git-prove-it/sessions";

/// Entries past this many are not read: a session anchors a handful of worktrees.
const MAX_ENTRIES: usize = 256;

/// Index files larger than this are read only this far.
const MAX_BYTES: u64 = 1024 * 1024;

/// A session's file not written to for this long is removed at the next session start, so the
/// index stays small; a session resumed later is noted again by its own session start.
const KEEP_FOR: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// The index, found from the environment once per process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionIndex {
    dir: PathBuf,
}

/// Why the index could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error("neither XDG_STATE_HOME nor HOME names a directory for the session index")]
    NoHome,
    #[error("could not read the session index {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not write the session index {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SessionIndex {
    /// The index under `$XDG_STATE_HOME` (when it is an absolute path, as the XDG spec asks),
    /// else under `$HOME/.local/state`.
    pub(crate) fn locate() -> Result<SessionIndex, Error> {
        let absolute = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
        };
        let base = absolute("XDG_STATE_HOME")
            .or_else(|| absolute("HOME").map(|home| home.join(".local/state")))
            .ok_or(Error::NoHome)?;
        Ok(SessionIndex::at(base.join(INDEX_DIR)))
    }

    pub(crate) fn at(dir: PathBuf) -> SessionIndex {
        SessionIndex { dir }
    }

    /// The file of `session`.
    fn file(&self, session: &str) -> PathBuf {
        let mut data = b"prove-it session index\0".to_vec();
        data.extend_from_slice(session.as_bytes());
        let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &data)
            .expect("SHA-1 hashing of an in-memory buffer cannot fail");
        self.dir.join(id.to_string())
    }

    /// The worktrees `session` anchored, in the order they were added, each once. No file is
    /// no worktree; records that are torn or not absolute paths are skipped.
    pub(crate) fn worktrees(&self, session: &str) -> Result<Vec<PathBuf>, Error> {
        let path = self.file(session);
        let data = match std::fs::File::open(&path) {
            Ok(file) => {
                let mut data = Vec::new();
                std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_BYTES), &mut data)
                    .map_err(|source| Error::Read {
                        path: path.clone(),
                        source,
                    })?;
                data
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(Error::Read { path, source }),
        };
        Ok(parse(&data))
    }

    /// Remove the files of sessions other than `current` not written to for [`KEEP_FOR`]. Best
    /// effort: a file that cannot be removed stays, and costs nothing but its bytes.
    pub(crate) fn prune(&self, current: &str) {
        self.prune_older_than(KEEP_FOR, current);
    }

    fn prune_older_than(&self, age: std::time::Duration, current: &str) {
        let keep = self.file(current);
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = std::time::SystemTime::now();
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|meta| meta.modified())
                .is_ok_and(|modified| now.duration_since(modified).is_ok_and(|since| since > age));
            if old && entry.path() != keep {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    /// Add `worktree` to `session`'s entries, unless it is there already.
    pub(crate) fn add(&self, session: &str, worktree: &Path) -> Result<(), Error> {
        if self
            .worktrees(session)?
            .iter()
            .any(|known| known == worktree)
        {
            return Ok(());
        }
        let path = self.file(session);
        let write = |source| Error::Write {
            path: path.clone(),
            source,
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(write)?;
        let mut record = worktree.as_os_str().as_bytes().to_vec();
        record.push(0);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .map_err(write)?;
        // One write in append mode: another hook process appending at once cannot interleave.
        file.write_all(&record).map_err(write)
    }
}

/// The entries of an index file's bytes.
fn parse(data: &[u8]) -> Vec<PathBuf> {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut records = data.split(|&byte| byte == 0).collect::<Vec<_>>();
    // The part after the last NUL is a record cut short (or nothing).
    records.pop();
    for record in records {
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(record));
        if path.is_absolute() && !seen.contains(&path) && seen.len() < MAX_ENTRIES {
            seen.push(path);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> (tempfile::TempDir, SessionIndex) {
        let dir = tempfile::tempdir().unwrap();
        let index = SessionIndex::at(dir.path().join("state/git-prove-it/sessions"));
        (dir, index)
    }

    #[test]
    fn worktrees_are_kept_per_session_once_each_in_order() {
        let (_dir, index) = index();
        assert_eq!(index.worktrees("s1").unwrap(), Vec::<PathBuf>::new());
        index.add("s1", Path::new("/repo/a")).unwrap();
        index.add("s1", Path::new("/repo/b\nc")).unwrap();
        index.add("s1", Path::new("/repo/a")).unwrap();
        index.add("s2", Path::new("/other")).unwrap();
        assert_eq!(
            index.worktrees("s1").unwrap(),
            [PathBuf::from("/repo/a"), PathBuf::from("/repo/b\nc")]
        );
        assert_eq!(index.worktrees("s2").unwrap(), [PathBuf::from("/other")]);
    }

    /// A hostile session id names a file by its hash only.
    #[test]
    fn a_session_id_never_names_a_path() {
        let (dir, index) = index();
        index.add("../../escaped", Path::new("/repo")).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path().join("state/git-prove-it/sessions"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 1);
        assert!(names[0].len() == 40 && names[0].bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(!dir.path().join("escaped").exists());
    }

    #[test]
    fn torn_relative_and_repeated_records_are_skipped() {
        assert_eq!(
            parse(b"/a\0relative\0\0/a\0/b\0/c-cut-sh"),
            [PathBuf::from("/a"), PathBuf::from("/b")]
        );
        assert_eq!(parse(b"\xff\xfe garbage"), Vec::<PathBuf>::new());
    }

    #[test]
    fn sessions_not_written_to_for_long_are_pruned() {
        let (_dir, index) = index();
        index.add("old", Path::new("/repo")).unwrap();
        index.add("current", Path::new("/repo")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        index.add("new", Path::new("/repo")).unwrap();
        index.prune_older_than(std::time::Duration::from_millis(10), "current");
        assert_eq!(index.worktrees("old").unwrap(), Vec::<PathBuf>::new());
        assert_eq!(index.worktrees("new").unwrap(), [PathBuf::from("/repo")]);
        assert_eq!(
            index.worktrees("current").unwrap(),
            [PathBuf::from("/repo")]
        );
        index.prune("current");
        assert_eq!(index.worktrees("new").unwrap(), [PathBuf::from("/repo")]);
    }

    /// Hook processes of one session appending at once lose no entry.
    #[test]
    fn concurrent_appends_lose_nothing() {
        let (_dir, index) = index();
        std::thread::scope(|scope| {
            for i in 0..8 {
                let index = &index;
                scope.spawn(move || {
                    for j in 0..20 {
                        index
                            .add("s", Path::new(&format!("/repo/{i}/{j}")))
                            .unwrap();
                    }
                });
            }
        });
        assert_eq!(index.worktrees("s").unwrap().len(), 160);
    }
}
