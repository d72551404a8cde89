//! `git prove-it init`: verify.sh written for the stack found, the agent hosts and git wired,
//! then the gate shown at work.

use std::io::{BufRead, IsTerminal as _, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::install;
use crate::context::Settings;
use crate::context::policy::{GatePolicy, Policy};
use crate::exit;
use crate::git::Repo;
use crate::hosts::Host;
use crate::report::{DemoResult, InitReport, Question, Step, could_not, hint, refusal};
use crate::setup::pre_push::{self, Manager, Plan};
use crate::setup::workspace::{self, Workspace};
use crate::setup::{demo, stack};

/// The git config `init` sets so that stock `git notes merge` keeps every proof record whole.
pub(crate) const MERGE_STRATEGY: &str = "notes.prove-it.mergeStrategy";

/// Set a repository up: write verify.sh, wire agent hosts and git, then show the gate at work.
///
/// Detects the stack at the worktree root (Cargo, npm/pnpm/yarn/bun, Python with pytest or uv,
/// Go, Make, Gradle, Maven, Flutter and Dart, Ruby, .NET, Deno, Zig, CMake) and writes a
/// verify.sh with one active check (git diff --check, which passes on day one) and the stack's
/// usual checks as comments, to enable one at a time after seeing each fail once; a tool those
/// checks need that is not on PATH is named, to install first. An existing verify.sh is kept unless --force. Each --host gets
/// the gate's hooks merged into its project settings (every other key and hook is kept);
/// --pre-push gates pushes, beside a pre-push hook or hook manager already there.
/// notes.prove-it.mergeStrategy is set to union. It ends by naming the files it wrote, to
/// commit: teammates and CI need them.
///
/// In a repository with several packages (Cargo, npm, yarn or pnpm workspaces, a go.work or
/// several go.mod files, directories under packages/ or apps/ holding a recognised stack) and
/// no prove-it.toml yet, init offers a prove-it.toml instead: one check per package, named after
/// its directory, running that package's own verify.sh (written as above, from the package's
/// stacks; its whitespace check looks at the package only) with the package's directory and the
/// workspace's lockfiles as inputs. It then writes no verify.sh at the root, and says so; one
/// already there is kept (--force overwrites it). An existing prove-it.toml is never
/// overwritten, and with it init writes no root verify.sh either. --no-checks keeps the single
/// root verify.sh.
///
/// Then a demonstration: verify.sh runs on the working state, and a copy of it with `exit 1`
/// appended (in a temporary directory) runs too, and the gate's answer to each is shown. Nothing
/// is recorded and the repository is not changed by it. Without a root verify.sh beside
/// prove-it.toml there is no demonstration ('git prove-it run' runs the checks). Running init
/// twice changes nothing.
///
/// On a terminal, init asks before changing anything (and whether to write prove-it.toml);
/// elsewhere it needs --yes. Exit status: 0 set up, verify.sh passed and its failing copy was
/// refused (or there is no root verify.sh beside prove-it.toml to demonstrate); 1 verify.sh did
/// not pass (or its copy was not refused); 2 usage or repository error, nothing changed; 3
/// verify.sh is not armed.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Wire this agent host's hooks to the gate (repeatable).
    #[arg(long = "host", value_enum, value_name = "HOST")]
    hosts: Vec<Host>,

    /// Gate pushes too: install git's pre-push hook (as 'git prove-it install pre-push'), or,
    /// beside what the repository already runs before a push, chain into an existing shell
    /// pre-push hook (the gate first, then the rest of it as before), add the gate to husky's
    /// .husky/pre-push, or print the snippet for lefthook.yml or .pre-commit-config.yaml. A
    /// pre-push hook it cannot chain into is left as it is, with the line to add.
    #[arg(long)]
    pre_push: bool,

    /// Also wire the gate in the user-level settings of each --host that reads a project's
    /// hooks only in the folder it is started in (Claude Code's ~/.claude/settings.json,
    /// Gemini CLI's ~/.gemini/settings.json), so that a session started in a subdirectory is
    /// gated too. Those hooks then run in every repository; one without an armed verify.sh is
    /// left alone.
    #[arg(long)]
    user_level: bool,

    /// Do not ask: set up as the flags say (for scripts and agents).
    #[arg(short = 'y', long)]
    yes: bool,

    /// Overwrite an existing verify.sh (the root's, and in a repository with several packages
    /// each package's). prove-it.toml is never overwritten.
    #[arg(short, long)]
    force: bool,

    /// In a repository with several packages, write one verify.sh at the root as in a
    /// single-package repository, and no prove-it.toml.
    #[arg(long)]
    no_checks: bool,

    /// Skip the demonstration.
    #[arg(long)]
    no_demo: bool,
}

