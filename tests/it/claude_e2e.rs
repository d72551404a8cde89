//! End to end with the real Claude Code binary against a fake model server on 127.0.0.1.
//!
//! Each test runs `claude -p` in a temporary repository wired with `hooks/claude-settings.json`,
//! so Claude Code itself calls `git prove-it hook claude` at SessionStart and Stop, and reads our
//! answers. The binary comes from `PROVE_IT_CLAUDE` or `claude` on PATH; without it these tests
//! skip, saying so on stderr, unless `PROVE_IT_E2E_REQUIRED` is set (as `.ci/run` does).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::e2e::{
    self, ALWAYS_FAILING, ANSWER, ANSWER_CHECK, ANSWER_WRONG, CLAUDE, MARKS_HOME, REFUSED_DELETION,
    YIELD, describe, json_lines, run_bounded,
};
use crate::fake_model::anthropic::Anthropic;
use crate::fake_model::{FakeModel, Reply, Script};
use crate::harness::TestRepo;

/// The feedback prefix Claude Code puts before a Stop hook's reason in the model's next turn.
const FEEDBACK: &str = "Stop hook feedback";
/// Longer than any scenario needs; a run past it is killed and the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(240);

fn start(script: Script) -> FakeModel {
    FakeModel::start(Anthropic, script)
}

/// A repository with `files` and verify.sh committed, wired to Claude Code by our settings file.
fn wired_repo(verify: &str, files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    let settings = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("hooks/claude-settings.json"),
    )
    .expect("hooks/claude-settings.json");
    repo.write(".claude/settings.json", &settings);
    for (path, content) in files {
        repo.write(path, content);
    }
    repo.verify_script(verify);
    repo.commit_all("initial");
    repo
}

/// Run `claude -p prompt` in the repository against the fake server, bounded by RUN_LIMIT.
fn run_claude(claude: &Path, repo: &TestRepo, server: &FakeModel, prompt: &str) -> Output {
    run_claude_with(claude, repo, server, prompt, &[])
}

fn run_claude_with(
    claude: &Path,
    repo: &TestRepo,
    server: &FakeModel,
    prompt: &str,
    extra: &[&std::ffi::OsStr],
) -> Output {
    let config = repo.home().join("claude-config");
    std::fs::create_dir_all(&config).unwrap();
    let mut cmd = repo.command(claude);
    cmd.args([
        "-p",
        prompt,
        "--allowedTools",
        "Bash",
        "--output-format",
        "stream-json",
        "--verbose",
    ])
    .env("ANTHROPIC_BASE_URL", server.base_url())
    .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
    .env("CLAUDE_CONFIG_DIR", &config)
    .env("DISABLE_TELEMETRY", "1")
    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    .env("DISABLE_AUTOUPDATER", "1")
    .args(extra);
    run_bounded(cmd, RUN_LIMIT)
}

/// The texts Claude Code showed the user as system messages (a hook's `systemMessage`).
fn system_messages(out: &Output) -> Vec<String> {
    json_lines(out)
        .into_iter()
        .filter(|event| event["type"] == "system")
        .filter_map(|event| event["content"].as_str().map(str::to_owned))
        .collect()
}

/// The run's final result event.
fn result(out: &Output) -> Value {
    json_lines(out)
        .into_iter()
        .rfind(|event| event["type"] == "result")
        .expect("a result event")
}

/// How many blocks of the gate the model was shown, by the end of the conversation.
fn blocks_seen(server: &FakeModel) -> usize {
    server.final_user_text().matches(FEEDBACK).count()
}

#[test]
fn a_failing_change_is_blocked_the_model_sees_why_and_the_fix_is_proven() {
    let Some(claude) = CLAUDE.or_skip("a_failing_change_is_blocked") else {
        return;
    };
    let repo = wired_repo(ANSWER_CHECK, ANSWER);
    let server = start(e2e::failing_change());
    let out = run_claude(&claude, &repo, &server, "add a greeting");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let feedback = turns[2].last_user_text();
    assert!(feedback.contains(FEEDBACK), "{context}");
    assert!(
        feedback.contains(ANSWER_WRONG),
        "the model's next request carries verify.sh's failing lines: {context}"
    );
    assert_eq!(blocks_seen(&server), 1, "{context}");
    assert_eq!(result(&out)["is_error"], false, "{context}");

    e2e::assert_proven_by(&repo, &CLAUDE);
}

