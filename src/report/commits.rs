//! How a commit stands, as `log`, `check`, `status` and the range commands report it: proven,
//! failed on record, not testable, unproven, with its checks and its verify.sh changes; what
//! those commands share (`check.rs` and `log.rs` print their own).

use std::fmt::Display;
use std::io::{self, Write};

use serde::Serialize;
use time::OffsetDateTime;

use super::{ContestSummary, ProofSummary};
use crate::proof::{
    CHECKS_FILE, CannotTest, Changed, CheckStatus, CommitStatus, Failure, SignatureStatus,
    Standing, VerifyChange,
};

// Why a commit of history was not proven, as `bisect` and `run <range>` say it (each the reason
// or message of its report, a string in the JSON): one function per case, from names and codes.

/// What the check `check` said of a commit: `check api: exit 125`.
pub(crate) fn of_check(check: &str, reason: impl Display) -> String {
    format!("check {check}: {reason}")
}

/// The check `check` whose script `run` is missing from the commit's tree, for `why`.
pub(crate) fn script_missing(check: &str, run: &str, why: crate::armed::NotRunnable) -> String {
    of_check(
        check,
        format_args!("its script {run} {}", super::armed::script(why)),
    )
}

/// A commit whose tree holds nothing to run, as `bisect` skips it.
pub(crate) fn nothing_to_run() -> String {
    "no verify.sh nor checks in its tree".to_string()
}

/// A commit whose checks file is in error, as `bisect` skips it.
pub(crate) fn checks_file_in_error(error: impl Display) -> String {
    format!("its {CHECKS_FILE} is in error: {error}")
}

/// A commit whose checks file is in error, as `run <range>` says it cannot be proven.
pub(crate) fn checks_file_error(error: impl Display) -> String {
    format!("{CHECKS_FILE}: {error}")
}

/// A commit whose verify.sh is not armed, for `reason` (what follows "verify.sh ") when its
/// run said one.
pub(crate) fn verify_not_armed(reason: Option<&str>) -> String {
    match reason {
        Some(reason) => format!("verify.sh {reason}"),
        None => "verify.sh is not armed".to_string(),
    }
}

/// A run of a commit that exited 1 without naming a failing check: an error, never a guess.
pub(crate) fn no_failing_check_named() -> String {
    "its run exited 1, but its report names no check that failed".to_string()
}

/// A run of a commit that exited with `code`, which no result of a run has.
pub(crate) fn run_exited(code: u8) -> String {
    format!("git prove-it run exited with {code}")
}

/// How a check ended that passed but changed its inputs while it ran.
pub(crate) fn inputs_changed() -> String {
    "changed its inputs while it ran".to_string()
}

/// The paths such a check changed, as lines of its output.
pub(crate) fn changed_lines(paths: &[String]) -> Vec<String> {
    paths
        .iter()
        .map(|path| format!("changed: {path}"))
        .collect()
}

/// How a commit ended that passed but whose proof a failing run of the same script contests.
pub(crate) fn contested_pass() -> String {
    "passed, but a failing run of the same script on this state contests the proof".to_string()
}

/// Why a commit cannot be tested without a setup: the checkout holds the dependency folders
/// `lacking`, which its worktree has not.
pub(crate) fn no_setup(lacking: &[String]) -> String {
    format!(
        "no setup: the checkout holds {}, which this commit's worktree lacks",
        lacking.join(", ")
    )
}

/// How the setup script `run` failed: it changed the commit's files, whose state tree became
/// `tree`.
pub(crate) fn setup_changed_files(run: &str, tree: impl Display) -> String {
    format!(
        "setup {run} changed the commit's files (its state tree became {tree}); a setup may write only ignored files, such as node_modules"
    )
}

/// How the setup script `run` failed: it ended as `exit` says (`exit code 1`).
pub(crate) fn setup_failed(run: &str, exit: impl Display) -> String {
    format!("setup {run} failed: {exit}")
}

