//! Commits as `check` and `log` see them: revisions resolved and walked with gix, and for each
//! commit its tree, the verify.sh that tree holds, and whether it holds a checks file.

use gix::ObjectId;
use gix::revision::plumbing::Spec;

use super::names::{CHECKS_FILE, VERIFY_SCRIPT};
use super::{Error, Repo};

/// What revision arguments select: commits to start from, and commits whose ancestry is excluded.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Selection {
    pub tips: Vec<ObjectId>,
    pub hidden: Vec<ObjectId>,
}

/// One commit and what proving it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: ObjectId,
    pub tree: ObjectId,
    /// The first line of the message, as `git log --oneline` shows it.
    pub subject: String,
    /// verify.sh at the root of the commit's tree: its blob and mode, if there is one.
    pub verify: Option<(ObjectId, u32)>,
    /// `prove-it.toml` at the root of the commit's tree: its blob and mode, if there is one.
    /// Only a commit with one has its checks read (SPEC.md section 2.1).
    pub checks_file: Option<(ObjectId, u32)>,
}

impl Repo {
    /// Resolve revision arguments (`HEAD`, `main~2`, `a..b`, `a...b`, `^a`, `a^!`, `a^@`) into a
    /// selection, peeling tags to the commits they name. No argument means HEAD, as for git log.
    pub fn select(&self, specs: &[String]) -> Result<Selection, Error> {
        if specs.is_empty() {
            return self.select(&["HEAD".to_string()]);
        }
        let mut selection = Selection::default();
        for spec in specs {
            let bad = |source| Error::Revision {
                spec: spec.clone(),
                source,
            };
            let parsed = self.git.rev_parse(spec.as_str()).map_err(bad)?.detach();
            let commit = |id: ObjectId| self.peel_to_commit(id, spec);
            match parsed {
                Spec::Include(id) => selection.tips.push(commit(id)?),
                Spec::Exclude(id) => selection.hidden.push(commit(id)?),
                Spec::Range { from, to } => {
                    selection.tips.push(commit(to)?);
                    selection.hidden.push(commit(from)?);
                }
                Spec::Merge { theirs, ours } => {
                    let (theirs, ours) = (commit(theirs)?, commit(ours)?);
                    selection.tips.extend([theirs, ours]);
                    if let Some(base) = self.git.merge_base(theirs, ours).map_err(bad)? {
                        selection.hidden.push(base.detach());
                    }
                }
                Spec::IncludeOnlyParents(id) => {
                    selection.tips.extend(self.parents(commit(id)?, spec)?);
                }
                Spec::ExcludeParents(id) => {
                    let id = commit(id)?;
                    selection.tips.push(id);
                    selection.hidden.extend(self.parents(id, spec)?);
                }
            }
        }
        Ok(selection)
    }

    /// The tree `spec` names when it names a tree itself (a tree id, `HEAD^{tree}`); `None`
    /// when it names anything else, a commit or a range included.
    pub fn named_tree(&self, spec: &str) -> Result<Option<ObjectId>, Error> {
        let Ok(Spec::Include(id)) = self.git.rev_parse(spec).map(gix::revision::Spec::detach)
        else {
            return Ok(None);
        };
        let object = self
            .git
            .find_object(id)
            .map_err(Error::read(format!("the object {id} named by {spec:?}")))?;
        Ok((object.kind == gix::object::Kind::Tree).then_some(id))
    }

    fn peel_to_commit(&self, id: ObjectId, spec: &str) -> Result<ObjectId, Error> {
        let object = self
            .git
            .find_object(id)
            .map_err(Error::read(format!("the object {id} named by {spec:?}")))?;
        object
            .peel_to_commit()
            .map(|commit| commit.id)
            .map_err(|_| Error::NotACommit {
                spec: spec.to_string(),
            })
    }

