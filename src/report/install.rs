//! What `install` and `install-man` say they wrote.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What `git prove-it install` did.
#[derive(Debug)]
pub(crate) struct InstallReport {
    what: &'static str,
    path: PathBuf,
    /// Ours was already there, unchanged.
    already: bool,
}

impl InstallReport {
    /// The pre-push hook at `path`, written now or `already` there.
    pub(crate) fn pre_push(path: PathBuf, already: bool) -> Self {
        InstallReport {
            what: "the pre-push hook",
            path,
            already,
        }
    }

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

/// What `git prove-it install-man` did.
#[derive(Debug)]
pub(crate) struct InstallManReport {
    pub pages: usize,
    /// The man1 directory the pages went into.
    pub dir: PathBuf,
    /// Where `man -w git-prove-it` finds the page now, if anywhere.
    pub found: Option<PathBuf>,
}

impl InstallManReport {
    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "installed {} man pages in {}",
            self.pages,
            self.dir.display()
        )?;
        let root = self.dir.parent().unwrap_or(&self.dir);
        match &self.found {
            Some(found) if found.starts_with(&self.dir) => writeln!(
                out,
                "git help prove-it and git prove-it --help open {}",
                found.display()
            ),
            Some(found) => writeln!(
                out,
                "warning: man finds another git-prove-it page first: {}\nhint: remove it, or put {} first in MANPATH",
                found.display(),
                root.display()
            ),
            None => {
                writeln!(
                    out,
                    "warning: man does not find git-prove-it(1) in {} (or man is not installed)",
                    root.display()
                )?;
                // man-db adds <prefix>/share/man by itself for every <prefix>/bin on PATH.
                let prefix = root
                    .parent()
                    .and_then(Path::parent)
                    .filter(|_| root.ends_with("share/man"));
                if let Some(prefix) = prefix {
                    writeln!(
                        out,
                        "hint: put {} on PATH: man then searches {} by itself",
                        prefix.join("bin").display(),
                        root.display()
                    )?;
                }
                writeln!(
                    out,
                    "hint: {}add to your shell's profile: export MANPATH=\"{}:$MANPATH\"",
                    if prefix.is_some() { "or " } else { "" },
                    root.display()
                )
            }
        }
    }
}
