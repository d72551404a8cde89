//! A repository opened once per process (`Repo`): its gix handle, working tree, common git
//! directory and git-prove-it's state folder, and who signs off its proofs.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::Error;
use super::names::VERIFY_SCRIPT;

/// Who signs off a proof when git has no identity configured.
const FALLBACK_NAME: &str = "git-prove-it";
const FALLBACK_EMAIL: &str = "git-prove-it@localhost";

/// A repository, opened once per process: with a working tree for the commands that prove or
/// set up (`Repo::discover`), or possibly bare for those that only read history, the commits,
/// trees and notes (`Repo::discover_history`: `check` and `log`).
pub struct Repo {
    /// Private to `git/`: everything else goes through `Repo`'s methods. (A `Repo` is Send,
    /// not Sync: a thread of its own gets its own handle, `Repo::handle`.)
    pub(super) git: gix::Repository,
    /// The worktree root; `None` in a bare repository.
    workdir: Option<PathBuf>,
    identity: Identity,
}

/// The git identity a proof is signed off by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// `Name <email>`, as a `Signed-off-by:` trailer carries it.
    pub display: String,
    /// No identity was configured, so `display` is the fallback.
    pub missing: bool,
}

impl Repo {
    /// Another handle on the same repository, for a thread of its own: gix repositories are
    /// Send, not Sync, and a clone shares the object database, not the caches.
    pub fn handle(&self) -> Repo {
        Repo {
            git: self.git.clone(),
            workdir: self.workdir.clone(),
            identity: self.identity.clone(),
        }
    }
}

impl Repo {
    /// Open the repository containing `dir` with its working tree, honouring `GIT_DIR` and
    /// `GIT_WORK_TREE` as git does. A bare repository is refused here, before anything is done.
    pub fn discover(dir: &Path) -> Result<Repo, Error> {
        Self::discover_history(dir)?.with_worktree()
    }

    /// Open the repository containing `dir`, bare or not, honouring `GIT_DIR` and
    /// `GIT_WORK_TREE` as git does: for commands that read only commits, trees and notes, as CI
    /// does in a mirror or a server's repository.
    pub fn discover_history(dir: &Path) -> Result<Repo, Error> {
        let git = gix::ThreadSafeRepository::discover_with_environment_overrides(dir).map_err(
            |source| Error::NotARepository {
                path: dir.to_owned(),
                source,
            },
        )?;
        Self::from_git(git.to_thread_local())
    }

    /// Open the repository containing `dir` and nothing else: a hook event's `cwd` names the
    /// repository, whatever `GIT_DIR` the host happens to run its hooks with.
    ///
    /// `dir` is read as the kernel reads it (`/../repo` is `/repo`, a link is where it leads).
    /// Only a directory in no repository at all is `NotARepository`; a path that does not exist
    /// or cannot be read, one that is not a directory, and every other failure of discovery
    /// are errors of their own, so that a caller never mistakes them for "nothing to do".
    pub fn discover_at(dir: &Path) -> Result<Repo, Error> {
        let real = std::fs::canonicalize(dir).map_err(|source| Error::NoSuchDirectory {
            path: dir.to_owned(),
            source,
        })?;
        if !real.is_dir() {
            return Err(Error::NotADirectory {
                path: dir.to_owned(),
            });
        }
        let git = gix::ThreadSafeRepository::discover(&real).map_err(|source| {
            if in_no_repository(&source) {
                Error::NotARepository {
                    path: dir.to_owned(),
                    source,
                }
            } else {
                Error::Discover {
                    path: dir.to_owned(),
                    source,
                }
            }
        })?;
        Self::from_git(git.to_thread_local())?.with_worktree()
    }

    /// Open the linked worktree of this repository at `dir`, without the caller's `GIT_DIR`,
    /// `GIT_INDEX_FILE` and the like: they describe the caller's worktree, not one made by us.
    pub fn open_linked_worktree(&self, dir: &Path) -> Result<Repo, Error> {
        let what = || format!("the worktree {}", dir.display());
        let wanted = dir.canonicalize().map_err(|source| Error::Unreadable {
            path: dir.to_owned(),
            source,
        })?;
        for proxy in self.git.worktrees().map_err(Error::read(what()))? {
            // Another worktree being added or removed at this moment (another thread of `run
            // <range>`) may have no readable base yet, or no more: it is not the one wanted.
            let Ok(base) = proxy.base() else {
                continue;
            };
            if base.canonicalize().is_ok_and(|base| base == wanted) {
                // gix opens linked worktrees without repository-local environment overrides.
                return Self::from_git(proxy.into_repo().map_err(Error::read(what()))?)?
                    .with_worktree();
            }
        }
        Err(Error::Read {
            what: what(),
            source: gix::Error::from_error(std::io::Error::other("git does not list it")),
        })
    }

