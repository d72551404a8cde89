//! Running one `Request`: the spawn, the stdin feeder and output readers, the wait with its
//! timeout and interrupt, the kill of the whole process group, and the result.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt as _};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process_group, waitid};

use super::capture::{Bytes, Inline, Lines, Log, Reader};
use super::exit::Exit;
use super::request::{Combined, OnInterrupt, Request, Stdin, Stream};

/// How late a timeout or an interrupt may be seen while a child runs (its exit is seen at
/// once, through a pidfd, where the kernel has them).
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// How often the caller's progress callback is called.
const TICK_INTERVAL: Duration = Duration::from_millis(200);

/// How many times a spawn failing with ETXTBSY is retried, and how long to
/// sleep between tries.
const BUSY_RETRIES: u32 = 20;
const BUSY_PAUSE: Duration = Duration::from_millis(25);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("could not start {program}")]
    Spawn {
        program: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("could not capture the output of {program}")]
    Pipe {
        program: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("could not write the run log {path}")]
    Log {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("could not wait for {program}")]
    Wait {
        program: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// The operating system's error underneath, for callers whose messages name the program
    /// themselves.
    pub fn into_source(self) -> io::Error {
        match self {
            Error::Spawn { source, .. }
            | Error::Pipe { source, .. }
            | Error::Log { source, .. }
            | Error::Wait { source, .. } => source,
        }
    }
}

/// How a child ended and what it printed.
#[derive(Debug)]
pub struct Finished {
    /// The wait status as the operating system gave it (after our kill, when we killed it).
    pub status: ExitStatus,
    /// How it ended, as far as the caller is concerned: a timeout or an interrupt is reported
    /// as such, not as the SIGKILL that carried it out.
    pub exit: Exit,
    /// From the spawn to the exit of the child itself.
    pub duration: Duration,
    /// What was kept of stdout (`Stream::Head` or `Stream::Tail`); empty otherwise.
    pub stdout: Vec<u8>,
    /// Whether stdout went past its cap.
    pub stdout_cut: bool,
    /// What was kept of stderr; empty unless kept.
    pub stderr: Vec<u8>,
    /// With `Combined`: the last `tail_lines` lines of output, oldest first.
    pub tail: Vec<String>,
    /// With `Combined`: every byte of output seen, which may be more than the log kept.
    pub output_bytes: u64,
}

impl Finished {
    /// Whether it exited with code 0.
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    /// The kept stderr, lossily decoded and trimmed, for an error message.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).trim().to_string()
    }
}

impl Request<'_> {
    /// Runs the child to its end, its timeout or an interrupt.
    pub fn run(self) -> Result<Finished, Error> {
        self.supervise(None)
    }

    /// As `run`, calling `on_tick` with the elapsed time every 200 ms or so while it runs.
    pub fn run_ticking(self, on_tick: &mut dyn FnMut(Duration)) -> Result<Finished, Error> {
        self.supervise(Some(on_tick))
    }

    fn supervise(self, on_tick: Option<&mut dyn FnMut(Duration)>) -> Result<Finished, Error> {
        let own_group = self.own_group();
        let Request {
            mut command,
            stdin,
            stdout,
            stderr,
            combined,
            timeout,
            interrupt,
            kill_group_on_exit,
            eof_grace,
            enter,
        } = self;
        let program = PathBuf::from(command.get_program());
        let pipe_error = |source| Error::Pipe {
            program: program.clone(),
            source,
        };

        // The log is opened before anything is started, so that a bad log path
        // never leaves a running child behind.
        let (lines, log_path) = match combined {
            Some(combined) => {
                let (lines, path) = combined_lines(combined)?;
                (Some(lines), path)
            }
            None => (None, None),
        };
        // The child's ends of its standard streams, and ours.
        let (stdin_end, stdin_pipe) = stdin_ends(&stdin).map_err(pipe_error)?;
        let Ends {
            out: out_end,
            err: err_end,
            out_pipe,
            err_pipe,
            inline,
        } = output_ends(lines, stdout, stderr).map_err(pipe_error)?;
        let mut lines = inline;
        let ends = [stdin_end, out_end, err_end];
        let pid = start(&mut command, enter, ends, own_group, &program)?;
        // Our copies of the child's ends went with the start, so that EOF can arrive once the
        // child's side is closed.
        drop(command);
        let start = Instant::now();

        if let (Stdin::Bytes(input), Some(mut pipe)) = (stdin, stdin_pipe) {
            // A child that never reads its stdin must not block us: write from a thread, and
            // ignore the broken pipe it gets when the child exits without reading.
            thread::spawn(move || {
                let _ = pipe.write_all(&input);
            });
        }
        let mut child = Running {
            pid,
            stdout: out_pipe,
            stderr: err_pipe,
        };
        let readers = read_streams(&mut child, stdout, stderr);
        let (out, err) = match readers {
            Ok(readers) => readers,
            Err(source) => {
                end(&child, own_group);
                return Err(pipe_error(source));
            }
        };

        let watch = Watch {
            own_group,
            timeout,
            interrupt,
            kill_group_on_exit,
            start,
        };
        let (status, ended) =
            watch
                .wait(&mut child, on_tick, lines.as_mut())
                .map_err(|source| Error::Wait {
                    program: program.clone(),
                    source,
                })?;
        let duration = start.elapsed();
        let output = Output {
            out,
            err,
            lines,
            log_path,
            eof_grace,
        };
        let exit = ended.unwrap_or_else(|| Exit::from_status(status));
        output.finish(status, exit, duration)
    }
}

