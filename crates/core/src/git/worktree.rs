//! The linked worktrees that hold one commit each, for proving a commit rather than the working
//! state: kept in the user's cache between commands (slots, each taken under an `flock`), so
//! that a command moves one to its commit with the smallest checkout instead of writing every
//! file of a new one. gix cannot add linked worktrees, so this module runs `git worktree add`
//! (and `git clean`); a worktree is moved to another commit in this process where nothing of
//! git's changes what a checkout writes (`checkout`), else by `git checkout`.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::process;

use super::names::{CACHE_DIR, GIT_LINK_DIR, WORKTREES_DIR};
use super::{Error, IndexTrust, Repo};

/// The variables through which a caller points git at a repository: git's own list
/// (`git rev-parse --local-env-vars`), which git itself clears before entering another
/// repository. Processes working in a temporary worktree must not see the caller's.
pub const LOCAL_ENV: &[&str] = &[
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
];

/// Set for every git run here: a commit is checked out as it is stored, never as a replace ref
/// swaps it, or a replaced commit's run would prove another tree under its name.
const NO_REPLACE_OBJECTS: &str = "GIT_NO_REPLACE_OBJECTS";

/// A linked worktree with a commit checked out (detached), taken for one command: its slot's
/// lock is held until it is dropped, and the worktree is kept for the next command.
pub struct TempWorktree {
    path: PathBuf,
    git_dir: PathBuf,
    /// The folder of the link to the common git directory that this worktree's `.git` names.
    git_link: PathBuf,
    /// The key of the commit the checks file's `setup` last ran for here.
    set_up_for: std::cell::Cell<Option<ObjectId>>,
    /// The last reading of its files from disk, which the next may trust for the files
    /// unchanged since (their ctimes say so, whatever moved the worktree in between).
    read: std::cell::Cell<Option<IndexTrust>>,
    /// Whether the last move to a commit was made in this process.
    in_place: std::cell::Cell<bool>,
    /// The worktree opened as a repository of its own, once.
    opened: std::cell::OnceCell<Repo>,
    /// The tree of the commit last proven here.
    proving: std::cell::Cell<Option<ObjectId>>,
    /// The slot's `flock`, held while this command uses the worktree.
    _lock: std::fs::File,
}

/// The file of a repository's folder for commit worktrees locked while one is added.
const ADDING_LOCK: &str = "adding.lock";

/// The most worktrees of one repository kept for commit runs: one for each of the commands
/// (and `--jobs` workers) that run at once.
const SLOTS: usize = 64;

/// `git` with the caller's repository-locating variables cleared, pointed at `git_dir`, stdin
/// from `/dev/null`.
fn git(git_dir: &Path) -> process::Request<'static> {
    LOCAL_ENV
        .iter()
        .fold(process::Request::new("git"), |git, name| {
            git.env_remove(name)
        })
        .env(NO_REPLACE_OBJECTS, "1")
        .arg("--git-dir")
        .arg(git_dir)
}

fn run(git: process::Request<'_>, what: &str) -> Result<(), Error> {
    let output = git.run().map_err(|error| Error::GitSpawn {
        command: what.to_string(),
        source: error.into_source(),
    })?;
    if output.success() {
        Ok(())
    } else {
        Err(Error::GitFailed {
            command: what.to_string(),
            stderr: output.stderr_text(),
        })
    }
}

