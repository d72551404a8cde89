//! Running the agent command: once per round, through `sh -c`, with the assignment on stdin and
//! the packet read from stdout, all through pipes so that nothing is written to disk.
//!
//! Each run sits in its own process group. At the timeout, on an interrupt, and as soon as the
//! command itself exits, the whole group is killed, so that no run leaves anything behind.

use std::io::{self, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process_group, waitid};

use super::packet::OUTPUT_CAP;

/// How much of the end of stderr is kept, to say why a run failed.
/// Tells an agent run which round it is; git-prove-it's own hooks stand aside when it is set.
pub(crate) const ROUND_ENV: &str = "PROVE_IT_ROUND";

const STDERR_TAIL: usize = 4096;
/// How often a run is polled for its exit.
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// How long to wait for the end of the output once the run's process group is gone. Only a
/// process that left the group (a daemon) can hold the pipe longer, and it must not hold us.
const EOF_GRACE: Duration = Duration::from_millis(250);

/// How the agent command is run.
pub(crate) struct Request<'a> {
    /// A shell command line, run as `sh -c <command>`.
    pub command: &'a str,
    /// The directory it runs in: where the user ran `git prove-it claim`.
    pub workdir: &'a Path,
    pub timeout: Duration,
    /// Raised on Ctrl-C, SIGTERM or SIGHUP: the runs sit in their own process groups, which a
    /// terminal's Ctrl-C does not reach, so we end them ourselves.
    pub interrupt: Option<&'a AtomicBool>,
}

/// One round to run.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub round: u8,
    /// `prove_it_01_counterexamples`, ...
    pub name: String,
    pub role: &'static str,
    /// The assignment, written to stdin.
    pub input: Vec<u8>,
}

/// How a run ended.
#[derive(Debug)]
pub(crate) enum Ended {
    Exited(i32),
    Signal(i32),
    TimedOut(Duration),
    Interrupted,
    NotStarted(io::Error),
}

/// What one run did and printed.
#[derive(Debug)]
pub(crate) struct Run {
    pub ended: Ended,
    /// At most `OUTPUT_CAP` bytes of stdout.
    pub stdout: Vec<u8>,
    /// Whether stdout went past `OUTPUT_CAP`.
    pub stdout_cut: bool,
    /// The end of stderr, lossily decoded.
    pub stderr_tail: String,
    pub duration: Duration,
}

/// Run every job at once, one thread each, calling `on_done` with each job's index as it ends.
pub(crate) fn run_all(request: &Request<'_>, jobs: &[Job], on_done: &mut dyn FnMut(usize, Run)) {
    let (sender, receiver) = mpsc::channel();
    thread::scope(|scope| {
        for (index, job) in jobs.iter().enumerate() {
            let sender = sender.clone();
            scope.spawn(move || {
                let _ = sender.send((index, run(request, job)));
            });
        }
        drop(sender);
        for (index, run) in receiver {
            on_done(index, run);
        }
    });
}

/// Run one job to its end, its timeout or an interrupt.
pub(crate) fn run(request: &Request<'_>, job: &Job) -> Run {
    let start = Instant::now();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(request.command)
        .current_dir(request.workdir)
        .env(ROUND_ENV, format!("{:02}", job.round))
        .env("PROVE_IT_ROUND_NAME", &job.name)
        .env("PROVE_IT_PACKET_ROLE", job.role)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            return Run {
                ended: Ended::NotStarted(error),
                stdout: Vec::new(),
                stdout_cut: false,
                stderr_tail: String::new(),
                duration: start.elapsed(),
            };
        }
    };
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let input = job.input.clone();
    // A command that never reads its stdin must not block us: write from a thread, and ignore
    // the broken pipe it gets when the command exits without reading.
    thread::spawn(move || {
        let mut stdin = stdin;
        let _ = stdin.write_all(&input);
    });
    let out = Capture::start(stdout, OUTPUT_CAP, false);
    let err = Capture::start(stderr, STDERR_TAIL, true);

    let ended = wait(&mut child, request.timeout, request.interrupt, start);
    let duration = start.elapsed();
    let (stdout, stdout_cut) = out.finish();
    let (stderr, _) = err.finish();
    Run {
        ended,
        stdout,
        stdout_cut,
        stderr_tail: String::from_utf8_lossy(&stderr).into_owned(),
        duration,
    }
}

/// Wait for the run, killing its whole process group when it exits, times out or is
/// interrupted. The group is killed before the shell is reaped, while its id cannot be reused.
fn wait(
    child: &mut Child,
    timeout: Duration,
    interrupt: Option<&AtomicBool>,
    start: Instant,
) -> Ended {
    let pid = Pid::from_child(child);
    let end = |child: &mut Child, ended: Option<Ended>| {
        let _ = kill_process_group(pid, Signal::KILL);
        match (child.wait(), ended) {
            (_, Some(ended)) => ended,
            (Ok(status), None) => match (status.code(), status.signal()) {
                (Some(code), _) => Ended::Exited(code),
                (None, Some(signal)) => Ended::Signal(signal),
                (None, None) => Ended::Exited(-1),
            },
            (Err(error), None) => Ended::NotStarted(error),
        }
    };
    loop {
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        match waitid(WaitId::Pid(pid), options) {
            // It exited and stays a zombie until `child.wait()` reaps it after the kill.
            Ok(Some(_)) => return end(child, None),
            Ok(None) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return end(child, None),
        }
        let elapsed = start.elapsed();
        if elapsed >= timeout {
            return end(child, Some(Ended::TimedOut(timeout)));
        }
        if interrupt.is_some_and(|flag| flag.load(Ordering::Relaxed)) {
            return end(child, Some(Ended::Interrupted));
        }
        thread::sleep(POLL_INTERVAL.min(timeout - elapsed));
    }
}

