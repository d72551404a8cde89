//! The state tree: the tree `git add -A` into a copy of the index followed by `git write-tree`
//! would give, computed in-process without touching the user's index or `index.lock`.
//!
//! Tracked entries whose stat data and mode still match the index keep their index blob, as far
//! as the caller's `IndexTrust` allows (stat data is anyone's to write, so a stop and a run's
//! record trust it less than a lookup); the others are hashed from disk through the same clean
//! filters git applies. Untracked files that
//! are not ignored come from a directory walk. Trees are built in memory and only written to the
//! object database when the state is to be recorded.
//!
//! Where git trusts what it does not look at, the state tree looks (SPEC.md section 2): skip-worktree and assume-unchanged files present on disk are read from disk, and stat
//! data is never trusted without ctime. The same walk also tells which checked-out submodules
//! hold changes their commit does not, whether verify.sh on disk is the blob recorded, and,
//! after a run, which paths changed since it started.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode};
use gix::objs::Write as _;

use super::names::VERIFY_SCRIPT;
use super::run_start::FsTime;
use super::untracked::untracked;
use super::{Error, Repo};

/// Tree entry modes as git writes them.
pub(super) const MODE_TREE: u32 = 0o040000;
const MODE_FILE: u32 = 0o100644;
const MODE_EXECUTABLE: u32 = 0o100755;
const MODE_SYMLINK: u32 = 0o120000;
pub(super) const MODE_GITLINK: u32 = 0o160000;

/// Below this many index entries, checking them on several threads costs more than it saves.
const PARALLEL_THRESHOLD: usize = 2_000;

/// Which index entries the state tree may take a blob from without reading the file. The
/// index's stat data is anyone's to write (`git update-index --cacheinfo`, a crafted index
/// file): an entry naming an honest blob with the stat data of a broken file on disk passes
/// every stat comparison, ctime included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexTrust {
    /// Any entry whose stat data still matches the file: fast, and enough to look a state up,
    /// never to key what a run proved nor to spare a session's stop.
    Stat,
    /// Only an entry that can be shown unchanged since a state `tree` that held the disk's
    /// bytes from `before` on (a moment on the filesystem's clock): a session's anchor, or a
    /// run's own state read from disk before it ran. The entry must be stat-clean, its ctime
    /// before `before` (only the clock moves ctime, so the file has not changed since), and its
    /// blob the one `tree` holds at its path. Every other path is read from disk. `tree`'s trees
    /// (not its blobs) must be in the object database; without them every path is read.
    Since { tree: ObjectId, before: FsTime },
    /// None: every tracked file is read from disk.
    Disk,
}

impl IndexTrust {
    /// The trust a session's anchor allows: its state tree and time (seconds since the epoch),
    /// or none when the anchor holds no state tree. A whole second before it: the anchor's time
    /// is cut to the second, and the kernel stamps files from a clock a tick behind the one the
    /// anchor read.
    pub fn of_anchor(tree: Option<ObjectId>, time: i64) -> IndexTrust {
        tree.map_or(IndexTrust::Disk, |tree| IndexTrust::Since {
            tree,
            before: FsTime::whole_second(time.saturating_sub(1)),
        })
    }
}

/// The working state as a git tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateTree {
    pub id: ObjectId,
    /// verify.sh as it stands in this tree: its blob and mode, if it is part of the state;
    /// a link is followed to the file it leads to within the state, whose bytes are the ones
    /// that run.
    pub verify: Option<(ObjectId, u32)>,
    /// Every path with its mode and object, sorted; kept to name what changed between two states.
    entries: Vec<Item>,
    /// Every directory the tree holds (its path, without a trailing slash) with its tree id,
    /// sorted: an input tree takes a listed directory's tree whole, without hashing it again.
    dirs: Vec<(BString, ObjectId)>,
    /// Paths of the state whose ctime is at or after the moment the tree was asked about
    /// (`Repo::state_tree_since`), sorted; empty when none was given.
    touched: Vec<String>,
    /// Checked-out submodules and nested repositories whose worktree holds changes their
    /// commit does not (uncommitted, or untracked and not ignored), sorted.
    dirty_submodules: Vec<String>,
    /// The ignored paths on disk the walk met, a wholly ignored directory as one path (with
    /// whether it is a directory): what ignore rules keep out of the state.
    ignored: Vec<(BString, bool)>,
    /// Under an anchor (`IndexTrust::Since`): its state tree, and the files added, changed or
    /// deleted since it, sorted, as the comparison with it found them while building this
    /// tree; `None` when there was no anchor or its trees could not all be read.
    since_anchor: Option<SinceAnchor>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Item {
    /// The repository-relative path; a sparse-index directory keeps its trailing slash.
    pub(super) path: BString,
    pub(super) mode: u32,
    pub(super) id: ObjectId,
    /// The blob was taken from the index entry, not read from disk.
    pub(super) from_index: bool,
}

/// What the worktree says about one index path.
enum Slot {
    /// The index entry still describes the worktree.
    Keep,
    /// The path is gone from the worktree (or became something git would not add in its place).
    Gone,
    /// The content must be read from disk; the mode is what git would record.
    Hash { mode: u32, as_link: bool },
    /// A directory that is (or is to be recorded as) a submodule: its checked-out commit decides.
    Gitlink,
}

impl Repo {
    /// The state tree of the worktree: the tree `git add -A` would stage, computed without
    /// touching the index. With `persist`, every blob and tree is also written to the object
    /// database, so the id can be annotated and checked out later.
    pub fn state_tree(&self, persist: bool) -> Result<StateTree, Error> {
        StateTree::compute(&self.git, persist, None, IndexTrust::Stat)
    }

    /// The state tree taking from the index only the blobs `trust` allows; the others are
    /// read from disk. Not persisted.
    pub fn state_tree_trusting(&self, trust: IndexTrust) -> Result<StateTree, Error> {
        StateTree::compute(&self.git, false, None, trust)
    }

    /// The state tree a session's anchor records: computed as `state_tree(false)`, with its
    /// trees (not its blobs) written to the object database where they are missing, so that a
    /// later stop can compare its own state with it directory by directory
    /// (`IndexTrust::Since`).
    pub fn anchor_state_tree(&self) -> Result<StateTree, Error> {
        StateTree::compute_with(&self.git, Persist::Trees, None, IndexTrust::Stat, true)
    }

    /// The state as the disk has it, every tracked file read but those `prior` shows unchanged
    /// (its trees written where missing), and the trust it lends a later reading: the state
    /// computed after a run, or the next commit's in the same worktree. The index's stat data
    /// may spare a lookup, never the key of a run outside a session.
    pub fn state_tree_from_disk(
        &self,
        prior: IndexTrust,
    ) -> Result<(StateTree, IndexTrust), Error> {
        // Stamped before the files are read: whatever changes after it has a ctime at or after
        // it, so a file older than it is as this reading found it.
        let before = self.fs_now()?;
        let prior = match prior {
            IndexTrust::Stat => IndexTrust::Disk,
            prior => prior,
        };
        let tree = StateTree::compute_with(&self.git, Persist::Trees, None, prior, true)?;
        let trust = IndexTrust::Since {
            tree: tree.id,
            before,
        };
        Ok((tree, trust))
    }

