//! A script reached through symbolic links inside one tree: the one place that follows a
//! verify.sh (or a check's script) stored as a link to the file whose bytes actually run, in a
//! committed tree or in the state tree, so that a proof names those bytes and not the link's.

use gix::ObjectId;

use super::Error;

/// A link's tree entry mode.
const MODE_LINK: u32 = 0o120_000;
/// A directory's tree entry mode.
#[cfg(test)]
const MODE_TREE: u32 = 0o040_000;
/// How many links a script may go through; one more is taken for a loop.
const MAX_LINKS: usize = 8;

/// Why a script stored as a link cannot be followed to a file of its tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkProblem {
    /// The link leads to no path of the tree.
    Dangling,
    /// The link is absolute, or climbs out of the tree with `..`.
    Outside,
    /// The link goes through more than a few links: a loop, or as good as one.
    Loop,
    /// The link leads to a directory, a submodule or another thing that does not run.
    NotAFile,
}

impl std::fmt::Display for LinkProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LinkProblem::Dangling => "leads to nothing",
            LinkProblem::Outside => "leads outside the repository's tree",
            LinkProblem::Loop => "goes through too many links (a loop)",
            LinkProblem::NotAFile => "leads to something other than a file",
        })
    }
}

/// What one tree holds at a path: an entry's object and mode, or, for a path that is no entry
/// but has entries under it, a directory (`MODE_TREE` with any id).
pub(super) type EntryAt<'a> = dyn FnMut(&str) -> Result<Option<(ObjectId, u32)>, Error> + 'a;
/// The text of the link at a path whose object is the given id.
pub(super) type LinkText<'a> = dyn FnMut(&str, ObjectId) -> Result<Vec<u8>, Error> + 'a;

/// The file `path` leads to in one tree: its blob and mode, following links (relative ones
/// only, each resolved from the link's own directory, never leaving the tree) up to
/// `MAX_LINKS` times. `None` when nothing is at `path`; a link that cannot be followed is
/// [`Error::ScriptLink`], never `None`, so that a broken link is never taken for an absent
/// script.
pub(super) fn resolve(
    path: &str,
    entry: &mut EntryAt<'_>,
    link_text: &mut LinkText<'_>,
) -> Result<Option<(ObjectId, u32)>, Error> {
    let Some(mut found) = entry(path)? else {
        return Ok(None);
    };
    let mut at = path.to_string();
    let mut hops = 0;
    while found.1 == MODE_LINK {
        let fail = |problem, target: &[u8]| Error::ScriptLink {
            path: path.to_string(),
            target: String::from_utf8_lossy(target).into_owned(),
            problem,
        };
        let text = link_text(&at, found.0)?;
        hops += 1;
        if hops > MAX_LINKS {
            return Err(fail(LinkProblem::Loop, &text));
        }
        at = join(&at, &text).ok_or_else(|| fail(LinkProblem::Outside, &text))?;
        found = entry(&at)?.ok_or_else(|| fail(LinkProblem::Dangling, &text))?;
        if found.1 != MODE_LINK && found.1 & 0o170_000 != 0o100_000 {
            return Err(fail(LinkProblem::NotAFile, &text));
        }
    }
    // A directory or a submodule at `path` itself is no script, as git would not run it.
    Ok((found.1 & 0o170_000 == 0o100_000).then_some(found))
}

/// The file `path` leads to in the committed `tree` ([`resolve`]).
pub(super) fn in_tree(
    git: &gix::Repository,
    tree: ObjectId,
    path: &str,
) -> Result<Option<(ObjectId, u32)>, Error> {
    let found = git
        .find_tree(tree)
        .map_err(|e| Error::read(format!("{path} in tree {tree}"))(e))?;
    in_read_tree(git, &found, path)
}

/// [`in_tree`] for a tree already read.
pub(super) fn in_read_tree(
    git: &gix::Repository,
    found: &gix::Tree<'_>,
    path: &str,
) -> Result<Option<(ObjectId, u32)>, Error> {
    let tree = found.id;
    // Error texts are formatted only on error: check and log read thousands of trees.
    let what = |path: &str| format!("{path} in tree {tree}");
    let mut entry = |at: &str| {
        let entry = found
            .lookup_entry_by_path(at)
            .map_err(|e| Error::read(what(at))(gix::Error::from_error(e)))?;
        Ok(entry.map(|entry| (entry.object_id(), u32::from(entry.mode().value()))))
    };
    let mut link_text = |at: &str, blob: ObjectId| {
        Ok(git
            .find_blob(blob)
            .map_err(|e| Error::read(what(at))(e))?
            .data
            .clone())
    };
    resolve(path, &mut entry, &mut link_text)
}

/// The path a link at `link` with text `target` leads to, relative to the tree's root; `None`
/// when it is absolute or climbs above the root.
fn join(link: &str, target: &[u8]) -> Option<String> {
    let target = std::str::from_utf8(target).ok()?;
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    /// Resolve `path` in a tree given as (path, mode, link text or "").
    fn resolve_in(tree: &[(&str, u32, &str)], path: &str) -> Result<Option<u32>, LinkProblem> {
        let map: BTreeMap<&str, (u32, &str)> =
            tree.iter().map(|(p, m, t)| (*p, (*m, *t))).collect();
        let ids: BTreeMap<ObjectId, &str> = tree
            .iter()
            .enumerate()
            .map(|(i, (_, _, t))| (id(u8::try_from(i).unwrap() + 1), *t))
            .collect();
        let index: BTreeMap<&str, ObjectId> = tree
            .iter()
            .enumerate()
            .map(|(i, (p, _, _))| (*p, id(u8::try_from(i).unwrap() + 1)))
            .collect();
        let mut entry = |p: &str| Ok(map.get(p).map(|(mode, _)| (index[p], *mode)));
        let mut text = |_: &str, blob: ObjectId| Ok(ids[&blob].as_bytes().to_vec());
        match resolve(path, &mut entry, &mut text) {
            Ok(found) => Ok(found.map(|(_, mode)| mode)),
            Err(Error::ScriptLink { problem, .. }) => Err(problem),
            Err(other) => panic!("{other}"),
        }
    }

    #[test]
    fn a_link_is_followed_to_its_file_and_a_broken_one_is_an_error() {
        let file = ("scripts/verify.sh", 0o100_755, "");
        let link = |target| ("verify.sh", MODE_LINK, target);
        let ok = [file, link("scripts/verify.sh")];
        assert_eq!(resolve_in(&ok, "verify.sh"), Ok(Some(0o100_755)));
        assert_eq!(resolve_in(&[file], "verify.sh"), Ok(None));
        let twice = [
            file,
            ("a/b.sh", MODE_LINK, "../scripts/./verify.sh"),
            link("a/b.sh"),
        ];
        assert_eq!(resolve_in(&twice, "verify.sh"), Ok(Some(0o100_755)));
        let cases = [
            (link("nothing.sh"), LinkProblem::Dangling),
            (link("../outside.sh"), LinkProblem::Outside),
            (link("/etc/passwd"), LinkProblem::Outside),
            (link("verify.sh"), LinkProblem::Loop),
            (link("scripts"), LinkProblem::NotAFile),
        ];
        for (link, problem) in cases {
            let tree = [file, ("scripts", MODE_TREE, ""), link];
            assert_eq!(resolve_in(&tree, "verify.sh"), Err(problem), "{link:?}");
        }
    }
}
