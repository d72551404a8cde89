//! The `hint:` lines a command adds to an error that a layer below worded (a repository's, a
//! checks file's, a signature's): what the user can do about it, one function per case, from
//! plain values. `cli/` chooses which applies; the words are made here.

use std::fmt;

use crate::proof::CHECKS_FILE;

/// One `hint:` line. Made only in `report/`, so that a command chooses its hints but never
/// words one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hint(String);

impl Hint {
    pub(super) fn new(text: impl Into<String>) -> Self {
        Hint(text.into())
    }
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Hint> for String {
    fn from(hint: Hint) -> Self {
        hint.0
    }
}

/// What makes a state with dirty submodules provable: `run` says it when it refuses the state,
/// `status` when it will not call the state proven.
pub(crate) const DIRTY_SUBMODULE_HINTS: [&str; 2] = [
    "commit inside the submodule, then stage its new commit here (git add <path>)",
    "or restore it to its commit (git -C <path> stash -u)",
];

/// A state with dirty submodules, refused by `run`.
pub(crate) fn dirty_submodules() -> [Hint; 2] {
    DIRTY_SUBMODULE_HINTS.map(Hint::new)
}

/// A verify.sh whose bytes on disk are not the blob git records.
pub(crate) fn verify_as_recorded() -> Hint {
    Hint::new(
        "verify.sh must be a file of the working state whose bytes git records as they are: \
         drop its filter, eol or ident attribute, or its skip-worktree or assume-unchanged flag",
    )
}

/// A ref or index git holds locked.
pub(crate) fn remove_the_lock() -> Hint {
    Hint::new("if no git command is running, remove the lock file and run again")
}

/// A path of the worktree that git cannot read into a tree.
pub(crate) fn fix_the_path() -> Hint {
    Hint::new("fix or remove the path named above; git add -A would fail on it too")
}

/// A checks file that does not parse.
pub(crate) fn fix_the_checks_file() -> Hint {
    Hint::new(format!(
        "fix {CHECKS_FILE} at the line named above (SPEC.md section 2.1 gives its format)"
    ))
}

/// A check's input `input` that matches no path of the state.
pub(crate) fn correct_the_input(input: &str) -> Hint {
    Hint::new(format!(
        "correct the path in {CHECKS_FILE}, or write it {:?} if it may be missing (SPEC.md section 2.1)",
        format!("{input}?")
    ))
}

/// A checks file on disk that the working state leaves out.
pub(crate) fn checks_file_in_state() -> Hint {
    Hint::new(format!(
        "make {CHECKS_FILE} a file of the working state: remove it from .gitignore or .git/info/exclude"
    ))
}

/// A checks file that declares no check.
pub(crate) fn declare_a_check() -> Hint {
    Hint::new(format!(
        "declare a check in {CHECKS_FILE} (SPEC.md section 2.1), or remove it and write a verify.sh (git prove-it init)"
    ))
}

/// verify.sh could not be started.
pub(crate) fn verify_starts() -> Hint {
    Hint::new("verify.sh must be executable and start with a line such as #!/bin/sh")
}

/// A check's script could not be started.
pub(crate) fn check_scripts_start() -> Hint {
    Hint::new("each check's script must be executable and start with a line such as #!/bin/sh")
}

/// A worktree nested in another, whose code a run could reach, where nothing can hide it.
pub(crate) fn hide_the_enclosing_worktree() -> [Hint; 2] {
    [
        Hint::new(
            "run it where unprivileged user namespaces are allowed (util-linux unshare 2.38 or later), so that the enclosing worktree is hidden",
        ),
        Hint::new(
            "or move the worktree out of the other one's directory: git worktree move <path> <new-path>",
        ),
    ]
}

/// `run REV` named something other than one commit or a range.
pub(crate) fn one_commit_or_range() -> Hint {
    Hint::new("name one commit, or a range such as main..HEAD")
}

/// `bisect` named something other than one commit as GOOD.
pub(crate) fn one_commit_as_good() -> Hint {
    one_commit_as("GOOD")
}

/// `bisect` named something other than one commit as BAD.
pub(crate) fn one_commit_as_bad() -> Hint {
    one_commit_as("BAD")
}

fn one_commit_as(which: &str) -> Hint {
    Hint::new(format!(
        "name one commit as {which}: git prove-it bisect <good> <bad>"
    ))
}

/// `bisect good bad` where `bad` is an ancestor of `good`: the two the other way round.
pub(crate) fn swap_good_and_bad(good: &str, bad: &str) -> Hint {
    Hint::new(format!(
        "{bad} is an ancestor of {good}: name the older commit, which passes, first: git prove-it bisect {bad} {good}"
    ))
}

/// `bisect good bad` on two lines of history: where they meet.
pub(crate) fn start_from_merge_base(good: &str, bad: &str) -> Hint {
    Hint::new(format!(
        "a commit both share is a GOOD to start from if it passes: git merge-base {good} {bad}"
    ))
}

/// The script `--exec` names could not be read.
pub(crate) fn name_an_exec_file() -> Hint {
    Hint::new("name a file: --exec ./test.sh, or a path outside the repository")
}

/// `claim --record` outside a repository.
pub(crate) fn record_inside_a_repository() -> Hint {
    Hint::new("--record stores the verdict in a repository; run it inside one")
}

/// `claim --validate` read packets it cannot place in a round.
pub(crate) fn give_each_packet_its_role() -> Hint {
    Hint::new(
        "give each packet its packet_role and round, or its prove_it_round_packet or \
         prove_it_oracle_packet key",
    )
}

/// `check` in a pre-receive or update hook, whose new commits gix cannot read.
pub(crate) fn quarantined_push() -> Hint {
    Hint::new(
        "a push's new commits are out of reach in a pre-receive or update hook (git's quarantine): check them in a post-receive hook or in CI",
    )
}

/// `remote` could not be fetched from or pushed to, and did not say why.
pub(crate) fn check_the_remote(remote: &str) -> Hint {
    Hint::new(format!(
        "check that '{remote}' is a remote you can fetch from and push to: git remote -v"
    ))
}

/// A pre-push hook that is not ours where ours would go.
pub(crate) fn hook_not_ours() -> Hint {
    Hint::new(
        "move it away and run 'git prove-it install pre-push' again, or make it pass its arguments and stdin to: git prove-it hook git pre-push \"$@\"",
    )
}

/// A host's settings file that `init` cannot read as settings.
pub(crate) fn fix_the_settings_file() -> Hint {
    Hint::new("fix the file (or move it away) and run init again; nothing was changed")
}
/// Why signing, or checking a signature, could not work, as far as the fix differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SigningFix {
    /// `gpg.format` is not `ssh`.
    NotSsh,
    /// No signing key is configured, or it is not there.
    Key,
    /// ssh-keygen is missing or would not start.
    Program,
    /// ssh-keygen could not sign.
    Sign,
    /// The allowed signers file cannot be read.
    AllowedSigners,
    /// No temporary file could be written for ssh-keygen.
    TempFile,
}

/// What fixes signing, or checking a signature.
pub(crate) fn signing(fix: SigningFix) -> Hint {
    Hint::new(match fix {
        SigningFix::NotSsh => "sign with an SSH key: git config gpg.format ssh",
        SigningFix::Key => {
            "name your SSH key: git config user.signingKey ~/.ssh/id_ed25519 (a public key \
             file works when ssh-agent holds its private key)"
        }
        SigningFix::Program => {
            "install OpenSSH's ssh-keygen (8.2 or later), or name it: git config gpg.ssh.program PATH"
        }
        SigningFix::Sign => {
            "check that the key can sign without a prompt: ssh-add -l lists the keys ssh-agent holds"
        }
        SigningFix::AllowedSigners => {
            "name a readable allowed signers file: --allowed-signers FILE, or git config prove-it.allowedSigners FILE"
        }
        SigningFix::TempFile => "check that the temporary directory (TMPDIR) is writable",
    })
}
