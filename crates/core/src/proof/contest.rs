//! Contests: the records of the proofs ref that are not proofs but speak of proofs on the same
//! key (SPEC.md section 3.4). A failing run of the same check through the same script names
//! the proofs it contradicts (`contests:`); a person revokes proofs (`revokes:`, they never
//! count again) or accepts them (`accepts:`, the pass counts and the failure stays as
//! history). Each names records by their digest: the blob id of the record's canonical text.
//!
//! Which proofs count once these are read is decided here ([`Marks`]), under the one lookup
//! every command uses (`Proofs::of_check`); writing them is [`on_failure`], [`append_proof`]
//! and [`resolve`].
//! It never prints and never decides a turn.

use std::fmt::Write as _;

use gix::ObjectId;
use time::OffsetDateTime;

use super::checks::{CheckSet, ChecksError};
use super::failure::{FAILURES_REF, Failure, parse_failures};
use super::record::{
    self, Outcome, Problem, Record, Script, one_line, required, rfc3339, script, time_field,
    write_run_by,
};
use crate::git::{self, PROOFS_REF, Repo};
use crate::signing::Signature;

/// What a mark says of the records it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A failing run of the same check through the same script: the named proofs are
    /// contested until a person accepts or revokes them.
    Contest,
    /// The named proofs never count again; the named contests are resolved.
    Revoke,
    /// The named proofs count; the named contests are resolved and kept as history.
    Accept,
}

impl Kind {
    /// The key that lists the digests a mark of this kind names.
    fn key(self) -> &'static str {
        match self {
            Kind::Contest => "contests",
            Kind::Revoke => "revokes",
            Kind::Accept => "accepts",
        }
    }

    /// Never a proof's outcome, so that every reader, older ones too, refuses a mark as a proof.
    fn outcome(self) -> Outcome {
        match self {
            Kind::Contest => Outcome::Disproven,
            Kind::Revoke | Kind::Accept => Outcome::NotProven,
        }
    }
}

/// One contest, revocation or acceptance, as the proofs ref stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub kind: Kind,
    /// The key: the check's input tree, or the state tree for the root verify.sh.
    pub tree: ObjectId,
    /// The named check; `None` for the root verify.sh.
    pub check: Option<String>,
    /// A contest's failing script; `None` for a revocation or an acceptance.
    pub verify: Option<Script>,
    /// The digests of the records it names.
    pub names: Vec<ObjectId>,
    /// A contest's end of the failing run ("exit code 1", "timed out after 300 s").
    pub exit: Option<String>,
    /// A person's reason, for a revocation or an acceptance.
    pub reason: Option<String>,
    /// A contest's time is the failing run's; a revocation's or an acceptance's, its own.
    pub time: OffsetDateTime,
    pub host: String,
    pub session: Option<String>,
    pub tool: String,
    pub identity_missing: bool,
    pub signed_off_by: String,
    pub signature: Option<Signature>,
}

impl Mark {
    /// The mark as the note stores it, ending in a newline.
    pub fn render(&self) -> String {
        let mut out = self.canonical();
        record::write_signature(&mut out, self.signature.as_ref());
        out
    }

    /// The bytes a signature over the mark signs, and its digest's text.
    pub fn canonical(&self) -> String {
        let mut out = String::new();
        record::write_key(
            &mut out,
            self.kind.outcome(),
            &self.tree,
            self.check.as_deref(),
        );
        // The writes go to a String and cannot fail.
        if let Some(verify) = self.verify {
            let _ = writeln!(out, "verify: {verify}");
        }
        let names: Vec<String> = self.names.iter().map(ToString::to_string).collect();
        let _ = writeln!(out, "{}: {}", self.kind.key(), names.join(" "));
        if let Some(exit) = &self.exit {
            let _ = writeln!(out, "exit: {}", one_line(exit));
        }
        if let Some(reason) = &self.reason {
            let _ = writeln!(out, "reason: {}", one_line(reason));
        }
        let _ = writeln!(out, "time: {}", rfc3339(self.time));
        write_run_by(
            &mut out,
            &self.host,
            self.session.as_deref(),
            &self.tool,
            self.identity_missing,
        );
        let _ = writeln!(out, "Signed-off-by: {}", one_line(&self.signed_off_by));
        out
    }

