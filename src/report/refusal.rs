//! The failures a command finds in its own reasoning, not in an error of a layer below: what it
//! refuses (two names of one commit, a range with no commit), an interruption, input it cannot
//! read. Each is its one sentence and the `hint:` lines that fix it, one function per case,
//! from plain values; `cli/` chooses which applies and ends the command with it.

use std::fmt::Display;
use std::path::Path;

use super::hint::Hint;
use crate::proof::CHECKS_FILE;

/// A failure in words: the sentence the command ends with, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    message: String,
    hints: Vec<Hint>,
}

impl Refusal {
    fn new(message: impl Into<String>) -> Self {
        Refusal {
            message: message.into(),
            hints: Vec::new(),
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(Hint::new(hint));
        self
    }

    /// The sentence, and the hints in the order they are said.
    pub(crate) fn into_parts(self) -> (String, Vec<Hint>) {
        (self.message, self.hints)
    }
}

/// `install-man` without `--dir` where no per-user man directory can be named.
pub(crate) fn no_man_directory() -> Refusal {
    Refusal::new("no per-user man directory: neither XDG_DATA_HOME nor HOME is set")
        .hint("name one: git prove-it install-man --dir DIR")
}

/// `init` with changes to make, no `--yes`, and no terminal to ask on.
pub(crate) fn init_cannot_ask() -> Refusal {
    Refusal::new("stdin is not a terminal, so init cannot ask: nothing was changed")
        .hint("run 'git prove-it init --yes' (with the same flags) to set up as listed above")
}

/// `bisect good bad` where both name one commit.
pub(crate) fn same_commit(good: &str, bad: &str) -> Refusal {
    Refusal::new(format!(
        "{good} and {bad} are the same commit, so there is nothing between them to search"
    ))
    .hint("name an older commit that passes as GOOD: git log --first-parent --oneline lists them")
}

/// `bisect good bad` where `good` is not an ancestor of `bad`; the caller adds which way out
/// fits (`hint::swap_good_and_bad`, `hint::start_from_merge_base`).
pub(crate) fn not_an_ancestor(good: &str, bad: &str) -> Refusal {
    Refusal::new(format!(
        "{good} is not an ancestor of {bad}, so no line of history leads from one to the other"
    ))
}

/// `bisect` whose BAD is proven on record.
pub(crate) fn bad_is_proven(bad: &str) -> Refusal {
    bad_is_not_failing(format!(
        "{bad} is proven: its checks pass, so there is no failing commit to look for"
    ))
}

/// `bisect` whose BAD was run and passed.
pub(crate) fn bad_passes(bad: &str) -> Refusal {
    bad_is_not_failing(format!(
        "{bad} passes: its checks were run and it is proven now, so there is no failing commit to look for"
    ))
}

/// `bisect` whose BAD cannot be tested, for `why`.
pub(crate) fn bad_cannot_be_tested(bad: &str, why: &str) -> Refusal {
    bad_is_not_failing(format!("{bad} cannot be tested: {why}"))
}

fn bad_is_not_failing(message: String) -> Refusal {
    Refusal::new(message).hint(
        "name a commit whose checks fail as BAD: git prove-it log shows which commits are proven",
    )
}

/// `bisect` interrupted before it found the first failing commit.
pub(crate) fn bisect_interrupted() -> Refusal {
    Refusal::new("interrupted: the search stopped before it found the first failing commit")
        .hint("what ran is recorded; run the same bisect again to go on from there")
}

/// `claim` with nothing to prove.
pub(crate) fn claim_is_empty() -> Refusal {
    Refusal::new("the claim is empty")
        .hint("say what is to be proven: git prove-it claim \"all tests pass\"")
}

/// `claim` interrupted during its rounds.
pub(crate) fn claim_interrupted() -> Refusal {
    Refusal::new("interrupted; no verdict")
}

/// `run RANGE` whose range holds no commit.
pub(crate) fn empty_range(range: &str) -> Refusal {
    Refusal::new(format!("the range {range:?} holds no commit")).hint(
        "name a range with commits in it, such as main..HEAD: git log --oneline main..HEAD lists them",
    )
}

/// `run` where verify.sh is not part of the working state (ignored), so no proof can name it.
pub(crate) fn verify_not_in_state() -> Refusal {
    Refusal::new("verify.sh is not part of the working state, so no proof could name it")
        .hint("verify.sh is ignored: remove it from .gitignore or .git/info/exclude")
}

/// A check whose script `run` cannot run, for `why` ("is not executable", ...).
pub(crate) fn script_not_runnable(
    check: &str,
    run: &str,
    why: crate::armed::NotRunnable,
) -> Refusal {
    let why = super::armed::script(why);
    Refusal::new(format!("check {check}: its script {run} {why}")).hint(format!(
        "make {run} an executable file of the working state (chmod +x), or remove check {check} from {CHECKS_FILE}"
    ))
}

/// A revision that names no single commit where one is needed; the caller adds what to name.
pub(crate) fn not_one_commit(rev: &str) -> Refusal {
    Refusal::new(format!("{rev:?} is not a single commit"))
}

/// The `--exec` script at `path` has no file name a record can carry.
pub(crate) fn exec_without_a_name(path: &Path) -> Refusal {
    Refusal::new(format!(
        "the script {} has no file name that a record could carry",
        path.display()
    ))
}

/// The `--exec` script `check` reads at `path` has no file name.
pub(crate) fn script_without_a_name(path: &Path) -> Refusal {
    Refusal::new(format!("the script {} has no file name", path.display()))
}

/// The `--exec` script at `path` no longer holds `blob`, the bytes read at the start.
pub(crate) fn exec_changed(path: &Path, blob: &str) -> Refusal {
    Refusal::new(format!(
        "the script {} changed while the commits were proven (it was blob {blob}), so the commits left would be proven by another script",
        path.display()
    ))
    .hint("leave the script as it is until the run ends, or copy it elsewhere and name the copy with --exec")
}

/// The setup of `commit` ended as `exit`, with `tail` its last lines and `log` its full
/// output: the commit cannot be tested.
pub(crate) fn setup_failed(
    commit: impl Display,
    exit: &str,
    tail: &[String],
    log: Option<&str>,
) -> Refusal {
    let mut refusal = Refusal::new(format!(
        "cannot test commit {commit}: {exit}; its checks did not run"
    ));
    // The last few lines say why; the log holds the rest.
    for line in tail.iter().rev().take(5).rev() {
        refusal = refusal.hint(format!("setup printed: {line}"));
    }
    if let Some(log) = log {
        refusal = refusal.hint(format!("its full output: {log}"));
    }
    refusal.hint("fix the setup script of prove-it.toml, or run it by hand in a fresh clone to see why it fails there")
}

/// A commit's run interrupted before verify.sh started.
pub(crate) fn interrupted_before_the_run() -> Refusal {
    Refusal::new("interrupted before verify.sh started")
}

/// Checking out `commit` gave the state tree `state`, not the commit's `tree`.
pub(crate) fn checkout_differs(
    commit: impl Display,
    state: impl Display,
    tree: impl Display,
) -> Refusal {
    Refusal::new(format!(
        "checking out {commit} gives the state tree {state}, not the commit's tree {tree}, so no proof made there would prove the commit"
    ))
    .hint("clean or smudge filters (.gitattributes, git-lfs) or ignored files committed anyway change what a checkout holds")
    .hint("prove the working state instead: check the commit out and run 'git prove-it run'")
}

/// A commit's run that could reach the checkout's code through `leaks`, on a machine that
/// cannot mount the commit's worktree at `checkout`.
pub(crate) fn commit_run_leaks(leaks: &[String], checkout: &Path) -> Refusal {
    Refusal::new(format!(
        "not run: the run could reach the checkout's code ({}), and this machine cannot mount the commit's worktree at {}, so a proof would not be the commit's",
        leaks.join("; "),
        checkout.display()
    ))
    .hint("run it where unprivileged user namespaces are allowed (util-linux unshare 2.38 or later), so that the commit is mounted at the checkout's path")
    .hint("or run it without the link: unset the variable, deactivate the virtualenv, or install the package from the commit in a `setup` script of prove-it.toml")
}

/// `watch` where another process, `holder` when it is known, proves the worktree.
pub(crate) fn prover_held(holder: Option<u32>) -> Refusal {
    let who = holder.map_or_else(
        || "another process".to_string(),
        |pid| format!("process {pid}"),
    );
    Refusal::new(format!(
        "{who} already proves this worktree (the background prover of an agent session, or another watch), and a worktree has one prover at a time"
    ))
    .hint("run watch again once it has ended: 'git prove-it status' says what it does, and a background prover exits when its session ends or no tool call came for prove-it.aheadIdle seconds")
}

/// `check --require-signed` with no allowed signers file.
pub(crate) fn no_allowed_signers() -> Refusal {
    Refusal::new("--require-signed needs an allowed signers file, and none is given or configured")
        .hint("commit one and name it: git config prove-it.allowedSigners .github/allowed_signers")
        .hint("or pass it: git prove-it check --require-signed --allowed-signers FILE")
}

/// `revoke` or `accept` with an empty `--reason`.
pub(crate) fn empty_reason() -> Refusal {
    Refusal::new("the reason is empty")
}

/// `action` (`revoke` or `accept`) found nothing to resolve in `spec`, the whole proofs ref
/// when none is named.
pub(crate) fn nothing_to_resolve(action: &str, spec: Option<&str>) -> Refusal {
    let what = match action {
        "accept" => "no contested proof",
        _ => "no proof",
    };
    let spec = spec.unwrap_or("the proofs ref");
    Refusal::new(format!("{what} to {action} in {spec}"))
        .hint("git prove-it check --all shows where the proofs are")
}

/// `accept` given the range `target`.
pub(crate) fn accept_takes_no_range(target: &str) -> Refusal {
    Refusal::new(format!(
        "accept takes one commit or tree, not the range {target}"
    ))
}

/// A line on the pre-push hook's stdin that is not git's four fields.
pub(crate) fn unexpected_push_line(line: &str) -> Refusal {
    Refusal::new(format!(
        "unexpected line from git on the pre-push hook's stdin: {line:?}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(refusal: Refusal) -> (String, Vec<String>) {
        let (message, hints) = refusal.into_parts();
        (message, hints.into_iter().map(String::from).collect())
    }

    #[test]
    fn a_failed_setup_shows_its_last_five_lines_its_log_then_the_fix() {
        let tail: Vec<String> = (1..=7).map(|n| format!("line {n}")).collect();
        let (message, hints) = said(setup_failed("abc", "exit 1", &tail, Some("/tmp/setup.log")));
        assert_eq!(
            message,
            "cannot test commit abc: exit 1; its checks did not run"
        );
        assert_eq!(hints[0], "setup printed: line 3");
        assert_eq!(hints[4], "setup printed: line 7");
        assert_eq!(hints[5], "its full output: /tmp/setup.log");
        assert!(hints[6].starts_with("fix the setup script of prove-it.toml"));
        assert_eq!(hints.len(), 7);
    }

    #[test]
    fn nothing_to_resolve_names_what_was_looked_for_and_where() {
        let (revoke, _) = said(nothing_to_resolve("revoke", None));
        assert_eq!(revoke, "no proof to revoke in the proofs ref");
        let (accept, hints) = said(nothing_to_resolve("accept", Some("HEAD")));
        assert_eq!(accept, "no contested proof to accept in HEAD");
        assert_eq!(
            hints,
            ["git prove-it check --all shows where the proofs are"]
        );
    }

    #[test]
    fn a_held_prover_is_named_by_its_pid_when_known() {
        let (known, _) = said(prover_held(Some(42)));
        assert!(known.starts_with("process 42 already proves this worktree"));
        let (unknown, _) = said(prover_held(None));
        assert!(unknown.starts_with("another process already proves this worktree"));
    }
}
