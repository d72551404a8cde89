//! The proof record, version 1: one parser, one renderer, and the union merge of notes.
//!
//! A note attached to a state tree holds one or more records separated by a blank line. This
//! module only turns text into values and values into text; it never touches the repository.

use std::fmt::Write as _;

use gix::ObjectId;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub use crate::isolation::Isolation;
pub use crate::outcome::Outcome;
pub use crate::signing::Signature;

use super::codec;
use super::contest::{Contested, Mark, Marks};
use super::test_report::{Counts, Recorded, Source};
use super::weakening::{Finding, Protection};

/// The first line of every record, and the version this build writes.
const MAGIC_KEY: &str = "prove-it-record";
pub const VERSION: u32 = 1;
const SIGNED_OFF_BY: &str = "Signed-off-by";
const UNCOVERED: &str = "uncovered";
const UNCOVERED_COUNT: &str = "uncovered-count";
const VERIFY_DIFF: &str = "verify-diff";
/// `tests: passed=N failed=N skipped=N source=junit|summary`, then `tests-pass-z:`, the passing
/// names kept, packed (`tests-pass-cut: kept=N passed=N` when the bound cut some; records
/// before packing have one `tests-pass:` line per name), `tests-error:` when the reports could
/// not be read, and one `tests-weakened:` line per way the tests fell short of the baseline's.
const TESTS: &str = "tests";
const TESTS_PASS: &str = "tests-pass";
const TESTS_PASS_PACKED: &str = "tests-pass-z";
const TESTS_PASS_CUT: &str = "tests-pass-cut";
const TESTS_ERROR: &str = "tests-error";
const TESTS_WEAKENED: &str = "tests-weakened";
/// `renames: unwatched`: the run's renames could not be watched.
const RENAMES: &str = "renames";
const RENAMES_UNWATCHED: &str = "unwatched";
const WEAKENED: &str = "weakened";
const CHANGED: &str = "changed";
const PROTECT_DIFF: &str = "protect-diff";
/// The last lines a failing run printed, in a failure record (`failure.rs`).
pub(super) const OUTPUT: &str = "output";
/// Each line of an armored SSH signature, after the record it signs. Readers that do not know
/// the key ignore it, as they ignore any unknown key, so a signed record is still version 1.
const SSH_SIGNATURE: &str = "ssh-signature";

/// A verify.sh as git stores it: its blob and its tree entry mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Script {
    pub blob: ObjectId,
    pub mode: u32,
}

impl Script {
    /// Whether a tree entry of this mode runs as a script: an executable file, or a link.
    pub fn can_run(&self) -> bool {
        self.mode == 0o100755 || self.mode == 0o120000
    }
}

impl std::fmt::Display for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:06o}", self.blob, self.mode)
    }
}

/// How many uncovered paths a record, a report or a stop names; the rest are counted.
pub const UNCOVERED_SHOWN: usize = 50;

/// The paths of a state that no check's inputs hold: the first [`UNCOVERED_SHOWN`], sorted,
/// and how many there are in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Uncovered {
    pub paths: Vec<String>,
    pub count: usize,
}

impl Uncovered {
    /// The first [`UNCOVERED_SHOWN`] of `paths`, and their number.
    pub fn of(mut paths: Vec<String>) -> Uncovered {
        let count = paths.len();
        paths.truncate(UNCOVERED_SHOWN);
        Uncovered { paths, count }
    }
}

/// One proof: verify.sh exited 0 on `tree`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub outcome: Outcome,
    /// The check's input tree: the state tree itself for the root verify.sh.
    pub tree: ObjectId,
    /// The named check of `prove-it.toml` this proves; `None` for the root verify.sh (its
    /// records have no `check:` line, as before checks files existed).
    pub check: Option<String>,
    pub head: Option<ObjectId>,
    pub verify: Script,
    pub verify_anchor: Option<Script>,
    pub exit_code: i32,
    pub duration_ms: u64,
    /// How many runs failed before the one that passed (`prove-it.retries`); 0, and no
    /// `flaky:` line, for a check that passed at once.
    pub flaky: u32,
    /// How the run was kept from seeing other bytes than the tree it proves; `None` for a
    /// record written before the `isolation:` line existed (or naming a kind this build does
    /// not know), which `check --require-isolated` refuses.
    pub isolation: Option<Isolation>,
    /// The run's renames in the state's directories could not be watched (`renames:
    /// unwatched`): a directory moved away and back while it ran would not have been seen.
    pub renames_unwatched: bool,
    /// The digest of the environment the run had (`verify::Environment`); `None` for a record
    /// written before the `env:` line existed. A stop of an agent session trusts a record made
    /// during the session only with its anchor's digest.
    pub env: Option<ObjectId>,
    pub time: OffsetDateTime,
    pub host: String,
    pub session: Option<String>,
    pub tool: String,
    /// Set when no git identity was configured and the sign-off names a fallback.
    pub identity_missing: bool,
    /// The unified diff of verify.sh against the session's anchor, when it was edited.
    pub verify_diff: Option<String>,
    /// How the protected paths changed since the baseline the proof was made against (SPEC.md
    /// section 2.2): `weakened:` and `changed:` lines, and their `protect-diff:`.
    pub protection: Protection,
    /// The paths of the state that no check read when this proof was made (with a checks
    /// file): one `uncovered:` line each, then `uncovered-count:` when there are more.
    pub uncovered: Uncovered,
    /// What the run's tests were (`tests:`, `tests-pass-z:`, `tests-pass-cut:`, `tests-pass:`
    /// and `tests-error:` lines), from the reports it wrote into `PROVE_IT_REPORTS` or its
    /// runners' summary lines.
    pub tests: Recorded,
    /// How the run's tests fell short of its baseline's (`tests-weakened:`, one a line).
    pub tests_weakened: Vec<String>,
    pub signed_off_by: String,
    /// The SSH signature that follows the record in the note, if it was signed.
    pub signature: Option<Signature>,
}

/// Why a record in a note cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("record version {0} is not supported by this build")]
    UnsupportedVersion(String),
    #[error("malformed record: {0}")]
    Malformed(String),
    #[error("tree mismatch: record is for tree {recorded}, but is attached to {key}")]
    TreeMismatch { recorded: ObjectId, key: ObjectId },
    #[error("record ran verify.sh {recorded}, but this tree's verify.sh is {actual}")]
    VerifyMismatch { recorded: Script, actual: String },
}

