//! Where no namespaces are entered (anything but Linux), there is no spawner: every script is
//! started by the command itself.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::BorrowedFd;

use rustix::process::Pid;

pub fn start() {}

pub fn stop() {}

#[allow(dead_code)]
pub(super) struct Order<'a> {
    pub program: &'a OsStr,
    pub args: Vec<&'a OsStr>,
    pub env: Vec<(OsString, OsString)>,
    pub own_group: bool,
}

#[allow(dead_code)]
pub(super) struct Ends<'a> {
    pub user: BorrowedFd<'a>,
    pub mount: BorrowedFd<'a>,
    pub dir: BorrowedFd<'a>,
    pub stdio: [BorrowedFd<'a>; 3],
}

/// No spawner here: the caller starts the script.
pub(super) fn spawn(_order: &Order<'_>, _ends: &Ends<'_>) -> Option<io::Result<Pid>> {
    None
}
