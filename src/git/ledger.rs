//! The ledger: one JSON line per turn the gate refused (or skipped, or could not check), kept
//! under the state directory, never shared. Appended with one write per line, so concurrent
//! hooks never interleave within a line.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use super::{Error, Repo};

const LEDGER_FILE: &str = "ledger.jsonl";

/// One ledger line (DESIGN section 3).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Entry {
    pub ts: String,
    pub repo: String,
    pub host: String,
    pub session: String,
    /// The agent's last message: what it claimed when it tried to end the turn.
    pub claim: Option<String>,
    pub evidence_demanded: String,
    pub exit_code: Option<i32>,
    /// The summary line(s) seen in verify.sh's output, or what happened instead.
    pub actual: Vec<String>,
    pub attempt: u32,
}

pub(crate) fn path(repo: &Repo) -> Result<PathBuf, Error> {
    Ok(repo.state_dir()?.join(LEDGER_FILE))
}

pub(crate) fn append(repo: &Repo, entry: &Entry) -> Result<(), Error> {
    let path = path(repo)?;
    let mut line = serde_json::to_vec(entry).expect("a ledger entry serialises");
    line.push(b'\n');
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut file| file.write_all(&line))
        .map_err(|source| Error::StateFile { path, source })
}

/// Every line of the ledger, oldest first; a line that does not parse is returned as its text.
pub(crate) fn read(repo: &Repo) -> Result<Vec<Result<Entry, String>>, Error> {
    let path = path(repo)?;
    let text = match std::fs::read(&path) {
        Ok(data) => String::from_utf8_lossy(&data).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(Error::StateFile { path, source }),
    };
    Ok(text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).map_err(|_| line.to_string()))
        .collect())
}
