//! Cannot-test records: what a run that could not test a state leaves behind (verify.sh or a
//! check exiting 125, as `git bisect run` has it; a setup that could not run), in the local
//! notes ref `refs/notes/prove-it-failures` beside the failure records (SPEC.md section 2.2),
//! keyed as its proofs would be (the check's input tree; the state tree for the root
//! verify.sh).
//!
//! A cannot-test record is a record of version 1 whose outcome is `INSUFFICIENT_EVIDENCE` and
//! which carries a `cannot-test:` line with the reason ("exit 125"). The proofs' reader refuses
//! it as "not a proof" and the failures' reader as "not a failure": it never proves a state and
//! never says its code fails. It only tells `log` and `bisect` that the state could not be
//! tested, and `bisect` skips such a commit as `git bisect skip` does.

use std::fmt::Write as _;

use gix::ObjectId;
use time::OffsetDateTime;

use super::record::{
    self, OUTPUT, Outcome, Problem, Script, number, object_id, one_line, optional_id, required,
    rfc3339, script, time_field, write_run_by,
};
use crate::git::{self, FAILURES_REF, Notes, Repo};

/// The most cannot-test records of one check one note keeps (the newest).
const KEPT: usize = 3;

/// The reason a script exiting [`crate::verify::CANNOT_TEST`] gives.
pub const EXIT_125: &str = "exit 125";

/// One run that could not test a check on one state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CannotTest {
    /// The check's input tree: the state tree itself for the root verify.sh.
    pub tree: ObjectId,
    /// The named check; `None` for the root verify.sh.
    pub check: Option<String>,
    pub head: Option<ObjectId>,
    /// The script that could not test it.
    pub verify: Script,
    /// Why, in a few words: "exit 125", "setup failed", "no setup".
    pub reason: String,
    /// The script's exit code, when one ran and exited.
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub time: OffsetDateTime,
    pub host: String,
    pub session: Option<String>,
    pub tool: String,
    pub identity_missing: bool,
    /// The last lines the run printed, bounded and stripped as a failure record's are.
    pub output: Vec<String>,
    pub signed_off_by: String,
}

impl CannotTest {
    /// A record of `check` (`None`: the root verify.sh) through `verify` on the input tree
    /// `key`, by `host` at `time`, for `reason`, with the repository's identity and HEAD; the
    /// caller fills in the run's exit code, duration and output when there was a run.
    pub fn new(
        repo: &Repo,
        key: ObjectId,
        check: Option<&str>,
        verify: Script,
        reason: &str,
        host: &str,
        time: OffsetDateTime,
    ) -> CannotTest {
        let identity = repo.identity();
        CannotTest {
            tree: key,
            check: check.map(str::to_string),
            head: repo.head_commit().ok().flatten(),
            verify,
            reason: reason.to_string(),
            exit_code: None,
            duration_ms: 0,
            time,
            host: host.to_string(),
            session: None,
            tool: format!("git-prove-it {}", env!("CARGO_PKG_VERSION")),
            identity_missing: identity.missing,
            output: Vec::new(),
            signed_off_by: identity.display.clone(),
        }
    }

    /// The record as the note stores it, ending in a newline.
    pub fn render(&self) -> String {
        let mut out = String::new();
        record::write_key(
            &mut out,
            Outcome::InsufficientEvidence,
            &self.tree,
            self.check.as_deref(),
        );
        // The writes go to a String and cannot fail.
        let _ = writeln!(out, "head: {}", record::or_none(self.head));
        let _ = writeln!(out, "verify: {}", self.verify);
        let _ = writeln!(out, "cannot-test: {}", one_line(&self.reason));
        let _ = writeln!(out, "exit-code: {}", record::or_none(self.exit_code));
        let _ = writeln!(out, "duration-ms: {}", self.duration_ms);
        let _ = writeln!(out, "time: {}", rfc3339(self.time));
        write_run_by(
            &mut out,
            &self.host,
            self.session.as_deref(),
            &self.tool,
            self.identity_missing,
        );
        super::codec::write_lines(&mut out, OUTPUT, self.output.iter().map(String::as_str));
        let _ = writeln!(out, "Signed-off-by: {}", one_line(&self.signed_off_by));
        out
    }

