//! Whether a commit is proven, shared by `check`, `log` and the pre-push hook: a pure reading
//! of the notes attached to its tree, or, when its tree has a checks file, to each check's
//! input tree (SPEC.md section 2.1). The readings are pure; [`commit_standings`] is the one
//! function here that reads the repository, and only for commits that have a checks file.

use std::collections::BTreeMap;

use gix::ObjectId;

use super::cannot_test::{CannotTest, lookup_cannot_test};
use super::checks::{
    Check, CheckProof, CheckSet, ChecksError, EXEC_PREFIX, Parsed, check_proof,
    tree_check_proofs_in,
};
use super::checks_file::CHECKS_FILE;
use super::contest::Contested;
use super::failure::{Failure, lookup_failure};
use super::lookup::Found;
use super::record::{Invalid, Outcome, Problem, Record, Script};
use crate::git::{self, CommitInfo, FAILURES_REF, Notes, Repo};

/// Where one commit (or one check of it) stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// A valid `PROVEN` record; for a commit with checks, every check has one.
    Proven(Record),
    /// Only valid `BOUNDED_CLAIM_SURVIVES` records: proven through an edited verify.sh; for a
    /// commit with checks, every check is proven and one at least only so.
    ProvenEdited(Record),
    /// No proof counts because a failing run of the same script contests it (SPEC.md section
    /// 2.3); for a commit with checks, some check is contested.
    Contested(Box<Contested>),
    /// No record at all; for a commit with checks, some check is not proven.
    Unproven,
    /// Records, none of them valid; for a commit with checks, each check not proven has
    /// records, none of them valid.
    Invalid,
    /// The commit's tree has no verify.sh (nor a check), so nothing can prove it.
    NotArmed,
    /// A check whose script cannot run at that commit: missing, or not an executable file
    /// (the reason, as [`super::checks::Check::runnable`] gives it).
    ScriptMissing(crate::armed::NotRunnable),
    /// The commit's checks file is in error (the message names the line): nothing can prove
    /// the commit until it is fixed.
    ChecksError(String),
}

/// One check of a commit with a checks file, its key, and where it stands.
#[derive(Debug, Clone)]
pub struct CheckStatus {
    /// `verify.sh` for the root verify.sh, else the name `prove-it.toml` gives it.
    pub name: String,
    /// The script's repository-relative path.
    pub run: String,
    /// The script as the commit's tree holds it, `None` when it has none there.
    pub script: Option<Script>,
    /// The commit's tree pruned to the check's inputs: the key of its proofs.
    pub input_tree: ObjectId,
    pub standing: Standing,
    /// Records of this check attached to its input tree that do not count.
    pub invalid: Vec<Invalid>,
    /// Every record that proves the check, the one to show first.
    pub valid: Vec<Record>,
    /// The signature of the proof shown, as for a commit.
    pub signature: Option<SignatureStatus>,
    /// The newest failure on record of this check through this script for this input tree,
    /// when the check is not proven and no cannot-test record is newer
    /// (`refs/notes/prove-it-failures`).
    pub failure: Option<Box<Failure>>,
    /// The newest cannot-test record of this check through this script for this input tree,
    /// when the check is not proven and no failure on record is newer.
    pub cannot_test: Option<Box<CannotTest>>,
}

/// One commit, where it stands, and the records attached to its tree that do not count.
#[derive(Debug, Clone)]
pub struct CommitStatus {
    pub commit: CommitInfo,
    pub standing: Standing,
    pub invalid: Vec<Invalid>,
    /// Every record that proves the commit, the one to show first.
    pub valid: Vec<Record>,
    /// The signature of the proof shown, or why there is none to trust; `None` without records.
    pub signature: Option<SignatureStatus>,
    /// Each check, when the commit's tree has a checks file (the root verify.sh first, then
    /// by name; empty when the checks file is in error); `None` without one, and then the
    /// commit stands by the note of its tree alone, as before checks files.
    pub checks: Option<Vec<CheckStatus>>,
    /// Without a checks file: the newest failure on record of the commit's verify.sh for its
    /// tree, when the commit is not proven and no cannot-test record is newer. With one, each
    /// check has its own.
    pub failure: Option<Box<Failure>>,
    /// Without a checks file: the newest cannot-test record of the commit's verify.sh for its
    /// tree, when the commit is not proven and no failure on record is newer.
    pub cannot_test: Option<Box<CannotTest>>,
    /// For a commit with neither verify.sh nor a checks file: the proofs of scripts from
    /// outside the history (`--exec`) on its tree, the best of each script first. They never
    /// make the commit proven; `log` shows them under the script's name.
    pub exec: Vec<Record>,
}

