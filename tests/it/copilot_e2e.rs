//! End to end with the real Copilot CLI binary against a fake Chat Completions API on 127.0.0.1.
//!
//! Each test wires a temporary repository with `git prove-it init --host copilot` and runs
//! `copilot -p` in it, offline (`COPILOT_OFFLINE`, a bring-your-own-key provider pointing at the
//! fake server), trusted through `COPILOT_ALLOW_ALL`, so Copilot itself calls
//! `git prove-it hook copilot sessionStart|agentStop` and acts on our answers. See `crate::e2e`
//! for where the binary comes from and when these tests skip.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::e2e::{
    self, ALWAYS_FAILING, ANSWER, ANSWER_CHECK, ANSWER_WRONG, BLOCK, COPILOT, MARKS_HOME,
    REFUSED_DELETION, YIELD, describe, json_lines, run_bounded,
};
use crate::fake_model::chat::Chat;
use crate::fake_model::{FakeModel, Script};
use crate::harness::{TestRepo, json_stdout};

/// Longer than any scenario needs (each takes about a second); a run past it fails the test.
const RUN_LIMIT: Duration = Duration::from_secs(120);
/// Copilot unpacks its 235 MB package into `XDG_CACHE_HOME` on its first run: once for the
/// whole test run (and kept in Cargo's target directory for the next), not once a test.
fn package_cache(copilot: &Path) -> &'static Path {
    static CACHE: OnceLock<PathBuf> = OnceLock::new();
    CACHE.get_or_init(|| {
        let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache");
        let home = tempfile::tempdir().unwrap();
        let out = Command::new(copilot)
            .arg("--version")
            .env("XDG_CACHE_HOME", &cache)
            .env("COPILOT_HOME", home.path())
            .output()
            .expect("copilot --version runs");
        assert!(out.status.success(), "copilot --version: {out:?}");
        cache
    })
}

fn start(script: Script) -> FakeModel {
    FakeModel::start(Chat, script)
}

/// Run `copilot -p prompt` in the repository against the fake server, bounded by RUN_LIMIT.
fn run_copilot(copilot: &Path, repo: &TestRepo, server: &FakeModel, prompt: &str) -> Output {
    let home = repo.home().join("copilot-home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = repo.command(copilot);
    cmd.args(["-p", prompt, "--allow-all-tools", "--no-auto-update"])
        .args(["--output-format", "json"])
        .env("COPILOT_OFFLINE", "true")
        .env(
            "COPILOT_PROVIDER_BASE_URL",
            format!("{}/v1", server.base_url()),
        )
        .env("COPILOT_PROVIDER_TYPE", "openai")
        .env("COPILOT_PROVIDER_API_KEY", "sk-fake-key-for-tests")
        .env("COPILOT_PROVIDER_WIRE_API", "completions")
        .env("COPILOT_MODEL", "gpt-4.1")
        .env("COPILOT_HOME", &home)
        .env("XDG_CACHE_HOME", package_cache(copilot))
        .env("COPILOT_ALLOW_ALL", "true");
    run_bounded(cmd, RUN_LIMIT)
}

/// The user messages of the session (the prompt, then each block of the gate, raw).
fn user_messages(out: &Output) -> Vec<String> {
    json_lines(out)
        .iter()
        .filter(|event| event["type"] == "user.message")
        .filter_map(|event| event["data"]["content"].as_str().map(str::to_owned))
        .collect()
}

/// The messages of the user side in the model's last request that are blocks of the gate.
fn blocks_seen(server: &FakeModel) -> Vec<String> {
    let turns = server.agent_turns();
    let last = turns.last().map(|turn| turn.user_texts.clone());
    last.unwrap_or_default()
        .into_iter()
        .filter(|text| text.contains("prove-it: "))
        .collect()
}

#[test]
fn copilot_blocks_a_failing_change_shows_the_model_why_and_proves_the_fix() {
    let Some(copilot) = COPILOT.or_skip("copilot_blocks_a_failing_change") else {
        return;
    };
    let repo = e2e::wired_by_init(&COPILOT, ANSWER_CHECK, ANSWER);
    repo.git(&["config", "prove-it.ledger", "true"]);
    let server = start(e2e::failing_change());
    let out = run_copilot(&copilot, &repo, &server, "add a greeting");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    // The claim ended the turn; the block came back as the model's next user message.
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let feedback = turns[2].last_user_text();
    assert!(feedback.contains(&format!("{BLOCK}1 of 3")), "{context}");
    assert!(
        feedback.contains(ANSWER_WRONG),
        "the model's next request carries verify.sh's failing lines: {context}"
    );
    assert_eq!(blocks_seen(&server).len(), 1, "{context}");

    e2e::assert_proven_by(&repo, &COPILOT);

    // The block is in the ledger, with the claim when Copilot had written it to its transcript
    // (`events.jsonl`) by then: Copilot 1.0.102 writes that file lazily, so at the stop the
    // claim is there in some runs and not yet in others. Never another message in its place.
    let ledger = json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
    let entries = ledger["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{ledger}");
    assert_eq!(entries[0]["host"], "copilot", "{ledger}");
    assert_eq!(entries[0]["exit_code"], 1, "{ledger}");
    let claim = &entries[0]["claim"];
    assert!(claim.is_null() || claim == "All tests pass.", "{ledger}");
    // The transcript Copilot wrote has the shape the adapter reads.
    let answers: Vec<String> = transcript(&repo)
        .iter()
        .filter(|event| event["type"] == "assistant.message")
        .filter_map(|event| event["data"]["content"].as_str().map(str::to_owned))
        .filter(|content| !content.is_empty())
        .collect();
    assert_eq!(
        answers,
        [
            "All tests pass.",
            "Fixed: answer.txt is 4 again, verify.sh passes."
        ],
        "{context}"
    );
}

/// The events of the (only) session Copilot recorded under its home.
fn transcript(repo: &TestRepo) -> Vec<Value> {
    let sessions = repo.home().join("copilot-home/session-state");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&sessions).unwrap().flatten() {
        let events = entry.path().join("events.jsonl");
        if let Ok(text) = std::fs::read_to_string(&events) {
            found.extend(
                text.lines()
                    .filter_map(|line| serde_json::from_str(line).ok()),
            );
        }
    }
    found
}

