//! Making user and mount namespaces, and entering them, in a child of ours between fork and
//! exec: the one place this crate uses `unsafe`, because std has no safe hook that runs there.
//! util-linux `unshare` and `nsenter` do the same from programs of their own, each started at
//! the cost of a program (its loader, its libraries, its locale): seven to make a commit
//! worktree's view, one more for every script entering it.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};

/// The namespaces of a process, opened while it runs: they stay enterable, with their mounts,
/// for as long as these descriptors are kept, whatever becomes of the process.
#[derive(Debug)]
pub struct Namespaces {
    user: OwnedFd,
    mount: OwnedFd,
    /// The process's root directory, in its own mounts.
    root: OwnedFd,
}

/// One step of making a view, as root of its new user namespace, in its new mount namespace.
#[derive(Debug, Clone)]
pub enum Step {
    /// An empty tmpfs, mode 0755, mounted at this folder.
    Tmpfs(PathBuf),
    /// A new folder, mode 0755.
    Folder(PathBuf),
    /// The folder `from` mounted again at `to`.
    Bind { from: PathBuf, to: PathBuf },
}

/// A step with its paths made C strings before the fork: the child must not allocate.
enum RawStep {
    Tmpfs(CString),
    Folder(CString),
    Bind { from: CString, to: CString },
}

