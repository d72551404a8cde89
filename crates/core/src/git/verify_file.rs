//! verify.sh in the working tree: where it is, whether it is armed, its bytes, and whether
//! those bytes are the ones the state tree records.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::index::entry::Flags;

use super::names::VERIFY_SCRIPT;
use super::{Error, LinkProblem, Repo};

pub use crate::armed::Armed;

impl Armed {
    /// Why verify.sh, a link, cannot be followed to a file of the worktree; `None` when it is
    /// no such link. Such a link is never an opt-out: a stop says it cannot check.
    pub fn link_problem(&self) -> Option<LinkProblem> {
        match self {
            Armed::DanglingLink => Some(LinkProblem::Dangling),
            Armed::LinkLeadsOutside => Some(LinkProblem::Outside),
            Armed::LinkLoop => Some(LinkProblem::Loop),
            Armed::LinkNotToFile => Some(LinkProblem::NotAFile),
            Armed::Yes | Armed::Missing | Armed::NotExecutable | Armed::NotAFile => None,
        }
    }
}

impl Repo {
    pub fn verify_path(&self) -> Result<PathBuf, Error> {
        Ok(self.workdir()?.join(VERIFY_SCRIPT))
    }

    /// verify.sh's bytes as they are on disk, read through a link as a shell would run it;
    /// `None` when there is no verify.sh at the worktree root.
    pub fn read_verify(&self) -> Result<Option<Vec<u8>>, Error> {
        let path = self.verify_path()?;
        match std::fs::read(&path) {
            Ok(data) => Ok(Some(data)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(Error::Unreadable { path, source }),
        }
    }

    /// The text of verify.sh as a link, for naming where it leads; empty when it is none.
    pub fn verify_link_text(&self) -> Result<String, Error> {
        let path = self.verify_path()?;
        Ok(std::fs::read_link(path)
            .map(|target| target.to_string_lossy().into_owned())
            .unwrap_or_default())
    }

    /// Whether verify.sh is armed: a regular file at the worktree root, or a link resolving to
    /// one inside the worktree, with the owner's execute bit.
    pub fn armed(&self) -> Result<Armed, Error> {
        let workdir = self.workdir()?;
        let path = workdir.join(VERIFY_SCRIPT);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return Ok(Armed::Missing);
        };
        let meta = if meta.file_type().is_symlink() {
            let (Ok(target), Ok(root)) = (path.canonicalize(), workdir.canonicalize()) else {
                return Ok(if loops(&path) {
                    Armed::LinkLoop
                } else {
                    Armed::DanglingLink
                });
            };
            if !target.starts_with(&root) {
                return Ok(Armed::LinkLeadsOutside);
            }
            match std::fs::metadata(&target) {
                Ok(meta) if meta.is_file() => meta,
                Ok(_) => return Ok(Armed::LinkNotToFile),
                Err(_) => return Ok(Armed::DanglingLink),
            }
        } else {
            meta
        };
        Ok(if !meta.is_file() {
            Armed::NotAFile
        } else if meta.permissions().mode() & 0o100 == 0 {
            Armed::NotExecutable
        } else {
            Armed::Yes
        })
    }
}

/// Whether the link at `path` leads, link after link, to a link again more times than a
/// kernel would follow: a loop, rather than a link to nothing.
fn loops(path: &Path) -> bool {
    let mut at = path.to_path_buf();
    for _ in 0..=40 {
        let Ok(target) = std::fs::read_link(&at) else {
            return false;
        };
        at = at.parent().map_or(target.clone(), |dir| dir.join(&target));
    }
    true
}

