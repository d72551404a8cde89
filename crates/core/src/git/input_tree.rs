//! Input trees: a tree pruned to some of its paths, as `git write-tree` would write it from an
//! index holding only those paths (SPEC.md section 2.1). A check's proof is keyed by the state
//! tree pruned to the check's inputs, so a change outside them leaves its key, and its proof,
//! as they were. Also the reads a check set needs of a tree: one entry, one blob.

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};

use super::state_tree::{Hasher, Item, MODE_TREE, Persist, build_tree};
use super::{Error, Repo, StateTree};

impl Repo {
    /// `state` pruned to `inputs` (repository-relative paths of files or directories; `""` is
    /// every path, and then the state tree itself is the input tree). Paths not in the state
    /// are left out. With `persist`, the pruned trees are written to the object database, so
    /// that stock git can show a note attached to the id.
    pub fn input_tree(
        &self,
        state: &StateTree,
        inputs: &[String],
        persist: bool,
    ) -> Result<ObjectId, Error> {
        let inputs = outermost(inputs);
        if inputs.iter().any(String::is_empty) {
            return Ok(state.id);
        }
        let mut items = Vec::new();
        let all = state.items();
        for input in &inputs {
            let path = input.as_bytes();
            // A directory of the state: its tree, as built for the state, whole.
            if let Some(id) = state.dir(path) {
                items.push(item_at(input, MODE_TREE, id));
                continue;
            }
            // A file, or a sparse-index directory ("dir/"), of the state.
            let find = |wanted: &[u8]| {
                all.binary_search_by(|item| item.path.as_slice().cmp(wanted))
                    .ok()
                    .map(|i| &all[i])
            };
            let exact = find(path)
                .or_else(|| find(&[path, b"/"].concat()).filter(|item| item.mode == MODE_TREE));
            if let Some(item) = exact {
                items.push(item.clone());
                continue;
            }
            // Inside a sparse-index directory, which holds its paths as one tree: found in
            // that tree.
            let mut parent = path;
            while let Some(slash) = parent.iter().rposition(|&b| b == b'/') {
                parent = &path[..=slash];
                let at = all.partition_point(|item| item.path.as_slice() < parent);
                if let Some(item) = all
                    .get(at)
                    .filter(|item| item.mode == MODE_TREE && item.path.as_slice() == parent)
                {
                    let rest = path[slash + 1..].to_str_lossy().into_owned();
                    if let Some((id, mode)) = self.entry_in(item.id, &rest)? {
                        items.push(item_at(input, mode, id));
                    }
                    break;
                }
                parent = &path[..slash];
            }
        }
        items.sort_by(|a, b| a.path.cmp(&b.path));
        self.build_items(&items, persist)
    }

    /// The committed `tree` pruned to `inputs`, as [`Repo::input_tree`] prunes a state; only
    /// hashed, never written (the trees it would write are the ones a proof of that state
    /// wrote).
    pub fn tree_input_tree(&self, tree: ObjectId, inputs: &[String]) -> Result<ObjectId, Error> {
        let inputs = outermost(inputs);
        if inputs.iter().any(String::is_empty) {
            return Ok(tree);
        }
        let mut items = Vec::new();
        for input in &inputs {
            if let Some((id, mode)) = self.entry_in(tree, input)? {
                items.push(item_at(input, mode, id));
            }
        }
        items.sort_by(|a, b| a.path.cmp(&b.path));
        self.build_items(&items, false)
    }

    /// The paths of `state` that none of `inputs` holds (`""` holds every path), sorted.
    /// Computed from the state's entries alone: nothing is read from disk.
    pub fn outside_paths(&self, state: &StateTree, inputs: &[String]) -> Vec<String> {
        let inputs = InputSet::new(inputs);
        if inputs.all {
            return Vec::new();
        }
        state
            .items()
            .iter()
            .filter(|item| !inputs.holds(&item.path))
            .map(|item| item.path.to_string())
            .collect()
    }

