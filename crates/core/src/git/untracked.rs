//! The untracked and ignored paths of a worktree, as git's directory walk (`gix::dir`) finds
//! them, for the state tree.
//!
//! The walk looks each name on disk up in the index, a binary search over every entry: at 100k
//! files that is most of a cache-hit stop's own work. Most directories hold nothing but their
//! tracked entries, so a first pass reads each tracked directory and compares its names with
//! the index's, one directory's entries at a time. A file or link the index does not hold is
//! untracked or ignored by the same ignore rules the walk applies; every other name it cannot
//! account for (a directory the index does not hold, a file where the index has a directory
//! and the reverse, a gitlink, anything else on disk) goes to git's walk, limited to exactly
//! those paths. Where that pass cannot stand for the walk (case folding, precomposed unicode,
//! a sparse index or skip-worktree entries, a directory it cannot read, many such names), the
//! whole worktree is walked as before.

use std::os::fd::{AsFd as _, BorrowedFd};
use std::sync::atomic::AtomicBool;

use gix::bstr::{BStr, BString, ByteSlice};
use gix::dir::entry::Kind;
use gix::index::entry::{Flags, Mode};
#[cfg(target_os = "linux")]
use rustix::fs::RawDir;
use rustix::fs::{AtFlags, FileType, Mode as FsMode, OFlags};

use super::Error;

/// The untracked paths that are not ignored, with their kind, and the ignored ones (a wholly
/// ignored directory once), each whether it is a directory; both sorted.
pub(super) type Walked = (Vec<(BString, Kind)>, Vec<(BString, bool)>);

/// Above this many names for git's walk (new directories, mostly), it is not limited to them:
/// each of its entries is matched against every name.
const MAX_FOR_THE_WALK: usize = 64;

/// The untracked and ignored paths of `repo`'s worktree for `index`, as git's walk finds them.
pub(super) fn untracked(
    repo: &gix::Repository,
    index: &gix::index::State,
) -> Result<Walked, Error> {
    let (mut untracked, mut ignored) = match unaccounted(repo, index)? {
        None => walk(repo, index, None)?,
        Some(found) => match decide(repo, index, found)? {
            Some(walked) => walked,
            None => walk(repo, index, None)?,
        },
    };
    untracked.sort_by(|a, b| a.0.cmp(&b.0));
    ignored.sort();
    Ok((untracked, ignored))
}

/// What git's walk would find for the names `found`: files, links and directories by the ignore
/// rules the walk applies (an ignored directory is one ignored path, never entered), and the
/// walk itself for the rest, then `None` if there are too many of those.
fn decide(
    repo: &gix::Repository,
    index: &gix::index::State,
    found: Unaccounted,
) -> Result<Option<Walked>, Error> {
    let mut for_the_walk = found.for_the_walk;
    let (mut untracked, mut ignored) = (Vec::new(), Vec::new());
    if !found.files.is_empty() || !found.dirs.is_empty() {
        let mut rules = repo
            .excludes(
                index,
                None,
                gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
            )
            .map_err(Error::read("the ignore rules"))?;
        // As the walk asks it: a link is matched as a file, whatever it points at.
        let mut excluded = |path: &BString, mode: Mode| {
            rules
                .at_entry(path.as_bstr(), Some(mode))
                .map(|platform| platform.is_excluded())
                .map_err(Error::read("the ignore rules"))
        };
        for dir in found.dirs {
            if excluded(&dir, Mode::DIR)? {
                ignored.push((dir, true));
            } else {
                // Untracked: what it holds, nested repositories and ignored files included,
                // is the walk's to say.
                for_the_walk.push(dir);
            }
        }
        if for_the_walk.len() > MAX_FOR_THE_WALK {
            return Ok(None);
        }
        for (path, kind) in found.files {
            if excluded(&path, Mode::FILE)? {
                ignored.push((path, false));
            } else {
                untracked.push((path, kind));
            }
        }
    }
    if !for_the_walk.is_empty() {
        let (walked_untracked, walked_ignored) = walk(repo, index, Some(for_the_walk))?;
        untracked.extend(walked_untracked);
        ignored.extend(walked_ignored);
    }
    Ok(Some((untracked, ignored)))
}

