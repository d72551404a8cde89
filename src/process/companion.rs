//! A child that lives as long as its handle: a helper another child needs while this process
//! works (the process that holds a commit worktree's namespaces for the scripts run in them).
//! Its stdin is a pipe from this process, so it ends when the handle is dropped or this process
//! is gone; it is never reaped before the handle is dropped, so its pid cannot name another
//! process meanwhile.

use std::ffi::OsString;
use std::io::Read as _;
use std::os::fd::AsFd as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running helper, ended when dropped.
#[derive(Debug)]
pub(crate) struct Companion {
    child: Child,
}

impl Companion {
    /// Start `program` with `args` and wait, at most `within`, for the line it prints once it
    /// is ready (`ready`); a helper that ends or prints anything else first is an error.
    pub(crate) fn start(
        program: &str,
        args: &[OsString],
        ready: &str,
        within: Duration,
    ) -> std::io::Result<Companion> {
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut companion = Companion { child };
        companion.await_line(ready, within)?;
        Ok(companion)
    }

    fn await_line(&mut self, ready: &str, within: Duration) -> std::io::Result<()> {
        let not_ready = |why: &str| std::io::Error::other(format!("the helper {why}"));
        let stdout = self
            .child
            .stdout
            .as_mut()
            .ok_or_else(|| not_ready("has no stdout"))?;
        let deadline = Instant::now() + within;
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while !line.ends_with(b"\n") {
            let left = deadline.saturating_duration_since(Instant::now());
            let timeout = rustix::event::Timespec::try_from(left).map_err(std::io::Error::other)?;
            let ready = {
                let fd = stdout.as_fd();
                let mut fds = [rustix::event::PollFd::new(
                    &fd,
                    rustix::event::PollFlags::IN,
                )];
                rustix::event::poll(&mut fds, Some(&timeout))?
            };
            if ready == 0 {
                return Err(not_ready("was not ready in time"));
            }
            if stdout.read(&mut byte)? == 0 {
                return Err(not_ready("ended before it was ready"));
            }
            line.push(byte[0]);
            if line.len() > 256 {
                return Err(not_ready("printed something else"));
            }
        }
        if line.strip_suffix(b"\n") == Some(ready.as_bytes()) {
            Ok(())
        } else {
            Err(not_ready("printed something else"))
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it still runs: neither ended nor stopped.
    pub(crate) fn running(&self) -> bool {
        !super::stopped(self.pid())
    }
}

impl Drop for Companion {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