impl CommitStatus {
    /// The cannot-test records that keep this commit from being proven, as (check, record):
    /// the root verify.sh's (check `None`) or each unproven check's.
    pub fn cannot_tests(&self) -> Vec<(Option<&str>, &CannotTest)> {
        match &self.checks {
            None => self
                .cannot_test
                .as_deref()
                .map(|c| (None, c))
                .into_iter()
                .collect(),
            Some(checks) => checks
                .iter()
                .filter_map(|c| {
                    let name =
                        (c.name != super::checks_file::VERIFY_CHECK).then_some(c.name.as_str());
                    c.cannot_test.as_deref().map(|record| (name, record))
                })
                .collect(),
        }
    }

    /// The failures on record that keep this commit from being proven, as (check, failure):
    /// the root verify.sh's (check `None`) or each unproven check's.
    pub fn failures(&self) -> Vec<(Option<&str>, &Failure)> {
        match &self.checks {
            None => self
                .failure
                .as_deref()
                .map(|f| (None, f))
                .into_iter()
                .collect(),
            Some(checks) => checks
                .iter()
                .filter_map(|c| {
                    let name =
                        (c.name != super::checks_file::VERIFY_CHECK).then_some(c.name.as_str());
                    c.failure.as_deref().map(|f| (name, f))
                })
                .collect(),
        }
    }
}

/// What the signature of a commit's proof says (SPEC.md, "Signed proofs").
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum SignatureStatus {
    /// Made by `principal` of the allowed signers file.
    Good {
        principal: String,
        key: Option<String>,
    },
    /// The record or its signature was altered after signing.
    Bad,
    /// A sound signature by a key the allowed signers file does not allow.
    UnknownSigner { key: Option<String> },
    /// The proof carries no signature.
    Unsigned,
    /// Signed, but not checked: no allowed signers file was given or configured.
    NotVerified,
    /// No record proves the commit, and one was copied from another tree's note.
    TreeMismatch,
}

impl SignatureStatus {
    pub fn is_good(&self) -> bool {
        matches!(self, SignatureStatus::Good { .. })
    }

    /// Before any check: whether `record` is signed at all.
    fn unchecked(record: &Record) -> Self {
        if record.signature.is_some() {
            SignatureStatus::NotVerified
        } else {
            SignatureStatus::Unsigned
        }
    }
}

impl Standing {
    /// Whether the commit counts as proven; `strict` refuses proofs through an edited verify.sh.
    pub fn is_proven(&self, strict: bool) -> bool {
        match self {
            Standing::Proven(_) => true,
            Standing::ProvenEdited(_) => !strict,
            Standing::Contested(_)
            | Standing::Unproven
            | Standing::Invalid
            | Standing::NotArmed
            | Standing::ScriptMissing(_)
            | Standing::ChecksError(_) => false,
        }
    }

    /// Whether it counts for `check` (and `log`, the pre-push hook): proven (through an edited
    /// verify.sh only unless `strict`), and with a good signature when `require_signed`.
    pub fn counts(
        &self,
        signature: Option<&SignatureStatus>,
        strict: bool,
        require_signed: bool,
    ) -> bool {
        self.is_proven(strict)
            && (!require_signed || signature.is_some_and(SignatureStatus::is_good))
    }

    /// The word for it, in human output and JSON alike.
    pub fn label(&self) -> &'static str {
        match self {
            Standing::Proven(_) => "proven",
            Standing::ProvenEdited(_) => "proven-edited",
            Standing::Contested(_) => "contested",
            Standing::Unproven => "unproven",
            Standing::Invalid => "invalid",
            Standing::NotArmed => "not-armed",
            Standing::ScriptMissing(_) => "missing-script",
            Standing::ChecksError(_) => "checks-error",
        }
    }

    pub fn record(&self) -> Option<&Record> {
        match self {
            Standing::Proven(record) | Standing::ProvenEdited(record) => Some(record),
            _ => None,
        }
    }

    /// Whether running the commit's checks could prove it: not when nothing is armed or the
    /// checks file is in error (the pre-push hook never tries those).
    pub fn provable(&self) -> bool {
        !matches!(self, Standing::NotArmed | Standing::ChecksError(_))
    }
}

/// Read `note` (the note of the commit's tree, if any) against the commit's tree and verify.sh.
/// A commit with a checks file is classified by [`classify_checks`] instead.
pub fn classify(commit: CommitInfo, note: Option<&str>) -> CommitStatus {
    let proofs = Found::read(note, &commit.tree, commit.verify);
    let (standing, signature) = standing_of_found(&proofs, commit.verify.is_none());
    CommitStatus {
        commit,
        standing,
        signature,
        invalid: proofs.invalid,
        valid: proofs.valid,
        checks: None,
        failure: None,
        cannot_test: None,
        exec: Vec::new(),
    }
}

