//! A host's transcript, as a payload names it (Claude Code's `transcript_path`, Copilot's
//! `transcriptPath`): JSON lines, read only as a bounded regular file (`payload_file`), for the
//! agent's last answer. Each host says which entries are the agent's text.

use std::path::Path;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::payload_file::{self, Part, READ_TIME};

/// How much of a transcript's end is read for its last answer.
pub(super) const TAIL: u64 = 1024 * 1024;

/// The last entry of the transcript at `path` that `text_of` reads as the agent's text, if it
/// was written after `after` (the gate's previous answer in this session, ns since the epoch):
/// an older one is an earlier turn's, no claim of this one. A FIFO, a device or a directory
/// there is no transcript, and is never waited on.
pub(super) fn last_answer(
    path: &Path,
    after: Option<u64>,
    text_of: fn(&Value) -> Option<String>,
) -> Option<String> {
    let tail = payload_file::read(path, Part::Tail(TAIL), READ_TIME).ok()?;
    let (text, written) = String::from_utf8_lossy(&tail)
        .lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|event| Some((text_of(&event)?, written_ns(&event))))?;
    match after {
        Some(after) if written.is_none_or(|written| written <= after) => None,
        _ => Some(text),
    }
}

/// An entry's `timestamp` (RFC 3339, as Claude Code and Copilot write it), in ns since the
/// epoch.
fn written_ns(event: &Value) -> Option<u64> {
    let stamp = event["timestamp"].as_str()?;
    let time = OffsetDateTime::parse(stamp, &Rfc3339).ok()?;
    u64::try_from(time.unix_timestamp_nanos()).ok()
}
