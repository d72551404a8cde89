use std::io::{self, Write};
use std::path::PathBuf;

/// What `git prove-it install` did.
#[derive(Debug)]
pub(crate) struct InstallReport {
    pub what: &'static str,
    pub path: PathBuf,
    /// Ours was already there, unchanged.
    pub already: bool,
}

impl InstallReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.already {
            writeln!(
                out,
                "already installed: {} at {}",
                self.what,
                self.path.display()
            )
        } else {
            writeln!(out, "installed {} at {}", self.what, self.path.display())
        }
    }
}