    /// The state a worktree holds when it is exactly `tree`, a commit's, with nothing read
    /// from disk: what a commit's run expects to find, for a worktree moved there whose last
    /// reading found it exactly the commit before. The reading after the run, trusting only
    /// what that last reading found unchanged since, is the one that shows what was there.
    pub fn expected_state(&self, tree: ObjectId) -> Result<StateTree, Error> {
        let what = || format!("the tree {tree}");
        let mut recorder = gix::traverse::tree::Recorder::default();
        self.git
            .find_tree(tree)
            .map_err(Error::read(what()))?
            .traverse()
            .breadthfirst(&mut recorder)
            .map_err(|error| Error::read(what())(gix::Error::from_error(error)))?;
        let mut entries = Vec::new();
        let mut dirs = Vec::new();
        for entry in recorder.records {
            let mode = u32::from(entry.mode.value());
            if mode == MODE_TREE {
                dirs.push((entry.filepath, entry.oid));
            } else {
                entries.push(Item {
                    path: entry.filepath,
                    mode,
                    id: entry.oid,
                    from_index: false,
                });
            }
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        dirs.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(StateTree {
            id: tree,
            verify: self.tree_script(tree, VERIFY_SCRIPT)?,
            entries,
            dirs,
            touched: Vec::new(),
            dirty_submodules: Vec::new(),
            ignored: Vec::new(),
            since_anchor: None,
        })
    }

    /// [`Repo::state_tree_since`], and the trust it lends the next reading (a commit's in
    /// the same worktree), stamped before the files are read.
    pub fn state_tree_since_read(
        &self,
        start: FsTime,
        trust: IndexTrust,
    ) -> Result<(StateTree, IndexTrust), Error> {
        let before = self.fs_now()?;
        let tree = self.state_tree_since(start, trust)?;
        let trust = IndexTrust::Since {
            tree: tree.id,
            before,
        };
        Ok((tree, trust))
    }

    /// The state tree, persisted, as after a verify.sh run that started at `start`: it also
    /// names every path of the state (tracked or untracked, not ignored) changed since, in the
    /// same walk. A path changed and changed back keeps its tree entry, not its ctime.
    /// Blobs come from the index only as `trust` allows: this is the tree a run's record is
    /// keyed by, so it must be the bytes the run read.
    pub fn state_tree_since(&self, start: FsTime, trust: IndexTrust) -> Result<StateTree, Error> {
        StateTree::compute(&self.git, true, Some(start), trust)
    }
}

impl StateTree {
    /// Compute the state tree of `repo`'s worktree. With `persist`, every blob and tree is also
    /// written to the object database, so the id can be annotated and checked out later. With
    /// `since`, the paths changed at or after it are named in `touched`. `trust` says which
    /// index entries may stand for their files.
    pub fn compute(
        repo: &gix::Repository,
        persist: bool,
        since: Option<FsTime>,
        trust: IndexTrust,
    ) -> Result<StateTree, Error> {
        let persist = if persist { Persist::All } else { Persist::No };
        Self::compute_with(repo, persist, since, trust, true)
    }

    /// `top` is false for a submodule's own state: its verify.sh is not the one that runs.
    fn compute_with(
        repo: &gix::Repository,
        persist: Persist,
        since: Option<FsTime>,
        trust: IndexTrust,
        top: bool,
    ) -> Result<StateTree, Error> {
        let workdir = repo.workdir().ok_or_else(|| Error::Bare {
            path: repo.git_dir().to_owned(),
        })?;
        let index = repo.index_or_empty().map_err(Error::read("the index"))?;
        let context = Context::read(repo, workdir, since, trust)?;
        let groups = path_groups(&index);
        // The directory walk for untracked files runs on this thread while the index entries
        // are checked on others: both are mostly system calls, and neither needs the other.
        let (slots, untracked) = context.classify_all(&index, &groups, || untracked(repo, &index));
        let (untracked, ignored) = untracked?;

        let mut walk = Walk {
            repo,
            context: &context,
            index: &index,
            pipeline: checkin_pipeline(repo, &index)?,
            hasher: Hasher {
                repo,
                persist,
                buf: Vec::new(),
                dirs: Some(Vec::new()),
            },
            items: Vec::with_capacity(groups.len()),
            touched: Vec::new(),
            dirty_submodules: Vec::new(),
        };
        for (group, (slot, changed_since)) in groups.iter().zip(slots) {
            walk.tracked(&index.entries()[group.start], slot, changed_since)?;
        }
        for (path, kind) in untracked {
            walk.untracked(path, kind)?;
        }
        walk.items.sort_by(|a, b| a.path.cmp(&b.path));
        let (id, since_anchor) = walk.tree()?;
        let Walk {
            mut hasher,
            items,
            mut touched,
            mut dirty_submodules,
            ..
        } = walk;
        let verify = items
            .iter()
            .find(|item| item.path == VERIFY_SCRIPT)
            .map(|item| (item.id, item.mode));
        if top && verify.is_some() {
            let recorded = |path: &[u8]| {
                items
                    .binary_search_by(|item| item.path.as_slice().cmp(path))
                    .ok()
                    .map(|i| items[i].id)
            };
            super::verify_file::check_recorded(workdir, &index, repo.object_hash(), recorded)?;
        }
        // A proof names the bytes that run: a verify.sh link is followed to its file.
        let verify = match verify {
            Some((_, MODE_SYMLINK)) => resolve_in_items(repo, workdir, &items, VERIFY_SCRIPT)?,
            other => other,
        };
        touched.sort();
        dirty_submodules.sort();
        let mut dirs = hasher.dirs.take().unwrap_or_default();
        dirs.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(StateTree {
            id,
            verify,
            entries: items,
            dirs,
            touched,
            dirty_submodules,
            ignored,
            since_anchor,
        })
    }

    /// Checked-out submodules and nested repositories whose worktree holds changes their
    /// commit does not, sorted: the state tree records a submodule by its commit only, so no
    /// proof may vouch for such a state.
    pub fn dirty_submodules(&self) -> &[String] {
        &self.dirty_submodules
    }

    /// Every path of the state with its mode and object, sorted by path.
    pub(super) fn items(&self) -> &[Item] {
        &self.entries
    }

    /// The tree id of the directory `path` in this state, if it is one there (a sparse-index
    /// directory is an item, not one of these).
    pub(super) fn dir(&self, path: &[u8]) -> Option<ObjectId> {
        self.dirs
            .binary_search_by(|(dir, _)| dir.as_slice().cmp(path))
            .ok()
            .map(|i| self.dirs[i].1)
    }

    /// The blob and mode of `path` in this state, if it is a file or a link there.
    pub fn entry(&self, path: &str) -> Option<(ObjectId, u32)> {
        self.entries
            .binary_search_by(|item| item.path.as_slice().cmp(path.as_bytes()))
            .ok()
            .map(|i| (self.entries[i].id, self.entries[i].mode))
            .filter(|(_, mode)| *mode != MODE_TREE && *mode != MODE_GITLINK)
    }

    /// Every directory of the state, relative to the worktree (not the worktree itself).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(super) fn dir_paths(&self) -> impl Iterator<Item = &Path> {
        self.dirs
            .iter()
            .map(|(dir, _)| Path::new(OsStr::from_bytes(dir.as_slice())))
    }

    /// The ignored paths on disk, a wholly ignored directory as one (with whether it is a
    /// directory), sorted.
    pub(super) fn ignored(&self) -> &[(BString, bool)] {
        &self.ignored
    }

    /// The paths changed at or after the moment given to `Repo::state_tree_since`, sorted.
    /// The files added, changed or deleted since the anchor's state tree `anchor`, sorted, as
    /// found while this tree was built under it; `None` when it was built under no anchor,
    /// another one, or one whose trees could not all be read.
    pub fn changed_since_anchor(&self, anchor: ObjectId) -> Option<&[String]> {
        self.since_anchor
            .as_ref()
            .filter(|(tree, _)| *tree == anchor)
            .map(|(_, changed)| changed.as_slice())
    }

    pub fn touched(&self) -> &[String] {
        &self.touched
    }

    /// Paths whose mode or content differ between `self` and `other`, sorted.
    pub fn changed_paths(&self, other: &StateTree) -> Vec<String> {
        let mut changed = Vec::new();
        let (mut a, mut b) = (
            self.entries.iter().peekable(),
            other.entries.iter().peekable(),
        );
        loop {
            match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some(x), Some(y)) if x.path == y.path => {
                    if (x.mode, x.id) != (y.mode, y.id) {
                        changed.push(x.path.to_string());
                    }
                    a.next();
                    b.next();
                }
                (Some(x), Some(y)) if x.path < y.path => {
                    changed.push(x.path.to_string());
                    a.next();
                }
                (Some(_), Some(y)) | (None, Some(y)) => {
                    changed.push(y.path.to_string());
                    b.next();
                }
                (Some(x), None) => {
                    changed.push(x.path.to_string());
                    a.next();
                }
            }
        }
        changed
    }
}

/// A run of index entries for one path: one entry, or the stages of a conflict.
struct Group {
    start: usize,
    len: usize,
}

fn path_groups(index: &gix::index::State) -> Vec<Group> {
    let entries = index.entries();
    let mut groups: Vec<Group> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        match groups.last_mut() {
            Some(last) if entries[last.start].path(index) == entry.path(index) => last.len += 1,
            _ => groups.push(Group { start: i, len: 1 }),
        }
    }
    groups
}

