//! The ssh-keygen runs: `-Y sign` for a proof, and `-Y find-principals`, `-Y verify` and
//! `-Y check-novalidate` to check one, each through `crate::process` with the signed bytes on
//! stdin and the signature and key in temporary files.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use time::OffsetDateTime;

use super::Error;
use super::allowed_signers::{CANDIDATES_MAX_BYTES, Candidates};
use super::armor::Signature;
use super::config::{Config, DEFAULT_PROGRAM, Key, Signer, program};
use crate::process::{self, Finished, Stdin};

/// The namespace of every proof signature (`-n`), so that no signature made for something else
/// (a commit signs with `git`, an ssh login with none) can pass for a proof's, nor the reverse.
const NAMESPACE: &str = "git-prove-it";

impl Signer {
    /// Sign `bytes` in the proof namespace; the armored signature, ending in a newline.
    pub fn sign(&self, bytes: &str) -> Result<String, Error> {
        let literal;
        let (path, agent_only) = match &self.key {
            Key::File(path) => (path.as_path(), false),
            Key::Literal(key) => {
                literal = TempFile::new(&self.program, "key.pub", &format!("{key}\n"))?;
                (literal.path(), true)
            }
        };
        let output = run(&self.program, self.command(path, agent_only), bytes)?;
        let armor = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.success() || !armor.starts_with("-----BEGIN SSH SIGNATURE-----") {
            return Err(Error::SignFailed {
                program: self.program.clone(),
                stderr: last_line(&output.stderr),
            });
        }
        Ok(armor)
    }

    fn command(&self, key: &Path, agent_only: bool) -> process::Request<'static> {
        let mut command = process::Request::new(&self.program)
            .args(["-Y", "sign", "-n", NAMESPACE, "-f"])
            .arg(key);
        // As git does: a key given only as a public key must come from ssh-agent.
        if agent_only {
            command = command.arg("-U");
        }
        if !self.prompt {
            command = command
                .env("SSH_ASKPASS_REQUIRE", "force")
                .env("SSH_ASKPASS", "false");
        }
        command
    }
}

/// What checking one signature found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureCheck {
    /// Made by a key the allowed signers file names, for proofs, at the record's time.
    Good {
        principal: String,
        key: Option<String>,
    },
    /// Not a valid signature over these bytes: the record or the signature was altered.
    Bad,
    /// A valid signature by a key the allowed signers file does not allow.
    UnknownSigner { key: Option<String> },
}

/// Checks signatures against an allowed signers file (ssh-keygen(1), ALLOWED SIGNERS). It is
/// `Sync`: `check` and `log` check many proofs at once, one ssh-keygen per thread.
#[derive(Debug, Clone)]
pub struct Verifier {
    program: String,
    allowed_signers: PathBuf,
    /// The file as read when the verifier was made, to spare `-Y find-principals` where its
    /// answer is certain (`Candidates`); `None` when the program is not ssh-keygen or the file
    /// is too large to keep.
    candidates: Option<Candidates>,
}

impl Verifier {
    /// A verifier for `allowed_signers`, which must be readable.
    pub fn new(config: Config<'_>, allowed_signers: PathBuf) -> Result<Verifier, Error> {
        let contents = std::fs::File::open(&allowed_signers)
            .and_then(|file| {
                if !file.metadata()?.is_file() {
                    return Err(std::io::Error::other("not a file"));
                }
                let mut contents = Vec::new();
                file.take(CANDIDATES_MAX_BYTES + 1)
                    .read_to_end(&mut contents)?;
                Ok(contents)
            })
            .map_err(|source| Error::AllowedSigners {
                path: allowed_signers.clone(),
                source: source.into(),
            })?;
        let program = program(config)?;
        // The shortcut relies on how ssh-keygen itself reads the file; another program named
        // by gpg.ssh.program is asked everything.
        let is_ssh_keygen = Path::new(&program)
            .file_name()
            .is_some_and(|name| name == DEFAULT_PROGRAM);
        let fits = contents.len() as u64 <= CANDIDATES_MAX_BYTES;
        Ok(Verifier {
            program,
            allowed_signers,
            candidates: (is_ssh_keygen && fits)
                .then(|| Candidates::parse(&contents))
                .flatten(),
        })
    }