/// A failure on record (`refs/notes/prove-it-failures`) for a commit, a check or the working
/// state that is not proven, as `log`, `check` and `status` report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FailureSummary {
    /// How the last failing run ended: "exit code 1", "timed out after 300 s".
    pub exit: String,
    /// Its exit code; null when it was killed (at the timeout, by a signal).
    pub exit_code: Option<i32>,
    /// When it was recorded, RFC 3339.
    pub time: String,
    /// How many runs failed in a row: more than 1 under `prove-it.retries`.
    pub attempts: u32,
    /// The last lines the last failing run printed.
    pub output: Vec<String>,
    /// How long before now it was recorded, as a person reads it: `3 min ago`.
    #[serde(skip)]
    pub ago: String,
}

/// A cannot-test record (`refs/notes/prove-it-failures`) for a commit or a check that is not
/// proven: its last run could not test it (exit 125). Never a failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CannotTestSummary {
    /// Why: `exit 125`, `setup failed`, ...
    pub reason: String,
    /// When it was recorded, RFC 3339.
    pub time: String,
    #[serde(skip)]
    pub ago: String,
}

impl CannotTestSummary {
    pub(crate) fn new(record: &CannotTest, now: OffsetDateTime) -> Self {
        CannotTestSummary {
            reason: record.reason.clone(),
            time: record
                .time
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
            ago: ago(record.time, now),
        }
    }

    /// `exit 125, 3 min ago`: what goes in the parentheses after `cannot test`.
    pub(crate) fn brief(&self) -> String {
        format!("{}, {}", printable(&self.reason), self.ago)
    }
}

impl FailureSummary {
    /// The summary of `failure`, its age told from `now` (the context's clock).
    pub(crate) fn new(failure: &Failure, now: OffsetDateTime) -> Self {
        FailureSummary {
            exit: failure.exit.clone(),
            exit_code: failure.exit_code,
            time: failure
                .time
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
            attempts: failure.attempts,
            output: failure.output.clone(),
            ago: ago(failure.time, now),
        }
    }

    /// `exit 1, 3 min ago`, `timed out after 300 s, 2 h ago`, or with retries `exit 1, 3 runs,
    /// 3 min ago`: what goes in the parentheses after `failed`.
    pub(crate) fn brief(&self) -> String {
        let exit = match self.exit_code {
            Some(code) => format!("exit {code}"),
            // A record is a note anyone can write: its words must not rewrite the screen.
            None => printable(&self.exit),
        };
        let runs = if self.attempts > 1 {
            format!(", {} runs", self.attempts)
        } else {
            String::new()
        };
        format!("{exit}{runs}, {}", self.ago)
    }
}

/// How long before `now` `then` was, in the largest whole unit of s, min, h and d: `3 min
/// ago`. A time ahead of the clock (another machine's) reads as `0 s ago`.
pub(crate) fn ago(then: OffsetDateTime, now: OffsetDateTime) -> String {
    ago_secs((now - then).whole_seconds())
}

/// [`ago`] of a number of seconds: `0 s ago` for a time ahead of the clock.
pub(crate) fn ago_secs(seconds: i64) -> String {
    let seconds = seconds.max(0);
    let (n, unit) = match seconds {
        s if s < 60 => (s, "s"),
        s if s < 3600 => (s / 60, "min"),
        s if s < 86_400 => (s / 3600, "h"),
        s => (s / 86_400, "d"),
    };
    format!("{n} {unit} ago")
}

/// `text` with its control characters (a carriage return, an escape sequence) shown as U+FFFD,
/// tabs kept: what a note anyone can write may put on a person's screen.
pub(super) fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

