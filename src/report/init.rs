//! What `init` says: each step it took or found done, the demonstration of the gate at work,
//! and the next steps.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::and_list;
use crate::armed::Armed;
use crate::hosts::{Host, Wired};
use crate::setup::demo::{Demo, Shown};
use crate::setup::pre_push::{self, Manager};
use crate::setup::workspace::{self, Workspace};
use crate::setup::{Stack, stack};

use crate::gate::Message;

/// One thing `init` does, or found already done.
#[derive(Debug)]
pub(crate) enum Step {
    /// prove-it.toml written with one check per package of `workspace`.
    WriteChecks {
        text: String,
        workspace: Workspace,
    },
    /// prove-it.toml exists and is kept: init never overwrites it.
    ChecksKept,
    /// prove-it.toml written beside a root verify.sh with only a `protect` list of
    /// `patterns` patterns (SPEC.md section 2.2).
    WriteProtect {
        text: String,
        patterns: usize,
    },
    /// A verify.sh written: the root's (`dir` is `None`) or a package's, in `dir`.
    WriteVerify {
        text: String,
        /// How many checks are there as comments.
        checks: usize,
        overwrite: bool,
        dir: Option<String>,
    },
    /// A verify.sh exists and is kept, the root's (`dir` is `None`) or a package's; `armed`
    /// says how it stands.
    VerifyKept {
        armed: Armed,
        dir: Option<String>,
    },
    /// There is no verify.sh at the root and init writes none: prove-it.toml's checks prove
    /// the repository.
    RootVerifyNotWritten,
    Wire {
        host: Host,
        path: PathBuf,
        wired: Wired,
        created: bool,
        /// The user-level file that would gate sessions started in a subdirectory, where the
        /// host reads `path` only in the directory it starts in and that file wires no gate.
        user_level: Option<PathBuf>,
        /// `path` is the host's user-level settings (`init --user-level`): not the project's,
        /// so nothing to commit, and it gates sessions started in any folder.
        user: bool,
    },
    PrePush {
        path: PathBuf,
        already: bool,
    },
    /// A pre-push hook file written with the gate in it: an existing shell hook chained
    /// (`husky: false`), or husky's `.husky/pre-push`.
    PrePushWrite {
        path: PathBuf,
        text: String,
        husky: bool,
        already: bool,
    },
    /// A hook manager runs the pre-push hooks: the snippet to add to its configuration.
    PrePushSnippet {
        manager: Manager,
        file: PathBuf,
        snippet: &'static str,
        already: bool,
    },
    /// A pre-push hook init cannot chain into: left as it is, with the line to add.
    PrePushLine {
        path: PathBuf,
    },
    MergeStrategy {
        already: bool,
    },
    /// `.claude/worktrees/` added to the root `.gitignore` (made if missing): Claude Code puts
    /// its subagents' worktrees there, which the state would otherwise hold as embedded
    /// repositories.
    IgnoreClaudeWorktrees,
}

impl Step {
    /// Whether the step writes anything.
    pub(crate) fn changes(&self) -> bool {
        match self {
            Step::WriteChecks { .. }
            | Step::WriteVerify { .. }
            | Step::WriteProtect { .. }
            | Step::IgnoreClaudeWorktrees => true,
            Step::ChecksKept | Step::VerifyKept { .. } | Step::RootVerifyNotWritten => false,
            Step::Wire { wired, .. } => !wired.added.is_empty(),
            Step::PrePush { already, .. }
            | Step::PrePushWrite { already, .. }
            | Step::MergeStrategy { already } => !already,
            Step::PrePushSnippet { .. } | Step::PrePushLine { .. } => false,
        }
    }
}

/// What the demonstration came to.
#[derive(Debug)]
pub(crate) enum DemoResult {
    Ran(Box<Demo>),
    /// verify.sh is not armed, so there was nothing to run: how it stands.
    NotArmed(Armed),
    /// There is no verify.sh at the root to show, and prove-it.toml's checks stand in for it.
    ChecksOnly,
    Skipped,
}

/// What `git prove-it init` found, did and showed.
#[derive(Debug)]
pub(crate) struct InitReport {
    pub stacks: Vec<Stack>,
    pub steps: Vec<Step>,
    pub demo: DemoResult,
}

/// A question `init` asks on a terminal before it changes anything.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Question<'a> {
    /// Whether to wire `host`, when no `--host` named one.
    Wire(Host),
    /// Whether to write a checks file with a check per package, for the packages in `dirs`.
    WriteChecks { dirs: &'a [&'a str] },
    /// Whether to make the changes of the plan just shown.
    Proceed,
}

