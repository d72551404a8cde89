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
pub mod ledger;
mod names;
mod notes;
mod notes_sync;
pub mod protected;
mod reflog;
mod remote;
mod rename_watch;
mod repo;
mod run_start;
pub use run_start::FsTime;
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

pub use ahead_files::AheadFiles;
pub use error::{Error, RefusedRef, RemoteSaid};
/// An object id, as every type in `git/` names commits, trees and blobs.
pub use gix::ObjectId;
pub use history::{CommitInfo, Selection};
pub use hooks::Hook;
pub use names::{ANCHORS_REF, CHECKS_FILE, CLAIMS_REF, FAILURES_REF, PROOFS_REF, VERIFY_SCRIPT};
pub use notes::Notes;
pub use notes_sync::{Merged, Tips};
pub use remote::Synced;
pub use rename_watch::Renames;
pub use repo::Repo;
pub use script_link::LinkProblem;
pub use session::{RunLock, SessionFiles, SessionLock, session_key, session_key_blob};
pub use state_dir::read_run_log;
pub use state_tree::{IndexTrust, StateTree};
pub use verify_file::Armed;
pub use worktree::{LOCAL_ENV, TempWorktree};
pub use worktree_events::Tally;
