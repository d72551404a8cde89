//! `check --format junit`: the check as a JUnit XML report, the format GitLab's
//! `artifacts:reports:junit`, Jenkins' junit step and the test-reporter actions read.
//!
//! One `<testsuite>` named `git-prove-it` inside `<testsuites>`, one `<testcase>` per checked
//! commit, and one per verify.sh change of a range. A case that does not count as proven has a
//! `<failure>` whose `type` says why, so the suite's failures are non-zero exactly when `check`
//! exits 1. The XML is written by quick-xml, which escapes text and attributes; characters XML
//! 1.0 cannot carry at all (a subject's escape sequence) are replaced first.

use std::io::{self, Write};

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use super::commits::describe;
use super::{CheckReport, CommitReport, VerifyChangeReport};
use crate::proof::SignatureStatus;

/// The suite's name, and the class name of every case.
const SUITE: &str = "git-prove-it";
const CLASS: &str = "prove-it";

/// One case of the suite, before it is written.
struct Case {
    name: String,
    time_ms: u64,
    failure: Option<Failure>,
    out: String,
}

struct Failure {
    /// A word a reader can filter on: unproven, invalid, not-armed, proven-edited,
    /// verify-change, or the signature's status under `--require-signed`.
    kind: String,
    message: String,
    detail: String,
}

/// Write `report` as a JUnit XML document.
pub(crate) fn junit(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    let refused = CheckReport::refuses_verify_change(
        report.strict,
        report.allow_verify_change,
        &report.verify_changed,
    );
    let cases: Vec<Case> = report
        .commits
        .iter()
        .map(commit_case)
        .chain(
            report
                .verify_changed
                .iter()
                .map(|change| change_case(change, refused)),
        )
        .collect();
    let tests = cases.len().to_string();
    let failures = cases
        .iter()
        .filter(|c| c.failure.is_some())
        .count()
        .to_string();
    let time = seconds(cases.iter().map(|c| c.time_ms).sum());
    let mut writer = Writer::new_with_indent(&mut *out, b' ', 2);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let counts = [
        ("name", SUITE),
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", "0"),
        ("skipped", "0"),
        ("time", time.as_str()),
    ];
    writer
        .create_element("testsuites")
        .with_attributes(counts)
        .write_inner_content(|w| {
            w.create_element("testsuite")
                .with_attributes(counts)
                .write_inner_content(|w| {
                    properties(report, w)?;
                    for case in &cases {
                        write_case(case, w)?;
                    }
                    Ok(())
                })?;
            Ok(())
        })?;
    writeln!(out)
}

fn properties<W: Write>(report: &CheckReport, w: &mut Writer<W>) -> io::Result<()> {
    let flag = |on: bool| if on { "true" } else { "false" };
    let outcome = if report.proven {
        "PROVEN"
    } else {
        "NOT_PROVEN"
    };
    let values = [
        ("outcome", outcome),
        ("strict", flag(report.strict)),
        ("require-signed", flag(report.require_signed)),
        ("allow-verify-change", flag(report.allow_verify_change)),
    ];
    w.create_element("properties").write_inner_content(|w| {
        for (name, value) in values {
            w.create_element("property")
                .with_attributes([("name", name), ("value", value)])
                .write_empty()?;
        }
        Ok(())
    })?;
    Ok(())
}

fn write_case<W: Write>(case: &Case, w: &mut Writer<W>) -> io::Result<()> {
    let name = xml_chars(&case.name);
    let time = seconds(case.time_ms);
    w.create_element("testcase")
        .with_attributes([
            ("classname", CLASS),
            ("name", name.as_str()),
            ("time", time.as_str()),
        ])
        .write_inner_content(|w| {
            if let Some(failure) = &case.failure {
                let message = xml_chars(&failure.message);
                let detail = xml_chars(&failure.detail);
                w.create_element("failure")
                    .with_attributes([
                        ("message", message.as_str()),
                        ("type", failure.kind.as_str()),
                    ])
                    .write_text_content(BytesText::new(&detail))?;
            }
            if !case.out.is_empty() {
                w.create_element("system-out")
                    .write_text_content(BytesText::new(&xml_chars(&case.out)))?;
            }
            Ok(())
        })?;
    Ok(())
}