impl Question<'_> {
    /// The question and its choices, the capital one being what an empty answer means
    /// (`default`), on the line the answer is typed after.
    pub(crate) fn ask(&self, default: bool, out: &mut dyn Write) -> io::Result<()> {
        let question = match self {
            Question::Wire(host) => format!("Wire {} ({})?", host.title(), host.config_path()),
            Question::WriteChecks { dirs } => format!(
                "Write {} with one check per package ({} found: {}), each with its own verify.sh, and no verify.sh at the root?",
                workspace::CHECKS_FILE,
                dirs.len(),
                dirs.join(", ")
            ),
            Question::Proceed => "Proceed?".to_string(),
        };
        let choices = if default { "[Y/n]" } else { "[y/N]" };
        write!(out, "{question} {choices} ")
    }
}

impl InitReport {
    /// What init says when the plan it showed is declined.
    pub(crate) fn declined(out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "nothing was changed")
    }

    /// What init is about to change, before it asks.
    pub(crate) fn plan(steps: &[Step], out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "git prove-it init will:")?;
        for step in steps.iter().filter(|step| step.changes()) {
            let line = match step {
                Step::WriteProtect { patterns, .. } => format!(
                    "write {} with {patterns} protected paths (tests, CI workflows, lint and coverage configs): a weakening of them shows in every proof",
                    workspace::CHECKS_FILE
                ),
                Step::WriteChecks { workspace, .. } => format!(
                    "write {} with {} checks, one per package: {}",
                    workspace::CHECKS_FILE,
                    workspace.packages.len(),
                    workspace
                        .packages
                        .iter()
                        .map(|p| format!("{} ({})", p.check, p.dir))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Step::WriteVerify {
                    overwrite: true,
                    dir,
                    ..
                } => format!("overwrite {} (--force)", script_path(dir.as_deref())),
                Step::WriteVerify { dir, .. } => {
                    format!(
                        "write {} with one active check ({})",
                        script_path(dir.as_deref()),
                        stack::ACTIVE_CHECK
                    )
                }
                Step::Wire {
                    host,
                    path,
                    wired,
                    user,
                    ..
                } => format!(
                    "add the gate's {} hooks for {} to {}{}",
                    and_list(&wired.added),
                    host.title(),
                    path.display(),
                    if *user {
                        " (your user-level settings: sessions started in any folder are gated)"
                    } else {
                        ""
                    }
                ),
                Step::PrePush { path, .. } => {
                    format!("install the pre-push hook at {}", path.display())
                }
                Step::PrePushWrite {
                    path, husky: true, ..
                } => format!("add the gate to husky's pre-push hook {}", path.display()),
                Step::PrePushWrite { path, .. } => format!(
                    "chain the gate into the existing pre-push hook at {} (it runs first, then the rest of the hook)",
                    path.display()
                ),
                Step::PrePushSnippet { .. } | Step::PrePushLine { .. } => continue,
                Step::MergeStrategy { .. } => {
                    "set git config notes.prove-it.mergeStrategy union".to_string()
                }
                Step::IgnoreClaudeWorktrees => {
                    "add .claude/worktrees/ to .gitignore (Claude Code's subagents work in worktrees there)"
                        .to_string()
                }
                Step::VerifyKept { .. } | Step::ChecksKept | Step::RootVerifyNotWritten => continue,
            };
            writeln!(out, "  - {line}")?;
        }
        Ok(())
    }

    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        self.stacks_human(out)?;
        for step in &self.steps {
            step_human(step, out)?;
        }
        self.demo_human(out)?;
        self.commit_and_next(out)
    }

    /// The stacks recognised at the root, with the programs their checks need that are missing.
    fn stacks_human(&self, out: &mut dyn Write) -> io::Result<()> {
        // Without a root verify.sh, the root's stacks name no checks to install tools for.
        let root_verify = !self
            .steps
            .iter()
            .any(|step| matches!(step, Step::RootVerifyNotWritten));
        if self.stacks.is_empty() {
            writeln!(out, "stack: none recognised at the worktree root")?;
        }
        for stack in &self.stacks {
            writeln!(out, "stack: {} ({})", stack.name, stack.evidence)?;
            if root_verify && !stack.missing.is_empty() {
                writeln!(
                    out,
                    "hint: {} not on PATH here: install {} before enabling the {} checks in verify.sh",
                    stack.missing.join(", "),
                    if stack.missing.len() == 1 {
                        "it"
                    } else {
                        "them"
                    },
                    stack.name
                )?;
            }
        }
        Ok(())
    }

    /// What the demonstration came to.
    fn demo_human(&self, out: &mut dyn Write) -> io::Result<()> {
        match &self.demo {
            DemoResult::Skipped => {}
            DemoResult::ChecksOnly => writeln!(
                out,
                "\nno demonstration: it runs the root's verify.sh, and there is none; 'git prove-it run' runs the checks in {}",
                workspace::CHECKS_FILE
            )?,
            DemoResult::NotArmed(armed) => writeln!(
                out,
                "\nno demonstration: verify.sh {}\nhint: make it an executable file at the worktree root (chmod +x verify.sh), or run init --force for a new one",
                super::armed::verify(*armed),
            )?,
            DemoResult::Ran(demo) => render_demo(demo, out)?,
        }
        Ok(())
    }

    /// The files to commit, then what to do next.
    fn commit_and_next(&self, out: &mut dyn Write) -> io::Result<()> {
        let has = |wanted: fn(&Step) -> bool| self.steps.iter().any(wanted);
        let checks_written = has(|step| matches!(step, Step::WriteChecks { .. }));
        // Teammates and CI need these files: an agent session elsewhere is gated only by a
        // committed verify.sh and host configuration.
        let mut written: Vec<String> = Vec::new();
        for step in &self.steps {
            match step {
                Step::WriteChecks { .. } | Step::WriteProtect { .. } => {
                    written.push(workspace::CHECKS_FILE.to_string());
                }
                Step::WriteVerify { dir, .. } => {
                    written.push(shell_word(&script_path(dir.as_deref())));
                }
                Step::PrePushWrite {
                    husky: true,
                    already: false,
                    ..
                } => written.push(".husky/pre-push".to_string()),
                Step::Wire {
                    host,
                    wired,
                    user: false,
                    ..
                } if !wired.added.is_empty() => {
                    written.push(host.config_path().to_string());
                }
                Step::IgnoreClaudeWorktrees => written.push(".gitignore".to_string()),
                _ => {}
            }
        }
        if !written.is_empty() {
            writeln!(
                out,
                "\ncommit what init wrote, so that teammates and CI get it too:\n  git add {} && git commit -m '{}'",
                written.join(" "),
                if checks_written {
                    "Gate agent turns on the checks in prove-it.toml"
                } else {
                    "Gate agent turns on verify.sh"
                }
            )?;
        }
        writeln!(
            out,
            "\nnext: enable {} one at a time; 'git prove-it run' proves the working state, \
             'git prove-it doctor' checks the set-up",
            if checks_written {
                "each package's verify.sh checks"
            } else if has(|step| matches!(step, Step::ChecksKept)) {
                "the checks of the scripts prove-it.toml runs"
            } else {
                "verify.sh's checks"
            }
        )
    }
}

