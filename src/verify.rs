//! Runs verify.sh: this module is the only place that spawns a repository's
//! verify.sh. It owns the child's process group, its timeout, the capture of
//! its combined stdout and stderr (a bounded tail in memory, a capped log on
//! disk, an optional raw echo) and the reading of its exit status. It never
//! prints; the caller decides what the user sees.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, BufWriter, PipeReader, PipeWriter, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

/// How long to wait for the end of the output once verify.sh has exited.
/// A background process it left behind may hold the pipe open for ever, and
/// must not hold the run with it.
const EOF_GRACE: Duration = Duration::from_millis(250);

/// How often the child is polled for its exit.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// How often the caller's progress callback is called.
const TICK_INTERVAL: Duration = Duration::from_millis(200);

/// The most bytes of one line kept in memory, so that a single enormous line
/// cannot exhaust memory.
const LINE_CAP: usize = 4096;

/// The size of one read from the output pipe.
const READ_CHUNK: usize = 64 * 1024;

/// How many times a spawn failing with ETXTBSY is retried, and how long to
/// sleep between tries.
const BUSY_RETRIES: u32 = 20;
const BUSY_PAUSE: Duration = Duration::from_millis(25);

#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error("could not start {path}")]
    Spawn {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("could not capture the output of {path}")]
    Pipe {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("could not write the run log {path}")]
    Log {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("could not wait for {path}")]
    Wait {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// What to run and how to capture it.
pub(crate) struct Request<'a> {
    /// The absolute path of verify.sh; its shebang picks the interpreter.
    pub program: &'a Path,
    /// The worktree root, which becomes the current directory.
    pub workdir: &'a Path,
    /// Environment variables added to the inherited environment.
    pub env: &'a [(OsString, OsString)],
    /// After this long the whole process group is killed.
    pub timeout: Duration,
    /// Where the full output is written (mode 0600), if anywhere.
    pub log_path: Option<&'a Path>,
    /// The most bytes of output the log keeps.
    pub log_cap: u64,
    /// How many of the last lines of output the outcome keeps.
    pub tail_lines: usize,
    /// Where every chunk of output is copied as it arrives, if anywhere.
    pub echo: Option<Box<dyn Write + Send>>,
    /// Set when the user interrupts us: verify.sh sits in its own process group, so the
    /// terminal's Ctrl-C does not reach it, and we must end it ourselves.
    pub interrupt: Option<&'a AtomicBool>,
}

/// How verify.sh ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
    /// It ran past the timeout and its process group was killed.
    TimedOut,
    /// We were interrupted (Ctrl-C, SIGTERM, SIGHUP) and killed its process group.
    Interrupted,
}

/// The result of one run of verify.sh.
pub(crate) struct Outcome {
    pub exit: Exit,
    /// From the spawn to the exit of verify.sh itself.
    pub duration: Duration,
    /// The last `tail_lines` lines of output, oldest first.
    pub tail: Vec<String>,
    /// Every byte of output seen, which may be more than the log kept.
    pub output_bytes: u64,
}

impl Outcome {
    /// Whether verify.sh exited with code 0.
    pub fn passed(&self) -> bool {
        self.exit == Exit::Code(0)
    }
}

impl Exit {
    /// A short lowercase phrase such as "exit code 3",
    /// "killed by signal 9 (SIGKILL)" or "timed out after 5 s".
    pub fn describe(&self, timeout: Duration) -> String {
        match *self {
            Exit::Code(code) => format!("exit code {code}"),
            Exit::Signal(number) => match signal_name(number) {
                Some(name) => format!("killed by signal {number} ({name})"),
                None => format!("killed by signal {number}"),
            },
            Exit::TimedOut => format!("timed out after {} s", seconds(timeout)),
            Exit::Interrupted => "interrupted".to_string(),
        }
    }

    fn from_status(status: ExitStatus) -> Exit {
        match (status.code(), status.signal()) {
            (Some(code), _) => Exit::Code(code),
            (None, Some(number)) => Exit::Signal(number),
            // `wait` only reports processes that ended, and an ended process
            // has either a code or a signal; this arm only satisfies the types.
            (None, None) => Exit::Code(-1),
        }
    }
}

