//! Reading a child's output pipes into bounded sinks: raw bytes (the first or the last so
//! many), or lines (a tail of lines, a capped log file on disk, a raw echo). A pipe is read on
//! a thread of its own, or on the thread that waits for the child (`Inline`), which then
//! polls it beside the child's exit.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

/// The most bytes of one line kept in memory, so that a single enormous line
/// cannot exhaust memory.
pub const LINE_CAP: usize = 4096;

/// The size of one read from an output pipe.
const READ_CHUNK: usize = 64 * 1024;

/// What a pipe's bytes go into.
pub(super) trait Sink: Send + 'static {
    fn take(&mut self, chunk: &[u8]);
}

/// A pipe read to its end on its own thread, into a sink.
pub(super) struct Reader<S> {
    /// `None` once `finish` has taken the sink. Output arriving later, from a background process,
    /// is read and dropped so that process never blocks on a full pipe.
    sink: Arc<Mutex<Option<S>>>,
    /// Reports (by a message or by disconnecting) when the thread has seen EOF.
    done: Receiver<()>,
}

impl<S: Sink> Reader<S> {
    pub(super) fn start(mut pipe: impl Read + Send + 'static, sink: S) -> io::Result<Reader<S>> {
        let sink = Arc::new(Mutex::new(Some(sink)));
        let shared = Arc::clone(&sink);
        let (finished, done) = mpsc::channel();
        thread::Builder::new()
            .name("child-output".to_owned())
            .spawn(move || {
                let mut buffer = vec![0; READ_CHUNK];
                loop {
                    match pipe.read(&mut buffer) {
                        Ok(0) => break,
                        Ok(read) => {
                            if let Some(sink) = &mut *lock(&shared) {
                                sink.take(&buffer[..read]);
                            }
                        }
                        Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                        // A pipe read does not fail in practice; if one did, the
                        // output ends there rather than failing the run.
                        Err(_) => break,
                    }
                }
                let _ = finished.send(());
            })?;
        Ok(Reader { sink, done })
    }

    /// The sink, once the pipe reached EOF, or once `grace` passed (`None`: wait for EOF).
    pub(super) fn finish(self, grace: Option<Duration>) -> S {
        match grace {
            Some(grace) => {
                let _ = self.done.recv_timeout(grace);
            }
            None => {
                let _ = self.done.recv();
            }
        }
        lock(&self.sink)
            .take()
            .expect("only `finish` takes the sink, once")
    }
}

/// A pipe read on the thread that waits for the child, into a sink: `Watch::wait` reads it
/// whenever it is readable, so that a full pipe never stalls the child; no thread of its own
/// unless the pipe outlives the child's grace.
pub(super) struct Inline<S> {
    /// `None` once it reached EOF.
    pipe: Option<io::PipeReader>,
    sink: S,
    buffer: Vec<u8>,
}

impl<S: Sink> Inline<S> {
    pub(super) fn new(pipe: io::PipeReader, sink: S) -> Inline<S> {
        Inline {
            pipe: Some(pipe),
            sink,
            buffer: Vec::new(),
        }
    }

    /// The pipe, until it reached EOF.
    pub(super) fn pipe(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.pipe.as_ref().map(std::os::fd::AsFd::as_fd)
    }

    /// Read once from the pipe, which `poll` said is readable (or closed): it does not block.
    pub(super) fn read_ready(&mut self) {
        let Some(pipe) = &mut self.pipe else { return };
        if self.buffer.is_empty() {
            self.buffer = vec![0; READ_CHUNK];
        }
        match pipe.read(&mut self.buffer) {
            Ok(0) => self.pipe = None,
            Ok(read) => self.sink.take(&self.buffer[..read]),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            // A pipe read does not fail in practice; if one did, the output ends there
            // rather than failing the run.
            Err(_) => self.pipe = None,
        }
    }