/// One commit as `check`, `log` and the pre-push hook report it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CommitReport {
    pub commit: String,
    pub tree: String,
    pub subject: String,
    /// proven, proven-edited, contested, unproven, invalid or not-armed; checks-error for a commit whose
    /// checks file is in error.
    pub status: &'static str,
    /// Whether it counts as proven under the options in force (`--strict`).
    pub proven: bool,
    pub proof: Option<ProofSummary>,
    /// Records attached to the tree that do not count, each with its problem.
    pub invalid: Vec<String>,
    /// The diff of verify.sh the proof carries, when it was edited during the session.
    pub verify_diff: Option<String>,
    /// What the proof's signature says (`status`: good, bad, unknown-signer, unsigned,
    /// not-verified, tree-mismatch), or null when no record is attached.
    pub signature: Option<SignatureStatus>,
    /// Each check, for a commit whose tree has a checks file (absent without one): the commit
    /// is proven only when every check is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<CommitCheckReport>>,
    /// Why the commit's checks file cannot be used (status `checks-error`), naming the line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks_error: Option<String>,
    /// Without a checks file: the newest failure on record of the commit's verify.sh for its
    /// tree, when the commit is not proven (absent when none is; with a checks file, each check
    /// has its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureSummary>,
    /// Without a checks file: the newest cannot-test record of the commit's verify.sh for its
    /// tree, when the commit is not proven and no failure on record is newer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cannot_test: Option<CannotTestSummary>,
    /// The proof a failing run of the same script contests (status `contested`; with a checks
    /// file, the first contested check's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contested: Option<ContestSummary>,
    /// For a commit with neither verify.sh nor a checks file: the proofs on its tree of
    /// scripts from outside the history (`run --exec`), each under the script's name
    /// (`exec:<file name>`). They never make the commit proven.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exec: Vec<ExecProof>,
    /// Whether only a proof with a good signature counts.
    #[serde(skip)]
    pub(super) require_signed: bool,
    /// Proven, but by no record of a run isolated from other checkouts, which
    /// `check --require-isolated` refuses (without a checks file; with one, each check says).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub not_isolated: bool,
}

/// A proof of a commit's tree by a script from outside the history (`run --exec`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ExecProof {
    /// `exec:<the script's file name>`.
    pub name: String,
    /// The blob id of the script's bytes.
    pub script: String,
    pub proof: ProofSummary,
}

/// One check of a commit with a checks file, as `check`, `log` and the pre-push hook report it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CommitCheckReport {
    /// `verify.sh` for the root verify.sh, else the name `prove-it.toml` gives it.
    pub name: String,
    /// The script's path in the commit's tree.
    pub run: String,
    /// The key of its proofs: the commit's tree pruned to the check's inputs.
    pub input_tree: String,
    /// proven, proven-edited, unproven, invalid or missing-script.
    pub standing: &'static str,
    /// Whether it counts as proven under the options in force.
    pub proven: bool,
    pub proof: Option<ProofSummary>,
    /// Records of this check on its input tree that do not count, each with its problem.
    pub invalid: Vec<String>,
    /// The diff of the check's script the proof carries, when it was edited during the session.
    pub verify_diff: Option<String>,
    pub signature: Option<SignatureStatus>,
    /// Why the script cannot run (standing `missing-script`): "does not exist", ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script_problem: Option<&'static str>,
    /// Proven, but by no record of a run isolated from other checkouts
    /// (`check --require-isolated`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub not_isolated: bool,
    /// The newest failure on record of this check through this script for its input tree,
    /// when the check is not proven (absent when none is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureSummary>,
    /// The newest cannot-test record of this check for its input tree, when the check is not
    /// proven and no failure on record is newer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cannot_test: Option<CannotTestSummary>,
    /// The proof a failing run of the same script contests, when that keeps the check from
    /// being proven.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contested: Option<ContestSummary>,
}

impl CommitCheckReport {
    fn new(check: &CheckStatus, strict: bool, require_signed: bool) -> Self {
        let record = check.standing.record();
        CommitCheckReport {
            name: check.name.clone(),
            run: check.run.clone(),
            input_tree: check.input_tree.to_string(),
            standing: check.standing.label(),
            proven: check
                .standing
                .counts(check.signature.as_ref(), strict, require_signed),
            proof: record.map(ProofSummary::from),
            invalid: check
                .invalid
                .iter()
                .map(|invalid| invalid.problem.to_string())
                .collect(),
            verify_diff: record.and_then(|r| r.verify_diff.clone()),
            signature: check.signature.clone(),
            script_problem: match check.standing {
                Standing::ScriptMissing(why) => Some(super::armed::script(why)),
                _ => None,
            },
            failure: None,
            cannot_test: None,
            contested: contest_of(&check.standing),
            not_isolated: false,
        }
    }

    /// Whether a cannot-test record takes the place of `unproven`.
    fn untestable(&self) -> Option<&CannotTestSummary> {
        self.cannot_test
            .as_ref()
            .filter(|_| !self.proven && self.standing == "unproven")
    }

    /// Whether a failure on record takes the place of `unproven`: `failed` (a check with
    /// invalid records, or without its script, keeps saying so).
    pub(super) fn failed(&self) -> Option<&FailureSummary> {
        self.failure
            .as_ref()
            .filter(|_| !self.proven && self.standing == "unproven")
    }

