//! Failure records: what a failing run of a check leaves behind, in the local notes ref
//! `refs/notes/prove-it-failures` (SPEC.md section 2.2), keyed as its proofs would be (the
//! check's input tree; the state tree for the root verify.sh).
//!
//! A failure record is a record of version 1 whose outcome is `DISPROVEN`: the proofs' reader
//! refuses it as "not a proof", so one copied into the proofs ref proves nothing. It holds what
//! the run printed last (bounded, stripped of terminal controls) and never the environment.
//! Nothing treats it as final: the gate always runs again, and `run <range>` and `bisect` only
//! use it to spare a run the caller did not ask to repeat.

use std::fmt::Write as _;

use gix::ObjectId;
use time::OffsetDateTime;

use super::record::{
    self, OUTPUT, Outcome, Problem, Script, number, object_id, one_line, optional_id, required,
    rfc3339, script, time_field, write_run_by,
};
/// Where failure records are kept (its name lives in `git/names.rs` with every other).
pub use crate::git::FAILURES_REF;
use crate::git::{self, Notes, Repo};
use crate::process::{Ended, Exit};

/// The most lines of output a failure record keeps: the last lines a block shows.
pub const OUTPUT_LINES: usize = super::prove::TAIL_LINES;
/// The most characters of one line a failure record keeps.
const LINE_CHARS: usize = 300;
/// The most failure records one note keeps (the newest): a check failing on one state again
/// and again must not grow its note without end.
const KEPT: usize = 5;

/// One failing run of a check on one state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The check's input tree: the state tree itself for the root verify.sh.
    pub tree: ObjectId,
    /// The named check; `None` for the root verify.sh.
    pub check: Option<String>,
    pub head: Option<ObjectId>,
    /// The script that failed.
    pub verify: Script,
    /// How it ended, as a person reads it: "exit code 1", "timed out after 300 s".
    pub exit: String,
    /// Its exit code, when it exited (`None`: killed at the timeout, by a signal).
    pub exit_code: Option<i32>,
    /// The last run's duration.
    pub duration_ms: u64,
    /// How many runs failed: 1, or more under `prove-it.retries`.
    pub attempts: u32,
    pub time: OffsetDateTime,
    pub host: String,
    pub session: Option<String>,
    pub tool: String,
    pub identity_missing: bool,
    /// The last lines the last run printed, at most [`OUTPUT_LINES`].
    pub output: Vec<String>,
    pub signed_off_by: String,
}

impl Failure {
    /// The record as the note stores it, ending in a newline.
    pub fn render(&self) -> String {
        let mut out = String::new();
        record::write_key(
            &mut out,
            Outcome::Disproven,
            &self.tree,
            self.check.as_deref(),
        );
        // The writes go to a String and cannot fail.
        let _ = writeln!(out, "head: {}", record::or_none(self.head));
        let _ = writeln!(out, "verify: {}", self.verify);
        let _ = writeln!(out, "exit: {}", one_line(&self.exit));
        let _ = writeln!(out, "exit-code: {}", record::or_none(self.exit_code));
        let _ = writeln!(out, "duration-ms: {}", self.duration_ms);
        let _ = writeln!(out, "attempts: {}", self.attempts);
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

    /// Whether this failure is `check`'s (`None`: the root verify.sh) through `script`.
    pub fn is_of(&self, check: Option<&str>, script: Script) -> bool {
        self.check.as_deref() == check && self.verify == script
    }

    /// Whether `lines` (another run's last lines) fail the same way as this record: the same
    /// lines once numbers are set aside, so that timings and counts do not make two runs of
    /// one failure differ.
    pub fn same_lines(&self, lines: &[String]) -> bool {
        let ours: Vec<String> = self.output.iter().map(|l| shape(l)).collect();
        let theirs: Vec<String> = bounded_output(lines).iter().map(|l| shape(l)).collect();
        !ours.is_empty() && ours == theirs
    }
}

/// A line with every run of digits as one `#`, and its ends trimmed.
fn shape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_digits = false;
    for c in line.trim().chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// How a run ended, as a failure record's `exit:` says it (SPEC section 3.2), and as every
/// report shows it: "exit code 3", "killed by signal 9 (SIGKILL)", "timed out after 5 s",
/// "interrupted".
pub fn exit_value(ended: Ended) -> String {
    match ended.exit {
        Exit::Code(code) => format!("exit code {code}"),
        Exit::Signal(number) => match signal_name(number) {
            Some(name) => format!("killed by signal {number} ({name})"),
            None => format!("killed by signal {number}"),
        },
        Exit::TimedOut => format!(
            "timed out after {} s",
            seconds(std::time::Duration::from_millis(ended.timeout_ms))
        ),
        Exit::Interrupted => "interrupted".to_string(),
    }
}

fn signal_name(number: i32) -> Option<&'static str> {
    const NAMES: [(rustix::process::Signal, &str); 9] = [
        (rustix::process::Signal::HUP, "SIGHUP"),
        (rustix::process::Signal::INT, "SIGINT"),
        (rustix::process::Signal::QUIT, "SIGQUIT"),
        (rustix::process::Signal::ABORT, "SIGABRT"),
        (rustix::process::Signal::KILL, "SIGKILL"),
        (rustix::process::Signal::SEGV, "SIGSEGV"),
        (rustix::process::Signal::PIPE, "SIGPIPE"),
        (rustix::process::Signal::ALARM, "SIGALRM"),
        (rustix::process::Signal::TERM, "SIGTERM"),
    ];
    NAMES
        .iter()
        .find(|(signal, _)| signal.as_raw() == number)
        .map(|&(_, name)| name)
}

