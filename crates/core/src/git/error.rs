//! Why the repository could not be read or written (`Error`), with git's own words where git
//! gave them.

use std::path::PathBuf;

/// Why the repository could not be observed or a proof could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("not in a git repository: {path}")]
    NotARepository {
        path: PathBuf,
        #[source]
        source: gix::Error,
    },
    #[error("{path} does not exist or cannot be read")]
    NoSuchDirectory {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a directory")]
    NotADirectory { path: PathBuf },
    #[error("could not look for a git repository at {path}")]
    Discover {
        path: PathBuf,
        #[source]
        source: gix::Error,
    },
    #[error("{path} is a bare repository, which has no working state to prove")]
    Bare { path: PathBuf },
    #[error("could not read {what}")]
    Read {
        what: String,
        #[source]
        source: gix::Error,
    },
    #[error("could not write {what}")]
    Write {
        what: String,
        #[source]
        source: gix::Error,
    },
    #[error("could not read {path} in the working tree")]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "'{path}' is a git repository with no commit checked out; git refuses to add it, and so do we"
    )]
    EmbeddedRepositoryWithoutCommit { path: String },
    #[error(
        "{path} on disk is not what the state tree records for it ({reason}), so a proof would name a verify.sh that did not run"
    )]
    VerifyNotAsRecorded { path: String, reason: &'static str },
    /// A check's script or the checks file, on disk, is not the blob the state tree records
    /// (a clean filter or an index flag), so a proof would name bytes that did not run.
    #[error(
        "{path} on disk is not what the state tree records for it (a clean filter, an end-of-line conversion or an index flag changes it), so a proof would name a {what} that did not run"
    )]
    NotAsRecorded { path: String, what: &'static str },
    #[error(
        "verify.sh leads to '{target}', which is not part of the working state (it is ignored, or inside .git or a submodule), so a proof could not name what ran"
    )]
    VerifyOutsideState { target: String },
    #[error("{path} is a link to '{target}', which {problem}, so what it runs cannot be checked")]
    ScriptLink {
        path: String,
        target: String,
        problem: super::script_link::LinkProblem,
    },
    #[error(
        "submodule {} has changes its checked-out commit does not hold (uncommitted, or untracked and not ignored), so no proof can vouch for this state",
        quoted(.paths)
    )]
    DirtySubmodules { paths: Vec<String> },
    #[error("the ref {name} does not lead to an object")]
    RefUnpeelable {
        name: String,
        #[source]
        source: gix::Error,
    },
    #[error("could not update {name}: it kept changing under us after {attempts} attempts")]
    RefContention { name: String, attempts: u32 },
    #[error(
        "could not update {name}: its lock {} is held by another process (a git command still running, or one that was killed)",
        .lock.display()
    )]
    RefLocked { name: String, lock: PathBuf },
    #[error("could not create {path}")]
    StateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not watch {path} for changes")]
    WatchWorktree {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not use {path}")]
    StateFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not read {path}")]
    ReadFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not write {path}")]
    WriteFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not create {path}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not make {path} executable")]
    MakeExecutable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} already exists and is not ours; it was left as it is")]
    HookNotOurs { path: PathBuf },
    #[error("could not set {key} in {path}")]
    ConfigWrite {
        key: String,
        path: PathBuf,
        #[source]
        source: gix::Error,
    },
    #[error("the note {note} attached to {tree} is not text")]
    NoteNotText {
        note: gix::ObjectId,
        tree: gix::ObjectId,
    },
    #[error("could not resolve the revision {spec:?}")]
    Revision {
        spec: String,
        #[source]
        source: gix::Error,
    },
    #[error("the revision {spec:?} does not name a commit")]
    NotACommit { spec: String },
    #[error("could not run git {command}")]
    GitSpawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{remote} refused {}",
        .refused.iter().map(|r| format!("{}: {}", r.name, r.reason)).collect::<Vec<_>>().join("; ")
    )]
    PushRefused {
        remote: String,
        refused: Vec<RefusedRef>,
        /// What git and the remote printed on stderr besides, when they printed more than
        /// "failed to push some refs".
        #[source]
        said: Option<RemoteSaid>,
    },
    #[error("git {command} failed: {stderr}")]
    GitFailed { command: String, stderr: String },
    #[error("git {command} gave no answer within {seconds} s")]
    GitTimedOut { command: String, seconds: u64 },
    #[error("could not clean up the temporary worktree {path}")]
    WorktreeCleanup {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A ref a remote refused in a push, with git's own words for why (`git push --porcelain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedRef {
    /// The remote's ref, `refs/notes/prove-it`.
    pub name: String,
    /// git's status and reason, as it printed them: `[remote rejected] (pre-receive hook declined)`.
    pub reason: String,
}

/// The words git and a remote printed about a push (`remote: error: cannot lock ref ...`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RemoteSaid(pub String);

/// Paths as `'a', 'b'`, for a message.
fn quoted(paths: &[String]) -> String {
    paths
        .iter()
        .map(|path| format!("'{path}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Error {
    /// Whether the working tree's content, not the infrastructure, caused this error: such
    /// errors are the repository's to fix, like a failing verify.sh.
    pub fn is_worktree_content(&self) -> bool {
        matches!(
            self,
            Error::Unreadable { .. }
                | Error::EmbeddedRepositoryWithoutCommit { .. }
                | Error::VerifyNotAsRecorded { .. }
                | Error::VerifyOutsideState { .. }
                | Error::NotAsRecorded { .. }
                | Error::DirtySubmodules { .. }
        )
    }

    pub fn read(what: impl Into<String>) -> impl FnOnce(gix::Error) -> Error {
        let what = what.into();
        move |source| Error::Read { what, source }
    }

    pub fn write(what: impl Into<String>) -> impl FnOnce(gix::Error) -> Error {
        let what = what.into();
        move |source| Error::Write { what, source }
    }
}
