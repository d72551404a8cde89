//! Starting the scripts that enter a commit worktree's namespaces from a small process of our
//! own, forked while this one is still small and single-threaded: the spawner.
//!
//! Why not from here: a fork copies the forking process's page tables and marks its memory
//! copy-on-write, and every page it writes afterwards faults once more. From a process holding
//! a repository's index, trees and caches, that cost more than starting the script itself
//! (about 400 faults a commit). std avoids it with `vfork`, but entering a user namespace takes
//! a process that shares its memory with no other. The spawner, forked before any of that
//! memory exists, clones itself for each script with `CLONE_PARENT`, so that the script is our
//! own child: waited for, killed and accounted for as any other.
//!
//! Where there is no spawner (never started, or gone), the caller starts the script itself.

#![allow(unsafe_code)]

use std::ffi::{CString, OsStr, OsString};
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::sync::{Mutex, MutexGuard, PoisonError};

use rustix::io::Errno;
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType, recvmsg, sendmsg, socketpair,
};
use rustix::process::Pid;
use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};

/// The spawner, while it serves: our end of its socket, and its pid.
static SPAWNER: Mutex<Option<Held>> = Mutex::new(None);

struct Held {
    socket: OwnedFd,
    pid: Pid,
}

impl Held {
    /// Ends it and reaps it, so that its time is counted in ours, as its scripts' is.
    fn end(self) {
        drop(self.socket);
        let _ = rustix::process::kill_process(self.pid, rustix::process::Signal::KILL);
        let _ = rustix::process::waitpid(Some(self.pid), rustix::process::WaitOptions::empty());
    }
}

/// The largest order the spawner reads: a script's arguments and environment.
const MAX_ORDER: usize = 512 * 1024;

/// The descriptors an order carries: the user and mount namespaces, the directory, then the
/// script's stdin, stdout and stderr.
const FDS: usize = 6;

/// The signals whose disposition the spawner changes for itself and gives back to each script:
/// SIGPIPE, which Rust ignores and std gives back as the default, and the ones the spawner
/// ignores so that the terminal's Ctrl-C does not end it before the run it serves.
const SIGNALS: [i32; 5] = [
    libc::SIGPIPE,
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
];

fn spawner() -> MutexGuard<'static, Option<Held>> {
    SPAWNER.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts the spawner, where this process has one thread only (a fork of a process with more
/// could take a lock another thread held); a no-op otherwise, or once started. Called by the
/// commands that prove commits in worktrees, before anything else.
pub fn start() {
    let mut held = spawner();
    if held.is_some() || !single_threaded() {
        return;
    }
    let Ok((ours, theirs)) = socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    ) else {
        return;
    };
    let parent = rustix::process::getpid();
    // What the signals the spawner ignores were before, for its scripts.
    let ignored = SIGNALS.map(|signal| signal != libc::SIGPIPE && is_ignored(signal));
    // SAFETY: this process has one thread, so the child inherits no lock held by another; it
    // runs `serve`, which never returns.
    match unsafe { libc::fork() } {
        -1 => {}
        0 => {
            drop(ours);
            serve(&theirs, parent, ignored)
        }
        pid => {
            *held = Pid::from_raw(pid).map(|pid| Held { socket: ours, pid });
        }
    }
}

/// Ends the spawner, if one was started: called when the command is done.
pub fn stop() {
    if let Some(held) = spawner().take() {
        held.end();
    }
}

/// Whether this process has a single thread, as the kernel counts them.
fn single_threaded() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.count() == 1)
}

fn is_ignored(signal: i32) -> bool {
    let mut old = MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a null new action only reads the current one into `old`.
    let read = unsafe { libc::sigaction(signal, std::ptr::null(), old.as_mut_ptr()) };
    // SAFETY: zeroed is a valid sigaction, and sigaction filled it when it returned 0.
    read == 0 && unsafe { old.assume_init() }.sa_sigaction == libc::SIG_IGN
}

/// A script to start: its program, as std's `Command` takes it (looked for on the `PATH` of
/// `env` when it has no slash), its arguments after the program, its whole environment, and
/// whether it leads a process group of its own.
pub(super) struct Order<'a> {
    pub program: &'a OsStr,
    pub args: Vec<&'a OsStr>,
    pub env: Vec<(OsString, OsString)>,
    pub own_group: bool,
}

/// What a script enters and is given: namespaces, directory, stdin, stdout, stderr.
pub(super) struct Ends<'a> {
    pub user: BorrowedFd<'a>,
    pub mount: BorrowedFd<'a>,
    pub dir: BorrowedFd<'a>,
    pub stdio: [BorrowedFd<'a>; 3],
}

