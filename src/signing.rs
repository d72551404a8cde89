//! SSH signatures over proof records, made and checked by `ssh-keygen -Y`, as git itself signs
//! commits with `gpg.format = ssh` (issue 10).
//!
//! Shelling out to ssh-keygen is deliberate and allowed by the project's rules: it is what git
//! itself runs for `gpg.format = ssh`, so proofs are signed and checked exactly as the same
//! people's commits are, with the same keys, agent and allowed signers files; a reimplementation
//! would be a second, weaker copy. This module spawns ssh-keygen (or `gpg.ssh.program`) and
//! nothing else; it never prints and never touches the repository.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use time::OffsetDateTime;

use crate::process::{self, Finished, Stdin};
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
}

impl Signer {
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

/// Checks signatures against an allowed signers file (ssh-keygen(1), ALLOWED SIGNERS). It is
/// `Sync`: `check` and `log` check many proofs at once, one ssh-keygen per thread.
#[derive(Debug, Clone)]
pub(crate) struct Verifier {
    program: String,
    allowed_signers: PathBuf,
    /// The file as read when the verifier was made, to spare `-Y find-principals` where its
    /// answer is certain (`Candidates`); `None` when the program is not ssh-keygen or the file
    /// is too large to keep.
    candidates: Option<Candidates>,
}

impl Verifier {
    /// A verifier for `allowed_signers`, which must be readable.
    pub(crate) fn new(config: Config<'_>, allowed_signers: PathBuf) -> Result<Verifier, Error> {
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
                source,
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
    pub(crate) fn check(
        &self,
        signature: &Signature,
        time: OffsetDateTime,
    ) -> Result<Checked, Error> {
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
                return Ok(Checked::Good {
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
            Checked::UnknownSigner {
                key: key_of(&checked.stdout),
            }
        } else {
            Checked::Bad
        })
    }
}

/// Above this size an allowed signers file is not kept in memory: ssh-keygen is asked everything.
const CANDIDATES_MAX_BYTES: u64 = 1 << 20;

/// The lines of an allowed signers file that could name a key, read as ssh-keygen reads them
/// (sshsig.c in OpenSSH 8.2 to 9.x), to answer `-Y find-principals` without running it where
/// the answer is certain. That is the case for a plain ed25519 key, whose encoding is unique:
///
/// - find-principals names the principals of the first line, in file order, whose key is the
///   signature's and is valid at the verify time (`cert-authority` lines only name
///   certificates); lines it cannot parse are skipped.
/// - A line can hold the key only if its text, without whitespace (which base64 decoding
///   skips), contains the key's base64, which is unique for an ed25519 key: so when no line
///   does, find-principals names nobody, and the key is an unknown signer or the record is
///   altered, as `-Y check-novalidate` alone then says.
/// - When exactly one line does, and its principals field is a single principal `P` (no comma,
///   no quote), find-principals names `P` or nobody. Running `-Y verify -I P` directly gives
///   the same result either way: it succeeds only through a line holding the key for `P` at
///   the verify time, that is this line, when find-principals would have named `P` and the very
///   same `-Y verify -I P` would have run next; when it fails, both end in check-novalidate.
///
/// Anything else (two lines holding the key, several principals on its line, another key type,
/// a certificate) is asked of find-principals, as before.
#[derive(Debug, Clone)]
struct Candidates {
    lines: Vec<Candidate>,
}

#[derive(Debug, Clone)]
struct Candidate {
    /// The line without any whitespace, to look for a key's base64 in.
    packed: Vec<u8>,
    /// The line's principals field, as this module would read it from find-principals' output
    /// (trimmed), when it is a single principal; `None` when it cannot be told without asking.
    principal: Option<String>,
}

/// What ssh-keygen's line parser skips at the start of a line and ends the principals field with.
const LINE_SPACE: &[u8] = b" \t\r\n";

impl Candidates {
    /// `None` for a file holding a NUL byte, where ssh-keygen's C strings would stop reading.
    fn parse(contents: &[u8]) -> Option<Candidates> {
        if contents.contains(&0) {
            return None;
        }
        let lines = contents
            .split(|&b| b == b'\n')
            .filter_map(|line| {
                let start = line.iter().position(|b| !LINE_SPACE.contains(b))?;
                let line = &line[start..];
                if line[0] == b'#' {
                    return None;
                }
                // base64 decoding skips every isspace() character, vertical tab and form feed
                // included, so a key's base64 may be spread over them.
                let packed = line
                    .iter()
                    .copied()
                    .filter(|b| !b" \t\n\x0b\x0c\r".contains(b))
                    .collect();
                let field = line
                    .iter()
                    .position(|b| LINE_SPACE.contains(b) || *b == b'"')
                    .map(|end| &line[..end]);
                let principal = field
                    .filter(|field| line[field.len()] != b'"' && !field.contains(&b','))
                    .and_then(|field| std::str::from_utf8(field).ok())
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_string);
                Some(Candidate { packed, principal })
            })
            .collect();
        Some(Candidates { lines })
    }

