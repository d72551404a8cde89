//! Renames in the state's directories while a run goes on.
//!
//! A directory moved away and back (`mv tests tests.real && mv tests.evil tests`, then the
//! reverse) leaves every file beneath it with the ctime and inode it had: the state tree after
//! the run and the ctimes checked against the run's start cannot tell. The directories of the
//! state (each one watched alone, never the ignored ones, so `target/` or `node_modules/` cost
//! no watch) are watched through inotify from just before the run until it ends, and every
//! rename of an entry of the state, by its old name or its new one, is named. Where the watch
//! cannot be had (the inotify watch limit, another platform, an overflowed queue) the run says
//! so: it is `Renames::Unwatched`, never a quiet "nothing moved".
// Only Linux has inotify: elsewhere the watch is never started.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{Repo, StateTree};

/// In debug builds, makes every watch fail to start, so that tests exercise a machine where
/// renames cannot be watched.
const NO_RENAME_WATCH_ENV: &str = "PROVE_IT_TEST_NO_RENAME_WATCH";

/// How long to wait, once the run has ended, for the kernel to queue the sentinel's rename
/// (it is queued before `rename` returns: this bounds a platform that behaves otherwise).
const DRAIN_WAIT: Duration = Duration::from_secs(5);

/// The folder of the state directory where a sentinel is renamed to learn that every earlier
/// event was read.
const SENTINEL: &str = "rename-watch";

/// What the watch saw of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Renames {
    /// Watched throughout: the paths of the state renamed (by their old or new name), sorted;
    /// `""` is the worktree itself.
    Watched(Vec<String>),
    /// Renames could not be watched (or not throughout): nothing is known of them.
    Unwatched,
}

/// A watch on the state's directories, from [`Repo::watch_renames`] until [`RenameWatch::end`].
///
/// One inotify descriptor, read by whoever holds the watch (no thread of its own): the run's
/// progress ticks empty the kernel's queue while the run goes on ([`RenameWatch::collect`]),
/// and [`RenameWatch::end`] reads the rest.
pub struct RenameWatch {
    workdir: PathBuf,
    inner: Option<Watching>,
}

/// Inotify descriptors whose watches have all been removed, for the next watch: closing one
/// waits for the kernel to retire its watches (milliseconds), so a process closes them once,
/// when it exits.
static IDLE: std::sync::Mutex<Vec<rustix::fd::OwnedFd>> = std::sync::Mutex::new(Vec::new());

struct Watching {
    /// Taken back to [`IDLE`] when the watch is dropped.
    fd: Option<rustix::fd::OwnedFd>,
    /// Each watch's directory, by its descriptor.
    dirs: std::collections::HashMap<i32, PathBuf>,
    moved: Vec<PathBuf>,
    lost: bool,
    sentinel_dir: PathBuf,
}

impl Repo {
    /// Start watching every directory of `state` (and the worktree itself) for renames.
    pub fn watch_renames(&self, state: &StateTree) -> RenameWatch {
        let workdir = self.workdir().map(Path::to_owned).unwrap_or_default();
        // A folder of its own, so that the run's log, written beside it, sends no events.
        let inner = self
            .state_dir()
            .ok()
            .map(|dir| dir.join(SENTINEL))
            .filter(|dir| std::fs::create_dir_all(dir).is_ok())
            .and_then(|sentinel_dir| start(&workdir, state, sentinel_dir));
        RenameWatch { workdir, inner }
    }
}

#[cfg(target_os = "linux")]
fn start(workdir: &Path, state: &StateTree, sentinel_dir: PathBuf) -> Option<Watching> {
    use rustix::fs::inotify;
    if cfg!(debug_assertions) && std::env::var_os(NO_RENAME_WATCH_ENV).is_some() {
        return None;
    }
    let fd = match IDLE.lock().ok().and_then(|mut idle| idle.pop()) {
        Some(fd) => fd,
        None => {
            inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK).ok()?
        }
    };
    let mask = inotify::WatchFlags::MOVED_FROM
        | inotify::WatchFlags::MOVED_TO
        | inotify::WatchFlags::MOVE_SELF
        | inotify::WatchFlags::DONT_FOLLOW;
    let dirs = std::iter::once(workdir.to_owned())
        .chain(state.dir_paths().map(|dir| workdir.join(dir)))
        .chain(std::iter::once(sentinel_dir.clone()));
    let mut watching = Watching {
        fd: Some(fd),
        dirs: std::collections::HashMap::new(),
        moved: Vec::new(),
        lost: false,
        sentinel_dir,
    };
    let fd = watching.fd.as_ref()?;
    for dir in dirs {
        match inotify::add_watch(fd, &dir, mask) {
            Ok(wd) => {
                watching.dirs.insert(wd, dir);
            }
            // A directory of the state absent from disk (left out by a sparse checkout): its
            // parent's watch sees anything renamed into its place.
            Err(rustix::io::Errno::NOENT) => {}
            // The watch limit, or anything else: renames cannot be watched.
            Err(_) => return None,
        }
    }
    Some(watching)
}

#[cfg(not(target_os = "linux"))]
fn start(_workdir: &Path, _state: &StateTree, _sentinel_dir: PathBuf) -> Option<Watching> {
    None
}