    /// Whether this contest and `other` stand for the same failing run.
    fn same_run(&self, other: &Mark) -> bool {
        self.time == other.time
            && self.host == other.host
            && self.session == other.session
            && self.exit == other.exit
    }

    /// Whether this contest stands for the failing run `failure` recorded.
    fn is_run_of(&self, failure: &Failure) -> bool {
        self.time == failure.time
            && self.host == failure.host
            && self.session == failure.session
            && self.exit.as_deref() == Some(failure.exit.as_str())
    }
}

/// The digest of a record as stored: the blob id (SHA-1, as `git hash-object` gives it) of its
/// canonical text, which is the record without its `ssh-signature:` lines.
pub fn digest(canonical: &str) -> ObjectId {
    gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        canonical.as_bytes(),
    )
    .expect("hashing text held in memory cannot fail")
}

/// A record of a note that is a mark: `None` when it names nothing (a proof, or anything else),
/// `Some(Err)` when it names records but does not read as a mark of `key`.
pub fn parse_mark(text: &str, key: &gix::oid) -> Option<Result<Mark, Problem>> {
    let (signed, signature) = record::split_signature(text).ok()?;
    let fields = record::read_fields(signed).ok()?;
    fields
        .names_records()
        .then(|| mark_of_fields(fields, signature, key))
}

/// The mark that `fields` (of a record that names records, read from the note of `key`) make.
pub(super) fn mark_of_fields(
    fields: record::Fields,
    signature: Option<Signature>,
    key: &gix::oid,
) -> Result<Mark, Problem> {
    let (kind, names) = match (fields.contests, fields.revokes, fields.accepts) {
        (Some(names), None, None) => (Kind::Contest, names),
        (None, Some(names), None) => (Kind::Revoke, names),
        (None, None, Some(names)) => (Kind::Accept, names),
        (None, None, None) => {
            return Err(Problem::Malformed(
                "a record read as a mark names no record".to_string(),
            ));
        }
        _ => {
            return Err(Problem::Malformed(
                "a record names records for more than one reason".to_string(),
            ));
        }
    };
    (|| {
        let outcome = required(fields.outcome, "outcome")?;
        if outcome != kind.outcome().as_str() {
            return Err(Problem::Malformed(format!(
                "outcome {outcome:?} does not go with `{}`",
                kind.key()
            )));
        }
        let tree = record::object_id(&required(fields.tree, "tree")?, "tree")?;
        if tree != key {
            return Err(Problem::TreeMismatch {
                recorded: tree,
                key: key.to_owned(),
            });
        }
        let names = names
            .split_whitespace()
            .map(|name| record::object_id(name, kind.key()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Mark {
            kind,
            tree,
            check: fields.check.filter(|check| !check.is_empty()),
            verify: match fields.verify {
                Some(value) => Some(script(&value, "verify")?),
                None => None,
            },
            names,
            exit: fields.exit,
            reason: fields.reason,
            time: time_field(fields.time)?,
            host: fields.host.unwrap_or_default(),
            session: fields.session.filter(|s| s != "none"),
            tool: fields.tool.unwrap_or_default(),
            identity_missing: fields.identity.as_deref() == Some("missing"),
            signed_off_by: required(fields.signed_off_by, "Signed-off-by")?,
            signature,
        })
    })()
}

/// A proof that a failing run of the same check through the same script contradicts, and no
/// person has accepted or revoked since: it does not count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contested {
    pub proof: Record,
    /// The contest: when the failing run was, by which host, how it ended.
    pub failure: Mark,
}

/// The marks of one note that concern one check, and what they make of its proofs.
#[derive(Debug, Default)]
pub struct Marks {
    marks: Vec<Mark>,
}

impl Marks {
    /// The marks among `texts` (the records of the note of `key`) of `check`.
    pub fn of_check(texts: &[String], key: &gix::oid, check: Option<&str>) -> Self {
        Marks {
            marks: texts
                .iter()
                .filter_map(|text| parse_mark(text, key)?.ok())
                .filter(|mark| mark.check.as_deref() == check)
                .collect(),
        }
    }