    /// The principals find-principals would name for the key that signed `armor`, when they
    /// are certain: none, or the one of the only line that may hold the key (`None`: ask it).
    fn principals(&self, armor: &str) -> Option<Vec<String>> {
        let key = ed25519_key(armor)?;
        let mut holding = self
            .lines
            .iter()
            .filter(|line| contains(&line.packed, key.as_bytes()));
        match (holding.next(), holding.next()) {
            (None, _) => Some(Vec::new()),
            (Some(line), None) => line.principal.clone().map(|p| vec![p]),
            (Some(_), Some(_)) => None,
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The key that made an armored SSH signature, in base64 as an allowed signers line writes it,
/// when it is a plain ed25519 key (`None` for anything else, or anything unexpected).
fn ed25519_key(armor: &str) -> Option<String> {
    const TYPE: &[u8] = b"ssh-ed25519";
    let body = armor.strip_prefix("-----BEGIN SSH SIGNATURE-----\n")?;
    let (base64, _) = body.split_once("\n-----END SSH SIGNATURE-----")?;
    let blob = base64_decode(&base64.replace('\n', ""))?;
    // "SSHSIG", a version, then the public key as an SSH string (PROTOCOL.sshsig).
    let rest = blob.strip_prefix(b"SSHSIG")?.get(4..)?;
    let (len, rest) = rest.split_first_chunk::<4>()?;
    let key = rest.get(..usize::try_from(u32::from_be_bytes(*len)).ok()?)?;
    // An ed25519 public key: its type and 32 bytes, nothing else.
    let (len, tail) = key.split_first_chunk::<4>()?;
    let (name, tail) = tail.split_at_checked(usize::try_from(u32::from_be_bytes(*len)).ok()?)?;
    let (len, point) = tail.split_first_chunk::<4>()?;
    (name == TYPE && u32::from_be_bytes(*len) == 32 && point.len() == 32)
        .then(|| base64_encode(key))
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(BASE64[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Strict base64 with padding: `None` for anything else, so that no text decodes here that
/// ssh-keygen would read otherwise.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let chunks = text.chunks(4);
    let last = chunks.len().saturating_sub(1);
    for (index, chunk) in chunks.enumerate() {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && index != last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            let value = BASE64.iter().position(|&b| b == c)?;
            n = n << 6 | u32::try_from(value).ok()?;
        }
        n <<= 6 * pad;
        let bytes = n.to_be_bytes();
        let bytes = &bytes[1..4 - pad];
        // The bits past the last byte must be zero: otherwise two texts decode alike.
        if n & ((1 << (8 * pad)) - 1) != 0 {
            return None;
        }
        out.extend_from_slice(bytes);
    }
    Some(out)
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

/// Run `command` with `input` on stdin and collect what it prints. ssh-keygen may exit before
/// reading everything (a key it cannot load): its exit status then says what happened.
fn run(program: &str, command: process::Request<'_>, input: &str) -> Result<Finished, Error> {
    command
        .stdin(Stdin::Bytes(input.as_bytes().to_vec()))
        .run()
        .map_err(|error| Error::Spawn {
            program: program.to_string(),
            source: error.into_source(),
        })
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

    /// A signature's armor around `key` (an SSH string), as ssh-keygen lays it out.
    fn armor_with(key: &[u8]) -> String {
        let mut blob = b"SSHSIG\0\0\0\x01".to_vec();
        blob.extend_from_slice(&u32::try_from(key.len()).unwrap().to_be_bytes());
        blob.extend_from_slice(key);
        blob.extend_from_slice(b"\0\0\0\x0cgit-prove-it\0\0\0\0\0\0\0\x06sha512\0\0\0\0");
        let text = base64_encode(&blob);
        let lines: Vec<&str> = text
            .as_bytes()
            .chunks(70)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN SSH SIGNATURE-----\n{}\n-----END SSH SIGNATURE-----\n",
            lines.join("\n")
        )
    }

    fn ed25519(point: u8) -> Vec<u8> {
        let mut key = b"\0\0\0\x0bssh-ed25519\0\0\0\x20".to_vec();
        key.extend_from_slice(&[point; 32]);
        key
    }

    #[test]
    fn base64_is_strict_and_round_trips() {
        for (bytes, text) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"\xff\xfe\xfd", "//79"),
        ] {
            assert_eq!(base64_encode(bytes), text);
            assert_eq!(base64_decode(text).as_deref(), Some(bytes));
        }
        // Non-zero bits past the last byte, missing or misplaced padding, other characters:
        // none decodes, since ssh-keygen would refuse them or read them otherwise.
        for text in [
            "Zh==", "Zm9=", "Zg", "Zg=", "Zg==Zg==", "Zm 9v", "Zm9v\n", "Z===", "Zm-v",
        ] {
            assert_eq!(base64_decode(text), None, "{text}");
        }
    }

    #[test]
    fn the_signing_key_is_read_from_the_armor_only_when_it_is_plain_ed25519() {
        let key = ed25519(7);
        assert_eq!(ed25519_key(&armor_with(&key)), Some(base64_encode(&key)));
        // A certificate, another type, a short key, trailing bytes, a broken armor: not read.
        let mut cert = b"\0\0\0\x20ssh-ed25519-cert-v01@openssh.com".to_vec();
        cert.extend_from_slice(&[7; 40]);
        let mut short = ed25519(7);
        short.pop();
        let mut long = ed25519(7);
        long.push(0);
        for other in [
            cert,
            b"\0\0\0\x07ssh-rsa\0\0\0\x01\x03".to_vec(),
            short,
            long,
        ] {
            assert_eq!(ed25519_key(&armor_with(&other)), None);
        }
        assert_eq!(
            ed25519_key(&armor_with(&key).replace("BEGIN", "BEGUN")),
            None
        );
        assert_eq!(ed25519_key(&armor_with(&key).replace('\n', "\r\n")), None);
        assert_eq!(ed25519_key("-----BEGIN SSH SIGNATURE-----\n"), None);
    }

    #[test]
    fn find_principals_is_skipped_only_where_its_answer_is_certain() {
        let alice = base64_encode(&ed25519(1));
        let bob = base64_encode(&ed25519(2));
        let carol = base64_encode(&ed25519(3));
        let file = format!(
            "# alice {carol}\n\
             \talice@example.com valid-before=\"20300101\" ssh-ed25519 {alice} alice\n\
             \n\
             bob@example.com,robert@example.com ssh-ed25519 {bob}\n\
             x@example.com ssh-ed25519 {}\x0b{} split by a vertical tab\n\
             \"quoted@example.com\" ssh-ed25519 {carol}\n",
            &bob[..10],
            &bob[10..],
        );
        let candidates = Candidates::parse(file.as_bytes()).unwrap();
        let principals = |point| candidates.principals(&armor_with(&ed25519(point)));
        // One line holds alice's key, with one principal: certain.
        assert_eq!(principals(1), Some(vec!["alice@example.com".to_string()]));
        // Two lines may hold bob's (base64 skips the vertical tab), one of them with two
        // principals: ask ssh-keygen.
        assert_eq!(principals(2), None);
        // Carol's key is in a comment, and on a line whose principal is quoted: ask.
        assert_eq!(principals(3), None);
        // A key no line holds: nobody, certain.
        assert_eq!(principals(4), Some(vec![]));
        // Not an ed25519 key: ask.
        assert_eq!(
            candidates.principals(&armor_with(b"\0\0\0\x07ssh-rsa\0\0\0\x01\x03")),
            None
        );
        // Commas and NUL bytes: ask.
        let two = format!("a@example.com,b@example.com ssh-ed25519 {alice}\n");
        let two = Candidates::parse(two.as_bytes()).unwrap();
        assert_eq!(two.principals(&armor_with(&ed25519(1))), None);
        assert!(Candidates::parse(b"a\0b ssh-ed25519 AAAA\n").is_none());
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
