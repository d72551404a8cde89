//! End to end with the real Gemini CLI binary against a fake Gemini API on 127.0.0.1.
//!
//! Each test runs `gemini -p` in a temporary repository wired by
//! `git prove-it init --host gemini`, so Gemini CLI itself calls `git prove-it hook gemini` at
//! SessionStart and AfterAgent, and reads our answers. The binary comes from `PROVE_IT_GEMINI`
//! or `gemini` on PATH; without it these tests skip, saying so on stderr, unless
//! `PROVE_IT_E2E_REQUIRED` names gemini (as `.ci/run` does).

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};

use crate::e2e::{
    self, ALWAYS_FAILING, ANSWER, ANSWER_CHECK, ANSWER_WRONG, BLOCK, GEMINI, MARKS_HOME,
    REFUSED_DELETION, YIELD, describe, last_answers, run_bounded,
};
use crate::fake_model::gemini::Gemini;
use crate::fake_model::{FakeModel, Script};
use crate::harness::TestRepo;

/// Gemini CLI has no cap on blocks: a run the gate's budget did not end is killed past this,
/// and the test fails. The scenarios take a few seconds.
const RUN_LIMIT: Duration = Duration::from_secs(120);

fn start(script: Script) -> FakeModel {
    FakeModel::start(Gemini, script)
}

/// Run `gemini -p prompt` in the repository against the fake server, bounded by RUN_LIMIT.
fn run_gemini(gemini: &Path, repo: &TestRepo, server: &FakeModel, prompt: &str) -> Output {
    // Its own user settings: API-key auth, nothing that reaches the network on its own.
    let home = repo.home().join("gemini-home");
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
    });
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).unwrap();
    let mut cmd = repo.command(gemini);
    cmd.args(["-p", prompt, "--yolo", "--output-format", "json"])
        .env("GEMINI_CLI_HOME", &home)
        .env("GOOGLE_GEMINI_BASE_URL", server.base_url())
        .env("GEMINI_API_KEY", "fake-gemini-key-for-tests")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    run_bounded(cmd, RUN_LIMIT)
}

