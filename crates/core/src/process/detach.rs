//! A child that outlives its parent: started with no stdin, stdout or stderr and never waited
//! for (the background prover). It detaches itself further (its own session, `nice`) once
//! running, since a parent can do neither without `unsafe`. And the two questions the gate asks
//! of such a process by its pid: is it stopped, and a signal to end it.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

/// Start `program` with `args` in this process's environment, its standard streams closed, and
/// return its pid without waiting for it.
pub fn detach(program: &Path, args: &[OsString]) -> std::io::Result<u32> {
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    Ok(child.id())
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
