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

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Repo, StateTree};

/// In debug builds, makes every watch fail to start, so that tests exercise a machine where
/// renames cannot be watched.
const NO_RENAME_WATCH_ENV: &str = "PROVE_IT_TEST_NO_RENAME_WATCH";

/// How long to wait, once the run has ended, for the watch to deliver what the kernel queued.
const DRAIN_WAIT: Duration = Duration::from_secs(5);

/// The folder of the state directory where a sentinel is renamed to learn that every earlier
/// event was read.
const SENTINEL: &str = "rename-watch";

/// What the watch saw of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Renames {
    /// Watched throughout: the paths of the state renamed (by their old or new name), sorted;
    /// `""` is the worktree itself.
    Watched(Vec<String>),
    /// Renames could not be watched (or not throughout): nothing is known of them.
    Unwatched,
}

/// A watch on the state's directories, from [`Repo::watch_renames`] until [`RenameWatch::end`].
pub(crate) struct RenameWatch {
    workdir: PathBuf,
    inner: Option<Watching>,
}

struct Watching {
    #[cfg(target_os = "linux")]
    _watcher: notify::INotifyWatcher,
    seen: Arc<Mutex<Seen>>,
    sentinel_dir: PathBuf,
}

#[derive(Default)]
struct Seen {
    moved: Vec<PathBuf>,
    lost: bool,
}

impl Repo {
    /// Start watching every directory of `state` (and the worktree itself) for renames.
    pub(crate) fn watch_renames(&self, state: &StateTree) -> RenameWatch {
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
    use notify::Watcher as _;
    if cfg!(debug_assertions) && std::env::var_os(NO_RENAME_WATCH_ENV).is_some() {
        return None;
    }
    let seen = Arc::new(Mutex::new(Seen::default()));
    let sink = Arc::clone(&seen);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(mut seen) = sink.lock() else { return };
        match event {
            Ok(event) if event.need_rescan() => seen.lost = true,
            Ok(event) => {
                if let notify::EventKind::Modify(notify::event::ModifyKind::Name(_)) = event.kind {
                    seen.moved.extend(event.paths);
                }
            }
            Err(_) => seen.lost = true,
        }
    })
    .ok()?;
    let dirs = std::iter::once(workdir.to_owned())
        .chain(state.dir_paths().map(|dir| workdir.join(dir)))
        .chain(std::iter::once(sentinel_dir.clone()));
    for dir in dirs {
        match watcher.watch(&dir, notify::RecursiveMode::NonRecursive) {
            Ok(()) => {}
            // A directory of the state absent from disk (left out by a sparse checkout): its
            // parent's watch sees anything renamed into its place.
            Err(error) if matches!(error.kind, notify::ErrorKind::PathNotFound) => {}
            Err(_) => return None,
        }
    }
    Some(Watching {
        _watcher: watcher,
        seen,
        sentinel_dir,
    })
}

#[cfg(not(target_os = "linux"))]
fn start(_workdir: &Path, _state: &StateTree, _sentinel_dir: PathBuf) -> Option<Watching> {
    None
}

impl RenameWatch {
    /// Stop watching once the run has ended: the paths of `before` or `after` (the states
    /// around the run) that were renamed while it went on, or `Unwatched`.
    pub(crate) fn end(self, before: &StateTree, after: &StateTree) -> Renames {
        let Some(watching) = self.inner else {
            return Renames::Unwatched;
        };
        if !drained(&watching) {
            return Renames::Unwatched;
        }
        let Ok(seen) = watching.seen.lock() else {
            return Renames::Unwatched;
        };
        if seen.lost {
            return Renames::Unwatched;
        }
        let mut renamed: Vec<String> = seen
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

/// Rename a sentinel in its folder of the state directory and wait until the watch reports
/// it: the kernel queues events in order, so every rename made before the run ended has then
/// been read.
fn drained(watching: &Watching) -> bool {
    let name = format!("{}-{}", std::process::id(), thread_id());
    let from = watching.sentinel_dir.join(format!("{name}.new"));
    let to = watching.sentinel_dir.join(format!("{name}.done"));
    if std::fs::write(&from, b"").is_err() || std::fs::rename(&from, &to).is_err() {
        let _ = std::fs::remove_file(&from);
        return false;
    }
    let waited = Instant::now();
    let seen_it = loop {
        let reported = watching
            .seen
            .lock()
            .is_ok_and(|seen| seen.moved.contains(&to));
        if reported || waited.elapsed() > DRAIN_WAIT {
            break reported;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let _ = std::fs::remove_file(&to);
    seen_it
}

/// Tells apart two watches of one process (runs of several worktrees at once).
fn thread_id() -> String {
    let id = format!("{:?}", std::thread::current().id());
    id.chars().filter(char::is_ascii_digit).collect()
}