    /// How many runs failed before the pass of the proof that counts (`prove-it.retries`).
    pub(super) fn flaky(&self) -> u32 {
        self.proof
            .as_ref()
            .filter(|_| self.proven)
            .map_or(0, |p| p.flaky)
    }

    /// Why it does not count, as the word a list of check names follows: `missing`, ...
    fn why_not(&self, require_signed: bool) -> String {
        if self.not_isolated {
            return "not isolated (--require-isolated)".to_string();
        }
        match self.standing {
            "proven" | "proven-edited"
                if require_signed
                    && !self
                        .signature
                        .as_ref()
                        .is_some_and(SignatureStatus::is_good) =>
            {
                format!(
                    "{} (--require-signed)",
                    self.signature
                        .as_ref()
                        .map_or("unsigned".to_string(), describe)
                )
            }
            "proven-edited" => "proven only through an edited script (--strict)".to_string(),
            "invalid" => "invalid".to_string(),
            "contested" => "contested".to_string(),
            "missing-script" => "missing script".to_string(),
            _ if self.untestable().is_some() => "cannot test".to_string(),
            _ if self.failed().is_some() => "failed".to_string(),
            _ => "missing".to_string(),
        }
    }
}

/// The contest that keeps a commit or check from being proven, in its words.
fn contest_of(standing: &Standing) -> Option<ContestSummary> {
    match standing {
        Standing::Contested(contested) => Some(ContestSummary::from(&**contested)),
        _ => None,
    }
}

impl CommitReport {
    /// `require_signed` counts a proof only with a good signature (`check --require-signed`).
    pub(crate) fn new(checked: &CommitStatus, strict: bool, require_signed: bool) -> Self {
        let record = checked.standing.record();
        let checks = checked.checks.as_ref().map(|checks| {
            checks
                .iter()
                .map(|check| CommitCheckReport::new(check, strict, require_signed))
                .collect()
        });
        CommitReport {
            commit: checked.commit.id.to_string(),
            tree: checked.commit.tree.to_string(),
            subject: checked.commit.subject.clone(),
            status: checked.standing.label(),
            proven: checked
                .standing
                .counts(checked.signature.as_ref(), strict, require_signed),
            proof: record.map(ProofSummary::from),
            invalid: match &checked.checks {
                // Each problem says whose: two checks' records may share an input tree.
                Some(checks) => checks
                    .iter()
                    .flat_map(|check| {
                        check
                            .invalid
                            .iter()
                            .map(move |i| format!("check {}: {}", check.name, i.problem))
                    })
                    .collect(),
                None => checked
                    .invalid
                    .iter()
                    .map(|invalid| invalid.problem.to_string())
                    .collect(),
            },
            verify_diff: record.and_then(|r| r.verify_diff.clone()),
            signature: checked.signature.clone(),
            checks,
            checks_error: match &checked.standing {
                Standing::ChecksError(error) => Some(error.clone()),
                _ => None,
            },
            failure: None,
            cannot_test: None,
            contested: contest_of(&checked.standing),
            exec: checked
                .exec
                .iter()
                .map(|record| ExecProof {
                    name: record.check.clone().unwrap_or_default(),
                    script: record.verify.blob.to_string(),
                    proof: ProofSummary::from(record),
                })
                .collect(),
            require_signed,
            not_isolated: false,
        }
    }

    /// The same report under `check --require-isolated`: a commit, or a check, counts only
    /// when a record that proves it ran where it could see no other checkout than its own
    /// (`isolation: namespace`, or `checkout` for the working state), never `none` nor a
    /// record made before the line existed.
    pub(crate) fn requiring_isolation(mut self, checked: &CommitStatus) -> Self {
        let isolated = |valid: &[crate::proof::Record]| {
            valid.iter().any(|record| {
                matches!(
                    record
                        .isolation
                        .map(git_prove_it_core::isolation::Isolation::as_str),
                    Some("namespace" | "checkout")
                )
            })
        };
        match (&mut self.checks, &checked.checks) {
            (Some(reports), Some(checks)) => {
                for (report, check) in reports.iter_mut().zip(checks) {
                    if report.proven && !isolated(&check.valid) {
                        report.proven = false;
                        report.not_isolated = true;
                    }
                }
                self.proven = self.proven && reports.iter().all(|report| report.proven);
            }
            _ => {
                if self.proven && !isolated(&checked.valid) {
                    self.proven = false;
                    self.not_isolated = true;
                }
            }
        }
        self
    }

