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

#[cfg(any(test, feature = "testing"))]
pub use capture::LINE_CAP;
pub use detach::{
    BELOW_THE_AGENT, detach_self, fork_detached, remove_env, set_group_nice, signal, stopped,
};
pub use enter::{Namespaces, Step};
pub use exit::{Ended, Exit};
pub use interrupt::interrupt_flag;
pub use request::{Combined, Request, Stdin, Stream};
pub use spawner::{start as start_spawner, stop as stop_spawner};
pub use supervise::{Error, Finished};
pub use wrap::Wrap;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

/// How many threads of this process can run at once, asked once: the answer reads the
/// cgroup's CPU quota, three files, which a commit run would otherwise read for every commit.
pub fn cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
}