/// The records attached to one state tree, sorted into those that prove it and those that do not.
#[derive(Debug, Default)]
pub struct Proofs {
    pub valid: Vec<Record>,
    pub invalid: Vec<Invalid>,
    /// Proofs a failing run of the same script contradicts and no person resolved: they do
    /// not count (`contest.rs`).
    pub contested: Vec<Contested>,
    /// Proofs a person revoked: they never count again.
    pub revoked: Vec<Record>,
    /// The valid proofs that count only through a person's acceptance of their contests, with
    /// those acceptances: with signing on, only a signed acceptance lets them count.
    pub accepted: Vec<(Record, Vec<Mark>)>,
}

impl Proofs {
    /// Read the note of state tree `key`, whose verify.sh is `verify` (blob and mode, or `None`
    /// when the tree has none). A record only proves the tree if it ran that very verify.sh.
    pub fn from_note(note: &str, key: &gix::oid, verify: Option<(ObjectId, u32)>) -> Self {
        Self::of_check(note, key, None, verify)
    }

    /// Read the note of input tree `key` for the check named `check` (`None`: the root
    /// verify.sh) whose script is `script`: a record proves it only if it is that check's and
    /// ran that very script, so two checks with equal input trees never prove each other. The
    /// records of other checks are left out, neither valid nor invalid here.
    pub fn of_check(
        note: &str,
        key: &gix::oid,
        check: Option<&str>,
        script: Option<(ObjectId, u32)>,
    ) -> Self {
        let mut proofs = Proofs::default();
        // Each record is read once; check and log read thousands of notes.
        let readings: Vec<(String, Reading)> = split_records(note)
            .into_iter()
            .map(|text| {
                let reading = Reading::of(&text, key);
                (text, reading)
            })
            .collect();
        let marks = Marks::of_check_among(
            readings.iter().filter_map(|(_, reading)| match reading {
                Reading::Mark(Ok(mark)) => Some(mark),
                _ => None,
            }),
            check,
        );
        // Most notes hold one record: a vector grown from empty would hold room for four.
        proofs.valid.reserve_exact(readings.len());
        for (text, reading) in readings {
            let record = match reading {
                // A contest, a revocation or an acceptance proves nothing; one that does not
                // read is shown as any record that does not.
                Reading::Mark(Ok(_)) => continue,
                Reading::Mark(Err(problem)) => {
                    proofs.invalid.push(Invalid { problem, text });
                    continue;
                }
                Reading::Record(record) => record,
            };
            match record {
                Ok(record) if record.check.as_deref() != check => {}
                // Without marks no proof is revoked, contested or accepted: no digest needed.
                Ok(record)
                    if Some((record.verify.blob, record.verify.mode)) == script
                        && marks.is_empty() =>
                {
                    proofs.valid.push(record);
                }
                Ok(record) if Some((record.verify.blob, record.verify.mode)) == script => {
                    let digest = digest_of_text(&text);
                    if marks.revoked(&digest) {
                        proofs.revoked.push(record);
                    } else if let Some(failure) = marks.contest_of(&digest) {
                        proofs.contested.push(Contested {
                            proof: record,
                            failure: failure.clone(),
                        });
                    } else {
                        let acceptances = marks.acceptances_of(&digest);
                        if !acceptances.is_empty() {
                            proofs.accepted.push((record.clone(), acceptances));
                        }
                        proofs.valid.push(record);
                    }
                }
                Ok(record) => proofs.invalid.push(Invalid {
                    problem: Problem::VerifyMismatch {
                        recorded: record.verify,
                        actual: script.map_or_else(
                            || "missing".to_string(),
                            |(blob, mode)| Script { blob, mode }.to_string(),
                        ),
                    },
                    text: record.render(),
                }),
                Err(problem) => proofs.invalid.push(Invalid { problem, text }),
            }
        }
        proofs
    }
}

/// One record of a note, read once: a mark (a contest, a revocation, an acceptance), or
/// anything else, read as a proof.
#[expect(
    clippy::large_enum_variant,
    reason = "one value per record of a note, read and dropped at once"
)]
enum Reading {
    Mark(Result<Mark, Problem>),
    Record(Result<Record, Problem>),
}

impl Reading {
    fn of(text: &str, key: &gix::oid) -> Reading {
        let (signed, signature) = match split_signature(text) {
            Ok(split) => split,
            Err(problem) => return Reading::Record(Err(problem)),
        };
        let fields = match read_fields(signed) {
            Ok(fields) => fields,
            Err(problem) => return Reading::Record(Err(problem)),
        };
        if fields.names_records() {
            return Reading::Mark(super::contest::mark_of_fields(fields, signature, key));
        }
        Reading::Record(fields.into_record(key).map(|mut record| {
            record.signature = signature;
            record
        }))
    }
}

/// A record that did not parse into something trustworthy, kept with its text for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub problem: Problem,
    pub text: String,
}

impl Record {
    /// Render the record as the note text stores it, ending in a newline: its canonical bytes,
    /// then its signature lines when it is signed.
    pub fn render(&self) -> String {
        let mut out = self.canonical();
        write_signature(&mut out, self.signature.as_ref());
        out
    }

    /// The bytes a signature over this record signs: the record without signature lines.
    pub fn canonical(&self) -> String {
        let mut out = String::new();
        write_key(&mut out, self.outcome, &self.tree, self.check.as_deref());
        // The writes below go to a String and cannot fail.
        let _ = writeln!(out, "head: {}", or_none(self.head));
        let _ = writeln!(out, "verify: {}", self.verify);
        let _ = writeln!(out, "verify-anchor: {}", or_none(self.verify_anchor));
        let _ = writeln!(out, "exit-code: {}", self.exit_code);
        let _ = writeln!(out, "duration-ms: {}", self.duration_ms);
        if self.flaky > 0 {
            let _ = writeln!(out, "flaky: {}", self.flaky);
        }
        if let Some(isolation) = self.isolation {
            let _ = writeln!(out, "isolation: {isolation}");
        }
        if self.renames_unwatched {
            let _ = writeln!(out, "{RENAMES}: {RENAMES_UNWATCHED}");
        }
        if let Some(env) = self.env {
            let _ = writeln!(out, "env: {env}");
        }
        let _ = writeln!(out, "time: {}", rfc3339(self.time));
        write_run_by(
            &mut out,
            &self.host,
            self.session.as_deref(),
            &self.tool,
            self.identity_missing,
        );
        if let Some(diff) = &self.verify_diff {
            codec::write_lines(&mut out, VERIFY_DIFF, diff.lines());
        }
        for finding in &self.protection.weakened {
            let _ = writeln!(out, "{WEAKENED}: {}", one_line(&finding.to_line()));
        }
        for path in &self.protection.changed {
            let _ = writeln!(out, "{CHANGED}: {}", one_line(path));
        }
        if let Some(diff) = &self.protection.diff {
            codec::write_lines(&mut out, PROTECT_DIFF, diff.lines());
        }
        // One line per path, not a block: a reader that does not know the key skips each
        // line, where an indented block line would read to it as a line without a key.
        for path in &self.uncovered.paths {
            let _ = writeln!(out, "{UNCOVERED}: {}", one_line(path));
        }
        if self.uncovered.count > self.uncovered.paths.len() {
            let _ = writeln!(out, "{UNCOVERED_COUNT}: {}", self.uncovered.count);
        }
        write_tests(&mut out, &self.tests, &self.tests_weakened);
        let _ = writeln!(out, "{SIGNED_OFF_BY}: {}", one_line(&self.signed_off_by));
        out
    }
}

