//! What to run and how: the builder callers fill in before `Request::run`.

use std::ffi::OsStr;
#[cfg(any(test, feature = "testing"))]
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What the child reads on its stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdin {
    /// Nothing: `/dev/null`.
    Null,
    /// Ours: the child reads what we would have read.
    Inherit,
    /// These bytes, written from a thread so that a child that never reads cannot block us;
    /// a child that exits without reading them all is not an error.
    Bytes(Vec<u8>),
}

/// Where one of the child's output streams goes, when it is not part of a `Combined` capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Ours.
    Inherit,
    /// `/dev/null`.
    Null,
    /// Kept in memory: at most the first this many bytes.
    Head(usize),
    /// Kept in memory: at most the last this many bytes.
    Tail(usize),
}

impl Stream {
    /// Kept in memory, all of it, as `std::process::Command::output` keeps it.
    pub const ALL: Stream = Stream::Head(usize::MAX);
}

/// stdout and stderr through one pipe, in the order the child wrote them, read as lines.
pub struct Combined {
    /// How many of the last lines of output the result keeps.
    pub tail_lines: usize,
    /// Where the full output is written (mode 0600), and the most bytes it keeps.
    pub log: Option<(PathBuf, u64)>,
    /// Where every chunk of output is copied as it arrives, if anywhere.
    pub echo: Option<Box<dyn Write + Send>>,
}

/// What to do when the interrupt flag is raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OnInterrupt {
    /// Kill the child's whole group and report `Exit::Interrupted`.
    Kill,
}

/// One child to run: the program, its arguments and environment, its stdio, and the limits the
/// supervisor enforces.
///
/// The child gets its own process group exactly when the supervisor may have to kill it (a
/// timeout, an interrupt that kills, or `kill_group_on_exit`), so that the kill reaches
/// whatever it started. Any other child stays in our group: the terminal's Ctrl-C reaches it
/// as it reaches us, and it may use the terminal (ssh-keygen asks for a passphrase there).
pub struct Request<'a> {
    pub(super) command: std::process::Command,
    pub(super) stdin: Stdin,
    pub(super) stdout: Stream,
    pub(super) stderr: Stream,
    pub(super) combined: Option<Combined>,
    pub(super) timeout: Option<Duration>,
    pub(super) interrupt: Option<(&'a AtomicBool, OnInterrupt)>,
    pub(super) kill_group_on_exit: bool,
    pub(super) eof_grace: Option<Duration>,
    pub(super) enter: Option<super::enter::Entry>,
}

impl<'a> Request<'a> {
    /// `program`, with stdin from `/dev/null`, stdout and stderr kept whole in memory, no
    /// timeout, and the end of the output awaited however long it takes.
    pub fn new(program: impl AsRef<OsStr>) -> Request<'a> {
        Request {
            command: std::process::Command::new(program),
            stdin: Stdin::Null,
            stdout: Stream::ALL,
            stderr: Stream::ALL,
            combined: None,
            timeout: None,
            interrupt: None,
            kill_group_on_exit: false,
            eof_grace: None,
            enter: None,
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    /// The directory the child starts in; ours when not set.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// Sets a variable on top of the inherited environment.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// Sets variables on top of the inherited environment.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.command.envs(vars);
        self
    }

    /// Removes a variable from the inherited environment.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.command.env_remove(key);
        self
    }

    pub fn stdin(mut self, stdin: Stdin) -> Self {
        self.stdin = stdin;
        self
    }

    pub fn stdout(mut self, stdout: Stream) -> Self {
        self.stdout = stdout;
        self
    }

    pub fn stderr(mut self, stderr: Stream) -> Self {
        self.stderr = stderr;
        self
    }

    /// Sends stdout and stderr both into one line capture (`stdout` and `stderr` are then
    /// unused).
    pub fn combined(mut self, combined: Combined) -> Self {
        self.combined = Some(combined);
        self
    }

    /// After this long from the spawn the whole process group is killed.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// When `flag` is raised (by a signal handler), the whole process group is killed. A child
    /// in its own group does not get the terminal's Ctrl-C, so we must end it ourselves.
    pub fn interrupt(mut self, flag: &'a AtomicBool) -> Self {
        self.interrupt = Some((flag, OnInterrupt::Kill));
        self
    }

    /// Kills the whole process group as soon as the child itself exits, so that nothing it
    /// started outlives it.
    pub fn kill_group_on_exit(mut self) -> Self {
        self.kill_group_on_exit = true;
        self
    }

    /// Once the child has exited, waits at most this long for the end of its output: a
    /// background process it left behind may hold the pipes open for ever, and must not hold
    /// the run with it. Without it, the end of the output is awaited as long as it takes.
    pub fn eof_grace(mut self, grace: Duration) -> Self {
        self.eof_grace = Some(grace);
        self
    }

    /// The child enters these namespaces, and its directory there, before its program is
    /// looked for and run.
    pub fn enter(mut self, entry: super::enter::Entry) -> Self {
        self.enter = Some(entry);
        self
    }

    /// The arguments, in order.
    #[cfg(any(test, feature = "testing"))]
    pub fn get_args(&self) -> impl Iterator<Item = &OsStr> {
        self.command.get_args()
    }

    /// The variables set (`Some`) or removed (`None`), sorted by name.
    #[cfg(any(test, feature = "testing"))]
    pub fn get_envs(&self) -> Vec<(OsString, Option<OsString>)> {
        self.command
            .get_envs()
            .map(|(key, value)| (key.to_owned(), value.map(ToOwned::to_owned)))
            .collect()
    }

    pub(super) fn own_group(&self) -> bool {
        self.timeout.is_some()
            || matches!(self.interrupt, Some((_, OnInterrupt::Kill)))
            || self.kill_group_on_exit
    }
}