    /// The marks of `check` among `marks`, those of one note already read.
    pub fn of_check_among<'a>(
        marks: impl IntoIterator<Item = &'a Mark>,
        check: Option<&str>,
    ) -> Self {
        Marks {
            marks: marks
                .into_iter()
                .filter(|mark| mark.check.as_deref() == check)
                .cloned()
                .collect(),
        }
    }

    /// Whether there are none: then no proof is contested, revoked or accepted.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    fn named_by(&self, kinds: &[Kind], digest: &ObjectId) -> bool {
        self.marks
            .iter()
            .any(|m| kinds.contains(&m.kind) && m.names.contains(digest))
    }

    /// Whether a person revoked the record of `digest`.
    pub fn revoked(&self, digest: &ObjectId) -> bool {
        self.named_by(&[Kind::Revoke], digest)
    }

    /// Whether a person accepted or revoked the mark `mark`.
    fn resolved(&self, mark: &Mark) -> bool {
        self.named_by(&[Kind::Revoke, Kind::Accept], &digest(&mark.canonical()))
    }

    /// The newest contest of the proof of `digest` no person has resolved, if there is one.
    pub fn contest_of(&self, digest: &ObjectId) -> Option<&Mark> {
        self.marks
            .iter()
            .filter(|m| m.kind == Kind::Contest && m.names.contains(digest))
            .filter(|m| !self.resolved(m))
            .max_by_key(|m| m.time)
    }

    /// The acceptances a proof of `digest` counts through: those naming it, when a contest
    /// named it; empty for a proof no contest ever named.
    pub fn acceptances_of(&self, digest: &ObjectId) -> Vec<Mark> {
        let contested = self
            .marks
            .iter()
            .any(|m| m.kind == Kind::Contest && m.names.contains(digest));
        if !contested {
            return Vec::new();
        }
        self.marks
            .iter()
            .filter(|m| m.kind == Kind::Accept && m.names.contains(digest))
            .cloned()
            .collect()
    }

    /// The contests no person has resolved, through `script`.
    fn open_contests(&self, script: Script) -> impl Iterator<Item = &Mark> {
        self.marks
            .iter()
            .filter(move |m| m.kind == Kind::Contest && m.verify == Some(script))
            .filter(|m| !self.resolved(m))
    }

    /// Whether the failing run `failure` was resolved by a person: a contest standing for it
    /// was accepted or revoked.
    fn failure_resolved(&self, failure: &Failure) -> bool {
        self.marks
            .iter()
            .filter(|m| m.kind == Kind::Contest && m.is_run_of(failure))
            .any(|m| self.resolved(m))
    }

    /// Every contest of the proofs of `digests`, resolved or not.
    fn contests_naming(&self, digests: &[ObjectId]) -> Vec<ObjectId> {
        self.marks
            .iter()
            .filter(|m| m.kind == Kind::Contest && m.names.iter().any(|d| digests.contains(d)))
            .map(|m| digest(&m.canonical()))
            .collect()
    }
}

/// The proofs of `check` through `script` in the note `existing` of `key` that a person has not
/// revoked, as (record, digest).
fn standing_proofs(
    existing: &str,
    key: &gix::oid,
    check: Option<&str>,
    script: Script,
) -> Vec<(Record, ObjectId)> {
    let texts = record::split_records(existing);
    let marks = Marks::of_check(&texts, key, check);
    texts
        .iter()
        .filter_map(|text| {
            let record = record::parse_record(text, key).ok()?;
            let digest = record::digest_of_text(text);
            (record.check.as_deref() == check && record.verify == script && !marks.revoked(&digest))
                .then_some((record, digest))
        })
        .collect()
}

impl Mark {
    /// The contest the failing run `failure` makes of the proofs `names` on its key.
    fn contest(failure: &Failure, names: Vec<ObjectId>) -> Mark {
        Mark {
            kind: Kind::Contest,
            tree: failure.tree,
            check: failure.check.clone(),
            verify: Some(failure.verify),
            names,
            exit: Some(failure.exit.clone()),
            reason: None,
            time: failure.time,
            host: failure.host.clone(),
            session: failure.session.clone(),
            tool: failure.tool.clone(),
            identity_missing: failure.identity_missing,
            signed_off_by: failure.signed_off_by.clone(),
            signature: None,
        }
    }
}

