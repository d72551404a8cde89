//! Per-session local state under the state directory: the attempt counter of the current turn,
//! the last verdict given, and the lock that keeps two hook processes for one session from
//! running verify.sh twice. Never shared, never in the object database.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::{Error, Repo};

const SESSIONS_DIR: &str = "sessions";

/// The object id an anchor is keyed by and session files are named after: derived from the
/// session id and the worktree, so a hostile session id can never name a path. It is the id of
/// the blob [`session_key_blob`] holds.
pub fn session_key(session: &str, worktree: &Path) -> ObjectId {
    gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        &session_key_blob(session, worktree),
    )
    .expect("SHA-1 hashing of an in-memory buffer cannot fail")
}

/// The content of the blob a session's key names. Writing it lets `git cat-file -p <key>` say
/// whose anchor a note is, and keeps `git notes prune` from dropping anchors as notes on nothing.
pub fn session_key_blob(session: &str, worktree: &Path) -> Vec<u8> {
    let mut data = b"prove-it session\0".to_vec();
    data.extend_from_slice(session.as_bytes());
    data.push(0);
    data.extend_from_slice(worktree.as_os_str().as_encoded_bytes());
    data
}

/// One session's files in one worktree.
pub struct SessionFiles {
    state: PathBuf,
    lock: PathBuf,
    log: PathBuf,
    /// The session's own copy of its anchor's note text, written when the session started.
    seal: PathBuf,
}

/// Held while the gate decides; released on drop.
pub struct SessionLock {
    _file: File,
}

impl SessionFiles {
    pub fn open(repo: &Repo, key: &ObjectId) -> Result<SessionFiles, Error> {
        let dir = repo.state_dir()?.join(SESSIONS_DIR);
        if !dir.is_dir() {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&dir)
                .or_else(|e| if dir.is_dir() { Ok(()) } else { Err(e) })
                .map_err(|source| Error::StateDir {
                    path: dir.clone(),
                    source,
                })?;
        }
        Ok(SessionFiles {
            state: dir.join(format!("{key}.json")),
            lock: dir.join(format!("{key}.lock")),
            log: dir.join(format!("{key}.log")),
            seal: dir.join(format!("{key}.anchor")),
        })
    }

    /// The full output of this session's last verify.sh run.
    pub fn log(&self) -> PathBuf {
        self.log.clone()
    }

    /// Wait until no other hook process of this session is deciding, then hold the lock.
    pub fn lock(&self) -> Result<SessionLock, Error> {
        let io = |source| Error::StateFile {
            path: self.lock.clone(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&self.lock)
            .map_err(io)?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| io(e.into()))?;
        Ok(SessionLock { _file: file })
    }

    /// The saved turn state's bytes; `None` when there are none or they cannot be read, which
    /// the gate takes as a fresh start.
    pub fn load(&self) -> Option<Vec<u8>> {
        std::fs::read(&self.state).ok()
    }

    /// Replace the saved turn state, atomically.
    pub fn store(&self, data: &[u8]) -> Result<(), Error> {
        replace(&self.state, data)
    }

    /// The session's own copy of its anchor's text; `None` when there is none.
    pub fn load_seal(&self) -> Option<Vec<u8>> {
        std::fs::read(&self.seal).ok()
    }

    /// Keep the session's own copy of its anchor's text, atomically.
    pub fn store_seal(&self, data: &[u8]) -> Result<(), Error> {
        replace(&self.seal, data)
    }
}

/// The lock held while the gate runs verify.sh (or the checks) on one worktree, whichever
/// session runs it: two sessions sharing a worktree (an agent team's teammates) never run on it
/// at the same time. [`RunLock::try_hold`] is `None` while another holds it; [`RunLock::hold`]
/// waits for it.
pub struct RunLock {
    path: PathBuf,
}

impl RunLock {
    pub fn of(repo: &Repo, worktree: &Path) -> Result<RunLock, Error> {
        let files = SessionFiles::open(repo, &session_key("\0run", worktree))?;
        Ok(RunLock { path: files.lock })
    }

    fn open(&self) -> Result<File, Error> {
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&self.path)
            .map_err(|source| self.error(source))
    }

    fn error(&self, source: std::io::Error) -> Error {
        Error::StateFile {
            path: self.path.clone(),
            source,
        }
    }

    /// Hold the lock if no run is in flight; `None` when one is.
    pub fn try_hold(&self) -> Result<Option<SessionLock>, Error> {
        let file = self.open()?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(SessionLock { _file: file })),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(error) => Err(self.error(error.into())),
        }
    }

    /// Wait until the run in flight is over, then hold the lock.
    pub fn hold(&self) -> Result<SessionLock, Error> {
        let file = self.open()?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|error| self.error(error.into()))?;
        Ok(SessionLock { _file: file })
    }
}

/// Replace the file at `path` by `data`, through a temporary file and a rename.
pub(super) fn replace(path: &Path, data: &[u8]) -> Result<(), Error> {
    let io = |source| Error::StateFile {
        path: path.to_owned(),
        source,
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io)?;
    file.write_all(data).map_err(io)?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_depends_on_session_and_worktree_only() {
        let a = session_key("s1", Path::new("/repo"));
        assert_eq!(a, session_key("s1", Path::new("/repo")));
        assert_ne!(a, session_key("s2", Path::new("/repo")));
        assert_ne!(a, session_key("s1", Path::new("/repo/wt")));
        // The separator keeps ("a", "b/c") and ("a\0b", "c")-like splits apart.
        assert_ne!(
            session_key("a", Path::new("b")),
            session_key("", Path::new("a\0b"))
        );
    }
}
