//! The ledger of refused turns, as the gate writes it: what was demanded, what verify.sh (or
//! the gate) showed, and what the agent claimed. Stored by `git::ledger`.

use time::format_description::well_known::Rfc3339;

use super::decide::{Failing, Untestable, Why};
use super::error::Error;
use super::event::Stop;
use super::host::HostRules;
use super::observe::worktree;
use crate::context::Context;
use crate::git::ledger;

/// One ledger line (SPEC section 8, "The ledger").
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct LedgerEntry {
    pub ts: String,
    pub repo: String,
    pub host: String,
    pub session: String,
    /// The agent's last message: what it claimed when it tried to end the turn.
    pub claim: Option<String>,
    pub evidence_demanded: String,
    pub exit_code: Option<i32>,
    /// The summary line(s) seen in verify.sh's output, or what happened instead.
    pub actual: Vec<String>,
    pub attempt: u32,
    /// How the refusal left the turn: `DISPROVEN` for a block the agent is sent back with,
    /// `NOT_PROVEN` for a turn that ended unverified (a yield, a skip, a stop that could not be
    /// checked). Entries written before it was recorded have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// The stop passed on a proof the background prover made, without a run of its own.
    /// Entries of other stops, and those written before it was recorded, have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ahead: Option<AnsweredAhead>,
}

/// How a stop was answered by a run made ahead of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct AnsweredAhead {
    /// The stop found the run in flight and waited for it; else it found the proof made.
    pub joined: bool,
    /// The stop's whole wait, from its start to its answer, in milliseconds.
    pub waited_ms: u64,
}

/// What a ledger line's `actual` records, as data. Its words are the report's
/// (`LedgerActual::lines`, in `report/ledger.rs`), made as the line is written: the ledger is a
/// file people read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LedgerActual<'a> {
    /// A refusal, with the summary lines picked from its run's output (empty: it printed none).
    Refused { why: &'a Why, summary: &'a [String] },
    /// A person skipped the gate (`None`), or these checks of `prove-it.toml`.
    Skipped(Option<&'a [String]>),
    /// The gate's own error, as its chain of causes.
    CouldNotCheck(&'a str),
    /// A stop that passed on a run made ahead of it.
    AnsweredAhead(AnsweredAhead),
}

/// What one ledger line records of a refusal, besides the turn it is about.
pub(crate) struct Refusal<'a> {
    pub exit_code: Option<i32>,
    pub actual: LedgerActual<'a>,
    /// The stop of the turn this refusal was given at: 1 for the first.
    pub attempt: u32,
    pub outcome: crate::outcome::Outcome,
}

/// What the ledger says was demanded of every turn.
const EVIDENCE_DEMANDED: &str = "verify.sh exit 0";

/// How many summary lines an entry keeps.
const SUMMARY_LINES: usize = 3;

/// The line(s) of verify.sh's output that say how it went ("3 failed, 41 passed"): lines with a
/// number and a test-runner word; else the last line; else none.
pub(crate) fn summary_lines(tail: &[String]) -> Vec<String> {
    let summaries: Vec<String> = tail
        .iter()
        .map(|line| line.trim())
        .filter(|line| is_summary_line(line))
        .map(str::to_string)
        .collect();
    if !summaries.is_empty() {
        let skip = summaries.len().saturating_sub(SUMMARY_LINES);
        return summaries.into_iter().skip(skip).collect();
    }
    tail.iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .map(str::to_string)
        .into_iter()
        .collect()
}

/// A test runner's summary line ("3 failed, 41 passed"): a number and a test-runner word.
fn is_summary_line(line: &str) -> bool {
    const WORDS: [&str; 11] = [
        "passed", "failed", "failures", "failure", "errors", "error", "skipped", "ok", "pass",
        "fail", "warnings",
    ];
    let lower = line.to_ascii_lowercase();
    line.chars().any(|c| c.is_ascii_digit())
        && lower
            .split(|c: char| !c.is_ascii_alphabetic())
            .any(|word| WORDS.contains(&word))
}

/// How many of a failure's key lines found before the last lines a block adds.
const KEY_LINES: usize = 12;

