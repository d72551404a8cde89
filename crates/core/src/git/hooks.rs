//! git's hooks directory and the hooks we install there. A hook of another origin is never
//! overwritten.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{Error, Repo};

/// One of our hooks, where git runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    pub path: PathBuf,
    /// Ours was already there, unchanged.
    pub already: bool,
}

impl Repo {
    /// Where git looks for hooks: `core.hooksPath` (relative to the worktree root, where git runs
    /// hooks, and with `~/` for the home directory), else `hooks/` in the common git dir.
    pub fn hooks_dir(&self) -> Result<PathBuf, Error> {
        Ok(match self.config_string("core.hooksPath") {
            Some(path) if !path.is_empty() => {
                let path = match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
                    (Some(rest), Some(home)) => Path::new(&home).join(rest),
                    _ => PathBuf::from(path),
                };
                self.workdir()?.join(path)
            }
            _ => self.git.common_dir().join("hooks"),
        })
    }

    /// The hook `name` with `content`, as it stands: where git runs it and whether it is already
    /// there. Another hook in its place is the `HookNotOurs` error.
    pub fn find_hook(&self, name: &str, content: &str) -> Result<Hook, Error> {
        let path = self.hooks_dir()?.join(name);
        let already = match std::fs::read(&path) {
            Ok(existing) if existing == content.as_bytes() => true,
            Ok(_) => return Err(Error::HookNotOurs { path }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(source) => return Err(Error::ReadFile { path, source }),
        };
        Ok(Hook { path, already })
    }

    /// Install `content` as the executable hook `name`, unless it is already there. Another
    /// hook in its place is the `HookNotOurs` error, and is left as it is.
    pub fn install_hook(&self, name: &str, content: &str) -> Result<Hook, Error> {
        let hook = self.find_hook(name, content)?;
        if hook.already {
            return Ok(hook);
        }
        let path = &hook.path;
        let dir = path.parent().expect("a hook path has a directory");
        std::fs::create_dir_all(dir).map_err(|source| Error::CreateDir {
            path: dir.to_owned(),
            source,
        })?;
        std::fs::write(path, content).map_err(|source| Error::WriteFile {
            path: path.clone(),
            source,
        })?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(
            |source| Error::MakeExecutable {
                path: path.clone(),
                source,
            },
        )?;
        Ok(hook)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Error;
    use super::super::test_repo::{git_repo, run};

    #[test]
    fn a_hook_goes_into_the_common_dir_once_and_runs_for_git() {
        let (dir, repo) = git_repo();
        let path = dir.path().join(".git/hooks/post-commit");
        let content = "#!/bin/sh\ntouch ran\n";
        let first = repo.install_hook("post-commit", content).unwrap();
        assert_eq!(
            (first.path.as_path(), first.already),
            (path.as_path(), false)
        );
        let again = repo.install_hook("post-commit", content).unwrap();
        assert!(again.already);
        run(
            dir.path(),
            &[
                "-c",
                "user.name=a",
                "-c",
                "user.email=a@b",
                "commit",
                "--quiet",
                "--allow-empty",
                "-m",
                "x",
            ],
        );
        assert!(dir.path().join("ran").is_file(), "git ran the hook");
    }

    #[test]
    fn core_hooks_path_is_taken_from_the_worktree_root() {
        let (dir, _) = git_repo();
        run(dir.path(), &["config", "core.hooksPath", "githooks"]);
        // Opened after the config change: a handle resolves its config once.
        let repo = super::super::Repo::discover_at(dir.path()).unwrap();
        assert_eq!(repo.hooks_dir().unwrap(), dir.path().join("githooks"));
    }

    #[test]
    fn another_hook_is_not_ours_and_is_left_as_it_is() {
        let (dir, repo) = git_repo();
        let path = dir.path().join(".git/hooks/pre-push");
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
        let error = repo.install_hook("pre-push", "ours\n").unwrap_err();
        assert!(matches!(&error, Error::HookNotOurs { path: p } if *p == path));
        assert_eq!(
            error.to_string(),
            format!(
                "{} already exists and is not ours; it was left as it is",
                path.display()
            )
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "#!/bin/sh\nexit 0\n"
        );
    }
}
