//! SSH signatures over proof records, made and checked by `ssh-keygen -Y`, as git itself signs
//! commits with `gpg.format = ssh` (issue 10).
//!
//! Shelling out to ssh-keygen is deliberate and allowed by the project's rules: it is what git
//! itself runs for `gpg.format = ssh`, so proofs are signed and checked exactly as the same
//! people's commits are, with the same keys, agent and allowed signers files; a reimplementation
//! would be a second, weaker copy. This module spawns ssh-keygen (or `gpg.ssh.program`) and
//! nothing else; it never prints and never touches the repository.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use time::OffsetDateTime;

use crate::proof::Signature;

/// The namespace of every proof signature (`-n`), so that no signature made for something else
/// (a commit signs with `git`, an ssh login with none) can pass for a proof's, nor the reverse.
pub(crate) const NAMESPACE: &str = "git-prove-it";

pub(crate) const SIGN_CONFIG: &str = "prove-it.sign";
pub(crate) const ALLOWED_SIGNERS_CONFIG: &str = "prove-it.allowedSigners";
pub(crate) const GIT_ALLOWED_SIGNERS_CONFIG: &str = "gpg.ssh.allowedSignersFile";
const FORMAT_CONFIG: &str = "gpg.format";
const KEY_CONFIG: &str = "user.signingKey";
const PROGRAM_CONFIG: &str = "gpg.ssh.program";
const DEFAULT_PROGRAM: &str = "ssh-keygen";
/// git's prefix for a public key written into `user.signingKey` itself.
const LITERAL_KEY_PREFIX: &str = "key::";

