//! A child that outlives its parent (the background prover): this process forked, its standard
//! streams on `/dev/null`, never waited for, in a session of its own below the agent's priority.
//! And the two questions the gate asks of such a process by its pid: is it stopped, and a signal
//! to end it. And the one change a command makes to its own environment (`remove_env`).

use std::os::fd::AsRawFd;

/// Run `work` in a forked copy of this process that outlives it, and return the child's pid
/// without waiting for it. The child's standard streams are `/dev/null` (the parent's belong to
/// its host's protocol), it detaches itself (`detach_self`), and it exits 0 when `work` says it
/// ended as it should, else 1 (a panic too): it never returns into the parent's code.
///
/// A fork copies only the calling thread, so it is sound only while the process has one: any
/// other thread's lock (the allocator's, stdout's) would stay held for ever in the child. Where
/// the kernel can say how many threads there are, more than one is refused; elsewhere the caller
/// vouches for it (the agent hook joins every thread it starts, but one that hangs on a file:
/// `hosts::payload_file`). A thread just joined is still listed until the kernel has reaped it,
/// some microseconds later, so the count is given [`ONE_THREAD_WAIT`] to come down to one.
#[allow(unsafe_code)]
pub fn fork_detached(work: impl FnOnce() -> bool) -> std::io::Result<u32> {
    if !one_thread_within(ONE_THREAD_WAIT) {
        return Err(std::io::Error::other(
            "this process has more than one thread, so it cannot fork",
        ));
    }
    let null = std::fs::File::options()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    // SAFETY: the process has one thread (checked above), so the child's copy of it holds no lock
    // another thread took, and may run any code.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => {
            for fd in [libc::STDIN_FILENO, libc::STDOUT_FILENO, libc::STDERR_FILENO] {
                // SAFETY: both descriptors are open; a failure leaves the parent's stream,
                // which nothing here writes to.
                unsafe { libc::dup2(null.as_raw_fd(), fd) };
            }
            drop(null);
            close_inherited();
            detach_self();
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or(false);
            std::process::exit(i32::from(!ok))
        }
        pid => Ok(pid.unsigned_abs()),
    }
}

/// Close every descriptor but the standard three. The parent's files stay open in a forked child,
/// and an `flock` lives as long as any descriptor of its file: a lock the parent let go of by
/// closing its file would otherwise be held by the prover for as long as it runs.
#[allow(unsafe_code)]
fn close_inherited() {
    let open: Vec<i32> = match std::fs::read_dir("/proc/self/fd") {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
            .collect(),
        // Without `/proc`, every descriptor a process is likely to have.
        Err(_) => (0..1024).collect(),
    };
    for fd in open.into_iter().filter(|fd| *fd > libc::STDERR_FILENO) {
        // SAFETY: nothing in the child uses the parent's descriptors: the parent's objects that
        // own them are never dropped here, since the child exits without returning.
        unsafe { libc::close(fd) };
    }
}

/// Remove `names` from this process's environment, for itself and every child it starts.
///
/// Sound only while the process has one thread, since nothing may read the environment while it
/// changes: a command calls it first, before it starts anything (`debug_assert`ed where `/proc`
/// says how many threads there are).
#[allow(unsafe_code)]
pub fn remove_env(names: &[&str]) {
    debug_assert!(threads().is_none_or(|threads| threads == 1));
    for name in names {
        if std::env::var_os(name).is_some() {
            // SAFETY: the process has one thread (see above), so no other reads the environment.
            unsafe { std::env::remove_var(name) };
        }
    }
}

/// How long [`fork_detached`] waits for threads that ended to leave the process.
const ONE_THREAD_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Whether this process has one thread, or comes down to one within `wait`; true where `/proc`
/// cannot say.
fn one_thread_within(wait: std::time::Duration) -> bool {
    let until = std::time::Instant::now() + wait;
    loop {
        match threads() {
            None | Some(1) => return true,
            Some(_) if std::time::Instant::now() >= until => return false,
            Some(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
}

/// How many threads this process has, where `/proc` says.
fn threads() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/task").ok()?.count())
}

/// Whether the process `pid` is stopped (`SIGSTOP`, traced), as `/proc/<pid>/stat` says; a
/// process that does not exist counts as stopped, since it will never finish anything.
pub fn stopped(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    // `pid (comm) S ...`: the name may hold spaces and parentheses, the state follows the last.
    let state = stat
        .rfind(')')
        .and_then(|end| stat[end + 1..].split_whitespace().next());
    !matches!(state, Some("R" | "S" | "D" | "I" | "W" | "P"))
}

/// Send `SIGTERM` to `pid`: the prover takes it as an interrupt of its run, which kills the run's
/// process group. Best effort: a process that is gone needs nothing.
pub fn signal(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
}

/// Detach this process from the one that started it: a session (and process group) of its own,
/// so that a signal to the agent's group does not reach it nor it the agent's terminal, and a
/// priority below the agent's (`nice` 10). Best effort: a process already a group leader keeps
/// its session.
///
/// Where the kernel groups each session for the scheduler (autogroup, `man 7 sched`), a nice
/// value weighs only against the processes of the same session: the new session's group gets
/// `nice` 10 too, or its runs would take as much CPU as the agent's whole session.
pub fn detach_self() {
    let _ = rustix::process::setsid();
    let _ = rustix::process::nice(BELOW_THE_AGENT);
    set_group_nice(std::process::id(), BELOW_THE_AGENT);
}

/// The nice value of the background prover and of its session's scheduling group.
pub const BELOW_THE_AGENT: i32 = 10;

/// Set the nice value of the scheduling group (autogroup) of `pid`'s session, where the kernel
/// has autogroups: any value from 0 up needs no privilege, so a group lowered to 10 can be
/// lifted back to 0, which a process's own nice value cannot. Best effort: without autogroups
/// there is nothing to set; the kernel takes one change per 100 ms system-wide, so a change
/// refused for that is tried again for up to 300 ms.
pub fn set_group_nice(pid: u32, nice: i32) {
    let path = format!("/proc/{pid}/autogroup");
    for _ in 0..15 {
        match std::fs::write(&path, nice.to_string()) {
            Err(error) if error.raw_os_error() == Some(rustix::io::Errno::AGAIN.raw_os_error()) => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => return,
        }
    }
}
