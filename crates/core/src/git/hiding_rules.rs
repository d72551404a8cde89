//! Ignore rules inside the worktree that are no part of the state: a `.gitignore` that is
//! itself ignored (`tests/.gitignore` holding `*`), which hides paths present on disk from the
//! state tree while nothing of the state shows it.
//!
//! The worktree's other `.gitignore` files are part of the state, and the rules from outside
//! it are anchored (`Repo::ignore_digest`); this finds the rule files that are neither, that
//! appeared or changed since a moment (a session's start), and the paths each one hides.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::time::SystemTime;

use gix::bstr::{BStr, ByteSlice};

use super::{Error, Repo, StateTree};

/// How many hidden paths of one rule file are named.
const HIDDEN_SHOWN: usize = 20;

/// An ignored `.gitignore` and the paths on disk it hides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HidingRule {
    /// The rule file, relative to the worktree.
    pub rule: String,
    /// The paths it hides (a wholly hidden directory as `dir/`), sorted, the first
    /// [`HIDDEN_SHOWN`]; `count` says how many there were.
    pub hidden: Vec<String>,
    pub count: usize,
}

impl Repo {
    /// The ignored `.gitignore` files of `state`'s worktree whose file or directory changed at
    /// or after `since` (ctime, which cannot be set back), each with the paths on disk it
    /// hides; those hiding nothing are left out. Costs one `lstat` per wholly ignored
    /// directory when none is found.
    pub fn hiding_rules(
        &self,
        state: &StateTree,
        since: SystemTime,
    ) -> Result<Vec<HidingRule>, Error> {
        let workdir = self.workdir()?;
        let rules = self.new_rule_files(workdir, state, since);
        if rules.is_empty() {
            return Ok(Vec::new());
        }
        let mut stack = self.exclude_stack()?;
        let mut found = Vec::new();
        for rule in rules {
            let dir = rule
                .rfind('/')
                .map_or(String::new(), |slash| rule[..slash].to_string());
            let mut hidden = Vec::new();
            for (path, is_dir) in state.ignored() {
                // A wholly ignored directory is the rule file's own directory, or below it.
                let inside = dir.is_empty()
                    || path.as_bstr() == dir.as_bytes().as_bstr()
                    || path
                        .strip_prefix(dir.as_bytes())
                        .is_some_and(|rest| rest.starts_with(b"/"));
                if !inside || path.as_bstr() == rule.as_bytes().as_bstr() {
                    continue;
                }
                if hidden_by(&mut stack, workdir, path.as_bstr(), *is_dir, &rule)? {
                    hidden.push(if *is_dir {
                        format!("{path}/")
                    } else {
                        path.to_string()
                    });
                }
            }
            if tool_cache(&dir, &hidden) {
                continue;
            }
            if !hidden.is_empty() {
                let count = hidden.len();
                hidden.truncate(HIDDEN_SHOWN);
                found.push(HidingRule {
                    rule,
                    hidden,
                    count,
                });
            }
        }
        Ok(found)
    }

    /// The ignored paths on disk changed at or after `since` (so new during a session: cheap
    /// only because it is asked only once the rules from outside the worktree changed) that a
    /// rule from outside the worktree ignores, grouped by the file that rule comes from.
    pub fn hidden_by_outside_rules(
        &self,
        state: &StateTree,
        since: SystemTime,
    ) -> Result<Vec<HidingRule>, Error> {
        let workdir = self.workdir()?;
        let mut stack = self.exclude_stack()?;
        let mut by_source: std::collections::BTreeMap<String, Vec<String>> =
            std::collections::BTreeMap::new();
        for (path, is_dir) in state.ignored() {
            if !changed_since(&workdir.join(to_path(path.as_bstr())), since) {
                continue;
            }
            let mode = is_dir.then_some(gix::index::entry::Mode::DIR);
            let platform = stack
                .at_entry(path.as_bstr(), mode)
                .map_err(Error::read("the ignore rules"))?;
            let Some(source) = platform.matching_exclude_pattern().and_then(|m| m.source) else {
                continue;
            };
            // A `.gitignore` of the worktree is part of the state, or found by `hiding_rules`.
            if source.starts_with(workdir) && source.file_name() == Some(".gitignore".as_ref()) {
                continue;
            }
            let named = source
                .strip_prefix(workdir)
                .unwrap_or(source)
                .display()
                .to_string();
            by_source.entry(named).or_default().push(if *is_dir {
                format!("{path}/")
            } else {
                path.to_string()
            });
        }
        Ok(by_source
            .into_iter()
            .map(|(rule, mut hidden)| {
                let count = hidden.len();
                hidden.truncate(HIDDEN_SHOWN);
                HidingRule {
                    rule,
                    hidden,
                    count,
                }
            })
            .collect())
    }