/// A failing run was recorded: contest every proof of the same check through the same script
/// on its key that still stands. Returns whether a contest was written.
pub fn on_failure(repo: &Repo, failure: &Failure) -> Result<bool, git::Error> {
    let key = failure.tree;
    let contest = |existing: &str| {
        let proofs = standing_proofs(existing, &key, failure.check.as_deref(), failure.verify);
        if proofs.is_empty() {
            return existing.to_string();
        }
        let names = proofs.into_iter().map(|(_, digest)| digest).collect();
        record::merge(existing, &Mark::contest(failure, names).render())
    };
    repo.notes(PROOFS_REF).update(
        key,
        &format!("prove-it: contest the proofs of tree {key}"),
        contest,
    )
}

/// The failing runs on record of `check` through `script` for `key` (the failures ref), which
/// a proof written there must be contested by unless a person resolved them.
pub fn failures_of(
    repo: &Repo,
    key: ObjectId,
    check: Option<&str>,
    script: Script,
) -> Result<Vec<Failure>, git::Error> {
    Ok(match repo.notes(FAILURES_REF).lookup(&key)? {
        Some(note) => parse_failures(&note, &key)
            .into_iter()
            .filter(|f| f.is_of(check, script))
            .collect(),
        None => Vec::new(),
    })
}

/// The note `existing` with the proof `proof` added, and contested for each failing run of the
/// same check through the same script on its key that no person has resolved, whether the run
/// is among `failures` (the failures ref) or only in a contest of the note (from another
/// clone): one write, so that no reader ever sees the proof without its contest.
pub fn append_proof(existing: &str, proof: &Record, failures: &[Failure]) -> String {
    let key = proof.tree;
    let name = digest(&proof.canonical());
    let mut note = record::append(existing, proof);
    let texts = record::split_records(existing);
    let marks = Marks::of_check(&texts, &key, proof.check.as_deref());
    let mut runs: Vec<Mark> = marks.open_contests(proof.verify).cloned().collect();
    let check = proof.check.as_deref();
    for failure in failures
        .iter()
        .filter(|f| f.tree == key && f.is_of(check, proof.verify) && !marks.failure_resolved(f))
    {
        runs.push(Mark::contest(failure, Vec::new()));
    }
    let mut written: Vec<&Mark> = Vec::new();
    for run in &runs {
        if written.iter().any(|w| w.same_run(run)) || run.names.contains(&name) {
            continue;
        }
        written.push(run);
        let mark = Mark {
            names: vec![name],
            signature: None,
            ..run.clone()
        };
        note = record::merge(&note, &mark.render());
    }
    note
}

/// One key and check whose proofs a person resolves, and which of them (by digest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub key: ObjectId,
    pub check: Option<String>,
    pub proofs: Vec<ObjectId>,
}

/// Who resolves, and why: the fields every revocation or acceptance carries.
pub struct Resolver<'a> {
    pub kind: Kind,
    pub reason: &'a str,
    pub time: OffsetDateTime,
    pub tool: String,
    pub identity_missing: bool,
    pub signed_off_by: String,
    /// Signs the canonical text when signing is on.
    pub sign: &'a dyn Fn(&str) -> Result<Option<String>, crate::signing::Error>,
}

/// The proofs of `check` on `key` a person may resolve, as digests: for a revocation, every
/// proof not revoked yet; for an acceptance, those contested and not resolved.
pub fn resolvable(note: &str, key: &gix::oid, check: Option<&str>, kind: Kind) -> Vec<ObjectId> {
    let texts = record::split_records(note);
    let marks = Marks::of_check(&texts, key, check);
    texts
        .iter()
        .filter_map(|text| {
            let record = record::parse_record(text, key).ok()?;
            let digest = record::digest_of_text(text);
            let wanted = record.check.as_deref() == check
                && !marks.revoked(&digest)
                && (kind == Kind::Revoke || marks.contest_of(&digest).is_some());
            wanted.then_some(digest)
        })
        .collect()
}

