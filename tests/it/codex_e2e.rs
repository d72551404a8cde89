//! End to end with the real Codex CLI binary against a fake Responses API server on 127.0.0.1.
//!
//! Each test runs `codex exec` in a temporary repository wired by
//! `git prove-it init --yes --no-demo --host codex` (`.codex/hooks.json`), so Codex itself calls
//! `git prove-it hook codex` at SessionStart and Stop, and reads our answers. Codex loads a
//! repository's `.codex/` only for a trusted project, and runs its hooks in `codex exec` only with
//! `--dangerously-bypass-hook-trust`: each run's own `CODEX_HOME` trusts the repository, as
//! `codex exec --trust` would record it. The binary comes from `PROVE_IT_CODEX` or `codex` on
//! PATH; without it these tests skip, saying so on stderr, unless `PROVE_IT_E2E_REQUIRED` names
//! codex (as `.ci/run` does).

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use crate::e2e::{
    self, ALWAYS_FAILING, ANSWER, ANSWER_CHECK, ANSWER_WRONG, BLOCK, CODEX, MARKS_HOME,
    REFUSED_DELETION, YIELD, describe, json_lines, last_answers, run_bounded,
};
use crate::fake_model::responses::Responses;
use crate::fake_model::{FakeModel, Script};
use crate::harness::TestRepo;

/// How Codex hands a Stop hook's reason to the model: a user message in this tag.
const FEEDBACK: &str = "<hook_prompt";
/// Codex has no cap on blocks: a run past this was not ended by the gate's budget, and fails.
const RUN_LIMIT: Duration = Duration::from_secs(120);
/// The variable that holds the fake server's key (`env_key` in the provider's config).
const KEY_VAR: &str = "PROVE_IT_FAKE_OPENAI_KEY";

fn start(script: Script) -> FakeModel {
    FakeModel::start(Responses, script)
}

/// How a run trusts the repository, without which Codex ignores its `.codex/hooks.json`.
#[derive(Clone, Copy, PartialEq)]
enum Trust {
    /// Recorded in the run's `config.toml` beforehand, as Codex's trust prompt records it.
    Recorded,
    /// By `codex exec --trust`, which records it itself.
    Flag,
}

/// A `CODEX_HOME` of the run's own: the fake provider, no network at start, no approvals, and
/// the repository's trust recorded when `trust` says so.
fn codex_home(repo: &TestRepo, server: &FakeModel, trust: Trust) -> std::path::PathBuf {
    let home = repo.home().join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    let project = std::fs::canonicalize(&repo.root).unwrap();
    let config = format!(
        r#"model = "gpt-5.1-codex"
model_provider = "fake"
check_for_update_on_startup = false
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "{}/v1"
wire_api = "responses"
env_key = "{KEY_VAR}"

[features]
plugins = false
remote_plugin = false
apps = false
"#,
        server.base_url(),
    );
    let trusted = format!(
        "\n[projects.{:?}]\ntrust_level = \"trusted\"\n",
        project.to_str().expect("a UTF-8 temp path")
    );
    let config = if trust == Trust::Recorded {
        config + &trusted
    } else {
        config
    };
    std::fs::write(home.join("config.toml"), config).unwrap();
    home
}

/// Run `codex exec prompt` in the repository against the fake server, bounded by RUN_LIMIT.
fn run_codex(codex: &Path, repo: &TestRepo, server: &FakeModel, prompt: &str) -> Output {
    run_codex_trusting(codex, repo, server, prompt, Trust::Recorded)
}

fn run_codex_trusting(
    codex: &Path,
    repo: &TestRepo,
    server: &FakeModel,
    prompt: &str,
    trust: Trust,
) -> Output {
    let mut cmd = repo.command(codex);
    cmd.args(["exec", "--json", "--skip-git-repo-check"]);
    if trust == Trust::Flag {
        cmd.arg("--trust");
    }
    cmd.args(["--dangerously-bypass-hook-trust", prompt])
        .env("CODEX_HOME", codex_home(repo, server, trust))
        .env(KEY_VAR, "sk-fake-key-for-tests");
    run_bounded(cmd, RUN_LIMIT)
}