#[test]
fn an_always_failing_verify_sh_ends_the_turn_unverified_within_the_budget() {
    let Some(claude) = CLAUDE.or_skip("an_always_failing_verify_sh") else {
        return;
    };
    let repo = wired_repo(ALWAYS_FAILING, &[]);
    let server = start(e2e::always_claiming());
    let out = run_claude(&claude, &repo, &server, "make a change");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");

    // The gate's default budget is 3 blocks; Claude Code's own cap of 8 is never reached.
    assert_eq!(blocks_seen(&server), 3, "{context}");
    assert_eq!(server.agent_turns().len(), 5, "{context}");
    for turn in server.agent_turns().iter().skip(2) {
        assert!(
            turn.last_user_text().contains("check 42 is broken"),
            "{context}"
        );
    }

    // The yield is loud: the ledger says the turn ended unverified, and no proof was written.
    let warnings = system_messages(&out);
    assert!(
        warnings.iter().any(|text| text.contains(YIELD)),
        "{context}"
    );
    assert_eq!(result(&out)["result"], "All tests pass.", "{context}");
    e2e::assert_unproven(&repo);
}

#[test]
fn a_read_only_prompt_never_runs_verify_sh() {
    let Some(claude) = CLAUDE.or_skip("a_read_only_prompt") else {
        return;
    };
    // verify.sh leaves a mark in HOME, which the hook and verify.sh inherit from the test.
    let repo = wired_repo(MARKS_HOME, ANSWER);
    let server = start(e2e::read_only());
    let out = run_claude(&claude, &repo, &server, "what is in answer.txt?");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    e2e::assert_read_only_turn(&repo, &server, &context);
}

#[test]
fn deleting_verify_sh_is_refused_until_it_is_restored() {
    let Some(claude) = CLAUDE.or_skip("deleting_verify_sh") else {
        return;
    };
    let repo = wired_repo("echo fine", ANSWER);
    let server = start(e2e::deleting_verify_sh());
    let out = run_claude(&claude, &repo, &server, "change the answer");
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

/// This repository is also a Claude Code plugin: `.claude-plugin/`, `hooks/hooks.json`.
fn plugin_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_plugin_wires_the_gate_and_announces_it_once() {
    let Some(claude) = CLAUDE.or_skip("the_plugin_wires_the_gate") else {
        return;
    };
    // No .claude/settings.json: the hooks come from the plugin alone.
    let repo = TestRepo::new();
    repo.write("answer.txt", "4\n");
    repo.verify_script(ANSWER_CHECK);
    repo.commit_all("initial");
    let server = start(e2e::failing_change());
    let dir = plugin_dir();
    let plugin = ["--plugin-dir".as_ref(), dir.as_os_str()];
    let out = run_claude_with(&claude, &repo, &server, "change the answer", &plugin);
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    assert_eq!(blocks_seen(&server), 1, "{context}");
    assert!(
        server.agent_turns()[2]
            .last_user_text()
            .contains(ANSWER_WRONG),
        "{context}"
    );
    assert!(
        repo.note(&repo.stock_state_tree().unwrap()).is_some(),
        "{context}"
    );
    // The SessionStart notice shows as the hook's response in the stream.
    let announced = |out: &Output| {
        json_lines(out).iter().any(|event| {
            event["subtype"] == "hook_response"
                && event["hook_event"] == "SessionStart"
                && event["output"]
                    .as_str()
                    .is_some_and(|text| text.contains("the gate is armed in this repository"))
        })
    };
    assert!(announced(&out), "{context}");

    // A second session in the same repository is not told again.
    let server = start(Script::new(vec![], Reply::Text("Nothing to do.")));
    let out = run_claude_with(&claude, &repo, &server, "anything to do?", &plugin);
    assert!(out.status.success(), "{}", describe(&out, &server));
    assert!(!announced(&out), "{}", describe(&out, &server));
}

#[test]
fn claude_code_validates_the_plugin_and_its_marketplace() {
    let Some(claude) = CLAUDE.or_skip("claude_code_validates_the_plugin") else {
        return;
    };
    let repo = TestRepo::new();
    let config = repo.home().join("claude-config");
    let out = repo
        .command(&claude)
        .args(["plugin", "validate"])
        .arg(plugin_dir())
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Validation passed"), "{text}");
}
