//! Whether a script can prove anything, and if not, why not: verify.sh in the working tree
//! (`Armed`, which `git/` reads from disk) and a check's script in a tree (`NotRunnable`, which
//! `proof::Check::runnable` reads from the tree). Values only: `report/` words them, and the turn
//! state keeps them as they are.

use serde::{Deserialize, Serialize};

/// Whether verify.sh can prove anything, and if not, why not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Armed {
    Yes,
    Missing,
    NotExecutable,
    NotAFile,
    LinkLeadsOutside,
    DanglingLink,
    LinkLoop,
    LinkNotToFile,
}

impl Armed {
    pub fn is_armed(self) -> bool {
        self == Armed::Yes
    }
}

/// Why a check's script, as a tree holds it, cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotRunnable {
    /// The tree holds no file at the script's path.
    Missing,
    /// The tree holds it without its executable bit.
    NotExecutable,
    /// A named check's script is a link: a link's blob is its target's name, and a proof must
    /// name the bytes that ran.
    Link,
}