    /// Check `signature` as of `time`, the record's own time, so that a key retired since (its
    /// allowed signers line ends with `valid-before`) still verifies the proofs it made before.
    ///
    /// `-Y find-principals` names the principals to try with `-Y verify`, and when none
    /// verifies, `-Y check-novalidate` tells an unknown signer from an altered record: three
    /// runs. Where the file itself makes find-principals' answer certain (`Candidates`), it is
    /// not asked: a good signature by the usual ed25519 key then costs one run, not two.
    pub fn check(
        &self,
        signature: &Signature,
        time: OffsetDateTime,
    ) -> Result<SignatureCheck, Error> {
        let sig = TempFile::new(&self.program, "sig", &signature.armor)?;
        let at = verify_time(time);
        let shortcut = self
            .candidates
            .as_ref()
            .and_then(|candidates| candidates.principals(&signature.armor));
        let principals = if let Some(principals) = shortcut {
            principals
        } else {
            let find = process::Request::new(&self.program)
                .args(["-Y", "find-principals", "-O", &at, "-s"])
                .arg(sig.path())
                .arg("-f")
                .arg(&self.allowed_signers);
            let found = run(&self.program, find, "")?;
            if found.success() {
                String::from_utf8_lossy(&found.stdout)
                    .lines()
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_string)
                    .collect()
            } else {
                Vec::new()
            }
        };
        for principal in &principals {
            let verify = process::Request::new(&self.program)
                .args([
                    "-Y", "verify", "-O", &at, "-n", NAMESPACE, "-I", principal, "-f",
                ])
                .arg(&self.allowed_signers)
                .arg("-s")
                .arg(sig.path());
            let verified = run(&self.program, verify, &signature.signed)?;
            if verified.success() {
                return Ok(SignatureCheck::Good {
                    principal: principal.clone(),
                    key: key_of(&verified.stdout),
                });
            }
        }
        // No allowed principal verified it: a sound signature is an unknown signer (a key not
        // listed, or not for this namespace or time); anything else was altered.
        let novalidate = process::Request::new(&self.program)
            .args(["-Y", "check-novalidate", "-n", NAMESPACE, "-s"])
            .arg(sig.path());
        let checked = run(&self.program, novalidate, &signature.signed)?;
        Ok(if checked.success() {
            SignatureCheck::UnknownSigner {
                key: key_of(&checked.stdout),
            }
        } else {
            SignatureCheck::Bad
        })
    }
}

/// Whether `signature` is sound over the bytes it signs, in the proof namespace, by any key
/// (`-Y check-novalidate`): what the gate asks of a cached proof when signing is on and no
/// allowed signers file says whose keys count.
pub fn is_sound(config: Config<'_>, signature: &Signature) -> Result<bool, Error> {
    let program = program(config)?;
    let sig = TempFile::new(&program, "sig", &signature.armor)?;
    let novalidate = process::Request::new(&program)
        .args(["-Y", "check-novalidate", "-n", NAMESPACE, "-s"])
        .arg(sig.path());
    Ok(run(&program, novalidate, &signature.signed)?.success())
}

/// Run `command` with `input` on stdin and collect what it prints. ssh-keygen may exit before
/// reading everything (a key it cannot load): its exit status then says what happened.
fn run(program: &str, command: process::Request<'_>, input: &str) -> Result<Finished, Error> {
    command
        .stdin(Stdin::Bytes(input.as_bytes().to_vec()))
        .run()
        .map_err(|error| Error::Spawn {
            program: program.to_string(),
            source: error.into_source().into(),
        })
}

/// `-O verify-time=...` for ssh-keygen, in UTC (the `Z` suffix).
fn verify_time(time: OffsetDateTime) -> String {
    let t = time.to_offset(time::UtcOffset::UTC);
    format!(
        "verify-time={:04}{:02}{:02}{:02}{:02}{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// `ED25519 key SHA256:...` from ssh-keygen's `Good "git-prove-it" signature ... with <key>`.
fn key_of(stdout: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stdout);
    text.lines().find_map(|line| {
        line.rsplit_once(" with ")
            .map(|(_, key)| key.trim().to_string())
    })
}

fn last_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && *l != "Signing data on standard input")
        .unwrap_or("it exited without a signature")
        .to_string()
}

/// A file ssh-keygen reads by name (a signature, a public key), removed when dropped.
struct TempFile(tempfile::NamedTempFile);

impl TempFile {
    fn new(program: &str, suffix: &str, contents: &str) -> Result<TempFile, Error> {
        let error = |source: std::io::Error| Error::TempFile {
            program: program.to_string(),
            source: source.into(),
        };
        let mut file = tempfile::Builder::new()
            .prefix("git-prove-it-")
            .suffix(&format!(".{suffix}"))
            .tempfile()
            .map_err(error)?;
        file.write_all(contents.as_bytes()).map_err(error)?;
        file.flush().map_err(error)?;
        Ok(TempFile(file))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_prompt_ssh_keygen_asks_a_program_that_fails_not_the_terminal() {
        let signer = Signer {
            program: "ssh-keygen".into(),
            key: Key::File("k".into()),
            prompt: true,
        };
        let envs = |c: &process::Request<'_>| c.get_envs();
        assert!(envs(&signer.command(Path::new("k"), false)).is_empty());
        let quiet = signer.without_prompt().command(Path::new("k"), true);
        assert_eq!(
            envs(&quiet),
            [
                ("SSH_ASKPASS".into(), Some("false".into())),
                ("SSH_ASKPASS_REQUIRE".into(), Some("force".into())),
            ]
        );
        let args: Vec<_> = quiet.get_args().collect();
        assert_eq!(args, ["-Y", "sign", "-n", NAMESPACE, "-f", "k", "-U"]);
    }

    #[test]
    fn verify_time_is_utc_with_seconds() {
        let time = OffsetDateTime::from_unix_timestamp(1_795_978_336).unwrap();
        assert_eq!(verify_time(time), "verify-time=20261129185216Z");
    }

    #[test]
    fn the_key_is_read_from_ssh_keygens_good_line() {
        assert_eq!(
            key_of(b"Good \"git-prove-it\" signature for a@b with ED25519 key SHA256:abc\n"),
            Some("ED25519 key SHA256:abc".into())
        );
        assert_eq!(key_of(b""), None);
    }
}