    /// The paths outside every one of `inputs` whose content or mode differs between `state`
    /// and the committed tree `since` (added, changed or deleted), sorted. A directory whose
    /// tree is the same in both, or that an input holds, is not looked into: the work grows
    /// with what changed, not with the size of the state.
    pub fn changed_outside(
        &self,
        state: &StateTree,
        inputs: &[String],
        since: ObjectId,
    ) -> Result<Vec<String>, Error> {
        let set = InputSet::new(inputs);
        let mut changed = Vec::new();
        if !set.all {
            self.diff_dir(state, &set, b"", Some(since), &mut changed)?;
        }
        changed.sort();
        Ok(changed)
    }

    /// [`Repo::changed_outside`] below the directory `dir` (`""`: the root), which was the
    /// committed tree `since` (`None`: not a directory then).
    fn diff_dir(
        &self,
        state: &StateTree,
        set: &InputSet,
        dir: &[u8],
        since: Option<ObjectId>,
        out: &mut Vec<String>,
    ) -> Result<(), Error> {
        let now_id = if dir.is_empty() {
            Some(state.id)
        } else {
            state.dir(dir)
        };
        if now_id.is_some() && now_id == since {
            return Ok(());
        }
        let prefix: Vec<u8> = if dir.is_empty() {
            Vec::new()
        } else {
            [dir, b"/"].concat()
        };
        let now = children(state.items(), &prefix);
        let mut before: Vec<(BString, u32, ObjectId)> = Vec::new();
        if let Some(tree) = since {
            let what = || format!("tree {tree}");
            let found = self.git.find_tree(tree).map_err(Error::read(what()))?;
            let decoded = found
                .decode()
                .map_err(|e| Error::read(what())(gix::Error::from_error(e)))?;
            before.extend(decoded.entries.iter().map(|entry| {
                (
                    BString::from(entry.filename),
                    u32::from(entry.mode.value()),
                    entry.oid.to_owned(),
                )
            }));
        }
        let mut names: Vec<&BString> = now.keys().chain(before.iter().map(|b| &b.0)).collect();
        names.sort();
        names.dedup();
        for name in names {
            let path: BString = [prefix.as_slice(), name.as_slice()].concat().into();
            if set.holds(&path) {
                continue;
            }
            let was = before
                .iter()
                .find(|(n, _, _)| n == name)
                .map(|(_, mode, id)| (*mode, *id));
            let is = now.get(name).copied();
            match (was, is) {
                // A directory then and now (a sparse-index one is compared whole, below).
                (Some((MODE_TREE, id)), Some(Child::Dir)) => {
                    self.diff_dir(state, set, &path, Some(id), out)?;
                }
                (_, Some(Child::Dir)) => {
                    self.diff_dir(state, set, &path, None, out)?;
                    if was.is_some() {
                        out.push(path.to_string());
                    }
                }
                (Some((MODE_TREE, _)), Some(Child::Entry(MODE_TREE, _))) => {
                    if was != is.and_then(Child::entry) {
                        out.push(path.to_string());
                    }
                }
                (Some((MODE_TREE, id)), is) => {
                    self.diff_dir(state, set, &path, Some(id), out)?;
                    if is.is_some() {
                        out.push(path.to_string());
                    }
                }
                (was, is) => {
                    if was != is.and_then(Child::entry) {
                        out.push(path.to_string());
                    }
                }
            }
        }
        Ok(())
    }

    /// The blob (or link) and mode at `path` in the committed `tree`, if it is one there.
    pub fn tree_entry(&self, tree: ObjectId, path: &str) -> Result<Option<(ObjectId, u32)>, Error> {
        Ok(self
            .entry_in(tree, path)?
            .filter(|(_, mode)| *mode != MODE_TREE && *mode != super::state_tree::MODE_GITLINK))
    }

    /// Whether the committed `tree` holds anything at `path` (a file, a link, a directory).
    pub fn tree_has(&self, tree: ObjectId, path: &str) -> Result<bool, Error> {
        Ok(self.entry_in(tree, path)?.is_some())
    }

    /// The bytes of blob `id`.
    pub fn read_blob(&self, id: ObjectId) -> Result<Vec<u8>, Error> {
        Ok(self
            .git
            .find_blob(id)
            .map_err(Error::read(format!("blob {id}")))?
            .data
            .clone())
    }

