//! The tree of a state's or a commit's protected paths (SPEC.md section 2.2), as `git
//! write-tree` would write it from an index holding only those files, and the files of a
//! committed tree. Which paths are protected is the caller's to say.

use gix::ObjectId;

use super::state_tree::{Item, MODE_GITLINK, MODE_TREE};

const MODE_LINK: u32 = 0o120000;
use super::{Error, Repo, StateTree};

/// A file of a tree: its path, blob and mode.
pub type File = (String, ObjectId, u32);

impl Repo {
    /// `state` pruned to the files `keep` holds, written to the object database with the
    /// blobs a state computed without persisting left out of it (read from disk as they are
    /// now, which is what the state hashed), so that the id names a real, readable tree.
    pub fn protected_tree(
        &self,
        state: &StateTree,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<ObjectId, Error> {
        let items: Vec<Item> = state
            .items()
            .iter()
            .filter(|item| item.mode != MODE_TREE && item.mode != MODE_GITLINK)
            .filter(|item| keep(&item.path.to_string()))
            .cloned()
            .collect();
        let root = self.workdir()?.to_owned();
        for item in &items {
            if self.git.has_object(item.id) {
                continue;
            }
            let path = root.join(item.path.to_string());
            let data = if item.mode == MODE_LINK {
                std::fs::read_link(&path)
                    .map(|target| target.to_string_lossy().into_owned().into_bytes())
            } else {
                std::fs::read(&path)
            };
            // A file gone since the state was computed, or one a clean filter rewrites, stays
            // unreadable: its later change is shown, not read.
            if let Ok(data) = data {
                self.write_blob(data)?;
            }
        }
        self.build_items(&items, true)
    }

    /// The files of `state` that `keep` holds, sorted by path.
    pub fn state_files(&self, state: &StateTree, keep: &dyn Fn(&str) -> bool) -> Vec<File> {
        state
            .items()
            .iter()
            .filter(|item| item.mode != MODE_TREE && item.mode != MODE_GITLINK)
            .map(|item| (item.path.to_string(), item.id, item.mode))
            .filter(|(path, _, _)| keep(path))
            .collect()
    }

    /// The files (blobs and links) of the committed `tree` that `keep` holds, sorted by path.
    pub fn tree_files(
        &self,
        tree: ObjectId,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<File>, Error> {
        let mut files = Vec::new();
        self.walk_files(tree, String::new(), keep, &mut files)?;
        files.sort();
        Ok(files)
    }

    fn walk_files(
        &self,
        tree: ObjectId,
        prefix: String,
        keep: &dyn Fn(&str) -> bool,
        out: &mut Vec<File>,
    ) -> Result<(), Error> {
        let what = || format!("tree {tree}");
        let found = self.git.find_tree(tree).map_err(Error::read(what()))?;
        let decoded = found
            .decode()
            .map_err(|e| Error::read(what())(gix::Error::from_error(e)))?;
        for entry in &decoded.entries {
            let path = format!("{prefix}{}", entry.filename);
            let mode = u32::from(entry.mode.value());
            let id = entry.oid.to_owned();
            if entry.mode.is_tree() {
                self.walk_files(id, format!("{path}/"), keep, out)?;
            } else if !entry.mode.is_commit() && keep(&path) {
                out.push((path, id, mode));
            }
        }
        Ok(())
    }

    /// The tree of `commit`'s first parent; `None` for a root commit.
    pub fn first_parent_tree(&self, commit: ObjectId) -> Result<Option<ObjectId>, Error> {
        let what = || format!("commit {commit}");
        let found = self.git.find_commit(commit).map_err(Error::read(what()))?;
        let Some(parent) = found.parent_ids().next() else {
            return Ok(None);
        };
        let parent = parent.detach();
        let what = || format!("commit {parent}");
        let tree = self
            .git
            .find_commit(parent)
            .map_err(Error::read(what()))?
            .tree_id()
            .map_err(|e| Error::read(what())(gix::Error::from_error(e)))?;
        Ok(Some(tree.detach()))
    }
}