/// Where the proofs `found` leave one commit or check, and the signature of the one shown;
/// `unarmed` when nothing could have made a proof.
fn standing_of_found(found: &Found, unarmed: bool) -> (Standing, Option<SignatureStatus>) {
    let best = found.best(false);
    let standing = match best {
        Some(record) => standing_of(record),
        None if unarmed => Standing::NotArmed,
        None if found.contest().is_some() => Standing::Contested(Box::new(
            found.contest().cloned().expect("checked just above"),
        )),
        None if found.invalid.is_empty() => Standing::Unproven,
        None => Standing::Invalid,
    };
    let copied = found
        .invalid
        .iter()
        .any(|i| matches!(i.problem, Problem::TreeMismatch { .. }));
    let signature = match best {
        Some(record) => Some(SignatureStatus::unchecked(record)),
        None if copied => Some(SignatureStatus::TreeMismatch),
        None => None,
    };
    (standing, signature)
}

fn standing_of(record: &Record) -> Standing {
    if record.outcome == Outcome::Proven {
        Standing::Proven(record.clone())
    } else {
        Standing::ProvenEdited(record.clone())
    }
}

/// Classify a commit whose tree has a checks file, from its checks with their input trees and
/// proofs (`Err`: the checks file's error). It is proven only when every check is; proven
/// edited when every check is proven and one at least only through an edited script.
pub fn classify_checks(
    commit: CommitInfo,
    checks: Result<Vec<CheckProof>, String>,
) -> CommitStatus {
    let checks = match checks {
        Ok(checks) => checks,
        Err(error) => {
            return CommitStatus {
                commit,
                standing: Standing::ChecksError(error),
                invalid: Vec::new(),
                valid: Vec::new(),
                signature: None,
                checks: Some(Vec::new()),
                failure: None,
                cannot_test: None,
                exec: Vec::new(),
            };
        }
    };
    let checks: Vec<CheckStatus> = checks.into_iter().map(check_status).collect();
    let mut status = CommitStatus {
        commit,
        standing: Standing::NotArmed,
        invalid: Vec::new(),
        valid: Vec::new(),
        signature: None,
        checks: Some(checks),
        failure: None,
        cannot_test: None,
        exec: Vec::new(),
    };
    roll_up(&mut status);
    status
}

fn check_status(proof: CheckProof) -> CheckStatus {
    let CheckProof {
        check,
        input_tree,
        found,
    } = proof;
    let (standing, signature) = match check.runnable() {
        Err(why) => (Standing::ScriptMissing(why), None),
        Ok(_) => standing_of_found(&found, false),
    };
    CheckStatus {
        name: check.name,
        run: check.run,
        script: check.script,
        input_tree,
        standing,
        invalid: found.invalid,
        valid: found.valid,
        signature,
        failure: None,
        cannot_test: None,
    }
}

/// The commit's standing, records and signature from those of its checks: proven when every
/// check is; the record shown is the first edited one, else the first check's; the signature
/// shown is the first that is not good, else the first check's. A checks file that declares
/// no check (and no verify.sh beside it) arms nothing: an empty list never proves a commit.
fn roll_up(status: &mut CommitStatus) {
    let Some(checks) = &status.checks else {
        return;
    };
    status.invalid = checks.iter().flat_map(|c| c.invalid.clone()).collect();
    status.valid = checks.iter().flat_map(|c| c.valid.clone()).collect();
    if checks.is_empty() {
        if !matches!(status.standing, Standing::ChecksError(_)) {
            status.standing = Standing::NotArmed;
        }
        return;
    }
    let records: Option<Vec<&Record>> = checks.iter().map(|c| c.standing.record()).collect();
    status.standing = match records {
        Some(records) => {
            let edited = records.iter().find(|r| r.outcome != Outcome::Proven);
            match edited {
                Some(record) => Standing::ProvenEdited((*record).clone()),
                None => Standing::Proven(records[0].clone()),
            }
        }
        None if let Some(contested) = checks.iter().find_map(|c| match &c.standing {
            Standing::Contested(contested) => Some(contested.clone()),
            _ => None,
        }) =>
        {
            Standing::Contested(contested)
        }
        None if checks
            .iter()
            .filter(|c| c.standing.record().is_none())
            .all(|c| c.standing == Standing::Invalid) =>
        {
            Standing::Invalid
        }
        None => Standing::Unproven,
    };
    status.signature = checks
        .iter()
        .find(|c| !c.signature.as_ref().is_some_and(SignatureStatus::is_good))
        .or(checks.first())
        .and_then(|c| c.signature.clone());
}