pub(crate) fn run(
    args: &Args,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let repo = Repo::discover(&cwd)?;
    let interactive = !args.yes && std::io::stdin().is_terminal();
    let stacks = stack::detect(repo.workdir()?);
    let checks = checks(&repo, interactive, args, input, err)?;

    let mut hosts = Vec::new();
    for host in &args.hosts {
        if !hosts.contains(host) {
            hosts.push(*host);
        }
    }
    if interactive && hosts.is_empty() {
        let host = Host::Claude;
        let seen = repo.workdir()?.join(".claude").is_dir();
        if ask(Question::Wire(host), seen, input, err)? {
            hosts.push(host);
        }
    }

    // Everything is planned and checked before anything is written, so that a malformed
    // settings file or a foreign hook changes nothing.
    let steps = plan(&repo, &stacks, &checks, &hosts, args)?;
    let changes = steps.iter().any(Step::changes);
    if changes && !args.yes {
        InitReport::plan(&steps, err)?;
        if !interactive {
            return Err(refusal::init_cannot_ask().into());
        }
        if !ask(Question::Proceed, true, input, err)? {
            InitReport::declined(err)?;
            return Ok(exit::OK);
        }
    }
    for step in &steps {
        act(&repo, step)?;
    }

    let demo = if args.no_demo {
        DemoResult::Skipped
    } else {
        let armed = repo.armed()?;
        let no_root_verify = steps
            .iter()
            .any(|step| matches!(step, Step::RootVerifyNotWritten));
        if no_root_verify && !armed.is_armed() {
            DemoResult::ChecksOnly
        } else if armed.is_armed() {
            let sources = Settings::of(&repo);
            let timeout = Policy::resolve(None, &sources)?.timeout;
            let max_blocks = GatePolicy::resolve(&sources)?.max_blocks;
            let interrupt = crate::process::interrupt_flag()?;
            let settings = demo::DemoRun {
                timeout,
                max_blocks,
                interrupt: Some(&interrupt),
            };
            DemoResult::Ran(Box::new(demo::run(&repo, &settings)?))
        } else {
            DemoResult::NotArmed(armed)
        }
    };
    let report = InitReport {
        stacks,
        steps,
        demo,
    };
    report.human(out)?;
    Ok(match &report.demo {
        DemoResult::Skipped | DemoResult::ChecksOnly => exit::OK,
        DemoResult::NotArmed(_) => exit::NOT_ARMED,
        DemoResult::Ran(demo) if demo.verify.passed && !demo.copy.passed => exit::OK,
        DemoResult::Ran(_) => exit::NOT_PROVEN,
    })
}

/// What init does about prove-it.toml.
enum Checks {
    /// Nothing: one package, or --no-checks, or the offer declined. The root verify.sh as ever.
    None,
    /// prove-it.toml is there already: kept, and no root verify.sh is written beside it.
    Kept,
    /// Write prove-it.toml and each package's verify.sh, and no root verify.sh unless the root
    /// is a package too.
    Write(Workspace),
}

/// Whether init writes prove-it.toml: offered when the repository holds several packages and
/// has none yet, asked on a terminal, accepted with --yes (or by the plan shown without it).
fn checks(
    repo: &Repo,
    interactive: bool,
    args: &Args,
    input: &mut dyn BufRead,
    err: &mut dyn Write,
) -> Result<Checks, super::Failure> {
    let root = repo.workdir()?;
    if args.no_checks {
        return Ok(Checks::None);
    }
    if std::fs::symlink_metadata(root.join(workspace::CHECKS_FILE)).is_ok() {
        return Ok(Checks::Kept);
    }
    let Some(found) = workspace::detect(root) else {
        return Ok(Checks::None);
    };
    if interactive {
        let dirs: Vec<&str> = found.packages.iter().map(|p| p.dir.as_str()).collect();
        if !ask(Question::WriteChecks { dirs: &dirs }, true, input, err)? {
            return Ok(Checks::None);
        }
    }
    Ok(Checks::Write(found))
}