    fn parents(&self, id: ObjectId, spec: &str) -> Result<Vec<ObjectId>, Error> {
        let commit = self
            .git
            .find_commit(id)
            .map_err(Error::read(format!("the commit {id} named by {spec:?}")))?;
        Ok(commit.parent_ids().map(gix::Id::detach).collect())
    }

    /// The commits of `selection`, newest first as `git log` lists them, at most `limit`.
    pub fn walk(
        &self,
        selection: &Selection,
        limit: Option<usize>,
    ) -> Result<Vec<ObjectId>, Error> {
        let walk = self
            .git
            .rev_walk(selection.tips.iter().copied())
            .sorting(gix::revision::walk::Sorting::ByCommitTime(
                gix::traverse::commit::simple::CommitTimeOrder::default(),
            ))
            .with_hidden(selection.hidden.iter().copied())
            .all()
            .map_err(Error::read("the commit history"))?;
        let mut ids = Vec::new();
        for info in walk.take(limit.unwrap_or(usize::MAX)) {
            ids.push(info.map_err(Error::read("the commit history"))?.id);
        }
        Ok(ids)
    }

    /// A commit's tree, subject and verify.sh.
    pub fn commit_info(&self, id: ObjectId) -> Result<CommitInfo, Error> {
        commit_info(&self.git, id)
    }
}

fn commit_info(git: &gix::Repository, id: ObjectId) -> Result<CommitInfo, Error> {
    let head = commit_head(git, id)?;
    let (verify, checks_file) = root_scripts(git, head.tree)?;
    Ok(CommitInfo {
        verify,
        checks_file,
        id,
        tree: head.tree,
        subject: head.subject,
    })
}

impl Repo {
    /// Each commit with the proofs note of its tree, read from one view of the notes ref and
    /// turned into a `T` by `each`, in the order of `ids`. Long lists are split over the
    /// machine's cores: reading three objects a commit (the commit, its root tree and the
    /// note) is most of what `check` and `log` cost.
    /// `each` is also given the thread's own handle on the repository and its view of the
    /// proofs ref, for what it reads beyond the tree's own note (a checks file's input trees).
    pub fn commits_with_notes<T: Send>(
        &self,
        ids: &[ObjectId],
        each: impl Fn(&Repo, &mut super::Notes<'_>, CommitInfo, Option<String>) -> T + Sync,
    ) -> Result<Vec<T>, Error> {
        // The commits first, here: the walk that listed them has just read them through this
        // handle's object cache. The threads then read only root trees and notes.
        let commits = ids
            .iter()
            .map(|&id| commit_head(&self.git, id))
            .collect::<Result<Vec<_>, _>>()?;
        // Over many commits, one walk of the notes tree into a map costs less than a walk down
        // its fanout levels per commit, and is shared by every thread.
        let index = if ids.len() >= INDEX_AT_LEAST {
            Some(std::sync::Arc::new(self.notes_index(super::PROOFS_REF)?))
        } else {
            None
        };
        let threads = crate::process::cpus().min(ids.len().div_ceil(PER_THREAD_AT_LEAST));
        if threads <= 1 {
            return with_notes(self, commits, index, &each);
        }
        let chunk = ids.len().div_ceil(threads);
        let mut commits = commits.into_iter();
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let part: Vec<Head> = commits.by_ref().take(chunk).collect();
                    // A handle of its own per thread: gix repositories are Send, not Sync.
                    let repo = self.handle();
                    let each = &each;
                    let index = index.clone();
                    scope.spawn(move || with_notes(&repo, part, index, each))
                })
                .collect();
            let mut all = Vec::with_capacity(ids.len());
            for worker in workers {
                all.extend(worker.join().expect("a history worker does not panic")?);
            }
            Ok(all)
        })
    }
}

/// A commit's id, tree and subject: what the commit object itself says.
struct Head {
    id: ObjectId,
    tree: ObjectId,
    subject: String,
}

