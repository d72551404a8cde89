//! Where the kernel has no user and mount namespaces (anything but Linux): none can be made or
//! entered. `Namespaces::make` says so, and a commit's run then takes the way of a machine
//! without them (`isolation`: the links back into the checkout refuse the run).

use std::convert::Infallible;
use std::io;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Never made here.
#[derive(Debug)]
pub struct Namespaces {
    never: Infallible,
}

/// One step of making a view (as on Linux; never taken here).
#[derive(Debug, Clone)]
#[allow(dead_code)]
pub enum Step {
    Tmpfs(PathBuf),
    Folder(PathBuf),
    Bind { from: PathBuf, to: PathBuf },
}

impl Namespaces {
    /// Always unsupported here.
    pub fn make(_steps: &[Step]) -> io::Result<Namespaces> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub fn entry(self: &Arc<Self>, _dir: &Path) -> io::Result<Entry> {
        match self.never {}
    }
}

/// Never made here.
#[derive(Debug)]
pub struct Entry {
    never: Infallible,
}

impl Entry {
    pub(super) fn fds(&self) -> (BorrowedFd<'_>, BorrowedFd<'_>, BorrowedFd<'_>) {
        match self.never {}
    }
}

pub(super) fn in_child(_command: &mut std::process::Command, entry: Entry) {
    match entry.never {}
}
