//! How one proof reads to a person and in JSON: who signed it off, when, how, with which tests
//! (`ProofSummary`), shared by `status`, `log` and `check`.

use serde::Serialize;

use crate::outcome::Outcome;
use crate::proof::Record;

/// What a reader needs to know about one proof.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ProofSummary {
    pub outcome: Outcome,
    pub signed_off_by: String,
    pub identity_missing: bool,
    pub time: String,
    pub host: String,
    pub session: Option<String>,
    pub duration_ms: u64,
    /// How many runs failed before the one that passed (`prove-it.retries`).
    #[serde(skip_serializing_if = "is_zero")]
    pub flaky: u32,
    pub verify_edited: bool,
    /// Whether the record carries an SSH signature (checked or not).
    pub signed: bool,
    /// The paths of the state no check read when the proof was made: the first ones the
    /// record names, and how many there were.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncovered: Vec<String>,
    #[serde(skip_serializing_if = "is_zero_count")]
    pub uncovered_count: usize,
    /// How the run was isolated (`namespace`, `none`, `checkout`); null for a record made
    /// before the `isolation:` line existed.
    pub isolation: Option<&'static str>,
    /// The run's renames could not be watched (`renames: unwatched`): a directory moved away
    /// and back while it ran would not have been seen.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub renames_unwatched: bool,
    /// The weakenings of protected paths the proof was made through, in words (SPEC.md
    /// section 2.2).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub weakened: Vec<String>,
    /// The protected files changed, not weakened, when the proof was made.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// Their diff, for `log -p`.
    #[serde(skip)]
    pub protect_diff: Option<String>,
    /// The tests the run ran, when it gave counts (`tests:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestsSummary>,
    /// How its tests fell short of the baseline's (`tests-weakened:`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tests_weakened: Vec<String>,
}

/// The counts of a run's tests, and where they came from (`junit` or `summary`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TestsSummary {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub source: &'static str,
}

fn is_zero_count(count: &usize) -> bool {
    *count == 0
}

impl ProofSummary {
    /// `, isolation namespace` (or `none`) for the proof of a commit's run, which `log` and
    /// `check` show; nothing for the working state's, or a record made before the line existed.
    /// Either way, `, renames unwatched` when the run's renames could not be watched.
    pub(crate) fn isolation_words(&self) -> String {
        let isolation = match self.isolation {
            Some(how @ ("namespace" | "none")) => format!(", isolation {how}"),
            _ => String::new(),
        };
        if self.renames_unwatched {
            format!("{isolation}, renames unwatched")
        } else {
            isolation
        }
    }
}

impl ProofSummary {
    /// `, tests 5 passed 0 failed 1 skipped` when the run counted its tests, then `, tests
    /// weakened` when they fell short of the baseline's: what `log` shows beside a proof.
    pub(crate) fn tests_words(&self) -> String {
        let mut words = match &self.tests {
            Some(tests) => format!(
                ", tests {} passed {} failed {} skipped",
                tests.passed, tests.failed, tests.skipped
            ),
            None => String::new(),
        };
        if !self.tests_weakened.is_empty() {
            words.push_str(", tests weakened");
        }
        words
    }
}

impl From<&Record> for ProofSummary {
    fn from(record: &Record) -> Self {
        ProofSummary {
            outcome: record.outcome,
            signed_off_by: record.signed_off_by.clone(),
            identity_missing: record.identity_missing,
            time: record
                .time
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
            host: record.host.clone(),
            session: record.session.clone(),
            duration_ms: record.duration_ms,
            flaky: record.flaky,
            isolation: record
                .isolation
                .map(git_prove_it_core::isolation::Isolation::as_str),
            renames_unwatched: record.renames_unwatched,
            verify_edited: record.verify_diff.is_some(),
            signed: record.signature.is_some(),
            uncovered: record.uncovered.paths.clone(),
            uncovered_count: record.uncovered.count,
            weakened: record
                .protection
                .weakened
                .iter()
                .map(ToString::to_string)
                .collect(),
            changed: record.protection.changed.clone(),
            protect_diff: record.protection.diff.clone(),
            tests: record.tests.counts.map(|(counts, source)| TestsSummary {
                passed: counts.passed,
                failed: counts.failed,
                skipped: counts.skipped,
                source: source.as_str(),
            }),
            tests_weakened: record.tests_weakened.clone(),
        }
    }
}

impl ProofSummary {
    /// `by NAME <EMAIL> at TIME (host cli, 1.2 s)`
    pub(crate) fn by_line(&self) -> String {
        let missing = if self.identity_missing {
            ", no git identity"
        } else {
            ""
        };
        let signed = if self.signed { ", signed" } else { "" };
        let mut flaky = if self.flaky > 0 {
            format!(", flaky: {}", self.flaky)
        } else {
            String::new()
        };
        if self.uncovered_count > 0 {
            let more = self.uncovered_count.saturating_sub(self.uncovered.len());
            flaky.push_str(&format!(
                ", uncovered: {}{}",
                self.uncovered.join(" "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
        }
        if !self.weakened.is_empty() {
            flaky.push_str(&format!(", weakened: {}", self.weakened.join("; ")));
        }
        if !self.changed.is_empty() {
            flaky.push_str(&format!(
                ", protected files changed: {}",
                self.changed.join(" ")
            ));
        }
        if let Some(tests) = &self.tests {
            flaky.push_str(&format!(
                ", tests: {} passed, {} failed, {} skipped",
                tests.passed, tests.failed, tests.skipped
            ));
        }
        if !self.tests_weakened.is_empty() {
            flaky.push_str(&format!(
                ", tests weakened: {}",
                self.tests_weakened.join("; ")
            ));
        }
        format!(
            "by {} at {} (host {}, {}{missing}{signed}{flaky})",
            self.signed_off_by,
            self.time,
            self.host,
            super::seconds(self.duration_ms)
        )
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A proof a failing run of the same script contests, as `status`, `check`, `log`, the
/// pre-push hook and the gate say it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ContestSummary {
    /// When the proof was made (RFC 3339), and by which host.
    pub proven_at: String,
    pub proven_by: String,
    /// When the failing run was, by which host, and how it ended.
    pub failed_at: String,
    pub failed_by: String,
    pub exit: Option<String>,
}

impl From<&crate::proof::Contested> for ContestSummary {
    fn from(contested: &crate::proof::Contested) -> Self {
        let rfc3339 = |time: time::OffsetDateTime| {
            time.format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default()
        };
        ContestSummary {
            proven_at: rfc3339(contested.proof.time),
            proven_by: contested.proof.host.clone(),
            failed_at: rfc3339(contested.failure.time),
            failed_by: contested.failure.host.clone(),
            exit: contested.failure.exit.clone(),
        }
    }
}

impl ContestSummary {
    /// `contested: proven at TIME by HOST, failed at TIME by HOST (exit code 1)`
    pub(crate) fn words(&self) -> String {
        let exit = self
            .exit
            .as_ref()
            .map_or_else(String::new, |exit| format!(" ({exit})"));
        format!(
            "contested: proven at {} by {}, failed at {} by {}{exit}",
            self.proven_at, self.proven_by, self.failed_at, self.failed_by
        )
    }
}