    /// This repository, or the `Bare` error when it has no working tree.
    fn with_worktree(self) -> Result<Repo, Error> {
        self.workdir()?;
        Ok(self)
    }

    fn from_git(mut git: gix::Repository) -> Result<Repo, Error> {
        let workdir = git.workdir().map(Path::to_owned);
        let identity = match git.committer() {
            Some(Ok(sig)) => Identity {
                display: format!("{} <{}>", sig.name, sig.email),
                missing: false,
            },
            // Notes commits and reflog entries need a committer; without one, sign as the tool
            // and say so in the record rather than fail the proof.
            _ => {
                git.committer_or_set_fallback(FALLBACK_NAME, FALLBACK_EMAIL)
                    .map_err(Error::read("the committer identity"))?;
                Identity {
                    display: format!("{FALLBACK_NAME} <{FALLBACK_EMAIL}>"),
                    missing: true,
                }
            }
        };
        git.object_cache_size_if_unset(4 * 1024 * 1024);
        // The index's trailing checksum guards against a torn write, which git itself does
        // not check when it reads (only `fsck` does): hashing the whole file costs a large
        // worktree's stop more than reading it. Nothing is trusted for it either: anyone can
        // write an index with a right checksum, so the state tree trusts entries by the anchor.
        git.config_snapshot_mut()
            .set_raw_value(gix::config::tree::Index::SKIP_HASH, "true")
            .map_err(Error::read("index.skipHash"))?;
        ignore_replacements(&mut git);
        Ok(Repo {
            git,
            workdir,
            identity,
        })
    }

    /// The worktree root; the `Bare` error in a bare repository, which only `discover_history`
    /// opens.
    pub fn workdir(&self) -> Result<&Path, Error> {
        self.workdir.as_deref().ok_or_else(|| Error::Bare {
            path: self.git.git_dir().to_owned(),
        })
    }

    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The commit HEAD points at, or `None` on an unborn branch.
    pub fn head_commit(&self) -> Result<Option<ObjectId>, Error> {
        let head = self.git.head().map_err(Error::read("HEAD"))?;
        Ok(head.id().map(gix::Id::detach))
    }

    /// The tree of the commit HEAD points at, or `None` on an unborn branch.
    pub fn head_tree(&self) -> Result<Option<ObjectId>, Error> {
        let Some(commit) = self.head_commit()? else {
            return Ok(None);
        };
        let what = || format!("the tree of HEAD ({commit})");
        let commit = self.git.find_commit(commit).map_err(Error::read(what()))?;
        Ok(Some(
            commit.tree_id().map_err(Error::read(what()))?.detach(),
        ))
    }

    /// Whether `tree` holds verify.sh at its root as an executable file, or as a link: one that
    /// cannot be followed counts too, since it must be said, never taken for an opt-out.
    pub fn tree_has_armed_verify(&self, tree: ObjectId) -> Result<bool, Error> {
        match self.tree_script(tree, VERIFY_SCRIPT) {
            Ok(found) => Ok(found.is_some_and(|(_, mode)| mode == 0o100_755)),
            Err(Error::ScriptLink { .. }) => Ok(true),
            Err(error) => Err(error),
        }
    }

    /// The file a script at `path` of the committed `tree` runs, followed through links within
    /// the tree: its blob and mode; a link that cannot be followed is `Error::ScriptLink`.
    pub fn tree_script(
        &self,
        tree: ObjectId,
        path: &str,
    ) -> Result<Option<(ObjectId, u32)>, Error> {
        super::script_link::in_tree(&self.git, tree, path)
    }

    /// verify.sh at the root of `tree`, followed through links: the blob, mode and bytes of
    /// the file that runs.
    pub fn tree_verify(&self, tree: ObjectId) -> Result<Option<(ObjectId, u32, Vec<u8>)>, Error> {
        let what = || format!("verify.sh in tree {tree}");
        let Some((blob, mode)) = self.tree_script(tree, VERIFY_SCRIPT)? else {
            return Ok(None);
        };
        let data = self
            .git
            .find_blob(blob)
            .map_err(Error::read(what()))?
            .data
            .clone();
        Ok(Some((blob, mode, data)))
    }