/// The checks file init wrote: each check, its script and inputs, and the tools its
/// package's checks need that are not on PATH, each named once.
fn render_checks(workspace: &Workspace, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "wrote {}: one check per package, from {}:",
        workspace::CHECKS_FILE,
        workspace
            .sources
            .iter()
            .map(|source| source_words(*source))
            .collect::<Vec<_>>()
            .join(" and ")
    )?;
    let mut missing: Vec<(&str, String)> = Vec::new();
    for package in &workspace.packages {
        let stacks: Vec<&str> = package.stacks.iter().map(|s| s.name.as_str()).collect();
        writeln!(
            out,
            "  {}: {} ({}), inputs {}",
            package.check,
            package.run(),
            if stacks.is_empty() {
                "no stack recognised".to_string()
            } else {
                stacks.join(", ")
            },
            package.inputs.join(", ")
        )?;
        for stack in package.stacks.iter().filter(|s| !s.missing.is_empty()) {
            let tools = stack.missing.join(", ");
            if !missing
                .iter()
                .any(|(name, have)| *name == stack.name && *have == tools)
            {
                missing.push((&stack.name, tools));
            }
        }
    }
    if let Some(source) = workspace.root_package {
        writeln!(
            out,
            "  the root is a package too ({}): verify.sh at the root proves it, the check of every path",
            root_package_words(source)
        )?;
    }
    for (name, tools) in missing {
        writeln!(
            out,
            "hint: {tools} not on PATH here: install {} before enabling the {name} checks in the packages' verify.sh",
            if tools.contains(", ") { "them" } else { "it" },
        )?;
    }
    Ok(())
}

