//! Every ref and path name the tool stores things under, in one place.

/// Proofs, keyed by state tree id. Shared: pushed and fetched explicitly.
pub const PROOFS_REF: &str = "refs/notes/prove-it";

/// Failure records (a check's failing runs), keyed as proofs are. Local: pushed and fetched
/// only by `sync --with-failures`.
pub const FAILURES_REF: &str = "refs/notes/prove-it-failures";

/// Anchors (what the gate saw at session start), keyed by session and worktree. Local: never pushed.
pub const ANCHORS_REF: &str = "refs/notes/prove-it-anchors";

/// The script that proves a working state, at the worktree root.
pub const VERIFY_SCRIPT: &str = "verify.sh";

/// Whether `path` (repository-relative) is a `.gitattributes` file, at the root or below.
pub(super) fn is_attributes_file(path: &[u8]) -> bool {
    path == b".gitattributes" || path.ends_with(b"/.gitattributes")
}

/// The checks file, at the worktree root: the named checks a state is proven by (its format
/// is `proof::checks_file`'s).
pub const CHECKS_FILE: &str = "prove-it.toml";

/// Local state (run logs, counters, locks) under the common git dir; never shared.
pub const STATE_DIR: &str = "prove-it";

/// The full output of the last verify.sh run, under [`STATE_DIR`].
pub const LAST_RUN_LOG: &str = "last-run.log";
/// What the tests of the last run were, one line per check, for `doctor`.
pub const LAST_RUN_TESTS: &str = "last-run.tests";

/// A copy of the full output of the last verify.sh run that failed, under [`STATE_DIR`]: the
/// next run, passing, writes over [`LAST_RUN_LOG`], not this.
pub const LAST_FAILED_RUN_LOG: &str = "last-failed-run.log";

/// What an agent session's copy of its last failing run's log ends in, beside its `<key>.log`.
pub const FAILED_LOG_SUFFIX: &str = ".failed.log";

/// The prefix, under [`STATE_DIR`], of the file whose ctime marks a verify.sh run's start.
pub const RUN_START_PREFIX: &str = "run-start.";

/// The marker, under [`STATE_DIR`], that the gate's announcement was made in this repository.
pub const ANNOUNCED: &str = "announced";
/// The marker that the gate said, once, that it is inert in a repository without verify.sh.
pub const TOLD_INERT: &str = "told-inert";

/// Validated oracle packets of `git prove-it claim --record`, keyed by state tree id.
pub const CLAIMS_REF: &str = "refs/notes/prove-it-claims";

/// Where `sync` and the pre-push hook keep a remote's proofs as last fetched:
/// `refs/notes/prove-it-remotes/<remote>`. Local only; never pushed.
pub const REMOTE_PROOFS_PREFIX: &str = "refs/notes/prove-it-remotes/";

/// The full output of each commit `run <range>` proved, `<commit id>.log` (and the last
/// failing run's `<commit id>.failed.log`), under [`STATE_DIR`].
pub const COMMIT_LOGS_DIR: &str = "commit-logs";

/// Where `sync --with-failures` keeps a remote's failure records as last fetched:
/// `refs/notes/prove-it-failures-remotes/<remote>`. Local only; never pushed.
pub const REMOTE_FAILURES_PREFIX: &str = "refs/notes/prove-it-failures-remotes/";

/// The temporary worktrees of commit runs, in a repository's folder under [`CACHE_DIR`].
pub const WORKTREES_DIR: &str = "worktrees";

/// The folder under the user's cache directory that holds each repository's commit worktrees.
pub const CACHE_DIR: &str = "git-prove-it";

/// In a repository's folder under [`CACHE_DIR`], the folder of `dir`, the link to its common
/// git directory that commit worktrees name.
pub const GIT_LINK_DIR: &str = "git";
