//! Moving a commit's worktree to another commit in this process, as `git checkout --force`
//! would: the files whose blob or mode differ between the worktree's index and the commit are
//! written, those the commit lacks removed (and the folders they leave empty), the index
//! written anew with the stat data of what is on disk, and HEAD detached at the commit.
//!
//! Only where nothing of git's changes what a checkout writes or does: attributes (and the
//! filters, `ident` and end-of-line conversions they name), `core.autocrlf`, submodules, a
//! sparse or split index, a `post-checkout` hook. Where any is in play, or where something on
//! disk is in the way (a folder where a file goes, a link among the folders above a path), it
//! declines, and the caller has `git checkout` do it. Either way the caller then reads the state
//! from disk and compares it with the commit's tree: this module spares a process, it vouches
//! for nothing.

use std::collections::HashSet;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::{BStr, ByteSlice as _};
use gix::index::entry::{Flags, Mode, Stat};

use super::Repo;

/// Why the move was left to `git checkout`, or what went wrong half-way (then `git checkout
/// --force` puts everything right).
#[derive(Debug)]
pub struct Declined(
    /// Read by the tests; the caller only falls back.
    pub String,
);

impl<T: std::fmt::Display> From<T> for Declined {
    fn from(error: T) -> Self {
        Declined(error.to_string())
    }
}

impl Repo {
    /// Move this worktree (a commit worktree's own `Repo`) to `commit`, or say why not.
    pub fn checkout_in_place(&self, commit: ObjectId) -> Result<(), Declined> {
        self.in_place_allowed()?;
        let git = &self.git;
        let workdir = self.workdir().map_err(Declined::from)?.to_owned();
        let old = git.open_index()?;
        if old.is_sparse() || old.link().is_some() {
            return Err(Declined("a sparse or split index".into()));
        }
        refuse_entries(&old)?;
        let tree = git.find_commit(commit)?.tree_id()?.detach();
        let mut file = git.index_from_tree(&tree)?;
        refuse_entries(&file)?;

        let mut disk = Disk {
            workdir: &workdir,
            dirs: HashSet::new(),
        };
        // Both indexes are sorted by path, neither has stages (`refuse_entries`): each is
        // walked once beside the other, rather than searched for every path of the other.
        let was: Vec<(&BStr, &gix::index::Entry)> =
            old.entries().iter().map(|e| (e.path(&old), e)).collect();
        // Removals first: a file that becomes a folder (or the reverse) needs its old self gone.
        let mut emptied = Vec::new();
        {
            let mut new = file.entries().iter().map(|e| e.path(&file)).peekable();
            for &(path, _) in &was {
                while new.next_if(|next| *next < path).is_some() {}
                if new.peek() != Some(&path) {
                    disk.remove(path)?;
                    emptied.push(path.to_owned());
                }
            }
        }
        for path in emptied.iter().rev() {
            disk.remove_empty_parents(rel_path(path.as_ref()));
        }
        let mut was = was.into_iter().peekable();
        let (entries, backing) = file.entries_mut_and_pathbacking();
        for entry in entries.iter_mut() {
            let path = entry.path_in(backing);
            while was.next_if(|(old_path, _)| *old_path < path).is_some() {}
            let unchanged = was
                .peek()
                .filter(|(old_path, was)| {
                    *old_path == path && was.id == entry.id && was.mode == entry.mode
                })
                .map(|(_, was)| *was);
            entry.stat = match unchanged {
                Some(was) => was.stat,
                None => {
                    let blob = git.find_blob(entry.id)?;
                    disk.write(path, entry.mode, &blob.data)?
                }
            };
        }
        detach_head(git, commit)?;
        file.write(gix::index::write::Options::default())?;
        Ok(())
    }

