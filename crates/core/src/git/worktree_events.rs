//! Changes on disk in a worktree, as file events (inotify through `notify`), for `watch`: when
//! the last one came, so that a state is computed again only once the worktree has been quiet.
//! An event says only "look again": what changed is always read from disk, never from events.
//! Events inside the git directory (the index, refs, the state directory's own files) and
//! reads (`open`, `close` without a write) are left out, since they change no state tree.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{Error, Repo};

/// A watch on a worktree, every directory beneath it, until dropped.
pub struct WorktreeEvents {
    #[cfg(target_os = "linux")]
    _watcher: notify::INotifyWatcher,
    tally: Tally,
}

/// The count of a watch's events, to be read from any thread.
#[derive(Clone)]
pub struct Tally(Arc<Mutex<Seen>>);

#[derive(Default)]
struct Seen {
    /// How many events came, so that a caller can tell one quiet spell from the next.
    count: u64,
    last: Option<Instant>,
}

impl Repo {
    /// Watch this worktree for changes (recursively: a new directory is watched as it comes).
    pub fn watch_worktree(&self) -> Result<WorktreeEvents, Error> {
        let workdir = self.workdir()?.to_owned();
        start(&workdir).map_err(|source| Error::WatchWorktree {
            path: workdir,
            source,
        })
    }
}

#[cfg(target_os = "linux")]
fn start(workdir: &Path) -> std::io::Result<WorktreeEvents> {
    use notify::Watcher as _;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let sink = Arc::clone(&seen);
    let root = workdir.to_owned();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let counts = match &event {
            // A lost event may have been anything.
            Err(_) => true,
            Ok(event) if event.need_rescan() => true,
            Ok(event) if matches!(event.kind, notify::EventKind::Access(_)) => false,
            Ok(event) => event.paths.iter().any(|path| !in_git_dir(&root, path)),
        };
        if counts && let Ok(mut seen) = sink.lock() {
            seen.count += 1;
            seen.last = Some(Instant::now());
        }
    })
    .map_err(std::io::Error::other)?;
    watcher
        .watch(workdir, notify::RecursiveMode::Recursive)
        .map_err(std::io::Error::other)?;
    Ok(WorktreeEvents {
        _watcher: watcher,
        tally: Tally(seen),
    })
}

#[cfg(not(target_os = "linux"))]
fn start(_workdir: &Path) -> std::io::Result<WorktreeEvents> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "file events are watched on Linux only",
    ))
}

/// Whether `path` is inside the worktree's `.git` (a directory, or a linked worktree's file).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn in_git_dir(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root)
        .ok()
        .and_then(|rel| rel.components().next())
        .is_some_and(|first| first.as_os_str() == ".git")
}

impl WorktreeEvents {
    /// The count of its events, for another thread.
    pub fn tally(&self) -> Tally {
        self.tally.clone()
    }
}

impl Tally {
    /// How many events came so far, and when the last one did.
    pub fn last(&self) -> (u64, Option<Instant>) {
        self.0
            .lock()
            .map_or((0, None), |seen| (seen.count, seen.last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// The git directory's own writes (the index, the proofs' notes) are no change of state, and
    /// would otherwise wake `watch` after each of its own records.
    #[test]
    fn writes_inside_the_git_directory_are_not_changes() {
        let root = PathBuf::from("/w");
        assert!(in_git_dir(&root, Path::new("/w/.git/index")));
        assert!(in_git_dir(&root, Path::new("/w/.git")));
        assert!(!in_git_dir(&root, Path::new("/w/src/.git-thing")));
        assert!(!in_git_dir(&root, Path::new("/w/a.txt")));
    }
}