impl Repo {
    /// Check `commit` out into a worktree of this repository's cache, outside its directory
    /// tree ([`Repo::commit_worktrees`]), so that nothing a run finds by walking up (a
    /// `node_modules`, a `conftest.py`, a `go.work`) belongs to the checkout. The first free
    /// slot is taken: a worktree kept there by an earlier command is moved to `commit` and
    /// cleaned of everything that is not the commit's, ignored files too, as a new one would
    /// be; a slot without a sound worktree of this repository gets a new one.
    pub fn add_temp_worktree(&self, commit: ObjectId) -> Result<TempWorktree, Error> {
        let home = self.commit_worktrees()?;
        let parent = home.join(WORKTREES_DIR);
        make_dir(&parent)?;
        let common = self.common_dir_real();
        for slot in 0..SLOTS {
            let Some(lock) = lock_slot(&parent.join(format!("slot-{slot}.lock")))? else {
                continue;
            };
            let worktree = TempWorktree {
                path: parent.join(format!("slot-{slot}")),
                git_dir: self.git.git_dir().to_owned(),
                git_link: home.join(GIT_LINK_DIR),
                set_up_for: std::cell::Cell::new(None),
                read: std::cell::Cell::new(None),
                in_place: std::cell::Cell::new(false),
                opened: std::cell::OnceCell::new(),
                proving: std::cell::Cell::new(None),
                _lock: lock,
            };
            // `git worktree add` reads every other worktree's administrative files, and one
            // being added at the same moment (by another thread of this process, which proves
            // several commits at once, or by another command) can be half-written: git then
            // fails reading its `commondir`. One add (or reset, or prune) at a time.
            let _adding = adding_lock(&home)?;
            if worktree.is_kept(&common) && worktree.reset(self, commit).is_ok() {
                return Ok(worktree);
            }
            // Whatever is there (half made by a command that was killed, damaged, forgotten
            // by git) goes, and the slot gets a new worktree.
            worktree.discard()?;
            run(
                git(&worktree.git_dir)
                    .args(["worktree", "add", "--detach", "--quiet"])
                    .arg(&worktree.path)
                    .arg(commit.to_string()),
                "worktree add",
            )?;
            worktree.point_at_link(&common)?;
            return Ok(worktree);
        }
        Err(Error::WorktreeCleanup {
            path: parent,
            source: std::io::Error::other(format!(
                "all {SLOTS} worktrees kept for commit runs are in use"
            )),
        })
    }

    /// The common git directory as the kernel resolves it.
    pub fn common_dir_real(&self) -> PathBuf {
        // Resolved once a process for each path git gives: a commit run asks for it (and for
        // the state directory below it) several times a commit.
        static RESOLVED: std::sync::Mutex<Vec<(PathBuf, PathBuf)>> =
            std::sync::Mutex::new(Vec::new());
        let common = self.git.common_dir();
        let mut resolved = RESOLVED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, real)) = resolved.iter().find(|(given, _)| given == common) {
            return real.clone();
        }
        match std::fs::canonicalize(common) {
            Ok(real) => {
                resolved.push((common.to_owned(), real.clone()));
                real
            }
            Err(_) => common.to_owned(),
        }
    }

    /// This repository's folder for the worktrees of commit runs: under the user's cache
    /// directory (`$XDG_CACHE_HOME`, else `~/.cache`), one folder a repository, named after it
    /// and keyed by its common git directory; the system's temporary directory when the cache
    /// lies inside the checkout (a home directory kept in git). It holds `git/dir`, a link to
    /// the common git directory that the worktrees' `.git` files name (see
    /// `isolation::View::git_link`).
    pub fn commit_worktrees(&self) -> Result<PathBuf, Error> {
        let common = self.common_dir_real();
        let checkout = self.workdir().ok().and_then(|dir| dir.canonicalize().ok());
        let inside = |dir: &Path| checkout.as_deref().is_some_and(|c| dir.starts_with(c));
        // Read here rather than in the context: where a worktree goes is the repository's
        // storage, as the state directory is, and a run resolves it once.
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
            .map(|dir| dir.join(CACHE_DIR))
            .map(|dir| std::fs::canonicalize(&dir).unwrap_or(dir))
            .filter(|dir| !inside(dir))
            .unwrap_or_else(|| {
                std::env::temp_dir().join(format!(
                    "{CACHE_DIR}-{}",
                    rustix::process::getuid().as_raw()
                ))
            });
        let named = common
            .parent()
            .filter(|_| common.file_name().is_some_and(|name| name == ".git"))
            .unwrap_or(&common)
            .file_name()
            .map(|name| {
                name.to_string_lossy()
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                            c
                        } else {
                            '_'
                        }
                    })
                    .take(40)
                    .collect::<String>()
            })
            .unwrap_or_default();
        let key = gix::objs::compute_hash(
            gix::hash::Kind::Sha1,
            gix::objs::Kind::Blob,
            common.as_os_str().as_encoded_bytes(),
        )
        .map_err(|error| Error::StateDir {
            path: common.clone(),
            source: std::io::Error::other(error),
        })?;
        let home = cache.join(format!("{named}-{}", &key.to_hex().to_string()[..12]));
        let link_parent = home.join(GIT_LINK_DIR);
        make_dir(&link_parent)?;
        let link = link_parent.join("dir");
        if std::fs::read_link(&link).ok().as_deref() != Some(common.as_path()) {
            // Made (or made again, for a repository that moved) under a name of this process's
            // and renamed into place: runs of the same repository starting at once each see a
            // whole link, and the last rename wins with the same target.
            let failed = |source| Error::StateDir {
                path: link.clone(),
                source,
            };
            static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let temp = link_parent.join(format!("dir.{}.{n}", std::process::id()));
            std::os::unix::fs::symlink(&common, &temp).map_err(failed)?;
            std::fs::rename(&temp, &link).map_err(|error| {
                let _ = std::fs::remove_file(&temp);
                failed(error)
            })?;
        }
        Ok(home)
    }
}

