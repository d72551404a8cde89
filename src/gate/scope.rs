//! Which worktrees a stop gates. A stop's `cwd` follows the
//! agent's shell, so it cannot be what decides: the stop gates every worktree the session
//! anchored, wherever `cwd` points. They are found in the session index (written at session
//! start), and in the repositories of the cwd and of the host's project directory when those
//! hold this session's anchor. A repository the session did not anchor, while it anchored
//! others, is not run: code nobody opted into never runs by itself. When the session anchored
//! nothing at all (SessionStart not wired), the cwd's repository is gated as it always was (else
//! the host's project's), and the words say the anchor was missing.
//!
//! Facts only: nothing here runs verify.sh or writes anything.

use std::path::{Path, PathBuf};

use super::error::Error;
use super::event::Stop;
use super::host::HostRules;
use super::observe::{lookup_anchor, worktree};
use super::session_index::{self, SessionIndex};
use crate::git::{self, Repo, session_key};

/// One thing a stop's answer is about.
pub(crate) enum Target {
    /// A worktree to gate. `anchored`: this session recorded its anchor there, so a missing
    /// anchor is an error rather than "no anchor, count it as changed".
    Gate {
        repo: Box<Repo>,
        worktree: PathBuf,
        anchored: bool,
    },
    /// The cwd's (or the host project's) repository, armed, which this session did not anchor
    /// while it anchored others: its verify.sh is not run.
    NotGated { worktree: PathBuf },
    /// A worktree this session anchored that cannot be gated as one (bare now, its .git gone
    /// or replaced), or, when the session anchored nothing, a cwd that could not be read.
    Broken {
        worktree: Option<PathBuf>,
        error: Error,
    },
    /// The cwd could not be read while the session anchored worktrees, which were gated.
    CwdUnreadable { error: git::Error },
}

/// What a stop is about, and the cwd's own worktree (whose answer needs no name).
pub(crate) struct Scope {
    pub targets: Vec<Target>,
    pub cwd_worktree: Option<PathBuf>,
}

/// A directory as discovery sees it.
enum Found {
    /// In the worktree of `repo` (whose canonical root is the path).
    Worktree(Box<Repo>, PathBuf),
    /// In no repository: nothing to gate.
    Nothing,
    /// In a bare repository (this git dir): nothing to gate, unless it was a worktree this
    /// session anchored before `core.bare` was set.
    Bare(PathBuf),
    /// Discovery failed for another reason: never read as "nothing".
    Failed(git::Error),
}

fn find(dir: &Path) -> Found {
    match Repo::discover_at(dir) {
        Ok(repo) => match worktree(&repo) {
            Ok(root) => Found::Worktree(Box::new(repo), root),
            Err(error) => Found::Failed(error),
        },
        Err(git::Error::NotARepository { .. }) => Found::Nothing,
        Err(git::Error::Bare { path }) => Found::Bare(path),
        Err(error) => Found::Failed(error),
    }
}

/// Whether this session's anchor is in `repo` for `root`. An anchor that cannot be read counts
/// as there: observing it then fails loudly.
fn holds_anchor(repo: &Repo, root: &Path, session: &str) -> bool {
    lookup_anchor(repo, &session_key(session, root)).map_or(true, |anchor| anchor.is_some())
}

/// What `event` is about: `index` is the per-user session index (its error when it could not
/// be located).
pub(crate) fn stop(
    index: &Result<SessionIndex, session_index::Error>,
    host: &dyn HostRules,
    event: &Stop,
) -> Scope {
    let mut scope = Gathering::default();
    let mut cwd = find(&event.cwd);
    // A host that names no project directory names nothing to find.
    let mut project = host.project_dir().map_or(Found::Nothing, |dir| find(&dir));
    let cwd_worktree = match &cwd {
        Found::Worktree(_, root) => Some(root.clone()),
        _ => None,
    };
    let entries = match index {
        Ok(index) => index.worktrees(&event.session).unwrap_or_else(|error| {
            scope.targets.push(Target::Broken {
                worktree: None,
                error: error.into(),
            });
            Vec::new()
        }),
        // Without a home there is no index to read; the cwd and the project still count.
        Err(_) => Vec::new(),
    };
    for entry in entries {
        scope.indexed(entry, [&mut cwd, &mut project]);
    }
    // The cwd's and the project's repositories: anchored there by this session (an index that
    // lost its entry, a session started by an older build), or not.
    let unanchored: Vec<(Found, bool)> = [(cwd, true), (project, false)]
        .into_iter()
        .filter_map(|(found, is_cwd)| scope.anchored_without_index(found, &event.session, is_cwd))
        .collect();
    // The index's own read error anchors nothing: it must not keep the cwd from being gated.
    let anchored_any = scope.targets.iter().any(|target| {
        matches!(
            target,
            Target::Gate { .. }
                | Target::Broken {
                    worktree: Some(_),
                    ..
                }
        )
    });
    if anchored_any {
        for (found, is_cwd) in unanchored {
            scope.not_anchored(found, is_cwd);
        }
    } else {
        scope.fallback(unanchored);
    }
    Scope {
        targets: scope.targets,
        cwd_worktree,
    }
}

