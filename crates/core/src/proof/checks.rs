//! The checks of a tree (SPEC.md section 2.1): the root verify.sh, with every path as input,
//! and the named checks its `prove-it.toml` declares, each keyed by its input tree. One reader
//! for the working state and committed trees alike, and the lookup of each check's proof.

use gix::ObjectId;

use super::checks_file::{self, CHECKS_FILE, Invalid, VERIFY_CHECK};
use super::lookup::Found;
use super::record::{Proofs, Record, Script, Uncovered};
use crate::armed::NotRunnable;
use crate::git::{self, Notes, PROOFS_REF, Repo, StateTree};

const MODE_EXECUTABLE: u32 = 0o100755;

/// How the name of a script from outside the history begins in its records (`check:
/// exec:<file name>`): no checks file can declare such a name, so its records prove no check
/// of a tree, nor its verify.sh.
pub const EXEC_PREFIX: &str = "exec:";
const MODE_LINK: u32 = 0o120000;

/// The blob and mode at a path of a state or tree, when it has a file there.
type EntryAt<'a> = &'a dyn Fn(&str) -> Result<Option<(ObjectId, u32)>, git::Error>;

/// One check of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// `verify.sh` for the root verify.sh, else the name `prove-it.toml` gives it.
    pub name: String,
    /// The script's repository-relative path.
    pub run: String,
    /// The paths it reads: `[""]` (all) for the root verify.sh; a named check's declared
    /// paths and the checks file.
    pub inputs: Vec<String>,
    /// The script as the tree holds it; `None` when the tree has no file there.
    pub script: Option<Script>,
}

impl Check {
    /// A script from outside the history (`--exec`), run by its absolute path `path` from the
    /// root of the commit's worktree, with every path as input: its key is the commit's tree,
    /// its name `exec:<file name>`, so that its records never prove the tree's own checks.
    pub fn exec(file_name: &str, path: String, script: Script) -> Check {
        Check {
            name: format!("{EXEC_PREFIX}{file_name}"),
            run: path,
            inputs: vec![String::new()],
            script: Some(script),
        }
    }

    /// Whether this is a script from outside the history (`--exec`).
    pub fn is_exec(&self) -> bool {
        self.name.starts_with(EXEC_PREFIX)
    }

    /// Whether this is the root verify.sh (its records carry no `check:` line).
    pub fn is_root(&self) -> bool {
        self.name == VERIFY_CHECK
    }

    /// The name a record gives the check: `None` for the root verify.sh.
    pub fn record_name(&self) -> Option<&str> {
        (!self.is_root()).then_some(self.name.as_str())
    }

    /// `Err(why)` when the script cannot run: missing from the tree, or not an executable file
    /// (a named check's script may not be a link: a link's blob is its target's name, and a
    /// proof must name the bytes that ran).
    pub fn runnable(&self) -> Result<Script, NotRunnable> {
        match self.script {
            None => Err(NotRunnable::Missing),
            Some(script) if script.mode == MODE_EXECUTABLE => Ok(script),
            Some(script) if script.mode == MODE_LINK && self.is_root() => Ok(script),
            Some(script) if script.mode == MODE_LINK => Err(NotRunnable::Link),
            Some(_) => Err(NotRunnable::NotExecutable),
        }
    }
}

/// The checks of one tree, and its checks file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckSet {
    /// `prove-it.toml` as the tree holds it, with its text; `None` without one.
    pub file: Option<(Script, String)>,
    /// The root verify.sh first (when the tree holds one), then the named checks by name.
    pub checks: Vec<Check>,
    /// Each input the checks file declares without a trailing `?`: its check, its path and
    /// the line that declares it.
    pub required: Vec<(String, String, usize)>,
}

impl CheckSet {
    /// The setup script the checks file declares, if any.
    pub fn setup(&self) -> Result<Option<checks_file::Setup>, Invalid> {
        match &self.file {
            Some((_, text)) => checks_file::setup(text),
            None => Ok(None),
        }
    }
}