fn commit_case(commit: &CommitReport) -> Case {
    let mut out = String::new();
    if let Some(checks) = &commit.checks {
        for check in checks {
            out.push_str(&format!(
                "check {} (input tree {}): {}",
                check.name, check.input_tree, check.standing
            ));
            if let Some(proof) = &check.proof {
                out.push_str(&format!(", {}", proof.by_line()));
            }
            if let Some(why) = check.script_problem {
                out.push_str(&format!(": {} {why}", check.run));
            }
            out.push('\n');
        }
        if let Some(error) = &commit.checks_error {
            out.push_str(&format!("{error}\n"));
        }
    } else if let Some(proof) = &commit.proof {
        out.push_str(&format!(
            "proof: signed off by {}{} at {}; verify.sh ran {} on host {}\n",
            proof.signed_off_by,
            if proof.identity_missing {
                " (no git identity)"
            } else {
                ""
            },
            proof.time,
            super::seconds(proof.duration_ms),
            proof.host,
        ));
    }
    if let Some(signature) = &commit.signature {
        out.push_str(&format!("signature: {}\n", describe(signature)));
    }
    if commit.status == "proven-edited" {
        out.push_str(
            "proven only through an edited verify.sh (BOUNDED_CLAIM_SURVIVES): review the edit with 'git prove-it log -p'; 'git prove-it check --strict' refuses such proofs\n",
        );
    }
    for problem in &commit.invalid {
        out.push_str(&format!("not a valid record: {problem}\n"));
    }
    let failure = (!commit.proven).then(|| Failure {
        kind: failure_kind(commit),
        message: commit.why_not(),
        detail: out.clone(),
    });
    Case {
        name: format!("{} {}", commit.short(), commit.subject),
        time_ms: match &commit.checks {
            Some(checks) => checks
                .iter()
                .filter_map(|c| c.proof.as_ref())
                .map(|p| p.duration_ms)
                .sum(),
            None => commit.proof.as_ref().map_or(0, |p| p.duration_ms),
        },
        failure,
        out,
    }
}

fn failure_kind(commit: &CommitReport) -> String {
    if matches!(commit.status, "proven" | "proven-edited") && commit.lacks_signature() {
        return match &commit.signature {
            Some(SignatureStatus::Bad) => "bad-signature".to_string(),
            Some(SignatureStatus::UnknownSigner { .. }) => "unknown-signer".to_string(),
            Some(SignatureStatus::NotVerified) => "not-verified".to_string(),
            Some(SignatureStatus::TreeMismatch) => "tree-mismatch".to_string(),
            Some(SignatureStatus::Good { .. } | SignatureStatus::Unsigned) | None => {
                "unsigned".to_string()
            }
        };
    }
    commit.status.to_string()
}

fn change_case(change: &VerifyChangeReport, refused: bool) -> Case {
    let shorts: Vec<&str> = change
        .commits
        .iter()
        .map(|c| &c[..c.len().min(7)])
        .collect();
    let out = format!(
        "{} changed since {} {}: in {}\n",
        change.what,
        change.short_base(),
        change.base_subject,
        shorts.join(", ")
    );
    let failure = refused.then(|| Failure {
        kind: "verify-change".to_string(),
        message: format!(
            "{} changed since the base of the range (--strict)",
            change.what
        ),
        detail: format!(
            "{out}review the change, and if a person made it on purpose, check again with --allow-verify-change\n"
        ),
    });
    Case {
        name: format!(
            "{} changed since {} {}",
            change.what,
            change.short_base(),
            change.base_subject
        ),
        time_ms: 0,
        failure,
        out,
    }
}

/// Seconds with millisecond precision, as JUnit's `time` attributes take them.
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// `text` with the characters XML 1.0 cannot carry, even escaped (control characters other
/// than tab, newline and carriage return), replaced by U+FFFD. A subject is anyone's text.
fn xml_chars(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && !matches!(c, '\t' | '\n' | '\r') {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_xml_cannot_carry_are_replaced_and_the_rest_kept() {
        assert_eq!(
            xml_chars("a\x1b[31m\tb\n<&>\u{7f}"),
            "a\u{fffd}[31m\tb\n<&>\u{fffd}"
        );
    }

    #[test]
    fn junit_times_are_seconds_with_milliseconds() {
        assert_eq!(seconds(0), "0.000");
        assert_eq!(seconds(1234), "1.234");
        assert_eq!(seconds(60_005), "60.005");
    }
}