/// What is read of a child's output, once it has ended: each stream kept in memory, the lines
/// of the combined one and its log.
struct Output {
    out: Option<Reader<Bytes>>,
    err: Option<Reader<Bytes>>,
    lines: Option<Inline<Lines>>,
    log_path: Option<PathBuf>,
    /// How long a stream may stay open after the child ended (a grandchild holding it).
    eof_grace: Option<Duration>,
}

impl Output {
    /// How the child ended, with what its streams held; an error when the log could not be
    /// written.
    fn finish(self, status: ExitStatus, exit: Exit, duration: Duration) -> Result<Finished, Error> {
        let grace = self.eof_grace;
        let (stdout, stdout_cut) = self.out.map_or((Vec::new(), false), |reader| {
            let bytes = reader.finish(grace);
            (bytes.kept, bytes.cut)
        });
        let stderr = self
            .err
            .map_or(Vec::new(), |reader| reader.finish(grace).kept);
        let (tail, output_bytes) = match self.lines {
            Some(reader) => {
                let closed = reader.finish(grace).close();
                if let (Some(source), Some(path)) = (closed.log_error, self.log_path) {
                    return Err(Error::Log { path, source });
                }
                (closed.tail, closed.output_bytes)
            }
            None => (Vec::new(), 0),
        };
        Ok(Finished {
            status,
            exit,
            duration,
            stdout,
            stdout_cut,
            stderr,
            tail,
            output_bytes,
        })
    }
}

/// The reader of a child's output combined on one pipe: its last lines, its log opened (and
/// the log's path), its echo.
fn combined_lines(combined: Combined) -> Result<(Lines, Option<PathBuf>), Error> {
    let (log, path) = match combined.log {
        Some((path, cap)) => {
            let log = Log::open(&path, cap).map_err(|source| Error::Log {
                path: path.clone(),
                source,
            })?;
            (Some(log), Some(path))
        }
        None => (None, None),
    };
    Ok((Lines::new(combined.tail_lines, log, combined.echo), path))
}

/// The child's end of its stdin, and ours when we write to it.
fn stdin_ends(stdin: &Stdin) -> io::Result<(End, Option<std::fs::File>)> {
    Ok(match stdin {
        Stdin::Null => (End::null(false)?, None),
        Stdin::Inherit => (End::Inherit, None),
        Stdin::Bytes(_) => {
            let (reader, writer) = io::pipe()?;
            (
                End::Fd(reader.into()),
                Some(std::fs::File::from(OwnedFd::from(writer))),
            )
        }
    })
}

/// The child's ends of its stdout and stderr, and ours.
struct Ends {
    out: End,
    err: End,
    out_pipe: Option<std::fs::File>,
    err_pipe: Option<std::fs::File>,
    /// Both streams on one pipe, read by the wait itself.
    inline: Option<Inline<Lines>>,
}

/// Both streams on one pipe read line by line when `lines` is given, else each as asked.
fn output_ends(lines: Option<Lines>, stdout: Stream, stderr: Stream) -> io::Result<Ends> {
    Ok(match lines {
        Some(lines) => {
            let (reader, writer) = io::pipe()?;
            // Read by the wait, on this thread.
            let reader = Inline::new(reader, lines);
            let out = End::Fd(writer.try_clone()?.into());
            Ends {
                out,
                err: End::Fd(writer.into()),
                out_pipe: None,
                err_pipe: None,
                inline: Some(reader),
            }
        }
        None => {
            let (out, out_pipe) = End::of(stdout)?;
            let (err, err_pipe) = End::of(stderr)?;
            Ends {
                out,
                err,
                out_pipe,
                err_pipe,
                inline: None,
            }
        }
    })
}