#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
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
        source: std::io::Error,
    },
    #[error("{program} could not sign the proof: {stderr}")]
    SignFailed { program: String, stderr: String },
    #[error("the allowed signers file {path} cannot be read")]
    AllowedSigners {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not write a temporary file for {program}")]
    TempFile {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// What to do about it, for a `hint:` line.
    pub(crate) fn hint(&self) -> &'static str {
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

/// Git config as the signing settings need it: a value by key.
pub(crate) type Config<'a> = &'a dyn Fn(&str) -> Option<String>;

/// What signs proofs: ssh-keygen and a key, as `gpg.format = ssh` and `user.signingKey` say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signer {
    program: String,
    key: Key,
    /// Whether ssh-keygen may ask for a passphrase on the terminal.
    prompt: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Key {
    /// A private key file, or a public key file whose private key ssh-agent holds.
    File(PathBuf),
    /// A public key given in the config itself (`key::ssh-ed25519 AAAA...`), held by ssh-agent.
    Literal(String),
}

/// Whether `prove-it.sign` asks for signed proofs.
pub(crate) fn wanted(config: Config<'_>) -> bool {
    config(SIGN_CONFIG).is_some_and(|v| is_true(&v))
}

impl Signer {
    /// The signer the configuration asks for: `None` when `prove-it.sign` is off, an error when
    /// it is on and signing cannot work, so that a proof is never silently left unsigned. `home`
    /// expands a leading `~/` in a key path, as git does.
    pub(crate) fn from_config(
        config: Config<'_>,
        home: Option<&Path>,
    ) -> Result<Option<Signer>, Error> {
        if !wanted(config) {
            return Ok(None);
        }
        let format = config(FORMAT_CONFIG).unwrap_or_else(|| "openpgp".to_string());
        if !format.eq_ignore_ascii_case("ssh") {
            return Err(Error::NotSsh { format });
        }
        let key = config(KEY_CONFIG)
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .ok_or(Error::NoKey)?;
        // git takes `key::` and, for compatibility, a bare `ssh-...` as the key itself.
        let key = if let Some(literal) = key.strip_prefix(LITERAL_KEY_PREFIX) {
            Key::Literal(literal.trim().to_string())
        } else if key.starts_with("ssh-") {
            Key::Literal(key)
        } else {
            let path = expand_home(&key, home);
            if !path.is_file() {
                return Err(Error::KeyMissing { path });
            }
            Key::File(path)
        };
        let program = program(config)?;
        Ok(Some(Signer {
            program,
            key,
            prompt: true,
        }))
    }

    /// Never ask for a passphrase: in a hook, nobody answers, and a prompt on the terminal the
    /// agent runs in would hang its stop until the host's timeout. ssh-keygen is made to ask a
    /// program that fails instead, so a key that needs a passphrase and is not in ssh-agent is a
    /// quick error.
    pub(crate) fn without_prompt(self) -> Signer {
        Signer {
            prompt: false,
            ..self
        }
    }

    /// Sign `bytes` in the proof namespace; the armored signature, ending in a newline.
    pub(crate) fn sign(&self, bytes: &str) -> Result<String, Error> {
        let literal;
        let (path, agent_only) = match &self.key {
            Key::File(path) => (path.as_path(), false),
            Key::Literal(key) => {
                literal = TempFile::new(&self.program, "key.pub", &format!("{key}\n"))?;
                (literal.path(), true)
            }
        };
        let output = run(&self.program, &mut self.command(path, agent_only), bytes)?;
        let armor = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() || !armor.starts_with("-----BEGIN SSH SIGNATURE-----") {
            return Err(Error::SignFailed {
                program: self.program.clone(),
                stderr: last_line(&output.stderr),
            });
        }
        Ok(armor)
    }
}

impl Signer {
    fn command(&self, key: &Path, agent_only: bool) -> Command {
        let mut command = Command::new(&self.program);
        command.args(["-Y", "sign", "-n", NAMESPACE, "-f"]).arg(key);
        // As git does: a key given only as a public key must come from ssh-agent.
        if agent_only {
            command.arg("-U");
        }
        if !self.prompt {
            command
                .env("SSH_ASKPASS_REQUIRE", "force")
                .env("SSH_ASKPASS", "false");
        }
        command
    }
}

/// What checking one signature found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Checked {
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

/// Checks signatures against an allowed signers file (ssh-keygen(1), ALLOWED SIGNERS).
#[derive(Debug, Clone)]
pub(crate) struct Verifier {
    program: String,
    allowed_signers: PathBuf,
}

impl Verifier {
    /// A verifier for `allowed_signers`, which must be readable.
    pub(crate) fn new(config: Config<'_>, allowed_signers: PathBuf) -> Result<Verifier, Error> {
        let readable = std::fs::File::open(&allowed_signers).and_then(|file| {
            if file.metadata()?.is_file() {
                Ok(())
            } else {
                Err(std::io::Error::other("not a file"))
            }
        });
        if let Err(source) = readable {
            return Err(Error::AllowedSigners {
                path: allowed_signers,
                source,
            });
        }
        Ok(Verifier {
            program: program(config)?,
            allowed_signers,
        })
    }

    /// Check `signature` as of `time`, the record's own time, so that a key retired since (its
    /// allowed signers line ends with `valid-before`) still verifies the proofs it made before.
    pub(crate) fn check(
        &self,
        signature: &Signature,
        time: OffsetDateTime,
    ) -> Result<Checked, Error> {
        let sig = TempFile::new(&self.program, "sig", &signature.armor)?;
        let at = verify_time(time);
        let mut find = Command::new(&self.program);
        find.args(["-Y", "find-principals", "-O", &at, "-s"])
            .arg(sig.path())
            .arg("-f")
            .arg(&self.allowed_signers);
        let found = run(&self.program, &mut find, "")?;
        if found.status.success() {
            let principals = String::from_utf8_lossy(&found.stdout).into_owned();
            for principal in principals.lines().map(str::trim).filter(|p| !p.is_empty()) {
                let mut verify = Command::new(&self.program);
                verify
                    .args([
                        "-Y", "verify", "-O", &at, "-n", NAMESPACE, "-I", principal, "-f",
                    ])
                    .arg(&self.allowed_signers)
                    .arg("-s")
                    .arg(sig.path());
                let verified = run(&self.program, &mut verify, &signature.signed)?;
                if verified.status.success() {
                    return Ok(Checked::Good {
                        principal: principal.to_string(),
                        key: key_of(&verified.stdout),
                    });
                }
            }
        }
        // No allowed principal verified it: a sound signature is an unknown signer (a key not
        // listed, or not for this namespace or time); anything else was altered.
        let mut novalidate = Command::new(&self.program);
        novalidate
            .args(["-Y", "check-novalidate", "-n", NAMESPACE, "-s"])
            .arg(sig.path());
        let checked = run(&self.program, &mut novalidate, &signature.signed)?;
        Ok(if checked.status.success() {
            Checked::UnknownSigner {
                key: key_of(&checked.stdout),
            }
        } else {
            Checked::Bad
        })
    }
}

/// The allowed signers file to check against: `--allowed-signers`, else `prove-it.allowedSigners`,
/// else `gpg.ssh.allowedSignersFile`. Config paths may start with `~/` and are relative to
/// `base`: the worktree root, so that a file committed to the repository can be named as it is in
/// the tree, or in a bare repository the current directory, as for git (`cli::signers`).
pub(crate) fn allowed_signers(
    flag: Option<&Path>,
    config: Config<'_>,
    home: Option<&Path>,
    base: &Path,
) -> Option<PathBuf> {
    if let Some(path) = flag {
        return Some(path.to_owned());
    }
    [ALLOWED_SIGNERS_CONFIG, GIT_ALLOWED_SIGNERS_CONFIG]
        .iter()
        .find_map(|key| config(key).filter(|v| !v.trim().is_empty()))
        .map(|value| base.join(expand_home(value.trim(), home)))
}

/// Run `command` with `input` on stdin and collect what it prints.
fn run(program: &str, command: &mut Command, input: &str) -> Result<std::process::Output, Error> {
    let spawn = |source| Error::Spawn {
        program: program.to_string(),
        source,
    };
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn)?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // ssh-keygen may exit before reading everything (a key it cannot load): a closed pipe then
    // is not our error, its exit status says what happened.
    let written = stdin.write_all(input.as_bytes());
    drop(stdin);
    let output = child.wait_with_output().map_err(spawn)?;
    match written {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(spawn(error)),
        _ => Ok(output),
    }
}

/// `ssh-keygen` unless `gpg.ssh.program` names another, which must be found before anything runs.
fn program(config: Config<'_>) -> Result<String, Error> {
    let program = config(PROGRAM_CONFIG)
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| DEFAULT_PROGRAM.to_string());
    let found = if program.contains('/') {
        Path::new(&program).is_file()
    } else {
        std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| dir.join(&program).is_file())
        })
    };
    if found {
        Ok(program)
    } else {
        Err(Error::ProgramMissing { program })
    }
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