    /// The ignore rules git applies, reading the worktree's `.gitignore` files from disk.
    fn exclude_stack(&self) -> Result<gix::AttributeStack<'_>, Error> {
        let index = self
            .git
            .index_or_empty()
            .map_err(Error::read("the index"))?;
        self.git
            .excludes(
                &index,
                None,
                gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
            )
            .map_err(Error::read("the ignore rules"))
    }

    /// The ignored `.gitignore` files git reads (one the walk met, or one at the top of a
    /// wholly ignored directory), whose file or directory changed at or after `since`.
    fn new_rule_files(&self, workdir: &Path, state: &StateTree, since: SystemTime) -> Vec<String> {
        let changed = |path: &Path| changed_since(path, since);
        let mut rules: Vec<String> = state
            .ignored()
            .iter()
            .filter_map(|(path, is_dir)| {
                let path = path.to_str().ok()?;
                if *is_dir {
                    let rule = format!("{path}/.gitignore");
                    workdir
                        .join(&rule)
                        .symlink_metadata()
                        .is_ok_and(|meta| meta.is_file())
                        .then_some(rule)
                } else {
                    (path == ".gitignore" || path.ends_with("/.gitignore"))
                        .then(|| path.to_string())
                }
            })
            .filter(|rule| {
                let file = workdir.join(rule);
                changed(&file) || file.parent().is_some_and(changed)
            })
            .collect();
        rules.sort();
        rules.dedup();
        rules
    }
}

/// A tool's cache (`.pytest_cache/`, `.mypy_cache/`, `.ruff_cache/`): a dot-directory with
/// nothing of the state in it, wholly hidden by the `.gitignore` its tool wrote at its top,
/// and hiding nothing else. Test runners and build tools do not read into dot-directories they
/// were not told of, and a run of pytest writes one in every repository that does not ignore
/// it already: it is not reported.
fn tool_cache(dir: &str, hidden: &[String]) -> bool {
    let name = dir.rsplit('/').next().unwrap_or(dir);
    name.starts_with('.') && name.len() > 1 && hidden.len() == 1 && hidden[0] == format!("{dir}/")
}

/// Whether `path`'s ctime (which cannot be set back) is at or after `since`.
fn changed_since(path: &Path, since: SystemTime) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| {
        let ctime = SystemTime::UNIX_EPOCH
            + std::time::Duration::new(
                u64::try_from(meta.ctime()).unwrap_or(0),
                u32::try_from(meta.ctime_nsec()).unwrap_or(0),
            );
        ctime >= since
    })
}

fn to_path(path: &BStr) -> &Path {
    use std::os::unix::ffi::OsStrExt as _;
    Path::new(std::ffi::OsStr::from_bytes(path.as_bytes()))
}

/// Whether the ignored `path` is ignored by `rule` (a `.gitignore`, relative to the worktree):
/// the last pattern matching it comes from that file; or, for a wholly ignored directory that
/// no rule above it matches, `rule` sits at its top (its contents are ignored from inside).
fn hidden_by(
    stack: &mut gix::AttributeStack<'_>,
    workdir: &Path,
    path: &BStr,
    is_dir: bool,
    rule: &str,
) -> Result<bool, Error> {
    let mode = is_dir.then_some(gix::index::entry::Mode::DIR);
    let platform = stack
        .at_entry(path, mode)
        .map_err(Error::read("the ignore rules"))?;
    let rule_path = workdir.join(rule);
    Ok(match platform.matching_exclude_pattern() {
        Some(found) => found
            .source
            .is_some_and(|source| source == rule_path || source.ends_with(rule)),
        None => is_dir && rule.strip_suffix("/.gitignore") == path.to_str().ok(),
    })
}