/// Git's directory walk over the whole worktree, or over `only` those paths. Ignored paths
/// come with the rest at no cost: the walk classifies them either way, and never enters an
/// ignored directory.
fn walk(
    repo: &gix::Repository,
    index: &gix::index::State,
    only: Option<Vec<BString>>,
) -> Result<Walked, Error> {
    use gix::dir::walk::EmissionMode;
    let options = repo
        .dirwalk_options()
        .map_err(Error::read("the directory walk settings"))?
        .emit_untracked(EmissionMode::Matching)
        .emit_ignored(Some(EmissionMode::CollapseDirectory))
        .emit_tracked(false)
        .emit_pruned(false)
        .emit_empty_directories(false)
        .recurse_repositories(false);
    let mut collect = gix::dir::walk::delegate::Collect::default();
    let interrupt = AtomicBool::new(false);
    // Each path from the top of the worktree, as written: whatever the caller's directory, and
    // whatever glob characters a file name holds.
    let patterns = only.map(|paths| {
        paths
            .into_iter()
            .map(|path| {
                let mut pattern = BString::from(":(top,literal)");
                pattern.extend_from_slice(&path);
                pattern
            })
            .collect::<Vec<_>>()
    });
    repo.dirwalk(
        index,
        patterns.iter().flatten(),
        &interrupt,
        options,
        &mut collect,
    )
    .map_err(Error::read("the untracked files"))?;
    let (ignored, found): (Vec<_>, Vec<_>) = collect
        .unorded_entries
        .into_iter()
        .partition(|(entry, _)| matches!(entry.status, gix::dir::entry::Status::Ignored(_)));
    let ignored = ignored
        .into_iter()
        .map(|(entry, _)| {
            let dir = entry.disk_kind == Some(Kind::Directory);
            (entry.rela_path, dir)
        })
        .collect();
    let untracked = found
        .into_iter()
        .filter(|(entry, _)| entry.status == gix::dir::entry::Status::Untracked)
        // The walk finds index entries in stage 0 or 2 only, so a conflict without "ours"
        // (deleted on our side, added only on theirs) would come back as untracked as well.
        .filter(|(entry, _)| {
            index
                .entry_index_by_path(entry.rela_path.as_bstr())
                .is_err()
        })
        .filter_map(|(entry, _)| entry.disk_kind.map(|kind| (entry.rela_path, kind)))
        .collect();
    Ok((untracked, ignored))
}

/// The names on disk below tracked directories that the index does not hold as they are.
struct Unaccounted {
    /// Files and links the index does not hold at all.
    files: Vec<(BString, Kind)>,
    /// Directories the index does not hold at all.
    dirs: Vec<BString>,
    /// Every other such name (a file where the index has a directory and the reverse, a
    /// gitlink, a conflict, a fifo or a socket), for git's walk.
    for_the_walk: Vec<BString>,
}

/// The names on disk, below tracked directories, that the index does not account for by a
/// tracked entry of the same kind (a directory for a directory, anything else for a file), or
/// `None` where this comparison cannot stand for git's walk.
fn unaccounted(
    repo: &gix::Repository,
    index: &gix::index::State,
) -> Result<Option<Unaccounted>, Error> {
    let fs = repo
        .filesystem_options()
        .map_err(Error::read("core.ignoreCase and core.precomposeUnicode"))?;
    // Case folding and unicode composition change which name on disk is which entry; skip-
    // worktree entries and sparse directories change what git's walk reports below them.
    if fs.ignore_case
        || fs.precompose_unicode
        || index
            .entries()
            .iter()
            .any(|entry| entry.mode == Mode::DIR || entry.flags.contains(Flags::SKIP_WORKTREE))
    {
        return Ok(None);
    }
    let workdir = repo.workdir().ok_or_else(|| Error::Bare {
        path: repo.git_dir().to_owned(),
    })?;
    let Ok(top) = rustix::fs::openat(
        rustix::fs::CWD,
        workdir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        FsMode::empty(),
    ) else {
        return Ok(None);
    };
    let mut scan = Scan {
        index,
        rela: BString::default(),
        found: Unaccounted {
            files: Vec::new(),
            dirs: Vec::new(),
            for_the_walk: Vec::new(),
        },
        children: Vec::new(),
        buf: Vec::with_capacity(32 * 1024),
    };
    let complete = scan.directory(top.as_fd(), 0..index.entries().len());
    Ok(complete.then_some(scan.found))
}