/// Why the checks of a tree cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ChecksError {
    #[error(transparent)]
    Git(#[from] git::Error),
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The checks file is on disk and not part of the state (ignored): no proof could name it,
    /// and a state without it would be proven by nothing it declares.
    #[error(
        "prove-it.toml is not part of the working state (it is ignored, or not a file), so no proof could name the checks it declares"
    )]
    NotInState,
    /// An input declared without `?` names nothing in the working state: a typo, or a path
    /// the check would silently stop covering.
    #[error(
        "prove-it.toml is not a valid checks file: line {line}: check {check}: input {input:?} matches no path of the working state"
    )]
    MissingInput {
        check: String,
        input: String,
        line: usize,
    },
    /// Neither a root verify.sh nor a named check: nothing could prove the state.
    #[error("prove-it.toml declares no checks, and there is no executable verify.sh at the root")]
    NoChecks,
}

/// Whether the worktree has a checks file at its root: anything there by that name, a link
/// included (not followed), so that one that is not a file is refused rather than overlooked.
pub fn has_checks_file(repo: &Repo) -> Result<bool, git::Error> {
    Ok(std::fs::symlink_metadata(repo.workdir()?.join(CHECKS_FILE)).is_ok())
}

impl CheckSet {
    /// The checks of the working state `state`. The checks file is read as the state records
    /// it (from disk, checked against its blob).
    pub fn of_state(repo: &Repo, state: &StateTree) -> Result<CheckSet, ChecksError> {
        if state.entry(CHECKS_FILE).is_none() && has_checks_file(repo)? {
            return Err(ChecksError::NotInState);
        }
        let text = repo.state_file(state, CHECKS_FILE, "checks file")?;
        let set = Self::build(state.entry(CHECKS_FILE), text, state.verify, &|path| {
            Ok(state.entry(path))
        })?;
        if set.file.is_some() && set.checks.is_empty() {
            return Err(ChecksError::NoChecks);
        }
        // Only a working state is held to its inputs: a commit of history is read as it was,
        // and its run (`run <rev>`, in a worktree of it) names a missing input there.
        if let Some((check, input, line)) = set
            .required
            .iter()
            .find(|(_, input, _)| !state.has_path(input))
        {
            return Err(ChecksError::MissingInput {
                check: check.clone(),
                input: input.clone(),
                line: *line,
            });
        }
        Ok(set)
    }

    /// Every input of every check: `[""]` when one of them (a root verify.sh) reads all.
    pub fn all_inputs(&self) -> Vec<String> {
        let mut inputs: Vec<String> = self
            .checks
            .iter()
            .flat_map(|check| check.inputs.iter().cloned())
            .collect();
        inputs.sort();
        inputs.dedup();
        inputs
    }

    /// The paths of `state` that no check of this set reads; none without a checks file (the
    /// root verify.sh reads them all).
    pub fn uncovered(&self, repo: &Repo, state: &StateTree) -> Result<Uncovered, git::Error> {
        if self.file.is_none() {
            return Ok(Uncovered::default());
        }
        Ok(Uncovered::of(repo.outside_paths(state, &self.all_inputs())))
    }

    /// The checks of the committed tree `tree`.
    pub fn of_tree(repo: &Repo, tree: ObjectId) -> Result<CheckSet, ChecksError> {
        Self::of_tree_in(repo, tree, &Parsed::default())
    }

    /// [`CheckSet::of_tree`] over many commits: a checks file is read and parsed once per
    /// blob, however many commits share it.
    pub fn of_tree_in(
        repo: &Repo,
        tree: ObjectId,
        parsed: &Parsed,
    ) -> Result<CheckSet, ChecksError> {
        let file = repo.tree_entry(tree, CHECKS_FILE)?;
        let verify = repo.tree_script(tree, git::VERIFY_SCRIPT)?;
        let entry = |path: &str| repo.tree_entry(tree, path);
        let Some((blob, mode)) = file else {
            return Self::build(None, None, verify, &entry);
        };
        let known = parsed
            .0
            .lock()
            .ok()
            .and_then(|parsed| parsed.get(&blob).cloned());
        let read = match known {
            Some(read) => read,
            None => {
                let text = repo.read_blob(blob)?;
                let read = String::from_utf8(text)
                    .map_err(|_| Invalid::new("it is not UTF-8 text"))
                    .and_then(|text| checks_file::parse(&text).map(|declared| (text, declared)));
                if let Ok(mut parsed) = parsed.0.lock() {
                    parsed.insert(blob, read.clone());
                }
                read
            }
        };
        let (text, declared) = read?;
        Self::assemble(
            Some((Script { blob, mode }, text)),
            declared,
            verify,
            &entry,
        )
    }