    /// The same report with the failures on record that keep `checked` (the status it was made
    /// from) from being proven, their age told from `now`: what `log` and `check` show.
    pub(crate) fn with_failures(mut self, checked: &CommitStatus, now: OffsetDateTime) -> Self {
        let summary = |failure: &Failure| FailureSummary::new(failure, now);
        let untestable = |record: &CannotTest| CannotTestSummary::new(record, now);
        self.failure = checked.failure.as_deref().map(summary);
        self.cannot_test = checked.cannot_test.as_deref().map(untestable);
        if let (Some(reports), Some(checks)) = (&mut self.checks, &checked.checks) {
            for (report, check) in reports.iter_mut().zip(checks) {
                report.failure = check.failure.as_deref().map(summary);
                report.cannot_test = check.cannot_test.as_deref().map(untestable);
            }
        }
        self
    }

    /// Whether a failure on record keeps it from being proven: its own, or a check's.
    pub(crate) fn has_failure(&self) -> bool {
        !self.proven
            && (self.failed().is_some()
                || self
                    .checks
                    .iter()
                    .flatten()
                    .any(|check| check.failed().is_some()))
    }

    /// Without a checks file, its failure on record when that takes the place of `unproven`.
    pub(super) fn failed(&self) -> Option<&FailureSummary> {
        self.failure
            .as_ref()
            .filter(|_| !self.proven && self.status == "unproven")
    }

    /// How many runs failed before the passes of the proofs that count (`prove-it.retries`):
    /// with a checks file, over every check.
    pub(crate) fn flaky(&self) -> u32 {
        if !self.proven {
            return 0;
        }
        match &self.checks {
            Some(checks) => checks.iter().map(CommitCheckReport::flaky).sum(),
            None => self.proof.as_ref().map_or(0, |p| p.flaky),
        }
    }

    /// The words of `log`'s standing column: the status, or `failed (exit 1, 3 min ago)` in
    /// place of `unproven` when a failure is on record (with checks, `failed`, the line naming
    /// which), and `proven (flaky: 1)` for a proof that passed only after failed runs.
    pub(super) fn standing_words(&self) -> String {
        if let Some(record) = self
            .cannot_test
            .as_ref()
            .filter(|_| !self.proven && self.status == "unproven")
        {
            return format!("cannot test ({})", record.brief());
        }
        if self.status == "unproven"
            && !self.has_failure()
            && self
                .checks
                .iter()
                .flatten()
                .any(|check| check.untestable().is_some())
        {
            return "cannot test".to_string();
        }
        if let Some(failure) = self.failed() {
            return format!("failed ({})", failure.brief());
        }
        if self.status == "unproven" && self.has_failure() {
            return "failed".to_string();
        }
        match self.flaky() {
            0 => self.status.to_string(),
            n => format!("{} (flaky: {n})", self.status),
        }
    }

    /// For a commit with checks: `proven 1/2 checks, missing: docs`, each check that does not
    /// count named after why (`missing`, `invalid`, `missing script`, ...; `failed: docs (exit
    /// 1, 3 min ago)` for one whose failure is on record).
    pub(super) fn checks_summary(&self) -> Option<String> {
        let checks = self.checks.as_ref()?;
        let proven = checks.iter().filter(|c| c.proven).count();
        let mut summary = format!("proven {proven}/{} checks", checks.len());
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for check in checks.iter().filter(|c| !c.proven) {
            let why = check.why_not(self.require_signed);
            let name = match (check.untestable(), check.failed()) {
                (Some(record), _) => format!("{} ({})", check.name, record.brief()),
                (None, Some(failure)) => format!("{} ({})", check.name, failure.brief()),
                (None, None) => check.name.clone(),
            };
            match groups.iter_mut().find(|(w, _)| *w == why) {
                Some((_, names)) => names.push(name),
                None => groups.push((why, vec![name])),
            }
        }
        for (i, (why, names)) in groups.iter().enumerate() {
            summary.push_str(if i == 0 { ", " } else { "; " });
            summary.push_str(&format!("{why}: {}", names.join(", ")));
        }
        Some(summary)
    }

