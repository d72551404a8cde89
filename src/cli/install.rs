use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::exit;
use crate::git::{self, Repo};
use crate::report::InstallReport;

/// The pre-push hook we install: it hands over to 'git prove-it hook git pre-push'.
pub(super) const PRE_PUSH: &str = include_str!("../../hooks/pre-push");

/// Wire git-prove-it into a program that calls it.
///
/// pre-push: git's pre-push hook, written into core.hooksPath when set, else the repository's
/// hooks directory. It refuses pushes of unproven commits (policy: git config prove-it.prePush =
/// tip, all, prove or off) and sends the proofs along with pushes that go through. An existing
/// hook of another origin is never overwritten. Exit status: 0 installed (or already there), 2
/// error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What to install.
    #[arg(value_enum)]
    target: Target,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Target {
    /// git's pre-push hook.
    PrePush,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    let cwd = std::env::current_dir().context("could not read the current directory")?;
    let repo = Repo::discover(&cwd)?;
    match args.target {
        Target::PrePush => {
            let path = hooks_dir(&repo)?.join("pre-push");
            let already = install(&path, PRE_PUSH)?;
            InstallReport {
                what: "the pre-push hook",
                path,
                already,
            }
            .human(out)?;
        }
    }
    Ok(exit::OK)
}

/// Where git looks for hooks: `core.hooksPath` (relative to the worktree root, where git runs
/// hooks, and with `~/` for the home directory), else `hooks/` in the common git dir.
pub(super) fn hooks_dir(repo: &Repo) -> Result<PathBuf, git::Error> {
    Ok(match repo.config_string("core.hooksPath") {
        Some(path) if !path.is_empty() => {
            let path = match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
                (Some(rest), Some(home)) => Path::new(&home).join(rest),
                _ => PathBuf::from(path),
            };
            repo.workdir()?.join(path)
        }
        _ => repo.git.common_dir().join("hooks"),
    })
}

/// Write `content` as an executable hook at `path`. Returns whether it was already there; a
/// different hook at `path` is an error, never overwritten.
pub(super) fn install(path: &Path, content: &str) -> Result<bool, super::Failure> {
    match std::fs::read(path) {
        Ok(existing) if existing == content.as_bytes() => return Ok(true),
        Ok(_) => {
            return Err(super::Failure::from(anyhow::anyhow!(
                "{} already exists and is not ours; it was left as it is",
                path.display()
            ))
            .hint("move it away and run 'git prove-it install pre-push' again, or make it pass its arguments and stdin to: git prove-it hook git pre-push \"$@\""));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(anyhow::Error::from(e)
                .context(format!("could not read {}", path.display()))
                .into());
        }
    }
    let dir = path.parent().expect("a hook path has a directory");
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    std::fs::write(path, content).with_context(|| format!("could not write {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("could not make {} executable", path.display()))?;
    Ok(false)
}