/// An anchor's state tree, and the files added, changed or deleted since it, sorted.
type SinceAnchor = (ObjectId, Vec<String>);

/// One computation of a state tree as it goes: its entries, in the order found, and the paths
/// touched since the run's start and the dirty submodules found on the way.
struct Walk<'a, 'repo> {
    repo: &'repo gix::Repository,
    context: &'a Context<'a>,
    index: &'a gix::index::State,
    pipeline: gix::filter::Pipeline<'repo>,
    hasher: Hasher<'repo>,
    items: Vec<Item>,
    touched: Vec<String>,
    dirty_submodules: Vec<String>,
}

impl Walk<'_, '_> {
    /// A submodule's or nested repository's own changes: its paths touched since the run's
    /// start, and whether its worktree holds changes its commit does not.
    fn inner(&mut self, path: &BStr, abs: &Path) -> Result<(), Error> {
        let found = inner_changes(self.repo, path, abs, self.context.since, self.context.trust)?;
        self.dirty_submodules.extend(found.dirty);
        self.touched.extend(found.touched);
        Ok(())
    }

    /// The entry for a path of the index, as `slot` says to take it.
    fn tracked(
        &mut self,
        entry: &gix::index::Entry,
        slot: Slot,
        changed_since: bool,
    ) -> Result<(), Error> {
        let index = self.index;
        let path = entry.path(index);
        if changed_since {
            self.touched.push(path.to_string());
        }
        let item = |mode, id, from_index| Item {
            path: path.to_owned(),
            mode,
            id,
            from_index,
        };
        match slot {
            Slot::Gone => {}
            // A sparse index stores whole directories as one entry with a trailing slash.
            Slot::Keep if entry.mode == Mode::DIR => {
                self.items.push(item(MODE_TREE, entry.id, false));
            }
            Slot::Keep => self
                .items
                .push(item(index_mode(entry.mode), entry.id, true)),
            Slot::Gitlink => {
                let abs = self.context.workdir.join(to_path(path));
                let id = match submodule_commit(&abs)? {
                    None => return Ok(()),
                    Some(Some(id)) => {
                        self.inner(path, &abs)?;
                        id
                    }
                    // A submodule that is not checked out keeps its recorded commit.
                    Some(None) if entry.mode == Mode::COMMIT => entry.id,
                    Some(None) => {
                        return Err(Error::EmbeddedRepositoryWithoutCommit {
                            path: path.to_string(),
                        });
                    }
                };
                self.items.push(item(MODE_GITLINK, id, false));
            }
            Slot::Hash { mode, as_link } => {
                let workdir = self.context.workdir;
                if let Some(id) =
                    self.hasher
                        .file(&mut self.pipeline, index, workdir, path, as_link)?
                {
                    self.items.push(item(mode, id, false));
                }
            }
        }
        Ok(())
    }

    /// The entry for a path git's walk found outside the index.
    fn untracked(&mut self, path: BString, kind: gix::dir::entry::Kind) -> Result<(), Error> {
        use gix::dir::entry::Kind;
        let abs = self.context.workdir.join(to_path(&path));
        let item = match kind {
            Kind::File | Kind::Symlink => {
                let meta = lstat(&abs)?;
                if self.context.changed_since(&meta) {
                    self.touched.push(path.to_string());
                }
                let (mode, as_link) = mode_from_disk(&meta, None, self.context);
                let workdir = self.context.workdir;
                self.hasher
                    .file(
                        &mut self.pipeline,
                        self.index,
                        workdir,
                        path.as_bstr(),
                        as_link,
                    )?
                    .map(|id| Item {
                        path: path.clone(),
                        mode,
                        id,
                        from_index: false,
                    })
            }
            Kind::Repository => match submodule_commit(&abs)? {
                Some(Some(id)) => {
                    self.inner(path.as_bstr(), &abs)?;
                    Some(Item {
                        path: path.clone(),
                        mode: MODE_GITLINK,
                        id,
                        from_index: false,
                    })
                }
                _ => {
                    return Err(Error::EmbeddedRepositoryWithoutCommit {
                        path: path.to_string(),
                    });
                }
            },
            Kind::Directory | Kind::Untrackable => None,
        };
        self.items.extend(item);
        Ok(())
    }

    /// The tree of the entries, sorted: under an anchor, with every blob taken from the index
    /// that is not the anchor's read again from disk, and the files changed since the anchor.
    fn tree(&mut self) -> Result<(ObjectId, Option<SinceAnchor>), Error> {
        let mut id = build_tree(&self.items, 0, &mut self.hasher)?;
        let IndexTrust::Since { tree: anchor, .. } = self.context.trust else {
            return Ok((id, None));
        };
        if id == anchor {
            return Ok((id, Some((anchor, Vec::new()))));
        }
        let (rehashed, changed) = self.context.rehash_unanchored(
            self.repo,
            self.index,
            &mut self.pipeline,
            &mut self.hasher,
            &mut self.items,
            anchor,
        )?;
        if rehashed {
            self.hasher.dirs = Some(Vec::new());
            id = build_tree(&self.items, 0, &mut self.hasher)?;
        }
        Ok((id, changed.map(|changed| (anchor, changed))))
    }
}

impl<'a> Context<'a> {
    /// What a state tree's computation reads of `repo`'s settings, once.
    fn read(
        repo: &gix::Repository,
        workdir: &'a Path,
        since: Option<FsTime>,
        trust: IndexTrust,
    ) -> Result<Context<'a>, Error> {
        let caps = repo
            .filesystem_options()
            .map_err(Error::read("core.fileMode and core.symlinks"))?;
        let mut stat_options = repo.stat_options().map_err(Error::read("core.checkStat"))?;
        // Stat data without ctime cannot vouch for content: a same-size edit with its mtime set
        // back looks clean, and only ctime cannot be set back. So ctime and the full
        // stat data are compared whatever core.trustctime and core.checkStat say.
        stat_options.trust_ctime = true;
        stat_options.check_stat = true;
        // Within one second only the nanoseconds tell an edit from the staged file. A
        // filesystem that loses them costs a rehash, never a wrong state.
        stat_options.use_nsec = true;
        let sparse = repo
            .config_snapshot()
            .boolean("core.sparseCheckout")
            .unwrap_or(false);
        // An anchor whose state's trees are not in the object database (written before they
        // were kept, or pruned since) cannot vouch for any entry.
        let trust = match trust {
            IndexTrust::Since { tree, .. } if !repo.has_object(tree) => IndexTrust::Disk,
            trust => trust,
        };
        Ok(Context {
            workdir,
            stat_options,
            executable_bit: caps.executable_bit,
            symlinks: caps.symlink,
            since,
            sparse,
            trust,
        })
    }
}

struct Context<'a> {
    workdir: &'a Path,
    stat_options: gix::index::entry::stat::Options,
    executable_bit: bool,
    symlinks: bool,
    since: Option<FsTime>,
    /// `core.sparseCheckout` is on: a skip-worktree entry whose file is absent was left out by
    /// the sparse checkout, and keeps its index blob.
    sparse: bool,
    /// Which stat-clean index entries may stand for their files.
    trust: IndexTrust,
}