/// The line that ignores Claude Code's worktrees, and a path below it to ask git about.
const CLAUDE_WORKTREES_LINE: &str = ".claude/worktrees/\n";
const CLAUDE_WORKTREES_PROBE: &str = ".claude/worktrees/agent";

/// Every step init takes, in order: prove-it.toml (or the checks' scripts), the root
/// verify.sh, each host's hooks, Claude Code's worktrees ignored, the pre-push gate when
/// asked for, and the notes' merge strategy.
fn plan(
    repo: &Repo,
    stacks: &[stack::Stack],
    checks: &Checks,
    hosts: &[Host],
    args: &Args,
) -> Result<Vec<Step>, super::Failure> {
    let root = repo.workdir()?;
    let mut steps = plan_checks(root, stacks, checks, args);
    steps.push(plan_root_verify(repo, stacks, checks, args)?);
    for &host in hosts {
        steps.extend(plan_wire(root, host, args)?);
    }
    // Claude Code's subagents work in worktrees below the checkout, which the state would hold
    // as embedded repositories (a session's stop refused while one holds changes).
    if hosts.contains(&Host::Claude) && repo.ignores(CLAUDE_WORKTREES_PROBE) == Some(false) {
        steps.push(Step::IgnoreClaudeWorktrees);
    }
    if args.pre_push {
        steps.push(plan_pre_push(repo, root)?);
    }
    steps.push(Step::MergeStrategy {
        already: repo
            .config_string(MERGE_STRATEGY)
            .is_some_and(|value| value == "union"),
    });
    Ok(steps)
}

/// The steps of prove-it.toml: a protect-only file beside verify.sh for one package, the file
/// kept, or the file written with each package's verify.sh (kept when it is there, unless
/// --force and it differs).
fn plan_checks(root: &Path, stacks: &[stack::Stack], checks: &Checks, args: &Args) -> Vec<Step> {
    let mut steps = Vec::new();
    match checks {
        // One package: a checks file with only the stack's protected paths, beside verify.sh.
        Checks::None => {
            let patterns = stack::protect_patterns(stacks);
            if !args.no_checks
                && !patterns.is_empty()
                && std::fs::symlink_metadata(root.join(workspace::CHECKS_FILE)).is_err()
            {
                steps.push(Step::WriteProtect {
                    text: stack::protect_file(&patterns),
                    patterns: patterns.len(),
                });
            }
        }
        Checks::Kept => steps.push(Step::ChecksKept),
        Checks::Write(found) => {
            steps.push(Step::WriteChecks {
                text: found.render(),
                workspace: found.clone(),
            });
            for package in &found.packages {
                let path = root.join(&package.dir).join(workspace::VERIFY_SH);
                let text = package.verify_script();
                let exists = std::fs::symlink_metadata(&path).is_ok();
                let same = std::fs::read(&path).is_ok_and(|current| current == text.as_bytes());
                steps.push(if exists && (same || !args.force) {
                    Step::VerifyKept {
                        armed: workspace::script_state(&path),
                        dir: Some(package.dir.clone()),
                    }
                } else {
                    Step::WriteVerify {
                        checks: package.stacks.iter().map(|s| s.checks.len()).sum(),
                        text,
                        overwrite: exists,
                        dir: Some(package.dir.clone()),
                    }
                });
            }
        }
    }
    steps
}

/// The step of the root verify.sh: none written beside a checks file (but one that init writes
/// for a workspace whose root is a package too), kept when it is there (unless --force and it
/// differs from the stacks' script), else written.
fn plan_root_verify(
    repo: &Repo,
    stacks: &[stack::Stack],
    checks: &Checks,
    args: &Args,
) -> Result<Step, super::Failure> {
    let verify = repo.verify_path()?;
    let exists = std::fs::symlink_metadata(&verify).is_ok();
    let text = stack::verify_script(stacks);
    let same = repo
        .read_verify()
        .is_ok_and(|current| current.is_some_and(|current| current == text.as_bytes()));
    let beside_checks = match checks {
        Checks::None => false,
        Checks::Kept => true,
        Checks::Write(workspace) => workspace.root_package.is_none(),
    };
    Ok(if !exists && beside_checks {
        Step::RootVerifyNotWritten
    } else if exists && (same || !args.force) {
        Step::VerifyKept {
            armed: repo.armed()?,
            dir: None,
        }
    } else {
        Step::WriteVerify {
            text,
            checks: stacks.iter().map(|s| s.checks.len()).sum(),
            overwrite: exists,
            dir: None,
        }
    })
}