/// Which commits a script from outside the history (`--exec`) stands for.
#[derive(Debug, Clone, Copy)]
pub enum Exec<'a> {
    /// None: each commit stands by its own verify.sh or checks.
    None,
    /// `check --exec`: the commits with neither verify.sh nor a checks file stand by this
    /// script's proofs; every other commit by its own.
    Unarmed(&'a Check),
    /// `run <range> --exec`, `bisect --exec`: every commit stands by this script alone.
    Every(&'a Check),
}

/// Each of `ids` classified, with its checks read when its tree has a checks file: what
/// `check`, `log` and the pre-push hook report on. A commit without a checks file costs what
/// it cost before checks files: its commit, root tree and note.
pub fn commit_standings(repo: &Repo, ids: &[ObjectId]) -> Result<Vec<CommitStatus>, git::Error> {
    commit_standings_with(repo, ids, Exec::None)
}

/// [`commit_standings`], with the commits `exec` names standing by a script from outside the
/// history: the one check of their tree, keyed by the tree itself.
pub fn commit_standings_with(
    repo: &Repo,
    ids: &[ObjectId],
    exec: Exec<'_>,
) -> Result<Vec<CommitStatus>, git::Error> {
    // A checks file shared by many commits is parsed once, whichever thread meets it first.
    let parsed = Parsed::default();
    let mut statuses = repo
        .commits_with_notes(ids, |repo, notes, info, note| {
            let unarmed = info.checks_file.is_none() && info.verify.is_none();
            match exec {
                Exec::Every(check) | Exec::Unarmed(check)
                    if unarmed || matches!(exec, Exec::Every(_)) =>
                {
                    let tree = info.tree;
                    Ok(classify_checks(
                        info,
                        Ok(vec![check_proof(check, tree, note.as_deref())]),
                    ))
                }
                _ if info.checks_file.is_some() => with_checks(repo, notes, info, &parsed),
                _ => {
                    let mut status = classify(info, note.as_deref());
                    if unarmed && let Some(note) = note.as_deref() {
                        status.exec = exec_proofs(note, &status.commit.tree);
                    }
                    Ok(status)
                }
            }
        })?
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    // Failures are looked up only when any was recorded, only for what is not proven, and
    // through one view of their ref, which keeps the fanout levels it opened.
    if repo.has_ref(FAILURES_REF)? {
        let mut notes = repo.notes(FAILURES_REF);
        for status in &mut statuses {
            attach_failures(&mut notes, status)?;
        }
    }
    Ok(statuses)
}

/// Attach to `status` the newest failure on record of its verify.sh, or of each of its checks,
/// that is not proven.
fn attach_failures(notes: &mut Notes<'_>, status: &mut CommitStatus) -> Result<(), git::Error> {
    match &mut status.checks {
        None => {
            if let (false, Some((blob, mode))) =
                (status.standing.is_proven(false), status.commit.verify)
            {
                let script = Script { blob, mode };
                status.failure =
                    lookup_failure(notes, status.commit.tree, None, Some(script))?.map(Box::new);
                status.cannot_test = newer_than(
                    lookup_cannot_test(notes, status.commit.tree, None, script)?,
                    status.failure.as_deref(),
                );
                if status.cannot_test.is_some() {
                    status.failure = None;
                }
            }
        }
        Some(checks) => {
            for check in checks.iter_mut() {
                let (false, Some(script)) = (check.standing.is_proven(false), check.script) else {
                    continue;
                };
                let name =
                    (check.name != super::checks_file::VERIFY_CHECK).then_some(check.name.as_str());
                check.failure =
                    lookup_failure(notes, check.input_tree, name, Some(script))?.map(Box::new);
                check.cannot_test = newer_than(
                    lookup_cannot_test(notes, check.input_tree, name, script)?,
                    check.failure.as_deref(),
                );
                if check.cannot_test.is_some() {
                    check.failure = None;
                }
            }
        }
    }
    Ok(())
}

/// `record`, when no `failure` of the same script on the same key is newer: the newest run
/// says where the state stands, and a failure older than it no longer does (its record stays
/// in the note).
fn newer_than(record: Option<CannotTest>, failure: Option<&Failure>) -> Option<Box<CannotTest>> {
    record
        .filter(|record| failure.is_none_or(|failure| record.time > failure.time))
        .map(Box::new)
}

/// The proofs in `note` (of the tree `key`) of scripts from outside the history, the best of
/// each script (by name and blob) first.
fn exec_proofs(note: &str, key: &gix::oid) -> Vec<Record> {
    let mut scripts: Vec<(String, Script)> = super::record::split_records(note)
        .iter()
        .filter_map(|text| super::record::parse_record(text, key).ok())
        .filter_map(|record| Some((record.check?, record.verify)))
        .filter(|(check, _)| check.starts_with(EXEC_PREFIX))
        .collect();
    scripts.sort_by(|a, b| (&a.0, a.1.blob).cmp(&(&b.0, b.1.blob)));
    scripts.dedup();
    scripts
        .into_iter()
        .filter_map(|(check, script)| {
            let found = Found::from_proofs(super::record::Proofs::of_check(
                note,
                key,
                Some(&check),
                Some((script.blob, script.mode)),
            ));
            found.best(false).cloned()
        })
        .collect()
}

/// Classify `commit` (whose tree has a checks file) by its checks.
fn with_checks(
    repo: &Repo,
    notes: &mut Notes<'_>,
    commit: CommitInfo,
    parsed: &Parsed,
) -> Result<CommitStatus, git::Error> {
    let checks = match CheckSet::of_tree_in(repo, commit.tree, parsed) {
        Ok(set) => Ok(tree_check_proofs_in(repo, notes, commit.tree, &set)?),
        Err(ChecksError::Git(error)) => return Err(error),
        Err(error) => Err(error.to_string()),
    };
    Ok(classify_checks(commit, checks))
}

/// A script whose change since a range's base is a verify.sh change (with checks, SPEC.md
/// section 2.1): verify.sh, the checks file, or a named check's script.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Changed {
    Verify,
    ChecksFile,
    /// A check the base has too, whose script is another (or none) at the commit.
    Check {
        name: String,
        run: String,
    },
}