fn signal_name(number: i32) -> Option<&'static str> {
    const NAMES: [(Signal, &str); 9] = [
        (Signal::HUP, "SIGHUP"),
        (Signal::INT, "SIGINT"),
        (Signal::QUIT, "SIGQUIT"),
        (Signal::ABORT, "SIGABRT"),
        (Signal::KILL, "SIGKILL"),
        (Signal::SEGV, "SIGSEGV"),
        (Signal::PIPE, "SIGPIPE"),
        (Signal::ALARM, "SIGALRM"),
        (Signal::TERM, "SIGTERM"),
    ];
    NAMES
        .iter()
        .find(|(signal, _)| signal.as_raw() == number)
        .map(|&(_, name)| name)
}

/// Seconds as "5" or "1.5", without trailing zeros.
fn seconds(duration: Duration) -> String {
    let millis = duration.subsec_millis();
    if millis == 0 {
        duration.as_secs().to_string()
    } else {
        let text = format!("{}.{millis:03}", duration.as_secs());
        text.trim_end_matches('0').to_owned()
    }
}

/// Runs verify.sh to its end or its timeout, calling `on_tick` with the
/// elapsed time every 200 ms or so while it runs.
pub(crate) fn run(req: Request<'_>, on_tick: &mut dyn FnMut(Duration)) -> Result<Outcome, Error> {
    let Request {
        program,
        workdir,
        env,
        timeout,
        log_path,
        log_cap,
        tail_lines,
        echo,
        interrupt,
    } = req;
    let pipe_error = |source| Error::Pipe {
        path: program.to_owned(),
        source,
    };

    // The log is opened before anything is started, so that a bad log path
    // never leaves a running child behind.
    let log = log_path
        .map(|path| {
            open_log(path, log_cap).map_err(|source| Error::Log {
                path: path.to_owned(),
                source,
            })
        })
        .transpose()?;

    let capture = Arc::new(Mutex::new(Capture::new(tail_lines, log, echo)));
    let (reader, writer) = io::pipe().map_err(pipe_error)?;
    // The reader starts before the child: if the spawn fails, the write ends
    // are dropped with the command, and the reader sees EOF and ends.
    let finished = start_reader(reader, Arc::clone(&capture)).map_err(pipe_error)?;
    let mut child = spawn(program, workdir, env, writer)?;

    let start = Instant::now();
    let exit =
        wait(&mut child, timeout, interrupt, start, on_tick).map_err(|source| Error::Wait {
            path: program.to_owned(),
            source,
        })?;
    let duration = start.elapsed();

    // The reader normally reports EOF at once; when a background process
    // still holds the pipe, the run goes on without it and that process is
    // left alone.
    let _ = finished.recv_timeout(EOF_GRACE);
    let closed = lock(&capture).close();

    if let (Some(source), Some(path)) = (closed.log_error, log_path) {
        return Err(Error::Log {
            path: path.to_owned(),
            source,
        });
    }
    Ok(Outcome {
        exit,
        duration,
        tail: closed.tail,
        output_bytes: closed.output_bytes,
    })
}

fn open_log(path: &Path, cap: u64) -> io::Result<Log> {
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

fn spawn(
    program: &Path,
    workdir: &Path,
    env: &[(OsString, OsString)],
    writer: PipeWriter,
) -> Result<Child, Error> {
    let stdout = writer.try_clone().map_err(|source| Error::Pipe {
        path: program.to_owned(),
        source,
    })?;
    let mut command = Command::new(program);
    command
        .current_dir(workdir)
        .envs(env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(writer)
        .process_group(0);
    let mut retries = 0;
    // The command, and with it the parent's copies of the pipe's write end,
    // is dropped on return, so that EOF can arrive once the child's side is
    // closed.
    loop {
        match command.spawn() {
            Ok(child) => return Ok(child),
            // ETXTBSY means the script is still open for writing somewhere,
            // typically a copy of a just-closed descriptor held by a process
            // another thread forked and has not yet exec'd. That clears by
            // itself within moments.
            Err(error)
                if error.kind() == io::ErrorKind::ExecutableFileBusy && retries < BUSY_RETRIES =>
            {
                retries += 1;
                thread::sleep(BUSY_PAUSE);
            }
            Err(source) => {
                return Err(Error::Spawn {
                    path: program.to_owned(),
                    source,
                });
            }
        }
    }
}

/// Waits for the child, killing its whole process group at the timeout.
fn wait(
    child: &mut Child,
    timeout: Duration,
    interrupt: Option<&AtomicBool>,
    start: Instant,
    on_tick: &mut dyn FnMut(Duration),
) -> io::Result<Exit> {
    let mut last_tick = start;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(Exit::from_status(status)),
            Ok(None) => {}
            Err(error) => {
                kill_group(child);
                let _ = child.wait();
                return Err(error);
            }
        }
        let now = Instant::now();
        let elapsed = now.duration_since(start);
        if elapsed >= timeout {
            kill_group(child);
            child.wait()?;
            return Ok(Exit::TimedOut);
        }
        if interrupt.is_some_and(|flag| flag.load(Ordering::Relaxed)) {
            kill_group(child);
            child.wait()?;
            return Ok(Exit::Interrupted);
        }
        if now.duration_since(last_tick) >= TICK_INTERVAL {
            on_tick(elapsed);
            last_tick = now;
        }
        thread::sleep(POLL_INTERVAL.min(timeout.saturating_sub(elapsed)));
    }
}