/// Starts `order` through the spawner, entering `ends`: `None` where there is no spawner (the
/// caller starts it then); else the pid of our new child, or why its program could not be run.
pub(super) fn spawn(order: &Order<'_>, ends: &Ends<'_>) -> Option<io::Result<Pid>> {
    let message = encode(order).ok()?;
    if message.len() > MAX_ORDER {
        return None;
    }
    let mut held = spawner();
    let socket = &held.as_ref()?.socket;
    let fds = [
        ends.user,
        ends.mount,
        ends.dir,
        ends.stdio[0],
        ends.stdio[1],
        ends.stdio[2],
    ];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(FDS))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return None;
    }
    let sent = sendmsg(
        socket,
        &[IoSlice::new(&message)],
        &mut control,
        SendFlags::NOSIGNAL,
    );
    let mut reply = [0u8; 8];
    let received = sent.and_then(|_| {
        loop {
            match rustix::io::read(socket, &mut reply) {
                Err(Errno::INTR) => {}
                read => break read,
            }
        }
    });
    if received != Ok(reply.len()) {
        // Gone: the caller starts this script, and every one after, itself.
        if let Some(gone) = held.take() {
            gone.end();
        }
        return None;
    }
    drop(held);
    let pid = i32::from_le_bytes(reply[..4].try_into().expect("4 bytes"));
    let errno = i32::from_le_bytes(reply[4..].try_into().expect("4 bytes"));
    let pid = Pid::from_raw(pid);
    if errno == 0 {
        return pid.map(Ok);
    }
    // A child whose program could not be run exited at once; it is ours to reap.
    if let Some(pid) = pid {
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
    }
    Some(Err(io::Error::from_raw_os_error(errno)))
}

/// The order as bytes: the process group flag, the counts of arguments and variables, then
/// each string NUL-terminated (program, arguments, `NAME=value`).
fn encode(order: &Order<'_>) -> io::Result<Vec<u8>> {
    let count = |n: usize| u32::try_from(n).map_err(|_| io::ErrorKind::InvalidInput);
    let mut bytes = vec![u8::from(order.own_group)];
    bytes.extend(count(order.args.len())?.to_le_bytes());
    bytes.extend(count(order.env.len())?.to_le_bytes());
    let mut push = |parts: &[&OsStr]| -> io::Result<()> {
        for part in parts {
            if part.as_bytes().contains(&0) {
                return Err(io::ErrorKind::InvalidInput.into());
            }
            bytes.extend(part.as_bytes());
        }
        bytes.push(0);
        Ok(())
    };
    push(&[order.program])?;
    for arg in &order.args {
        push(&[arg])?;
    }
    for (name, value) in &order.env {
        push(&[name, OsStr::new("="), value])?;
    }
    Ok(bytes)
}

/// An order as the spawner reads it, with everything its child needs made beforehand.
struct Decoded {
    own_group: bool,
    /// The paths to try, in order (one where the program has a slash).
    candidates: Vec<CString>,
    argv: Vec<CString>,
    envp: Vec<CString>,
}

fn decode(bytes: &[u8]) -> Option<Decoded> {
    let own_group = *bytes.first()? != 0;
    let args = u32::from_le_bytes(bytes.get(1..5)?.try_into().ok()?) as usize;
    let vars = u32::from_le_bytes(bytes.get(5..9)?.try_into().ok()?) as usize;
    let mut strings = bytes
        .get(9..)?
        .split_inclusive(|&byte| byte == 0)
        .map(|part| {
            std::ffi::CStr::from_bytes_with_nul(part)
                .ok()
                .map(std::ffi::CStr::to_owned)
        });
    let program = strings.next()??;
    let mut argv = vec![program.clone()];
    for _ in 0..args {
        argv.push(strings.next()??);
    }
    let mut envp = Vec::with_capacity(vars);
    for _ in 0..vars {
        envp.push(strings.next()??);
    }
    if strings.next().is_some() {
        return None;
    }
    let candidates = if program.as_bytes().contains(&b'/') {
        vec![program]
    } else {
        // As execvp looks: each folder of PATH, an empty one being the current folder.
        let path = envp
            .iter()
            .find_map(|var| var.as_bytes().strip_prefix(b"PATH="))
            .unwrap_or(b"/bin:/usr/bin");
        path.split(|&byte| byte == b':')
            .filter_map(|dir| {
                let dir = if dir.is_empty() { b".".as_slice() } else { dir };
                CString::new([dir, b"/", program.as_bytes()].concat()).ok()
            })
            .collect()
    };
    Some(Decoded {
        own_group,
        candidates,
        argv,
        envp,
    })
}