/// The lines of a run's tests, one key a line (as `uncovered:`), so that a reader that does
/// not know them skips each.
fn write_tests(out: &mut String, tests: &Recorded, weakened: &[String]) {
    if let Some((counts, source)) = tests.counts {
        let _ = writeln!(out, "{TESTS}: {counts} source={}", source.as_str());
    }
    for name in &tests.passing {
        let _ = writeln!(out, "{TESTS_PASS}: {}", one_line(name));
    }
    if let Some(packed) = &tests.packed {
        let _ = writeln!(out, "{TESTS_PASS_PACKED}: {}", one_line(packed));
    }
    if let (Some(kept), Some((counts, _))) = (tests.cut, tests.counts) {
        let _ = writeln!(
            out,
            "{TESTS_PASS_CUT}: kept={kept} passed={}",
            counts.passed
        );
    }
    if let Some(error) = &tests.error {
        let _ = writeln!(out, "{TESTS_ERROR}: {}", one_line(error));
    }
    for finding in weakened {
        let _ = writeln!(out, "{TESTS_WEAKENED}: {}", one_line(finding));
    }
}

/// `passed=N failed=N skipped=N source=junit|summary`, as `write_tests` writes it.
fn parse_tests(value: &str) -> Result<(Counts, Source), Problem> {
    let malformed = || Problem::Malformed(format!("`{TESTS}: {value}` does not read"));
    let mut counts = Counts::default();
    let mut source = None;
    for part in value.split_whitespace() {
        let (key, value) = part.split_once('=').ok_or_else(malformed)?;
        let slot = match key {
            "passed" => &mut counts.passed,
            "failed" => &mut counts.failed,
            "skipped" => &mut counts.skipped,
            "source" => {
                source = Some(Source::parse(value).ok_or_else(malformed)?);
                continue;
            }
            _ => continue,
        };
        *slot = value.parse().map_err(|_| malformed())?;
    }
    Ok((counts, source.ok_or_else(malformed)?))
}

/// A record's time as it is written: RFC 3339, in UTC, to the second.
pub(super) fn rfc3339(time: OffsetDateTime) -> String {
    time.to_offset(time::UtcOffset::UTC)
        .format(&Rfc3339)
        .expect("a UTC time within the year range of the clock formats as RFC 3339")
}

/// The first lines of every record: the format, its kind, the key it is attached to and, for a
/// named check, the check.
pub(super) fn write_key(out: &mut String, outcome: Outcome, tree: &gix::oid, check: Option<&str>) {
    // The writes go to a String and cannot fail.
    let _ = writeln!(out, "{MAGIC_KEY}: {VERSION}");
    let _ = writeln!(out, "outcome: {}", outcome.as_str());
    let _ = writeln!(out, "tree: {tree}");
    if let Some(check) = check {
        let _ = writeln!(out, "check: {}", one_line(check));
    }
}

/// The lines that end a signed record or mark: its signature's armor, a line each.
pub(super) fn write_signature(out: &mut String, signature: Option<&Signature>) {
    for line in signature
        .iter()
        .flat_map(|signature| signature.armor.lines())
    {
        // A String cannot fail to take a write.
        let _ = writeln!(out, "{SSH_SIGNATURE}: {line}");
    }
}

/// A value that may be absent, as records write it: `none` when it is.
pub(super) fn or_none(value: Option<impl std::fmt::Display>) -> String {
    value.map_or_else(|| "none".to_string(), |value| value.to_string())
}

/// The lines saying who ran a check: `host:`, `session:`, `tool:` and `identity:`.
pub(super) fn write_run_by(
    out: &mut String,
    host: &str,
    session: Option<&str>,
    tool: &str,
    identity_missing: bool,
) {
    // The writes go to a String and cannot fail.
    let _ = writeln!(out, "host: {}", one_line(host));
    let _ = writeln!(
        out,
        "session: {}",
        session.map_or("none".to_string(), one_line)
    );
    let _ = writeln!(out, "tool: {}", one_line(tool));
    if identity_missing {
        let _ = writeln!(out, "identity: missing");
    }
}

