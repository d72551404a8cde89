//! What a headless run's plain text output ends with, for each outcome a person must see at a
//! turn's end: a proof bounded by an edited verify.sh, a skip, the gate's own failure ("could
//! not check"), and the turn ended unverified by the budget. Plain text is what a person reads
//! at the terminal and what a script that captures stdout keeps: the agent's last answer alone,
//! so an outcome reaches it only as the agent's report of the gate's last block. Each host's
//! module says how it runs with that output (`claude -p --output-format text`, `codex exec`
//! without `--json`, ...).

use std::path::Path;
use std::process::Output;

use crate::e2e::harness::{Agent, describe};
use crate::e2e::scenarios::{
    ALWAYS_FAILING, BOUNDED, CLAIM, COULD_NOT_CHECK, MARKS_HOME, REPORTED, REPORTED_BOUNDED,
    REPORTED_COULD_NOT_CHECK, REPORTED_SKIP, SKIPPED, YIELD, breaking_the_proofs_ref,
    editing_verify_sh, reporting_when_told, skip_in_the_wiring, skipped,
};
use crate::fake_model::{FakeModel, Script};
use crate::harness::TestRepo;

/// A run of the host with its plain text output, on a prompt, in the repository's root.
pub type TextRun<'a> = &'a dyn Fn(&Path, &TestRepo, &FakeModel, &str) -> Output;

/// One outcome: how the session comes to it, what the gate says, and the agent's report.
struct Outcome {
    name: &'static str,
    verify: &'static str,
    /// `PROVE_IT_SKIP=1` in the wiring.
    skip: bool,
    script: fn() -> Script,
    /// The head of the gate's notice.
    head: &'static str,
    /// What the model answers when told of it (the fake model does as it is asked).
    reported: &'static str,
    /// Whether the notice is outside the gate's count (a skip, the gate's failure), which a
    /// host that `stops_with_the_notice` shows itself rather than telling the agent.
    outside_the_count: bool,
}

const OUTCOMES: [Outcome; 4] = [
    Outcome {
        name: "bounded by an edited verify.sh",
        verify: "echo fine",
        skip: false,
        script: editing_verify_sh,
        head: BOUNDED,
        reported: REPORTED_BOUNDED,
        outside_the_count: false,
    },
    Outcome {
        name: "skipped",
        verify: MARKS_HOME,
        skip: true,
        script: skipped,
        head: SKIPPED,
        reported: REPORTED_SKIP,
        outside_the_count: true,
    },
    Outcome {
        name: "could not check",
        verify: MARKS_HOME,
        skip: false,
        script: breaking_the_proofs_ref,
        head: COULD_NOT_CHECK,
        reported: REPORTED_COULD_NOT_CHECK,
        outside_the_count: true,
    },
    Outcome {
        name: "ended unverified",
        verify: ALWAYS_FAILING,
        skip: false,
        script: reporting_when_told,
        head: YIELD,
        reported: REPORTED,
        outside_the_count: false,
    },
];

/// Each outcome in turn, in a repository of its own: the run's stdout, in plain text, ends
/// with the agent's report of it. Where the hook stops the agent with a notice instead
/// (Gemini CLI), the host prints that notice on stderr, and stdout ends with the claim: a
/// script that keeps only stdout misses it, as ADAPTERS.md says.
pub fn each_outcome_reaches_the_text_output(agent: &dyn Agent, run_text: TextRun) {
    let binary = agent.info().binary();
    for outcome in &OUTCOMES {
        let repo = agent.wired_repo(outcome.verify, &[]);
        if outcome.skip {
            skip_in_the_wiring(&repo, agent.info().wiring);
        }
        let server = agent.start((outcome.script)());
        let out = run_text(&binary, &repo, &server, "make a change");
        let context = format!("{}: {}", outcome.name, describe(&out, &server));
        assert!(out.status.success(), "{context}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if outcome.outside_the_count && agent.stops_with_the_notice() {
            assert!(stdout.trim_end().ends_with(CLAIM), "{context}");
            assert!(!stdout.contains(outcome.head), "{context}");
            assert!(stderr.contains(outcome.head), "{context}");
            continue;
        }
        assert!(
            stdout.trim_end().ends_with(outcome.reported),
            "{stdout:?}\n{context}"
        );
        // The gate's words were the model's, in its last request.
        let last = server.agent_turns().last().unwrap().last_user_text();
        assert!(last.contains(outcome.head), "{context}");
    }
}
