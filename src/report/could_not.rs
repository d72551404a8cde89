//! What a command could not do, said above an error of a layer below (an I/O error, a host's
//! settings that do not parse), which says why: one function per case, from plain values.
//! `cli/` puts the sentence on the error as it fails (`anyhow`'s context).

use std::fmt::Display;
use std::path::Path;

/// The directory the command was started in.
pub(crate) fn read_the_current_directory() -> String {
    "could not read the current directory".to_string()
}

/// A file `path` the command reads.
pub(crate) fn read(path: &Path) -> String {
    format!("could not read {}", path.display())
}

/// A file `path` the command writes.
pub(crate) fn write(path: &Path) -> String {
    format!("could not write {}", path.display())
}

/// A file `path` the command opens to write.
pub(crate) fn open(path: &Path) -> String {
    format!("could not open {}", path.display())
}

/// A directory `path` the command makes.
pub(crate) fn create(path: &Path) -> String {
    format!("could not create {}", path.display())
}

/// `install-man`'s pages, made from the commands' `--help`.
pub(crate) fn render_the_man_pages() -> String {
    "could not render the man pages".to_string()
}

/// `init`'s wiring of the host named `host`, whose settings at `path` do not parse.
pub(crate) fn wire(host: &str, path: &Path) -> String {
    format!(
        "could not wire {host}: {} cannot be read as settings",
        path.display()
    )
}

/// `init --user-level`'s wiring of the host named `host`, whose user-wide settings at `path`
/// do not parse.
pub(crate) fn wire_user_wide(host: &str, path: &Path) -> String {
    format!(
        "could not wire {host} user-wide: {} cannot be read as settings",
        path.display()
    )
}

/// The checks of `tree` that `revoke` or `accept` resolves.
pub(crate) fn read_the_checks_of_tree(tree: impl Display) -> String {
    format!("could not read the checks of tree {tree}")
}

/// The contest record `revoke` or `accept` signs.
pub(crate) fn sign_the_record() -> String {
    "could not sign the record".to_string()
}

/// `bisect`'s reading of what a run found for `commit`.
pub(crate) fn read_what_run_found(commit: impl Display) -> String {
    format!("could not read what 'git prove-it run' found for {commit}")
}

/// `claim --validate`'s packets, read from stdin.
pub(crate) fn read_the_packets() -> String {
    "could not read the packets from stdin".to_string()
}

/// The assignment `claim` hands the oracle.
pub(crate) fn write_the_oracles_assignment() -> String {
    "could not write the oracle's assignment".to_string()
}

/// An assignment `claim` hands a lens.
pub(crate) fn write_a_lens_assignment() -> String {
    "could not write a lens assignment".to_string()
}

/// The oracle's packet `claim --record` keeps.
pub(crate) fn write_the_oracle_packet() -> String {
    "could not write the oracle packet".to_string()
}

/// The `--exec` script named `path`, made absolute.
pub(crate) fn find_the_script(path: &Path) -> String {
    format!("could not find the script {}", path.display())
}

/// The `--exec` script at `path`.
pub(crate) fn read_the_script(path: &Path) -> String {
    format!("could not read the script {}", path.display())
}

/// The setup script `run` of a checks file, for a commit.
pub(crate) fn run_the_setup_script(run: &str) -> String {
    format!("could not run the setup script {run}")
}

/// The refs git hands the pre-push hook on stdin.
pub(crate) fn read_the_pushed_refs() -> String {
    "could not read the refs being pushed from stdin".to_string()
}