impl Repo {
    /// The other worktree of this repository whose directory holds this one's (a Claude Code
    /// worktree under `.claude/worktrees/` of the main checkout), if any: the innermost.
    pub fn enclosing_worktree(&self) -> Result<Option<PathBuf>, Error> {
        let here = self.workdir()?;
        let here = std::fs::canonicalize(here).unwrap_or_else(|_| here.to_owned());
        let common = self.common_dir_real();
        let mut others: Vec<PathBuf> = Vec::new();
        // The main worktree, when the common directory is its `.git`.
        if common.file_name().is_some_and(|name| name == ".git")
            && let Some(main) = common.parent()
        {
            others.push(main.to_owned());
        }
        let what = || "the repository's worktrees".to_string();
        for proxy in self.git.worktrees().map_err(Error::read(what()))? {
            if let Ok(base) = proxy.base() {
                others.push(std::fs::canonicalize(&base).unwrap_or(base));
            }
        }
        Ok(others
            .into_iter()
            .filter(|other| *other != here && here.starts_with(other))
            .max_by_key(|other| other.components().count()))
    }
}

/// Create `dir` and its parents, private to the user.
fn make_dir(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| Error::StateDir {
            path: dir.to_owned(),
            source,
        })
}

impl TempWorktree {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The key (a commit, or its setup inputs' tree) of what the checks file's `setup` last
    /// prepared this worktree for.
    pub fn set_up_for(&self) -> Option<ObjectId> {
        self.set_up_for.get()
    }

    pub fn mark_set_up(&self, key: Option<ObjectId>) {
        self.set_up_for.set(key);
    }

    /// The last reading of this worktree's files from disk (`Repo::state_tree_from_disk`).
    pub fn last_read(&self) -> &std::cell::Cell<Option<IndexTrust>> {
        &self.read
    }

    /// The folder holding `dir`, the link to the common git directory this worktree's `.git`
    /// names.
    pub fn git_link(&self) -> &Path {
        &self.git_link
    }

    /// Make the worktree's `.git` file name its administrative directory through the link
    /// (`<git_link>/dir/worktrees/<name>`) rather than through the common directory's own
    /// path, which a run in a mount namespace may not see (the checkout is mounted over it).
    fn point_at_link(&self, common: &Path) -> Result<(), Error> {
        let file = self.path.join(".git");
        let failed = |source| Error::StateDir {
            path: file.clone(),
            source,
        };
        let text = std::fs::read_to_string(&file).map_err(failed)?;
        let admin = PathBuf::from(text.trim_end().trim_start_matches("gitdir: "));
        let admin = std::fs::canonicalize(&admin).unwrap_or(admin);
        let rest = admin.strip_prefix(common).map_err(|_| {
            failed(std::io::Error::other(format!(
                "git made it name {}, outside {}",
                admin.display(),
                common.display()
            )))
        })?;
        let linked = self.git_link.join("dir").join(rest);
        std::fs::write(&file, format!("gitdir: {}\n", linked.display())).map_err(failed)
    }

    /// Check `commit` out here instead, for the next run: tracked files as the commit holds
    /// them (only the paths that differ are written). Untracked files a run left are removed
    /// by [`TempWorktree::clean`], which the caller asks for when the state read afterwards is
    /// not the commit's tree; ignored files (build caches) are kept, so that a worktree reused
    /// along a range builds incrementally. They are no part of a state tree.
    ///
    /// In this process where it can be ([`Repo::checkout_in_place`]); then only what differs
    /// between the index and the commit is written, and a file a run changed in place is left
    /// as it is: the caller, whose reading shows it, asks [`TempWorktree::checkout_with_git`].
    pub fn switch(&self, repo: &Repo, commit: ObjectId) -> Result<(), Error> {
        let in_place = self
            .repo(repo)
            .is_ok_and(|here| here.checkout_in_place(commit).is_ok());
        self.in_place.set(in_place);
        if in_place {
            return Ok(());
        }
        self.checkout_with_git(commit)
    }

    /// This worktree as a repository of its own (`repo` is the one it belongs to), opened once
    /// a command: another handle on it with [`Repo::handle`].
    pub fn repo(&self, repo: &Repo) -> Result<&Repo, Error> {
        if let Some(opened) = self.opened.get() {
            return Ok(opened);
        }
        let opened = repo.open_linked_worktree(&self.path)?;
        Ok(self.opened.get_or_init(|| opened))
    }

    /// The tree of the commit last proven here; `tree` from now on.
    pub fn proving(&self, tree: ObjectId) -> Option<ObjectId> {
        self.proving.replace(Some(tree))
    }

    /// Whether the last [`TempWorktree::switch`] moved the worktree in this process.
    pub fn moved_in_place(&self) -> bool {
        self.in_place.get()
    }

    /// `git checkout --force`: every tracked file as `commit` holds it, whatever a run did to
    /// it.
    pub fn checkout_with_git(&self, commit: ObjectId) -> Result<(), Error> {
        self.in_place.set(false);
        run(
            self.git_here()
                .args(["checkout", "--detach", "--force", "--quiet"])
                .arg(commit.to_string()),
            "checkout",
        )
    }

    /// Remove the untracked files and directories that are not ignored.
    pub fn clean(&self) -> Result<(), Error> {
        run(self.git_here().args(["clean", "-ffdq"]), "clean")
    }

    fn git_here(&self) -> process::Request<'static> {
        LOCAL_ENV
            .iter()
            .fold(process::Request::new("git"), |git, name| {
                git.env_remove(name)
            })
            .env(NO_REPLACE_OBJECTS, "1")
            .current_dir(&self.path)
    }

