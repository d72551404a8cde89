//! What `log` prints: `git log --oneline` with a proof column, in colour when asked, and with
//! `-p` each commit's stored diff, protected paths and failure.

use std::io::{self, Write};

use serde::Serialize;

use super::commits::{
    CommitCheckReport, CommitReport, FailureSummary, VerifyChangeReport, describe, printable,
};
use super::{ContestSummary, ProofSummary};

/// What `git prove-it log` lists.
#[derive(Debug, Serialize)]
pub(crate) struct LogReport {
    pub version: u32,
    pub commits: Vec<CommitReport>,
    /// verify.sh changed since a base of the range, per base.
    pub verify_changed: Vec<VerifyChangeReport>,
}

/// How `log` prints: in colour or not, with verify.sh diffs or not.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogStyle {
    pub color: bool,
    pub patch: bool,
}

const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const RED: &str = "\x1b[31m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

impl LogReport {
    pub(crate) fn human(&self, style: LogStyle, out: &mut dyn Write) -> io::Result<()> {
        // The standing column fits its longest words (a failure's, `failed (exit 1, 3 min
        // ago)`), so that the subjects stay in one column.
        let width = self
            .commits
            .iter()
            .map(|commit| commit.standing_words().chars().count())
            .max()
            .unwrap_or(0)
            .max(13);
        let paint = |colour: &str, text: &str| {
            if style.color {
                format!("{colour}{text}{RESET}")
            } else {
                text.to_string()
            }
        };
        for commit in &self.commits {
            let colour = match commit.status {
                "proven" => GREEN,
                "proven-edited" => YELLOW,
                "not-armed" => DIM,
                _ => RED,
            };
            writeln!(
                out,
                "{} {} {}{}",
                paint(YELLOW, commit.short()),
                paint(colour, &format!("{:<width$}", commit.standing_words())),
                commit.subject,
                paint(DIM, &detail(commit))
            )?;
            if style.patch {
                patch_lines(commit, &paint, out)?;
            }
        }
        for change in &self.verify_changed {
            let mut line = Vec::new();
            change.human(&mut line)?;
            write!(
                out,
                "{}",
                paint(YELLOW, String::from_utf8_lossy(&line).trim_end())
            )?;
            writeln!(out)?;
        }
        Ok(())
    }
}

/// What a commit's line says after its subject: its checks, its proof (who, when, how long,
/// where, through what, signed or not), why its record is invalid, what proved a commit
/// without verify.sh, or its contest.
fn detail(commit: &CommitReport) -> String {
    match (&commit.proof, commit.status) {
        _ if commit.checks.is_some() => commit.checks_detail(),
        (Some(proof), status) => proof_detail(commit, proof, status),
        (None, "invalid") => format!(
            "  (not a valid record: {})",
            commit.invalid.first().map_or("?", String::as_str)
        ),
        (None, "not-armed") if !commit.exec.is_empty() => {
            let named: Vec<String> = commit
                .exec
                .iter()
                .map(|exec| {
                    format!(
                        "{} {} {}",
                        exec.name,
                        exec.proof.outcome.as_str(),
                        &exec.script[..7.min(exec.script.len())]
                    )
                })
                .collect();
            format!("  (no verify.sh in its tree; {})", named.join(", "))
        }
        (None, "not-armed") => "  (no verify.sh in its tree)".to_string(),
        (None, "contested") => commit
            .contested
            .as_ref()
            .map_or_else(String::new, |c| format!("  ({})", c.words())),
        (None, _) => String::new(),
    }
}

/// A proven commit's detail: who signed it off (and whether with a git identity), when, how
/// long it ran, on which host and how isolated, its tests, what it went through, and its
/// signature.
fn proof_detail(commit: &CommitReport, proof: &ProofSummary, status: &str) -> String {
    let edited = match status {
        "proven-edited" if !proof.verify_edited && !proof.weakened.is_empty() => {
            ", through weakened tests"
        }
        "proven-edited" => ", through an edited verify.sh",
        _ if !proof.weakened.is_empty() => ", through weakened tests",
        _ => "",
    };
    let missing = if proof.identity_missing {
        ", no git identity"
    } else {
        ""
    };
    format!(
        "  ({}{missing}, {}, {}, host {}{}{}{edited}, {})",
        proof.signed_off_by,
        proof.time,
        super::seconds(proof.duration_ms),
        proof.host,
        proof.isolation_words(),
        proof.tests_words(),
        commit
            .signature
            .as_ref()
            .map_or_else(|| "unsigned".to_string(), describe)
    )
}

