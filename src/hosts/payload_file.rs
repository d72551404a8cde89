//! Reading a file a hook's payload names (Copilot's `transcriptPath`), or one a host keeps
//! beside the user's (its trusted folders): the path is untrusted, since an agent with a shell
//! can put a FIFO, a device, a directory or a huge file there. So the file is opened without
//! blocking, read only when `fstat` says it is a regular file, at most `cap` bytes of it, and
//! within a time bound; anything else is an error, and the hook still answers.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rustix::fs::{Mode, OFlags};

/// How long a payload's file may take to open and read before the hook answers without it.
pub(super) const READ_TIME: Duration = Duration::from_secs(2);

/// Why a payload's file was not read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error("could not open {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a regular file", path.display())]
    NotRegular { path: PathBuf },
    #[error("could not read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} was not read within {} s", path.display(), time.as_secs())]
    TimedOut { path: PathBuf, time: Duration },
}

/// Which part of the file is read.
#[derive(Debug, Clone, Copy)]
pub(super) enum Part {
    /// Its last `n` bytes (a transcript's newest lines).
    Tail(u64),
    /// All of it, if it holds at most `n` bytes; a larger file is not read.
    Whole(u64),
}

/// The bytes of `part` of the regular file at `path`, read within `time`.
pub(super) fn read(path: &Path, part: Part, time: Duration) -> Result<Vec<u8>, Error> {
    let (sender, receiver) = mpsc::channel();
    let owned = path.to_owned();
    // The read runs on a thread of its own, so that a file system that never answers (a hung
    // network or FUSE mount) costs the hook `time`, not its host's timeout. The thread is left
    // behind then; the hook's process ends soon after. A thread that answered is joined: the
    // hook forks the background prover only while it has one thread (`process::fork_detached`).
    let reader = std::thread::Builder::new()
        .name("payload-file".into())
        .spawn(move || {
            let _ = sender.send(read_now(&owned, part));
        })
        .map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
    let read = receiver.recv_timeout(time).map_err(|_| Error::TimedOut {
        path: path.to_owned(),
        time,
    })?;
    let _ = reader.join();
    read
}

fn read_now(path: &Path, part: Part) -> Result<Vec<u8>, Error> {
    // O_NONBLOCK: opening a FIFO waits for a writer without it. O_NOCTTY: a terminal named
    // here never becomes the hook's.
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| Error::Open {
        path: path.to_owned(),
        source: errno.into(),
    })?;
    let mut file = std::fs::File::from(fd);
    let read_error = |source| Error::Read {
        path: path.to_owned(),
        source,
    };
    let metadata = file.metadata().map_err(read_error)?;
    if !metadata.is_file() {
        return Err(Error::NotRegular {
            path: path.to_owned(),
        });
    }
    let length = metadata.len();
    let cap = match part {
        Part::Tail(cap) => {
            file.seek(SeekFrom::Start(length.saturating_sub(cap)))
                .map_err(read_error)?;
            cap
        }
        Part::Whole(cap) if length > cap => {
            return Err(read_error(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("{length} bytes, more than the {cap} read"),
            )));
        }
        Part::Whole(cap) => cap,
    };
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes).map_err(read_error)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_within_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, "0123456789").unwrap();
        assert_eq!(read(&path, Part::Tail(4), READ_TIME).unwrap(), b"6789");
        assert_eq!(
            read(&path, Part::Tail(40), READ_TIME).unwrap(),
            b"0123456789"
        );
        assert_eq!(
            read(&path, Part::Whole(10), READ_TIME).unwrap(),
            b"0123456789"
        );
        let error = read(&path, Part::Whole(9), READ_TIME).unwrap_err();
        assert!(matches!(error, Error::Read { .. }), "{error:?}");
    }

    /// A FIFO named by a payload blocked the hook until its host killed it.
    #[test]
    fn a_fifo_a_directory_and_a_device_are_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        // mkfifo(1), as POSIX has it everywhere.
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let started = std::time::Instant::now();
        for path in [fifo.as_path(), dir.path(), Path::new("/dev/zero")] {
            let error = read(path, Part::Tail(1024), READ_TIME).unwrap_err();
            assert!(matches!(error, Error::NotRegular { .. }), "{error:?}");
            assert!(
                error.to_string().ends_with("is not a regular file"),
                "{error}"
            );
        }
        assert!(started.elapsed() < READ_TIME, "{:?}", started.elapsed());
        let missing = read(&dir.path().join("missing"), Part::Tail(1), READ_TIME).unwrap_err();
        assert!(matches!(missing, Error::Open { .. }), "{missing:?}");
    }
}
