//! The only place that touches the repository: discovery, the state tree, the notes store,
//! session files and the ledger under the state directory.
//!
//! Nothing here prints, spawns verify.sh or decides anything; it observes and records. It never
//! takes `index.lock` and never writes the user's index.

mod error;
mod history;
pub(crate) mod ledger;
mod names;
mod notes;
mod notes_sync;
mod reflog;
mod remote;
mod repo;
mod session;
mod state_tree;
mod worktree;

pub(crate) use error::Error;
pub(crate) use history::{CommitInfo, Selection};
pub(crate) use names::{ANCHORS_REF, CLAIMS_REF, LAST_RUN_LOG, PROOFS_REF};
pub(crate) use notes::Notes;
pub(crate) use notes_sync::{Merged, all_notes};
pub(crate) use remote::Synced;
pub(crate) use repo::{Armed, Repo};
pub(crate) use session::{SessionFiles, SessionLock, session_key, session_key_blob};
pub(crate) use state_tree::StateTree;
pub(crate) use worktree::LOCAL_ENV;