/// What the agent said, message by message, as `codex exec` shows it.
fn agent_messages(out: &Output) -> Vec<String> {
    json_lines(out)
        .into_iter()
        .filter(|event| {
            event["type"] == "item.completed" && event["item"]["type"] == "agent_message"
        })
        .filter_map(|event| event["item"]["text"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_failing_change_is_blocked_the_model_sees_why_and_the_fix_is_proven() {
    let Some(codex) = CODEX.or_skip("codex_e2e::a_failing_change_is_blocked") else {
        return;
    };
    let repo = e2e::wired_by_init(&CODEX, ANSWER_CHECK, ANSWER);
    let server = start(e2e::failing_change());
    let out = run_codex(&codex, &repo, &server, "add a greeting");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    // The fake calls the shell tool the real request offers.
    let tools = turns[0].body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        tools.iter().any(|tool| tool["name"] == "exec_command"),
        "{context}"
    );
    let feedback = turns[2].last_user_text();
    assert!(feedback.contains(FEEDBACK), "{context}");
    // Codex names the hook that answered: the one init wired in the repository.
    assert!(
        feedback.contains(&format!("/.codex/hooks.json\">{BLOCK}1 of 3")),
        "{context}"
    );
    assert!(
        feedback.contains(ANSWER_WRONG),
        "the model's next request carries verify.sh's failing lines: {context}"
    );
    assert_eq!(
        server.final_user_text().matches(FEEDBACK).count(),
        1,
        "{context}"
    );
    assert_eq!(
        agent_messages(&out).last().map(String::as_str),
        Some("Fixed: answer.txt is 4 again, verify.sh passes."),
        "{context}"
    );

    e2e::assert_proven_by(&repo, &CODEX);
}

#[test]
fn an_always_failing_verify_sh_ends_the_turn_by_the_budget_with_a_last_block() {
    let Some(codex) = CODEX.or_skip("codex_e2e::an_always_failing_verify_sh") else {
        return;
    };
    let repo = e2e::wired_by_init(&CODEX, ALWAYS_FAILING, &[]);
    let server = start(e2e::always_claiming());
    // Codex has no cap of its own: only the gate's budget ends this run before RUN_LIMIT.
    let out = run_codex(&codex, &repo, &server, "make a change");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    // The default budget's 3 blocks, then one last block: `codex exec` shows no systemMessage,
    // so the yield's notice goes to the agent, asking it to quote the notice to the user.
    let seen = server.final_user_text();
    assert_eq!(seen.matches(FEEDBACK).count(), 4, "{context}");
    assert_eq!(seen.matches(BLOCK).count(), 3, "{context}");
    assert_eq!(seen.matches(YIELD).count(), 1, "{context}");
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 6, "{context}");
    for turn in &turns[2..] {
        assert!(
            turn.last_user_text().contains("check 42 is broken"),
            "{context}"
        );
    }
    let last = turns[5].last_user_text();
    assert!(last.contains(YIELD), "{context}");
    assert!(
        last.contains("end your answer by quoting the notice above to them"),
        "{context}"
    );
    // The stop after the last block ends the turn: nothing more went to the model.
    assert_eq!(
        agent_messages(&out),
        vec!["All tests pass."; 5],
        "{context}"
    );
    assert_eq!(last_answers(&repo), ["notice"], "{context}");
    e2e::assert_unproven(&repo);
}

#[test]
fn the_budget_holds_when_the_agent_acts_between_blocks() {
    let Some(codex) = CODEX.or_skip("codex_e2e::the_budget_holds_when_the_agent_acts") else {
        return;
    };
    let repo = e2e::wired_by_init(&CODEX, ALWAYS_FAILING, &[]);
    // After each block the agent runs a command, then claims again: still one turn.
    let server = start(e2e::acting_between_blocks());
    let out = run_codex(&codex, &repo, &server, "make a change");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    let seen = server.final_user_text();
    for attempt in 1..=3 {
        assert_eq!(
            seen.matches(&format!("{BLOCK}{attempt} of 3")).count(),
            1,
            "{context}"
        );
    }
    assert_eq!(seen.matches(YIELD).count(), 1, "{context}");
    e2e::assert_unproven(&repo);
}

#[test]
fn a_read_only_prompt_never_runs_verify_sh() {
    let Some(codex) = CODEX.or_skip("codex_e2e::a_read_only_prompt") else {
        return;
    };
    // verify.sh leaves a mark in HOME, which Codex, the hook and verify.sh inherit from the test.
    let repo = e2e::wired_by_init(&CODEX, MARKS_HOME, ANSWER);
    let server = start(e2e::read_only());
    let out = run_codex(&codex, &repo, &server, "what is in answer.txt?");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    e2e::assert_read_only_turn(&repo, &server, &context);
}

#[test]
fn deleting_verify_sh_is_refused_until_it_is_restored() {
    let Some(codex) = CODEX.or_skip("codex_e2e::deleting_verify_sh") else {
        return;
    };
    let repo = e2e::wired_by_init(&CODEX, "echo fine", ANSWER);
    let server = start(e2e::deleting_verify_sh());
    let out = run_codex(&codex, &repo, &server, "change the answer");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let refusal = turns[2].last_user_text();
    assert!(refusal.contains(FEEDBACK), "{context}");
    assert!(refusal.contains(REFUSED_DELETION), "{context}");
    assert!(repo.path("verify.sh").is_file(), "{context}");
    // Restored, the changed state is proven by the verify.sh of the session's start.
    let state = repo.stock_state_tree().unwrap();
    assert!(repo.note(&state).is_some(), "{context}");
}

#[test]
fn doctor_reads_the_project_trust_codex_records() {
    let Some(codex) = CODEX.or_skip("codex_e2e::doctor_reads_the_project_trust") else {
        return;
    };
    let repo = e2e::wired_by_init(&CODEX, "echo fine", ANSWER);
    let server = start(e2e::read_only());
    let doctor = |repo: &TestRepo| {
        let out = repo
            .prove_it(&["doctor"])
            .env("CODEX_HOME", repo.home().join("codex-home"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    codex_home(&repo, &server, Trust::Flag);
    let before = doctor(&repo);
    assert!(
        before.contains("does not record trusting this project"),
        "{before}"
    );
    // Codex records the trust itself, and then reads .codex/hooks.json: the gate answered.
    let out = run_codex_trusting(
        &codex,
        &repo,
        &server,
        "what is in answer.txt?",
        Trust::Flag,
    );
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    assert_eq!(last_answers(&repo), ["silent"], "{context}");
    let after = doctor(&repo);
    assert!(
        after.contains("warn  Codex CLI: this project is trusted, but whether Codex approved its hooks cannot be checked"),
        "{after}\n{context}"
    );
}
