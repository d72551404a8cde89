//! Human, JSON and CI (JUnit, an SVG badge) rendering of what the commands found; nothing else in the crate
//! prints.
//!
//! Every function here takes the writer it prints to, so tests and callers decide where output
//! goes. Human text and JSON are rendered from the same values. Renderers take plain values
//! (their own structs, filled by the `cli/` command that calls them) and never name the
//! repository's types (`git/`) or the commands (`cli/`).

pub(crate) mod armed;
mod badge;
mod bisect;
mod check;
mod ci;
mod claim;
pub(crate) mod commits;
mod contest;
pub(crate) mod could_not;
mod doctor;
mod echo;
mod failure;
pub(crate) mod gate;
pub(crate) mod hint;
pub(crate) mod host;
mod init;
mod install;
mod junit;
mod ledger;
mod log;
mod pre_push;
mod progress;
mod proof;
mod range;
pub(crate) mod refusal;
mod run;
mod stats;
pub(crate) mod status;
mod sync;
mod watch;

pub(crate) use badge::badge;
pub(crate) use bisect::{
    BisectCandidate, BisectReport, BisectStep, FailedCheck, FirstBad, How, StepResult,
};
pub(crate) use check::{CheckReport, WeakenedReport};
pub(crate) use ci::{
    annotations as github_annotations, outputs as github_outputs, summary as github_summary,
};
pub(crate) use claim::{
    ClaimProgress, ClaimReport, ClaimText, NotRecorded, Recorded, RequiresSubagentsReport,
    RoundLine,
};
pub(crate) use commits::{CommitReport, FailureSummary, VerifyChangeReport, ago, commit_heading};
pub(crate) use contest::{ResolveReport, Resolved};
pub(crate) use doctor::DoctorReport;
pub(crate) use echo::to_stderr as echo_to_stderr;
pub(crate) use failure::{FailureKind, FailureReport, error_chain, readable_causes};
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use gate::could_not_check;
pub(crate) use gate::reply;
pub(crate) use hint::Hint;
pub(crate) use init::{DemoResult, InitReport, Question, Step};
pub(crate) use install::{InstallManReport, InstallReport};
pub(crate) use junit::junit;
pub(crate) use ledger::{LedgerReport, LedgerSummaryReport};
pub(crate) use log::{LogReport, LogStyle, use_color};
pub(crate) use pre_push::{
    PROOFS_BASELINE, PushRefusal, proofs_not_sent, proofs_sent, pushed_through_edited_verify,
    pushed_weakened,
};
pub(crate) use progress::Progress;
pub(crate) use proof::{ContestSummary, ProofSummary};
pub(crate) use range::{RangeCommit, RangeReport, RangeResult};
pub(crate) use refusal::Refusal;
pub(crate) use run::{CheckRun, NOT_IN_COMMIT, RunReport, RunResult, Unarmed};
pub(crate) use stats::StatsReport;
pub(crate) use status::{AheadSummary, StatusCheck, StatusReport};
pub(crate) use sync::{SyncReport, SyncedNotes};
pub(crate) use watch::{Cancelled, Known, WatchOutput};

/// The version of every JSON document this build prints.
pub(crate) const JSON_VERSION: u32 = 1;

/// Print `value` as one line of JSON.
pub(crate) fn json(
    value: &impl serde::Serialize,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out)
}

/// `a`, `a and b`, `a, b and c`.
pub(super) fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A short object id for human output, as `git log --oneline` shows it.
pub(crate) fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// Seconds with one decimal for durations a person reads.
pub(crate) fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}