    /// What a proof through an edited script went through: `an edited verify.sh`, or for a
    /// commit with checks, `an edited script (check api)`.
    pub(crate) fn edited_what(&self) -> String {
        match &self.checks {
            Some(checks) => {
                let names: Vec<&str> = checks
                    .iter()
                    .filter(|c| c.standing == "proven-edited")
                    .map(|c| c.name.as_str())
                    .collect();
                format!("an edited script (check {})", names.join(", "))
            }
            None if self
                .proof
                .as_ref()
                .is_some_and(|p| !p.verify_edited && !p.weakened.is_empty()) =>
            {
                "weakened protected tests or configs".to_string()
            }
            None => "an edited verify.sh".to_string(),
        }
    }

    /// Whether a good signature is required and the proof does not have one.
    pub(super) fn lacks_signature(&self) -> bool {
        self.require_signed
            && !self
                .signature
                .as_ref()
                .is_some_and(SignatureStatus::is_good)
    }

    pub(super) fn short(&self) -> &str {
        &self.commit[..self.commit.len().min(7)]
    }

    /// Why it does not count as proven, as a fragment for a list. For a commit with checks,
    /// the checks that do not count, or the checks file's error.
    pub(super) fn why_not(&self) -> String {
        if let Some(error) = &self.checks_error {
            return one_line(error);
        }
        match &self.checks {
            Some(checks) if checks.is_empty() => {
                return "not armed: its checks file declares no check and its tree has no verify.sh"
                    .to_string();
            }
            Some(_) => return self.checks_summary().unwrap_or_default(),
            None => {}
        }
        if self.not_isolated {
            return format!(
                "its proof's run was not isolated from other checkouts ({}) (--require-isolated)",
                self.proof
                    .as_ref()
                    .and_then(|proof| proof.isolation)
                    .map_or(
                        "no isolation line: an earlier version's record".to_string(),
                        |how| { format!("isolation: {how}") }
                    )
            );
        }
        match self.status {
            "proven" | "proven-edited" if self.lacks_signature() => format!(
                "{} (--require-signed)",
                self.signature
                    .as_ref()
                    .map_or("unsigned".to_string(), describe)
            ),
            "proven-edited" => "proven only through an edited verify.sh (--strict)".to_string(),
            "not-armed" => "not armed: its tree has no verify.sh".to_string(),
            "contested" => self
                .contested
                .as_ref()
                .map_or_else(|| "contested".to_string(), ContestSummary::words),
            "invalid" => format!(
                "not a valid record: {}",
                self.invalid.first().map_or("?", String::as_str)
            ),
            _ if self.cannot_test.is_some() && self.status == "unproven" => format!(
                "its last run could not test it: {}",
                self.cannot_test
                    .as_ref()
                    .map(CannotTestSummary::brief)
                    .unwrap_or_default()
            ),
            _ => match self.failed() {
                Some(failure) => format!("its last run failed: {}", failure.brief()),
                None => "no proof for its tree".to_string(),
            },
        }
    }
}

/// verify.sh changed since a base of the range checked or listed, in every
/// mode of `check` and `log`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VerifyChangeReport {
    /// The base: a commit the range excludes (`<base>..<head>`).
    pub base: String,
    pub base_subject: String,
    /// The checked commits that changed it: each the first (oldest) to hold a version other
    /// than the base's, newest first; the commits after one hold its change too.
    pub commits: Vec<String>,
    /// What changed, when it is not verify.sh: `prove-it.toml`, or `check <name>'s script`.
    #[serde(skip_serializing_if = "is_verify_sh")]
    pub what: String,
    /// The path that changed, to review with `git diff` (absent for verify.sh, as `what`).
    #[serde(skip_serializing_if = "is_verify_sh")]
    pub path: String,
}

fn is_verify_sh(text: &str) -> bool {
    text == crate::proof::VERIFY_CHECK
}

/// How a person names what changed: `verify.sh`, `prove-it.toml`, `check api's script`.
fn changed_what(changed: &Changed) -> String {
    match changed {
        Changed::Verify => crate::proof::VERIFY_CHECK.to_string(),
        Changed::ChecksFile => CHECKS_FILE.to_string(),
        Changed::Check { name, .. } => format!("check {name}'s script"),
    }
}