    /// The bytes of `path` as `state` records them, `None` when it is not a file or link of the
    /// state. A blob the state only hashed is read from disk, and must still hash to it: a
    /// clean filter or index flag could otherwise make the state name bytes that are not the
    /// ones a check reads (`what` says which, for the error).
    pub fn state_file(
        &self,
        state: &StateTree,
        path: &str,
        what: &'static str,
    ) -> Result<Option<Vec<u8>>, Error> {
        let Some((id, mode)) = state.entry(path) else {
            return Ok(None);
        };
        if let Ok(blob) = self.git.find_blob(id) {
            return Ok(Some(blob.data.clone()));
        }
        self.disk_as_recorded(path, id, mode, what).map(Some)
    }

    /// Check that `path`'s bytes on disk, which a shell will run, hash to the blob `state`
    /// records for it, whatever the object database holds: a clean filter or an end-of-line
    /// conversion can map other bytes to a blob that is there (the one committed), and a
    /// proof would then name a script that did not run. Nothing to check when the state has
    /// no file there.
    pub fn check_on_disk(
        &self,
        state: &StateTree,
        path: &str,
        what: &'static str,
    ) -> Result<(), Error> {
        match state.entry(path) {
            Some((id, mode)) => self.disk_as_recorded(path, id, mode, what).map(drop),
            None => Ok(()),
        }
    }

    /// `path`'s bytes on disk (a link's target), which must hash to the blob `id`.
    fn disk_as_recorded(
        &self,
        path: &str,
        id: ObjectId,
        mode: u32,
        what: &'static str,
    ) -> Result<Vec<u8>, Error> {
        let disk = self.workdir()?.join(path);
        let data = if mode == 0o120000 {
            std::fs::read_link(&disk).map(|target| {
                use std::os::unix::ffi::OsStrExt;
                target.as_os_str().as_bytes().to_vec()
            })
        } else {
            std::fs::read(&disk)
        }
        .map_err(|source| Error::Unreadable {
            path: disk.clone(),
            source,
        })?;
        let hashed = gix::objs::compute_hash(self.git.object_hash(), gix::objs::Kind::Blob, &data)
            .map_err(|e| Error::read(format!("the blob of {path}"))(gix::Error::from_error(e)))?;
        if hashed != id {
            return Err(Error::NotAsRecorded {
                path: path.to_string(),
                what,
            });
        }
        Ok(data)
    }

    /// The entry at `path` below the committed tree `tree`, any kind.
    fn entry_in(&self, tree: ObjectId, path: &str) -> Result<Option<(ObjectId, u32)>, Error> {
        let what = || format!("{path} in tree {tree}");
        let tree = self.git.find_tree(tree).map_err(Error::read(what()))?;
        let entry = tree
            .lookup_entry_by_path(path)
            .map_err(|e| Error::read(what())(gix::Error::from_error(e)))?;
        Ok(entry.map(|entry| (entry.object_id(), u32::from(entry.mode().value()))))
    }

    pub(super) fn build_items(&self, items: &[Item], persist: bool) -> Result<ObjectId, Error> {
        let mut hasher = Hasher {
            repo: &self.git,
            persist: if persist { Persist::All } else { Persist::No },
            buf: Vec::new(),
            dirs: None,
        };
        build_tree(items, 0, &mut hasher)
    }
}

/// An item for `path` in a tree being built: a directory keeps a trailing slash, as a sparse
/// index writes it, so that `build_tree` takes its tree whole.
fn item_at(path: &str, mode: u32, id: ObjectId) -> Item {
    let mut path = BString::from(path);
    if mode == MODE_TREE {
        path.push(b'/');
    }
    Item {
        path,
        mode,
        id,
        from_index: false,
    }
}

/// An entry directly in a directory of a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Child {
    /// A file, link or submodule, or a sparse-index directory: its mode and object.
    Entry(u32, ObjectId),
    /// A directory, its paths listed below it.
    Dir,
}

impl Child {
    fn entry(self) -> Option<(u32, ObjectId)> {
        match self {
            Child::Entry(mode, id) => Some((mode, id)),
            Child::Dir => None,
        }
    }
}