impl Watching {
    /// Read every event the kernel has queued: the paths renamed, by their old or new name
    /// (a watched directory moved itself is its own path).
    #[cfg(target_os = "linux")]
    fn read_queued(&mut self) {
        use rustix::fs::inotify;
        let Some(fd) = &self.fd else { return };
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 8192];
        let mut reader = inotify::Reader::new(fd, &mut buf);
        loop {
            match reader.next() {
                Ok(event) => {
                    let flags = event.events();
                    if flags.contains(inotify::ReadFlags::QUEUE_OVERFLOW) {
                        self.lost = true;
                        continue;
                    }
                    let Some(dir) = self.dirs.get(&event.wd()) else {
                        continue;
                    };
                    if flags
                        .intersects(inotify::ReadFlags::MOVED_FROM | inotify::ReadFlags::MOVED_TO)
                    {
                        if let Some(name) = event.file_name() {
                            use std::os::unix::ffi::OsStrExt as _;
                            let name = std::ffi::OsStr::from_bytes(name.to_bytes());
                            self.moved.push(dir.join(name));
                        }
                    } else if flags.contains(inotify::ReadFlags::MOVE_SELF) {
                        self.moved.push(dir.clone());
                    }
                }
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => return,
                Err(_) => {
                    self.lost = true;
                    return;
                }
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn read_queued(&mut self) {}
}

impl Drop for Watching {
    /// Remove every watch and read what they queued (their removal's own events too), so
    /// that the descriptor is empty for the next watch; one that cannot be emptied is closed.
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        {
            let Some(fd) = &self.fd else { return };
            let removed = self
                .dirs
                .keys()
                .all(|&wd| rustix::fs::inotify::remove_watch(fd, wd).is_ok());
            self.dirs.clear();
            self.lost = false;
            self.read_queued();
            if removed
                && !self.lost
                && let (Some(fd), Ok(mut idle)) = (self.fd.take(), IDLE.lock())
            {
                idle.push(fd);
            }
        }
    }
}

impl RenameWatch {
    /// Read what the kernel queued so far, so that a long run's renames never overflow its
    /// queue.
    pub fn collect(&mut self) {
        if let Some(watching) = &mut self.inner {
            watching.read_queued();
        }
    }

    /// Stop watching once the run has ended: the paths of `before` or `after` (the states
    /// around the run) that were renamed while it went on, or `Unwatched`.
    pub fn end(self, before: &StateTree, after: &StateTree) -> Renames {
        let Some(mut watching) = self.inner else {
            return Renames::Unwatched;
        };
        if !drained(&mut watching) || watching.lost {
            return Renames::Unwatched;
        }
        let mut renamed: Vec<String> = watching
            .moved
            .iter()
            .filter_map(|path| path.strip_prefix(&self.workdir).ok())
            .map(|rel| rel.to_string_lossy().into_owned())
            .filter(|rel| rel.is_empty() || before.has_path(rel) || after.has_path(rel))
            .collect();
        renamed.sort();
        renamed.dedup();
        Renames::Watched(renamed)
    }
}

/// Rename a sentinel in its folder of the state directory and read until the watch reports
/// it: the kernel queues events in order, so every rename made before the run ended has then
/// been read.
fn drained(watching: &mut Watching) -> bool {
    let name = format!("{}-{}", std::process::id(), thread_id());
    let from = watching.sentinel_dir.join(format!("{name}.new"));
    let to = watching.sentinel_dir.join(format!("{name}.done"));
    if std::fs::write(&from, b"").is_err() || std::fs::rename(&from, &to).is_err() {
        let _ = std::fs::remove_file(&from);
        return false;
    }
    let waited = Instant::now();
    let seen_it = loop {
        watching.read_queued();
        let reported = watching.moved.contains(&to);
        if reported || watching.lost || waited.elapsed() > DRAIN_WAIT {
            break reported;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let _ = std::fs::remove_file(&to);
    seen_it
}

/// Tells apart two watches of one process (runs of several worktrees at once).
fn thread_id() -> String {
    let id = format!("{:?}", std::thread::current().id());
    id.chars().filter(char::is_ascii_digit).collect()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::super::test_repo::git_repo;
    use super::Renames;

    // The watch is read by whoever holds it, with no thread of its own: a long run that
    // renames far more than the kernel's queue holds (16384 events by default) is still
    // watched, as long as its progress ticks collect what was queued.
    #[test]
    fn a_long_run_of_renames_overflows_nothing_when_collected() {
        let (dir, repo) = git_repo();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.txt"), "kept\n").unwrap();
        let state = repo.state_tree(false).unwrap();
        let mut watch = repo.watch_renames(&state);
        let (a, b) = (dir.path().join("src/tmp.a"), dir.path().join("src/tmp.b"));
        std::fs::write(&a, "").unwrap();
        for round in 0..12_000 {
            std::fs::rename(&a, &b).unwrap();
            std::fs::rename(&b, &a).unwrap();
            if round % 1_000 == 0 {
                watch.collect();
            }
        }
        std::fs::remove_file(&a).unwrap();
        // Neither name is a path of the state.
        assert_eq!(watch.end(&state, &state), Renames::Watched(Vec::new()));
    }

    // A watch's descriptor is kept for the next one (closing it costs milliseconds): what the
    // first watch saw is never reported by the second.
    #[test]
    fn a_kept_descriptor_carries_nothing_into_the_next_watch() {
        let (dir, repo) = git_repo();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let state = repo.state_tree(false).unwrap();
        let first = repo.watch_renames(&state);
        std::fs::rename(dir.path().join("a.txt"), dir.path().join("b.txt")).unwrap();
        std::fs::rename(dir.path().join("b.txt"), dir.path().join("a.txt")).unwrap();
        assert_eq!(
            first.end(&state, &state),
            Renames::Watched(vec!["a.txt".to_string()])
        );
        let second = repo.watch_renames(&state);
        assert_eq!(second.end(&state, &state), Renames::Watched(Vec::new()));
    }
}