impl From<&VerifyChange> for VerifyChangeReport {
    fn from(change: &VerifyChange) -> Self {
        VerifyChangeReport {
            base: change.base.id.to_string(),
            base_subject: change.base.subject.clone(),
            commits: change.commits.iter().map(|c| c.id.to_string()).collect(),
            what: changed_what(&change.what),
            path: change.what.path().to_string(),
        }
    }
}

impl VerifyChangeReport {
    pub(super) fn short_base(&self) -> &str {
        &self.base[..self.base.len().min(7)]
    }

    /// `verify.sh changed since <base> <subject>: in <commits>` (or `prove-it.toml`, `check
    /// api's script`), one line.
    pub(super) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        let shorts: Vec<&str> = self.commits.iter().map(|c| &c[..c.len().min(7)]).collect();
        writeln!(
            out,
            "{} changed since {} {}: in {}",
            self.what,
            self.short_base(),
            self.base_subject,
            shorts.join(", ")
        )
    }
}

/// The line `run <rev>` prints before proving a commit (its full id and its subject), naming it
/// as `git log --oneline` does.
pub(crate) fn commit_heading(id: &str, subject: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "commit {} {subject}: checking it out in a temporary worktree",
        &id[..id.len().min(7)]
    )
}

/// A signature's status as `log` and `check` print it.
pub(crate) fn describe(status: &SignatureStatus) -> String {
    match status {
        SignatureStatus::Good { principal, .. } => format!("good signature by {principal}"),
        SignatureStatus::Bad => "BAD signature".to_string(),
        SignatureStatus::UnknownSigner { key: Some(key) } => format!("unknown signer: {key}"),
        SignatureStatus::UnknownSigner { key: None } => "unknown signer".to_string(),
        SignatureStatus::Unsigned => "unsigned".to_string(),
        SignatureStatus::NotVerified => "signed, not verified: no allowed signers".to_string(),
        SignatureStatus::TreeMismatch => "tree mismatch".to_string(),
    }
}