/// The line (or lines) of one step init took or found taken.
fn step_human(step: &Step, out: &mut dyn Write) -> io::Result<()> {
    match step {
        Step::WriteChecks { workspace, .. } => render_checks(workspace, out)?,
        Step::WriteProtect { patterns, .. } => writeln!(
            out,
            "wrote {} with {patterns} protected paths: a test deleted or skipped there, fewer assertions, or a config deleted shows in every proof (SPEC.md section 2.2)",
            workspace::CHECKS_FILE
        )?,
        Step::ChecksKept => writeln!(
            out,
            "kept {} as it is (init never overwrites it)",
            workspace::CHECKS_FILE
        )?,
        Step::WriteVerify {
            checks,
            overwrite,
            dir,
            ..
        } => writeln!(
            out,
            "{} {}: one active check ({}); {checks} more commented out, to enable one at a time",
            if *overwrite { "overwrote" } else { "wrote" },
            script_path(dir.as_deref()),
            stack::ACTIVE_CHECK
        )?,
        Step::VerifyKept { armed, dir } => writeln!(
            out,
            "kept {} as it is (it {}; --force overwrites it)",
            script_path(dir.as_deref()),
            match (dir, armed) {
                (Some(_), Armed::Yes) => "is executable",
                (Some(_), Armed::Missing) => "does not exist",
                _ => super::armed::verify(*armed),
            }
        )?,
        Step::RootVerifyNotWritten => writeln!(
            out,
            "no verify.sh at the root, and init writes none: the checks in {} prove this repository ('git prove-it init --no-checks' writes one)",
            workspace::CHECKS_FILE
        )?,
        Step::Wire {
            host,
            path,
            wired,
            created,
            user_level,
            user,
        } => wire_human(
            *host,
            path,
            wired,
            *created,
            user_level.as_deref(),
            *user,
            out,
        )?,
        Step::PrePush { path, already } => writeln!(
            out,
            "{} the pre-push hook at {}",
            if *already {
                "already installed:"
            } else {
                "installed"
            },
            path.display()
        )?,
        Step::PrePushWrite {
            path,
            husky,
            already,
            ..
        } => pre_push_write_human(path, *husky, *already, out)?,
        Step::PrePushSnippet {
            manager,
            file,
            snippet,
            already,
        } => snippet_human(*manager, file, snippet, *already, out)?,
        Step::PrePushLine { path } => writeln!(
            out,
            "left the pre-push hook at {} as it is: it is not a shell script init can chain into\n\
                 hint: to gate pushes too, add this line to it, with git's arguments and the pushed refs on its stdin: {}",
            path.display(),
            pre_push::LINE
        )?,
        Step::MergeStrategy { already } => writeln!(
            out,
            "{} notes.prove-it.mergeStrategy = union (stock git notes merge keeps records whole)",
            if *already { "already set:" } else { "set" }
        )?,
        Step::IgnoreClaudeWorktrees => writeln!(
            out,
            "ignored .claude/worktrees/ in .gitignore: Claude Code's subagents work in worktrees there, which this worktree's state would otherwise hold as embedded repositories"
        )?,
    }
    Ok(())
}

/// A host wired, or found wired already; for a project's settings the step the host needs to
/// trust them, and where the host reads them only in the directory it starts in, the
/// user-level file that would gate the rest.
fn wire_human(
    host: Host,
    path: &Path,
    wired: &Wired,
    created: bool,
    user_level: Option<&Path>,
    user: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    if wired.added.is_empty() {
        writeln!(out, "already wired: {} in {}", host.title(), path.display())?;
    } else {
        writeln!(
            out,
            "wired {}: {} hooks {} {}{}",
            host.title(),
            and_list(&wired.added),
            if created { "written to" } else { "merged into" },
            path.display(),
            if user {
                " (user-level: a session started in any folder is gated; repositories without an armed verify.sh are left alone)"
            } else {
                ""
            }
        )?;
    }
    if !user && let Some(trust) = super::host::step(host) {
        writeln!(out, "  trust: {trust}")?;
    }
    if let Some(user) = user_level {
        writeln!(
            out,
            "  where: {} reads {} only in the directory it is started in: a session started in a subdirectory is not gated; to gate it, merge the same hooks into {}\n  hint: git prove-it init --host {} --user-level does it",
            host.title(),
            host.config_path(),
            user.display(),
            host.name()
        )?;
    }
    Ok(())
}

/// The gate written into a pre-push hook: husky's, or an existing shell hook it was chained
/// into, or one that runs it already.
fn pre_push_write_human(
    path: &Path,
    husky: bool,
    already: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    match (husky, already) {
        (true, false) => writeln!(
            out,
            "added the gate to husky's pre-push hook {}",
            path.display()
        ),
        (false, false) => writeln!(
            out,
            "chained the gate into the existing pre-push hook at {}: it runs first, then the rest of the hook as before",
            path.display()
        ),
        (_, true) => writeln!(
            out,
            "already wired: the pre-push hook {} runs git prove-it",
            path.display()
        ),
    }
}