/// A line that says how a run failed wherever it stands in the output: a summary line (as the
/// ledger's `actual` picks), a panic, an assertion and its `left:`/`right:` (or `expected:`,
/// `actual:`, `received:`, `operator:`) values, a `FAILED`, `FAIL` or `Error` line, a
/// traceback's start, a TAP `not ok` or node's `✖`. A passing or skipped test's line is never
/// one, whatever words it holds (TAP's `ok 3 - skipped # SKIP`, node's `✔` and `﹣`, TAP's
/// `# Subtest:` headings).
fn is_key_line(line: &str) -> bool {
    let line = line.trim();
    let lower = line.to_ascii_lowercase();
    if is_passing_test_line(line) {
        return false;
    }
    is_summary_line(line)
        || line.contains("panicked at")
        || line.starts_with("left:")
        || line.starts_with("right:")
        || ["expected:", "actual:", "received:", "operator:"]
            .iter()
            .any(|key| lower.starts_with(key))
        || line.starts_with("not ok")
        || line.starts_with('✖')
        || lower.contains("assertion")
        || line.contains("FAILED")
        || line.starts_with("FAIL")
        || line.starts_with("Error")
        || line.starts_with("ERROR")
        || line.starts_with("error:")
        || line.starts_with("error[")
        || line.contains("Error: ")
        || line.starts_with("Traceback")
}

/// A TAP line of a test that passed or was skipped (`ok 3 - name # SKIP`), a TAP subtest's
/// heading, or node's spec reporter's pass (`✔`) or skip (`﹣`): none says how a run failed.
fn is_passing_test_line(line: &str) -> bool {
    let tap_ok = line
        .strip_prefix("ok")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '));
    tap_ok || line.starts_with("# Subtest:") || line.starts_with('✔') || line.starts_with('﹣')
}

/// The keys of a TAP test's YAML diagnostics whose values (on the lines below, when the key
/// opens a block) say how it failed: node's test runner writes the assertion's message under
/// `error: |-` and its values under `expected:` and `actual:`.
const TAP_DIAGNOSTIC_KEYS: [&str; 4] = ["error:", "expected:", "actual:", "operator:"];

/// The failure's key lines in `output` before its last `tail_len` lines (which the block shows
/// anyway), at most [`KEY_LINES`], first first: with `RUST_BACKTRACE=1` the last lines of a
/// failing `cargo test` are backtrace frames, and the assertion's values come before them.
/// Inside a TAP YAML block (`---` to `...`), the lines under a diagnostic key are kept with it.
pub(crate) fn earlier_key_lines(output: &str, tail_len: usize) -> Vec<String> {
    let lines: Vec<&str> = output.lines().collect();
    let earlier = &lines[..lines.len().saturating_sub(tail_len)];
    let mut keys: Vec<String> = Vec::new();
    let mut in_yaml = false;
    // The indentation of the diagnostic key whose block the next lines may continue.
    let mut block_of: Option<usize> = None;
    for line in earlier {
        let trimmed = line.trim();
        let indent = line.len() - line.trim_start().len();
        if trimmed.is_empty() {
            continue;
        }
        let continues = block_of.is_some_and(|key_indent| indent > key_indent);
        if !continues {
            block_of = None;
        }
        match trimmed {
            "---" => in_yaml = true,
            "..." => in_yaml = false,
            _ => {}
        }
        let diagnostic = in_yaml
            && TAP_DIAGNOSTIC_KEYS
                .iter()
                .any(|key| trimmed.starts_with(key));
        if diagnostic {
            block_of = Some(indent);
        }
        if !(continues || diagnostic || is_key_line(line)) {
            continue;
        }
        let line = line.trim_end();
        if keys.last().is_none_or(|last| last != line) {
            keys.push(line.to_string());
        }
        if keys.len() == KEY_LINES {
            break;
        }
    }
    keys
}

/// A refusal's exit code, and the summary lines of its run's output the ledger keeps.
pub(crate) fn refusal_facts(why: &Why) -> (Option<i32>, Vec<String>) {
    match why {
        Why::Failed {
            failing, exit_code, ..
        } => (*exit_code, summary_lines(&Failing::lines(failing))),
        Why::CannotTest { said, .. } => (
            Some(crate::verify::CANNOT_TEST),
            summary_lines(&Untestable::lines(said)),
        ),
        _ => (None, Vec::new()),
    }
}

/// Append one line to the ledger of refused turns: a turn that ended unverified at its first
/// stop (skipped, or not checked).
pub(crate) fn append_ledger(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    exit_code: Option<i32>,
    actual: LedgerActual<'_>,
    // The gate's previous answer in this session (ns since the epoch): a transcript message
    // older than it is no claim of this turn's.
    previous_answer: Option<u64>,
) -> Result<(), Error> {
    let refusal = Refusal {
        exit_code,
        actual,
        attempt: 1,
        outcome: crate::outcome::Outcome::NotProven,
    };
    append_refusal(ctx, host, event, refusal, previous_answer)
}

/// Append one line for a stop that passed on a run made ahead of it (`outcome`: what it
/// passed with), saying how long the stop waited.
pub(crate) fn append_answered_ahead(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    ahead: AnsweredAhead,
    outcome: crate::outcome::Outcome,
    previous_answer: Option<u64>,
) -> Result<(), Error> {
    let refusal = Refusal {
        exit_code: Some(0),
        actual: LedgerActual::AnsweredAhead(ahead),
        attempt: 1,
        outcome,
    };
    append_entry(ctx, host, event, refusal, Some(ahead), previous_answer)
}