/// The targets of a person's revocation or acceptance in the committed tree `tree`: each check
/// of it (only `only`, by its name, when given; `verify.sh` names the root verify.sh), keyed by
/// its input tree, with the proofs [`resolvable`] finds there.
pub fn targets_of_tree(
    repo: &Repo,
    tree: ObjectId,
    only: Option<&str>,
    kind: Kind,
) -> Result<Vec<Target>, ChecksError> {
    let set = CheckSet::of_tree(repo, tree)?;
    let mut notes = repo.notes(PROOFS_REF);
    let mut targets = Vec::new();
    for check in set
        .checks
        .iter()
        .filter(|c| only.is_none_or(|name| c.name == name))
    {
        let key = repo.tree_input_tree(tree, &check.inputs)?;
        let note = notes.lookup(&key)?.unwrap_or_default();
        let name = check.record_name();
        targets.push(Target {
            key,
            check: name.map(str::to_string),
            proofs: resolvable(&note, &key, name, kind),
        });
    }
    Ok(targets)
}

/// Write one revocation or acceptance per target naming its proofs and every contest of them;
/// targets without proofs are passed over. Returns the marks written.
pub fn resolve(repo: &Repo, targets: &[Target], by: &Resolver<'_>) -> Result<Vec<Mark>, Error> {
    let mut written = Vec::new();
    for target in targets.iter().filter(|t| !t.proofs.is_empty()) {
        let note = repo
            .notes(PROOFS_REF)
            .lookup(&target.key)?
            .unwrap_or_default();
        let texts = record::split_records(&note);
        let marks = Marks::of_check(&texts, &target.key, target.check.as_deref());
        let mut names = target.proofs.clone();
        names.extend(marks.contests_naming(&target.proofs));
        let mut mark = Mark {
            kind: by.kind,
            tree: target.key,
            check: target.check.clone(),
            verify: None,
            names,
            exit: None,
            reason: Some(by.reason.to_string()),
            time: by.time,
            host: "cli".to_string(),
            session: None,
            tool: by.tool.clone(),
            identity_missing: by.identity_missing,
            signed_off_by: by.signed_off_by.clone(),
            signature: None,
        };
        let canonical = mark.canonical();
        if let Some(armor) = (by.sign)(&canonical)? {
            mark.signature = Some(Signature {
                armor,
                signed: canonical,
            });
        }
        let what = format!("prove-it: {} proofs of tree {}", by.kind.key(), target.key);
        repo.notes(PROOFS_REF)
            .update(target.key, &what, |existing| {
                record::merge(existing, &mark.render())
            })?;
        written.push(mark);
    }
    Ok(written)
}

/// Why proofs could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Git(#[from] git::Error),
    #[error("could not sign the record")]
    Sign(#[from] crate::signing::Error),
}

/// Whether the proof `proof` (just written) is contested in the proofs ref now.
pub fn is_contested(repo: &Repo, proof: &Record) -> Result<bool, git::Error> {
    let Some(note) = repo.notes(PROOFS_REF).lookup(&proof.tree)? else {
        return Ok(false);
    };
    let texts = record::split_records(&note);
    let marks = Marks::of_check(&texts, &proof.tree, proof.check.as_deref());
    Ok(marks.contest_of(&digest(&proof.canonical())).is_some())
}

