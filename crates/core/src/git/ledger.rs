//! The ledger's file: one JSON line per turn the gate refused (or skipped, or could not check),
//! kept under the state directory, never shared; what a line holds is the gate's
//! (`gate::LedgerEntry`). Appended with one write per line, so concurrent
//! hooks never interleave within a line.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use super::{Error, Repo};

const LEDGER_FILE: &str = "ledger.jsonl";

pub fn path(repo: &Repo) -> Result<PathBuf, Error> {
    Ok(repo.state_dir()?.join(LEDGER_FILE))
}

/// Append one line, the JSON of `entry`.
pub fn append(repo: &Repo, entry: &impl serde::Serialize) -> Result<(), Error> {
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

/// Every line of the ledger, oldest first; a line that does not parse as a `T` is returned as
/// its text.
pub fn read<T: serde::de::DeserializeOwned>(repo: &Repo) -> Result<Vec<Result<T, String>>, Error> {
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