/// Under a commit of `log -p`: for each of its checks (or for the commit, without checks) the
/// stored diff of what proves it, the protected paths its proof went through, and its failure.
fn patch_lines(
    commit: &CommitReport,
    paint: &dyn Fn(&str, &str) -> String,
    out: &mut dyn Write,
) -> io::Result<()> {
    if let Some(checks) = &commit.checks {
        for check in checks {
            writeln!(out, "    {}", check.line())?;
            if let Some(diff) = &check.verify_diff {
                diff_lines(diff, "      ", paint, out)?;
            }
            if let Some(proof) = &check.proof {
                protection_lines(proof, "      ", paint, out)?;
            }
            if let Some(failure) = check.failed() {
                failure_lines(failure, "      ", paint, out)?;
            }
        }
    } else {
        if let Some(diff) = &commit.verify_diff {
            diff_lines(diff, "    ", paint, out)?;
        }
        if let Some(proof) = &commit.proof {
            protection_lines(proof, "    ", paint, out)?;
        }
        if let Some(failure) = commit.failed() {
            failure_lines(failure, "    ", paint, out)?;
        }
    }
    Ok(())
}

/// The lines of a stored diff under a commit (or check) of `log -p`, indented by `indent`.
/// Under a proof made through weakened or changed protected paths (`log -p`): each weakening,
/// each changed file, and their diff.
fn protection_lines(
    proof: &ProofSummary,
    indent: &str,
    paint: &dyn Fn(&str, &str) -> String,
    out: &mut dyn Write,
) -> io::Result<()> {
    for finding in &proof.weakened {
        writeln!(
            out,
            "{indent}{}",
            paint(YELLOW, &format!("weakened: {}", printable(finding)))
        )?;
    }
    for path in &proof.changed {
        writeln!(out, "{indent}changed: {}", printable(path))?;
    }
    if let Some(diff) = &proof.protect_diff {
        diff_lines(diff, indent, paint, out)?;
    }
    Ok(())
}

fn diff_lines(
    diff: &str,
    indent: &str,
    paint: &dyn Fn(&str, &str) -> String,
    out: &mut dyn Write,
) -> io::Result<()> {
    for line in diff.lines() {
        // The diff is stored in a note anyone can write: its control characters (a carriage
        // return, an escape sequence) must not rewrite the screen.
        let line = printable(line);
        let line = line.as_str();
        let colour = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => GREEN,
            Some(b'-') if !line.starts_with("---") => RED,
            _ => "",
        };
        writeln!(out, "{indent}{}", paint(colour, line))?;
    }
    Ok(())
}

/// The last lines of a failure on record under a commit (or check) of `log -p`, indented by
/// `indent`, after a line saying what they are.
fn failure_lines(
    failure: &FailureSummary,
    indent: &str,
    paint: &dyn Fn(&str, &str) -> String,
    out: &mut dyn Write,
) -> io::Result<()> {
    if failure.output.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{indent}{}",
        paint(
            DIM,
            &format!("last lines of the failed run ({}):", failure.time)
        )
    )?;
    for line in &failure.output {
        writeln!(out, "{indent}{}", paint(RED, &printable(line)))?;
    }
    Ok(())
}

impl CommitReport {
    /// `log`'s detail for a commit with checks: `  (proven 1/2 checks, missing: docs)`, with
    /// the proof's line when every check is proven, or the checks file's error.
    fn checks_detail(&self) -> String {
        if self.checks_error.is_some() || self.checks.as_ref().is_some_and(Vec::is_empty) {
            return format!("  ({})", self.why_not());
        }
        let summary = self.checks_summary().unwrap_or_default();
        match &self.proof {
            Some(proof) if self.proven => format!(
                "  ({summary}; {}, {}, host {}{}, {})",
                proof.signed_off_by,
                proof.time,
                proof.host,
                proof.isolation_words(),
                self.signature
                    .as_ref()
                    .map_or_else(|| "unsigned".to_string(), describe)
            ),
            _ => format!("  ({summary})"),
        }
    }
}

impl CommitCheckReport {
    /// One check under its commit in `log -p`: name, standing, input tree, and its proof or
    /// what keeps it from counting.
    fn line(&self) -> String {
        let short_tree = super::short(&self.input_tree);
        let flaky = match self.flaky() {
            0 => String::new(),
            n => format!(", flaky: {n}"),
        };
        let detail = match (&self.proof, self.standing) {
            (Some(proof), _) => format!(
                "{}, {}, {}, host {}{}{flaky}, {}",
                proof.signed_off_by,
                proof.time,
                super::seconds(proof.duration_ms),
                proof.host,
                proof.isolation_words(),
                self.signature
                    .as_ref()
                    .map_or_else(|| "unsigned".to_string(), describe)
            ),
            (None, _) if self.failed().is_some() => {
                self.failed().map(FailureSummary::brief).unwrap_or_default()
            }
            (None, "invalid") => format!(
                "not a valid record: {}",
                self.invalid.first().map_or("?", String::as_str)
            ),
            (None, "contested") => self
                .contested
                .as_ref()
                .map_or_else(|| "contested".to_string(), ContestSummary::words),
            (None, "missing-script") => format!(
                "{} {}",
                self.run,
                self.script_problem.unwrap_or("cannot run")
            ),
            (None, _) => "no proof for its input tree".to_string(),
        };
        let standing = if self.failed().is_some() {
            "failed"
        } else {
            self.standing
        };
        format!(
            "check {:<12} {standing:<13} {short_tree} ({detail})",
            self.name
        )
    }
}