fn expand_home(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

fn is_true(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// A file ssh-keygen reads by name (a signature, a public key), removed when dropped.
struct TempFile(tempfile::NamedTempFile);

impl TempFile {
    fn new(program: &str, suffix: &str, contents: &str) -> Result<TempFile, Error> {
        let error = |source| Error::TempFile {
            program: program.to_string(),
            source,
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

    fn config(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), (*v).to_string()))
            .collect();
        move |key| {
            pairs
                .iter()
                .find(|(k, _)| *k == key.to_ascii_lowercase())
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn signing_off_needs_nothing_and_on_needs_ssh_and_a_key() {
        assert_eq!(Signer::from_config(&config(&[]), None).unwrap(), None);
        assert_eq!(
            Signer::from_config(&config(&[(SIGN_CONFIG, "false")]), None).unwrap(),
            None
        );
        let on = |extra: &[(&'static str, &'static str)]| {
            let mut pairs = vec![(SIGN_CONFIG, "true")];
            pairs.extend_from_slice(extra);
            Signer::from_config(&config(&pairs), Some(Path::new("/home/x")))
        };
        assert!(matches!(on(&[]), Err(Error::NotSsh { format }) if format == "openpgp"));
        assert!(matches!(on(&[(FORMAT_CONFIG, "ssh")]), Err(Error::NoKey)));
        assert!(matches!(
            on(&[(FORMAT_CONFIG, "ssh"), (KEY_CONFIG, "~/.ssh/nope")]),
            Err(Error::KeyMissing { path }) if path == Path::new("/home/x/.ssh/nope")
        ));
        let literal = on(&[
            (FORMAT_CONFIG, "ssh"),
            (KEY_CONFIG, "key::ssh-ed25519 AAAAC3 me"),
            (PROGRAM_CONFIG, "/nonexistent/ssh-keygen"),
        ]);
        assert!(
            matches!(literal, Err(Error::ProgramMissing { .. })),
            "{literal:?}"
        );
    }

    #[test]
    fn a_literal_key_is_held_as_the_key_itself() {
        let signer = Signer::from_config(
            &config(&[
                (SIGN_CONFIG, "yes"),
                (FORMAT_CONFIG, "SSH"),
                (KEY_CONFIG, "key::ssh-ed25519 AAAAC3 me"),
                (PROGRAM_CONFIG, "/bin/sh"),
            ]),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(signer.key, Key::Literal("ssh-ed25519 AAAAC3 me".into()));
    }

    #[test]
    fn allowed_signers_come_from_the_flag_then_ours_then_gits_relative_to_the_worktree() {
        let workdir = Path::new("/repo");
        let home = Some(Path::new("/home/x"));
        let both = config(&[
            (ALLOWED_SIGNERS_CONFIG, ".github/allowed_signers"),
            (GIT_ALLOWED_SIGNERS_CONFIG, "~/.ssh/allowed_signers"),
        ]);
        assert_eq!(
            allowed_signers(Some(Path::new("f")), &both, home, workdir),
            Some(PathBuf::from("f"))
        );
        assert_eq!(
            allowed_signers(None, &both, home, workdir),
            Some(PathBuf::from("/repo/.github/allowed_signers"))
        );
        let git_only = config(&[(GIT_ALLOWED_SIGNERS_CONFIG, "~/.ssh/allowed_signers")]);
        assert_eq!(
            allowed_signers(None, &git_only, home, workdir),
            Some(PathBuf::from("/home/x/.ssh/allowed_signers"))
        );
        assert_eq!(allowed_signers(None, &config(&[]), home, workdir), None);
    }

    #[test]
    fn without_prompt_ssh_keygen_asks_a_program_that_fails_not_the_terminal() {
        let signer = Signer {
            program: "ssh-keygen".into(),
            key: Key::File("k".into()),
            prompt: true,
        };
        let envs = |c: &Command| {
            c.get_envs()
                .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
                .collect::<Vec<_>>()
        };
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
