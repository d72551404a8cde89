//! The one supervisor of child processes: every program git-prove-it starts (verify.sh, the
//! claim rounds' agent command, ssh-keygen, git, `man`, itself) is started here.
//!
//! It owns what running a child safely takes: its own process group when it may have to be
//! killed, feeding its stdin, bounded capture of its output (combined stdout and stderr as a
//! line tail, a capped log and a raw echo, or each stream kept apart), the timeout, the reaction
//! to an interrupt, the kill of the whole group, and the reading of the exit status. It never
//! prints and never decides what a run means: callers read the `Finished` value.

mod capture;
mod detach;
#[cfg(target_os = "linux")]
mod enter;
#[cfg(not(target_os = "linux"))]
#[path = "enter_elsewhere.rs"]
mod enter;
mod exit;
mod interrupt;
mod request;
#[cfg(target_os = "linux")]
mod spawner;
#[cfg(not(target_os = "linux"))]
#[path = "spawner_elsewhere.rs"]
mod spawner;
mod supervise;
mod wrap;

#[cfg(test)]
pub(crate) use capture::LINE_CAP;
pub(crate) use detach::{BELOW_THE_AGENT, detach, detach_self, set_group_nice, signal, stopped};
pub(crate) use enter::{Namespaces, Step};
pub(crate) use exit::Exit;
pub(crate) use interrupt::interrupt_flag;
pub(crate) use request::{Combined, Request, Stdin, Stream};
pub(crate) use spawner::{start as start_spawner, stop as stop_spawner};
pub(crate) use supervise::{Error, Finished};
pub(crate) use wrap::Wrap;
#[cfg(test)]
pub(crate) mod testing;

/// How many threads of this process can run at once, asked once: the answer reads the
/// cgroup's CPU quota, three files, which a commit run would otherwise read for every commit.
pub(crate) fn cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
}