/// The entries directly below `prefix` (`""` or `dir/`) among the sorted `items`, by name: a
/// directory's paths are skipped over by a binary search, so listing a directory costs its
/// own entries, not every path below it.
fn children(items: &[Item], prefix: &[u8]) -> std::collections::BTreeMap<BString, Child> {
    let mut found = std::collections::BTreeMap::new();
    let mut at = items.partition_point(|item| item.path.as_slice() < prefix);
    while let Some(item) = items.get(at) {
        let Some(rest) = item.path.strip_prefix(prefix) else {
            break;
        };
        match rest.find_byte(b'/') {
            Some(slash) if slash + 1 == rest.len() => {
                found.insert(rest[..slash].into(), Child::Entry(item.mode, item.id));
                at += 1;
            }
            Some(slash) => {
                let below = [prefix, &rest[..=slash]].concat();
                found.insert(rest[..slash].into(), Child::Dir);
                at += items[at..].partition_point(|item| item.path.starts_with(&below));
            }
            None => {
                found.insert(rest.into(), Child::Entry(item.mode, item.id));
                at += 1;
            }
        }
    }
    found
}

/// Inputs as a set, to ask of each path of a state whether one of them holds it.
struct InputSet {
    all: bool,
    paths: std::collections::HashSet<Vec<u8>>,
}

impl InputSet {
    fn new(inputs: &[String]) -> InputSet {
        let inputs = outermost(inputs);
        InputSet {
            all: inputs.iter().any(String::is_empty),
            paths: inputs.into_iter().map(String::into_bytes).collect(),
        }
    }

    /// Whether `path` (a sparse-index directory keeps its trailing slash) is an input or lies
    /// below one: the path and each of its parent directories are looked up.
    fn holds(&self, path: &[u8]) -> bool {
        if self.all {
            return true;
        }
        let path = path.strip_suffix(b"/").unwrap_or(path);
        if self.paths.contains(path) {
            return true;
        }
        path.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .any(|(at, _)| self.paths.contains(&path[..at]))
    }
}

impl StateTree {
    /// Whether the state holds `path`: a file, link or submodule there, or a directory with
    /// one below it (a path inside a sparse-index directory counts as held: that directory is
    /// one entry, not read here).
    pub fn has_path(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/').as_bytes();
        let all = self.items();
        let below = [path, b"/"].concat();
        let at = all.partition_point(|item| item.path.as_slice() < path);
        if all.get(at).is_some_and(|item| item.path == path) {
            return true;
        }
        let at = all.partition_point(|item| item.path.as_slice() < below.as_slice());
        if all
            .get(at)
            .is_some_and(|item| item.path.starts_with(&below))
        {
            return true;
        }
        path.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .any(|(slash, _)| {
                let dir = &path[..=slash];
                all.binary_search_by(|item| item.path.as_slice().cmp(dir))
                    .is_ok_and(|i| all[i].mode == MODE_TREE)
            })
    }
}

/// Whether `path` is `input` or below it.
fn within(path: &[u8], input: &[u8]) -> bool {
    path.strip_prefix(input)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
}

/// The inputs without repeats and without any path inside another.
fn outermost(inputs: &[String]) -> Vec<String> {
    let mut kept: Vec<String> = inputs
        .iter()
        .map(|input| input.trim_matches('/').to_string())
        .collect();
    kept.sort();
    kept.dedup();
    let all = kept.clone();
    kept.retain(|path| {
        !all.iter().any(|other| {
            other != path && (other.is_empty() || within(path.as_bytes(), other.as_bytes()))
        })
    });
    kept
}

#[cfg(test)]
mod tests {
    use super::super::test_repo::{git_repo, run};
    use super::*;

    fn inputs(paths: &[&str]) -> Vec<String> {
        paths.iter().map(std::string::ToString::to_string).collect()
    }