    fn build(
        file: Option<(ObjectId, u32)>,
        text: Option<Vec<u8>>,
        verify: Option<(ObjectId, u32)>,
        entry: EntryAt<'_>,
    ) -> Result<CheckSet, ChecksError> {
        let mut set = CheckSet::default();
        // The root verify.sh is a check only where it could run, as before checks files.
        if let Some((blob, mode)) = verify
            && (Script { blob, mode }).can_run()
        {
            set.checks.push(Check {
                name: VERIFY_CHECK.to_string(),
                run: git::VERIFY_SCRIPT.to_string(),
                inputs: vec![String::new()],
                script: Some(Script { blob, mode }),
            });
        }
        let (Some((blob, mode)), Some(text)) = (file, text) else {
            return Ok(set);
        };
        let text = String::from_utf8(text).map_err(|_| Invalid::new("it is not UTF-8 text"))?;
        let declared = checks_file::parse(&text)?;
        Self::assemble(Some((Script { blob, mode }, text)), declared, verify, entry)
    }

    /// The set of a tree whose checks file `file` declares `declared`.
    fn assemble(
        file: Option<(Script, String)>,
        declared: Vec<checks_file::Declared>,
        verify: Option<(ObjectId, u32)>,
        entry: EntryAt<'_>,
    ) -> Result<CheckSet, ChecksError> {
        let mut set = Self::build(None, None, verify, entry)?;
        // The setup script prepares every check's run, so each check's key holds it.
        let setup = match &file {
            Some((_, text)) => checks_file::setup(text)?,
            None => None,
        };
        for declared in declared {
            for (input, line) in declared.required {
                set.required.push((declared.name.clone(), input, line));
            }
            let mut inputs = declared.inputs;
            inputs.push(CHECKS_FILE.to_string());
            if let Some(setup) = &setup
                && !inputs.iter().any(|input| {
                    input.is_empty()
                        || setup.run == *input
                        || setup.run.starts_with(&format!("{input}/"))
                })
            {
                inputs.push(setup.run.clone());
            }
            set.checks.push(Check {
                script: entry(&declared.run)?.map(|(blob, mode)| Script { blob, mode }),
                name: declared.name,
                run: declared.run,
                inputs,
            });
        }
        set.file = file;
        Ok(set)
    }
}

/// A checks file's text and checks, or why it has none.
type ParsedFile = Result<(String, Vec<checks_file::Declared>), Invalid>;

/// Checks files already parsed, by blob; shared by the threads that read history.
#[derive(Default)]
pub struct Parsed(std::sync::Mutex<std::collections::HashMap<ObjectId, ParsedFile>>);

/// One check of a state or commit, its key, and its proofs.
#[derive(Debug)]
pub struct CheckProof {
    pub check: Check,
    pub input_tree: ObjectId,
    pub found: Found,
}

impl CheckProof {
    /// The proof that spares the check a run (see `Found::best`).
    pub fn best(&self, signed_only: bool) -> Option<&Record> {
        self.found.best(signed_only)
    }
}

/// Each check of `set` with its input tree in `state` and the proofs of it.
pub fn state_check_proofs(
    repo: &Repo,
    state: &StateTree,
    set: &CheckSet,
) -> Result<Vec<CheckProof>, git::Error> {
    set.checks
        .iter()
        .map(|check| {
            let input_tree = repo.input_tree(state, &check.inputs, false)?;
            lookup_check(repo, check, input_tree)
        })
        .collect()
}

/// Each check of `set` (read from the committed `tree`) with its input tree and its proofs.
pub fn tree_check_proofs(
    repo: &Repo,
    tree: ObjectId,
    set: &CheckSet,
) -> Result<Vec<CheckProof>, git::Error> {
    tree_check_proofs_in(repo, &mut repo.notes(PROOFS_REF), tree, set)
}

