//! The only place that touches the repository: discovery, git config (read and written), the
//! state tree, the notes store, the hooks directory, verify.sh on disk, and the state directory
//! with its files (run logs, the ledger, session files, the announcement marker).
//!
//! Nothing here prints, spawns verify.sh or decides anything; it observes and records. It never
//! takes the user's `index.lock` and never writes the user's index (a commit worktree's own
//! index it writes when it moves that worktree to another commit: `checkout`). It stores and
//! loads note texts without knowing their format: how two notes merge is the caller's to say.

mod ahead_files;
mod checkout;
mod config;
mod error;
mod hiding_rules;
mod history;
mod hooks;
mod input_tree;
pub(crate) mod ledger;
mod names;
mod notes;
mod notes_sync;
pub(crate) mod protected;
mod reflog;
mod remote;
mod rename_watch;
mod repo;
mod run_start;
mod script_link;
mod session;
mod state_dir;
mod state_tree;
#[cfg(test)]
mod test_repo;
mod untracked;
mod verify_file;
mod worktree;
mod worktree_events;

pub(crate) use ahead_files::AheadFiles;
pub(crate) use error::{Error, RefusedRef, RemoteSaid};
/// An object id, as every type in `git/` names commits, trees and blobs.
pub(crate) use gix::ObjectId;
pub(crate) use history::{CommitInfo, Selection};
pub(crate) use hooks::Hook;
pub(crate) use names::{
    ANCHORS_REF, CHECKS_FILE, CLAIMS_REF, FAILURES_REF, PROOFS_REF, VERIFY_SCRIPT,
};
pub(crate) use notes::Notes;
pub(crate) use notes_sync::{Merged, Tips};
pub(crate) use remote::Synced;
pub(crate) use rename_watch::Renames;
pub(crate) use repo::Repo;
pub(crate) use script_link::LinkProblem;
pub(crate) use session::{RunLock, SessionFiles, SessionLock, session_key, session_key_blob};
pub(crate) use state_dir::read_run_log;
pub(crate) use state_tree::{IndexTrust, StateTree};
pub(crate) use verify_file::Armed;
pub(crate) use worktree::{LOCAL_ENV, TempWorktree};
pub(crate) use worktree_events::Tally;