impl Context<'_> {
    /// Whether a stat-clean file may keep its index blob as far as its ctime tells; under an
    /// anchor, its blob is compared with the anchor's afterwards (`rehash_unanchored`).
    fn trusts_unchanged(&self, meta: &DiskStat) -> bool {
        match self.trust {
            IndexTrust::Stat => true,
            IndexTrust::Disk => false,
            IndexTrust::Since { before, .. } => FsTime::ctime_of(&meta.0) < before,
        }
    }

    /// Under an anchor, read from disk every path whose blob was taken from the index yet is
    /// not the anchor's (`anchor`, the anchor's state tree; `id`, the tree of `items` as
    /// built). Only the directories whose trees differ from the anchor's are read, so an
    /// unchanged state costs nothing. Whether any item was read again, and the files added,
    /// changed or deleted since the anchor, sorted (`None` if its trees could not be read).
    fn rehash_unanchored(
        &self,
        repo: &gix::Repository,
        index: &gix::index::State,
        pipeline: &mut gix::filter::Pipeline<'_>,
        hasher: &mut Hasher<'_>,
        items: &mut Vec<Item>,
        anchor: ObjectId,
    ) -> Result<(bool, Option<Vec<String>>), Error> {
        let mut dirs = hasher.dirs.take().unwrap_or_default();
        dirs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut found = Differing::default();
        differing(repo, items, 0, 0, &dirs, anchor, &mut found)?;
        hasher.dirs = Some(dirs);
        let mut rehashed = false;
        let mut gone = Vec::new();
        for &(i, _) in &found.suspects {
            let item = &items[i];
            if !item.from_index {
                continue;
            }
            let path = item.path.clone();
            let as_link = item.mode == MODE_SYMLINK;
            match hasher.file(pipeline, index, self.workdir, path.as_bstr(), as_link)? {
                Some(blob) => {
                    items[i].id = blob;
                    items[i].from_index = false;
                }
                None => gone.push(i),
            }
            rehashed = true;
        }
        // What changed since the anchor, once the suspects' blobs are the disk's: a suspect
        // read again may turn out to be the anchor's after all.
        let changed = found.complete.then(|| {
            let mut changed: Vec<String> = found
                .suspects
                .iter()
                .filter(|(i, there)| {
                    gone.binary_search(i).is_ok_and(|_| there.is_some())
                        || (gone.binary_search(i).is_err()
                            && Some((items[*i].mode, items[*i].id)) != *there)
                })
                .map(|(i, _)| items[*i].path.to_string())
                .chain(found.deleted.iter().map(ToString::to_string))
                .collect();
            changed.sort();
            changed.dedup();
            changed
        });
        for i in gone.into_iter().rev() {
            items.remove(i);
        }
        Ok((rehashed, changed))
    }

    /// Whether the file `meta` describes changed at or after `since`.
    fn changed_since(&self, meta: &DiskStat) -> bool {
        self.since
            .is_some_and(|since| FsTime::ctime_of(&meta.0) >= since)
    }

    /// Decide every group's slot, on several threads for large indexes (the time goes to
    /// lstat), and meanwhile run `alongside` on the calling thread.
    fn classify_all<R>(
        &self,
        index: &gix::index::State,
        groups: &[Group],
        alongside: impl FnOnce() -> R,
    ) -> (Vec<(Slot, bool)>, R) {
        // Each run of groups is classified in order, sharing its open folders.
        let classify_run = |run: &[Group]| {
            let mut leaf = LeafDir::default();
            run.iter()
                .map(|g| self.classify(index, g, &mut leaf))
                .collect::<Vec<_>>()
        };
        let threads = crate::process::cpus().min(8);
        if groups.len() < PARALLEL_THRESHOLD || threads == 1 {
            let slots = classify_run(groups);
            return (slots, alongside());
        }
        let chunk = groups.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = groups
                .chunks(chunk)
                .map(|run| scope.spawn(move || classify_run(run)))
                .collect();
            let other = alongside();
            let slots = handles
                .into_iter()
                .flat_map(|h| h.join().expect("classifying index entries does not panic"))
                .collect();
            (slots, other)
        })
    }

    /// The group's slot, and whether its path changed at or after `since`. `leaf` holds the
    /// folders open above the last path, shared by the calls of one thread: index entries
    /// come sorted, so neighbours share their leading folders.
    fn classify(
        &self,
        index: &gix::index::State,
        group: &Group,
        leaf: &mut LeafDir,
    ) -> (Slot, bool) {
        let mut changed = false;
        let slot = self.slot(index, group, leaf, &mut changed);
        (slot, changed)
    }

    /// `changed` is set when the path was stat'ed and its ctime is at or after `since`.
    fn slot(
        &self,
        index: &gix::index::State,
        group: &Group,
        leaf: &mut LeafDir,
        changed: &mut bool,
    ) -> Slot {
        let entries = &index.entries()[group.start..group.start + group.len];
        let entry = &entries[0];
        let conflicted = entries.iter().any(|e| e.stage_raw() != 0);
        if !conflicted && entry.mode == Mode::DIR {
            return Slot::Keep;
        }
        // git trusts a skip-worktree or assume-unchanged entry without looking at the file, so
        // an edit behind either flag is invisible to it. The state is what is on disk: only a
        // skip-worktree entry whose file a configured sparse checkout left out keeps its index
        // blob; without one, either bit on a deleted file is a deletion, as it is on disk.
        let flagged = !conflicted
            && entry
                .flags
                .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID);
        let sparse_absent =
            !conflicted && self.sparse && entry.flags.contains(Flags::SKIP_WORKTREE);
        let absent = if sparse_absent {
            Slot::Keep
        } else {
            Slot::Gone
        };
        let Some(meta) = leaf.lstat(self.workdir, entry.path(index)) else {
            return absent;
        };
        // A directory's ctime moves with its entries; a submodule's content is its own state.
        *changed = !meta.is_dir() && self.changed_since(&meta);
        if sparse_absent && !(meta.is_file() || meta.is_symlink()) {
            return Slot::Keep;
        }
        // As git's `check_removed`: a directory keeps a gitlink (checked out or not), and turns a
        // file into a gitlink if it is a repository; otherwise the file counts as deleted and
        // the directory's content is untracked. A gitlink whose directory became a file or a
        // symlink is that file or link now.
        if meta.is_dir() {
            let gitlink = !conflicted
                && (entry.mode == Mode::COMMIT
                    || std::fs::symlink_metadata(
                        self.workdir.join(to_path(entry.path(index))).join(".git"),
                    )
                    .is_ok());
            return if gitlink { Slot::Gitlink } else { Slot::Gone };
        }
        if !(meta.is_file() || meta.is_symlink()) {
            return Slot::Gone;
        }
        // In a conflict git falls back on the mode of stage 2 ("ours"), else of the first stage
        // present (1, then 3), as `index_name_pos_also_unmerged` picks it.
        let known = if conflicted {
            entries
                .iter()
                .find(|e| e.stage_raw() == 2)
                .or(entries.first())
                .map(|e| e.mode)
        } else {
            Some(entry.mode)
        };
        let (mode, as_link) = mode_from_disk(&meta, known, self);
        if conflicted
            || flagged
            || entry.flags.contains(Flags::INTENT_TO_ADD)
            || mode != index_mode(entry.mode)
        {
            return Slot::Hash { mode, as_link };
        }
        let stat = meta.index_stat();
        // Racily clean entries (modified in the same second the index was written) cannot be
        // trusted by their stat data, as in git's racy-git handling.
        if entry.stat.matches(&stat, self.stat_options)
            && !entry.stat.is_racy(index.timestamp(), self.stat_options)
            && self.trusts_unchanged(&meta)
        {
            Slot::Keep
        } else {
            Slot::Hash { mode, as_link }
        }
    }
}

/// The mode git records for a file on disk, as `ce_mode_from_stat` decides it: the owner's
/// execute bit only, and the index's mode where the filesystem cannot be trusted
/// (`core.fileMode=false`, `core.symlinks=false`). The flag says whether the content is a link
/// target rather than file data to filter.
fn mode_from_disk(meta: &DiskStat, known: Option<Mode>, ctx: &Context<'_>) -> (u32, bool) {
    if meta.is_symlink() {
        return (MODE_SYMLINK, true);
    }
    if !ctx.symlinks && known == Some(Mode::SYMLINK) {
        return (MODE_SYMLINK, true);
    }
    if !ctx.executable_bit {
        return match known {
            Some(Mode::FILE_EXECUTABLE) => (MODE_EXECUTABLE, false),
            _ => (MODE_FILE, false),
        };
    }
    if meta.is_executable() {
        (MODE_EXECUTABLE, false)
    } else {
        (MODE_FILE, false)
    }
}

/// The clean-filter pipeline as `git add -A` applies it. Attributes come from the worktree's
/// `.gitattributes` files; the index's copy stands in only for one that a sparse checkout left
/// off disk (skip-worktree). gix's own pipeline also falls back to the index for a
/// `.gitattributes` deleted from (or turned into a directory in) the worktree, but `git add -A`
/// stages that deletion before it hashes the paths after it, and reads a directory as empty.
fn checkin_pipeline<'repo>(
    repo: &'repo gix::Repository,
    index: &gix::index::State,
) -> Result<gix::filter::Pipeline<'repo>, Error> {
    let mut fallback = gix::index::State::new(repo.object_hash());
    for entry in index.entries() {
        let path = entry.path(index);
        let attributes = super::names::is_attributes_file(path);
        if attributes && entry.stage_raw() == 0 && entry.flags.contains(Flags::SKIP_WORKTREE) {
            fallback.dangerously_push_entry(entry.stat, entry.id, entry.flags, entry.mode, path);
        }
    }
    let attributes = repo
        .attributes_only(
            &fallback,
            gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
        )
        .map_err(Error::read("the .gitattributes files"))?;
    gix::filter::Pipeline::new(repo, attributes.detach())
        .map_err(Error::read("the filter configuration"))
}