    /// Let the worktree go: kept for the next command, its slot unlocked.
    pub fn remove(self) -> Result<(), Error> {
        Ok(())
    }

    /// Whether the slot holds a worktree this repository knows at this path, whose `.git`
    /// names it through our link: one an earlier command left.
    fn is_kept(&self, common: &Path) -> bool {
        let Ok(text) = std::fs::read_to_string(self.path.join(".git")) else {
            return false;
        };
        let admin = PathBuf::from(text.trim_end().trim_start_matches("gitdir: "));
        let linked = self.git_link.join("dir").join(WORKTREES_DIR);
        let Some(name) = admin
            .strip_prefix(&linked)
            .ok()
            .filter(|rest| rest.components().count() == 1)
        else {
            return false;
        };
        std::fs::read_to_string(common.join(WORKTREES_DIR).join(name).join("gitdir"))
            .is_ok_and(|gitdir| Path::new(gitdir.trim_end()) == self.path.join(".git"))
    }

    /// Move a kept worktree to `commit` and remove everything else from it, ignored files
    /// too: nothing an earlier command (or anyone since) left there reaches this one's runs.
    /// The move is made in place where it can be ([`TempWorktree::switch`]): a tracked file an
    /// earlier command changed and the move did not write is found by this command's first
    /// reading, which trusts nothing of the worktree, and written again by git then.
    fn reset(&self, repo: &Repo, commit: ObjectId) -> Result<(), Error> {
        self.switch(repo, commit)?;
        run(self.git_here().args(["clean", "-ffdxq"]), "clean")
    }

    /// Remove whatever the slot holds, and git's record of a worktree there.
    fn discard(&self) -> Result<(), Error> {
        let cmd = git(&self.git_dir)
            .args(["worktree", "remove", "--force", "--force"])
            .arg(&self.path);
        if self.path.join(".git").exists() && run(cmd, "worktree remove").is_ok() {
            return Ok(());
        }
        if self.path.exists() {
            std::fs::remove_dir_all(&self.path).map_err(|source| Error::WorktreeCleanup {
                path: self.path.clone(),
                source,
            })?;
        }
        run(
            git(&self.git_dir).args(["worktree", "prune"]),
            "worktree prune",
        )
    }
}

/// The lock held while a worktree of the repository whose folder is `home` is added, reset or
/// discarded, waited for: a file lock, so that it holds between the threads of one command (each
/// opens the file anew) and between commands alike.
fn adding_lock(home: &Path) -> Result<std::fs::File, Error> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let path = home.join(ADDING_LOCK);
    let failed = |source| Error::StateDir {
        path: path.clone(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(failed)?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|error| failed(error.into()))?;
    Ok(file)
}

/// Take the slot whose lock file is `path`, unless another command holds it.
fn lock_slot(path: &Path) -> Result<Option<std::fs::File>, Error> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let failed = |source| Error::StateDir {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(failed)?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(file)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(error) => Err(failed(error.into())),
    }
}