    /// Whether anything of git's would make `git checkout` write other bytes than the blobs
    /// (or do more than write them).
    fn in_place_allowed(&self) -> Result<(), Declined> {
        let config = self.git.config_snapshot();
        // A key written bare (`autocrlf` alone) has no string and reads as true.
        let present = |key: &str| config.string(key).is_some() || config.boolean(key).is_some();
        let on = |key: &str| present(key) && config.boolean(key) != Some(false);
        for key in [
            "core.autocrlf",
            "core.sparseCheckout",
            "core.splitIndex",
            "core.ignoreCase",
        ] {
            if on(key) {
                return Err(Declined(format!("{key} is set")));
            }
        }
        for key in ["core.symlinks", "core.fileMode"] {
            if present(key) && config.boolean(key) != Some(true) {
                return Err(Declined(format!("{key} is false")));
            }
        }
        for key in ["core.attributesFile", "attr.tree"] {
            if present(key) {
                return Err(Declined(format!("{key} is set")));
            }
        }
        if let Some(file) = self.attribute_files().into_iter().find(|f| f.exists()) {
            return Err(Declined(format!("attributes in {}", file.display())));
        }
        let hook = self
            .hooks_dir()
            .map_err(Declined::from)?
            .join("post-checkout");
        if hook.exists() {
            return Err(Declined("a post-checkout hook".into()));
        }
        Ok(())
    }
}

/// An index (or a commit's entries) whose checkout is left to git: submodules, attribute
/// files, entries in conflict or flagged (skip-worktree, intent-to-add).
fn refuse_entries(state: &gix::index::State) -> Result<(), Declined> {
    for entry in state.entries() {
        let path = entry.path(state);
        if entry.mode == Mode::COMMIT {
            return Err(Declined(format!("the submodule {path}")));
        }
        if super::names::is_attributes_file(path) {
            return Err(Declined(format!("attributes in {path}")));
        }
        if entry.stage_raw() != 0
            || entry
                .flags
                .intersects(Flags::SKIP_WORKTREE | Flags::INTENT_TO_ADD)
        {
            return Err(Declined(format!("the index entry {path}")));
        }
    }
    Ok(())
}

/// A path of the index (bytes, as git stores them) as a path of this platform.
fn rel_path(path: &BStr) -> &Path {
    use std::os::unix::ffi::OsStrExt as _;
    Path::new(std::ffi::OsStr::from_bytes(path))
}

/// HEAD detached at `commit`, with its reflog entry, as `git checkout --detach` leaves it.
fn detach_head(git: &gix::Repository, commit: ObjectId) -> Result<(), Declined> {
    use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
    git.edit_reference(RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: format!("checkout: moving to {commit}").into(),
            },
            expected: PreviousValue::Any,
            new: gix::refs::Target::Object(commit),
        },
        name: "HEAD".try_into()?,
        deref: false,
    })?;
    Ok(())
}

/// The worktree's files, written and removed only below folders that are folders (never a
/// link among them, which would take a write outside the worktree).
struct Disk<'a> {
    workdir: &'a Path,
    /// Folders (relative) seen to be real folders, or made.
    dirs: HashSet<PathBuf>,
}