/// The spawner's life: one order at a time, until our end of the socket closes.
fn serve(socket: &OwnedFd, parent: Pid, ignored: [bool; SIGNALS.len()]) -> ! {
    let exit = |code| -> ! {
        // SAFETY: ends this process without running anything of the parent's it inherited.
        unsafe { libc::_exit(code) }
    };
    // Dies with the process it serves, even killed.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    if rustix::process::getppid() != Some(parent) {
        exit(0);
    }
    // It holds no terminal or pipe of the caller's open: a reader waiting for the end of our
    // output must not wait for the spawner too.
    if let Ok(null) = rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        for fd in 0..3 {
            // SAFETY: dup2 on a descriptor we own, onto the standard ones.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
    for signal in SIGNALS.iter().skip(1) {
        // SAFETY: sets a disposition, no handler.
        unsafe { libc::signal(*signal, libc::SIG_IGN) };
    }
    let mut buffer = vec![0u8; MAX_ORDER];
    loop {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(FDS))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let received = recvmsg(
            socket,
            &mut [IoSliceMut::new(&mut buffer)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        );
        let length = match received {
            Ok(message) if message.bytes > 0 => message.bytes,
            Err(Errno::INTR) => continue,
            _ => exit(0),
        };
        let fds: Vec<OwnedFd> = control
            .drain()
            .flat_map(|message| match message {
                RecvAncillaryMessage::ScmRights(fds) => fds.collect(),
                _ => Vec::new(),
            })
            .collect();
        let (pid, errno) = match (decode(&buffer[..length]), fds.len() == FDS) {
            (Some(order), true) => start_one(&order, &fds, ignored),
            _ => (0, libc::EINVAL),
        };
        drop(fds);
        let mut reply = [0u8; 8];
        reply[..4].copy_from_slice(&pid.to_le_bytes());
        reply[4..].copy_from_slice(&errno.to_le_bytes());
        if rustix::io::write(socket, &reply).is_err() {
            exit(0);
        }
    }
}

/// Clones the spawner for `order`, as a child of the process it serves; the pid, and the errno
/// of a program that could not be run (0 once it runs).
fn start_one(order: &Decoded, fds: &[OwnedFd], ignored: [bool; SIGNALS.len()]) -> (i32, i32) {
    let Ok((report, error)) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC) else {
        return (0, libc::EMFILE);
    };
    let pointers = |strings: &[CString]| -> Vec<*const libc::c_char> {
        strings
            .iter()
            .map(|string| string.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect()
    };
    let argv = pointers(&order.argv);
    let envp = pointers(&order.envp);
    // A program without `#!` is run by the shell, as execvp does.
    let shell_args: Vec<Vec<CString>> = order
        .candidates
        .iter()
        .map(|path| {
            [c"/bin/sh".to_owned(), path.clone()]
                .into_iter()
                .chain(order.argv.iter().skip(1).cloned())
                .collect()
        })
        .collect();
    let shell_argv: Vec<Vec<*const libc::c_char>> =
        shell_args.iter().map(|args| pointers(args)).collect();
    // SAFETY: a clone without a stack of its own is a fork; with CLONE_PARENT the child is the
    // served process's. The spawner has one thread, so the child inherits no lock held by
    // another, and it only makes system calls on what was made above before it execs or exits.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::CLONE_PARENT | libc::SIGCHLD,
            0,
            0,
            0,
            0,
        )
    };
    if pid == 0 {
        drop(report);
        let errno = in_child(order, fds, ignored, &argv, &envp, &shell_argv);
        let _ = rustix::io::write(&error, &errno.to_le_bytes());
        // SAFETY: ends the child without running anything it inherited.
        unsafe { libc::_exit(127) }
    }
    drop(error);
    if pid < 0 {
        return (
            0,
            io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        );
    }
    let pid = i32::try_from(pid).unwrap_or(0);
    let mut errno = [0u8; 4];
    let mut read = 0;
    while read < errno.len() {
        match rustix::io::read(&report, &mut errno[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(Errno::INTR) => {}
            Err(_) => break,
        }
    }
    if read == errno.len() {
        (pid, i32::from_le_bytes(errno))
    } else {
        (pid, 0)
    }
}