    fn is_of(&self, check: Option<&str>, script: Script) -> bool {
        self.check.as_deref() == check && self.verify == script
    }
}

/// The cannot-test records of a note attached to `key`, oldest first; anything else (proofs,
/// failures, records of another key) is left out.
pub fn parse_cannot_tests(note: &str, key: &gix::oid) -> Vec<CannotTest> {
    record::split_records(note)
        .iter()
        .filter_map(|text| parse_cannot_test(text, key).ok())
        .collect()
}

fn parse_cannot_test(text: &str, key: &gix::oid) -> Result<CannotTest, Problem> {
    let fields = record::read_fields(text)?;
    let outcome = required(fields.outcome, "outcome")?;
    if outcome != Outcome::InsufficientEvidence.as_str() {
        return Err(Problem::Malformed(format!(
            "outcome {outcome:?} is not a cannot-test record"
        )));
    }
    let reason = required(fields.cannot_test, "cannot-test")?;
    let tree = object_id(&required(fields.tree, "tree")?, "tree")?;
    if tree != key {
        return Err(Problem::TreeMismatch {
            recorded: tree,
            key: key.to_owned(),
        });
    }
    let exit_code = match fields.exit_code.as_deref().unwrap_or("none") {
        "none" => None,
        code => Some(
            code.parse()
                .map_err(|_| Problem::Malformed(format!("exit-code {code:?} is not a number")))?,
        ),
    };
    Ok(CannotTest {
        tree,
        check: fields.check.filter(|check| !check.is_empty()),
        head: optional_id(fields.head.as_deref().unwrap_or("none"), "head")?,
        verify: script(&required(fields.verify, "verify")?, "verify")?,
        reason,
        exit_code,
        duration_ms: number(fields.duration_ms, "duration-ms")?,
        time: time_field(fields.time)?,
        host: fields.host.unwrap_or_default(),
        session: fields.session.filter(|s| s != "none"),
        tool: fields.tool.unwrap_or_default(),
        identity_missing: fields.identity.as_deref() == Some("missing"),
        output: fields
            .output
            .map(|block| block.lines().map(str::to_string).collect())
            .unwrap_or_default(),
        signed_off_by: required(fields.signed_off_by, "Signed-off-by")?,
    })
}

/// The note after adding `record` to `existing`: the newest [`KEPT`] cannot-test records of its
/// check, every other record kept as it is.
fn append(existing: &str, new: &CannotTest) -> String {
    record::append_bounded(existing, &new.render(), KEPT, |text| {
        parse_cannot_test(text, &new.tree)
            .is_ok_and(|other| other.is_of(new.check.as_deref(), new.verify))
    })
}

/// Record that `record.check` could not be tested on `record.tree`, in the failures ref.
pub fn record_cannot_test(repo: &Repo, record: &CannotTest) -> Result<(), git::Error> {
    let what = match &record.check {
        Some(check) => format!(
            "prove-it: check {check} cannot test tree {}: {}",
            record.tree, record.reason
        ),
        None => format!(
            "prove-it: cannot test tree {}: {}",
            record.tree, record.reason
        ),
    };
    repo.notes(FAILURES_REF)
        .update(record.tree, &what, |existing| append(existing, record))?;
    Ok(())
}

