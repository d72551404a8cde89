//! How a script stands that cannot prove anything: verify.sh in the working tree (`Armed`) and a
//! check's script in a tree (`NotRunnable`), each as a fragment that reads after the script's
//! name ("verify.sh is not executable by its owner").

use crate::armed::{Armed, NotRunnable};

/// How the root's verify.sh stands, after "verify.sh ".
pub(crate) fn verify(armed: Armed) -> &'static str {
    match armed {
        Armed::Yes => "is armed",
        Armed::Missing => "does not exist at the worktree root",
        Armed::NotExecutable => "is not executable by its owner",
        Armed::NotAFile => "is not a regular file",
        Armed::LinkLeadsOutside => "is a link leading outside the worktree",
        Armed::DanglingLink => "is a link to nothing",
        Armed::LinkLoop => "is a link that goes through too many links (a loop)",
        Armed::LinkNotToFile => "is a link to something other than a file",
    }
}

/// Why a check's script cannot run, after its path.
pub(crate) fn script(why: NotRunnable) -> &'static str {
    match why {
        NotRunnable::Missing => "does not exist",
        NotRunnable::NotExecutable => "is not executable",
        NotRunnable::Link => "is a link, not a file",
    }
}