/// [`tree_check_proofs`] through `notes`, a view of the proofs ref kept over many commits.
pub fn tree_check_proofs_in(
    repo: &Repo,
    notes: &mut Notes<'_>,
    tree: ObjectId,
    set: &CheckSet,
) -> Result<Vec<CheckProof>, git::Error> {
    set.checks
        .iter()
        .map(|check| {
            let input_tree = repo.tree_input_tree(tree, &check.inputs)?;
            let note = notes.lookup(&input_tree)?;
            Ok(check_proof(check, input_tree, note.as_deref()))
        })
        .collect()
}

/// The proofs of `check` at `input_tree`, read from the proofs ref: records of that check,
/// through that very script.
pub fn lookup_check(
    repo: &Repo,
    check: &Check,
    input_tree: ObjectId,
) -> Result<CheckProof, git::Error> {
    let note = repo.notes(PROOFS_REF).lookup(&input_tree)?;
    Ok(check_proof(check, input_tree, note.as_deref()))
}

/// `check` at `input_tree`, whose note is `note`.
pub fn check_proof(check: &Check, input_tree: ObjectId, note: Option<&str>) -> CheckProof {
    let script = check.script.map(|s| (s.blob, s.mode));
    let found = match note {
        None => Found::default(),
        Some(note) => Found::from_proofs(Proofs::of_check(
            note,
            &input_tree,
            check.record_name(),
            script,
        )),
    };
    CheckProof {
        check: check.clone(),
        input_tree,
        found,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    /// A script from outside the history must never prove a check a checks file declares:
    /// its name is one no checks file may give, and its records carry it.
    #[test]
    fn a_script_from_outside_the_history_is_named_as_no_declared_check_can_be() {
        let script = Script {
            blob: id(4),
            mode: MODE_EXECUTABLE,
        };
        let exec = Check::exec("test.sh", "/home/me/test.sh".into(), script);
        assert_eq!(exec.name, "exec:test.sh");
        assert_eq!(exec.record_name(), Some("exec:test.sh"));
        assert!(exec.is_exec() && !exec.is_root());
        assert!(!checks_file::is_check_name(&exec.name));
        assert_eq!(exec.inputs, [""]);
        assert_eq!(exec.runnable(), Ok(script));
    }

    #[test]
    fn a_tree_with_verify_sh_alone_has_one_check_of_every_path() {
        let set =
            CheckSet::build(None, None, Some((id(1), MODE_EXECUTABLE)), &|_| Ok(None)).unwrap();
        assert_eq!(set.checks.len(), 1);
        assert!(set.checks[0].is_root());
        assert_eq!(set.checks[0].inputs, [""]);
        assert_eq!(set.file, None);
        // A verify.sh that could not run is no check, as before checks files.
        let unarmed = CheckSet::build(None, None, Some((id(1), 0o100644)), &|_| Ok(None)).unwrap();
        assert!(unarmed.checks.is_empty() && unarmed.file.is_none());
    }

    #[test]
    fn named_checks_read_the_checks_file_too_and_find_their_scripts() {
        let text = "[checks.api]\nrun = \"api/verify.sh\"\ninputs = [\"api\"]\n[checks.docs]\nrun = \"docs/v.sh\"\ninputs = [\"docs\"]\n";
        let set = CheckSet::build(
            Some((id(2), 0o100644)),
            Some(text.as_bytes().to_vec()),
            None,
            &|path| Ok((path == "api/verify.sh").then_some((id(3), MODE_EXECUTABLE))),
        )
        .unwrap();
        let names: Vec<_> = set.checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["api", "docs"]);
        assert_eq!(set.checks[0].inputs, ["api", CHECKS_FILE]);
        assert!(set.checks[0].runnable().is_ok());
        assert_eq!(set.checks[1].runnable(), Err(NotRunnable::Missing));
        assert_eq!(set.checks[0].record_name(), Some("api"));
    }

    #[test]
    fn a_checks_file_in_error_is_the_worktrees_to_fix() {
        let error = CheckSet::build(
            Some((id(2), 0o100644)),
            Some(b"[checks.a]\nrun = 1\n".to_vec()),
            None,
            &|_| Ok(None),
        )
        .unwrap_err();
        assert!(matches!(error, ChecksError::Invalid(_)));
        assert!(error.to_string().contains("line 2"), "{error}");
    }
}
