//! What can go wrong when signing or checking, and the hint for each.

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

impl Error {
    /// What to do about it, for a `hint:` line.
    pub fn hint(&self) -> &'static str {
        match self {
            Error::NotSsh { .. } => "sign with an SSH key: git config gpg.format ssh",
            Error::NoKey | Error::KeyMissing { .. } => {
                "name your SSH key: git config user.signingKey ~/.ssh/id_ed25519 (a public key \
                 file works when ssh-agent holds its private key)"
            }
            Error::ProgramMissing { .. } | Error::Spawn { .. } => {
                "install OpenSSH's ssh-keygen (8.2 or later), or name it: git config gpg.ssh.program PATH"
            }
            Error::SignFailed { .. } => {
                "check that the key can sign without a prompt: ssh-add -l lists the keys ssh-agent holds"
            }
            Error::AllowedSigners { .. } => {
                "name a readable allowed signers file: --allowed-signers FILE, or git config prove-it.allowedSigners FILE"
            }
            Error::TempFile { .. } => "check that the temporary directory (TMPDIR) is writable",
        }
    }
}