/// The merge `doctor --restore` puts records back with: the union of records, less the proofs
/// a revocation on either side names, so that a revoked proof is never brought back.
pub fn merge_unrevoked(ours: &str, theirs: &str) -> String {
    let texts = record::split_records(&record::merge(ours, theirs));
    let revoked: Vec<ObjectId> = texts
        .iter()
        .filter_map(|text| {
            let tree = record::read_fields(record::split_signature(text).ok()?.0)
                .ok()?
                .tree?;
            let key = ObjectId::from_hex(tree.as_bytes()).ok()?;
            parse_mark(text, &key)?.ok()
        })
        .filter(|mark| mark.kind == Kind::Revoke)
        .flat_map(|mark| mark.names)
        .collect();
    let theirs: Vec<String> = record::split_records(theirs)
        .into_iter()
        .filter(|text| !revoked.contains(&record::digest_of_text(text)))
        .collect();
    record::merge(ours, &theirs.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proof::record::{Proofs, Record};

    fn id(hex: &str) -> ObjectId {
        ObjectId::from_hex(hex.as_bytes()).unwrap()
    }

    const TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const BLOB: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

    fn script() -> Script {
        Script {
            blob: id(BLOB),
            mode: 0o100755,
        }
    }

    fn proof() -> Record {
        Record {
            outcome: Outcome::Proven,
            tree: id(TREE),
            check: None,
            head: None,
            verify: script(),
            verify_anchor: None,
            exit_code: 0,
            duration_ms: 5,
            flaky: 0,
            isolation: None,
            renames_unwatched: false,
            env: None,
            uncovered: super::super::record::Uncovered::default(),
            tests: crate::proof::test_report::Recorded::default(),
            tests_weakened: Vec::new(),
            time: OffsetDateTime::from_unix_timestamp(1_795_978_336).unwrap(),
            host: "cli".into(),
            session: None,
            tool: "git-prove-it 0.1.0".into(),
            identity_missing: false,
            verify_diff: None,
            protection: crate::proof::weakening::Protection::default(),
            signed_off_by: "A U Thor <author@example.com>".into(),
            signature: None,
        }
    }

    fn failure() -> Failure {
        Failure {
            tree: id(TREE),
            check: None,
            head: None,
            verify: script(),
            exit: "exit code 1".into(),
            exit_code: Some(1),
            duration_ms: 3,
            attempts: 1,
            time: OffsetDateTime::from_unix_timestamp(1_795_978_400).unwrap(),
            host: "claude".into(),
            session: Some("s-1".into()),
            tool: "git-prove-it 0.1.0".into(),
            identity_missing: false,
            output: vec!["FAILED".into()],
            signed_off_by: "A U Thor <author@example.com>".into(),
        }
    }

    fn mark(kind: Kind, names: Vec<ObjectId>) -> Mark {
        Mark {
            kind,
            tree: id(TREE),
            check: Some("api".into()),
            verify: (kind == Kind::Contest).then(script),
            names,
            exit: (kind == Kind::Contest).then(|| "exit code 1".to_string()),
            reason: (kind != Kind::Contest).then(|| "a person's reason".to_string()),
            time: OffsetDateTime::from_unix_timestamp(1_795_978_500).unwrap(),
            host: "cli".into(),
            session: None,
            tool: "git-prove-it 0.1.0".into(),
            identity_missing: false,
            signed_off_by: "A U Thor <author@example.com>".into(),
            signature: None,
        }
    }

    fn read(note: &str) -> Proofs {
        Proofs::of_check(note, &id(TREE), None, Some((id(BLOB), 0o100755)))
    }

    #[test]
    fn a_mark_renders_exactly_and_reads_back_for_each_kind() {
        let names = vec![id(BLOB), id(TREE)];
        let contest = mark(Kind::Contest, names.clone());
        assert_eq!(
            contest.render(),
            format!(
                "prove-it-record: 1\n\
                 outcome: DISPROVEN\n\
                 tree: {TREE}\n\
                 check: api\n\
                 verify: {BLOB} 100755\n\
                 contests: {BLOB} {TREE}\n\
                 exit: exit code 1\n\
                 time: 2026-11-29T18:55:00Z\n\
                 host: cli\n\
                 session: none\n\
                 tool: git-prove-it 0.1.0\n\
                 Signed-off-by: A U Thor <author@example.com>\n"
            )
        );
        for kind in [Kind::Contest, Kind::Revoke, Kind::Accept] {
            let written = mark(kind, names.clone());
            let parsed = parse_mark(&written.render(), &id(TREE));
            assert_eq!(parsed, Some(Ok(written.clone())), "{kind:?}");
        }
        let revoke = mark(Kind::Revoke, names).render();
        assert!(
            revoke.contains("outcome: NOT_PROVEN\nrevokes: ") || revoke.contains("\nrevokes: ")
        );
        assert!(revoke.contains("\nreason: a person's reason\n"), "{revoke}");
    }

    /// Readers before contests read every record as a proof or not: a mark must never pass as
    /// one, whatever its kind, or an older version would take a revocation for a proof.
    #[test]
    fn a_mark_is_never_a_proof_to_the_proof_parser() {
        for kind in [Kind::Contest, Kind::Revoke, Kind::Accept] {
            let text = mark(kind, vec![id(BLOB)]).render();
            let parsed = record::parse_record(&text, &id(TREE));
            assert!(
                matches!(&parsed, Err(Problem::Malformed(m)) if m.contains("not a proof")),
                "{kind:?}: {parsed:?}"
            );
        }
    }

    #[test]
    fn a_mark_whose_outcome_does_not_go_with_its_kind_is_malformed_and_shown() {
        let text = mark(Kind::Revoke, vec![id(BLOB)])
            .render()
            .replace("outcome: NOT_PROVEN", "outcome: PROVEN");
        assert!(matches!(
            parse_mark(&text, &id(TREE)),
            Some(Err(Problem::Malformed(_)))
        ));
        let proofs = Proofs::of_check(&text, &id(TREE), Some("api"), None);
        assert!(proofs.valid.is_empty());
        assert_eq!(proofs.invalid.len(), 1);
    }

    #[test]
    fn the_digest_is_the_blob_id_git_gives_the_records_text() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            digest("hello\n"),
            id("ce013625030ba8dba906f756967f9e9ca394464a")
        );
        let text = proof().render();
        assert_eq!(record::digest_of_text(&text), digest(&proof().canonical()));
    }

    #[test]
    fn a_pass_then_a_failure_contests_and_a_failure_then_a_pass_too() {
        // Pass, then fail: the contest names the proof.
        let note = record::append("", &proof());
        let digest_p = digest(&proof().canonical());
        let contest = Mark {
            check: None,
            ..mark(Kind::Contest, vec![digest_p])
        };
        let note = record::merge(&note, &contest.render());
        let proofs = read(&note);
        assert!(proofs.valid.is_empty());
        assert_eq!(proofs.contested.len(), 1);
        assert_eq!(proofs.contested[0].proof, proof());

        // Fail, then pass: written with the proof, in one note.
        let note = append_proof("", &proof(), &[failure()]);
        let proofs = read(&note);
        assert!(proofs.valid.is_empty(), "{note}");
        assert_eq!(proofs.contested[0].failure.host, "claude");
        // A failure of another script contests nothing.
        let other = Failure {
            verify: Script {
                blob: id(TREE),
                mode: 0o100755,
            },
            ..failure()
        };
        let note = append_proof("", &proof(), &[other]);
        assert_eq!(read(&note).valid, [proof()]);
    }

    #[test]
    fn accept_and_revoke_resolve_the_contests_they_name() {
        let note = append_proof("", &proof(), &[failure()]);
        let texts = record::split_records(&note);
        let marks = Marks::of_check(&texts, &id(TREE), None);
        let digest_p = digest(&proof().canonical());
        let contests = marks.contests_naming(&[digest_p]);
        assert_eq!(contests.len(), 1);
        let mut names = vec![digest_p];
        names.extend(contests);

        let accept = Mark {
            check: None,
            ..mark(Kind::Accept, names.clone())
        };
        let accepted = record::merge(&note, &accept.render());
        assert_eq!(read(&accepted).valid, [proof()]);
        // The failure is resolved: a proof written later is not contested by it again.
        let later = Record {
            time: proof().time + time::Duration::minutes(5),
            ..proof()
        };
        let again = append_proof(&accepted, &later, &[failure()]);
        assert_eq!(read(&again).valid.len(), 2, "{again}");

        let revoke = Mark {
            check: None,
            ..mark(Kind::Revoke, names)
        };
        let revoked = record::merge(&note, &revoke.render());
        let proofs = read(&revoked);
        assert!(proofs.valid.is_empty() && proofs.contested.is_empty());
        assert_eq!(proofs.revoked, [proof()]);
    }

    /// A note written before contests existed reads as it did, and its records' digests are
    /// what `git hash-object` gives their bytes, so a revocation can name them.
    #[test]
    fn an_old_note_still_reads_and_its_digest_is_gits_blob_id() {
        // Pinned bytes of a record as the first release wrote it.
        let old = "prove-it-record: 1\noutcome: PROVEN\ntree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nhead: none\nverify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\nverify-anchor: none\nexit-code: 0\nduration-ms: 5\ntime: 2026-11-29T18:52:16Z\nhost: cli\nsession: none\ntool: git-prove-it 0.1.0\nidentity: missing\nSigned-off-by: git-prove-it <git-prove-it@localhost>\n";
        let proofs = read(old);
        assert_eq!(proofs.valid.len(), 1);
        assert!(proofs.contested.is_empty() && proofs.revoked.is_empty());
        // `printf '<the record>' | git hash-object --stdin`
        let pinned = id("e9d61908d864efca6dec0d24a1a6ae7fe51b4577");
        assert_eq!(record::digest_of_text(old), pinned);
        let revoke = Mark {
            check: None,
            ..mark(Kind::Revoke, vec![pinned])
        };
        let proofs = read(&record::merge(old, &revoke.render()));
        assert!(proofs.valid.is_empty());
        assert_eq!(proofs.revoked.len(), 1);
    }

    /// With signing on, a hand-written unsigned acceptance must not make a contested signed
    /// proof count: the acceptance needs a good signature of its own.
    #[test]
    fn with_signing_on_only_a_signed_acceptance_lets_a_contested_proof_count() {
        let signature = |armor: &str| Signature {
            armor: armor.into(),
            signed: String::new(),
        };
        let signed = Record {
            signature: Some(signature("proof")),
            ..proof()
        };
        let note = append_proof("", &signed, &[failure()]);
        let texts = record::split_records(&note);
        let marks = Marks::of_check(&texts, &id(TREE), None);
        let digest_p = record::digest_of_text(&signed.render());
        let mut names = vec![digest_p];
        names.extend(marks.contests_naming(&[digest_p]));
        let accept = |armor: Option<&str>| Mark {
            check: None,
            signature: armor.map(signature),
            ..mark(Kind::Accept, names.clone())
        };
        let found = |accept: Mark| {
            crate::proof::Found::from_proofs(read(&record::merge(&note, &accept.render())))
        };
        let good = &mut |signature: &Signature, _| Ok::<_, ()>(signature.armor.trim() == "good");

        let unsigned = found(accept(None));
        assert!(unsigned.best(false).is_some(), "signing off: it counts");
        assert_eq!(unsigned.best(true), None);
        assert_eq!(unsigned.best_trusted(true, good), Ok(None));

        let forged = found(accept(Some("forged")));
        assert_eq!(forged.best_trusted(true, good), Ok(None));

        let proof_good = Record {
            signature: Some(signature("good")),
            ..signed.clone()
        };
        let note = append_proof("", &proof_good, &[failure()]);
        let digest_p = record::digest_of_text(&proof_good.render());
        let texts = record::split_records(&note);
        let marks = Marks::of_check(&texts, &id(TREE), None);
        let mut names = vec![digest_p];
        names.extend(marks.contests_naming(&[digest_p]));
        let read_with = |armor: Option<&str>| {
            let accept = Mark {
                check: None,
                signature: armor.map(signature),
                ..mark(Kind::Accept, names.clone())
            };
            crate::proof::Found::from_proofs(read(&record::merge(&note, &accept.render())))
        };
        assert_eq!(read_with(Some("forged")).best_trusted(true, good), Ok(None));
        let mut time = |found: &crate::proof::Found| {
            found
                .best_trusted(true, good)
                .map(|best| best.map(|r| r.time))
        };
        assert_eq!(time(&read_with(Some("good"))), Ok(Some(proof_good.time)));
        // A proof no contest ever named needs no acceptance.
        let plain = crate::proof::Found::from_proofs(read(&proof_good.render()));
        assert_eq!(time(&plain), Ok(Some(proof_good.time)));
    }

    #[test]
    fn restoring_never_brings_back_a_revoked_proof() {
        let digest_p = digest(&proof().canonical());
        let revoke = Mark {
            check: None,
            ..mark(Kind::Revoke, vec![digest_p])
        }
        .render();
        let lost = record::merge(&proof().render(), &revoke);
        // The whole note dropped: the revocation comes back, the proof it names does not.
        assert_eq!(merge_unrevoked("", &lost), revoke);
        // The revocation still there: the proof does not come back beside it.
        assert_eq!(merge_unrevoked(&revoke, &proof().render()), revoke);
        // Anything else comes back as the union would have it.
        let other = Record {
            host: "claude".into(),
            ..proof()
        };
        assert_eq!(
            merge_unrevoked(&revoke, &other.render()),
            record::merge(&revoke, &other.render())
        );
    }
}