/// In the child: enter the namespaces and the directory, take the standard descriptors, lead a
/// group when asked, give the signals back as they were, and run the program. Returns only
/// the errno of the failure.
fn in_child(
    order: &Decoded,
    fds: &[OwnedFd],
    ignored: [bool; SIGNALS.len()],
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
    shell_argv: &[Vec<*const libc::c_char>],
) -> i32 {
    let entered = (|| -> Result<(), Errno> {
        // The user namespace first: it owns the mount namespace, and entering it gives the
        // capability that entering the mount namespace takes.
        move_into_link_name_space(fds[0].as_fd(), Some(LinkNameSpaceType::User))?;
        move_into_link_name_space(fds[1].as_fd(), Some(LinkNameSpaceType::Mount))?;
        rustix::process::fchdir(&fds[2])?;
        for (fd, target) in fds[3..].iter().zip(0..) {
            // SAFETY: dup2 onto the standard descriptors of this process, which owns both.
            if unsafe { libc::dup2(fd.as_raw_fd(), target) } < 0 {
                return Err(Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::IO));
            }
        }
        if order.own_group {
            rustix::process::setpgid(None, None)?;
        }
        Ok(())
    })();
    if let Err(errno) = entered {
        return errno.raw_os_error();
    }
    for (signal, ignored) in SIGNALS.iter().zip(ignored) {
        let disposition = if ignored {
            libc::SIG_IGN
        } else {
            libc::SIG_DFL
        };
        // SAFETY: sets a disposition, no handler.
        unsafe { libc::signal(*signal, disposition) };
    }
    let mut none = MaybeUninit::<libc::sigset_t>::zeroed();
    // SAFETY: an emptied set, then the mask set to it.
    unsafe {
        libc::sigemptyset(none.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_SETMASK, none.as_ptr(), std::ptr::null_mut());
    }
    let mut denied = None;
    let mut last = libc::ENOENT;
    for (path, shell_argv) in order.candidates.iter().zip(shell_argv) {
        // SAFETY: NUL-terminated strings and null-terminated arrays of them, made before the
        // clone and alive until the exec replaces this process.
        unsafe { libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
        let mut errno = io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        if errno == libc::ENOEXEC {
            // SAFETY: as above.
            unsafe { libc::execve(c"/bin/sh".as_ptr(), shell_argv.as_ptr(), envp.as_ptr()) };
            errno = io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
        }
        match errno {
            libc::EACCES => denied = Some(errno),
            libc::ENOENT | libc::ENOTDIR => {}
            _ => return errno,
        }
        last = errno;
    }
    denied.unwrap_or(last)
}

#[cfg(test)]
mod tests {
    use std::ffi::{OsStr, OsString};

    use super::{Order, decode, encode};

    fn order<'a>(program: &'a str, args: &'a [&'a str], env: &[(&str, &str)]) -> Order<'a> {
        Order {
            program: OsStr::new(program),
            args: args.iter().map(OsStr::new).collect(),
            env: env
                .iter()
                .map(|(name, value)| (OsString::from(name), OsString::from(value)))
                .collect(),
            own_group: true,
        }
    }

    #[test]
    fn an_order_reads_back_as_written_and_a_path_is_tried_alone() {
        let bytes = encode(&order("/repo/verify.sh", &["a", ""], &[("HOME", "/h")])).unwrap();
        let decoded = decode(&bytes).unwrap();
        assert!(decoded.own_group);
        let strings = |all: &[std::ffi::CString]| -> Vec<String> {
            all.iter()
                .map(|one| one.to_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(strings(&decoded.argv), ["/repo/verify.sh", "a", ""]);
        assert_eq!(strings(&decoded.envp), ["HOME=/h"]);
        assert_eq!(strings(&decoded.candidates), ["/repo/verify.sh"]);
    }

    #[test]
    fn a_bare_program_is_looked_for_on_the_scripts_own_path() {
        let bytes = encode(&order("sh", &[], &[("PATH", "/x::/y")])).unwrap();
        let decoded = decode(&bytes).unwrap();
        let candidates: Vec<_> = decoded
            .candidates
            .iter()
            .map(|one| one.to_str().unwrap().to_owned())
            .collect();
        assert_eq!(candidates, ["/x/sh", "./sh", "/y/sh"]);
    }

    #[test]
    fn a_nul_in_an_order_or_a_short_one_is_refused() {
        assert!(encode(&order("sh", &["a\0b"], &[])).is_err());
        let bytes = encode(&order("sh", &["a"], &[])).unwrap();
        assert!(decode(&bytes[..bytes.len() - 2]).is_none());
        assert!(decode(&[1, 0, 0]).is_none());
    }
}