/// The newest cannot-test record of `check` (`None`: the root verify.sh) through `script` for
/// the input tree `key`, read through `notes` (a view of [`FAILURES_REF`]).
pub fn lookup_cannot_test(
    notes: &mut Notes<'_>,
    key: ObjectId,
    check: Option<&str>,
    script: Script,
) -> Result<Option<CannotTest>, git::Error> {
    let Some(note) = notes.lookup(&key)? else {
        return Ok(None);
    };
    Ok(parse_cannot_tests(&note, &key)
        .into_iter()
        .filter(|found| found.is_of(check, script))
        .max_by_key(|found| found.time))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proof::failure::parse_failures;

    fn id(hex: &str) -> ObjectId {
        ObjectId::from_hex(hex.as_bytes()).unwrap()
    }

    const TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const BLOB: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

    fn sample() -> CannotTest {
        CannotTest {
            tree: id(TREE),
            check: None,
            head: None,
            verify: Script {
                blob: id(BLOB),
                mode: 0o100755,
            },
            reason: EXIT_125.into(),
            exit_code: Some(125),
            duration_ms: 12,
            time: OffsetDateTime::from_unix_timestamp(1_795_978_336).unwrap(),
            host: "cli".into(),
            session: None,
            tool: "git-prove-it 0.1.0".into(),
            identity_missing: false,
            output: vec!["no compiler for this commit".into()],
            signed_off_by: "A U Thor <author@example.com>".into(),
        }
    }

    #[test]
    fn renders_a_cannot_test_record_of_version_1_exactly() {
        assert_eq!(
            sample().render(),
            "prove-it-record: 1\n\
             outcome: INSUFFICIENT_EVIDENCE\n\
             tree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\
             head: none\n\
             verify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\n\
             cannot-test: exit 125\n\
             exit-code: 125\n\
             duration-ms: 12\n\
             time: 2026-11-29T18:52:16Z\n\
             host: cli\n\
             session: none\n\
             tool: git-prove-it 0.1.0\n\
             output:\n \
             no compiler for this commit\n\
             Signed-off-by: A U Thor <author@example.com>\n"
        );
    }

    #[test]
    fn round_trips_with_another_reason_and_no_run() {
        let mut record = sample();
        record.check = Some("api".into());
        record.reason = "no setup".into();
        record.exit_code = None;
        record.output.clear();
        assert_eq!(
            parse_cannot_tests(&record.render(), &id(TREE)),
            vec![record]
        );
    }

    #[test]
    fn a_cannot_test_record_is_neither_a_proof_nor_a_failure() {
        let text = sample().render();
        let proofs = record::Proofs::of_check(&text, &id(TREE), None, Some((id(BLOB), 0o100755)));
        assert!(proofs.valid.is_empty(), "{proofs:?}");
        assert!(parse_failures(&text, &id(TREE)).is_empty());
    }

    #[test]
    fn a_failure_record_is_not_read_as_cannot_test() {
        let failure = sample()
            .render()
            .replace("INSUFFICIENT_EVIDENCE", "DISPROVEN");
        assert!(parse_cannot_tests(&failure, &id(TREE)).is_empty());
        // Nor an INSUFFICIENT_EVIDENCE record without its reason.
        let bare = sample().render().replace("cannot-test: exit 125\n", "");
        assert!(parse_cannot_tests(&bare, &id(TREE)).is_empty());
    }

    #[test]
    fn a_note_keeps_the_newest_cannot_test_records_of_a_check_beside_its_failures() {
        let mut note = String::new();
        for n in 0..6 {
            let mut record = sample();
            record.time += time::Duration::minutes(n);
            note = append(&note, &record);
        }
        let failure = "prove-it-record: 1\noutcome: DISPROVEN\n";
        note = format!("{note}\n{failure}");
        let mut other = sample();
        other.reason = "setup failed".into();
        other.time += time::Duration::hours(1);
        note = append(&note, &other);
        let kept = parse_cannot_tests(&note, &id(TREE));
        assert_eq!(kept.len(), KEPT);
        assert_eq!(kept.last().unwrap().reason, "setup failed");
        assert!(note.contains("outcome: DISPROVEN"));
    }
}