/// Seconds as "5" or "1.5", without trailing zeros.
fn seconds(duration: std::time::Duration) -> String {
    let millis = duration.subsec_millis();
    if millis == 0 {
        duration.as_secs().to_string()
    } else {
        let text = format!("{}.{millis:03}", duration.as_secs());
        text.trim_end_matches('0').to_owned()
    }
}

/// A run's last lines as a failure record keeps them: the last [`OUTPUT_LINES`], each without
/// terminal escape sequences or other controls and cut at [`LINE_CHARS`] characters.
pub fn bounded_output(lines: &[String]) -> Vec<String> {
    lines[lines.len().saturating_sub(OUTPUT_LINES)..]
        .iter()
        .map(|line| {
            let plain = strip_escapes(line);
            let plain = one_line(plain.trim_end());
            match plain.char_indices().nth(LINE_CHARS) {
                Some((cut, _)) => format!("{}...", &plain[..cut]),
                None => plain,
            }
        })
        .collect()
}

/// What a failure record shows of a value it redacts.
const REDACTED: &str = "[redacted]";
/// The shortest value redacted: shorter ones (`1`, `true`) would redact ordinary words.
const SHORTEST_SECRET: usize = 8;

/// The values of the environment's variables that look like secrets by their names (`TOKEN`,
/// `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL` anywhere, or ending in `KEY`: `GITHUB_TOKEN`,
/// `AWS_SECRET_ACCESS_KEY`, `OPENAI_API_KEY`), at least 8 characters long: what a verify.sh may
/// print by mistake, and a failure record must not keep.
pub fn secret_values(vars: impl Iterator<Item = (String, String)>) -> Vec<String> {
    let mut values: Vec<String> = vars
        .filter(|(name, value)| {
            let name = name.to_ascii_uppercase();
            let secret = ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
                .iter()
                .any(|word| name.contains(word))
                || name.ends_with("KEY");
            secret && value.chars().count() >= SHORTEST_SECRET
        })
        .map(|(_, value)| value)
        .collect();
    // The longest first, so that a secret holding another is redacted whole.
    values.sort_by_key(|value| std::cmp::Reverse(value.len()));
    values.dedup();
    values
}

/// `lines` with every occurrence of each of `secrets` replaced by `[redacted]`.
pub fn redact(lines: Vec<String>, secrets: &[String]) -> Vec<String> {
    lines
        .into_iter()
        .map(|line| {
            secrets
                .iter()
                .fold(line, |line, secret| line.replace(secret.as_str(), REDACTED))
        })
        .collect()
}

