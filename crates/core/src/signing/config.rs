//! The signing settings: whether proofs are signed, with which program and which key, and
//! which allowed signers file checks them, all read from git config as git reads them.

use std::path::{Path, PathBuf};

use super::Error;

pub(super) const SIGN_CONFIG: &str = "prove-it.sign";
const ALLOWED_SIGNERS_CONFIG: &str = "prove-it.allowedSigners";
const GIT_ALLOWED_SIGNERS_CONFIG: &str = "gpg.ssh.allowedSignersFile";
pub(super) const FORMAT_CONFIG: &str = "gpg.format";
pub(super) const KEY_CONFIG: &str = "user.signingKey";
const PROGRAM_CONFIG: &str = "gpg.ssh.program";
pub(super) const DEFAULT_PROGRAM: &str = "ssh-keygen";
/// git's prefix for a public key written into `user.signingKey` itself.
const LITERAL_KEY_PREFIX: &str = "key::";

/// Git config as the signing settings need it: a value by key.
pub type Config<'a> = &'a dyn Fn(&str) -> Option<String>;

/// What signs proofs: ssh-keygen and a key, as `gpg.format = ssh` and `user.signingKey` say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signer {
    pub(super) program: String,
    pub(super) key: Key,
    /// Whether ssh-keygen may ask for a passphrase on the terminal.
    pub(super) prompt: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Key {
    /// A private key file, or a public key file whose private key ssh-agent holds.
    File(PathBuf),
    /// A public key given in the config itself (`key::ssh-ed25519 AAAA...`), held by ssh-agent.
    Literal(String),
}

/// Whether `prove-it.sign` asks for signed proofs.
fn wanted(config: Config<'_>) -> bool {
    config(SIGN_CONFIG).is_some_and(|v| is_true(&v))
}

impl Signer {
    /// The signer the configuration asks for: `None` when `prove-it.sign` is off, an error when
    /// it is on and signing cannot work, so that a proof is never silently left unsigned. `home`
    /// expands a leading `~/` in a key path, as git does.
    pub fn from_config(config: Config<'_>, home: Option<&Path>) -> Result<Option<Signer>, Error> {
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
    pub fn without_prompt(self) -> Signer {
        Signer {
            prompt: false,
            ..self
        }
    }
}

/// The allowed signers file to check against: `--allowed-signers`, else `prove-it.allowedSigners`,
/// else `gpg.ssh.allowedSignersFile`. Config paths may start with `~/` and are relative to
/// `base`: the worktree root, so that a file committed to the repository can be named as it is in
/// the tree, or in a bare repository the current directory, as for git (`cli::signers`).
pub fn allowed_signers(
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

/// `ssh-keygen` unless `gpg.ssh.program` names another, which must be found before anything runs.
pub(super) fn program(config: Config<'_>) -> Result<String, Error> {
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
}