/// A hook manager's configuration: found running the gate already, or the snippet to add to
/// it and the command that installs it.
fn snippet_human(
    manager: Manager,
    file: &Path,
    snippet: &str,
    already: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    if already {
        return writeln!(
            out,
            "already wired: {} runs git prove-it before a push ({})",
            manager.name(),
            file.display()
        );
    }
    writeln!(
        out,
        "{} runs this repository's hooks ({}): to gate pushes, add this to it, then run '{}':",
        manager.name(),
        file.display(),
        match manager {
            Manager::PreCommit => "pre-commit install --hook-type pre-push",
            Manager::Lefthook => "lefthook install",
        }
    )?;
    for line in snippet.lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(())
}

/// A verify.sh's path as the user sees it: `verify.sh` at the root, else in its package.
fn script_path(dir: Option<&str>) -> String {
    match dir {
        None => "verify.sh".to_string(),
        Some(dir) => format!("{dir}/verify.sh"),
    }
}

/// `path` as one word of a shell command line: single-quoted when it holds anything but
/// letters, digits and `._/-`.
fn shell_word(path: &str) -> String {
    if path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c))
    {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}

fn render_demo(demo: &Demo, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "\nthe gate at an agent's stop, shown on this working state (tree {}); nothing is recorded:",
        super::short(&demo.tree)
    )?;
    shown(out, "verify.sh", &demo.verify)?;
    shown(
        out,
        "a copy of verify.sh with 'exit 1' appended",
        &demo.copy,
    )?;
    if !demo.verify.passed {
        writeln!(
            out,
            "hint: verify.sh does not pass yet: fix what it reports, then 'git prove-it run'"
        )?;
    }
    if demo.copy.passed {
        writeln!(
            out,
            "hint: the copy passed although 'exit 1' was appended: verify.sh ends before its last line (an exit or exec?), so lines added at its end are never checked"
        )?;
    }
    Ok(())
}

fn shown(out: &mut dyn Write, what: &str, shown: &Shown) -> io::Result<()> {
    let message = super::gate::answer(&shown.answer);
    let answer = match &message {
        Message::Silent => "the gate lets the turn end",
        Message::Block(_) => "the gate sends the agent back with:",
        Message::Notice(_) => "the turn ends with the notice:",
    };
    writeln!(
        out,
        "  {what}: {} in {}: {}, {answer}",
        shown.exit,
        super::seconds(shown.duration_ms),
        shown.outcome
    )?;
    if let Message::Block(text) | Message::Notice(text) = &message {
        for line in text.lines() {
            if line.is_empty() {
                writeln!(out, "    |")?;
            } else {
                writeln!(out, "    | {line}")?;
            }
        }
    }
    Ok(())
}

/// What makes the root a package of its workspace.
fn root_package_words(source: workspace::Source) -> &'static str {
    match source {
        workspace::Source::GoWork | workspace::Source::GoModules => "its go.mod",
        workspace::Source::PackageJson | workspace::Source::Pnpm => {
            "package.json's own test script"
        }
        workspace::Source::Cargo | workspace::Source::Directories => "Cargo.toml's [package]",
    }
}

/// Where the packages were read from: `Cargo.toml's [workspace] members`.
fn source_words(source: workspace::Source) -> &'static str {
    match source {
        workspace::Source::Cargo => "Cargo.toml's [workspace] members",
        workspace::Source::PackageJson => "package.json's workspaces",
        workspace::Source::Pnpm => "pnpm-workspace.yaml's packages",
        workspace::Source::GoWork => "go.work's use directives",
        workspace::Source::GoModules => "go.mod files in subdirectories",
        workspace::Source::Directories => "directories under packages/ or apps/",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_shows_its_default_as_the_capital_choice() {
        let asked = |question: Question<'_>, default| {
            let mut out = Vec::new();
            question.ask(default, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            asked(Question::Wire(Host::Claude), false),
            format!("Wire Claude Code ({})? [y/N] ", Host::Claude.config_path())
        );
        assert_eq!(
            asked(
                Question::WriteChecks {
                    dirs: &["api", "web"]
                },
                true
            ),
            "Write prove-it.toml with one check per package (2 found: api, web), each with its own verify.sh, and no verify.sh at the root? [Y/n] "
        );
        assert_eq!(asked(Question::Proceed, true), "Proceed? [Y/n] ");
    }
}