/// The child's end of one of its standard streams.
enum End {
    /// Ours, shared.
    Inherit,
    /// A descriptor given to it: `/dev/null` or a pipe's end.
    Fd(OwnedFd),
}

impl End {
    fn null(write: bool) -> io::Result<End> {
        let file = std::fs::OpenOptions::new()
            .read(!write)
            .write(write)
            .open("/dev/null")?;
        Ok(End::Fd(file.into()))
    }

    /// The child's end for `stream`, and ours to read when it is kept.
    fn of(stream: Stream) -> io::Result<(End, Option<std::fs::File>)> {
        Ok(match stream {
            Stream::Inherit => (End::Inherit, None),
            Stream::Null => (End::null(true)?, None),
            Stream::Head(_) | Stream::Tail(_) => {
                let (reader, writer) = io::pipe()?;
                (
                    End::Fd(writer.into()),
                    Some(std::fs::File::from(OwnedFd::from(reader))),
                )
            }
        })
    }

    fn stdio(self) -> Stdio {
        match self {
            End::Inherit => Stdio::inherit(),
            End::Fd(fd) => Stdio::from(fd),
        }
    }
}

/// A child started and not yet reaped, with the pipes of the streams kept in memory.
struct Running {
    pid: Pid,
    stdout: Option<std::fs::File>,
    stderr: Option<std::fs::File>,
}

impl Running {
    /// Reaps it.
    fn wait(&self) -> io::Result<ExitStatus> {
        loop {
            match rustix::process::waitpid(Some(self.pid), rustix::process::WaitOptions::empty()) {
                Ok(Some((_, status))) => return Ok(ExitStatus::from_raw(status.as_raw())),
                Ok(None) => {}
                Err(rustix::io::Errno::INTR) => {}
                Err(error) => return Err(error.into()),
            }
        }
    }

    fn kill(&self) {
        // ESRCH, the only failure possible for our own unreaped child, means it is gone.
        let _ = rustix::process::kill_process(self.pid, Signal::KILL);
    }
}

/// Starts the child: through the spawner when it enters namespaces (a fork of this process
/// costs more than the script), else with std's `Command`.
fn start(
    command: &mut std::process::Command,
    enter: Option<super::enter::Entry>,
    ends: [End; 3],
    own_group: bool,
    program: &std::path::Path,
) -> Result<Pid, Error> {
    if let Some(entry) = &enter {
        let env = environment(command);
        let order = super::spawner::Order {
            program: command.get_program(),
            args: command.get_args().collect(),
            env,
            own_group,
        };
        let (ours_in, ours_out, ours_err) = (io::stdin(), io::stdout(), io::stderr());
        let stdio = [
            stdio_fd(&ends[0], ours_in.as_fd()),
            stdio_fd(&ends[1], ours_out.as_fd()),
            stdio_fd(&ends[2], ours_err.as_fd()),
        ];
        let (user, mount, dir) = entry.fds();
        let fds = super::spawner::Ends {
            user,
            mount,
            dir,
            stdio,
        };
        if let Some(started) = retried(program, || super::spawner::spawn(&order, &fds)) {
            return started;
        }
    }
    if let Some(entry) = enter {
        super::enter::in_child(command, entry);
    }
    let [stdin, stdout, stderr] = ends;
    command
        .stdin(stdin.stdio())
        .stdout(stdout.stdio())
        .stderr(stderr.stdio());
    if own_group {
        command.process_group(0);
    }
    let child = retried(program, || Some(command.spawn())).expect("std always tries")?;
    Ok(Pid::from_child(&child))
}

fn stdio_fd<'a>(end: &'a End, ours: BorrowedFd<'a>) -> BorrowedFd<'a> {
    match end {
        End::Inherit => ours,
        End::Fd(fd) => fd.as_fd(),
    }
}

/// The whole environment `command` gives its child: ours, with its changes.
fn environment(command: &std::process::Command) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| !command.get_envs().any(|(changed, _)| changed == name))
        .collect();
    env.extend(
        command
            .get_envs()
            .filter_map(|(name, value)| Some((name.to_owned(), value?.to_owned()))),
    );
    env
}