    /// The id `data` has as a blob, without writing it (the null id when it cannot be hashed).
    pub fn hash_blob(&self, data: &[u8]) -> ObjectId {
        gix::objs::compute_hash(self.git.object_hash(), gix::objs::Kind::Blob, data)
            .unwrap_or_else(|_| ObjectId::null(self.git.object_hash()))
    }

    /// Write `data` to the object database as a blob and return its id.
    pub fn write_blob(&self, data: impl AsRef<[u8]>) -> Result<ObjectId, Error> {
        Ok(self
            .git
            .write_blob(data)
            .map_err(Error::write("a blob"))?
            .detach())
    }

    /// The names of the configured remotes, sorted.
    pub fn remote_names(&self) -> Vec<String> {
        self.git
            .remote_names()
            .into_iter()
            .map(|name| name.to_string())
            .collect()
    }
}

/// Read every object as it is stored, never as `refs/replace/` (under any
/// `GIT_REPLACE_REF_BASE`) swaps it: a replacement makes one commit read as another, so a broken
/// commit replaced by a proven one would carry the proven one's tree into `check`, the push
/// gate and the state tree. gix reads no `info/grafts` at all. Every handle made from this one
/// (`Repo::handle`) keeps the setting.
pub(super) fn ignore_replacements(git: &mut gix::Repository) {
    git.objects.ignore_replacements = true;
}

/// Whether discovery failed because no directory up to the root holds a repository, and for no
/// other reason.
fn in_no_repository(error: &gix::Error) -> bool {
    use gix::discover::upwards::Error as Upwards;
    error.downcast_any_ref::<Upwards>().is_some_and(|error| {
        matches!(
            error,
            Upwards::NoGitRepository { .. }
                | Upwards::NoGitRepositoryWithinCeiling { .. }
                | Upwards::NoGitRepositoryWithinFs { .. }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_repo::{git_repo, run};

    #[test]
    fn a_blob_is_written_as_git_hashes_it() {
        let (dir, repo) = git_repo();
        let id = repo.write_blob(b"some bytes\n").unwrap();
        std::fs::write(dir.path().join("f"), b"some bytes\n").unwrap();
        assert_eq!(format!("{id}\n"), run(dir.path(), &["hash-object", "f"]));
        assert_eq!(
            run(dir.path(), &["cat-file", "-p", &id.to_string()]),
            "some bytes\n"
        );
    }

    #[test]
    fn remotes_are_listed_by_name() {
        let (dir, _) = git_repo();
        run(dir.path(), &["remote", "add", "upstream", "../elsewhere"]);
        run(dir.path(), &["remote", "add", "origin", "../there"]);
        let repo = super::Repo::discover_at(dir.path()).unwrap();
        assert_eq!(repo.remote_names(), ["origin", "upstream"]);
    }

    /// Every discovery error was once read as "not a repository", so odd
    /// spellings of a hook's cwd ended the turn silently. Only a directory in no repository is.
    #[test]
    fn only_a_directory_in_no_repository_is_not_a_repository() {
        use super::super::Error;
        let (dir, _) = git_repo();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("f");
        std::fs::write(&file, "x").unwrap();
        let dotdot = std::path::Path::new("/..").join(root.strip_prefix("/").unwrap());
        let opened = super::Repo::discover_at(&dotdot).unwrap();
        assert_eq!(opened.workdir().unwrap().canonicalize().unwrap(), root);
        for (path, what) in [
            (root.join("missing"), "missing"),
            (std::path::PathBuf::from("/tmp/a\0b"), "nul"),
        ] {
            let error = super::Repo::discover_at(&path).err().expect(what);
            assert!(
                matches!(error, Error::NoSuchDirectory { .. }),
                "{what}: {error:?}"
            );
        }
        let error = super::Repo::discover_at(&file).err().unwrap();
        assert!(matches!(error, Error::NotADirectory { .. }), "{error:?}");
        let outside = tempfile::tempdir().unwrap();
        let error = super::Repo::discover_at(outside.path()).err().unwrap();
        assert!(matches!(error, Error::NotARepository { .. }), "{error:?}");
    }
}
