//! What `check` says of the commits it was given: each unproven one by short hash and subject,
//! the proofs made through an edited verify.sh, weakened protected paths, and the hints.

use std::io::{self, Write};

use serde::Serialize;

use super::commits::{CommitReport, VerifyChangeReport, printable};
use crate::outcome::Outcome;

/// Every proof through an edited verify.sh among `commits`, said where a reader of `check`'s
/// output will see it, also when it counts.
fn edited_proofs(commits: &[CommitReport], out: &mut dyn Write) -> io::Result<()> {
    for commit in commits
        .iter()
        .filter(|c| c.proven && c.status == "proven-edited")
    {
        writeln!(
            out,
            "  {} {} (proven only through {}: BOUNDED_CLAIM_SURVIVES)",
            commit.short(),
            commit.subject,
            commit.edited_what()
        )?;
    }
    if commits
        .iter()
        .any(|c| c.proven && c.status == "proven-edited")
    {
        writeln!(
            out,
            "hint: review the edit with 'git prove-it log -p'; 'git prove-it check --strict' refuses such proofs"
        )?;
    }
    Ok(())
}

/// The proven commits whose proof records paths no check read when it was made (`uncovered:`),
/// each with those paths: the proof vouches for none of them.
fn uncovered_proofs(commits: &[CommitReport], out: &mut dyn Write) -> io::Result<()> {
    for commit in commits.iter().filter(|c| c.proven) {
        let proofs = commit.proof.iter().chain(
            commit
                .checks
                .iter()
                .flatten()
                .filter_map(|check| check.proof.as_ref()),
        );
        let Some(proof) = proofs.max_by_key(|proof| proof.uncovered_count) else {
            continue;
        };
        if proof.uncovered_count == 0 {
            continue;
        }
        let more = proof.uncovered_count.saturating_sub(proof.uncovered.len());
        writeln!(
            out,
            "  {} {} (uncovered: {}{}: in no check's inputs when proven, so not tested)",
            commit.short(),
            commit.subject,
            proof.uncovered.join(" "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )?;
    }
    Ok(())
}

/// The proven commits whose proof (or a check's) was made by a run whose renames could not be
/// watched: shown, never refused, as the record says.
fn unwatched_proofs(commits: &[CommitReport], out: &mut dyn Write) -> io::Result<()> {
    for commit in commits.iter().filter(|c| c.proven) {
        let mut proofs = commit.proof.iter().chain(
            commit
                .checks
                .iter()
                .flatten()
                .filter_map(|check| check.proof.as_ref()),
        );
        if proofs.any(|proof| proof.renames_unwatched) {
            writeln!(
                out,
                "  {} {} (renames unwatched: a directory moved away and back while its proof ran would not have been seen)",
                commit.short(),
                commit.subject,
            )?;
        }
    }
    Ok(())
}

/// What `git prove-it check` found.
#[derive(Debug, Serialize)]
pub(crate) struct CheckReport {
    pub version: u32,
    /// PROVEN when every commit is, else NOT_PROVEN.
    pub outcome: Outcome,
    pub proven: bool,
    pub strict: bool,
    pub require_signed: bool,
    /// `--allow-verify-change`: `--strict` accepts a range whose verify.sh changed.
    pub allow_verify_change: bool,
    /// `--allow-weakened`: `--strict` accepts weakened protected paths.
    pub allow_weakened: bool,
    pub commits: Vec<CommitReport>,
    /// verify.sh changed since a base of the range, per base.
    pub verify_changed: Vec<VerifyChangeReport>,
    /// The checked commits whose protected paths were weakened since a base of the range.
    pub weakened: Vec<WeakenedReport>,
}

/// A checked commit whose protected paths were weakened since a base of the range.
#[derive(Debug, Serialize)]
pub(crate) struct WeakenedReport {
    pub base: String,
    pub commit: String,
    /// Each finding, in words.
    pub findings: Vec<String>,
}

/// The weakened commits, each finding a line; `refused` under `--strict` without
/// `--allow-weakened`.
fn weakened_lines(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    for weakened in &report.weakened {
        writeln!(
            out,
            "  {} weakened since {}{}:",
            &weakened.commit[..weakened.commit.len().min(7)],
            &weakened.base[..weakened.base.len().min(7)],
            if report.strict && !report.allow_weakened {
                " (refused by --strict)"
            } else {
                ""
            }
        )?;
        for finding in &weakened.findings {
            writeln!(out, "    {}", printable(finding))?;
        }
    }
    if !report.weakened.is_empty() {
        writeln!(
            out,
            "hint: review the weakening with 'git prove-it log -p'; 'git prove-it check --strict --allow-weakened' accepts it"
        )?;
    }
    Ok(())
}

impl CheckReport {
    /// Whether `--strict` refuses the range for a verify.sh change.
    pub(crate) fn refuses_verify_change(
        strict: bool,
        allow: bool,
        changes: &[VerifyChangeReport],
    ) -> bool {
        strict && !allow && !changes.is_empty()
    }

    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        let unproven: Vec<&CommitReport> = self.commits.iter().filter(|c| !c.proven).collect();
        let total = self.commits.len();
        let refused = Self::refuses_verify_change(
            self.strict,
            self.allow_verify_change,
            &self.verify_changed,
        );
        let weakened_refused = self.strict && !self.allow_weakened && !self.weakened.is_empty();
        if unproven.is_empty() {
            match (self.commits.as_slice(), refused) {
                (_, false) if weakened_refused => writeln!(
                    out,
                    "not proven: protected tests or configs weakened since the base of the range (--strict)"
                )?,
                (_, true) => writeln!(
                    out,
                    "not proven: {} changed since the base of the range (--strict)",
                    self.changed_first()
                )?,
                ([one], false) => writeln!(out, "proven: {} {}", one.short(), one.subject)?,
                (_, false) => writeln!(out, "proven: all {total} commits")?,
            }
            edited_proofs(&self.commits, out)?;
            uncovered_proofs(&self.commits, out)?;
            unwatched_proofs(&self.commits, out)?;
            self.verify_change_lines(refused, out)?;
            weakened_lines(self, out)?;
            return Ok(());
        }
        writeln!(out, "not proven: {} of {total} commits", unproven.len())?;
        list(&unproven, out)?;
        edited_proofs(&self.commits, out)?;
        uncovered_proofs(&self.commits, out)?;
        unwatched_proofs(&self.commits, out)?;
        self.verify_change_lines(refused, out)?;
        weakened_lines(self, out)?;
        if unproven.iter().any(|c| c.checks_error.is_some()) {
            writeln!(
                out,
                "hint: a commit's prove-it.toml is in error: fix it at the line named (SPEC.md section 2.1) and commit the fix; no proof can count for that commit"
            )?;
        }
        if unproven.iter().any(|c| c.status == "not-armed") {
            writeln!(
                out,
                "hint: nothing can prove a commit whose tree has no verify.sh (nor prove-it.toml), not even 'git prove-it run': arm the project ('git prove-it init'), commit verify.sh, and check the commits from that one on"
            )?;
            writeln!(
                out,
                "hint: history from before verify.sh can be proven with a script from outside it: 'git prove-it run <range> --exec <script>', then 'git prove-it check --exec <script>'"
            )?;
        }
        // Only a commit with something to run can be proven, here or elsewhere.
        if !unproven
            .iter()
            .any(|c| !matches!(c.status, "not-armed" | "checks-error"))
        {
            return Ok(());
        }
        writeln!(
            out,
            "hint: prove a commit with 'git prove-it run <commit>' and push its proof with 'git prove-it sync'"
        )?;
        writeln!(
            out,
            "hint: if it was proven elsewhere, fetch the proofs first: 'git prove-it sync', or 'git fetch origin refs/notes/prove-it:refs/notes/prove-it'"
        )
    }
}