type Readers = (Option<Reader<Bytes>>, Option<Reader<Bytes>>);

/// Starts the readers of the streams kept in memory. Each pipe is drained on its own thread, so
/// that a full pipe never stalls the child.
fn read_streams(child: &mut Running, stdout: Stream, stderr: Stream) -> io::Result<Readers> {
    let sink = |stream| match stream {
        Stream::Head(cap) => Some(Bytes::new(cap, false)),
        Stream::Tail(cap) => Some(Bytes::new(cap, true)),
        _ => None,
    };
    let out = match (child.stdout.take(), sink(stdout)) {
        (Some(pipe), Some(sink)) => Some(Reader::start(pipe, sink)?),
        _ => None,
    };
    let err = match (child.stderr.take(), sink(stderr)) {
        (Some(pipe), Some(sink)) => Some(Reader::start(pipe, sink)?),
        _ => None,
    };
    Ok((out, err))
}

/// `attempt` tried again while the program is busy (`None`: it could not be tried at all).
fn retried<T>(
    program: &std::path::Path,
    mut attempt: impl FnMut() -> Option<io::Result<T>>,
) -> Option<Result<T, Error>> {
    let mut retries = 0;
    loop {
        match attempt()? {
            Ok(started) => return Some(Ok(started)),
            // ETXTBSY means the program is still open for writing somewhere,
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
                return Some(Err(Error::Spawn {
                    program: program.to_owned(),
                    source,
                }));
            }
        }
    }
}

/// Ends a child we give up on: its group killed when it has one, else itself, then reaped.
fn end(child: &Running, own_group: bool) {
    if own_group {
        kill_group(child);
    } else {
        child.kill();
    }
    let _ = child.wait();
}

/// Sends SIGKILL to the child's process group. The child has not been reaped
/// yet, so its pid, which is also the group's id, cannot have been reused.
fn kill_group(child: &Running) {
    // ESRCH, the only failure possible for our own child's group, means
    // nothing is left to kill.
    let _ = kill_process_group(child.pid, Signal::KILL);
}

/// What the wait watches for.
struct Watch<'a> {
    own_group: bool,
    timeout: Option<Duration>,
    interrupt: Option<(&'a AtomicBool, OnInterrupt)>,
    kill_group_on_exit: bool,
    start: Instant,
}