impl Changed {
    /// The path to diff to review it.
    pub fn path(&self) -> &str {
        match self {
            Changed::Verify => git::VERIFY_SCRIPT,
            Changed::ChecksFile => CHECKS_FILE,
            Changed::Check { run, .. } => run,
        }
    }
}

/// A base of a checked range (`<base>..<head>`) and the checked commits whose verify.sh (blob
/// or mode; with checks, whose checks file or a check's script) is not the base's: CI's view
/// of a verify.sh change, which needs no anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyChange {
    pub base: CommitInfo,
    /// What changed.
    pub what: Changed,
    /// The checked commits that changed it: for each version other than the base's (none
    /// included, where the base had one), the oldest checked commit holding it, newest first.
    /// The commits after one hold the change too, and are not named again.
    pub commits: Vec<CommitInfo>,
}

/// For each of `bases` (the commits a range excludes, classified as the checked ones are) and
/// each script that changed, the `checked` commits (newest first, as `git log` lists them) that
/// changed it from the base's; bases no checked commit differs from are left out. Each base
/// gives verify.sh's change first, then the checks file's, then the checks' by name.
pub fn verify_changes(bases: &[CommitStatus], checked: &[CommitStatus]) -> Vec<VerifyChange> {
    let mut changes = Vec::new();
    for base in bases {
        let base_scripts = check_scripts(base);
        // For each change and each version it took, the oldest commit seen holding it.
        let mut by_what: BTreeMap<Changed, BTreeMap<String, usize>> = BTreeMap::new();
        for (at, status) in checked.iter().enumerate() {
            let commit = &status.commit;
            let mut what = Vec::new();
            if commit.verify != base.commit.verify {
                what.push((Changed::Verify, format!("{:?}", commit.verify)));
            }
            if commit.checks_file != base.commit.checks_file {
                what.push((Changed::ChecksFile, format!("{:?}", commit.checks_file)));
            }
            for check in status.checks.iter().flatten() {
                if let Some(before) = base_scripts.get(check.name.as_str())
                    && *before != check.script
                    && check.name != super::checks_file::VERIFY_CHECK
                {
                    let changed = Changed::Check {
                        name: check.name.clone(),
                        run: check.run.clone(),
                    };
                    what.push((changed, format!("{:?}", check.script)));
                }
            }
            for (changed, version) in what {
                by_what.entry(changed).or_default().insert(version, at);
            }
        }
        changes.extend(by_what.into_iter().map(|(what, versions)| {
            let mut first: Vec<usize> = versions.into_values().collect();
            first.sort_unstable();
            first.dedup();
            VerifyChange {
                base: base.commit.clone(),
                what,
                commits: first
                    .into_iter()
                    .map(|at| checked[at].commit.clone())
                    .collect(),
            }
        }));
    }
    changes
}

/// The named checks' scripts of a classified commit, by name.
fn check_scripts(status: &CommitStatus) -> BTreeMap<&str, Option<Script>> {
    status
        .checks
        .iter()
        .flatten()
        .map(|check| (check.name.as_str(), check.script))
        .collect()
}

/// Check the signatures of `checked`'s proofs with `verify`, best proof first, until one is
/// good: that one becomes the proof shown. When none is, the best proof stays, with what its
/// signature said. Unsigned records are not given to `verify`. A commit with checks has each
/// check's proofs checked so, and then stands by its checks again.
pub fn check_signatures<E>(
    checked: &mut CommitStatus,
    verify: &mut dyn FnMut(&Record) -> Result<SignatureStatus, E>,
) -> Result<(), E> {
    if let Some(checks) = &mut checked.checks {
        for check in checks.iter_mut() {
            if matches!(check.standing, Standing::ScriptMissing(_)) {
                continue;
            }
            if let Some((standing, signature)) = first_good(&check.valid, verify)? {
                check.standing = standing;
                check.signature = Some(signature);
            }
        }
        roll_up(checked);
        return Ok(());
    }
    if let Some((standing, signature)) = first_good(&checked.valid, verify)? {
        checked.standing = standing;
        checked.signature = Some(signature);
    }
    Ok(())
}

/// The standing and signature `valid` (best first) leaves once signatures are checked: that
/// of the first proof with a good signature; else, when a signed or unsigned proof is there,
/// the best proof's standing with its own signature's status.
fn first_good<E>(
    valid: &[Record],
    verify: &mut dyn FnMut(&Record) -> Result<SignatureStatus, E>,
) -> Result<Option<(Standing, SignatureStatus)>, E> {
    let mut first = None;
    for record in valid {
        let status = match record.signature {
            Some(_) => verify(record)?,
            None => SignatureStatus::Unsigned,
        };
        if status.is_good() {
            return Ok(Some((standing_of(record), status)));
        }
        first.get_or_insert(status);
    }
    Ok(first.map(|status| (standing_of(&valid[0]), status)))
}