/// The steps that wire `host`: its project settings under `root`, and with --user-level its
/// user-level settings too. An error, before anything is written, for a file that cannot be
/// read as settings.
fn plan_wire(root: &Path, host: Host, args: &Args) -> Result<Vec<Step>, super::Failure> {
    let mut steps = Vec::new();
    let path = root.join(host.config_path());
    let existing = read_optional(&path)?;
    let wired = host.wire(existing.as_deref()).map_err(|error| {
        super::Failure::from(
            anyhow::Error::new(error).context(could_not::wire(host.title(), &path)),
        )
        .hint(hint::fix_the_settings_file())
    })?;
    let user_file = host.user_level_to_wire();
    steps.push(Step::Wire {
        host,
        path,
        wired,
        created: existing.is_none(),
        user_level: user_file.clone().filter(|_| !args.user_level),
        user: false,
    });
    if let Some(path) = user_file.filter(|_| args.user_level) {
        let existing = read_optional(&path)?;
        let wired = host.wire(existing.as_deref()).map_err(|error| {
            super::Failure::from(
                anyhow::Error::new(error).context(could_not::wire_user_wide(host.title(), &path)),
            )
            .hint(hint::fix_the_settings_file())
        })?;
        steps.push(Step::Wire {
            host,
            path,
            wired,
            created: existing.is_none(),
            user_level: None,
            user: true,
        });
    }
    Ok(steps)
}

/// The push gate beside what the repository already runs before a push: husky, lefthook or
/// pre-commit when their set-up is at the root, else git's pre-push hook, chained into when
/// one of another origin is there.
fn plan_pre_push(repo: &Repo, root: &Path) -> Result<Step, super::Failure> {
    if root.join(".husky").is_dir() {
        let path = root.join(".husky").join(install::PRE_PUSH_HOOK);
        return Ok(
            match pre_push::for_husky(read_optional(&path)?.as_deref()) {
                Plan::Write { text, already } => Step::PrePushWrite {
                    path,
                    text,
                    husky: true,
                    already,
                },
                _ => unreachable!("husky's hook is always a file to write"),
            },
        );
    }
    let managers = pre_push::LEFTHOOK_FILES
        .iter()
        .map(|name| (Manager::Lefthook, *name))
        .chain([(Manager::PreCommit, ".pre-commit-config.yaml")]);
    for (manager, name) in managers {
        let file = root.join(name);
        if let Some(config) = read_optional(&file)? {
            let Plan::Snippet {
                manager,
                snippet,
                already,
            } = pre_push::for_config(manager, &config)
            else {
                unreachable!("a manager's configuration gets a snippet");
            };
            return Ok(Step::PrePushSnippet {
                manager,
                file: PathBuf::from(name),
                snippet,
                already,
            });
        }
    }
    let path = repo.hooks_dir()?.join(install::PRE_PUSH_HOOK);
    let existing = match std::fs::read(&path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Some(text),
            // Not text (a compiled hook, say): nothing init can chain into.
            Err(_) => return Ok(Step::PrePushLine { path }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(anyhow::Error::from(e)
                .context(could_not::read(&path))
                .into());
        }
    };
    Ok(
        match pre_push::for_hook(existing.as_deref(), install::PRE_PUSH) {
            Plan::Install => Step::PrePush {
                already: existing.is_some(),
                path,
            },
            Plan::Write { text, already } => Step::PrePushWrite {
                path,
                text,
                husky: false,
                already,
            },
            Plan::Line | Plan::Snippet { .. } => Step::PrePushLine { path },
        },
    )
}