impl Namespaces {
    /// New namespaces kept by descriptor: a user namespace in which the caller's ids are root,
    /// with a mount namespace of its own whose mounts reach no other; `steps` made there in
    /// order; then, inside, a user namespace with the caller's own ids back, and a mount
    /// namespace of its own again, which the caller can enter since that user namespace owns
    /// it. The child that makes them ends once they are opened.
    pub fn make(steps: &[Step]) -> io::Result<Namespaces> {
        let raw = |path: &Path| {
            CString::new(path.as_os_str().as_bytes()).map_err(|_| io::ErrorKind::InvalidInput)
        };
        let steps = steps
            .iter()
            .map(|step| {
                Ok(match step {
                    Step::Tmpfs(at) => RawStep::Tmpfs(raw(at)?),
                    Step::Folder(at) => RawStep::Folder(raw(at)?),
                    Step::Bind { from, to } => RawStep::Bind {
                        from: raw(from)?,
                        to: raw(to)?,
                    },
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        let maps = Maps {
            root: [format!("0 {uid} 1\n"), format!("0 {gid} 1\n")],
            back: [format!("{uid} 0 1\n"), format!("{gid} 0 1\n")],
        };
        // The child stays, reading its stdin, until the namespaces are opened. `/bin/sh` by
        // its absolute path, never a program looked for on PATH: one put earlier there could
        // end at once and leave nothing to open, sending the run to util-linux's way.
        let mut command = Command::new("/bin/sh");
        command
            .args(["-c", "read _"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let make = move || -> io::Result<()> { make_in_child(&steps, &maps) };
        // SAFETY: the closure runs in the forked child, where only async-signal-safe work is
        // allowed. It makes system calls through rustix's raw syscall backend (unshare, open,
        // write, close, mount, mkdir) on paths and text made before the fork, and turns an
        // errno into an `io::Error` without allocating; it takes no lock and touches no memory
        // shared with other threads.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(make);
        }
        let mut child = command.spawn()?;
        let opened = Namespaces::of(child.id());
        drop(child.stdin.take());
        let _ = child.kill();
        let _ = child.wait();
        opened
    }

    /// The namespaces `pid` is in (our own child, not yet reaped, so that its pid names it).
    fn of(pid: u32) -> io::Result<Namespaces> {
        let open = |path: String, flags: OFlags| {
            rustix::fs::open(path, flags | OFlags::CLOEXEC, Mode::empty()).map_err(io::Error::from)
        };
        Ok(Namespaces {
            user: open(format!("/proc/{pid}/ns/user"), OFlags::RDONLY)?,
            mount: open(format!("/proc/{pid}/ns/mnt"), OFlags::RDONLY)?,
            root: open(
                format!("/proc/{pid}/root"),
                OFlags::PATH | OFlags::DIRECTORY,
            )?,
        })
    }

    /// The way in for a child that starts in `dir`, a directory as these namespaces' mounts
    /// show it: opened now, from their root, so that it is never the caller's view of that
    /// path (where the checkout lies under the commit's worktree).
    pub fn entry(self: &Arc<Self>, dir: &Path) -> io::Result<Entry> {
        let relative = dir.strip_prefix("/").unwrap_or(dir);
        let relative = if relative.as_os_str().is_empty() {
            Path::new(".")
        } else {
            relative
        };
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        // Absolute links on the way are resolved in the namespaces' root too, where the
        // kernel can (5.6 and later).
        let dir = match rustix::fs::openat2(
            &self.root,
            relative,
            flags,
            Mode::empty(),
            ResolveFlags::IN_ROOT,
        ) {
            Err(rustix::io::Errno::NOSYS) => {
                rustix::fs::openat(&self.root, relative, flags, Mode::empty())
            }
            opened => opened,
        }?;
        Ok(Entry {
            namespaces: Arc::clone(self),
            dir,
        })
    }
}

/// The id maps written for the two user namespaces: `root` makes the caller's ids root of the
/// outer one, `back` gives them back in the inner one (uid, then gid).
struct Maps {
    root: [String; 2],
    back: [String; 2],
}

/// In the forked child: the namespaces and their mounts, as [`Namespaces::make`] says.
fn make_in_child(steps: &[RawStep], maps: &Maps) -> io::Result<()> {
    use rustix::mount::{MountFlags, MountPropagationFlags, mount, mount_bind, mount_change};
    use rustix::thread::UnshareFlags;
    let unshare = || -> io::Result<()> {
        // SAFETY: in the forked child, the only thread: no other thread shares its files or
        // its filesystem attributes.
        #[allow(unsafe_code)]
        unsafe {
            rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNS)?;
        }
        Ok(())
    };
    let write = |file: &std::ffi::CStr, text: &str| -> io::Result<()> {
        let fd = rustix::fs::open(file, rustix::fs::OFlags::WRONLY, rustix::fs::Mode::empty())?;
        rustix::io::write(&fd, text.as_bytes())?;
        Ok(())
    };
    let map = |[uid, gid]: &[String; 2]| -> io::Result<()> {
        // Without CAP_SETGID over the parent namespace, groups must be denied before a gid map.
        write(c"/proc/self/setgroups", "deny")?;
        write(c"/proc/self/uid_map", uid)?;
        write(c"/proc/self/gid_map", gid)
    };
    let private = || {
        mount_change(
            c"/",
            MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
        )
    };
    unshare()?;
    map(&maps.root)?;
    private()?;
    for step in steps {
        match step {
            RawStep::Tmpfs(at) => mount(
                c"prove-it",
                at.as_c_str(),
                c"tmpfs",
                MountFlags::empty(),
                c"mode=0755",
            )?,
            RawStep::Folder(at) => {
                rustix::fs::mkdir(at.as_c_str(), rustix::fs::Mode::from_raw_mode(0o755))?;
            }
            RawStep::Bind { from, to } => mount_bind(from.as_c_str(), to.as_c_str())?,
        }
    }
    unshare()?;
    map(&maps.back)?;
    private()?;
    Ok(())
}

/// What a child enters before it runs its program: the namespaces, then its directory there.
#[derive(Debug)]
pub struct Entry {
    namespaces: Arc<Namespaces>,
    dir: OwnedFd,
}

impl Entry {
    /// The user and mount namespaces, and the directory, for a child started elsewhere.
    pub(super) fn fds(&self) -> (BorrowedFd<'_>, BorrowedFd<'_>, BorrowedFd<'_>) {
        (
            self.namespaces.user.as_fd(),
            self.namespaces.mount.as_fd(),
            self.dir.as_fd(),
        )
    }
}

/// Makes `command`'s child enter `entry` after fork and before exec, where the program's path
/// is then resolved. A failure to enter is a failure to start the program.
#[allow(unsafe_code)]
pub(super) fn in_child(command: &mut std::process::Command, entry: Entry) {
    let enter = move || -> io::Result<()> {
        let Entry { namespaces, dir } = &entry;
        // The user namespace first: it owns the mount namespace, and entering it gives the
        // capability that entering the mount namespace takes. Both reset the root and the
        // working directory, which the directory opened beforehand then sets.
        move_into_link_name_space(namespaces.user.as_fd(), Some(LinkNameSpaceType::User))?;
        move_into_link_name_space(namespaces.mount.as_fd(), Some(LinkNameSpaceType::Mount))?;
        rustix::process::fchdir(dir)?;
        Ok(())
    };
    // SAFETY: the closure runs in the forked child, where only async-signal-safe work is
    // allowed. It makes three system calls through rustix's raw syscall backend (setns twice,
    // fchdir) on descriptors opened before the fork, and turns an errno into an `io::Error`
    // without allocating; it takes no lock and touches no memory shared with other threads.
    unsafe {
        command.pre_exec(enter);
    }
}