/// Keep a value on its line and off the terminal's controls: a newline inside a value would
/// forge a key, and a carriage return or an escape sequence could rewrite what `log` shows.
pub(super) fn one_line(value: &str) -> String {
    value
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// What the newest record of `check` in `note` (attached to `key`) that counted its run's tests
/// says of them: a baseline to compare a later run's tests with. Any script's record counts,
/// as the baseline's verify.sh may not be today's. `None` when the note holds no record of
/// `check`; records, none of them with counts: `Recorded::default()`, nothing to compare.
pub fn baseline_tests(note: &str, key: &gix::oid, check: Option<&str>) -> Option<Recorded> {
    let records: Vec<Record> = split_records(note)
        .iter()
        .filter_map(|text| parse_record(text, key).ok())
        .filter(|record| record.check.as_deref() == check)
        .collect();
    if records.is_empty() {
        return None;
    }
    Some(
        records
            .into_iter()
            .filter(|record| record.tests.counts.is_some())
            .max_by_key(|record| record.time)
            .map(|record| record.tests)
            .unwrap_or_default(),
    )
}

/// Split a note into its records and parse each, checking it against the tree it is attached to.
#[cfg(any(test, feature = "fuzzing", feature = "testing"))]
pub fn parse_note(note: &str, key: &gix::oid) -> Vec<Result<Record, Invalid>> {
    split_records(note)
        .into_iter()
        .map(|text| {
            parse_record(&text, key).map_err(|problem| Invalid {
                problem,
                text: text.clone(),
            })
        })
        .collect()
}

/// The records of a note as text, each without its separating blank line. Text that is only
/// whitespace is not a record.
pub fn split_records(note: &str) -> Vec<String> {
    let mut records = Vec::new();
    let mut current = String::new();
    for line in note.lines() {
        // `lines` drops the `\r` of a final `\r\n` only, and keeps those that end the text;
        // dropping every trailing `\r` makes splitting a split record a no-op, so merging
        // merged notes adds nothing.
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() && !line.starts_with(' ') {
            if !current.trim().is_empty() {
                records.push(std::mem::take(&mut current));
            }
            current.clear();
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    if !current.trim().is_empty() {
        records.push(current);
    }
    records
}

/// The digest of a record as a note stores it (see `contest::digest`): that of its text less
/// its signature lines, or of its whole text when those do not read.
pub fn digest_of_text(text: &str) -> ObjectId {
    let canonical = split_signature(text).map_or(text, |(signed, _)| signed);
    super::contest::digest(canonical)
}

/// Split a record's text into its canonical bytes and its signature, if it has one. The
/// signature lines must end the record: a key after them would not be covered by it.
pub(super) fn split_signature(text: &str) -> Result<(&str, Option<Signature>), Problem> {
    let prefix = format!("{SSH_SIGNATURE}:");
    let mut start = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with(&prefix) {
            start = Some(offset);
            break;
        }
        offset += line.len();
    }
    let Some(start) = start else {
        return Ok((text, None));
    };
    let mut armor = String::new();
    for line in text[start..].lines() {
        let Some(value) = line.strip_prefix(&prefix) else {
            return Err(Problem::Malformed(format!(
                "`{SSH_SIGNATURE}` lines must end the record, but {line:?} follows them"
            )));
        };
        armor.push_str(value.trim());
        armor.push('\n');
    }
    let signed = &text[..start];
    Ok((
        signed,
        Some(Signature {
            armor,
            signed: signed.to_string(),
        }),
    ))
}

pub(super) fn parse_record(text: &str, key: &gix::oid) -> Result<Record, Problem> {
    let (text, signature) = split_signature(text)?;
    let mut record = read_fields(text)?.into_record(key)?;
    record.signature = signature;
    Ok(record)
}

/// A record's lines as fields, its version checked, unknown keys skipped: the one reading of
/// the format that proofs and failure records (`failure.rs`) share, through the notes' codec.
pub(super) fn read_fields(text: &str) -> Result<Fields, Problem> {
    let format = codec::Format {
        magic: MAGIC_KEY,
        version: VERSION,
        carries_text: &|key| key == VERIFY_DIFF || key == OUTPUT || key == PROTECT_DIFF,
        text_end: codec::TextEnd::Lines,
        skip_keyless: false,
    };
    let read = format.read(text).map_err(|error| match error {
        codec::Error::Version(version) => Problem::UnsupportedVersion(version),
        codec::Error::NotThisFormat => {
            Problem::Malformed(format!("first line is not `{MAGIC_KEY}: {VERSION}`"))
        }
        codec::Error::NoKey(line) => Problem::Malformed(format!("line without a key: {line:?}")),
    })?;
    let mut fields = Fields::default();
    for codec::Field { key, value, text } in read {
        fields.take(key, value.trim(), text)?;
    }
    Ok(fields)
}

/// Refuse a value with a control character: writers never put one there, and "Mallory\rAlice"
/// would show as Alice on a terminal.
fn no_control(name: &str, value: &str) -> Result<(), Problem> {
    if value.chars().any(char::is_control) {
        return Err(Problem::Malformed(format!(
            "`{name}` holds a control character, which could disguise it on a terminal"
        )));
    }
    Ok(())
}

/// Put `value` in `slot`; a repeated known key is ambiguous and therefore refused.
fn once(slot: &mut Option<String>, name: &str, value: String) -> Result<(), Problem> {
    if slot.replace(value).is_some() {
        return Err(Problem::Malformed(format!("`{name}` appears twice")));
    }
    Ok(())
}

impl Fields {
    /// Take one field of a record: a text, a line of a list, or a value said once. Unknown keys
    /// are ignored so that later versions can add lines old readers skip.
    fn take(&mut self, name: &str, value: &str, text: Option<String>) -> Result<(), Problem> {
        if let Some(text) = text {
            let slot = match name {
                OUTPUT => &mut self.output,
                PROTECT_DIFF => &mut self.protect_diff,
                _ => &mut self.verify_diff,
            };
            return once(slot, name, text);
        }
        let list = match name {
            UNCOVERED => &mut self.uncovered,
            WEAKENED | CHANGED => {
                // As for every known key: "a\rb" could disguise a finding on a terminal.
                no_control(name, value)?;
                if name == WEAKENED {
                    &mut self.weakened
                } else {
                    &mut self.changed
                }
            }
            TESTS_PASS => &mut self.tests_pass,
            TESTS_WEAKENED => &mut self.tests_weakened,
            _ => return self.take_once(name, value),
        };
        list.push(value.to_string());
        Ok(())
    }

    /// Take a field that a record says at most once.
    fn take_once(&mut self, name: &str, value: &str) -> Result<(), Problem> {
        let slot = match name {
            UNCOVERED_COUNT => &mut self.uncovered_count,
            TESTS => &mut self.tests,
            TESTS_ERROR => &mut self.tests_error,
            TESTS_PASS_PACKED => &mut self.tests_pass_packed,
            TESTS_PASS_CUT => &mut self.tests_pass_cut,
            "outcome" => &mut self.outcome,
            "tree" => &mut self.tree,
            "check" => &mut self.check,
            "head" => &mut self.head,
            "verify" => &mut self.verify,
            "verify-anchor" => &mut self.verify_anchor,
            "exit-code" => &mut self.exit_code,
            "duration-ms" => &mut self.duration_ms,
            "flaky" => &mut self.flaky,
            "isolation" => &mut self.isolation,
            RENAMES => &mut self.renames,
            "env" => &mut self.env,
            "exit" => &mut self.exit,
            "attempts" => &mut self.attempts,
            "time" => &mut self.time,
            "host" => &mut self.host,
            "session" => &mut self.session,
            "tool" => &mut self.tool,
            "identity" => &mut self.identity,
            "cannot-test" => &mut self.cannot_test,
            "contests" => &mut self.contests,
            "revokes" => &mut self.revokes,
            "accepts" => &mut self.accepts,
            "reason" => &mut self.reason,
            SIGNED_OFF_BY => &mut self.signed_off_by,
            _ => return Ok(()),
        };
        no_control(name, value)?;
        once(slot, name, value.to_string())
    }
}

/// A record's fields as read, each `None` when its line is absent.
#[derive(Default)]
pub(super) struct Fields {
    pub outcome: Option<String>,
    pub tree: Option<String>,
    pub check: Option<String>,
    pub head: Option<String>,
    pub verify: Option<String>,
    pub verify_anchor: Option<String>,
    pub exit_code: Option<String>,
    pub duration_ms: Option<String>,
    pub flaky: Option<String>,
    pub isolation: Option<String>,
    pub renames: Option<String>,
    pub env: Option<String>,
    pub exit: Option<String>,
    pub attempts: Option<String>,
    pub time: Option<String>,
    pub host: Option<String>,
    pub session: Option<String>,
    pub tool: Option<String>,
    pub identity: Option<String>,
    pub cannot_test: Option<String>,
    pub signed_off_by: Option<String>,
    pub verify_diff: Option<String>,
    pub output: Option<String>,
    pub uncovered: Vec<String>,
    pub uncovered_count: Option<String>,
    pub weakened: Vec<String>,
    pub changed: Vec<String>,
    pub protect_diff: Option<String>,
    pub tests: Option<String>,
    pub tests_pass: Vec<String>,
    pub tests_pass_packed: Option<String>,
    pub tests_pass_cut: Option<String>,
    pub tests_error: Option<String>,
    pub tests_weakened: Vec<String>,
    /// The digests a contest, a revocation or an acceptance names (`contest.rs`).
    pub contests: Option<String>,
    pub revokes: Option<String>,
    pub accepts: Option<String>,
    pub reason: Option<String>,
}

impl Fields {
    /// Whether the record names other records: a contest, a revocation or an acceptance.
    pub(super) fn names_records(&self) -> bool {
        self.contests.is_some() || self.revokes.is_some() || self.accepts.is_some()
    }
}

pub(super) fn required(value: Option<String>, name: &str) -> Result<String, Problem> {
    value
        .filter(|v| !v.is_empty())
        .ok_or_else(|| Problem::Malformed(format!("`{name}` is missing")))
}

pub(super) fn object_id(value: &str, name: &str) -> Result<ObjectId, Problem> {
    ObjectId::from_hex(value.as_bytes())
        .map_err(|_| Problem::Malformed(format!("`{name}` is not an object id: {value:?}")))
}

pub(super) fn optional_id(value: &str, name: &str) -> Result<Option<ObjectId>, Problem> {
    if value == "none" {
        Ok(None)
    } else {
        object_id(value, name).map(Some)
    }
}

/// The record's `time:`, RFC 3339, kept within the years a record can be rendered in again.
pub(super) fn time_field(value: Option<String>) -> Result<OffsetDateTime, Problem> {
    let time = required(value, "time")?;
    let time = OffsetDateTime::parse(&time, &Rfc3339)
        .map_err(|_| Problem::Malformed(format!("time {time:?} is not RFC 3339")))?;
    // In UTC the year may leave RFC 3339's 0000 to 9999 ("0000-01-01T00:00:00+01:00"), and
    // such a time could not be rendered or shown again.
    time.checked_to_offset(time::UtcOffset::UTC)
        .filter(|utc| (0..=9999).contains(&utc.year()))
        .ok_or_else(|| Problem::Malformed(format!("time {time} is out of RFC 3339's range in UTC")))
}

/// An optional count (`duration-ms:`, `flaky:`): 0 when its line is absent.
pub(super) fn number<T: std::str::FromStr + Default>(
    value: Option<String>,
    name: &str,
) -> Result<T, Problem> {
    match value {
        Some(value) => value
            .parse()
            .map_err(|_| Problem::Malformed(format!("{name} {value:?} is not a number"))),
        None => Ok(T::default()),
    }
}

pub(super) fn script(value: &str, name: &str) -> Result<Script, Problem> {
    let malformed = || Problem::Malformed(format!("`{name}` is not `<blob> <mode>`: {value:?}"));
    let (blob, mode) = value.split_once(' ').ok_or_else(malformed)?;
    Ok(Script {
        blob: object_id(blob, name)?,
        mode: u32::from_str_radix(mode, 8).map_err(|_| malformed())?,
    })
}

impl Fields {
    fn into_record(self, key: &gix::oid) -> Result<Record, Problem> {
        let outcome = required(self.outcome, "outcome")?;
        let outcome = Outcome::parse(&outcome)
            .filter(|outcome| outcome.is_proof())
            .ok_or_else(|| Problem::Malformed(format!("outcome {outcome:?} is not a proof")))?;
        let tree = object_id(&required(self.tree, "tree")?, "tree")?;
        if tree != key {
            return Err(Problem::TreeMismatch {
                recorded: tree,
                key: key.to_owned(),
            });
        }
        let exit_code = required(self.exit_code, "exit-code")?;
        let exit_code: i32 = exit_code
            .parse()
            .map_err(|_| Problem::Malformed(format!("exit-code {exit_code:?} is not a number")))?;
        if exit_code != 0 {
            return Err(Problem::Malformed(format!(
                "exit-code {exit_code} is not a pass"
            )));
        }
        let time = time_field(self.time)?;
        let duration_ms = number(self.duration_ms, "duration-ms")?;
        let flaky = number(self.flaky, "flaky")?;
        let counts = self.tests.as_deref().map(parse_tests).transpose()?;
        let mut passing = self.tests_pass;
        passing.sort();
        let cut = self
            .tests_pass_cut
            .map(|value| {
                value
                    .split_whitespace()
                    .find_map(|part| part.strip_prefix("kept="))
                    .and_then(|kept| kept.parse().ok())
                    .ok_or_else(|| {
                        Problem::Malformed(format!("`{TESTS_PASS_CUT}: {value}` does not read"))
                    })
            })
            .transpose()?;
        let tests = Recorded {
            counts,
            passing,
            packed: self.tests_pass_packed,
            cut,
            error: self.tests_error,
        };
        let verify_anchor = match self.verify_anchor.as_deref() {
            None | Some("none") => None,
            Some(value) => Some(script(value, "verify-anchor")?),
        };
        Ok(Record {
            outcome,
            tree,
            check: self.check.filter(|check| !check.is_empty()),
            head: optional_id(self.head.as_deref().unwrap_or("none"), "head")?,
            verify: script(&required(self.verify, "verify")?, "verify")?,
            verify_anchor,
            exit_code,
            duration_ms,
            flaky,
            isolation: self.isolation.as_deref().and_then(Isolation::parse),
            renames_unwatched: self.renames.as_deref() == Some(RENAMES_UNWATCHED),
            env: match self.env.as_deref() {
                None => None,
                Some(value) => optional_id(value, "env")?,
            },
            time,
            host: self.host.unwrap_or_default(),
            session: self.session.filter(|s| s != "none"),
            tool: self.tool.unwrap_or_default(),
            identity_missing: self.identity.as_deref() == Some("missing"),
            verify_diff: self.verify_diff,
            protection: Protection {
                weakened: self
                    .weakened
                    .iter()
                    .map(|line| Finding::from_line(line))
                    .collect(),
                changed: self.changed,
                diff: self.protect_diff,
            },
            uncovered: Uncovered {
                count: number::<usize>(self.uncovered_count, UNCOVERED_COUNT)?
                    .max(self.uncovered.len()),
                paths: self.uncovered,
            },
            tests,
            tests_weakened: self.tests_weakened,
            signed_off_by: required(self.signed_off_by, SIGNED_OFF_BY)?,
            signature: None,
        })
    }
}

/// Merge two notes by record union: every distinct record of either side is kept, in order of
/// first appearance, `ours` first. Unlike git's `cat_sort_uniq`, records stay whole.
pub fn merge(ours: &str, theirs: &str) -> String {
    let mut seen: Vec<String> = Vec::new();
    for record in split_records(ours).into_iter().chain(split_records(theirs)) {
        if !seen.contains(&record) {
            seen.push(record);
        }
    }
    seen.join("\n")
}

/// The note text after adding the record `new` to `existing`, keeping only the newest `kept` of
/// the records `same` picks out (`new`'s own kind, check and script; the oldest come first in a
/// note), every other record as it is: failure and cannot-test records stay bounded.
pub(super) fn append_bounded(
    existing: &str,
    new: &str,
    kept: usize,
    same: impl Fn(&str) -> bool,
) -> String {
    let records = split_records(&merge(existing, new));
    let mut drop = records
        .iter()
        .filter(|text| same(text))
        .count()
        .saturating_sub(kept);
    records
        .into_iter()
        .filter(|text| {
            if drop > 0 && same(text) {
                drop -= 1;
                false
            } else {
                true
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The note text after adding `record` to `existing` (which may be empty).
pub fn append(existing: &str, record: &Record) -> String {
    merge(existing, &record.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(hex: &str) -> ObjectId {
        ObjectId::from_hex(hex.as_bytes()).unwrap()
    }

    const TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const BLOB: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

    fn sample() -> Record {
        Record {
            outcome: Outcome::Proven,
            tree: id(TREE),
            check: None,
            head: Some(id("1111111111111111111111111111111111111111")),
            verify: Script {
                blob: id(BLOB),
                mode: 0o100755,
            },
            verify_anchor: None,
            exit_code: 0,
            duration_ms: 1234,
            flaky: 0,
            isolation: None,
            renames_unwatched: false,
            env: None,
            time: OffsetDateTime::from_unix_timestamp(1_795_978_336).unwrap(),
            host: "cli".into(),
            session: None,
            tool: "git-prove-it 0.1.0".into(),
            identity_missing: false,
            verify_diff: None,
            protection: Protection::default(),
            uncovered: Uncovered::default(),
            tests: crate::proof::test_report::Recorded::default(),
            tests_weakened: Vec::new(),
            signed_off_by: "A U Thor <author@example.com>".into(),
            signature: None,
        }
    }

    /// A proof's weakenings and changed files round-trip, and a record without them (an
    /// older one) reads as having none.
    #[test]
    fn weakened_and_changed_lines_round_trip() {
        let mut record = sample();
        record.outcome = Outcome::BoundedClaimSurvives;
        record.protection = Protection {
            weakened: vec![
                Finding::Deleted {
                    path: "tests/a.py".into(),
                },
                Finding::TestGone {
                    path: "tests/b.py".into(),
                    test: "test_x".into(),
                },
            ],
            changed: vec!["tests/c.py".into()],
            diff: Some("--- a/tests/c.py (baseline)\n+++ b/tests/c.py (now)\n-1\n+2\n".into()),
        };
        let text = record.render();
        assert!(
            text.contains("\nweakened: test-gone tests/b.py::test_x\n"),
            "{text}"
        );
        let back = parse_record(&text, &record.tree).unwrap();
        assert_eq!(back.protection, record.protection);
        assert_eq!(
            parse_record(&sample().render(), &record.tree)
                .unwrap()
                .protection,
            Protection::default()
        );
        let forged = text.replace("changed: tests/c.py", "changed: tests/\u{1b}[2Jc.py");
        assert!(parse_record(&forged, &record.tree).is_err());
    }

    /// Passing names are kept packed, with a note when the bound cut them; records made before
    /// they were packed, one `tests-pass:` line a name, still give their names.
    #[test]
    fn passing_names_round_trip_packed_and_plain_lines_still_read() {
        use crate::proof::test_report::{Status, Tests};
        let cases = (0..3)
            .map(|i| (format!("suite::test_{i}"), Status::Passed))
            .collect();
        let tests = Tests {
            counts: Counts {
                passed: 3,
                failed: 0,
                skipped: 0,
            },
            source: Source::Junit,
            cases,
        };
        let mut record = sample();
        record.tests = Recorded::of(&Ok(Some(tests)));
        let text = record.render();
        assert!(text.contains("\ntests-pass-z: "), "{text}");
        assert!(!text.contains("tests-pass:") && !text.contains("tests-pass-cut"));
        let back = parse_record(&text, &record.tree).unwrap();
        assert_eq!(back.tests, record.tests);
        let names = vec![
            "suite::test_0".to_string(),
            "suite::test_1".into(),
            "suite::test_2".into(),
        ];
        assert_eq!(back.tests.names(), (names.clone(), true));

        let cut = text.replace(
            "tests-pass-z:",
            "tests-pass-cut: kept=3 passed=9\ntests-pass-z:",
        );
        let back = parse_record(&cut, &record.tree).unwrap();
        assert_eq!(back.tests.cut, Some(3));
        assert_eq!(back.tests.names(), (names.clone(), false));

        let mut plain = sample().render();
        plain = plain.replace(
            "\nSigned-off-by",
            "\ntests: passed=3 failed=0 skipped=0 source=junit\ntests-pass: suite::test_1\n\
             tests-pass: suite::test_0\ntests-pass: suite::test_2\nSigned-off-by",
        );
        let old = parse_record(&plain, &record.tree).unwrap();
        assert_eq!(old.tests.names(), (names, true));
        assert_eq!(
            old.render(),
            plain.replace(
                "tests-pass: suite::test_1\ntests-pass: suite::test_0",
                "tests-pass: suite::test_0\ntests-pass: suite::test_1",
            )
        );
    }

    #[test]
    fn renders_version_1_exactly() {
        let text = sample().render();
        assert_eq!(
            text,
            "prove-it-record: 1\n\
             outcome: PROVEN\n\
             tree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\
             head: 1111111111111111111111111111111111111111\n\
             verify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\n\
             verify-anchor: none\n\
             exit-code: 0\n\
             duration-ms: 1234\n\
             time: 2026-11-29T18:52:16Z\n\
             host: cli\n\
             session: none\n\
             tool: git-prove-it 0.1.0\n\
             Signed-off-by: A U Thor <author@example.com>\n"
        );
    }

    #[test]
    fn round_trips_including_diff_with_blank_lines() {
        let mut record = sample();
        record.outcome = Outcome::BoundedClaimSurvives;
        record.verify_anchor = Some(Script {
            blob: id(TREE),
            mode: 0o100644,
        });
        record.session = Some("abc-123".into());
        record.identity_missing = true;
        record.verify_diff = Some("--- a/verify.sh\n+++ b/verify.sh\n\n-exit 1\n+exit 0\n".into());
        let parsed = parse_note(&record.render(), &id(TREE));
        assert_eq!(parsed, vec![Ok(record)]);
    }

    #[test]
    fn uncovered_paths_round_trip_one_key_a_line() {
        let mut record = sample();
        record.uncovered = Uncovered {
            paths: vec!["test.js".into(), "a b/c:d.txt".into()],
            count: 70,
        };
        let text = record.render();
        assert!(
            text.contains("uncovered: test.js\nuncovered: a b/c:d.txt\nuncovered-count: 70\n"),
            "{text}"
        );
        assert_eq!(parse_note(&text, &id(TREE)), vec![Ok(record.clone())]);
        // Each line is a key a reader that does not know it skips, as an older build does
        // with any unknown key: without them the record is the same record.
        let older: String = text
            .lines()
            .filter(|line| !line.starts_with("uncovered"))
            .map(|line| format!("{line}\n"))
            .collect();
        assert_eq!(parse_note(&older, &id(TREE)), vec![Ok(sample())]);
        // All named, no count line.
        record.uncovered.count = 2;
        assert!(!record.render().contains("uncovered-count"));
        assert_eq!(parse_note(&record.render(), &id(TREE)), vec![Ok(record)]);
    }

    // A run whose renames were not watched says so in its record, and only then.
    #[test]
    fn renames_unwatched_round_trips_and_is_absent_when_watched() {
        let mut record = sample();
        assert!(!record.render().contains("renames:"));
        record.renames_unwatched = true;
        let text = record.render();
        assert!(text.contains("renames: unwatched\n"), "{text}");
        assert_eq!(parse_note(&text, &id(TREE)), vec![Ok(record)]);
    }

    #[test]
    fn unknown_keys_are_ignored() {
        let text = sample()
            .render()
            .replace("host: cli\n", "host: cli\nfuture-key: whatever\n");
        assert_eq!(parse_note(&text, &id(TREE)), vec![Ok(sample())]);
    }

    #[test]
    fn several_records_per_note_and_union_merge() {
        let a = sample();
        let mut b = sample();
        b.host = "claude".into();
        let note = append(&a.render(), &b);
        assert_eq!(
            parse_note(&note, &id(TREE)),
            vec![Ok(a.clone()), Ok(b.clone())]
        );
        // Merging is a union by whole record, idempotent and loses nothing from either side.
        let mut c = sample();
        c.duration_ms = 7;
        let merged = merge(&note, &append(&c.render(), &a));
        assert_eq!(
            parse_note(&merged, &id(TREE)),
            vec![Ok(a.clone()), Ok(b), Ok(c)]
        );
        assert_eq!(merge(&merged, &merged), merged);
        assert_eq!(append(&a.render(), &a), a.render());
    }

    #[test]
    fn tree_line_that_does_not_match_the_key_is_invalid() {
        let other = id("0000000000000000000000000000000000000001");
        let parsed = parse_note(&sample().render(), &other);
        assert!(matches!(
            &parsed[0],
            Err(Invalid { problem: Problem::TreeMismatch { recorded, key }, .. })
                if recorded == &id(TREE) && key == &other
        ));
    }

    #[test]
    fn malformed_records_are_reported_not_trusted() {
        let cases = [
            ("hello world\n", "first line"),
            ("prove-it-record: 1\ntree: nonsense\n", "outcome"),
            (
                &sample()
                    .render()
                    .replace("Signed-off-by: A U Thor <author@example.com>\n", ""),
                "Signed-off-by",
            ),
            (
                &sample().render().replace("exit-code: 0", "exit-code: 1"),
                "not a pass",
            ),
            (
                &sample()
                    .render()
                    .replace("outcome: PROVEN", "outcome: DISPROVEN"),
                "not a proof",
            ),
            (
                &sample()
                    .render()
                    .replace("host: cli\n", "host: cli\nhost: x\n"),
                "twice",
            ),
        ];
        for (text, fragment) in cases {
            let parsed = parse_note(text, &id(TREE));
            let Err(invalid) = &parsed[0] else {
                panic!("{text:?} parsed as valid");
            };
            assert!(
                invalid.problem.to_string().contains(fragment),
                "{text:?}: {}",
                invalid.problem
            );
        }
        let future = sample()
            .render()
            .replace("prove-it-record: 1", "prove-it-record: 2");
        assert!(matches!(
            &parse_note(&future, &id(TREE))[0],
            Err(Invalid { problem: Problem::UnsupportedVersion(v), .. }) if v == "2"
        ));
    }

    #[test]
    fn a_record_proves_only_the_verify_sh_it_ran() {
        let record = sample();
        let ran = Some((record.verify.blob, record.verify.mode));
        let proofs = Proofs::from_note(&record.render(), &id(TREE), ran);
        assert_eq!(proofs.valid, std::slice::from_ref(&record));
        for other in [
            None,
            Some((record.verify.blob, 0o100644)),
            Some((id(TREE), 0o100755)),
        ] {
            let proofs = Proofs::from_note(&record.render(), &id(TREE), other);
            assert!(proofs.valid.is_empty(), "{other:?}");
            assert!(matches!(
                proofs.invalid[0].problem,
                Problem::VerifyMismatch { .. }
            ));
        }
    }

    #[test]
    fn best_prefers_a_plain_proof_then_the_newest() {
        let old = sample();
        let mut new = sample();
        new.time += time::Duration::hours(1);
        let mut bounded = sample();
        bounded.time += time::Duration::hours(2);
        bounded.outcome = Outcome::BoundedClaimSurvives;
        let note = [&old, &bounded, &new]
            .iter()
            .fold(String::new(), |n, r| append(&n, r));
        let verify = Some((old.verify.blob, old.verify.mode));
        // The ranking is the lookup's (`proof::lookup`), the one every command reads by.
        let found = super::super::lookup::Found::read(Some(&note), &id(TREE), verify);
        assert_eq!(found.best(false), Some(&new));
        assert_eq!(found.valid, [new.clone(), old.clone(), bounded.clone()]);
    }

    /// Regression (found by the property test): a hand-written time whose UTC year leaves
    /// 0000..=9999 parsed, then panicked when the record was rendered for display (`status`,
    /// `check` and `log` render records that do not match the tree's verify.sh).
    #[test]
    fn a_time_out_of_range_in_utc_is_malformed_not_a_panic() {
        for time in ["0000-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"] {
            let text = sample()
                .render()
                .replace("2026-11-29T12:00:00Z", time)
                .replace("2026-11-29T18:52:16Z", time);
            let parsed = parse_note(&text, &id(TREE));
            assert!(
                matches!(&parsed[0], Err(Invalid { problem: Problem::Malformed(m), .. }) if m.contains("out of")),
                "{time}: {parsed:?}"
            );
        }
    }

    /// Regression (found by cargo fuzz): a carriage return inside a hand-written value was
    /// kept, so `Signed-off-by: Mallory\rAlice <a@example.com>` printed as Alice on a terminal.
    #[test]
    fn a_control_character_in_a_value_is_malformed_and_never_written() {
        let text = sample().render().replace("A U Thor", "Mallory\rA U Thor");
        let parsed = parse_note(&text, &id(TREE));
        assert!(
            matches!(&parsed[0], Err(Invalid { problem: Problem::Malformed(m), .. }) if m.contains("control character")),
            "{parsed:?}"
        );
        let record = Record {
            session: Some("s\u{1b}[2Jx\ty".into()),
            ..sample()
        };
        let text = record.render();
        assert!(text.contains("\nsession: s [2Jx y\n"), "{text}");
        assert!(parse_note(&text, &id(TREE))[0].is_ok());
    }

    #[test]
    fn a_newline_in_a_value_cannot_forge_a_key() {
        let mut record = sample();
        record.session = Some("x\noutcome: PROVEN".into());
        let parsed = parse_note(&record.render(), &id(TREE));
        assert_eq!(parsed.len(), 1);
        assert!(parsed[0].is_ok());
    }

    #[test]
    fn an_old_record_written_by_version_1_still_reads() {
        // Pinned bytes of a record as the first release wrote it; format changes must keep this.
        let text = "prove-it-record: 1\noutcome: PROVEN\ntree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nhead: none\nverify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\nverify-anchor: none\nexit-code: 0\nduration-ms: 5\ntime: 2026-11-29T18:52:16Z\nhost: cli\nsession: none\ntool: git-prove-it 0.1.0\nidentity: missing\nSigned-off-by: git-prove-it <git-prove-it@localhost>\n";
        let parsed = parse_note(text, &id(TREE));
        let Ok(record) = &parsed[0] else {
            panic!("{parsed:?}")
        };
        assert!(record.identity_missing);
        assert_eq!(record.head, None);
        assert_eq!(record.render(), text);
    }

    const ARMOR: &str = "-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQ\nAAAAMZ2l0LXBy==\n-----END SSH SIGNATURE-----\n";

    fn signed() -> Record {
        let mut record = sample();
        record.signature = Some(Signature {
            armor: ARMOR.into(),
            signed: record.canonical(),
        });
        record
    }

    #[test]
    fn a_signature_follows_the_record_one_armored_line_per_key() {
        let text = signed().render();
        let (canonical, lines) = text.split_at(sample().render().len());
        assert_eq!(
            canonical,
            sample().render(),
            "the signed bytes are the unsigned record"
        );
        assert_eq!(
            lines,
            "ssh-signature: -----BEGIN SSH SIGNATURE-----\n\
             ssh-signature: U1NIU0lHAAAAAQ\n\
             ssh-signature: AAAAMZ2l0LXBy==\n\
             ssh-signature: -----END SSH SIGNATURE-----\n"
        );
        assert_eq!(parse_note(&text, &id(TREE)), vec![Ok(signed())]);
    }

    #[test]
    fn the_signed_bytes_are_the_record_as_stored_not_as_rendered_again() {
        // A key this build does not know is part of what was signed: dropping or changing it
        // must break the signature, so the bytes come from the note, not from the fields.
        let text = signed()
            .render()
            .replace("host: cli\n", "host: cli\nfuture-key: x\n");
        let parsed = parse_note(&text, &id(TREE));
        let Ok(record) = &parsed[0] else {
            panic!("{parsed:?}")
        };
        let signature = record.signature.as_ref().unwrap();
        assert!(signature.signed.contains("future-key: x\n"));
        assert!(
            signature
                .signed
                .ends_with("Signed-off-by: A U Thor <author@example.com>\n")
        );
        assert_eq!(signature.armor, ARMOR);
    }

    #[test]
    fn a_key_after_the_signature_is_refused_as_it_is_not_signed() {
        let text = format!("{}outcome: PROVEN\n", signed().render());
        let parsed = parse_note(&text, &id(TREE));
        assert!(
            matches!(&parsed[0], Err(Invalid { problem: Problem::Malformed(m), .. }) if m.contains("must end the record")),
            "{parsed:?}"
        );
    }

    #[test]
    fn merging_keeps_a_record_and_its_signature_together() {
        let mut other = sample();
        other.host = "claude".into();
        let merged = merge(&signed().render(), &append(&other.render(), &signed()));
        assert_eq!(
            parse_note(&merged, &id(TREE)),
            vec![Ok(signed()), Ok(other)]
        );
    }

    #[test]
    fn a_signed_record_copied_to_another_tree_is_a_tree_mismatch() {
        let other = id("0000000000000000000000000000000000000001");
        let parsed = parse_note(&signed().render(), &other);
        assert!(matches!(
            &parsed[0],
            Err(Invalid { problem: problem @ Problem::TreeMismatch { .. }, .. })
                if problem.to_string().starts_with("tree mismatch: ")
        ));
    }
}