impl Disk<'_> {
    /// The path on disk of `path`, after making sure each folder above it is a real folder
    /// (made when `make` and missing).
    fn under_folders(&mut self, path: &BStr, make: bool) -> Result<PathBuf, Declined> {
        let rel = rel_path(path).to_owned();
        let mut dir = PathBuf::new();
        if let Some(parent) = rel.parent() {
            for part in parent.components() {
                dir.push(part);
                if self.dirs.contains(&dir) {
                    continue;
                }
                let full = self.workdir.join(&dir);
                match std::fs::symlink_metadata(&full) {
                    Ok(meta) if meta.is_dir() => {}
                    Ok(_) => return Err(Declined(format!("{} is no folder", dir.display()))),
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound && make => {
                        std::fs::create_dir(&full)?;
                    }
                    Err(error) => return Err(error.into()),
                }
                self.dirs.insert(dir.clone());
            }
        }
        Ok(self.workdir.join(rel))
    }

    /// Remove the file or link at `path`, if there is one.
    fn remove(&mut self, path: &BStr) -> Result<(), Declined> {
        let full = match self.under_folders(path, false) {
            Ok(full) => full,
            // A folder above it is gone: so is the file.
            Err(_) if !self.workdir.join(rel_path(path)).exists() => return Ok(()),
            Err(declined) => return Err(declined),
        };
        match std::fs::symlink_metadata(&full) {
            Ok(meta) if meta.is_dir() => Err(Declined(format!("{path} is a folder"))),
            Ok(_) => Ok(std::fs::remove_file(&full)?),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// Remove the folders above `path` that are left empty, deepest first.
    fn remove_empty_parents(&mut self, path: &Path) {
        let mut dir = path.parent();
        while let Some(rel) = dir.filter(|rel| !rel.as_os_str().is_empty()) {
            if std::fs::remove_dir(self.workdir.join(rel)).is_err() {
                break;
            }
            self.dirs.remove(rel);
            dir = rel.parent();
        }
    }

    /// Write `data` at `path` as a file of `mode` (or a link to `data`), in place of whatever
    /// file or link is there: its stat data, for the index.
    fn write(&mut self, path: &BStr, mode: Mode, data: &[u8]) -> Result<Stat, Declined> {
        let full = self.under_folders(path, true)?;
        match std::fs::symlink_metadata(&full) {
            Ok(meta) if meta.is_dir() => return Err(Declined(format!("{path} is a folder"))),
            Ok(_) => std::fs::remove_file(&full)?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(error.into()),
        }
        if mode == Mode::SYMLINK {
            let target = rel_path(data.as_bstr());
            std::os::unix::fs::symlink(target, &full)?;
        } else {
            let executable = mode == Mode::FILE_EXECUTABLE;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(if executable { 0o777 } else { 0o666 })
                .open(&full)?;
            file.write_all(data)?;
        }
        let meta = gix::index::fs::Metadata::from_path_no_follow(&full)?;
        Ok(Stat::from_fs(&meta)?)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_repo::{commit_all, git_repo, run};

    /// A repository of two commits (the second changes, adds, removes and links) with a
    /// linked worktree at the first, and that worktree's own `Repo`.
    fn two_commits(extra: &[(&str, &str)]) -> (tempfile::TempDir, String, super::Repo) {
        let (dir, repo) = git_repo();
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "a 1\n").unwrap();
        std::fs::create_dir_all(root.join("gone")).unwrap();
        std::fs::write(root.join("gone/b.txt"), "b\n").unwrap();
        for (path, content) in extra {
            std::fs::write(root.join(path), content).unwrap();
        }
        commit_all(root, "first");
        std::fs::write(root.join("a.txt"), "a 2\n").unwrap();
        std::fs::remove_dir_all(root.join("gone")).unwrap();
        std::fs::create_dir_all(root.join("new/deep")).unwrap();
        std::fs::write(root.join("new/deep/c.txt"), "c\n").unwrap();
        std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
        commit_all(root, "second");
        let second = run(root, &["rev-parse", "HEAD"]).trim().to_string();
        let worktree = root.join("wt");
        run(root, &["worktree", "add", "-q", "--detach", "wt", "HEAD~"]);
        let here = repo.open_linked_worktree(&worktree).unwrap();
        (dir, second, here)
    }

    // What git itself would check out, with an index git finds clean and HEAD at the commit.
    #[test]
    fn a_move_in_place_leaves_what_git_checks_out() {
        let (dir, second, here) = two_commits(&[]);
        let commit = gix::ObjectId::from_hex(second.as_bytes()).unwrap();
        here.checkout_in_place(commit).unwrap();
        let wt = dir.path().join("wt");
        assert_eq!(run(&wt, &["rev-parse", "HEAD"]).trim(), second);
        assert_eq!(run(&wt, &["status", "--porcelain", "--ignored"]), "");
        assert!(!wt.join("gone").exists(), "the emptied folder is removed");
        assert_eq!(std::fs::read_to_string(wt.join("link")).unwrap(), "a 2\n");
        assert_eq!(
            run(&wt, &["diff", "--stat", &second]),
            "",
            "the files are the commit's"
        );
    }

    // A file that becomes a folder of its own name among neighbours that sort around it
    // (`x.txt`, `x0`), and a folder that becomes a file: the two indexes are walked side by
    // side, and the worktree ends as git leaves it.
    #[test]
    fn a_file_that_becomes_a_folder_among_its_neighbours_moves_as_git_moves_it() {
        let (dir, repo) = git_repo();
        let root = dir.path();
        for (path, content) in [
            ("x", "x\n"),
            ("x.txt", "t\n"),
            ("x0", "0\n"),
            ("y/in", "in\n"),
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), content).unwrap();
        }
        commit_all(root, "first");
        std::fs::remove_file(root.join("x")).unwrap();
        std::fs::create_dir(root.join("x")).unwrap();
        std::fs::write(root.join("x/inside"), "inside\n").unwrap();
        std::fs::remove_dir_all(root.join("y")).unwrap();
        std::fs::write(root.join("y"), "y\n").unwrap();
        std::fs::write(root.join("x0"), "0 again\n").unwrap();
        commit_all(root, "second");
        let second = run(root, &["rev-parse", "HEAD"]).trim().to_string();
        run(root, &["worktree", "add", "-q", "--detach", "wt", "HEAD~"]);
        let here = repo.open_linked_worktree(&root.join("wt")).unwrap();
        here.checkout_in_place(gix::ObjectId::from_hex(second.as_bytes()).unwrap())
            .unwrap();
        let wt = root.join("wt");
        assert_eq!(run(&wt, &["status", "--porcelain", "--ignored"]), "");
        assert_eq!(run(&wt, &["diff", "--stat", &second]), "");
        assert_eq!(
            std::fs::read_to_string(wt.join("x/inside")).unwrap(),
            "inside\n"
        );
        assert_eq!(std::fs::read_to_string(wt.join("y")).unwrap(), "y\n");
    }

    // A file of the worktree hard-linked to one outside it (by anyone, between two runs) is
    // replaced, never written through: the outside file keeps its bytes.
    #[test]
    fn a_hard_link_out_of_the_worktree_is_never_written_through() {
        let (dir, second, here) = two_commits(&[]);
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "outside\n").unwrap();
        let inside = dir.path().join("wt/a.txt");
        std::fs::remove_file(&inside).unwrap();
        std::fs::hard_link(&outside, &inside).unwrap();
        let commit = gix::ObjectId::from_hex(second.as_bytes()).unwrap();
        // The index says a.txt is the first commit's blob, so the move rewrites it.
        here.checkout_in_place(commit).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n");
        assert_eq!(std::fs::read_to_string(&inside).unwrap(), "a 2\n");
    }

    // Attributes can name filters and conversions that change what a checkout writes: git
    // does it.
    #[test]
    fn attributes_leave_the_move_to_git() {
        let (_dir, second, here) = two_commits(&[(".gitattributes", "*.txt text eol=crlf\n")]);
        let commit = gix::ObjectId::from_hex(second.as_bytes()).unwrap();
        let declined = here.checkout_in_place(commit).unwrap_err();
        assert!(declined.0.contains(".gitattributes"), "{declined:?}");
    }

    // End-of-line conversion without attributes (`core.autocrlf`), written bare or with any
    // value but false: git does it.
    #[test]
    fn autocrlf_leaves_the_move_to_git() {
        for value in ["input", "true", "bare"] {
            let (dir, second, _) = two_commits(&[]);
            if value == "bare" {
                let config = dir.path().join(".git/config");
                let text = std::fs::read_to_string(&config).unwrap();
                std::fs::write(&config, format!("{text}[core]\n\tautocrlf\n")).unwrap();
            } else {
                run(dir.path(), &["config", "core.autocrlf", value]);
            }
            // Opened again: a repository reads its configuration when it is opened.
            let here = super::Repo::discover_at(dir.path())
                .unwrap()
                .open_linked_worktree(&dir.path().join("wt"))
                .unwrap();
            let commit = gix::ObjectId::from_hex(second.as_bytes()).unwrap();
            let declined = here.checkout_in_place(commit).unwrap_err();
            assert!(declined.0.contains("core.autocrlf"), "{declined:?}");
        }
    }

    // A post-checkout hook would run after `git checkout`: git does it.
    #[test]
    fn a_post_checkout_hook_leaves_the_move_to_git() {
        let (dir, second, here) = two_commits(&[]);
        let hooks = dir.path().join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::write(hooks.join("post-checkout"), "#!/bin/sh\n").unwrap();
        let commit = gix::ObjectId::from_hex(second.as_bytes()).unwrap();
        let declined = here.checkout_in_place(commit).unwrap_err();
        assert!(declined.0.contains("post-checkout"), "{declined:?}");
    }
}