impl Watch<'_> {
    /// Waits for the child; the `Exit` is `Some` when we ended it (timeout, interrupt).
    ///
    /// The child's exit is seen without reaping it (`WNOWAIT`), so that its group can still be
    /// killed while its id cannot be reused; it is reaped after.
    fn wait(
        &self,
        child: &mut Running,
        mut on_tick: Option<&mut dyn FnMut(Duration)>,
        mut output: Option<&mut Inline<Lines>>,
    ) -> io::Result<(ExitStatus, Option<Exit>)> {
        let pid = child.pid;
        // The output read on this thread needs the pause: a blocking wait would leave a full
        // pipe stalling the child.
        let polling = self.timeout.is_some()
            || self.interrupt.is_some()
            || on_tick.is_some()
            || output.is_some();
        let mut options = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
        if polling {
            options |= WaitIdOptions::NOHANG;
        }
        let mut last_tick = self.start;
        // Woken by the child's exit at once (a pidfd becomes readable), rather than seeing it
        // at the next pause's end; the pause still bounds how late a timeout, an interrupt or
        // a tick is seen. Kernels before 5.3 have no pidfd: there the pause is slept.
        #[cfg(target_os = "linux")]
        let exited = if polling {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        } else {
            None
        };
        #[cfg(not(target_os = "linux"))]
        let exited: Option<OwnedFd> = None;
        loop {
            match waitid(WaitId::Pid(pid), options) {
                Ok(Some(_)) => break,
                Ok(None) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(error) => {
                    end(child, self.own_group);
                    return Err(error.into());
                }
            }
            if !polling {
                continue;
            }
            let now = Instant::now();
            let elapsed = now.duration_since(self.start);
            if let Some(timeout) = self.timeout
                && elapsed >= timeout
            {
                kill_group(child);
                return Ok((child.wait()?, Some(Exit::TimedOut)));
            }
            if let Some((flag, OnInterrupt::Kill)) = self.interrupt
                && flag.load(Ordering::Relaxed)
            {
                kill_group(child);
                return Ok((child.wait()?, Some(Exit::Interrupted)));
            }
            if let Some(on_tick) = on_tick.as_deref_mut()
                && now.duration_since(last_tick) >= TICK_INTERVAL
            {
                on_tick(elapsed);
                last_tick = now;
            }
            let pause = match self.timeout {
                Some(timeout) => POLL_INTERVAL.min(timeout.saturating_sub(elapsed)),
                None => POLL_INTERVAL,
            };
            let pipe = output.as_deref().and_then(Inline::pipe);
            match rustix::event::Timespec::try_from(pause) {
                Ok(pause) if exited.is_some() || pipe.is_some() => {
                    let mut fds: Vec<rustix::event::PollFd<'_>> = exited
                        .iter()
                        .map(|pidfd| {
                            rustix::event::PollFd::new(pidfd, rustix::event::PollFlags::IN)
                        })
                        .chain(pipe.as_ref().map(|pipe| {
                            rustix::event::PollFd::new(pipe, rustix::event::PollFlags::IN)
                        }))
                        .collect();
                    // EINTR (a signal, such as the interrupt's) only ends the pause early.
                    let _ = rustix::event::poll(&mut fds, Some(&pause));
                    let readable =
                        pipe.is_some() && fds.last().is_some_and(|fd| !fd.revents().is_empty());
                    drop(fds);
                    if readable && let Some(output) = output.as_deref_mut() {
                        output.read_ready();
                    }
                }
                _ => thread::sleep(pause),
            }
        }
        if self.kill_group_on_exit {
            kill_group(child);
        }
        Ok((child.wait()?, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::testing::{is_dead, read_pid, wait_until_dead};
    use crate::process::{Combined, Stdin, Stream};

    fn sh(script: &str) -> Request<'static> {
        Request::new("sh").arg("-c").arg(script)
    }

    fn lines(tail_lines: usize) -> Combined {
        Combined {
            tail_lines,
            log: None,
            echo: None,
        }
    }

    #[test]
    fn a_timeout_kills_the_whole_group_a_grandchild_too() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let finished = sh("sleep 30 & echo $! > grandchild.pid; echo started; sleep 30")
            .current_dir(dir.path())
            .stdout(Stream::Head(1024))
            .timeout(Duration::from_millis(500))
            .eof_grace(Duration::from_millis(250))
            .run()
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(finished.exit, Exit::TimedOut);
        assert_eq!(finished.stdout, b"started\n");
        let grandchild = read_pid(&dir.path().join("grandchild.pid"));
        assert!(wait_until_dead(grandchild), "pid {grandchild} survived");
    }

    #[test]
    fn an_interrupt_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let flag = AtomicBool::new(false);
        let started = Instant::now();
        let finished = sh("sleep 30 & echo $! > grandchild.pid; sleep 30")
            .current_dir(dir.path())
            .timeout(Duration::from_secs(20))
            .interrupt(&flag)
            .run_ticking(&mut |elapsed| {
                if elapsed >= Duration::from_millis(400) {
                    flag.store(true, Ordering::Relaxed);
                }
            })
            .unwrap();
        assert_eq!(finished.exit, Exit::Interrupted);
        assert!(started.elapsed() < Duration::from_secs(10));
        let grandchild = read_pid(&dir.path().join("grandchild.pid"));
        assert!(wait_until_dead(grandchild), "pid {grandchild} survived");
    }

    #[test]
    fn kill_group_on_exit_leaves_nothing_behind_and_without_it_a_background_child_lives() {
        for kill in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let mut request = sh("sleep 30 & echo $! > background.pid; echo bye")
                .current_dir(dir.path())
                .stdout(Stream::Head(1024))
                .timeout(Duration::from_secs(20))
                .eof_grace(Duration::from_millis(250));
            if kill {
                request = request.kill_group_on_exit();
            }
            let started = Instant::now();
            let finished = request.run().unwrap();
            assert!(started.elapsed() < Duration::from_secs(10));
            assert_eq!(finished.exit, Exit::Code(0));
            assert_eq!(finished.stdout, b"bye\n");
            let background = read_pid(&dir.path().join("background.pid"));
            if kill {
                assert!(wait_until_dead(background), "pid {background} survived");
            } else {
                assert!(!is_dead(background), "the background child was killed");
                let pid = Pid::from_raw(background).unwrap();
                rustix::process::kill_process(pid, Signal::KILL).unwrap();
            }
        }
    }

    #[test]
    fn a_child_gets_its_own_group_only_when_it_may_be_killed() {
        let pgid = "cut -d' ' -f5 /proc/$$/stat";
        let ours = rustix::process::getpgrp()
            .as_raw_nonzero()
            .get()
            .to_string();
        let plain = sh(pgid).run().unwrap();
        assert_eq!(String::from_utf8(plain.stdout).unwrap().trim(), ours);
        let limited = sh(pgid).timeout(Duration::from_secs(20)).run().unwrap();
        assert_ne!(String::from_utf8(limited.stdout).unwrap().trim(), ours);
    }

    #[test]
    fn the_tails_are_bounded() {
        let finished = sh("seq 1 10000; seq 1 10000 >&2")
            .combined(lines(3))
            .run()
            .unwrap();
        assert_eq!(finished.tail, ["9998", "9999", "10000"]);
        let expected: usize = (1..=10000).map(|n: u32| n.to_string().len() + 1).sum();
        assert_eq!(finished.output_bytes, 2 * expected as u64);

        let finished = sh("head -c 100000 /dev/zero; seq 1 1000 >&2")
            .stdout(Stream::Head(10))
            .stderr(Stream::Tail(9))
            .run()
            .unwrap();
        assert_eq!(finished.stdout, [0; 10]);
        assert!(finished.stdout_cut);
        assert_eq!(finished.stderr, b"999\n1000\n");

        let finished = sh("echo before; head -c 5000000 /dev/zero | tr '\\0' x")
            .combined(lines(50))
            .run()
            .unwrap();
        assert_eq!(finished.tail.len(), 2);
        let last = &finished.tail[1];
        assert!(last.len() < crate::process::LINE_CAP + 100);
        assert!(last.ends_with(" [git-prove-it: line of 5000000 bytes cut]"));
    }

    #[test]
    fn stdin_is_fed_or_closed_and_a_child_that_ignores_it_does_not_block() {
        let fed = sh("cat")
            .stdin(Stdin::Bytes(b"assignment".to_vec()))
            .run()
            .unwrap();
        assert_eq!(fed.stdout, b"assignment");
        let closed = sh("cat; echo done")
            .timeout(Duration::from_secs(20))
            .run()
            .unwrap();
        assert_eq!(closed.stdout, b"done\n");
        let ignored = sh("exit 0")
            .stdin(Stdin::Bytes(vec![b'x'; 1 << 20]))
            .run()
            .unwrap();
        assert!(ignored.success());
    }

    #[test]
    fn stdout_is_kept_apart_from_stderr_when_asked_and_combined_in_order_when_not() {
        let apart = sh("echo out; echo err >&2; echo more").run().unwrap();
        assert_eq!(apart.stdout, b"out\nmore\n");
        assert_eq!(apart.stderr, b"err\n");
        assert_eq!(apart.stderr_text(), "err");
        let combined = sh("echo a; echo b >&2; echo c; echo d >&2")
            .combined(lines(10))
            .run()
            .unwrap();
        assert_eq!(combined.tail, ["a", "b", "c", "d"]);
        assert!(combined.stdout.is_empty() && combined.stderr.is_empty());
    }

    #[test]
    fn exit_codes_and_signals_are_read_from_the_status() {
        let code = sh("exit 7").run().unwrap();
        assert_eq!(code.exit, Exit::Code(7));
        assert!(!code.success());
        let killed = sh("kill -9 $$").run().unwrap();
        assert_eq!(killed.exit, Exit::Signal(9));
        let termed = sh("kill -TERM $$; sleep 5")
            .timeout(Duration::from_secs(20))
            .run()
            .unwrap();
        assert_eq!(termed.exit, Exit::Signal(15));
    }

    #[test]
    fn the_environment_is_set_and_removed_and_the_directory_changed() {
        let dir = tempfile::tempdir().unwrap();
        let finished = sh("echo \"$SET ${HOME-unset}\"; pwd -P")
            .env("SET", "yes")
            .env_remove("HOME")
            .current_dir(dir.path())
            .run()
            .unwrap();
        let expected = dir.path().canonicalize().unwrap();
        assert_eq!(
            String::from_utf8(finished.stdout).unwrap(),
            format!("yes unset\n{}\n", expected.display())
        );
    }

    #[test]
    fn a_missing_program_is_a_spawn_error_naming_it() {
        let error = Request::new("/nonexistent/program").run().unwrap_err();
        assert_eq!(error.to_string(), "could not start /nonexistent/program");
        assert_eq!(error.into_source().kind(), io::ErrorKind::NotFound);
    }
}
