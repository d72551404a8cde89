//! `check --format github`: what a GitHub Actions runner reads from a check, rendered from the
//! same [`CheckReport`] as the human text and the JSON.
//!
//! Three pieces, each from the one report: workflow commands on stdout (one `::error` per
//! commit that does not count, <https://docs.github.com/actions/reference/workflow-commands-for-github-actions>),
//! a Markdown job summary (`$GITHUB_STEP_SUMMARY`), and step outputs (`$GITHUB_OUTPUT`, with
//! the delimiter syntax for the multi-line list of unproven commits).

use std::io::{self, Write};

use super::CheckReport;
use super::commits::{CommitReport, describe};

/// GitHub shows at most this many annotations of one type per step and drops the rest
/// silently; past it, the last error is one that counts the rest.
pub(crate) const ANNOTATION_CAP: usize = 10;

/// The delimiter of the multi-line `unproven` output: commit ids are hex, so no line of the
/// value can be it.
const OUTPUT_DELIMITER: &str = "PROVE_IT_EOF";

/// The error annotations: one per commit that does not count, and one when `--strict` refuses a
/// verify.sh change; at most [`ANNOTATION_CAP`], the last of them counting what did not fit.
pub(crate) fn annotations(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    let mut errors: Vec<(String, String)> = report
        .commits
        .iter()
        .filter(|c| !c.proven)
        .map(|c| {
            (
                format!("commit {} is not proven", c.short()),
                format!("{} {}: {}", c.short(), c.subject, c.why_not()),
            )
        })
        .collect();
    if CheckReport::refuses_verify_change(
        report.strict,
        report.allow_verify_change,
        &report.verify_changed,
    ) {
        for change in &report.verify_changed {
            errors.push((
                format!("{} changed (--strict)", change.what),
                format!(
                    "{} changed since {} {}: a person reviews the change, then checks with --allow-verify-change",
                    change.what,
                    change.short_base(),
                    change.base_subject
                ),
            ));
        }
    }
    let shown = if errors.len() > ANNOTATION_CAP {
        ANNOTATION_CAP - 1
    } else {
        errors.len()
    };
    for (title, message) in &errors[..shown] {
        error(title, message, out)?;
    }
    let rest = errors.len() - shown;
    if rest > 0 {
        error(
            &format!("{rest} more commits are not proven"),
            &format!(
                "{rest} more commits are not proven: GitHub shows {ANNOTATION_CAP} annotations per step, the job summary lists them all"
            ),
            out,
        )?;
    }
    Ok(())
}

/// One `::error title=...::message` line, escaped as the runner unescapes it.
fn error(title: &str, message: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "::error title={}::{}",
        escape_property(title),
        escape_data(message)
    )
}

/// A workflow command's message: `%`, CR and LF are escaped, so that a commit subject cannot end
/// the command and start another.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: as a message, and `:` and `,` too.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// The Markdown job summary: a heading with the result, then one table row per commit checked.
pub(crate) fn summary(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    let total = report.commits.len();
    let unproven = report.commits.iter().filter(|c| !c.proven).count();
    let heading = if unproven > 0 {
        format!("not proven: {unproven} of {total} commits")
    } else if CheckReport::refuses_verify_change(
        report.strict,
        report.allow_verify_change,
        &report.verify_changed,
    ) {
        format!(
            "not proven: {} changed since the base of the range (--strict)",
            report.changed_first()
        )
    } else if total == 1 {
        "proven: 1 commit".to_string()
    } else {
        format!("proven: all {total} commits")
    };
    writeln!(out, "### git prove-it check: {heading}")?;
    writeln!(out)?;
    writeln!(
        out,
        "| commit | subject | proof | who | when | duration | signature | verify.sh edited |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|")?;
    for commit in &report.commits {
        row(commit, out)?;
    }
    for change in &report.verify_changed {
        writeln!(out)?;
        writeln!(
            out,
            "{} changed since `{}` {}: in {}",
            markdown(&change.what),
            change.short_base(),
            markdown(&change.base_subject),
            change
                .commits
                .iter()
                .map(|c| format!("`{}`", &c[..c.len().min(7)]))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    writeln!(out)
}

fn row(commit: &CommitReport, out: &mut dyn Write) -> io::Result<()> {
    let proof = if commit.proven {
        format!("✅ {}", commit.status)
    } else {
        format!("❌ {}", markdown(&commit.why_not()))
    };
    let (who, when, duration, edited) = commit.proof.as_ref().map_or_else(
        || ("", String::new(), String::new(), ""),
        |proof| {
            (
                proof.signed_off_by.as_str(),
                proof.time.clone(),
                super::seconds(proof.duration_ms),
                if proof.verify_edited { "yes" } else { "no" },
            )
        },
    );
    let signature = commit.signature.as_ref().map_or_else(String::new, describe);
    writeln!(
        out,
        "| `{}` | {} | {proof} | {} | {when} | {duration} | {} | {edited} |",
        commit.short(),
        markdown(&commit.subject),
        markdown(who),
        markdown(&signature),
    )
}

/// Text from a commit or a note (anyone can write either) as literal Markdown in a table cell:
/// no HTML, no links, no emphasis, no cell break.
fn markdown(text: &str) -> String {
    let mut cell = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => cell.push_str("&amp;"),
            '<' => cell.push_str("&lt;"),
            '>' => cell.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' => {
                cell.push('\\');
                cell.push(c);
            }
            c if c.is_control() => cell.push(' '),
            c => cell.push(c),
        }
    }
    cell
}