/// What the index holds under one name of a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tracked {
    /// A file or a link, in any stage.
    File,
    /// A directory: the range of index entries below it.
    Dir(usize, usize),
    /// A gitlink: git's walk decides.
    Other,
}

struct Scan<'a> {
    index: &'a gix::index::State,
    /// The directory read, relative to the worktree (empty at its top).
    rela: BString,
    found: Unaccounted,
    /// Reused between directories: the index's names of the one being read.
    children: Vec<(&'a [u8], Tracked)>,
    /// Reused between directories: what `getdents` reads into.
    buf: Vec<u8>,
}

impl<'a> Scan<'a> {
    /// Compare the directory open as `dir` with the index entries `range` below it, then each
    /// tracked subdirectory (opened from `dir`, never through a link). `false` once too many
    /// names are unaccounted for to be worth it, or a directory cannot be read.
    // `RawDir` lends each entry, so it cannot be a `for` loop's iterator; `Dir` elsewhere can.
    #[cfg_attr(not(target_os = "linux"), allow(clippy::while_let_on_iterator))]
    fn directory(&mut self, dir: BorrowedFd<'_>, range: std::ops::Range<usize>) -> bool {
        let children = self.children_of(range);
        // Read into where there is `getdents64`, only kept for the next folder elsewhere.
        #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
        let mut buf = std::mem::take(&mut self.buf);
        let mut subdirs = Vec::new();
        #[cfg(target_os = "linux")]
        let mut entries = RawDir::new(dir, buf.spare_capacity_mut());
        // `readdir` where there is no `getdents64`: the same names and kinds.
        #[cfg(not(target_os = "linux"))]
        let Ok(mut entries) = rustix::fs::Dir::read_from(dir) else {
            return false;
        };
        while let Some(entry) = entries.next() {
            // A directory that cannot be read is git's walk's to report, as before.
            let Ok(entry) = entry else {
                return false;
            };
            let name = entry.file_name().to_bytes();
            // `.git` is the repository's (or a nested one's) and never part of the state.
            if name == b"." || name == b".." || name == b".git" {
                continue;
            }
            let tracked = children
                .binary_search_by(|(child, _)| (*child).cmp(name))
                .ok()
                .map(|i| children[i].1);
            // The kind as the directory lists it; asked of the file only where it does not say.
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    match rustix::fs::statat(dir, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                        Err(_) => return false,
                    }
                }
                kind => kind,
            };
            let is_dir = kind == FileType::Directory;
            match tracked {
                Some(Tracked::File) if !is_dir => {}
                Some(Tracked::Dir(start, end)) if is_dir => {
                    subdirs.push((name.to_vec(), start, end));
                }
                None if kind == FileType::RegularFile => {
                    self.found.files.push((self.joined(name), Kind::File));
                }
                None if kind == FileType::Symlink => {
                    self.found.files.push((self.joined(name), Kind::Symlink));
                }
                None if is_dir => self.found.dirs.push(self.joined(name)),
                _ => {
                    self.found.for_the_walk.push(self.joined(name));
                    if self.found.for_the_walk.len() > MAX_FOR_THE_WALK {
                        return false;
                    }
                }
            }
        }
        self.buf = buf;
        self.children = children;
        for (name, start, end) in subdirs {
            // Not through a link: one put in the directory's place since it was listed is not
            // followed out of the worktree; the walk sees it for what it is.
            let Ok(sub) = rustix::fs::openat(
                dir,
                name.as_slice(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                FsMode::empty(),
            ) else {
                return false;
            };
            let len = self.rela.len();
            self.rela = self.joined(&name);
            let complete = self.directory(sub.as_fd(), start..end);
            self.rela.truncate(len);
            if !complete {
                return false;
            }
        }
        true
    }

    /// `name` in the directory being read, relative to the worktree.
    fn joined(&self, name: &[u8]) -> BString {
        let mut path = self.rela.clone();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(name);
        path
    }

    /// The names the index holds directly below the directory being read, whose entries are
    /// `range`, sorted by name.
    fn children_of(&mut self, range: std::ops::Range<usize>) -> Vec<(&'a [u8], Tracked)> {
        let index = self.index;
        let skip = if self.rela.is_empty() {
            0
        } else {
            self.rela.len() + 1
        };
        let mut children = std::mem::take(&mut self.children);
        children.clear();
        let entries = index.entries();
        let mut i = range.start;
        while i < range.end {
            let path: &'a BStr = entries[i].path(index);
            let rest = &path[skip..];
            match rest.find_byte(b'/') {
                Some(slash) => {
                    // Every entry below this directory follows, in index order: found by
                    // bisection, so that each entry is looked at in its own directory only.
                    let name = &rest[..slash];
                    let prefix = &path[..=(skip + slash)];
                    let start = i;
                    i += entries[i..range.end]
                        .partition_point(|entry| entry.path(index).starts_with(prefix));
                    children.push((name, Tracked::Dir(start, i)));
                }
                None => {
                    let kind = if entries[i].mode == Mode::COMMIT {
                        Tracked::Other
                    } else {
                        Tracked::File
                    };
                    children.push((rest, kind));
                    i += 1;
                }
            }
        }
        // Index order puts `a.txt` before `a/b`; names compare without the slash. A name held
        // both as a file and as a directory (stages of a conflict) is git's walk's to decide.
        children.sort_by(|a, b| a.0.cmp(b.0));
        children.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same && (later.1, earlier.1) != (Tracked::File, Tracked::File) {
                earlier.1 = Tracked::Other;
            }
            same
        });
        children
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;
    use std::path::Path;

    use super::super::test_repo::{commit_all, git_repo, run};
    use super::{Walked, decide, unaccounted, untracked, walk};

    fn write(dir: &Path, path: &str, text: &str) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// What the quick pass and the whole walk find in `dir`, and whether the quick pass stood
    /// for the walk there.
    fn both(dir: &Path) -> (Walked, Walked, bool) {
        let repo = super::super::Repo::discover_at(dir).unwrap();
        let index = repo.git.index_or_empty().unwrap();
        let quick = untracked(&repo.git, &index).unwrap();
        let (mut untracked, mut ignored) = walk(&repo.git, &index, None).unwrap();
        untracked.sort_by(|a, b| a.0.cmp(&b.0));
        ignored.sort();
        let used = unaccounted(&repo.git, &index)
            .unwrap()
            .is_some_and(|found| decide(&repo.git, &index, found).unwrap().is_some());
        (quick, (untracked, ignored), used)
    }

    /// Every shape the quick pass hands on or decides itself, beside the whole walk: it must
    /// find exactly what the walk finds, or the state tree would leave out (or add) a file
    /// the run sees.
    #[test]
    fn the_quick_pass_finds_exactly_what_the_whole_walk_finds() {
        let (tmp, _) = git_repo();
        let dir = tmp.path();
        for path in [
            "a/b/c.txt",
            "a/b/d.txt",
            "a.txt",
            "a-b/x.txt",
            "a0/y.txt",
            "becomes_dir.txt",
            "becomes_file/z.txt",
            "becomes_link/w.txt",
            "logs/keep.log",
            "deep/er/still/f.txt",
            "forced/kept.txt",
        ] {
            write(dir, path, "tracked\n");
        }
        write(dir, ".gitignore", "*.log\n!keep.log\ntarget/\nbuild\n");
        write(dir, "deep/.gitignore", "secret*\n");
        run(dir, &["add", "-A"]);
        // A tracked file below a directory the rules ignore: the directory is walked, and
        // what is new in it is ignored, a re-inclusion notwithstanding.
        std::fs::write(
            dir.join(".git/info/exclude"),
            "forced/\nexcluded-here.txt\n",
        )
        .unwrap();
        write(dir, "forced/.gitignore", "!again.txt\n");
        // Untracked next to tracked files, in new directories, ignored by the root's and a
        // nested rule, negated, with glob characters and spaces in their names.
        for path in [
            "a/b/new.txt",
            "a/new dir/n.txt",
            "fresh/one.txt",
            "fresh/inner/two.txt",
            "a/b/trace.log",
            "logs/keep2.log",
            "target/debug/big.bin",
            "deep/er/secret.txt",
            "deep/er/still/secretive/s.txt",
            "only-ignored/x.log",
            "[a]*?.txt",
            ":(exclude)x",
            "a/b/\\back",
            "build/out.o",
            "forced/new.txt",
            "forced/again.txt",
            "a/excluded-here.txt",
        ] {
            write(dir, path, "untracked\n");
        }
        std::fs::remove_file(dir.join("becomes_dir.txt")).unwrap();
        write(dir, "becomes_dir.txt/inside.txt", "now a directory\n");
        std::fs::remove_dir_all(dir.join("becomes_file")).unwrap();
        write(dir, "becomes_file", "now a file\n");
        std::fs::remove_dir_all(dir.join("becomes_link")).unwrap();
        symlink("a", dir.join("becomes_link")).unwrap();
        symlink("a.txt", dir.join("a/link")).unwrap();
        std::fs::create_dir_all(dir.join("empty/inside")).unwrap();
        run(&dir.join("a"), &["init", "--quiet", "nested"]);
        write(dir, "a/nested/file.txt", "in a nested repository\n");
        let (quick, whole, used) = both(dir);
        assert!(used, "the quick pass stood for the walk");
        assert_eq!(quick, whole);
        assert!(
            quick.0.iter().any(|(path, _)| path == "[a]*?.txt"),
            "{quick:?}"
        );
        assert!(quick.1.iter().any(|(path, _)| path == "a/b/trace.log"));
        // And what git itself lists as untracked and not ignored, a nested repository as its
        // directory.
        let listed = run(dir, &["ls-files", "-o", "--exclude-standard", "-z"]);
        let mut listed: Vec<&str> = listed.split('\0').filter(|p| !p.is_empty()).collect();
        listed.sort_unstable();
        let found: Vec<String> = quick
            .0
            .iter()
            .map(|(path, kind)| match kind {
                super::Kind::Repository => format!("{path}/"),
                _ => path.to_string(),
            })
            .collect();
        assert_eq!(found, listed);
    }

    /// Ignored directories in every package (`__pycache__`) are decided by the rules alone, however
    /// many: the walk would not enter them either.
    #[test]
    fn ignored_directories_everywhere_need_no_walk() {
        let (tmp, _) = git_repo();
        let dir = tmp.path();
        write(dir, ".gitignore", "__pycache__/\n");
        for n in 0..100 {
            write(dir, &format!("pkg{n}/mod.py"), "x = 1\n");
        }
        run(dir, &["add", "-A"]);
        for n in 0..100 {
            write(dir, &format!("pkg{n}/__pycache__/mod.pyc"), "bytes\n");
        }
        let (quick, whole, used) = both(dir);
        assert!(used, "the quick pass stood for the walk");
        assert_eq!(quick, whole);
        assert_eq!(quick.1.len(), 100);
    }

    /// Past a few dozen names for git's walk, the whole worktree is walked, with the same result.
    #[test]
    fn many_new_directories_walk_the_whole_worktree() {
        let (tmp, _) = git_repo();
        let dir = tmp.path();
        write(dir, "tracked.txt", "tracked\n");
        run(dir, &["add", "-A"]);
        for n in 0..100 {
            write(dir, &format!("new{n}/file.txt"), "untracked\n");
        }
        let (quick, whole, used) = both(dir);
        assert!(!used, "the quick pass gave up");
        assert_eq!(quick, whole);
        assert_eq!(quick.0.len(), 100);
    }

    /// A conflict's stages, a gitlink and an intent-to-add entry are the index's; what the
    /// quick pass cannot decide for them goes to the walk.
    #[test]
    fn conflicts_gitlinks_and_intent_to_add_entries_match_the_walk() {
        let (tmp, _) = git_repo();
        let dir = tmp.path();
        write(dir, "base.txt", "base\n");
        commit_all(dir, "base");
        run(dir, &["checkout", "-qb", "other"]);
        write(dir, "both.txt", "theirs\n");
        commit_all(dir, "theirs");
        run(dir, &["checkout", "-q", "-"]);
        write(dir, "both.txt", "ours\n");
        commit_all(dir, "ours");
        let merge = super::super::test_repo::git(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "merge",
                "other",
            ])
            .output()
            .unwrap();
        assert!(!merge.status.success(), "the merge conflicts");
        let sub = "0123456789012345678901234567890123456789";
        run(
            dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{sub},module"),
            ],
        );
        std::fs::create_dir_all(dir.join("module")).unwrap();
        write(dir, "later.txt", "intent\n");
        run(dir, &["add", "-N", "later.txt"]);
        write(dir, "stray.txt", "untracked\n");
        let (quick, whole, used) = both(dir);
        assert!(used);
        assert_eq!(quick, whole);
        assert_eq!(quick.0.len(), 1, "{quick:?}");
    }
}