fn commit_head(git: &gix::Repository, id: ObjectId) -> Result<Head, Error> {
    let what = || format!("the commit {id}");
    let commit = git.find_commit(id).map_err(|e| Error::read(what())(e))?;
    let tree = commit
        .tree_id()
        .map_err(|e| Error::read(what())(e))?
        .detach();
    let subject = commit
        .message()
        .map(|message| message.summary().to_string())
        .unwrap_or_default();
    Ok(Head { id, tree, subject })
}

/// An entry at the root of a tree: its object and mode.
type RootEntry = Option<(ObjectId, u32)>;

/// The verify.sh (followed through links to the file that runs) and the checks file at the
/// root of `tree`, each if it has one.
fn root_scripts(git: &gix::Repository, tree: ObjectId) -> Result<(RootEntry, RootEntry), Error> {
    let tree = git
        .find_tree(tree)
        .map_err(|e| Error::read(format!("the tree {tree}"))(e))?;
    let entry = |name: &str| {
        tree.find_entry(name)
            .map(|entry| (entry.oid().to_owned(), u32::from(entry.mode().value())))
    };
    let verify = super::script_link::in_read_tree(git, &tree, VERIFY_SCRIPT)?;
    Ok((verify, entry(CHECKS_FILE)))
}

/// `commits_with_notes` on one thread, from the commits' heads.
fn with_notes<T>(
    repo: &Repo,
    commits: Vec<Head>,
    index: Option<std::sync::Arc<super::notes::NotesIndex>>,
    each: &impl Fn(&Repo, &mut super::Notes<'_>, CommitInfo, Option<String>) -> T,
) -> Result<Vec<T>, Error> {
    let git = &repo.git;
    // One `Notes` for all: it keeps the fanout levels it opened (or reads the index), so
    // lookups stay cheap over thousands of commits.
    let mut notes = match index {
        Some(index) => repo.notes_through(super::PROOFS_REF, index),
        None => super::Notes::new(git, super::PROOFS_REF),
    };
    // Sized beforehand: a `T` is far larger than a commit's head, so collecting in place
    // would grow the vector step by step.
    let mut all = Vec::with_capacity(commits.len());
    for head in commits {
        let (verify, checks_file) = root_scripts(git, head.tree)?;
        let info = CommitInfo {
            verify,
            checks_file,
            id: head.id,
            tree: head.tree,
            subject: head.subject,
        };
        let note = notes.lookup(&info.tree)?;
        all.push(each(repo, &mut notes, info, note));
    }
    Ok(all)
}

/// From this many commits on, the notes tree is read once into a map: a lookup through the
/// fanout levels reads one or two trees, and a tree of 10k notes has 257.
const INDEX_AT_LEAST: usize = 256;

/// Below this many commits a thread costs more than it saves.
const PER_THREAD_AT_LEAST: usize = 500;

impl Repo {
    /// The commit `id` is or points at (through tags), or `None` when it is something else or
    /// not in this repository.
    pub fn peeled_commit(&self, id: ObjectId) -> Option<ObjectId> {
        let object = self.git.try_find_object(id).ok()??;
        object.peel_to_commit().ok().map(|commit| commit.id)
    }

    /// The commits the remote-tracking branches of `remote` point at: what we know it has.
    pub fn remote_branch_tips(&self, remote: &str) -> Result<Vec<ObjectId>, Error> {
        let what = || format!("the remote-tracking branches of {remote}");
        let platform = self.git.references().map_err(Error::read(what()))?;
        let prefix = format!("refs/remotes/{remote}/");
        let mut tips = Vec::new();
        for reference in platform
            .prefixed(prefix.as_str())
            .map_err(Error::read(what()))?
        {
            let Ok(mut reference) = reference else {
                continue;
            };
            if let Ok(id) = reference.peel_to_id() {
                tips.extend(self.peeled_commit(id.detach()));
            }
        }
        Ok(tips)
    }
}