/// A repository-relative path as the filesystem sees it: on unix, paths are bytes.
fn to_path(bytes: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(bytes))
}

fn index_mode(mode: Mode) -> u32 {
    match mode {
        Mode::FILE_EXECUTABLE => MODE_EXECUTABLE,
        Mode::SYMLINK => MODE_SYMLINK,
        Mode::COMMIT => MODE_GITLINK,
        Mode::DIR => MODE_TREE,
        _ => MODE_FILE,
    }
}

fn lstat(path: &Path) -> Result<DiskStat, Error> {
    rustix::fs::lstat(path)
        .map(DiskStat)
        .map_err(|source| Error::Unreadable {
            path: path.to_owned(),
            source: source.into(),
        })
}

/// What `lstat` says about a path, read as git reads it.
struct DiskStat(rustix::fs::Stat);

impl DiskStat {
    fn kind(&self) -> rustix::fs::FileType {
        rustix::fs::FileType::from_raw_mode(self.0.st_mode)
    }

    fn is_dir(&self) -> bool {
        self.kind() == rustix::fs::FileType::Directory
    }

    fn is_file(&self) -> bool {
        self.kind() == rustix::fs::FileType::RegularFile
    }

    fn is_symlink(&self) -> bool {
        self.kind() == rustix::fs::FileType::Symlink
    }

    /// git counts a file as executable by its owner's bit only.
    fn is_executable(&self) -> bool {
        self.is_file() && self.0.st_mode & 0o100 != 0
    }

    /// The stat data as the index stores it (`gix::index::entry::Stat::from_fs`, without
    /// going through `std::fs::Metadata`): 32-bit fields truncated as git truncates them.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "the index keeps 32 bits of these fields, as git does"
    )]
    // The nanoseconds' type differs between platforms (unsigned on Linux); below 10⁹, they
    // never wrap.
    #[allow(clippy::unnecessary_cast, clippy::cast_possible_wrap)]
    fn index_stat(&self) -> gix::index::entry::Stat {
        use gix::index::entry::stat::Time;
        let time = |secs: i64, nsecs: i64| {
            if secs < 0 || !(0..1_000_000_000).contains(&nsecs) {
                Time::default()
            } else {
                Time {
                    secs: secs as u32,
                    nsecs: nsecs as u32,
                }
            }
        };
        gix::index::entry::Stat {
            mtime: time(self.0.st_mtime, self.0.st_mtime_nsec as i64),
            ctime: time(self.0.st_ctime, self.0.st_ctime_nsec as i64),
            dev: self.0.st_dev as u32,
            ino: self.0.st_ino as u32,
            uid: self.0.st_uid,
            gid: self.0.st_gid,
            size: self.0.st_size as u32,
        }
    }
}

/// The folders above the last path stat'ed on this thread, each held open: index entries come
/// sorted, so most paths share them, and `fstatat` on the file name alone spares the kernel the
/// walk of every leading component (the bulk of a cache-hit's time on a large worktree).
///
/// Each folder is opened from the one above it, never following a link (`O_NOFOLLOW` with
/// `O_DIRECTORY`): a path below a link, or below anything that is not a folder, is not found,
/// as git's `has_symlink_leading_path` leaves it out, with one system call a folder.
#[derive(Default)]
struct LeafDir {
    /// The worktree's root, once opened (`None` inside when it cannot be).
    root: Option<Option<rustix::fd::OwnedFd>>,
    /// Open folders, outermost first: each one's path (relative) and descriptor; `None` for
    /// one that is not a real folder, below which nothing is found.
    open: Vec<(Vec<u8>, Option<rustix::fd::OwnedFd>)>,
}

impl LeafDir {
    /// `lstat` of the repository-relative `path`; `None` when it does not exist, cannot be
    /// read, or lies below a link, as for git.
    fn lstat(&mut self, workdir: &Path, path: &BStr) -> Option<DiskStat> {
        use rustix::fs::AtFlags;
        let (dir, name): (&[u8], &[u8]) = match path.rfind_byte(b'/') {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (&[], path),
        };
        let fd = self.folder(workdir, dir)?;
        rustix::fs::statat(fd, to_path(name), AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(DiskStat)
    }

    /// The open folder `dir` (relative, `""` for the root), opening what is missing of it
    /// from the deepest folder already open above it.
    fn folder(&mut self, workdir: &Path, dir: &[u8]) -> Option<&rustix::fd::OwnedFd> {
        use rustix::fs::{Mode as FsMode, OFlags};
        // A folder opened to look into only (`O_PATH` where there is one).
        #[cfg(target_os = "linux")]
        let only = OFlags::PATH;
        #[cfg(not(target_os = "linux"))]
        let only = OFlags::RDONLY;
        let flags = only | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        // The worktree's own path may go through links (it is followed, as git follows it);
        // only the folders below it must be real.
        let root = self.root.get_or_insert_with(|| {
            rustix::fs::open(workdir, flags - OFlags::NOFOLLOW, FsMode::empty()).ok()
        });
        // Keep the open folders that lead to `dir`, whole components only.
        let leads = |open: &[u8]| {
            dir.starts_with(open) && (dir.len() == open.len() || dir[open.len()] == b'/')
        };
        while self.open.last().is_some_and(|(open, _)| !leads(open)) {
            self.open.pop();
        }
        let mut done = self.open.last().map_or(0, |(open, _)| open.len());
        while done < dir.len() {
            let start = if done == 0 { 0 } else { done + 1 };
            let end = dir[start..]
                .find_byte(b'/')
                .map_or(dir.len(), |i| start + i);
            let parent = match self.open.last() {
                Some((_, parent)) => parent.as_ref(),
                None => root.as_ref(),
            };
            let opened = parent.and_then(|parent| {
                rustix::fs::openat(parent, to_path(&dir[start..end]), flags, FsMode::empty()).ok()
            });
            self.open.push((dir[..end].to_vec(), opened));
            done = end;
        }
        match self.open.last() {
            Some((_, fd)) => fd.as_ref(),
            None => root.as_ref(),
        }
    }
}

/// The commit a submodule or nested repository has checked out: `None` when there is no
/// directory (the gitlink is gone), `Some(None)` when it is not a repository or has no commit.
fn submodule_commit(path: &Path) -> Result<Option<Option<ObjectId>>, Error> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {}
        _ => return Ok(None),
    }
    let Ok(mut repo) = gix::open_opts(path, gix::open::Options::isolated()) else {
        return Ok(Some(None));
    };
    super::repo::ignore_replacements(&mut repo);
    Ok(Some(repo.head_id().ok().map(gix::Id::detach)))
}

/// What a checked-out submodule or nested repository holds beyond its commit, named from the
/// superproject: `dirty` when its own state tree is not its HEAD's tree (and any repository
/// nested in it that is dirty), `touched` its paths changed since `since`.
#[derive(Default)]
struct InnerChanges {
    dirty: Vec<String>,
    touched: Vec<String>,
}

/// Look inside the submodule at `abs` (`path` in the superproject), with its own state tree:
/// the same definition, its own index, excludes and attributes, whatever
/// `submodule.<name>.ignore` says. Only submodules that are checked out are looked into.
fn inner_changes(
    outer: &gix::Repository,
    path: &BStr,
    abs: &Path,
    since: Option<FsTime>,
    trust: IndexTrust,
) -> Result<InnerChanges, Error> {
    let Ok(mut repo) = gix::open_opts(abs, outer.open_options().clone()) else {
        return Ok(InnerChanges::default());
    };
    super::repo::ignore_replacements(&mut repo);
    if repo.workdir().is_none() {
        return Ok(InnerChanges::default());
    }
    let Ok(head_tree) = repo.head_tree_id() else {
        return Ok(InnerChanges::default());
    };
    // The trusted state names the submodule by its commit: that commit's tree, in the
    // submodule's own objects, vouches for its index as the state does for the superproject's.
    let trust = match trust {
        IndexTrust::Since { tree, before } => committed_tree_at(outer, tree, path, &repo)
            .map_or(IndexTrust::Disk, |tree| IndexTrust::Since { tree, before }),
        other => other,
    };
    let head_tree = head_tree.detach();
    let state = StateTree::compute_with(&repo, Persist::No, since, trust, false)?;
    let named = |inner: &String| format!("{path}/{inner}");
    let mut dirty: Vec<String> = state.dirty_submodules.iter().map(named).collect();
    if state.id != head_tree {
        dirty.push(path.to_string());
    }
    Ok(InnerChanges {
        dirty,
        touched: state.touched.iter().map(named).collect(),
    })
}

