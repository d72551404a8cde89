//! Whether a host runs a folder's hooks (its trust in the folder, the settings that turn hooks
//! off), as data `report/` words, and the reading of the files where hosts record it. Each
//! host's module knows its own files; this holds what they share.

use std::path::{Path, PathBuf};

use super::payload_file::{self, Part, READ_TIME};

/// Whether a host runs a folder's project hooks, as far as its records tell: data, which
/// `report/doctor.rs` words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Trust {
    /// The host's record trusts the folder: its project hooks run.
    Trusted,
    /// The host's record (`record`) does not trust the folder, so its project hooks likely do
    /// not run.
    NotRecorded { record: PathBuf },
    /// The host reads a project's hooks file only in a project its record trusts (Codex CLI),
    /// and its record (`record`) does not trust this one: `agent` does not read `hooks_file`.
    ProjectNotTrusted {
        record: PathBuf,
        agent: &'static str,
        hooks_file: &'static str,
    },
    /// The project is trusted, but whether `agent` approved its hooks cannot be read from here,
    /// and it skips unapproved hooks silently.
    ApprovalUnknown { agent: &'static str },
}

/// A setting of one of the host's settings layers that keeps it from running hooks (all of
/// them, or the gate's), so that no stop is gated however the hooks are wired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HooksOff {
    /// The settings file that holds it.
    pub file: PathBuf,
    /// The key as the host's documentation spells it.
    pub key: &'static str,
    /// What the key is, and so how to turn the hooks back on.
    pub switch: Switch,
}

/// The kinds of settings that turn a host's hooks off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Switch {
    /// A switch that runs hooks when true, set to false.
    EnabledFalse,
    /// A switch that turns every hook off when true, set to true.
    DisabledTrue,
    /// A list of hook commands not to run, which names the gate's.
    ListsOurs,
}

/// The value at `path` (object keys) in a JSON document.
pub(super) fn json_at<'a>(
    value: &'a serde_json::Value,
    path: &[&str],
) -> Option<&'a serde_json::Value> {
    path.iter().try_fold(value, |value, key| value.get(key))
}

/// The user's home directory, as the hosts find it.
pub(super) fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

/// A directory named by `var` when it is set, else `default`.
pub(super) fn dir_from(var: &str, default: impl FnOnce() -> PathBuf) -> PathBuf {
    std::env::var_os(var).map_or_else(default, PathBuf::from)
}

/// A host's own records are small; a larger file is not read.
const RECORD_CAP: u64 = 16 * 1024 * 1024;

/// A JSON file's value, or None when it cannot be read or parsed. Read as a payload's file is
/// (`payload_file`): an agent can put a FIFO where a host keeps its records.
pub(super) fn read_json(file: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&read_record(file)?).ok()
}

/// A host's record file, when it is a regular file that can be read in time.
pub(super) fn read_record(file: &Path) -> Option<Vec<u8>> {
    payload_file::read(file, Part::Whole(RECORD_CAP), READ_TIME).ok()
}

/// Whether an environment variable says yes.
pub(super) fn env_true(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| matches!(value.trim(), "1" | "true" | "yes"))
}