/// `line` without ANSI escape sequences (colours, cursor moves): ESC, then `[` and parameters
/// up to a final byte, or one more character.
fn strip_escapes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.next_if_eq(&'[').is_some() {
            // Parameters and intermediates, then one final byte in `@` to `~`.
            for next in chars.by_ref() {
                if ('@'..='~').contains(&next) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out
}

/// The failure records of a note attached to `key`, oldest first; records that do not read
/// as failures of `key` are left out (a failure record is a hint, never trusted for more).
pub fn parse_failures(note: &str, key: &gix::oid) -> Vec<Failure> {
    record::split_records(note)
        .iter()
        .filter_map(|text| parse_failure(text, key).ok())
        .collect()
}

fn parse_failure(text: &str, key: &gix::oid) -> Result<Failure, Problem> {
    let fields = record::read_fields(text)?;
    let outcome = required(fields.outcome, "outcome")?;
    if outcome != Outcome::Disproven.as_str() {
        return Err(Problem::Malformed(format!(
            "outcome {outcome:?} is not a failure"
        )));
    }
    let tree = object_id(&required(fields.tree, "tree")?, "tree")?;
    if tree != key {
        return Err(Problem::TreeMismatch {
            recorded: tree,
            key: key.to_owned(),
        });
    }
    let exit_code = match required(fields.exit_code, "exit-code")?.as_str() {
        "none" => None,
        code => Some(
            code.parse()
                .map_err(|_| Problem::Malformed(format!("exit-code {code:?} is not a number")))?,
        ),
    };
    Ok(Failure {
        tree,
        check: fields.check.filter(|check| !check.is_empty()),
        head: optional_id(fields.head.as_deref().unwrap_or("none"), "head")?,
        verify: script(&required(fields.verify, "verify")?, "verify")?,
        exit: fields.exit.unwrap_or_else(|| "failed".to_string()),
        exit_code,
        duration_ms: number(fields.duration_ms, "duration-ms")?,
        attempts: number::<u32>(fields.attempts, "attempts")?.max(1),
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

/// The note after adding `failure` to `existing`: the newest [`KEPT`] records, so that one state
/// failing again and again keeps a bounded note (records of other checks are kept as they are).
fn append(existing: &str, failure: &Failure) -> String {
    record::append_bounded(existing, &failure.render(), KEPT, |text| {
        parse_failure(text, &failure.tree)
            .is_ok_and(|other| other.is_of(failure.check.as_deref(), failure.verify))
    })
}

/// Record `failure` in the failures ref.
pub fn record_failure(repo: &Repo, failure: &Failure) -> Result<(), git::Error> {
    let what = match &failure.check {
        Some(check) => format!(
            "prove-it: failure of check {check} on tree {}",
            failure.tree
        ),
        None => format!("prove-it: failure on tree {}", failure.tree),
    };
    repo.notes(FAILURES_REF)
        .update(failure.tree, &what, |existing| append(existing, failure))?;
    Ok(())
}

/// The newest failure on record of `check` (`None`: the root verify.sh) for the input tree
/// `key`, read through `notes` (a view of [`FAILURES_REF`]); with `script`, only a failure
/// through that very script.
pub fn lookup_failure(
    notes: &mut Notes<'_>,
    key: ObjectId,
    check: Option<&str>,
    script: Option<Script>,
) -> Result<Option<Failure>, git::Error> {
    let Some(note) = notes.lookup(&key)? else {
        return Ok(None);
    };
    Ok(parse_failures(&note, &key)
        .into_iter()
        .filter(|failure| failure.check.as_deref() == check)
        .filter(|failure| script.is_none_or(|script| failure.verify == script))
        .max_by_key(|failure| failure.time))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exit_value_names_common_signals_and_fractional_timeouts() {
        let ended = |exit| Ended::new(exit, std::time::Duration::from_millis(1500));
        assert_eq!(
            exit_value(ended(Exit::Signal(9))),
            "killed by signal 9 (SIGKILL)"
        );
        assert_eq!(exit_value(ended(Exit::Signal(64))), "killed by signal 64");
        assert_eq!(exit_value(ended(Exit::TimedOut)), "timed out after 1.5 s");
        assert_eq!(exit_value(ended(Exit::Code(0))), "exit code 0");
        assert_eq!(exit_value(ended(Exit::Interrupted)), "interrupted");
    }

    fn id(hex: &str) -> ObjectId {
        ObjectId::from_hex(hex.as_bytes()).unwrap()
    }

    const TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const BLOB: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

    fn sample() -> Failure {
        Failure {
            tree: id(TREE),
            check: Some("api".into()),
            head: None,
            verify: Script {
                blob: id(BLOB),
                mode: 0o100755,
            },
            exit: "exit code 1".into(),
            exit_code: Some(1),
            duration_ms: 40,
            attempts: 1,
            time: OffsetDateTime::from_unix_timestamp(1_795_978_336).unwrap(),
            host: "cli".into(),
            session: None,
            tool: "git-prove-it 0.1.0".into(),
            identity_missing: false,
            output: vec!["test a ... FAILED".into(), String::new(), "1 failed".into()],
            signed_off_by: "A U Thor <author@example.com>".into(),
        }
    }

    #[test]
    fn renders_a_disproven_record_of_version_1_exactly() {
        assert_eq!(
            sample().render(),
            "prove-it-record: 1\n\
             outcome: DISPROVEN\n\
             tree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\
             check: api\n\
             head: none\n\
             verify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\n\
             exit: exit code 1\n\
             exit-code: 1\n\
             duration-ms: 40\n\
             attempts: 1\n\
             time: 2026-11-29T18:52:16Z\n\
             host: cli\n\
             session: none\n\
             tool: git-prove-it 0.1.0\n\
             output:\n \
             test a ... FAILED\n \n \
             1 failed\n\
             Signed-off-by: A U Thor <author@example.com>\n"
        );
    }

    #[test]
    fn round_trips_with_a_blank_output_line_and_a_kill() {
        let mut failure = sample();
        failure.exit = "timed out after 300 s".into();
        failure.exit_code = None;
        failure.attempts = 3;
        let parsed = parse_failures(&failure.render(), &id(TREE));
        assert_eq!(parsed, vec![failure]);
    }

    #[test]
    fn a_failure_record_is_never_read_as_a_proof() {
        let text = sample().render();
        let proofs =
            record::Proofs::of_check(&text, &id(TREE), Some("api"), Some((id(BLOB), 0o100755)));
        assert!(proofs.valid.is_empty(), "{proofs:?}");
        assert_eq!(proofs.invalid.len(), 1);
    }

    #[test]
    fn a_proof_is_never_read_as_a_failure() {
        let failure = sample().render().replace("DISPROVEN", "PROVEN");
        assert!(parse_failures(&failure, &id(TREE)).is_empty());
    }

    #[test]
    fn output_is_bounded_and_stripped_of_terminal_controls() {
        let mut lines: Vec<String> = (0..50).map(|n| format!("line {n}")).collect();
        lines.push("\u{1b}[31merror\u{1b}[0m: bad\rthing".into());
        lines.push("x".repeat(1000));
        let kept = bounded_output(&lines);
        assert_eq!(kept.len(), OUTPUT_LINES);
        assert_eq!(kept[OUTPUT_LINES - 2], "error: bad thing");
        assert_eq!(kept[OUTPUT_LINES - 1].chars().count(), LINE_CHARS + 3);
    }

    #[test]
    fn secret_looking_variables_are_redacted_and_ordinary_ones_kept() {
        let vars = [
            ("GITHUB_TOKEN", "ghp_0123456789abcdef"),
            ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG"),
            ("OPENAI_API_KEY", "sk-proj-abcdefgh"),
            ("DB_PASSWORD", "short"),
            ("GIT_AUTHOR_NAME", "A U Thor Longname"),
            ("HOME", "/home/someone/long"),
        ]
        .map(|(name, value)| (name.to_string(), value.to_string()));
        let secrets = secret_values(vars.into_iter());
        assert_eq!(secrets.len(), 3, "{secrets:?}");
        let lines = redact(
            vec![
                "token=ghp_0123456789abcdef; key sk-proj-abcdefgh".into(),
                "by A U Thor Longname in /home/someone/long, pw short".into(),
            ],
            &secrets,
        );
        assert_eq!(lines[0], "token=[redacted]; key [redacted]");
        assert_eq!(
            lines[1],
            "by A U Thor Longname in /home/someone/long, pw short"
        );
    }

    #[test]
    fn the_same_failure_with_other_numbers_has_the_same_lines() {
        let failure = sample();
        let again = vec![
            "test a ... FAILED".to_string(),
            String::new(),
            "1 failed".to_string(),
        ];
        assert!(failure.same_lines(&again));
        let timed = vec![
            "test a ... FAILED".into(),
            String::new(),
            "12 failed".into(),
        ];
        assert!(failure.same_lines(&timed));
        let other = vec!["test b ... FAILED".into(), String::new(), "1 failed".into()];
        assert!(!failure.same_lines(&other));
    }

    #[test]
    fn a_note_keeps_the_newest_failures_of_a_check_only() {
        let mut note = String::new();
        for n in 0..8 {
            let mut failure = sample();
            failure.time += time::Duration::minutes(n);
            note = append(&note, &failure);
        }
        let mut other = sample();
        other.check = Some("docs".into());
        note = append(&note, &other);
        let parsed = parse_failures(&note, &id(TREE));
        let api: Vec<_> = parsed
            .iter()
            .filter(|f| f.check.as_deref() == Some("api"))
            .collect();
        assert_eq!(api.len(), KEPT);
        assert_eq!(
            api.last().unwrap().time,
            sample().time + time::Duration::minutes(7)
        );
        assert_eq!(parsed.len(), KEPT + 1);
    }
}
