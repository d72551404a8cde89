//! The start of a verify.sh run on the filesystem's own clock: a file whose ctime is at or
//! after it was changed while verify.sh ran.
//!
//! ctime cannot be set back by a process (only the clock can move it), so a helper that puts
//! good content in place while verify.sh runs and restores the broken content before it exits
//! leaves the same state tree before and after, but not the same ctimes. The kernel
//! stamps files from a coarse clock, so the start is read from a file stamped by that clock,
//! never from `Instant` or `SystemTime`.

use std::io::Write as _;
use std::time::{Duration, Instant};

use super::names::RUN_START_PREFIX;
use super::{Error, Repo};

/// How long to wait for the filesystem's clock to tick past the marker's creation. Its tick is
/// a few milliseconds on Linux; a filesystem with whole-second (or coarser) timestamps costs up
/// to this much per run.
const TICK_WAIT: Duration = Duration::from_millis(2_500);

/// A moment on the filesystem's clock, as ctime gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct FsTime {
    secs: i64,
    nsecs: i64,
}

impl FsTime {
    /// The start of second `secs` since the epoch.
    pub fn whole_second(secs: i64) -> FsTime {
        FsTime { secs, nsecs: 0 }
    }

    // The nanoseconds' type differs between platforms (unsigned on Linux); below 10⁹, they
    // never wrap.
    #[allow(clippy::unnecessary_cast, clippy::cast_possible_wrap)]
    pub(super) fn ctime_of(stat: &rustix::fs::Stat) -> FsTime {
        FsTime {
            secs: stat.st_ctime,
            nsecs: stat.st_ctime_nsec as i64,
        }
    }
}

/// A file of the state directory whose ctime reads the filesystem's clock, removed when
/// dropped.
struct Marker {
    file: tempfile::NamedTempFile,
    path: std::path::PathBuf,
}

impl Marker {
    fn new(repo: &Repo) -> Result<Marker, Error> {
        let dir = repo.state_dir()?;
        let path = dir.join(RUN_START_PREFIX);
        let file = tempfile::Builder::new()
            .prefix(RUN_START_PREFIX)
            .tempfile_in(&dir)
            .map_err(|source| Error::StateFile {
                path: path.clone(),
                source,
            })?;
        Ok(Marker { file, path })
    }

    /// Write to it, and read its ctime: now, on the filesystem's clock.
    fn stamp(&mut self) -> Result<FsTime, Error> {
        let unusable = |source| Error::StateFile {
            path: self.path.clone(),
            source,
        };
        self.file.write_all(b".").map_err(unusable)?;
        let stat = rustix::fs::fstat(self.file.as_file()).map_err(|e| unusable(e.into()))?;
        Ok(FsTime::ctime_of(&stat))
    }
}

impl Repo {
    /// Now, on the filesystem's clock, without waiting for it to tick: a file whose ctime is
    /// before the moment returned has not changed since this call (one stamped at it may have
    /// changed just before or just after).
    pub fn fs_now(&self) -> Result<FsTime, Error> {
        Marker::new(self)?.stamp()
    }

    /// Mark the start of a verify.sh run: a moment on the filesystem's clock after every change
    /// made before this call, and at or before every change made after it returns.
    ///
    /// A file stamped in the same clock tick as the marker could have changed just before it,
    /// so the marker is stamped again until the clock has ticked past its creation, and that
    /// later stamp is the start. Should the clock not tick within [`TICK_WAIT`], the start is
    /// just past the creation: a change within that very tick is then not told apart.
    pub fn mark_run_start(&self) -> Result<FsTime, Error> {
        let mut marker = Marker::new(self)?;
        let created = marker.stamp()?;
        // A kernel with multigrain timestamps stamps a file whose ctime was just read with a
        // fine-grained time: the next stamp is later at once. Otherwise the coarse clock
        // ticks within a few milliseconds: wait a little longer each time.
        let waited = Instant::now();
        let mut pause = Duration::ZERO;
        while waited.elapsed() < TICK_WAIT {
            let now = marker.stamp()?;
            if now > created {
                return Ok(now);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).clamp(Duration::from_micros(50), Duration::from_millis(1));
        }
        Ok(FsTime {
            secs: created.secs,
            nsecs: created.nsecs + 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_repo::git_repo;
    use super::FsTime;

    // A file written before the mark is before the start, even in the same clock tick; one
    // written after it is at or after the start.
    #[test]
    fn the_run_start_falls_between_what_changed_before_and_after() {
        let (dir, repo) = git_repo();
        let ctime =
            |name: &str| FsTime::ctime_of(&rustix::fs::lstat(dir.path().join(name)).unwrap());
        std::fs::write(dir.path().join("before.txt"), "before\n").unwrap();
        let start = repo.mark_run_start().unwrap();
        std::fs::write(dir.path().join("after.txt"), "after\n").unwrap();
        assert!(ctime("before.txt") < start);
        assert!(ctime("after.txt") >= start);
        let leftovers = std::fs::read_dir(repo.state_dir().unwrap())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("run-start.")
            })
            .count();
        assert_eq!(leftovers, 0, "the marker is removed");
    }
}