/// The run's JSON result on stdout (`--output-format json`).
fn result(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// The warnings of the JSON result: each block, as "Agent execution blocked: <reason>".
fn warnings(out: &Output) -> Vec<String> {
    result(out)["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|warning| warning.as_str().map(str::to_owned))
        .collect()
}

/// How many blocks of the gate the model was shown, by the end of the conversation.
fn blocks_seen(server: &FakeModel) -> usize {
    server.final_user_text().matches(BLOCK).count()
}

#[test]
fn a_failing_change_is_blocked_the_model_sees_why_and_the_fix_is_proven() {
    let Some(gemini) = GEMINI.or_skip("a_failing_change_is_blocked") else {
        return;
    };
    let repo = e2e::wired_by_init(&GEMINI, ANSWER_CHECK, ANSWER);
    let server = start(e2e::failing_change());
    let out = run_gemini(&gemini, &repo, &server, "add a greeting");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    // The agent is offered the shell tool that the fake model calls.
    let tools = turns[0].body["tools"].to_string();
    assert!(tools.contains(r#""name":"run_shell_command""#), "{tools}");
    // The shell ran: its result is the user side's message in the second turn.
    assert!(
        turns[1].last_user_text().contains("Output: (empty)"),
        "{context}"
    );
    // The block's reason is the next user turn, raw.
    let feedback = turns[2].last_user_text();
    assert!(feedback.starts_with(BLOCK), "{context}");
    assert!(
        feedback.contains(ANSWER_WRONG),
        "the model's next request carries verify.sh's failing lines: {context}"
    );
    assert_eq!(blocks_seen(&server), 1, "{context}");
    // The user saw the block, as a warning of the JSON result.
    let warnings = warnings(&out);
    assert_eq!(warnings.len(), 1, "{context}");
    assert!(
        warnings[0].starts_with(&format!("Agent execution blocked: {BLOCK}")),
        "{context}"
    );
    assert!(
        result(&out)["response"]
            .as_str()
            .is_some_and(|text| text.ends_with("verify.sh passes.")),
        "{context}"
    );

    e2e::assert_proven_by(&repo, &GEMINI);
}

#[test]
fn an_always_failing_verify_sh_ends_the_turn_unverified_within_the_budget() {
    let Some(gemini) = GEMINI.or_skip("an_always_failing_verify_sh") else {
        return;
    };
    let repo = e2e::wired_by_init(&GEMINI, ALWAYS_FAILING, &[]);
    let server = start(e2e::always_claiming());
    // Gemini CLI has no cap of its own: only the gate's budget ends this run in time.
    let out = run_gemini(&gemini, &repo, &server, "make a change");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    // The gate's default budget is 3 blocks, then the turn ends.
    assert_eq!(blocks_seen(&server), 3, "{context}");
    assert_eq!(server.agent_turns().len(), 5, "{context}");
    for turn in server.agent_turns().iter().skip(2) {
        assert!(
            turn.last_user_text().contains("check 42 is broken"),
            "{context}"
        );
    }
    assert_eq!(warnings(&out).len(), 3, "{context}");

    // The yield is loud: Gemini CLI prints the notice (`systemMessage`) on stderr in headless
    // mode, and no proof was written.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "Hook system message: prove-it: NOT_PROVEN: this turn ended unverified (after 3 attempts)"
        ),
        "{context}"
    );
    assert_eq!(last_answers(&repo), ["notice"], "{context}");
    e2e::assert_unproven(&repo);
}

#[test]
fn the_budget_holds_when_the_agent_acts_between_blocks() {
    let Some(gemini) = GEMINI.or_skip("the_budget_holds_when_the_agent_acts_between_blocks") else {
        return;
    };
    let repo = e2e::wired_by_init(&GEMINI, ALWAYS_FAILING, &[]);
    // After each block the agent runs a command, then claims again: Gemini CLI then sends
    // `stop_hook_active: false`, as at a turn's first stop. Distinct commands, so that Gemini's
    // own loop detection (five identical calls) plays no part.
    let server = start(e2e::acting_between_blocks());
    let out = run_gemini(&gemini, &repo, &server, "make a change");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    // Still one turn: three blocks, attempts 1 to 3, then the turn ends unverified.
    assert_eq!(blocks_seen(&server), 3, "{context}");
    assert_eq!(server.agent_turns().len(), 8, "{context}");
    let last = server.agent_turns().last().unwrap().user_text();
    for attempt in 1..=3 {
        let block = format!("{BLOCK}{attempt} of 3 for this turn)");
        assert!(last.contains(&block), "{context}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(YIELD), "{context}");
    e2e::assert_unproven(&repo);
}

#[test]
fn a_read_only_prompt_never_runs_verify_sh() {
    let Some(gemini) = GEMINI.or_skip("a_read_only_prompt") else {
        return;
    };
    // verify.sh leaves a mark in HOME, which the hook and verify.sh inherit from the test.
    let repo = e2e::wired_by_init(&GEMINI, MARKS_HOME, ANSWER);
    let server = start(e2e::read_only());
    let out = run_gemini(&gemini, &repo, &server, "what is in answer.txt?");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    e2e::assert_read_only_turn(&repo, &server, &context);
    assert!(warnings(&out).is_empty(), "{context}");
}

#[test]
fn deleting_verify_sh_is_refused_until_it_is_restored() {
    let Some(gemini) = GEMINI.or_skip("deleting_verify_sh") else {
        return;
    };
    let repo = e2e::wired_by_init(&GEMINI, "echo fine", ANSWER);
    let server = start(e2e::deleting_verify_sh());
    let out = run_gemini(&gemini, &repo, &server, "change the answer");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let refusal = turns[2].last_user_text();
    assert!(refusal.contains(REFUSED_DELETION), "{context}");
    assert!(repo.path("verify.sh").is_file(), "{context}");
    // Restored, the changed state is proven by the verify.sh of the session's start.
    let state = repo.stock_state_tree().unwrap();
    assert!(repo.note(&state).is_some(), "{context}");
}