/// The tree of the commit that `tree` (in `outer`) records at `path`, read from `inner`.
fn committed_tree_at(
    outer: &gix::Repository,
    tree: ObjectId,
    path: &BStr,
    inner: &gix::Repository,
) -> Option<ObjectId> {
    let entry = outer
        .find_tree(tree)
        .ok()?
        .lookup_entry_by_path(path.to_str().ok()?)
        .ok()??;
    if !entry.mode().is_commit() {
        return None;
    }
    let commit = inner.find_commit(entry.object_id()).ok()?;
    commit.tree_id().ok().map(gix::Id::detach)
}

/// Which objects of a state tree are written to the object database (those missing only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Persist {
    No,
    /// The trees only: enough to compare a later state with this one.
    Trees,
    All,
}

/// Hashes worktree content (and writes it, when persisting) the way `git add` would.
pub(super) struct Hasher<'repo> {
    pub(super) repo: &'repo gix::Repository,
    pub(super) persist: Persist,
    pub(super) buf: Vec<u8>,
    /// Where each directory's tree id is noted as it is built, if anywhere.
    pub(super) dirs: Option<Vec<(BString, ObjectId)>>,
}

impl Hasher<'_> {
    /// The blob id of the file at `rela_path`, or `None` if it vanished since it was seen.
    fn file(
        &mut self,
        pipeline: &mut gix::filter::Pipeline<'_>,
        index: &gix::index::State,
        workdir: &Path,
        rela_path: &BStr,
        as_link: bool,
    ) -> Result<Option<ObjectId>, Error> {
        let rela = to_path(rela_path);
        let path = workdir.join(rela);
        let unreadable = |source| Error::Unreadable {
            path: path.clone(),
            source,
        };
        self.buf.clear();
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(unreadable(err)),
        };
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).map_err(unreadable)?;
            self.buf.extend_from_slice(target.as_os_str().as_bytes());
        } else if as_link {
            // With core.symlinks=false a link is checked out as a file holding its target.
            std::fs::File::open(&path)
                .and_then(|mut f| f.read_to_end(&mut self.buf))
                .map_err(unreadable)?;
        } else {
            use gix::filter::plumbing::pipeline::convert::ToGitOutcome;
            let file = std::fs::File::open(&path).map_err(unreadable)?;
            let outcome = pipeline
                .convert_to_git(file, rela, index)
                .map_err(Error::read(format!(
                    "{} through its clean filters",
                    path.display()
                )))?;
            match outcome {
                ToGitOutcome::Unchanged(mut file) => {
                    file.read_to_end(&mut self.buf).map_err(unreadable)?;
                }
                ToGitOutcome::Buffer(bytes) => self.buf.extend_from_slice(bytes),
                ToGitOutcome::Process(mut read) => {
                    read.read_to_end(&mut self.buf).map_err(unreadable)?;
                }
            }
        }
        let buf = std::mem::take(&mut self.buf);
        let id = self.object(
            gix::objs::Kind::Blob,
            &buf,
            &format!("the blob of {}", path.display()),
        );
        self.buf = buf;
        id.map(Some)
    }

    /// The id of the object `kind`/`data`, written to the object database when persisting
    /// asks for it and only if it is not there already, as `git write-tree` does: an object
    /// that exists costs a lookup, never a temporary file, a directory or a rename.
    fn object(&self, kind: gix::objs::Kind, data: &[u8], what: &str) -> Result<ObjectId, Error> {
        let id = gix::objs::compute_hash(self.repo.object_hash(), kind, data)
            .map_err(|e| Error::read(what)(gix::Error::from_error(e)))?;
        let wanted = match self.persist {
            Persist::All => true,
            Persist::Trees => kind == gix::objs::Kind::Tree,
            Persist::No => false,
        };
        // As gix's own writes: a pack that appeared since the database was opened costs at
        // worst a loose copy, never a rescan of the pack directory per missing object.
        if !wanted || id.is_empty_tree() || self.repo.objects.exists_without_refresh(&id) {
            return Ok(id);
        }
        self.repo
            .objects
            .write_buf(kind, data)
            .map_err(|e| Error::write(what)(gix::Error::from_error(e)))
    }
}

/// What the comparison of a state's items with an anchor's tree found.
#[derive(Default)]
struct Differing {
    /// The items (by index) whose path, mode or blob is not the anchor's, with the anchor's
    /// mode and blob at that path (`None` where it held no file there).
    suspects: Vec<(usize, Option<(u32, ObjectId)>)>,
    /// The files the anchor held where the state holds no file.
    deleted: Vec<BString>,
    /// Every tree of the anchor that had to be read could be: `suspects` and `deleted` are
    /// all that differs.
    complete: bool,
}

/// Compare `items` (sorted, all below the directory of `prefix` bytes, starting at `base` in
/// the whole list) with the anchor's tree `anchor` of that directory, entering only the
/// directories whose trees differ (`dirs`: the state's directories with their tree ids).
fn differing(
    repo: &gix::Repository,
    items: &[Item],
    base: usize,
    prefix: usize,
    dirs: &[(BString, ObjectId)],
    anchor: ObjectId,
    out: &mut Differing,
) -> Result<(), Error> {
    if base == 0 && prefix == 0 {
        out.complete = true;
    }
    let Ok(tree) = repo.find_tree(anchor) else {
        out.suspects
            .extend((base..base + items.len()).map(|i| (i, None)));
        out.complete = false;
        return Ok(());
    };
    let decoded = tree
        .decode()
        .map_err(|e| Error::read(format!("tree {anchor}"))(gix::Error::from_error(e)))?;
    let mut held: std::collections::HashMap<&[u8], (u32, ObjectId)> = decoded
        .entries
        .iter()
        .map(|entry| {
            let name: &[u8] = entry.filename.as_ref();
            (name, (u32::from(entry.mode.value()), entry.oid.to_owned()))
        })
        .collect();
    let mut i = 0;
    while i < items.len() {
        let rest = &items[i].path[prefix..];
        match rest.find_byte(b'/') {
            Some(slash) if slash + 1 < rest.len() => {
                let dir = &rest[..=slash];
                let end = i + run_below(&items[i..], prefix, dir);
                let here = dirs
                    .binary_search_by(|(d, _)| d.as_slice().cmp(&items[i].path[..prefix + slash]))
                    .ok()
                    .map(|k| dirs[k].1);
                match held.remove(&rest[..slash]) {
                    Some((MODE_TREE, there)) if here == Some(there) => {}
                    Some((MODE_TREE, there)) => differing(
                        repo,
                        &items[i..end],
                        base + i,
                        prefix + slash + 1,
                        dirs,
                        there,
                        out,
                    )?,
                    // A file (or a submodule) then, a directory now.
                    Some(_) => {
                        out.deleted.push(items[i].path[..prefix + slash].into());
                        out.suspects
                            .extend((base + i..base + end).map(|k| (k, None)));
                    }
                    None => out
                        .suspects
                        .extend((base + i..base + end).map(|k| (k, None))),
                }
                i = end;
            }
            // A file, a link, a submodule, or a sparse directory ("dir/").
            _ => {
                let name = rest.strip_suffix(b"/").unwrap_or(rest);
                let there = held.remove(name);
                if there != Some((items[i].mode, items[i].id)) {
                    match there {
                        // A directory then, a file now: what it held is gone.
                        Some((MODE_TREE, tree)) if items[i].mode != MODE_TREE => {
                            let dir: BString = items[i].path[..prefix + name.len()].into();
                            deleted_below(repo, tree, &dir, out);
                            out.suspects.push((base + i, None));
                        }
                        there => out.suspects.push((base + i, there)),
                    }
                }
                i += 1;
            }
        }
    }
    held_no_more(repo, items, prefix, held, out);
    Ok(())
}