/// Sends SIGKILL to the child's process group. The child has not been reaped
/// yet, so its pid, which is also the group's id, cannot have been reused.
fn kill_group(child: &Child) {
    // ESRCH, the only failure possible for our own child's group, means
    // nothing is left to kill.
    let _ = kill_process_group(Pid::from_child(child), Signal::KILL);
}

/// Starts the thread that reads the combined output. The returned receiver
/// reports (by a message or by disconnecting) when the thread has seen EOF.
fn start_reader(mut reader: PipeReader, capture: Arc<Mutex<Capture>>) -> io::Result<Receiver<()>> {
    let (finished, receiver) = mpsc::channel();
    thread::Builder::new()
        .name("verify-output".to_owned())
        .spawn(move || {
            let mut buffer = vec![0; READ_CHUNK];
            loop {
                match reader.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(read) => lock(&capture).take(&buffer[..read]),
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    // A pipe read does not fail in practice; if one did, the
                    // output ends there rather than failing the run.
                    Err(_) => break,
                }
            }
            let _ = finished.send(());
        })?;
    Ok(receiver)
}

fn lock(capture: &Mutex<Capture>) -> MutexGuard<'_, Capture> {
    // The capture holds plain data that is consistent between calls, so a
    // panic elsewhere while it was locked does not make it unusable.
    capture.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The output seen so far, shared between the reader thread and `run`.
struct Capture {
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
    /// Set when `run` has taken the result. Output arriving later, from a
    /// background process, is read and dropped so that process never blocks
    /// on a full pipe.
    closed: bool,
}

struct Log {
    out: BufWriter<File>,
    kept: u64,
    cap: u64,
    cut: bool,
    ends_with_newline: bool,
}

/// What `Capture::close` hands back to `run`.
struct Closed {
    tail: Vec<String>,
    output_bytes: u64,
    log_error: Option<io::Error>,
}

impl Capture {
    fn new(tail_lines: usize, log: Option<Log>, echo: Option<Box<dyn Write + Send>>) -> Capture {
        Capture {
            tail_lines,
            tail: VecDeque::with_capacity(tail_lines.min(1024)),
            line: Vec::new(),
            line_len: 0,
            output_bytes: 0,
            log,
            log_error: None,
            echo,
            closed: false,
        }
    }

    fn take(&mut self, chunk: &[u8]) {
        if self.closed {
            return;
        }
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
    /// the log and hands back what `run` reports.
    fn close(&mut self) -> Closed {
        self.closed = true;
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
            tail: std::mem::take(&mut self.tail).into(),
            output_bytes: self.output_bytes,
            log_error: self.log_error.take(),
        }
    }
}

impl Log {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::MetadataExt;
    use tempfile::TempDir;

    /// A tempdir with `verify.sh` holding `body`, made executable.
    fn script(body: &str) -> (TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("verify.sh");
        fs::write(&path, body).unwrap();
        fs::set_permissions(&path, Permissions::from_mode(0o755)).unwrap();
        (dir, path)
    }

    fn request<'a>(dir: &'a TempDir, program: &'a Path) -> Request<'a> {
        Request {
            program,
            workdir: dir.path(),
            env: &[],
            timeout: Duration::from_secs(20),
            log_path: None,
            log_cap: 8 << 20,
            tail_lines: 50,
            echo: None,
            interrupt: None,
        }
    }