/// An always-failing verify.sh's turn as the model saw it: three blocks, then one last block
/// carrying the NOT_PROVEN notice (Copilot shows the user no notice of a hook), then the turn
/// ended: 5 stops, well below Copilot's own cap of 8.
fn assert_three_blocks_then_the_last(server: &FakeModel, context: &str) {
    let blocks = blocks_seen(server);
    assert_eq!(blocks.len(), 4, "{context}");
    for (n, block) in blocks[..3].iter().enumerate() {
        assert!(
            block.contains(&format!("{BLOCK}{} of 3", n + 1)),
            "{context}"
        );
        assert!(block.contains("check 42 is broken"), "{context}");
    }
    assert!(blocks[3].contains(YIELD), "{context}");
    assert!(blocks[3].contains("quoting the notice above"), "{context}");
}

#[test]
fn copilot_ends_an_always_failing_turn_by_the_budget_and_the_agent_is_told() {
    let Some(copilot) = COPILOT.or_skip("copilot_ends_an_always_failing_turn") else {
        return;
    };
    let repo = e2e::wired_by_init(&COPILOT, ALWAYS_FAILING, &[]);
    let server = start(e2e::always_claiming());
    let out = run_copilot(&copilot, &repo, &server, "make a change");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    assert_three_blocks_then_the_last(&server, &context);
    assert_eq!(server.agent_turns().len(), 6, "{context}");
    // Copilot's own record of the session shows the same five user messages: prompt and blocks.
    assert_eq!(user_messages(&out).len(), 5, "{context}");
    e2e::assert_unproven(&repo);
}

#[test]
fn copilot_keeps_the_budget_when_the_agent_acts_between_blocks() {
    let Some(copilot) = COPILOT.or_skip("copilot_keeps_the_budget_when_the_agent_acts") else {
        return;
    };
    let repo = e2e::wired_by_init(&COPILOT, ALWAYS_FAILING, &[]);
    // After each block the agent runs a command, then claims again: still one turn.
    let server = start(e2e::acting_between_blocks());
    let out = run_copilot(&copilot, &repo, &server, "make a change");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    assert_three_blocks_then_the_last(&server, &context);
    e2e::assert_unproven(&repo);
}

#[test]
fn copilot_runs_nothing_on_a_read_only_prompt() {
    let Some(copilot) = COPILOT.or_skip("copilot_runs_nothing_on_a_read_only_prompt") else {
        return;
    };
    // verify.sh leaves a mark in HOME, which the hook and verify.sh inherit from the test.
    let repo = e2e::wired_by_init(&COPILOT, MARKS_HOME, ANSWER);
    let server = start(e2e::read_only());
    let out = run_copilot(&copilot, &repo, &server, "what is in answer.txt?");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    e2e::assert_read_only_turn(&repo, &server, &context);
    assert!(blocks_seen(&server).is_empty(), "{context}");
}

#[test]
fn copilot_is_refused_a_deleted_verify_sh_until_it_is_restored() {
    let Some(copilot) = COPILOT.or_skip("copilot_is_refused_a_deleted_verify_sh") else {
        return;
    };
    let repo = e2e::wired_by_init(&COPILOT, "echo fine", ANSWER);
    let server = start(e2e::deleting_verify_sh());
    let out = run_copilot(&copilot, &repo, &server, "change the answer");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    assert!(
        turns[2].last_user_text().contains(REFUSED_DELETION),
        "{context}"
    );
    assert!(repo.path("verify.sh").is_file(), "{context}");
    assert!(
        repo.note(&repo.stock_state_tree().unwrap()).is_some(),
        "{context}"
    );
}
