//! Running the agent command: once per round, through `sh -c`, with the assignment on stdin and
//! the packet read from stdout, all through pipes so that nothing is written to disk.
//!
//! Each run sits in its own process group (`crate::process`). At the timeout, on an interrupt,
//! and as soon as the command itself exits, the whole group is killed, so that no run leaves
//! anything behind.

use std::io;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::process::{self, Exit, Stdin, Stream};

use super::packet::OUTPUT_CAP;

/// Tells an agent run which round it is; git-prove-it's own hooks stand aside when it is set.
pub use crate::context::policy::ROUND_ENV;

/// How much of the end of stderr is kept, to say why a run failed.
const STDERR_TAIL: usize = 4096;
/// How long to wait for the end of the output once the run's process group is gone. Only a
/// process that left the group (a daemon) can hold the pipe longer, and it must not hold us.
const EOF_GRACE: Duration = Duration::from_millis(250);

/// How the agent command is run.
pub struct Request<'a> {
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
pub struct Job {
    pub round: u8,
    /// `prove_it_01_counterexamples`, ...
    pub name: String,
    pub role: &'static str,
    /// The assignment, written to stdin.
    pub input: Vec<u8>,
}

/// How a run ended.
#[derive(Debug)]
pub enum Ended {
    Exited(i32),
    Signal(i32),
    TimedOut(Duration),
    Interrupted,
    NotStarted(io::Error),
}

/// What one run did and printed.
#[derive(Debug)]
pub struct Run {
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
pub fn run_all(request: &Request<'_>, jobs: &[Job], on_done: &mut dyn FnMut(usize, Run)) {
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
pub fn run(request: &Request<'_>, job: &Job) -> Run {
    let start = Instant::now();
    let mut command = process::Request::new("sh")
        .arg("-c")
        .arg(request.command)
        .current_dir(request.workdir)
        .env(ROUND_ENV, format!("{:02}", job.round))
        .env("PROVE_IT_ROUND_NAME", &job.name)
        .env("PROVE_IT_PACKET_ROLE", job.role)
        .stdin(Stdin::Bytes(job.input.clone()))
        .stdout(Stream::Head(OUTPUT_CAP))
        .stderr(Stream::Tail(STDERR_TAIL))
        .timeout(request.timeout)
        .kill_group_on_exit()
        .eof_grace(EOF_GRACE);
    if let Some(flag) = request.interrupt {
        command = command.interrupt(flag);
    }
    match command.run() {
        Ok(finished) => Run {
            ended: match finished.exit {
                Exit::Code(code) => Ended::Exited(code),
                Exit::Signal(signal) => Ended::Signal(signal),
                Exit::TimedOut => Ended::TimedOut(request.timeout),
                Exit::Interrupted => Ended::Interrupted,
            },
            stdout: finished.stdout,
            stdout_cut: finished.stdout_cut,
            stderr_tail: String::from_utf8_lossy(&finished.stderr).into_owned(),
            duration: finished.duration,
        },
        Err(error) => Run {
            ended: Ended::NotStarted(error.into_source()),
            stdout: Vec::new(),
            stdout_cut: false,
            stderr_tail: String::new(),
            duration: start.elapsed(),
        },
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