    fn run_quietly(req: Request<'_>) -> Result<Outcome, Error> {
        run(req, &mut |_| {})
    }

    /// Whether `pid` is gone or only a zombie waiting for its reaper, which
    /// may be slow (or absent) inside a container.
    fn is_dead(pid: i32) -> bool {
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        }
    }

    fn wait_until_dead(pid: i32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if is_dead(pid) {
                return true;
            }
            thread::sleep(Duration::from_millis(20));
        }
        is_dead(pid)
    }

    fn read_pid(path: &Path) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Ok(text) = fs::read_to_string(path)
                && let Ok(pid) = text.trim().parse()
            {
                return pid;
            }
            assert!(Instant::now() < deadline, "no pid in {}", path.display());
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// An echo target the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn exit_zero_keeps_the_output_lines() {
        let (dir, path) = script("#!/bin/sh\necho one\necho two\n");
        let outcome = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(outcome.exit, Exit::Code(0));
        assert!(outcome.passed());
        assert_eq!(outcome.tail, ["one", "two"]);
        assert_eq!(outcome.output_bytes, 8);
    }

    #[test]
    fn non_zero_exit_code_is_reported() {
        let (dir, path) = script("#!/bin/sh\necho failing\nexit 3\n");
        let outcome = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(outcome.exit, Exit::Code(3));
        assert!(!outcome.passed());
        assert_eq!(outcome.exit.describe(Duration::from_secs(5)), "exit code 3");
        assert_eq!(outcome.tail, ["failing"]);
    }

    #[test]
    fn stdout_and_stderr_are_interleaved_in_order() {
        let (dir, path) = script("#!/bin/sh\necho a\necho b >&2\necho c\necho d >&2\n");
        let outcome = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(outcome.tail, ["a", "b", "c", "d"]);
    }

    #[test]
    fn only_the_last_lines_are_kept() {
        let (dir, path) = script("#!/bin/sh\nseq 1 10000\n");
        let mut req = request(&dir, &path);
        req.tail_lines = 3;
        let outcome = run_quietly(req).unwrap();
        assert_eq!(outcome.tail, ["9998", "9999", "10000"]);
        let expected: usize = (1..=10000).map(|n: u32| n.to_string().len() + 1).sum();
        assert_eq!(outcome.output_bytes, expected as u64);
    }

    #[test]
    fn a_huge_line_is_cut_in_memory() {
        let (dir, path) =
            script("#!/bin/sh\necho before\nhead -c 5000000 /dev/zero | tr '\\0' x\n");
        let outcome = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(outcome.exit, Exit::Code(0));
        assert_eq!(outcome.output_bytes, 7 + 5_000_000);
        assert_eq!(outcome.tail.len(), 2);
        assert_eq!(outcome.tail[0], "before");
        let last = &outcome.tail[1];
        assert!(last.len() < LINE_CAP + 100, "kept {} bytes", last.len());
        assert!(last.starts_with(&"x".repeat(LINE_CAP)));
        assert!(last.ends_with(" [git-prove-it: line of 5000000 bytes cut]"));
    }

    #[test]
    fn a_cut_line_does_not_end_in_half_a_character() {
        // 4095 ASCII bytes and then "é" (two bytes) straddle the cap.
        let (dir, path) = script(&format!(
            "#!/bin/sh\nprintf '%s\\303\\251tail\\n' {}\n",
            "y".repeat(LINE_CAP - 1)
        ));
        let outcome = run_quietly(request(&dir, &path)).unwrap();
        let line = &outcome.tail[0];
        assert!(line.starts_with(&"y".repeat(LINE_CAP - 1)));
        assert!(!line.contains('\u{FFFD}'), "{line}");
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let (dir, path) = script("#!/bin/sh\nprintf '\\377\\376ok\\n'\n");
        let outcome = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(outcome.tail, ["\u{FFFD}\u{FFFD}ok"]);
    }

    #[test]
    fn carriage_returns_are_stripped_and_a_last_line_without_newline_is_kept() {
        let (dir, path) = script("#!/bin/sh\nprintf 'dos\\r\\nunix\\nlast'\n");
        let outcome = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(outcome.tail, ["dos", "unix", "last"]);
    }

    #[test]
    fn environment_variables_reach_the_script() {
        let (dir, path) = script("#!/bin/sh\necho \"$PROVE_IT $PROVE_IT_TREE $PROVE_IT_HOST\"\n");
        let env = [
            (OsString::from("PROVE_IT"), OsString::from("1")),
            (OsString::from("PROVE_IT_TREE"), OsString::from("abc123")),
            (OsString::from("PROVE_IT_HOST"), OsString::from("box")),
        ];
        let mut req = request(&dir, &path);
        req.env = &env;
        let outcome = run_quietly(req).unwrap();
        assert_eq!(outcome.tail, ["1 abc123 box"]);
    }

    #[test]
    fn the_workdir_is_the_current_directory() {
        let (dir, path) = script("#!/bin/sh\npwd -P\n");
        let workdir = tempfile::tempdir().unwrap();
        let mut req = request(&dir, &path);
        req.workdir = workdir.path();
        let outcome = run_quietly(req).unwrap();
        let expected = workdir.path().canonicalize().unwrap();
        assert_eq!(outcome.tail, [expected.to_str().unwrap()]);
    }

    #[test]
    fn stdin_is_closed() {
        let (dir, path) = script("#!/bin/sh\ncat\necho done\n");
        let mut req = request(&dir, &path);
        req.timeout = Duration::from_secs(9);
        let started = Instant::now();
        let outcome = run_quietly(req).unwrap();
        assert_eq!(outcome.exit, Exit::Code(0));
        assert_eq!(outcome.tail, ["done"]);
        assert!(started.elapsed() < Duration::from_secs(9));
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        let (dir, path) =
            script("#!/bin/sh\nsleep 30 &\necho $! > grandchild.pid\necho started\nsleep 30\n");
        let mut req = request(&dir, &path);
        req.timeout = Duration::from_secs(1);
        let started = Instant::now();
        let outcome = run_quietly(req).unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(outcome.exit, Exit::TimedOut);
        assert_eq!(
            outcome.exit.describe(Duration::from_secs(1)),
            "timed out after 1 s"
        );
        assert_eq!(outcome.tail, ["started"]);
        let grandchild = read_pid(&dir.path().join("grandchild.pid"));
        assert!(wait_until_dead(grandchild), "pid {grandchild} survived");
    }

    #[test]
    fn a_background_child_holding_the_pipe_does_not_hang_the_run() {
        let (dir, path) =
            script("#!/bin/sh\nsleep 30 &\necho $! > background.pid\necho bye\nexit 0\n");
        let started = Instant::now();
        let outcome = run_quietly(request(&dir, &path)).unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(outcome.exit, Exit::Code(0));
        assert_eq!(outcome.tail, ["bye"]);
        let background = read_pid(&dir.path().join("background.pid"));
        assert!(!is_dead(background), "the background child was killed");
        let pid = Pid::from_raw(background).unwrap();
        rustix::process::kill_process(pid, Signal::KILL).unwrap();
    }

    #[test]
    fn death_by_signal_is_reported() {
        let (dir, path) = script("#!/bin/sh\necho dying\nkill -TERM $$\nsleep 5\n");
        let outcome = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(outcome.exit, Exit::Signal(15));
        assert_eq!(
            outcome.exit.describe(Duration::from_secs(1)),
            "killed by signal 15 (SIGTERM)"
        );
        assert_eq!(outcome.tail, ["dying"]);
    }

    #[test]
    fn the_log_gets_the_full_output() {
        let (dir, path) = script("#!/bin/sh\necho out\necho err >&2\nprintf end\n");
        let log = dir.path().join("run.log");
        let mut req = request(&dir, &path);
        req.log_path = Some(&log);
        run_quietly(req).unwrap();
        assert_eq!(fs::read_to_string(&log).unwrap(), "out\nerr\nend");
        assert_eq!(fs::metadata(&log).unwrap().mode() & 0o777, 0o600);
    }

    #[test]
    fn the_log_is_capped_and_says_so() {
        let (dir, path) = script("#!/bin/sh\nseq 1 10000\n");
        let log = dir.path().join("run.log");
        fs::write(&log, "an old log that is longer than the cap").unwrap();
        fs::set_permissions(&log, Permissions::from_mode(0o644)).unwrap();
        let mut req = request(&dir, &path);
        req.log_path = Some(&log);
        req.log_cap = 10;
        let outcome = run_quietly(req).unwrap();
        assert!(outcome.output_bytes > 10);
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "1\n2\n3\n4\n5\n[git-prove-it: log truncated after 10 bytes]\n"
        );
        assert_eq!(fs::metadata(&log).unwrap().mode() & 0o777, 0o600);
    }

    #[test]
    fn a_log_cut_mid_line_ends_the_line_before_the_notice() {
        let (dir, path) = script("#!/bin/sh\necho abcdef\n");
        let log = dir.path().join("run.log");
        let mut req = request(&dir, &path);
        req.log_path = Some(&log);
        req.log_cap = 3;
        run_quietly(req).unwrap();
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "abc\n[git-prove-it: log truncated after 3 bytes]\n"
        );
    }

    #[test]
    fn an_unwritable_log_is_an_error_before_anything_runs() {
        let (dir, path) = script("#!/bin/sh\ntouch ran\n");
        let log = dir.path().join("missing-dir").join("run.log");
        let mut req = request(&dir, &path);
        req.log_path = Some(&log);
        let error = run_quietly(req).err().unwrap();
        assert!(matches!(error, Error::Log { .. }), "{error:?}");
        assert!(!dir.path().join("ran").exists());
    }

    #[test]
    fn the_echo_gets_every_byte() {
        let (dir, path) = script("#!/bin/sh\necho a\nprintf '\\377b'\n");
        let echo = Shared::default();
        let mut req = request(&dir, &path);
        req.echo = Some(Box::new(echo.clone()));
        run_quietly(req).unwrap();
        assert_eq!(*echo.0.lock().unwrap(), b"a\n\xffb");
    }

    #[test]
    fn a_script_without_shebang_is_a_spawn_error() {
        let (dir, path) = script("echo no shebang here\n");
        let error = run_quietly(request(&dir, &path)).err().unwrap();
        let Error::Spawn { source, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(
            source.raw_os_error(),
            Some(rustix::io::Errno::NOEXEC.raw_os_error())
        );
    }

    #[test]
    fn a_missing_script_is_a_spawn_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("verify.sh");
        let error = run_quietly(request(&dir, &path)).err().unwrap();
        assert!(matches!(error, Error::Spawn { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            format!("could not start {}", path.display())
        );
    }

    #[test]
    fn a_script_without_execute_permission_is_a_spawn_error() {
        let (dir, path) = script("#!/bin/sh\nexit 0\n");
        fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
        let error = run_quietly(request(&dir, &path)).err().unwrap();
        assert!(matches!(error, Error::Spawn { .. }), "{error:?}");
    }

    #[test]
    fn on_tick_is_called_while_the_script_runs() {
        let (dir, path) = script("#!/bin/sh\nsleep 1.5\n");
        let mut ticks = Vec::new();
        let outcome = run(request(&dir, &path), &mut |elapsed| ticks.push(elapsed)).unwrap();
        assert_eq!(outcome.exit, Exit::Code(0));
        assert!(!ticks.is_empty());
        assert!(ticks.windows(2).all(|pair| pair[0] <= pair[1]));
    }

    #[test]
    fn describe_names_common_signals_and_fractional_timeouts() {
        let timeout = Duration::from_millis(1500);
        assert_eq!(
            Exit::Signal(9).describe(timeout),
            "killed by signal 9 (SIGKILL)"
        );
        assert_eq!(Exit::Signal(64).describe(timeout), "killed by signal 64");
        assert_eq!(Exit::TimedOut.describe(timeout), "timed out after 1.5 s");
        assert_eq!(Exit::Code(0).describe(timeout), "exit code 0");
    }

    #[test]
    fn an_interrupt_kills_the_whole_group() {
        let (dir, script) = script("#!/bin/sh\nsleep 30 &\necho $! > grandchild.pid\nsleep 30\n");
        let flag = AtomicBool::new(false);
        let mut req = request(&dir, &script);
        req.interrupt = Some(&flag);
        let started = Instant::now();
        let outcome = run(req, &mut |elapsed| {
            if elapsed >= Duration::from_millis(400) {
                flag.store(true, Ordering::Relaxed);
            }
        })
        .unwrap();
        assert_eq!(outcome.exit, Exit::Interrupted);
        assert!(started.elapsed() < Duration::from_secs(10));
        let grandchild = read_pid(&dir.path().join("grandchild.pid"));
        assert!(
            wait_until_dead(grandchild),
            "the background sleep survived the interrupt"
        );
    }
}