/// Whether to colour output: `--color=always|never` decide; `auto` colours a terminal unless
/// `NO_COLOR` is set to something (<https://no-color.org>).
pub(crate) fn use_color(choice: &str, no_color: Option<&str>, terminal: bool) -> bool {
    match choice {
        "always" => true,
        "never" => false,
        _ => terminal && no_color.is_none_or(str::is_empty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::commits::tests::{failure, report};
    #[test]
    fn colour_follows_the_flag_then_no_color_then_the_terminal() {
        assert!(use_color("always", Some("1"), false));
        assert!(!use_color("never", None, true));
        assert!(use_color("auto", None, true));
        assert!(use_color("auto", Some(""), true));
        assert!(!use_color("auto", Some("1"), true));
        assert!(!use_color("auto", None, false));
    }

    #[test]
    fn log_shows_the_stored_diff_with_p_and_paints_only_when_asked() {
        let log = LogReport {
            version: 1,
            commits: vec![report("invalid", false)],
            verify_changed: Vec::new(),
        };
        let mut plain = Vec::new();
        log.human(
            LogStyle {
                color: false,
                patch: true,
            },
            &mut plain,
        )
        .unwrap();
        let plain = String::from_utf8(plain).unwrap();
        assert!(!plain.contains('\x1b'));
        assert!(plain.contains("    -old\n    +new\n"), "{plain}");
        let mut painted = Vec::new();
        log.human(
            LogStyle {
                color: true,
                patch: false,
            },
            &mut painted,
        )
        .unwrap();
        let painted = String::from_utf8(painted).unwrap();
        assert!(painted.contains(&format!("{RED}invalid")));
        assert!(!painted.contains("+new"));
    }

    /// A hand-written verify-diff cannot paint over the screen: its controls are shown as U+FFFD.
    #[test]
    fn a_stored_diff_cannot_carry_terminal_controls_to_the_screen() {
        let mut commit = report("proven-edited", true);
        commit.verify_diff = Some("+ok\r+forged\u{1b}[2J\tkept tab\n".into());
        let log = LogReport {
            version: 1,
            commits: vec![commit],
            verify_changed: Vec::new(),
        };
        let mut out = Vec::new();
        log.human(
            LogStyle {
                color: false,
                patch: true,
            },
            &mut out,
        )
        .unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(!out.contains('\x1b') && !out.contains('\r'), "{out:?}");
        assert!(
            out.contains("    +ok\u{fffd}+forged\u{fffd}[2J\tkept tab\n"),
            "{out:?}"
        );
    }

    #[test]
    fn a_check_with_a_failure_on_record_is_named_failed_beside_missing() {
        let check = |name: &str, failed: Option<FailureSummary>| CommitCheckReport {
            name: name.into(),
            run: format!("{name}/verify.sh"),
            input_tree: "ab".repeat(20),
            standing: "unproven",
            proven: false,
            proof: None,
            invalid: Vec::new(),
            verify_diff: None,
            signature: None,
            script_problem: None,
            failure: failed,
            cannot_test: None,
            contested: None,
            not_isolated: false,
        };
        let mut commit = report("unproven", false);
        commit.checks = Some(vec![
            check("docs", Some(failure(Some(1), "exit code 1", 1))),
            check("web", None),
        ]);
        assert_eq!(
            commit.why_not(),
            "proven 0/2 checks, failed: docs (exit 1, 3 min ago); missing: web"
        );
        assert_eq!(commit.standing_words(), "failed");
        let log = LogReport {
            version: 1,
            commits: vec![commit],
            verify_changed: Vec::new(),
        };
        let mut out = Vec::new();
        log.human(
            LogStyle {
                color: false,
                patch: true,
            },
            &mut out,
        )
        .unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains("    check docs         failed        abababababab (exit 1, 3 min ago)\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "      last lines of the failed run (2026-11-29T18:52:16Z):\n      test x ... FAILED\n      \u{fffd}[2Jforged\n"
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "    check web          unproven      abababababab (no proof for its input tree)\n"
            ),
            "{out}"
        );
    }
}