/// An error's message on one line, for a list: its lines joined, the toml crate's excerpt of
/// the file (lines with a `|` gutter) left out, as the message names the line anyway.
pub(super) fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| {
            !line.is_empty()
                && !line.starts_with('|')
                && !line
                    .split_once(" | ")
                    .is_some_and(|(n, _)| n.trim().chars().all(|c| c.is_ascii_digit()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
pub(in crate::report) mod tests {
    use super::*;
    use crate::outcome::Outcome;
    #[test]
    fn a_commit_with_checks_names_those_that_do_not_count_grouped_by_why() {
        let check = |name: &str, standing: &'static str, proven: bool| CommitCheckReport {
            name: name.into(),
            run: format!("{name}/verify.sh"),
            input_tree: "ab".repeat(20),
            standing,
            proven,
            proof: None,
            invalid: Vec::new(),
            verify_diff: None,
            signature: None,
            script_problem: None,
            failure: None,
            cannot_test: None,
            contested: None,
            not_isolated: false,
        };
        let mut commit = report("unproven", false);
        commit.checks = Some(vec![
            check("api", "proven", true),
            check("docs", "unproven", false),
            check("web", "missing-script", false),
            check("cli", "unproven", false),
            check("db", "invalid", false),
        ]);
        assert_eq!(
            commit.why_not(),
            "proven 1/5 checks, missing: docs, cli; missing script: web; invalid: db"
        );
        commit.checks = Some(Vec::new());
        assert!(commit.why_not().starts_with("not armed: "));
        commit.checks_error = Some("prove-it.toml is not a valid checks file: line 2".into());
        assert_eq!(
            commit.why_not(),
            "prove-it.toml is not a valid checks file: line 2"
        );
    }

    #[test]
    fn an_error_of_the_checks_file_fits_one_line_without_the_files_excerpt() {
        let toml = "prove-it.toml is not a valid checks file: TOML parse error at line 1, column 6\n  |\n1 | x = [\n  |      ^\nunclosed array, expected `]`";
        assert_eq!(
            one_line(toml),
            "prove-it.toml is not a valid checks file: TOML parse error at line 1, column 6 unclosed array, expected `]`"
        );
        assert_eq!(one_line("line 3: check api: bad"), "line 3: check api: bad");
    }

    pub(in crate::report) fn report(status: &'static str, proven: bool) -> CommitReport {
        CommitReport {
            commit: "0123456789abcdef0123456789abcdef01234567".into(),
            tree: "fedcba9876543210fedcba9876543210fedcba98".into(),
            subject: "a subject".into(),
            status,
            proven,
            proof: None,
            invalid: vec!["malformed record: `time` is missing".into()],
            verify_diff: Some("-old\n+new\n".into()),
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

    pub(in crate::report) fn failure(
        exit_code: Option<i32>,
        exit: &str,
        attempts: u32,
    ) -> FailureSummary {
        FailureSummary {
            exit: exit.into(),
            exit_code,
            time: "2026-11-29T18:52:16Z".into(),
            attempts,
            output: vec!["test x ... FAILED".into(), "\u{1b}[2Jforged".into()],
            ago: "3 min ago".into(),
        }
    }

    #[test]
    fn a_failures_age_is_told_in_the_largest_whole_unit() {
        let now = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let before = |secs: i64| ago(now - time::Duration::seconds(secs), now);
        assert_eq!(before(0), "0 s ago");
        assert_eq!(before(59), "59 s ago");
        assert_eq!(before(180), "3 min ago");
        assert_eq!(before(3599), "59 min ago");
        assert_eq!(before(2 * 3600 + 59), "2 h ago");
        assert_eq!(before(86_400 * 3), "3 d ago");
        // Another machine's clock ahead of ours is no time at all, not a negative one.
        assert_eq!(before(-30), "0 s ago");
    }

    #[test]
    fn a_failure_reads_exit_n_or_how_it_was_killed_and_its_runs() {
        assert_eq!(
            failure(Some(1), "exit code 1", 1).brief(),
            "exit 1, 3 min ago"
        );
        assert_eq!(
            failure(None, "timed out after 300 s", 1).brief(),
            "timed out after 300 s, 3 min ago"
        );
        assert_eq!(
            failure(Some(2), "exit code 2", 3).brief(),
            "exit 2, 3 runs, 3 min ago"
        );
        // A hand-written record cannot put a terminal control on the screen.
        assert_eq!(
            failure(None, "killed\u{1b}[2J", 1).brief(),
            "killed\u{fffd}[2J, 3 min ago"
        );
    }

    #[test]
    fn a_failure_on_record_takes_the_place_of_unproven_and_only_of_it() {
        let mut commit = report("unproven", false);
        commit.failure = Some(failure(Some(1), "exit code 1", 1));
        assert_eq!(commit.standing_words(), "failed (exit 1, 3 min ago)");
        assert_eq!(commit.why_not(), "its last run failed: exit 1, 3 min ago");
        assert!(commit.has_failure());
        let mut invalid = report("invalid", false);
        invalid.failure = Some(failure(Some(1), "exit code 1", 1));
        assert_eq!(invalid.standing_words(), "invalid");
        assert!(!invalid.has_failure());
        let plain = report("unproven", false);
        assert_eq!(plain.standing_words(), "unproven");
        assert_eq!(plain.why_not(), "no proof for its tree");
    }

    #[test]
    fn a_flaky_proof_says_so_in_the_standing_column() {
        let mut commit = report("proven", true);
        commit.proof = Some(ProofSummary {
            outcome: Outcome::Proven,
            signed_off_by: "A <a@example.com>".into(),
            identity_missing: false,
            time: "2026-11-29T18:52:16Z".into(),
            host: "cli".into(),
            session: None,
            duration_ms: 10,
            flaky: 1,
            verify_edited: false,
            uncovered: Vec::new(),
            uncovered_count: 0,
            signed: false,
            isolation: Some("namespace"),
            renames_unwatched: false,
            weakened: Vec::new(),
            changed: Vec::new(),
            protect_diff: None,
            tests: None,
            tests_weakened: Vec::new(),
        });
        assert_eq!(commit.standing_words(), "proven (flaky: 1)");
        assert_eq!(commit.flaky(), 1);
        commit.proof.as_mut().unwrap().flaky = 0;
        assert_eq!(commit.standing_words(), "proven");
    }
}