impl CheckReport {
    /// What changed since a base, first: verify.sh, else the checks file, else a check's
    /// script (as `verify_changes` orders them).
    pub(crate) fn changed_first(&self) -> &str {
        self.verify_changed
            .first()
            .map_or(crate::proof::VERIFY_CHECK, |change| change.what.as_str())
    }

    fn verify_change_lines(&self, refused: bool, out: &mut dyn Write) -> io::Result<()> {
        for change in &self.verify_changed {
            change.human(out)?;
        }
        if refused {
            for change in &self.verify_changed {
                writeln!(
                    out,
                    "hint: review the change: git diff {} {} -- {}",
                    change.short_base(),
                    change
                        .commits
                        .last()
                        .map_or("HEAD", |c| &c[..c.len().min(7)]),
                    change.path
                )?;
            }
            writeln!(
                out,
                "hint: if a person made it on purpose, check again with --allow-verify-change"
            )?;
        }
        Ok(())
    }
}

pub(super) fn list(commits: &[&CommitReport], out: &mut dyn Write) -> io::Result<()> {
    for commit in commits {
        writeln!(
            out,
            "  {} {} ({})",
            commit.short(),
            commit.subject,
            commit.why_not()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::commits::tests::report;
    #[test]
    fn check_lists_each_unproven_commit_by_short_hash_and_subject_with_hints() {
        let check = CheckReport {
            version: 1,
            outcome: Outcome::NotProven,
            proven: false,
            strict: false,
            require_signed: false,
            allow_verify_change: false,
            allow_weakened: false,
            commits: vec![report("invalid", false), report("unproven", false)],
            verify_changed: Vec::new(),
            weakened: Vec::new(),
        };
        let mut out = Vec::new();
        check.human(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("not proven: 2 of 2 commits\n"), "{out}");
        assert!(out.contains(
            "  0123456 a subject (not a valid record: malformed record: `time` is missing)\n"
        ));
        assert!(out.contains("  0123456 a subject (no proof for its tree)\n"));
        assert!(out.contains("hint: prove a commit with 'git prove-it run <commit>'"));
    }

    /// A proof through an edited verify.sh that counts is still said, and a
    /// verify.sh change since the base is said in every mode, refused only by `--strict`.
    #[test]
    fn check_says_edited_proofs_and_verify_sh_changes_even_when_proven() {
        let change = VerifyChangeReport {
            base: "abcdef0123".into(),
            base_subject: "base".into(),
            commits: vec!["0123456789".into()],
            what: "verify.sh".into(),
            path: "verify.sh".into(),
        };
        let check = |strict, allow| CheckReport {
            version: 1,
            outcome: Outcome::Proven,
            proven: true,
            strict,
            require_signed: false,
            allow_verify_change: allow,
            allow_weakened: false,
            commits: vec![report("proven-edited", true)],
            verify_changed: vec![change.clone()],
            weakened: Vec::new(),
        };
        let text = |report: CheckReport| {
            let mut out = Vec::new();
            report.human(&mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let plain = text(check(false, false));
        assert!(
            plain.starts_with(
                "proven: 0123456 a subject
"
            ),
            "{plain}"
        );
        assert!(
            plain.contains("  0123456 a subject (proven only through an edited verify.sh"),
            "{plain}"
        );
        assert!(
            plain.contains(
                "verify.sh changed since abcdef0 base: in 0123456
"
            ),
            "{plain}"
        );
        assert!(!plain.contains("--allow-verify-change"), "{plain}");
        let strict = text(check(true, false));
        assert!(
            strict.starts_with(
                "not proven: verify.sh changed since the base of the range (--strict)
"
            ),
            "{strict}"
        );
        assert!(strict.contains("hint: review the change: git diff abcdef0 0123456 -- verify.sh"));
        assert!(strict.contains("--allow-verify-change"));
        let allowed = text(check(true, true));
        assert!(allowed.starts_with("proven: "), "{allowed}");
        assert!(
            allowed.contains("verify.sh changed since abcdef0"),
            "{allowed}"
        );
    }
}