/// What the anchor held in the directory of `items` (at `prefix`) that the state does not:
/// `held`, the anchor's entries there that no item matched, each deleted (a tree, every file
/// below it).
fn held_no_more(
    repo: &gix::Repository,
    items: &[Item],
    prefix: usize,
    held: std::collections::HashMap<&[u8], (u32, ObjectId)>,
    out: &mut Differing,
) {
    let dir: &[u8] = match items.first() {
        Some(item) if prefix > 0 => &item.path[..prefix - 1],
        _ => b"",
    };
    for (name, (mode, id)) in held {
        let mut path = BString::from(dir);
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(name);
        if mode == MODE_TREE {
            deleted_below(repo, id, &path, out);
        } else {
            out.deleted.push(path);
        }
    }
}

/// Every file of the anchor's tree `tree` at `dir`, which the state no longer holds, as deleted.
fn deleted_below(repo: &gix::Repository, tree: ObjectId, dir: &BString, out: &mut Differing) {
    let Ok(found) = repo.find_tree(tree) else {
        out.complete = false;
        return;
    };
    let Ok(decoded) = found.decode() else {
        out.complete = false;
        return;
    };
    let entries: Vec<(BString, u32, ObjectId)> = decoded
        .entries
        .iter()
        .map(|entry| {
            let mut path = dir.clone();
            path.push(b'/');
            path.extend_from_slice(entry.filename);
            (path, u32::from(entry.mode.value()), entry.oid.to_owned())
        })
        .collect();
    for (path, mode, id) in entries {
        if mode == MODE_TREE {
            deleted_below(repo, id, &path, out);
        } else {
            out.deleted.push(path);
        }
    }
}

/// How many of `items` (sorted by path, all below the same directory of `prefix` bytes, the
/// first below `dir` in it) are below `dir`: they come first, so a bisection finds the end and
/// each item is looked at once per tree, not once per directory above it.
fn run_below(items: &[Item], prefix: usize, dir: &[u8]) -> usize {
    items.partition_point(|item| item.path[prefix..].starts_with(dir))
}

/// Build the tree for `items` (sorted by path, all below the same directory of `prefix` bytes).
pub(super) fn build_tree(
    items: &[Item],
    prefix: usize,
    hasher: &mut Hasher<'_>,
) -> Result<ObjectId, Error> {
    let mut data = Vec::with_capacity(items.len() * 48);
    let mut i = 0;
    while i < items.len() {
        let rest = &items[i].path[prefix..];
        match rest.find_byte(b'/') {
            // A sparse directory entry ("dir/") is already a tree.
            Some(slash) if slash + 1 == rest.len() && items[i].mode == MODE_TREE => {
                push_entry(&mut data, MODE_TREE, &rest[..slash], &items[i].id);
                i += 1;
            }
            Some(slash) => {
                let dir = &rest[..=slash];
                let end = i + run_below(&items[i..], prefix, dir);
                let id = build_tree(&items[i..end], prefix + dir.len(), hasher)?;
                if let Some(dirs) = &mut hasher.dirs {
                    dirs.push((items[i].path[..prefix + slash].into(), id));
                }
                push_entry(&mut data, MODE_TREE, &rest[..slash], &id);
                i = end;
            }
            None => {
                push_entry(&mut data, items[i].mode, rest, &items[i].id);
                i += 1;
            }
        }
    }
    hasher.object(gix::objs::Kind::Tree, &data, "a tree of the state")
}

fn push_entry(data: &mut Vec<u8>, mode: u32, name: &[u8], id: &gix::oid) {
    // As git writes them: a tree's mode without its leading zero. Formatted only for a mode
    // of another kind, which a tree built here never holds.
    match mode {
        MODE_FILE => data.extend_from_slice(b"100644 "),
        MODE_EXECUTABLE => data.extend_from_slice(b"100755 "),
        MODE_TREE => data.extend_from_slice(b"40000 "),
        MODE_SYMLINK => data.extend_from_slice(b"120000 "),
        MODE_GITLINK => data.extend_from_slice(b"160000 "),
        other => data.extend_from_slice(format!("{other:o} ").as_bytes()),
    }
    data.extend_from_slice(name);
    data.push(0);
    data.extend_from_slice(id.as_bytes());
}

/// The file `path` leads to among a state's sorted `items`, followed through links within the
/// state (`script_link::resolve`). A link's text is read from the object database, else from
/// the worktree, where the state found it.
fn resolve_in_items(
    repo: &gix::Repository,
    workdir: &Path,
    items: &[Item],
    path: &str,
) -> Result<Option<(ObjectId, u32)>, Error> {
    let mut entry = |at: &str| {
        let exact = at.as_bytes();
        let i = items.partition_point(|item| item.path.as_slice() < exact);
        if let Some(item) = items.get(i).filter(|item| item.path == exact) {
            return Ok(Some((item.id, item.mode)));
        }
        // No entry of its own but entries under it: a directory.
        let dir = [exact, b"/"].concat();
        let i = items.partition_point(|item| item.path.as_slice() < dir.as_slice());
        Ok(items
            .get(i)
            .filter(|item| item.path.starts_with(&dir))
            .map(|_| (ObjectId::null(repo.object_hash()), MODE_TREE)))
    };
    let mut link_text = |at: &str, id: ObjectId| {
        if let Ok(blob) = repo.find_blob(id) {
            return Ok(blob.data.clone());
        }
        let abs = workdir.join(at);
        std::fs::read_link(&abs)
            .map(|target| target.as_os_str().as_bytes().to_vec())
            .map_err(|source| Error::Unreadable { path: abs, source })
    };
    super::script_link::resolve(path, &mut entry, &mut link_text)
}

#[cfg(test)]
mod tests {
    use super::super::test_repo::{commit_all, git_repo, run};
    use super::{Differing, IndexTrust, differing};

    fn commit(dir: &std::path::Path, files: &[(&str, &str)], gone: &[&str]) -> gix::ObjectId {
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        for path in gone {
            std::fs::remove_file(dir.join(path)).unwrap();
        }
        commit_all(dir, "c");
        run(dir, &["rev-parse", "HEAD^{tree}"])
            .trim()
            .parse()
            .unwrap()
    }

    // The state expected of a worktree that holds exactly a commit is the one read from a
    // clean checkout of it: the same tree, paths, folders and verify.sh (followed through
    // its link).
    #[test]
    fn the_expected_state_of_a_commit_is_the_state_read_from_its_checkout() {
        let (dir, repo) = git_repo();
        let tree = commit(
            dir.path(),
            &[
                ("run-me.sh", "#!/bin/sh\nexit 0\n"),
                ("a-b.txt", "1\n"),
                ("a/b.txt", "2\n"),
                ("a.txt", "3\n"),
                ("d/e/f.txt", "4\n"),
            ],
            &[],
        );
        std::os::unix::fs::symlink("run-me.sh", dir.path().join("verify.sh")).unwrap();
        let tree2 = {
            commit_all(dir.path(), "link");
            run(dir.path(), &["rev-parse", "HEAD^{tree}"])
                .trim()
                .parse::<gix::ObjectId>()
                .unwrap()
        };
        assert_ne!(tree, tree2);
        let read = repo.state_tree(false).unwrap();
        let expected = repo.expected_state(tree2).unwrap();
        assert_eq!(expected.id, read.id);
        assert_eq!(expected.verify, read.verify);
        assert!(expected.verify.is_some());
        assert_eq!(
            expected.dir_paths().collect::<Vec<_>>(),
            read.dir_paths().collect::<Vec<_>>()
        );
        assert_eq!(expected.changed_paths(&read), Vec::<String>::new());
        let paths = |state: &super::StateTree| {
            state
                .items()
                .iter()
                .map(|item| (item.path.clone(), item.mode, item.id))
                .collect::<Vec<_>>()
        };
        assert_eq!(paths(&expected), paths(&read));
    }