    /// The sink, once the pipe reached EOF, or once `grace` passed (`None`: wait for EOF). A
    /// pipe still open then (a process the child left behind holds it) is drained on a
    /// thread of its own, its bytes dropped, so that process never blocks on a full pipe.
    pub(super) fn finish(mut self, grace: Option<Duration>) -> S {
        let deadline = grace.map(|grace| std::time::Instant::now() + grace);
        while let Some(pipe) = self.pipe() {
            let left = deadline
                .map(|deadline| deadline.saturating_duration_since(std::time::Instant::now()));
            if left == Some(Duration::ZERO) {
                break;
            }
            let mut fds = [rustix::event::PollFd::new(
                &pipe,
                rustix::event::PollFlags::IN,
            )];
            let timeout = left.and_then(|left| rustix::event::Timespec::try_from(left).ok());
            match rustix::event::poll(&mut fds, timeout.as_ref()) {
                Ok(0) => break,
                Ok(_) => self.read_ready(),
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => break,
            }
        }
        if let Some(mut pipe) = self.pipe.take() {
            let _ = thread::Builder::new()
                .name("child-output".to_owned())
                .spawn(move || {
                    let mut buffer = vec![0; READ_CHUNK];
                    while pipe.read(&mut buffer).is_ok_and(|read| read > 0) {}
                });
        }
        self.sink
    }
}

fn lock<T>(shared: &Mutex<T>) -> MutexGuard<'_, T> {
    // The sinks hold plain data that is consistent between calls, so a
    // panic elsewhere while one was locked does not make it unusable.
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Raw bytes: the first `cap` of them, or with `tail` the last ones.
pub(super) struct Bytes {
    pub kept: Vec<u8>,
    /// Whether more than `cap` bytes arrived.
    pub cut: bool,
    cap: usize,
    tail: bool,
}

impl Bytes {
    pub(super) fn new(cap: usize, tail: bool) -> Bytes {
        Bytes {
            kept: Vec::new(),
            cut: false,
            cap,
            tail,
        }
    }
}

impl Sink for Bytes {
    fn take(&mut self, chunk: &[u8]) {
        if !self.tail && self.kept.len() >= self.cap {
            self.cut |= !chunk.is_empty();
            return;
        }
        self.kept.extend_from_slice(chunk);
        if self.kept.len() > self.cap {
            self.cut = true;
            if self.tail {
                self.kept.drain(..self.kept.len() - self.cap);
            } else {
                self.kept.truncate(self.cap);
            }
        }
    }
}

/// Output as lines: the last `tail_lines` of them, a capped log on disk and a raw echo.
pub(super) struct Lines {
    tail_lines: usize,
    tail: VecDeque<String>,
    /// The start of the current line, at most `LINE_CAP` bytes of it.
    line: Vec<u8>,
    /// The full length of the current line, including bytes not kept.
    line_len: u64,
    output_bytes: u64,
    log: Option<Log>,
    log_error: Option<io::Error>,
    echo: Option<Box<dyn Write + Send>>,
}

/// What `Lines::close` hands back.
pub(super) struct Closed {
    pub tail: Vec<String>,
    pub output_bytes: u64,
    pub log_error: Option<io::Error>,
}

impl Lines {
    pub(super) fn new(
        tail_lines: usize,
        log: Option<Log>,
        echo: Option<Box<dyn Write + Send>>,
    ) -> Lines {
        Lines {
            tail_lines,
            tail: VecDeque::with_capacity(tail_lines.min(1024)),
            line: Vec::new(),
            line_len: 0,
            output_bytes: 0,
            log,
            log_error: None,
            echo,
        }
    }

    fn echo(&mut self, chunk: &[u8]) {
        if let Some(echo) = &mut self.echo {
            // Echoing is a courtesy to the user: if it fails (say, a closed
            // terminal), it stops and the run goes on.
            if echo.write_all(chunk).and_then(|()| echo.flush()).is_err() {
                self.echo = None;
            }
        }
    }

