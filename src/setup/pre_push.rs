//! How `init --pre-push` wires the push gate beside what a repository already runs before a
//! push: husky, lefthook, pre-commit, or a pre-push hook of its own. Init
//! used to refuse everything when a pre-push hook existed; now it chains into a shell hook,
//! writes husky's hook file, and gives the exact snippet for lefthook and pre-commit.
//!
//! Pure: file contents in, a [`Plan`] out. It never reads or writes files itself;
//! `cli/init.rs` reads what it needs and acts on the plan.

/// The command every wiring runs, with git's arguments and the pushed refs on stdin.
pub(crate) const COMMAND: &str = "git prove-it hook git pre-push";

/// The lines init puts at the top of an existing shell pre-push hook, after its `#!` line: the
/// push is gated first, then the rest of the hook runs as before, reading the same refs on
/// its stdin (kept in a temporary file, since both need them).
pub(crate) const CHAIN: &str = r#"# >>> git-prove-it (init --pre-push): gate the push first, then the rest of this hook as before
prove_it_refs=$(mktemp) || exit 1
cat >"$prove_it_refs"
prove_it_status=0
git prove-it hook git pre-push "$@" <"$prove_it_refs" || prove_it_status=$?
if [ "$prove_it_status" -ne 0 ]; then rm -f "$prove_it_refs"; exit "$prove_it_status"; fi
exec <"$prove_it_refs"
rm -f "$prove_it_refs"
# <<< git-prove-it
"#;

/// The line for a hook file that runs its lines with the hook's arguments and stdin (husky's).
pub(crate) const LINE: &str = "git prove-it hook git pre-push \"$@\"";

/// The lefthook configuration that runs the gate before a push: lefthook hands the command
/// git's two arguments as `{1} {2}` and, with `use_stdin`, the pushed refs.
/// The same as `hooks/lefthook.yml`, this repository's documented snippet.
pub(crate) const LEFTHOOK: &str = include_str!("../../hooks/lefthook.yml");

/// The pre-commit configuration that runs the gate before a push, through the hook this
/// repository declares in its `.pre-commit-hooks.yaml`, as a local hook so that no revision
/// has to be pinned. pre-commit reads the pushed refs itself and passes one as `PRE_COMMIT_*`
/// variables, which the hook reads with `--pre-commit`.
pub(crate) const PRE_COMMIT: &str = r#"default_install_hook_types: [pre-commit, pre-push]
repos:
  - repo: local
    hooks:
      - id: prove-it
        name: git prove-it (refuse to push unproven commits)
        entry: git prove-it hook git pre-push --pre-commit
        language: system
        stages: [pre-push]
        pass_filenames: false
        always_run: true
"#;

/// A hook manager whose configuration, found at the worktree root, init does not rewrite.
/// (husky's hooks are plain files in `.husky/`, which init writes.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Manager {
    /// `lefthook.yml` (or `.yml`/`.yaml`, dotted or not).
    Lefthook,
    /// `.pre-commit-config.yaml`.
    PreCommit,
}

impl Manager {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Manager::Lefthook => "lefthook",
            Manager::PreCommit => "pre-commit",
        }
    }
}

/// The lefthook configuration files lefthook reads, in its order.
pub(crate) const LEFTHOOK_FILES: &[&str] = &[
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
];

/// What `init --pre-push` does about the push gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// No pre-push hook, or ours: install ours (`already` when it is there).
    Install,
    /// Write `text` to the hook file (a chained shell hook, husky's hook file); `already`
    /// when it runs the gate already and nothing is written.
    Write { text: String, already: bool },
    /// A manager whose configuration init does not rewrite: the snippet to add, unless it
    /// runs the gate already.
    Snippet {
        manager: Manager,
        snippet: &'static str,
        already: bool,
    },
    /// A pre-push hook init cannot chain into (not a shell script): the line to add to it.
    Line,
}

/// The plan for a pre-push hook file whose content is `existing` (None: there is none), ours
/// being `ours`.
pub(crate) fn for_hook(existing: Option<&str>, ours: &str) -> Plan {
    match existing {
        None => Plan::Install,
        Some(text) if text == ours => Plan::Install,
        Some(text) if text.contains(COMMAND) => Plan::Write {
            text: text.to_string(),
            already: true,
        },
        Some(text) if is_shell(text) => Plan::Write {
            text: chained(text),
            already: false,
        },
        Some(_) => Plan::Line,
    }
}

/// The plan for husky's `.husky/pre-push`, whose content is `existing`.
pub(crate) fn for_husky(existing: Option<&str>) -> Plan {
    match existing {
        Some(text) if text.contains(COMMAND) => Plan::Write {
            text: text.to_string(),
            already: true,
        },
        Some(text) => {
            let mut text = text.to_string();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(LINE);
            text.push('\n');
            Plan::Write {
                text,
                already: false,
            }
        }
        None => Plan::Write {
            text: format!("{LINE}\n"),
            already: false,
        },
    }
}

/// The plan for a manager's configuration, whose content is `config`.
pub(crate) fn for_config(manager: Manager, config: &str) -> Plan {
    Plan::Snippet {
        manager,
        snippet: match manager {
            Manager::Lefthook => LEFTHOOK,
            Manager::PreCommit => PRE_COMMIT,
        },
        already: config.contains(COMMAND) || config.contains("id: prove-it"),
    }
}

/// A script sh, bash, dash, ksh or zsh runs, by its `#!` line.
fn is_shell(text: &str) -> bool {
    let Some(first) = text.lines().next().and_then(|line| line.strip_prefix("#!")) else {
        return false;
    };
    let mut words = first.split_whitespace();
    let Some(mut program) = words.next() else {
        return false;
    };
    if program.ends_with("/env") {
        let Some(next) = words.next() else {
            return false;
        };
        program = next;
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    ["sh", "bash", "dash", "ksh", "zsh"].contains(&name)
}

/// `text` with [`CHAIN`] after its `#!` line.
fn chained(text: &str) -> String {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    format!("{first}\n{CHAIN}{rest}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_hook_is_chained_after_its_first_line_and_once() {
        let theirs = "#!/usr/bin/env bash\nset -e\n./lint.sh\n";
        let Plan::Write { text, already } = for_hook(Some(theirs), "ours") else {
            panic!("a shell hook is chained");
        };
        assert!(!already);
        assert_eq!(
            text,
            format!("#!/usr/bin/env bash\n{CHAIN}set -e\n./lint.sh\n")
        );
        assert_eq!(
            for_hook(Some(&text), "ours"),
            Plan::Write {
                text: text.clone(),
                already: true
            }
        );
        assert_eq!(for_hook(None, "ours"), Plan::Install);
        assert_eq!(for_hook(Some("ours"), "ours"), Plan::Install);
        assert_eq!(
            for_hook(Some("#!/usr/bin/python3\nprint(1)\n"), "ours"),
            Plan::Line
        );
        assert_eq!(for_hook(Some("no shebang\n"), "ours"), Plan::Line);
    }

    #[test]
    fn husky_gets_the_line_appended_once() {
        assert_eq!(
            for_husky(None),
            Plan::Write {
                text: format!("{LINE}\n"),
                already: false
            }
        );
        assert_eq!(
            for_husky(Some("npm test")),
            Plan::Write {
                text: format!("npm test\n{LINE}\n"),
                already: false
            }
        );
        assert!(matches!(
            for_husky(Some(&format!("{LINE}\n"))),
            Plan::Write { already: true, .. }
        ));
    }
}
