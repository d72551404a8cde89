//! The files of a worktree's background prover under the state directory: its lock (an
//! exclusive `flock` held for the prover's life, the only truth of whether one runs), the time
//! of the last after-tool event (the wake), what it does (its status) and why proving ahead is
//! off there. Bytes only: what a status says is the gate's to read.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::session::replace;
use super::{Error, Repo};

const AHEAD_DIR: &str = "ahead";

/// One worktree's prover files.
impl Repo {
    /// Whether the state directory is there; asking makes none, so that an event in a
    /// repository the gate never armed leaves no trace in it.
    pub fn has_state_dir(&self) -> bool {
        self.git.common_dir().join(super::names::STATE_DIR).is_dir()
    }
}

#[derive(Clone)]
pub struct AheadFiles {
    lock: PathBuf,
    /// Held by the prover while a run is in flight, and only then.
    run: PathBuf,
    wake: PathBuf,
    status: PathBuf,
    off: PathBuf,
}

/// The prover's lock, held until dropped (or the process ends, which the kernel sees to).
pub struct AheadLock {
    _file: File,
}

/// The key a worktree's prover files are named after, so that no path can name a file.
fn worktree_key(worktree: &Path) -> gix::ObjectId {
    let mut data = b"prove-it ahead\0".to_vec();
    data.extend_from_slice(worktree.as_os_str().as_encoded_bytes());
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &data)
        .expect("SHA-1 hashing of an in-memory buffer cannot fail")
}

impl AheadFiles {
    /// Whether any prover was ever started in this repository (its directory is there);
    /// asking makes no directory.
    pub fn any(repo: &Repo) -> bool {
        repo.git
            .common_dir()
            .join(super::names::STATE_DIR)
            .join(AHEAD_DIR)
            .is_dir()
    }

    /// The prover files of `worktree` (canonical), the directory made when missing.
    pub fn open(repo: &Repo, worktree: &Path) -> Result<AheadFiles, Error> {
        let dir = repo.state_dir()?.join(AHEAD_DIR);
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
        let key = worktree_key(worktree);
        Ok(AheadFiles {
            lock: dir.join(format!("{key}.lock")),
            run: dir.join(format!("{key}.run")),
            wake: dir.join(format!("{key}.wake")),
            status: dir.join(format!("{key}.status")),
            off: dir.join(format!("{key}.off")),
        })
    }

    /// The prover's lock, taken without waiting; `None` when another process holds it.
    pub fn try_lock(&self) -> Result<Option<AheadLock>, Error> {
        try_lock(&self.lock)
    }

    /// The lock a prover holds while a run is in flight.
    pub fn try_lock_run(&self) -> Result<Option<AheadLock>, Error> {
        try_lock(&self.run)
    }

    /// The process that holds the prover's lock, as the kernel says (`/proc/locks`); `None`
    /// when none does or it cannot be told. The lock file's content proves nothing.
    pub fn holder(&self) -> Option<u32> {
        holder(&self.lock)
    }

    /// The process whose run is in flight, as the kernel says.
    pub fn run_holder(&self) -> Option<u32> {
        holder(&self.run)
    }

    /// Note an after-tool event at `now_ns` (ns since the epoch).
    pub fn wake(&self, now_ns: u64) -> Result<(), Error> {
        replace(&self.wake, now_ns.to_string().as_bytes())
    }

    /// When the last after-tool event came (ns since the epoch), if one did.
    pub fn last_wake(&self) -> Option<u64> {
        std::fs::read_to_string(&self.wake)
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    pub fn load_status(&self) -> Option<Vec<u8>> {
        std::fs::read(&self.status).ok()
    }

    pub fn store_status(&self, data: &[u8]) -> Result<(), Error> {
        replace(&self.status, data)
    }

    /// Why proving ahead is off in this worktree, when it is.
    pub fn load_off(&self) -> Option<Vec<u8>> {
        std::fs::read(&self.off).ok()
    }

    pub fn store_off(&self, data: &[u8]) -> Result<(), Error> {
        replace(&self.off, data)
    }

    /// Proving ahead is on again (a run left the state as it was).
    pub fn clear_off(&self) -> Result<(), Error> {
        match std::fs::remove_file(&self.off) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(Error::StateFile {
                path: self.off.clone(),
                source: error,
            }),
            _ => Ok(()),
        }
    }
}

fn try_lock(path: &Path) -> Result<Option<AheadLock>, Error> {
    let io = |source| Error::StateFile {
        path: path.to_owned(),
        source,
    };
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(AheadLock { _file: file })),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(error) => Err(io(error.into())),
    }
}

/// The pid that holds an exclusive `flock` on the file at `path`: not known where there is no
/// `/proc/locks`.
#[cfg(not(target_os = "linux"))]
fn holder(_path: &Path) -> Option<u32> {
    None
}

/// The pid that holds an exclusive `flock` on the file at `path`, from `/proc/locks`.
#[cfg(target_os = "linux")]
fn holder(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    let dev = meta.dev();
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // `1: FLOCK  ADVISORY  WRITE 1234 00:2e:5678 0 EOF`; a waiter's line has `->`.
        if fields.get(1) != Some(&"FLOCK") || fields.get(3) != Some(&"WRITE") {
            return None;
        }
        let pid: u32 = fields.get(4)?.parse().ok()?;
        let mut id = fields.get(5)?.split(':');
        let file_major = u32::from_str_radix(id.next()?, 16).ok()?;
        let file_minor = u32::from_str_radix(id.next()?, 16).ok()?;
        let inode: u64 = id.next()?.parse().ok()?;
        (inode == meta.ino() && file_major == major && file_minor == minor).then_some(pid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel names the lock's holder, so that a status file naming any other pid is not
    /// taken for a running prover.
    #[test]
    fn the_kernel_names_the_holder_of_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let files = AheadFiles {
            lock: dir.path().join("l.lock"),
            run: dir.path().join("l.run"),
            wake: dir.path().join("l.wake"),
            status: dir.path().join("l.status"),
            off: dir.path().join("l.off"),
        };
        let lock = files.try_lock().unwrap().expect("a free lock is taken");
        assert_eq!(files.holder(), Some(std::process::id()));
        drop(lock);
        // A child forked by another test's thread holds the file until it execs.
        let released = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            files.holder().is_none()
        });
        assert!(released);
        files.wake(42).unwrap();
        assert_eq!(files.last_wake(), Some(42));
    }
}