#[cfg(test)]
mod tests {
    use gix::ObjectId;
    use time::OffsetDateTime;

    use super::*;
    use crate::proof::Script;

    #[test]
    fn a_verify_sh_other_than_the_bases_is_a_change_and_the_same_one_is_not() {
        let with = |n: u8, verify: Option<u8>| CommitInfo {
            id: id(n),
            tree: id(n + 50),
            subject: format!("c{n}"),
            verify: verify.map(|v| (id(v), 0o100_755)),
            checks_file: None,
        };
        let base = with(1, Some(9));
        let checked: Vec<CommitStatus> = [with(2, Some(9)), with(3, Some(8)), with(4, None)]
            .into_iter()
            .map(|c| classify(c, None))
            .collect();
        let base = classify(base, None);
        let changes = verify_changes(std::slice::from_ref(&base), &checked);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].base, base.commit);
        assert_eq!(changes[0].what, Changed::Verify);
        let ids: Vec<_> = changes[0].commits.iter().map(|c| c.id).collect();
        assert_eq!(ids, vec![id(3), id(4)]);
        // A mode change is a change too; the same verify.sh everywhere is none.
        let mut chmod = with(5, Some(9));
        chmod.verify = Some((id(9), 0o100_644));
        assert_eq!(
            verify_changes(std::slice::from_ref(&base), &[classify(chmod, None)]).len(),
            1
        );
        assert!(verify_changes(&[base], &checked[..1]).is_empty());
        assert!(verify_changes(&[], &checked).is_empty());
    }

    /// A range of five commits whose second changed the checks file said it changed "in" all
    /// four after the base: the commits after the one that changed it only hold the change.
    #[test]
    fn a_change_is_named_at_the_commit_that_made_it_not_those_after() {
        let with = |n: u8, toml: u8| CommitInfo {
            id: id(n),
            tree: id(n + 50),
            subject: format!("c{n}"),
            verify: Some((id(9), 0o100_755)),
            checks_file: Some((id(toml), 0o100_644)),
        };
        let base = classify(with(1, 20), None);
        // Newest first, as `git log` lists them: 5 and 4 hold 3's change, 2 is the base's.
        let checked: Vec<CommitStatus> = [with(5, 21), with(4, 21), with(3, 21), with(2, 20)]
            .into_iter()
            .map(|c| classify(c, None))
            .collect();
        let changes = verify_changes(std::slice::from_ref(&base), &checked);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].what, Changed::ChecksFile);
        let ids: Vec<_> = changes[0].commits.iter().map(|c| c.id).collect();
        assert_eq!(ids, vec![id(3)]);
    }

    fn id(byte: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[byte; 20])
    }

    fn commit(verify: Option<(ObjectId, u32)>) -> CommitInfo {
        CommitInfo {
            id: id(1),
            tree: id(2),
            subject: "subject".into(),
            verify,
            checks_file: None,
        }
    }

    fn record(outcome: Outcome, tree: ObjectId, blob: ObjectId) -> Record {
        Record {
            outcome,
            tree,
            check: None,
            head: None,
            verify: Script {
                blob,
                mode: 0o100_755,
            },
            verify_anchor: None,
            exit_code: 0,
            duration_ms: 10,
            flaky: 0,
            isolation: None,
            renames_unwatched: false,
            env: None,
            time: OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap(),
            host: "cli".into(),
            session: None,
            tool: "git-prove-it test".into(),
            identity_missing: false,
            verify_diff: None,
            protection: crate::proof::weakening::Protection::default(),
            uncovered: super::super::record::Uncovered::default(),
            tests: crate::proof::test_report::Recorded::default(),
            tests_weakened: Vec::new(),
            signed_off_by: "A <a@example.com>".into(),
            signature: None,
        }
    }

    const VERIFY: Option<(ObjectId, u32)> = None;

    fn armed() -> Option<(ObjectId, u32)> {
        Some((id(3), 0o100_755))
    }

    #[test]
    fn no_note_is_unproven_and_no_verify_sh_is_not_armed() {
        assert_eq!(classify(commit(armed()), None).standing, Standing::Unproven);
        assert_eq!(classify(commit(VERIFY), None).standing, Standing::NotArmed);
        let note = record(Outcome::Proven, id(2), id(3)).render();
        let checked = classify(commit(VERIFY), Some(&note));
        assert_eq!(checked.standing, Standing::NotArmed);
        assert_eq!(
            checked.invalid.len(),
            1,
            "the record names a verify.sh the tree lacks"
        );
    }

    #[test]
    fn a_valid_record_proves_and_an_edited_one_proves_unless_strict() {
        let proven = classify(
            commit(armed()),
            Some(&record(Outcome::Proven, id(2), id(3)).render()),
        );
        assert!(matches!(proven.standing, Standing::Proven(_)));
        assert!(proven.standing.is_proven(true));
        let edited = classify(
            commit(armed()),
            Some(&record(Outcome::BoundedClaimSurvives, id(2), id(3)).render()),
        );
        assert!(matches!(edited.standing, Standing::ProvenEdited(_)));
        assert!(edited.standing.is_proven(false));
        assert!(!edited.standing.is_proven(true));
        assert_eq!(edited.standing.label(), "proven-edited");
    }

    #[test]
    fn records_that_do_not_prove_this_tree_never_count() {
        let hand_written = "tests pass, trust me\n";
        let other_tree = record(Outcome::Proven, id(9), id(3)).render();
        let other_verify = record(Outcome::Proven, id(2), id(8)).render();
        for note in [hand_written, &other_tree, &other_verify] {
            let checked = classify(commit(armed()), Some(note));
            assert_eq!(checked.standing, Standing::Invalid, "{note}");
            assert!(!checked.standing.is_proven(false));
            assert_eq!(checked.invalid.len(), 1);
        }
    }

    #[test]
    fn a_valid_record_beside_an_invalid_one_proves_and_keeps_the_problem() {
        let note = format!(
            "garbage\n\n{}",
            record(Outcome::Proven, id(2), id(3)).render()
        );
        let checked = classify(commit(armed()), Some(&note));
        assert!(matches!(checked.standing, Standing::Proven(_)));
        assert_eq!(checked.invalid.len(), 1);
    }

    fn signed(mut record: Record) -> Record {
        record.signature = Some(crate::signing::Signature {
            armor: "-----BEGIN SSH SIGNATURE-----\n-----END SSH SIGNATURE-----\n".into(),
            signed: record.canonical(),
        });
        record
    }

    #[test]
    fn without_a_check_a_proof_is_unsigned_or_signed_but_not_verified() {
        let plain = record(Outcome::Proven, id(2), id(3));
        let checked = classify(commit(armed()), Some(&plain.render()));
        assert_eq!(checked.signature, Some(SignatureStatus::Unsigned));
        let checked = classify(commit(armed()), Some(&signed(plain).render()));
        assert_eq!(checked.signature, Some(SignatureStatus::NotVerified));
        assert_eq!(classify(commit(armed()), None).signature, None);
    }

    #[test]
    fn a_record_copied_from_another_tree_is_a_tree_mismatch() {
        let copied = signed(record(Outcome::Proven, id(9), id(3))).render();
        let checked = classify(commit(armed()), Some(&copied));
        assert_eq!(checked.standing, Standing::Invalid);
        assert_eq!(checked.signature, Some(SignatureStatus::TreeMismatch));
    }

    #[test]
    fn the_first_proof_with_a_good_signature_is_the_one_shown() {
        let newest_unsigned = {
            let mut r = record(Outcome::Proven, id(2), id(3));
            r.time += time::Duration::hours(1);
            r
        };
        let older_signed = signed(record(Outcome::Proven, id(2), id(3)));
        let note = format!("{}\n{}", newest_unsigned.render(), older_signed.render());
        let mut checked = classify(commit(armed()), Some(&note));
        assert_eq!(checked.standing, Standing::Proven(newest_unsigned.clone()));
        let good = SignatureStatus::Good {
            principal: "a@example.com".into(),
            key: None,
        };
        let mut calls = 0;
        check_signatures::<()>(&mut checked, &mut |_| {
            calls += 1;
            Ok(good.clone())
        })
        .unwrap();
        assert_eq!(calls, 1, "unsigned records are not checked");
        assert_eq!(checked.standing, Standing::Proven(older_signed.clone()));
        assert_eq!(checked.signature, Some(good));

        // None good: the best proof stays, with its own status.
        let mut checked = classify(commit(armed()), Some(&note));
        check_signatures::<()>(&mut checked, &mut |_| Ok(SignatureStatus::Bad)).unwrap();
        assert_eq!(checked.standing, Standing::Proven(newest_unsigned));
        assert_eq!(checked.signature, Some(SignatureStatus::Unsigned));
    }

    fn named(name: &str, script: Option<u8>, records: Vec<Record>) -> CheckProof {
        CheckProof {
            check: crate::proof::Check {
                name: name.into(),
                run: format!("{name}/verify.sh"),
                inputs: vec![name.into(), CHECKS_FILE.into()],
                script: script.map(|n| Script {
                    blob: id(n),
                    mode: 0o100_755,
                }),
            },
            input_tree: id(60),
            found: Found::from_proofs(crate::proof::record::Proofs {
                valid: records,
                ..Default::default()
            }),
        }
    }

    fn with_checks_file() -> CommitInfo {
        let mut info = commit(None);
        info.checks_file = Some((id(7), 0o100_644));
        info
    }

    #[test]
    fn a_commit_with_checks_is_proven_only_when_every_check_is() {
        let proof = |outcome| vec![record(outcome, id(60), id(3))];
        let both = classify_checks(
            with_checks_file(),
            Ok(vec![
                named("api", Some(3), proof(Outcome::Proven)),
                named("docs", Some(3), proof(Outcome::Proven)),
            ]),
        );
        assert!(matches!(both.standing, Standing::Proven(_)));
        assert_eq!(both.checks.as_ref().unwrap().len(), 2);
        assert_eq!(both.valid.len(), 2);

        let one = classify_checks(
            with_checks_file(),
            Ok(vec![
                named("api", Some(3), proof(Outcome::Proven)),
                named("docs", Some(3), Vec::new()),
            ]),
        );
        assert_eq!(one.standing, Standing::Unproven);
        let docs = &one.checks.as_ref().unwrap()[1];
        assert_eq!(
            (docs.name.as_str(), &docs.standing),
            ("docs", &Standing::Unproven)
        );

        let edited = classify_checks(
            with_checks_file(),
            Ok(vec![
                named("api", Some(3), proof(Outcome::Proven)),
                named("docs", Some(3), proof(Outcome::BoundedClaimSurvives)),
            ]),
        );
        assert!(
            matches!(edited.standing, Standing::ProvenEdited(ref r) if r.outcome == Outcome::BoundedClaimSurvives)
        );
        assert!(!edited.standing.is_proven(true));
    }

    #[test]
    fn a_check_without_its_script_is_not_proven_and_a_checks_file_in_error_proves_nothing() {
        // A record cannot vouch for a script the tree does not hold.
        let missing = classify_checks(
            with_checks_file(),
            Ok(vec![named(
                "api",
                None,
                vec![record(Outcome::Proven, id(60), id(3))],
            )]),
        );
        assert_eq!(missing.standing, Standing::Unproven);
        assert_eq!(
            missing.checks.unwrap()[0].standing,
            Standing::ScriptMissing(crate::armed::NotRunnable::Missing)
        );
        let broken = classify_checks(with_checks_file(), Err("line 2: bad".into()));
        assert_eq!(broken.standing, Standing::ChecksError("line 2: bad".into()));
        assert!(!broken.standing.is_proven(false) && !broken.standing.provable());
        assert_eq!(broken.standing.label(), "checks-error");
        // A checks file that declares nothing, without verify.sh, arms nothing.
        let empty = classify_checks(with_checks_file(), Ok(Vec::new()));
        assert_eq!(empty.standing, Standing::NotArmed);
    }

    #[test]
    fn with_checks_every_check_needs_a_good_signature() {
        let signed_proof = || vec![signed(record(Outcome::Proven, id(60), id(3)))];
        let mut checked = classify_checks(
            with_checks_file(),
            Ok(vec![
                named("api", Some(3), signed_proof()),
                named(
                    "docs",
                    Some(3),
                    vec![record(Outcome::Proven, id(60), id(3))],
                ),
            ]),
        );
        let good = SignatureStatus::Good {
            principal: "a@example.com".into(),
            key: None,
        };
        check_signatures::<()>(&mut checked, &mut |_| Ok(good.clone())).unwrap();
        let checks = checked.checks.as_ref().unwrap();
        assert_eq!(checks[0].signature, Some(good.clone()));
        assert_eq!(checks[1].signature, Some(SignatureStatus::Unsigned));
        // The commit shows the signature that fails it: docs' proof is unsigned.
        assert_eq!(checked.signature, Some(SignatureStatus::Unsigned));

        let mut both = classify_checks(
            with_checks_file(),
            Ok(vec![
                named("api", Some(3), signed_proof()),
                named("docs", Some(3), signed_proof()),
            ]),
        );
        check_signatures::<()>(&mut both, &mut |_| Ok(good.clone())).unwrap();
        assert_eq!(both.signature, Some(good));
    }

    #[test]
    fn a_change_of_the_checks_file_or_a_checks_script_is_a_verify_sh_change() {
        let at = |n: u8, file: u8, script: u8| {
            let mut info = with_checks_file();
            info.id = id(n);
            info.checks_file = Some((id(file), 0o100_644));
            classify_checks(info, Ok(vec![named("api", Some(script), Vec::new())]))
        };
        let base = at(1, 7, 3);
        let same = at(2, 7, 3);
        let toml = at(3, 8, 3);
        let script = at(4, 7, 4);
        let changes = verify_changes(std::slice::from_ref(&base), &[same, toml, script]);
        let said: Vec<(&str, Vec<ObjectId>)> = changes
            .iter()
            .map(|c| (c.what.path(), c.commits.iter().map(|c| c.id).collect()))
            .collect();
        assert_eq!(
            said,
            [
                ("prove-it.toml", vec![id(3)]),
                ("api/verify.sh", vec![id(4)])
            ]
        );
        assert!(matches!(&changes[1].what, Changed::Check { name, .. } if name == "api"));
        assert_eq!(changes[1].what.path(), "api/verify.sh");
    }
}