    fn log(&mut self, chunk: &[u8]) {
        if let Some(log) = &mut self.log
            && let Err(error) = log.write(chunk)
        {
            self.log = None;
            self.log_error.get_or_insert(error);
        }
    }

    fn extend_line(&mut self, bytes: &[u8]) {
        self.line_len += bytes.len() as u64;
        let room = LINE_CAP - self.line.len();
        self.line.extend_from_slice(&bytes[..room.min(bytes.len())]);
    }

    fn end_line(&mut self) {
        let cut = self.line_len > self.line.len() as u64;
        if cut {
            trim_partial_char(&mut self.line);
        } else if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        let text = String::from_utf8_lossy(&self.line);
        let text = if cut {
            format!("{text} [git-prove-it: line of {} bytes cut]", self.line_len)
        } else {
            text.into_owned()
        };
        self.line.clear();
        self.line_len = 0;
        if self.tail_lines == 0 {
            return;
        }
        if self.tail.len() == self.tail_lines {
            self.tail.pop_front();
        }
        self.tail.push_back(text);
    }

    /// Ends the capture: keeps a final line that had no newline, finishes
    /// the log and hands back what the run reports.
    pub(super) fn close(mut self) -> Closed {
        if self.line_len > 0 {
            self.end_line();
        }
        if let Some(mut log) = self.log.take()
            && let Err(error) = log.finish()
        {
            self.log_error.get_or_insert(error);
        }
        if let Some(mut echo) = self.echo.take() {
            let _ = echo.flush();
        }
        Closed {
            tail: self.tail.into(),
            output_bytes: self.output_bytes,
            log_error: self.log_error,
        }
    }
}

impl Sink for Lines {
    fn take(&mut self, chunk: &[u8]) {
        self.output_bytes += chunk.len() as u64;
        self.echo(chunk);
        self.log(chunk);
        let mut rest = chunk;
        while let Some(newline) = rest.iter().position(|&byte| byte == b'\n') {
            self.extend_line(&rest[..newline]);
            self.end_line();
            rest = &rest[newline + 1..];
        }
        self.extend_line(rest);
    }
}

/// A log file that keeps at most `cap` bytes and says where it was cut.
pub(super) struct Log {
    out: BufWriter<File>,
    kept: u64,
    cap: u64,
    cut: bool,
    ends_with_newline: bool,
}

impl Log {
    /// Creates or truncates `path`, mode 0600.
    pub(super) fn open(path: &Path, cap: u64) -> io::Result<Log> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        // The mode above only applies to a new file; an old log may have been
        // readable by others, and the output may hold secrets.
        file.set_permissions(Permissions::from_mode(0o600))?;
        Ok(Log {
            out: BufWriter::new(file),
            kept: 0,
            cap,
            cut: false,
            ends_with_newline: true,
        })
    }

    fn write(&mut self, chunk: &[u8]) -> io::Result<()> {
        let room = usize::try_from(self.cap - self.kept).unwrap_or(usize::MAX);
        let kept = &chunk[..room.min(chunk.len())];
        if let Some(&last) = kept.last() {
            self.out.write_all(kept)?;
            self.kept += kept.len() as u64;
            self.ends_with_newline = last == b'\n';
        }
        if kept.len() < chunk.len() {
            self.cut = true;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.cut {
            if !self.ends_with_newline {
                self.out.write_all(b"\n")?;
            }
            writeln!(
                self.out,
                "[git-prove-it: log truncated after {} bytes]",
                self.kept
            )?;
        }
        self.out.flush()
    }
}

/// Drops a UTF-8 sequence left incomplete at the end of `bytes` by the line
/// cap, so a cut line does not end in a replacement character.
fn trim_partial_char(bytes: &mut Vec<u8>) {
    let len = bytes.len();
    for start in (len.saturating_sub(3)..len).rev() {
        let byte = bytes[start];
        if byte & 0xC0 != 0x80 {
            let width = match byte {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            if len - start < width {
                bytes.truncate(start);
            }
            return;
        }
    }
}