    // A worktree whose own path goes through a link (a checkout opened by a path through a
    // linked folder) is read as git reads it: the links git leaves out are those below it.
    #[test]
    fn a_worktree_opened_through_a_linked_path_is_read_whole() {
        let (dir, _) = git_repo();
        let tree = commit(dir.path(), &[("a.txt", "1\n"), ("d/e.txt", "2\n")], &[]);
        let link = dir.path().with_extension("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        let through = super::Repo::discover(&link).unwrap();
        assert!(
            through.workdir().unwrap().starts_with(&link),
            "{:?}",
            through.workdir()
        );
        let (read, _) = through.state_tree_from_disk(IndexTrust::Disk).unwrap();
        std::fs::remove_file(&link).unwrap();
        assert_eq!(read.id, tree);
    }

    // The reading after a run trusts only what the last reading found unchanged since (its
    // ctime before that reading's stamp): a file changed after it is read again, and the
    // reading lends its own trust to the next.
    #[test]
    fn the_reading_after_a_run_reads_what_changed_since_the_last_reading() {
        let (dir, repo) = git_repo();
        let tree = commit(dir.path(), &[("a.txt", "good\n"), ("b.txt", "kept\n")], &[]);
        let (first, trust) = repo.state_tree_from_disk(IndexTrust::Disk).unwrap();
        assert_eq!(first.id, tree);
        std::fs::write(dir.path().join("a.txt"), "evil\n").unwrap();
        let start = repo.mark_run_start().unwrap();
        let (after, next) = repo.state_tree_since_read(start, trust).unwrap();
        assert_ne!(after.id, tree, "a.txt was read again");
        assert_eq!(after.changed_paths(&first), ["a.txt"]);
        assert!(matches!(next, IndexTrust::Since { tree, .. } if tree == after.id));
    }

    // The comparison with the anchor names every path whose entry differs, however deep, and
    // every path of a directory the anchor did not have, and nothing of a directory whose tree
    // is the anchor's.
    #[test]
    fn the_paths_unlike_the_anchors_are_found_below_every_directory_that_differs() {
        let (dir, repo) = git_repo();
        let same = [("keep/a.txt", "a\n"), ("keep/deep/b.txt", "b\n")];
        let mut files = same.to_vec();
        files.extend([("top.txt", "1\n"), ("d/e/f.txt", "1\n"), ("d/g.txt", "1\n")]);
        files.push(("old/h.txt", "1\n"));
        let anchor = commit(dir.path(), &files, &[]);
        commit(
            dir.path(),
            &[("d/e/f.txt", "2\n"), ("new/i.txt", "1\n")],
            &["old/h.txt"],
        );
        let state = repo.state_tree(true).unwrap();
        let mut found = Differing::default();
        differing(
            &repo.git,
            &state.entries,
            0,
            0,
            &state.dirs,
            anchor,
            &mut found,
        )
        .unwrap();
        assert!(found.complete);
        let suspects: Vec<String> = found
            .suspects
            .into_iter()
            .map(|(i, _)| state.entries[i].path.to_string())
            .collect();
        assert_eq!(suspects, ["d/e/f.txt", "new/i.txt"]);
        assert_eq!(found.deleted, ["old/h.txt"]);
        // Against itself, nothing.
        let mut none = Differing::default();
        differing(
            &repo.git,
            &state.entries,
            0,
            0,
            &state.dirs,
            state.id,
            &mut none,
        )
        .unwrap();
        assert!(none.suspects.is_empty() && none.deleted.is_empty() && none.complete);
    }

    // What a state built under an anchor says changed since it is what a comparison of the two
    // trees finds: added, changed and deleted files, a file become a directory and the reverse,
    // a directory deleted whole, an executable bit, and a file whose index entry is stale.
    #[test]
    fn the_changes_since_the_anchor_are_the_trees_differences() {
        let (dir, repo) = git_repo();
        let files = [
            ("keep/a.txt", "a\n"),
            ("mod.txt", "1\n"),
            ("gone.txt", "1\n"),
            ("becomes_dir", "1\n"),
            ("becomes_file/x.txt", "1\n"),
            ("whole/deep/y.txt", "1\n"),
            ("whole/z.txt", "1\n"),
            ("exec.sh", "echo\n"),
            ("stale.txt", "1\n"),
        ];
        commit(dir.path(), &files, &[]);
        let anchor = repo.state_tree(true).unwrap();
        let root = dir.path();
        std::fs::write(root.join("mod.txt"), "2\n").unwrap();
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        std::fs::remove_file(root.join("becomes_dir")).unwrap();
        std::fs::create_dir(root.join("becomes_dir")).unwrap();
        std::fs::write(root.join("becomes_dir/in.txt"), "1\n").unwrap();
        std::fs::remove_dir_all(root.join("becomes_file")).unwrap();
        std::fs::write(root.join("becomes_file"), "1\n").unwrap();
        std::fs::remove_dir_all(root.join("whole")).unwrap();
        std::fs::write(root.join("new.txt"), "1\n").unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(root.join("exec.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        // The index says one thing, the disk another, with the stat data made to match.
        run(
            root,
            &[
                "update-index",
                "--cacheinfo",
                "100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,stale.txt",
            ],
        );
        let trust = IndexTrust::Since {
            tree: anchor.id,
            before: super::FsTime::whole_second(i64::MAX),
        };
        let state = repo.state_tree_trusting(trust).unwrap();
        let found = state
            .changed_since_anchor(anchor.id)
            .expect("built under the anchor");
        let compared = repo.changed_outside(&state, &[], anchor.id).unwrap();
        let files: Vec<&String> = compared
            .iter()
            .filter(|path| {
                !["becomes_dir", "becomes_file", "whole", "whole/deep"].contains(&path.as_str())
            })
            .collect();
        let found: Vec<&String> = found
            .iter()
            .filter(|p| *p != "becomes_dir" && *p != "becomes_file")
            .collect();
        assert_eq!(found, files, "{compared:?}");
        assert!(found.iter().any(|p| *p == "whole/deep/y.txt"));
        assert!(found.iter().any(|p| *p == "exec.sh"));
        assert!(
            !found.iter().any(|p| *p == "stale.txt"),
            "the disk is the anchor's: {found:?}"
        );
        assert!(
            state.changed_since_anchor(state.id).is_none(),
            "another anchor"
        );
    }

    /// Gives `path`'s index entry the stat data of the file on disk, keeping its blob: an index
    /// that claims the committed content for whatever the file now holds.
    fn forge_index_stat(dir: &std::path::Path, path: &str) {
        let repo = gix::open(dir).unwrap();
        let mut index = repo.open_index().unwrap();
        let stat = rustix::fs::lstat(dir.join(path)).unwrap();
        let forged = super::DiskStat(stat).index_stat();
        let at = index
            .entry_index_by_path(path.into())
            .expect("the path is tracked");
        index.entries_mut()[at].stat = forged;
        index.write(gix::index::write::Options::default()).unwrap();
    }

    // A reading from disk lends the next one only the files older than its stamp on the
    // filesystem's clock: one changed just after it, within the same second, with the index
    // forged to claim the committed blob for it, is read again.
    #[test]
    fn a_file_changed_just_after_a_reading_is_read_again_whatever_the_index_claims() {
        let (dir, repo) = git_repo();
        let committed = commit(dir.path(), &[("a.txt", "good\n"), ("b/c.txt", "c\n")], &[]);
        let (first, trust) = repo.state_tree_from_disk(IndexTrust::Disk).unwrap();
        assert_eq!(first.id, committed);
        std::fs::write(dir.path().join("a.txt"), "evil\n").unwrap();
        // Its mtime set back, so that no check for racily clean entries reads it either.
        let minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(dir.path().join("a.txt"))
            .and_then(|file| file.set_modified(minute_ago))
            .unwrap();
        forge_index_stat(dir.path(), "a.txt");
        assert_eq!(
            repo.state_tree(false).unwrap().id,
            committed,
            "the forged index claims the committed blob"
        );
        let (second, _) = repo.state_tree_from_disk(trust).unwrap();
        assert_ne!(second.id, committed, "the new bytes were not read");
        std::fs::write(dir.path().join("a.txt"), "good\n").unwrap();
        assert_eq!(repo.state_tree_from_disk(trust).unwrap().0.id, committed);
    }

    // An anchor whose trees are not in the object database vouches for nothing: the state is
    // still computed, every file read from disk.
    #[test]
    fn an_anchor_tree_missing_from_the_object_database_reads_every_file() {
        let (dir, repo) = git_repo();
        let head = commit(dir.path(), &[("a.txt", "a\n")], &[]);
        let missing = gix::ObjectId::from_hex(b"1111111111111111111111111111111111111111").unwrap();
        let trust = IndexTrust::Since {
            tree: missing,
            before: super::FsTime::whole_second(i64::MAX),
        };
        assert_eq!(repo.state_tree_trusting(trust).unwrap().id, head);
    }
}