/// The targets of a stop as they are found, and the worktrees they name, each once.
#[derive(Default)]
struct Gathering {
    targets: Vec<Target>,
    gated: Vec<PathBuf>,
}

impl Gathering {
    /// A worktree the session index says the session anchored: gated, or broken when it
    /// cannot be opened or is now inside another. The cwd's or the project's repository, when
    /// it is this worktree, is taken from `found` rather than opened again.
    fn indexed(&mut self, entry: PathBuf, found: [&mut Found; 2]) {
        if self.gated.contains(&entry) {
            return;
        }
        self.gated.push(entry.clone());
        let opened = found
            .into_iter()
            .find_map(|found| match found {
                Found::Worktree(_, root) if *root == entry => {
                    match std::mem::replace(found, Found::Nothing) {
                        Found::Worktree(repo, _) => Some(Ok(repo)),
                        _ => None,
                    }
                }
                _ => None,
            })
            .unwrap_or_else(|| Repo::discover_at(&entry).map(Box::new));
        self.targets.push(match opened {
            Ok(repo) => match worktree(&repo) {
                Ok(root) if root == entry => Target::Gate {
                    repo,
                    worktree: entry,
                    anchored: true,
                },
                Ok(root) => Target::Broken {
                    error: Error::MovedInto {
                        worktree: entry.clone(),
                        inside: root,
                    },
                    worktree: Some(entry),
                },
                Err(source) => broken(entry, source),
            },
            Err(source) => broken(entry, source),
        });
    }

    /// The cwd's or the project's repository when it holds the session's anchor though the
    /// index does not name it: gated. `Some` what was found when it is not anchored there.
    fn anchored_without_index(
        &mut self,
        found: Found,
        session: &str,
        is_cwd: bool,
    ) -> Option<(Found, bool)> {
        match found {
            Found::Worktree(repo, root) if self.gated.contains(&root) => drop(repo),
            Found::Worktree(repo, root) if holds_anchor(&repo, &root, session) => {
                self.gated.push(root.clone());
                self.targets.push(Target::Gate {
                    repo,
                    worktree: root,
                    anchored: true,
                });
            }
            // A worktree made to look bare (`core.bare true`) still holds the session's anchor,
            // under the worktree its git dir was in: refused loudly even without the index.
            Found::Bare(git_dir) => match anchored_bare(&git_dir, session) {
                Some(worktree) if !self.gated.contains(&worktree) => {
                    self.gated.push(worktree.clone());
                    self.targets.push(broken(
                        worktree,
                        git::Error::Bare {
                            path: git_dir.clone(),
                        },
                    ));
                }
                _ => {}
            },
            other => return Some((other, is_cwd)),
        }
        None
    }

    /// Where the session anchored elsewhere: the cwd's or the project's repository it did not
    /// anchor is named as not gated (when armed: nothing of an unarmed one would have run), and
    /// one that cannot be read is said.
    fn not_anchored(&mut self, found: Found, is_cwd: bool) {
        match found {
            Found::Worktree(repo, root) if !self.gated.contains(&root) => {
                self.gated.push(root.clone());
                if repo.armed().map_or(true, |armed| {
                    armed.is_armed() || armed.link_problem().is_some()
                }) {
                    self.targets.push(Target::NotGated { worktree: root });
                }
            }
            Found::Failed(error) if is_cwd => self.targets.push(Target::CwdUnreadable { error }),
            // The host's project directory is the host's word, not the agent's: when it
            // cannot be read, that is said too.
            Found::Failed(error) => self.targets.push(Target::Broken {
                worktree: None,
                error: error.into(),
            }),
            _ => {}
        }
    }

    /// The session anchored nothing: the cwd's repository, as before, and the project's when
    /// the cwd is in none.
    fn fallback(&mut self, unanchored: Vec<(Found, bool)>) {
        let mut fallback = false;
        for (found, _) in unanchored {
            match found {
                Found::Worktree(repo, root) if !fallback => {
                    fallback = true;
                    self.targets.push(Target::Gate {
                        repo,
                        worktree: root,
                        anchored: false,
                    });
                }
                Found::Failed(error) => self.targets.push(Target::Broken {
                    worktree: None,
                    error: error.into(),
                }),
                _ => {}
            }
        }
    }
}

/// The worktree a bare-looking `git_dir` named `.git` sits in, when this session's anchor is
/// there for it.
fn anchored_bare(git_dir: &Path, session: &str) -> Option<PathBuf> {
    let git_dir = git_dir.canonicalize().ok()?;
    if git_dir.file_name()? != ".git" {
        return None;
    }
    let worktree = git_dir.parent()?.to_owned();
    let repo = Repo::discover_history(&git_dir).ok()?;
    holds_anchor(&repo, &worktree, session).then_some(worktree)
}

fn broken(worktree: PathBuf, source: git::Error) -> Target {
    Target::Broken {
        error: Error::NotAWorktree {
            worktree: worktree.clone(),
            source,
        },
        worktree: Some(worktree),
    }
}