/// A pipe read to its end on a thread: the first `cap` bytes, or with `tail` the last ones.
struct Capture {
    data: Arc<Mutex<(Vec<u8>, bool)>>,
    done: mpsc::Receiver<()>,
}

impl Capture {
    fn start(mut pipe: impl Read + Send + 'static, cap: usize, tail: bool) -> Capture {
        let data = Arc::new(Mutex::new((Vec::new(), false)));
        let shared = Arc::clone(&data);
        let (sender, done) = mpsc::channel();
        thread::spawn(move || {
            let mut buffer = vec![0; 64 * 1024];
            loop {
                match pipe.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut guard = shared.lock().unwrap_or_else(PoisonError::into_inner);
                        let (kept, cut) = &mut *guard;
                        kept.extend_from_slice(&buffer[..n]);
                        if kept.len() > cap {
                            *cut = true;
                            if tail {
                                kept.drain(..kept.len() - cap);
                            } else {
                                kept.truncate(cap);
                            }
                        }
                    }
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = sender.send(());
        });
        Capture { data, done }
    }

    /// What was read, once the pipe closed or the grace period passed.
    fn finish(self) -> (Vec<u8>, bool) {
        let _ = self.done.recv_timeout(EOF_GRACE);
        let mut guard = self.data.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::take(&mut *guard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(round: u8) -> Job {
        Job {
            round,
            name: format!("prove_it_{round:02}_test"),
            role: "evidence_lens",
            input: b"{\"round\": 1}".to_vec(),
        }
    }

    fn request(command: &str, timeout: Duration) -> Request<'_> {
        Request {
            command,
            workdir: Path::new("/"),
            timeout,
            interrupt: None,
        }
    }

    #[test]
    fn the_assignment_goes_to_stdin_and_the_round_to_the_environment() {
        let run = run(
            &request(
                "printf '%s %s %s ' \"$PROVE_IT_ROUND\" \"$PROVE_IT_ROUND_NAME\" \"$PROVE_IT_PACKET_ROLE\"; cat; echo oops >&2",
                Duration::from_secs(30),
            ),
            &job(3),
        );
        assert!(matches!(run.ended, Ended::Exited(0)), "{run:?}");
        assert_eq!(
            String::from_utf8(run.stdout).unwrap(),
            "03 prove_it_03_test evidence_lens {\"round\": 1}"
        );
        assert_eq!(run.stderr_tail, "oops\n");
    }

    #[test]
    fn a_run_past_its_timeout_is_killed_with_its_group() {
        let started = Instant::now();
        let run = run(
            &request("sleep 30 & sleep 30; echo late", Duration::from_millis(300)),
            &job(1),
        );
        assert!(matches!(run.ended, Ended::TimedOut(_)), "{run:?}");
        assert!(run.stdout.is_empty());
        // The background sleep held stdout too: it died with the group, or we would have
        // waited for it.
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn exit_codes_signals_and_commands_that_ignore_stdin_are_reported() {
        let code = run(&request("exit 7", Duration::from_secs(30)), &job(1));
        assert!(matches!(code.ended, Ended::Exited(7)), "{code:?}");
        let killed = run(&request("kill -9 $$", Duration::from_secs(30)), &job(1));
        assert!(matches!(killed.ended, Ended::Signal(9)), "{killed:?}");
    }

    #[test]
    fn stdout_is_capped_and_stderr_keeps_its_end() {
        let run = run(
            &request(
                "head -c 1100000 /dev/zero; i=0; while [ $i -lt 2000 ]; do echo line$i >&2; i=$((i+1)); done",
                Duration::from_secs(30),
            ),
            &job(1),
        );
        assert!(run.stdout_cut);
        assert_eq!(run.stdout.len(), OUTPUT_CAP);
        assert!(run.stderr_tail.len() <= STDERR_TAIL);
        assert!(run.stderr_tail.ends_with("line1999\n"));
    }

    #[test]
    fn all_jobs_run_at_once() {
        // Each job waits until all three have started: run one after another, they would time
        // out instead.
        let dir = tempfile::tempdir().unwrap();
        let command = format!(
            "touch {dir}/$PROVE_IT_ROUND; i=0; while [ $(ls {dir} | wc -l) -lt 3 ]; do \
             i=$((i+1)); [ $i -gt 1000 ] && exit 1; sleep 0.01; done; echo ok",
            dir = dir.path().display()
        );
        let jobs = [job(1), job(2), job(3)];
        let mut done = Vec::new();
        run_all(
            &request(&command, Duration::from_secs(60)),
            &jobs,
            &mut |index, run| {
                assert!(matches!(run.ended, Ended::Exited(0)), "{run:?}");
                done.push(index);
            },
        );
        done.sort_unstable();
        assert_eq!(done, [0, 1, 2]);
    }
}
