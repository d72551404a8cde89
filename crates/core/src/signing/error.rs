//! What can go wrong when signing or checking, as data: the words that fix each are the report
//! layer's.

use std::path::PathBuf;

use super::config::{FORMAT_CONFIG, KEY_CONFIG, SIGN_CONFIG};

/// Cloned where a command resolves its signer once and proves many times (`Context::signer`):
/// the I/O errors it holds are shared.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    #[error(
        "{SIGN_CONFIG} is on, but {FORMAT_CONFIG} is {format:?}: only SSH signatures are supported"
    )]
    NotSsh { format: String },
    #[error("{SIGN_CONFIG} is on, but no signing key is configured ({KEY_CONFIG})")]
    NoKey,
    #[error("the signing key {path} does not exist")]
    KeyMissing { path: PathBuf },
    #[error("{program} was not found on PATH")]
    ProgramMissing { program: String },
    #[error("could not run {program}")]
    Spawn {
        program: String,
        #[source]
        source: std::sync::Arc<std::io::Error>,
    },
    #[error("{program} could not sign the proof: {stderr}")]
    SignFailed { program: String, stderr: String },
    #[error("the allowed signers file {path} cannot be read")]
    AllowedSigners {
        path: PathBuf,
        #[source]
        source: std::sync::Arc<std::io::Error>,
    },
    #[error("could not write a temporary file for {program}")]
    TempFile {
        program: String,
        #[source]
        source: std::sync::Arc<std::io::Error>,
    },
}