    /// The input tree is the tree stock git writes from an index holding only those paths.
    fn stock(dir: &std::path::Path, tree: &str, paths: &[&str]) -> String {
        let index = dir.join(".git/pruned-index");
        let env = [("GIT_INDEX_FILE", index.to_str().unwrap())];
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(dir)
                .envs(env)
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        let _ = std::fs::remove_file(&index);
        git(&["read-tree", "--empty"]);
        let listed = git(&["ls-tree", "-r", "--full-tree", tree]);
        let mut info = String::new();
        for line in listed.lines() {
            let (meta, path) = line.split_once('\t').unwrap();
            if paths
                .iter()
                .any(|input| within(path.as_bytes(), input.as_bytes()))
            {
                let mut meta = meta.split(' ');
                let (mode, _, id) = (meta.next().unwrap(), meta.next(), meta.next().unwrap());
                info.push_str(&format!("{mode} {id}\t{path}\n"));
            }
        }
        let mut child = std::process::Command::new("git")
            .args(["update-index", "--index-info"])
            .current_dir(dir)
            .envs(env)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(info.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
        git(&["write-tree"]).trim().to_string()
    }

    fn layout(dir: &std::path::Path) {
        for (path, body) in [
            ("packages/api/src/lib.rs", "api\n"),
            ("packages/api/verify.sh", "#!/bin/sh\n"),
            ("packages/api.txt", "sorted before the directory\n"),
            ("packages/shared/x", "shared\n"),
            ("docs/index.md", "docs\n"),
            ("Cargo.lock", "lock\n"),
            ("prove-it.toml", "[checks]\n"),
        ] {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
    }

    #[test]
    fn an_input_tree_is_the_tree_stock_git_writes_for_those_paths() {
        let (dir, repo) = git_repo();
        layout(dir.path());
        let state = repo.state_tree(true).unwrap();
        let tree = state.id.to_string();
        for paths in [
            &[
                "packages/api",
                "packages/shared",
                "Cargo.lock",
                "prove-it.toml",
            ][..],
            &["docs", "prove-it.toml"],
            &["packages/api.txt"],
            &["packages"],
            &["missing", "docs/index.md"],
            &["nothing-here"],
        ] {
            let ours = repo.input_tree(&state, &inputs(paths), true).unwrap();
            assert_eq!(
                ours.to_string(),
                stock(dir.path(), &tree, paths),
                "{paths:?}"
            );
            assert_eq!(
                repo.tree_input_tree(state.id, &inputs(paths)).unwrap(),
                ours,
                "{paths:?}: committed and worktree pruning agree"
            );
            // Persisted: stock git reads it.
            run(dir.path(), &["cat-file", "-e", &ours.to_string()]);
        }
        assert_eq!(
            repo.input_tree(&state, &inputs(&[""]), false).unwrap(),
            state.id
        );
    }

    /// A sparse index holds a directory outside the cone as one entry: an input inside it, or
    /// equal to it, is found in that tree.
    #[test]
    fn inputs_inside_a_sparse_index_directory_are_found_in_its_tree() {
        let (dir, repo) = git_repo();
        layout(dir.path());
        run(dir.path(), &["add", "-A"]);
        run(
            dir.path(),
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "layout",
            ],
        );
        let full = repo.state_tree(true).unwrap();
        run(
            dir.path(),
            &["sparse-checkout", "init", "--cone", "--sparse-index"],
        );
        run(dir.path(), &["sparse-checkout", "set", "docs"]);
        let listed = run(dir.path(), &["ls-files", "--sparse"]);
        assert!(listed.lines().any(|l| l == "packages/"), "{listed}");
        let repo = crate::git::Repo::discover_at(dir.path()).unwrap();
        let sparse = repo.state_tree(true).unwrap();
        assert_eq!(sparse.id, full.id);
        for paths in [
            &["packages/api", "prove-it.toml"][..],
            &["packages"],
            &["packages/shared/x", "docs"],
        ] {
            assert_eq!(
                repo.input_tree(&sparse, &inputs(paths), false).unwrap(),
                repo.input_tree(&full, &inputs(paths), false).unwrap(),
                "{paths:?}"
            );
        }
    }

    #[test]
    fn a_change_outside_the_inputs_keeps_the_input_tree() {
        let (dir, repo) = git_repo();
        layout(dir.path());
        let api = inputs(&["packages/api", "Cargo.lock"]);
        let before = repo.state_tree(false).unwrap();
        std::fs::write(dir.path().join("docs/index.md"), "changed\n").unwrap();
        let after = repo.state_tree(false).unwrap();
        assert_ne!(before.id, after.id);
        assert_eq!(
            repo.input_tree(&before, &api, false).unwrap(),
            repo.input_tree(&after, &api, false).unwrap()
        );
        std::fs::write(dir.path().join("packages/api/src/lib.rs"), "changed\n").unwrap();
        let again = repo.state_tree(false).unwrap();
        assert_ne!(
            repo.input_tree(&after, &api, false).unwrap(),
            repo.input_tree(&again, &api, false).unwrap()
        );
    }

    #[test]
    fn paths_outside_the_inputs_are_listed_and_compared_with_a_commit() {
        let (dir, repo) = git_repo();
        layout(dir.path());
        let state = repo.state_tree(true).unwrap();
        assert!(state.has_path("packages/api"));
        assert!(state.has_path("packages/api/src/lib.rs"));
        assert!(state.has_path("packages/"));
        assert!(!state.has_path("packages/ap"));
        assert!(!state.has_path("packages/api/src/lib"));
        let covered = inputs(&["packages/api", "docs", "prove-it.toml"]);
        assert_eq!(
            repo.outside_paths(&state, &covered),
            ["Cargo.lock", "packages/api.txt", "packages/shared/x"]
        );
        // Nothing changed since the state's own tree.
        assert_eq!(
            repo.changed_outside(&state, &covered, state.id).unwrap(),
            Vec::<String>::new()
        );
        std::fs::write(dir.path().join("Cargo.lock"), "changed\n").unwrap();
        std::fs::write(dir.path().join("docs/index.md"), "covered\n").unwrap();
        std::fs::remove_file(dir.path().join("packages/shared/x")).unwrap();
        std::fs::write(dir.path().join("new.txt"), "new\n").unwrap();
        std::fs::create_dir_all(dir.path().join("gen/deep")).unwrap();
        std::fs::write(dir.path().join("gen/deep/out"), "made\n").unwrap();
        let after = repo.state_tree(false).unwrap();
        assert_eq!(
            repo.changed_outside(&after, &covered, state.id).unwrap(),
            ["Cargo.lock", "gen/deep/out", "new.txt", "packages/shared/x"]
        );
        // A file that became a directory, and a directory that became a file.
        std::fs::remove_file(dir.path().join("new.txt")).unwrap();
        std::fs::create_dir(dir.path().join("new.txt")).unwrap();
        std::fs::write(dir.path().join("new.txt/inside"), "x\n").unwrap();
        let nested = repo.state_tree(true).unwrap();
        std::fs::remove_dir_all(dir.path().join("new.txt")).unwrap();
        std::fs::write(dir.path().join("new.txt"), "file again\n").unwrap();
        let flat = repo.state_tree(false).unwrap();
        assert_eq!(
            repo.changed_outside(&flat, &covered, nested.id).unwrap(),
            ["new.txt", "new.txt/inside"]
        );
        // Every path is an input: nothing is outside.
        assert!(repo.outside_paths(&after, &inputs(&[""])).is_empty());
        assert!(
            repo.changed_outside(&after, &inputs(&[""]), state.id)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_state_file_hashed_only_is_read_from_disk_and_checked() {
        let (dir, repo) = git_repo();
        layout(dir.path());
        let state = repo.state_tree(false).unwrap();
        assert_eq!(
            repo.state_file(&state, "prove-it.toml", "checks file")
                .unwrap(),
            Some(b"[checks]\n".to_vec())
        );
        assert_eq!(
            repo.state_file(&state, "docs", "checks file").unwrap(),
            None
        );
        std::fs::write(dir.path().join("prove-it.toml"), "# changed\n").unwrap();
        let error = repo
            .state_file(&state, "prove-it.toml", "checks file")
            .unwrap_err();
        assert!(matches!(error, Error::NotAsRecorded { .. }), "{error:?}");
    }
}