/// Check that the verify.sh a shell would run is the one the state tree records: its bytes on
/// disk (through a link, the bytes of the file it leads to) must hash to the blob the state
/// holds for that path. A clean filter, an end-of-line conversion or an index flag could
/// otherwise make a proof name a verify.sh that never ran. `recorded` gives the
/// state's blob at a repository-relative path. A verify.sh that is missing, not a file or leads
/// outside the worktree is left to [`Repo::armed`], which refuses to run it.
pub(super) fn check_recorded(
    workdir: &Path,
    index: &gix::index::State,
    hash: gix::hash::Kind,
    recorded: impl Fn(&[u8]) -> Option<ObjectId>,
) -> Result<(), Error> {
    let path = workdir.join(VERIFY_SCRIPT);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return Ok(());
    };
    // Only a verify.sh that would run is checked; `armed` names what is wrong with another.
    match std::fs::metadata(&path) {
        Ok(target) if target.is_file() && target.permissions().mode() & 0o100 != 0 => {}
        _ => return Ok(()),
    }
    let (file, rela) = if meta.file_type().is_symlink() {
        let (Ok(target), Ok(root)) = (path.canonicalize(), workdir.canonicalize()) else {
            return Ok(());
        };
        let Ok(rela) = target.strip_prefix(&root) else {
            return Ok(());
        };
        let rela = rela.as_os_str().as_bytes().to_vec();
        if recorded(&rela).is_none() {
            return Err(Error::VerifyOutsideState {
                target: String::from_utf8_lossy(&rela).into_owned(),
            });
        }
        (target, rela)
    } else {
        (path, VERIFY_SCRIPT.as_bytes().to_vec())
    };
    let Some(blob) = recorded(&rela) else {
        return Ok(());
    };
    let bytes = std::fs::read(&file).map_err(|source| Error::Unreadable {
        path: file.clone(),
        source,
    })?;
    let on_disk = gix::objs::compute_hash(hash, gix::objs::Kind::Blob, &bytes).map_err(|e| {
        Error::read(format!("the blob of {}", file.display()))(gix::Error::from_error(e))
    })?;
    if on_disk == blob {
        return Ok(());
    }
    let flags = index
        .entry_by_path(rela.as_slice().into())
        .map_or(Flags::empty(), |entry| entry.flags);
    let reason = if flags.contains(Flags::SKIP_WORKTREE) {
        "its skip-worktree flag keeps the index's copy"
    } else if flags.contains(Flags::ASSUME_VALID) {
        "its assume-unchanged flag keeps the index's copy"
    } else {
        "a clean filter or end-of-line conversion changes its bytes: see .gitattributes, \
         .git/info/attributes and core.autocrlf"
    };
    Err(Error::VerifyNotAsRecorded {
        path: String::from_utf8_lossy(&rela).into_owned(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_repo::git_repo;

    #[test]
    fn verify_sh_is_read_through_a_link_and_missing_is_none() {
        let (dir, repo) = git_repo();
        assert_eq!(repo.read_verify().unwrap(), None);
        std::fs::create_dir(dir.path().join("ci")).unwrap();
        std::fs::write(dir.path().join("ci/check.sh"), b"#!/bin/sh\nexit 0\n").unwrap();
        std::os::unix::fs::symlink("ci/check.sh", dir.path().join("verify.sh")).unwrap();
        assert_eq!(
            repo.read_verify().unwrap().as_deref(),
            Some(&b"#!/bin/sh\nexit 0\n"[..])
        );
        std::fs::remove_file(dir.path().join("ci/check.sh")).unwrap();
        assert_eq!(
            repo.read_verify().unwrap(),
            None,
            "a dangling link reads as none"
        );
    }

    // Only a verify.sh that would run is held to its recorded blob; one that would not is
    // left for `armed` to name, so `status` still says why it is not armed.
    #[test]
    fn only_a_runnable_verify_sh_must_be_its_recorded_blob() {
        use std::os::unix::fs::PermissionsExt;

        use super::check_recorded;
        let (dir, _repo) = git_repo();
        let path = dir.path().join("verify.sh");
        std::fs::write(&path, b"#!/bin/sh\nexit 0\n").unwrap();
        let index = gix::index::State::new(gix::hash::Kind::Sha1);
        let kind = gix::hash::Kind::Sha1;
        let other = gix::ObjectId::null(kind);
        let check = || check_recorded(dir.path(), &index, kind, |_| Some(other));
        assert!(check().is_ok(), "not executable: not checked");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let error = check().unwrap_err();
        assert!(error.is_worktree_content(), "{error:?}");
        assert!(error.to_string().contains("clean filter"), "{error}");
        let same =
            gix::objs::compute_hash(kind, gix::objs::Kind::Blob, b"#!/bin/sh\nexit 0\n").unwrap();
        assert!(check_recorded(dir.path(), &index, kind, |_| Some(same)).is_ok());
    }

    #[test]
    fn an_unreadable_verify_sh_is_an_error_about_the_working_tree() {
        let (dir, repo) = git_repo();
        std::fs::create_dir(dir.path().join("verify.sh")).unwrap();
        let error = repo.read_verify().unwrap_err();
        assert!(error.is_worktree_content(), "{error:?}");
        assert!(error.to_string().contains("verify.sh"), "{error}");
    }
}