fn act(repo: &Repo, step: &Step) -> Result<(), super::Failure> {
    match step {
        Step::VerifyKept { .. }
        | Step::ChecksKept
        | Step::RootVerifyNotWritten
        | Step::PrePush { already: true, .. } => {}
        Step::PrePushWrite { already: true, .. }
        | Step::PrePushSnippet { .. }
        | Step::PrePushLine { .. } => {}
        Step::PrePushWrite { path, text, .. } => write_file(path, text, 0o755)?,
        Step::MergeStrategy { already: true } => {}
        Step::WriteChecks { text, .. } | Step::WriteProtect { text, .. } => {
            write_file(&repo.workdir()?.join(workspace::CHECKS_FILE), text, 0o644)?;
        }
        Step::WriteVerify {
            text, dir: None, ..
        } => write_file(&repo.verify_path()?, text, 0o755)?,
        Step::WriteVerify {
            text,
            dir: Some(dir),
            ..
        } => write_file(
            &repo.workdir()?.join(dir).join(workspace::VERIFY_SH),
            text,
            0o755,
        )?,
        Step::Wire { path, wired, .. } => {
            if !wired.added.is_empty() {
                write_file(path, &wired.text, 0o644)?;
            }
        }
        Step::PrePush { .. } => {
            install::install_pre_push(repo)?;
        }
        Step::MergeStrategy { already: false } => repo.set_config(MERGE_STRATEGY, "union")?,
        Step::IgnoreClaudeWorktrees => {
            let path = repo.workdir()?.join(".gitignore");
            let mut text = read_optional(&path)?.unwrap_or_default();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(CLAUDE_WORKTREES_LINE);
            write_file(&path, &text, 0o644)?;
        }
    }
    Ok(())
}

/// A file's text, or `None` when it does not exist.
fn read_optional(path: &Path) -> Result<Option<String>, super::Failure> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::Error::from(e).context(could_not::read(path)).into()),
    }
}

/// Write `text` to `path` through a temporary file and a rename, so that a settings file is
/// never left half written. A link is followed: the file it leads to is replaced. A file that
/// exists keeps its permissions; a new one gets `mode`.
fn write_file(path: &Path, text: &str, mode: u32) -> Result<(), super::Failure> {
    let target: PathBuf = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let dir = target.parent().expect("a file has a directory");
    std::fs::create_dir_all(dir).with_context(|| could_not::create(dir))?;
    let permissions = std::fs::metadata(&target).map_or_else(
        |_| std::fs::Permissions::from_mode(mode),
        |meta| meta.permissions(),
    );
    let name = target
        .file_name()
        .expect("a file has a name")
        .to_string_lossy();
    let tmp = dir.join(format!(".{name}.prove-it-{}", std::process::id()));
    let written = std::fs::write(&tmp, text)
        .and_then(|()| std::fs::set_permissions(&tmp, permissions))
        .and_then(|()| std::fs::rename(&tmp, &target));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(anyhow::Error::from(error)
            .context(could_not::write(&target))
            .into());
    }
    Ok(())
}

/// Ask a yes/no question on stderr and read the answer; an empty answer is `default`.
fn ask(
    question: Question<'_>,
    default: bool,
    input: &mut dyn BufRead,
    err: &mut dyn Write,
) -> Result<bool, super::Failure> {
    loop {
        question.ask(default, err)?;
        err.flush()?;
        let mut answer = String::new();
        if input.read_line(&mut answer)? == 0 {
            return Ok(false);
        }
        match answer.trim().to_ascii_lowercase().as_str() {
            "" => return Ok(default),
            "y" | "yes" => return Ok(true),
            "n" | "no" => return Ok(false),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ask_takes_the_default_and_repeats_on_nonsense() {
        let mut err = Vec::new();
        let go = Question::Proceed;
        assert!(ask(go, true, &mut "\n".as_bytes(), &mut err).unwrap());
        assert!(!ask(go, false, &mut "\n".as_bytes(), &mut err).unwrap());
        assert!(ask(go, false, &mut "maybe\nyes\n".as_bytes(), &mut err).unwrap());
        assert!(!ask(go, true, &mut "".as_bytes(), &mut err).unwrap());
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "Proceed? [Y/n] Proceed? [y/N] Proceed? [y/N] Proceed? [y/N] Proceed? [Y/n] "
        );
    }
}