/// Append one line to the ledger of refused turns.
pub(crate) fn append_refusal(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    refusal: Refusal,
    previous_answer: Option<u64>,
) -> Result<(), Error> {
    append_entry(ctx, host, event, refusal, None, previous_answer)
}

fn append_entry(
    ctx: &Context,
    host: &dyn HostRules,
    event: &Stop,
    refusal: Refusal,
    ahead: Option<AnsweredAhead>,
    previous_answer: Option<u64>,
) -> Result<(), Error> {
    let Refusal {
        exit_code,
        actual,
        attempt,
        outcome,
    } = refusal;
    let entry = LedgerEntry {
        ts: ctx
            .clock
            .now_seconds()
            .format(&Rfc3339)
            .expect("a UTC time within the year range of the clock formats as RFC 3339"),
        repo: worktree(&ctx.repo)?.display().to_string(),
        host: host.name().to_string(),
        session: event.session.clone(),
        claim: host.claim(event, previous_answer),
        evidence_demanded: EVIDENCE_DEMANDED.to_string(),
        exit_code,
        actual: actual.lines(),
        attempt,
        outcome: Some(outcome.to_string()),
        ahead,
    };
    ledger::append(&ctx.repo, &entry)?;
    Ok(())
}

/// The ledger counted: per repository and host, the turns that ended unverified, and the exit
/// codes that came back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct LedgerSummary {
    pub entries: usize,
    /// Entries whose outcome is `NOT_PROVEN`: turns that ended unverified.
    pub unverified: usize,
    /// Entries of stops that passed on a run made ahead of them.
    pub answered_ahead: usize,
    pub by_repo_and_host: Vec<RepoHostCount>,
    /// Exit codes seen in more than one entry, most frequent first.
    pub recurring_exit_codes: Vec<ExitCount>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct RepoHostCount {
    pub repo: String,
    pub host: String,
    pub entries: usize,
    pub unverified: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct ExitCount {
    pub exit_code: i32,
    pub entries: usize,
}

/// Count `entries` for `ledger --summary`.
pub(crate) fn summarize(entries: &[LedgerEntry]) -> LedgerSummary {
    let not_proven = |entry: &LedgerEntry| entry.outcome.as_deref() == Some("NOT_PROVEN");
    let mut groups: Vec<RepoHostCount> = Vec::new();
    let mut codes: Vec<ExitCount> = Vec::new();
    for entry in entries {
        let group = match groups
            .iter_mut()
            .position(|g| g.repo == entry.repo && g.host == entry.host)
        {
            Some(at) => &mut groups[at],
            None => {
                groups.push(RepoHostCount {
                    repo: entry.repo.clone(),
                    host: entry.host.clone(),
                    entries: 0,
                    unverified: 0,
                });
                groups.last_mut().expect("just pushed")
            }
        };
        group.entries += 1;
        group.unverified += usize::from(not_proven(entry));
        if let Some(code) = entry.exit_code {
            match codes.iter_mut().find(|c| c.exit_code == code) {
                Some(count) => count.entries += 1,
                None => codes.push(ExitCount {
                    exit_code: code,
                    entries: 1,
                }),
            }
        }
    }
    codes.retain(|count| count.entries > 1);
    codes.sort_by(|a, b| {
        b.entries
            .cmp(&a.entries)
            .then(a.exit_code.cmp(&b.exit_code))
    });
    LedgerSummary {
        entries: entries.len(),
        unverified: entries.iter().filter(|e| not_proven(e)).count(),
        answered_ahead: entries.iter().filter(|e| e.ahead.is_some()).count(),
        by_repo_and_host: groups,
        recurring_exit_codes: codes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(repo: &str, host: &str, exit_code: Option<i32>, outcome: &str) -> LedgerEntry {
        LedgerEntry {
            ts: "2026-12-01T00:00:00Z".into(),
            repo: repo.into(),
            host: host.into(),
            session: "s".into(),
            claim: None,
            evidence_demanded: EVIDENCE_DEMANDED.into(),
            exit_code,
            actual: vec![],
            attempt: 1,
            outcome: Some(outcome.into()),
            ahead: None,
        }
    }

    #[test]
    fn the_summary_counts_per_repository_and_host_and_finds_recurring_exit_codes() {
        let entries = [
            entry("/a", "claude", Some(101), "DISPROVEN"),
            entry("/a", "claude", Some(101), "NOT_PROVEN"),
            entry("/a", "codex", Some(1), "DISPROVEN"),
            entry("/b", "claude", Some(101), "DISPROVEN"),
            entry("/b", "claude", None, "NOT_PROVEN"),
        ];
        let summary = summarize(&entries);
        assert_eq!((summary.entries, summary.unverified), (5, 2));
        let counts: Vec<_> = summary
            .by_repo_and_host
            .iter()
            .map(|g| (g.repo.as_str(), g.host.as_str(), g.entries, g.unverified))
            .collect();
        assert_eq!(
            counts,
            [
                ("/a", "claude", 2, 1),
                ("/a", "codex", 1, 0),
                ("/b", "claude", 2, 1)
            ]
        );
        assert_eq!(
            summary.recurring_exit_codes,
            [ExitCount {
                exit_code: 101,
                entries: 3
            }]
        );
    }

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn picks_the_test_runners_summary() {
        let tail = lines(
            "running 44 tests\ntest a ... FAILED\n\ntest result: FAILED. 41 passed; 3 failed\nerror: test failed",
        );
        assert_eq!(
            summary_lines(&tail),
            vec!["test result: FAILED. 41 passed; 3 failed"]
        );
        assert_eq!(
            summary_lines(&lines("= 3 failed, 41 passed in 2.1s =")),
            vec!["= 3 failed, 41 passed in 2.1s ="]
        );
    }

    #[test]
    fn finds_the_assertion_before_a_backtrace() {
        let mut output = String::from(
            "running 1 test\ntest t ... FAILED\n\nfailures:\n\n---- t stdout ----\n\
             thread 't' panicked at src/lib.rs:5:9:\nassertion `left == right` failed\n  left: 1\n right: 2\n\
             stack backtrace:\n",
        );
        for frame in 0..40 {
            output.push_str(&format!("  {frame}: core::panicking::panic_fmt\n             at /rustc/x/library/core/src/panicking.rs:75:14\n"));
        }
        output.push_str("test result: FAILED. 0 passed; 1 failed\n");
        assert_eq!(
            earlier_key_lines(&output, 20),
            [
                "test t ... FAILED",
                "thread 't' panicked at src/lib.rs:5:9:",
                "assertion `left == right` failed",
                "  left: 1",
                " right: 2",
            ]
        );
        assert!(earlier_key_lines("a\nb\n", 20).is_empty());
    }

    /// node's spec reporter: passes (`✔`) and skips (`﹣`) are not key lines; the failure
    /// (`✖`) and the assertion's values are.
    #[test]
    fn node_spec_reporter_keys_are_the_failure_and_its_values() {
        let output = "\u{2714} passes 1 (0.1ms)\n\u{fe63} skipped 2 (0.1ms) # later\n\
                      \u{2716} adds (1.2ms)\n  AssertionError [ERR_ASSERTION]: Expected values\n\
                      \x20   actual: 2,\n    expected: 3,\n    operator: 'strictEqual'\n";
        assert_eq!(
            earlier_key_lines(output, 0),
            [
                "\u{2716} adds (1.2ms)",
                "  AssertionError [ERR_ASSERTION]: Expected values",
                "    actual: 2,",
                "    expected: 3,",
                "    operator: 'strictEqual'",
            ]
        );
    }

    #[test]
    fn falls_back_to_the_last_line_then_to_none() {
        assert_eq!(
            summary_lines(&lines("lint problems\nbad style here\n")),
            vec!["bad style here"]
        );
        assert!(summary_lines(&lines("\n  \n")).is_empty());
    }

    /// A line written before stops answered ahead were noted still reads, without `ahead`;
    /// one with it round-trips, and other entries never write the key.
    #[test]
    fn an_entry_without_ahead_still_reads_and_one_with_it_round_trips() {
        let old = r#"{"ts":"2026-01-01T00:00:00Z","repo":"/a","host":"claude","session":"s","claim":null,"evidence_demanded":"verify.sh exit 0","exit_code":1,"actual":["1 failed"],"attempt":1,"outcome":"DISPROVEN"}"#;
        let read: LedgerEntry = serde_json::from_str(old).unwrap();
        assert_eq!(read.ahead, None);
        assert!(!serde_json::to_string(&read).unwrap().contains("ahead"));
        let mut answered = entry("/a", "claude", Some(0), "PROVEN");
        answered.ahead = Some(AnsweredAhead {
            joined: true,
            waited_ms: 1234,
        });
        let text = serde_json::to_string(&answered).unwrap();
        assert!(
            text.contains(r#""ahead":{"joined":true,"waited_ms":1234}"#),
            "{text}"
        );
        assert_eq!(
            serde_json::from_str::<LedgerEntry>(&text).unwrap(),
            answered
        );
    }
}