/// Step outputs in `$GITHUB_OUTPUT`'s syntax: `proven` (true or false), `proven-count`, and
/// `unproven`, the full ids of the commits that do not count, one a line.
pub(crate) fn outputs(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    let proven = report.commits.iter().filter(|c| c.proven).count();
    writeln!(out, "proven={}", report.proven)?;
    writeln!(out, "proven-count={proven}")?;
    writeln!(out, "unproven<<{OUTPUT_DELIMITER}")?;
    for commit in report.commits.iter().filter(|c| !c.proven) {
        writeln!(out, "{}", commit.commit)?;
    }
    writeln!(out, "{OUTPUT_DELIMITER}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Outcome;

    fn commit(n: usize, proven: bool, subject: &str) -> CommitReport {
        CommitReport {
            commit: format!("{n:040x}"),
            tree: "fedcba9876543210fedcba9876543210fedcba98".into(),
            subject: subject.into(),
            status: if proven { "proven" } else { "unproven" },
            proven,
            proof: None,
            invalid: Vec::new(),
            verify_diff: None,
            signature: None,
            checks: None,
            checks_error: None,
            failure: None,
            cannot_test: None,
            contested: None,
            exec: Vec::new(),
            require_signed: false,
            not_isolated: false,
        }
    }

    fn check(commits: Vec<CommitReport>) -> CheckReport {
        let proven = commits.iter().all(|c| c.proven);
        CheckReport {
            version: 1,
            outcome: if proven {
                Outcome::Proven
            } else {
                Outcome::NotProven
            },
            proven,
            strict: false,
            require_signed: false,
            allow_weakened: false,
            weakened: Vec::new(),
            allow_verify_change: false,
            commits,
            verify_changed: Vec::new(),
        }
    }

    fn text(render: fn(&CheckReport, &mut dyn Write) -> io::Result<()>, r: &CheckReport) -> String {
        let mut out = Vec::new();
        render(r, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn one_error_per_unproven_commit_and_none_for_a_proven_one() {
        let r = check(vec![commit(1, true, "ok"), commit(2, false, "second")]);
        assert_eq!(
            text(annotations, &r),
            "::error title=commit 0000000 is not proven::0000000 second: no proof for its tree\n"
        );
    }

    /// GitHub drops annotations past ten per type per step: the tenth counts the rest.
    #[test]
    fn past_ten_unproven_commits_the_tenth_error_counts_the_rest() {
        let r = check((0..14).map(|n| commit(n, false, "s")).collect());
        let out = text(annotations, &r);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), ANNOTATION_CAP, "{out}");
        assert!(
            lines[..9]
                .iter()
                .all(|l| l.starts_with("::error title=commit "))
        );
        assert!(
            lines[9].starts_with(
                "::error title=5 more commits are not proven::5 more commits are not proven"
            ),
            "{}",
            lines[9]
        );
        let ten = check((0..10).map(|n| commit(n, false, "s")).collect());
        assert_eq!(text(annotations, &ten).lines().count(), 10);
        assert!(!text(annotations, &ten).contains("more commits"));
    }

    /// A subject with a newline or `::` cannot start a workflow command of its own.
    #[test]
    fn a_subject_cannot_inject_a_workflow_command() {
        let r = check(vec![commit(1, false, "x\n::set-output name=a::b %0A")]);
        let out = text(annotations, &r);
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(out.contains("x%0A::set-output name=a::b %250A"), "{out}");
    }

    #[test]
    fn the_summary_is_a_table_with_a_row_per_commit_and_cells_kept_literal() {
        let r = check(vec![
            commit(1, true, "fine"),
            commit(2, false, "a | b <img src=x> [link](y)"),
        ]);
        let out = text(summary, &r);
        assert!(
            out.starts_with("### git prove-it check: not proven: 1 of 2 commits\n\n| commit | subject | proof | who | when | duration | signature | verify.sh edited |\n|---|---|---|---|---|---|---|---|\n"),
            "{out}"
        );
        assert!(out.contains("| `0000000` | fine | ✅ proven |"), "{out}");
        assert!(
            out.contains("| a \\| b &lt;img src=x&gt; \\[link\\](y) | ❌ no proof for its tree |"),
            "{out}"
        );
    }

    #[test]
    fn outputs_count_the_proven_and_list_the_unproven_with_a_delimiter() {
        let r = check(vec![
            commit(1, true, "a"),
            commit(2, false, "b"),
            commit(3, false, "c"),
        ]);
        assert_eq!(
            text(outputs, &r),
            format!(
                "proven=false\nproven-count=1\nunproven<<PROVE_IT_EOF\n{:040x}\n{:040x}\nPROVE_IT_EOF\n",
                2, 3
            )
        );
    }
}
