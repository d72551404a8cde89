//! Qwen Code, end to end: `qwen -p --output-format json` in a repository wired by
//! `git prove-it init --host qwen`, against a fake OpenAI Chat Completions API
//! (`--auth-type openai`, `OPENAI_BASE_URL`), so Qwen Code itself calls `git prove-it hook
//! qwen` at SessionStart and Stop and acts on our answers. A block's reason is the model's
//! next user message, raw; the JSON result shows neither blocks nor notices, and its `result`
//! is the turn's answers joined. The scenarios are `crate::e2e::scenarios`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};

use crate::e2e::harness::host_command;
use crate::e2e::{Agent, Feedback, HostInfo, run_bounded, scenarios_for};
use crate::fake_model::chat::Chat;
use crate::fake_model::{FakeModel, Script};
use crate::harness::TestRepo;

/// Longer than any scenario needs (each takes a few seconds); a run past it fails the test.
const RUN_LIMIT: Duration = Duration::from_secs(120);

pub struct Qwen;

const INFO: HostInfo = HostInfo {
    name: "qwen",
    binary: "qwen",
    env: "PROVE_IT_QWEN",
    product: "Qwen Code",
    wiring: ".qwen/settings.json",
};

scenarios_for!(
    Qwen,
    "drives the real qwen CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"
);

impl Agent for Qwen {
    fn info(&self) -> &'static HostInfo {
        &INFO
    }

    fn start(&self, script: Script) -> FakeModel {
        FakeModel::start(Chat, script)
    }

    fn run_in(
        &self,
        binary: &Path,
        repo: &TestRepo,
        dir: &Path,
        server: &FakeModel,
        prompt: &str,
    ) -> Output {
        run_bounded(command(binary, repo, dir, server, prompt), RUN_LIMIT)
    }

    /// `--continue`: the project's most recent session (the run's HOME keeps it).
    fn run_resumed(
        &self,
        binary: &Path,
        repo: &TestRepo,
        server: &FakeModel,
        prompt: &str,
    ) -> Option<Output> {
        let mut cmd = command(binary, repo, &repo.root, server, prompt);
        cmd.arg("--continue");
        Some(run_bounded(cmd, RUN_LIMIT))
    }

    /// Qwen Code 0.24.4 resumes a session with its prompts and its turns' answers joined, the
    /// blocks' reasons left out.
    fn resumes_with_blocks(&self) -> bool {
        false
    }

    /// Qwen Code 0.24.4 loads `.qwen/settings.json` only where it is started.
    fn reads_project_hooks_below_root(&self) -> bool {
        false
    }

    /// `init --host qwen --user-level`: the gate in the run's user settings.
    fn wire_for_every_folder(&self, repo: &TestRepo) -> Vec<(&'static str, PathBuf)> {
        repo.prove_it(&[
            "init",
            "--yes",
            "--no-demo",
            "--host",
            "qwen",
            "--user-level",
        ])
        .assert()
        .success();
        Vec::new()
    }

    /// Headless, Qwen Code's JSON result shows no `systemMessage`, and its hook cannot tell a
    /// headless run: the yield is a last block.
    fn shows_notices(&self) -> bool {
        false
    }

    fn feedback(&self) -> Feedback {
        Feedback::Raw
    }

    fn shell_tool(&self) -> &'static str {
        "run_shell_command"
    }

    fn empty_shell_output(&self) -> Option<&'static str> {
        Some("Output: (empty)")
    }

    /// The JSON result's `result`: the turn's answers, joined.
    fn final_answer(&self, out: &Output) -> Option<String> {
        result(out)
            .and_then(|result| result["result"].as_str().map(str::to_owned))
            .filter(|_| result(out).is_some_and(|result| result["is_error"] != true))
    }

    fn joins_answers(&self) -> bool {
        true
    }
}

/// The run's result, the last element of its JSON output (`--output-format json`).
fn result(out: &Output) -> Option<Value> {
    let events: Value = serde_json::from_slice(&out.stdout).ok()?;
    events
        .as_array()?
        .iter()
        .rfind(|event| event["type"] == "result")
        .cloned()
}

/// The command of one run of `qwen -p` on `prompt` in `dir`: offline, against the fake model,
/// with the run's user settings turning off whatever reaches the network by itself (updates,
/// usage statistics) or asks the model on the side (memory extraction); the hooks
/// `wire_for_every_folder` put there are kept.
fn command(
    binary: &Path,
    repo: &TestRepo,
    dir: &Path,
    server: &FakeModel,
    prompt: &str,
) -> Command {
    command_as(binary, repo, dir, server, prompt, "json")
}

/// [`command`], with the output format `format` (`text`, `json`).
fn command_as(
    binary: &Path,
    repo: &TestRepo,
    dir: &Path,
    server: &FakeModel,
    prompt: &str,
    format: &str,
) -> Command {
    let file = repo.home().join(".qwen/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let hooks = std::fs::read_to_string(&file)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .map_or(Value::Null, |old| old["hooks"].clone());
    let mut settings = json!({
        "general": {"enableAutoUpdate": false},
        "privacy": {"usageStatisticsEnabled": false},
        "memory": {"enableManagedAutoMemory": false},
        "ui": {"enableFollowupSuggestions": false},
    });
    if !hooks.is_null() {
        settings["hooks"] = hooks;
    }
    std::fs::write(&file, settings.to_string()).unwrap();
    let mut cmd = host_command(binary, repo);
    cmd.current_dir(dir);
    cmd.args(["-p", prompt, "--yolo", "--auth-type", "openai"])
        .args(["--output-format", format])
        .env("OPENAI_BASE_URL", format!("{}/v1", server.base_url()))
        .env("OPENAI_API_KEY", "sk-fake-key-for-tests")
        .env("OPENAI_MODEL", "gpt-4.1")
        .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")
        .env("QWEN_DISABLE_AUTO_TITLE", "1");
    cmd
}

// The Qwen Code extension (`qwen/`): installed from this checkout with
// `qwen extensions install`, offline, it wires the gate by itself.

#[test]
#[ignore = "drives the real qwen CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn the_extension_installed_from_a_local_folder_blocks_a_failing_change() {
    use crate::e2e::scenarios::{
        ANSWER, ANSWER_CHECK, ANSWER_WRONG, BLOCK, FIXED, failing_change, read_only,
    };
    use crate::e2e::{describe, last_answers};

    let qwen = INFO.binary();
    let repo = TestRepo::new();
    for (path, content) in ANSWER {
        repo.write(path, content);
    }
    repo.verify_script(ANSWER_CHECK);
    repo.commit_all("initial, not wired: the extension is");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("qwen");
    let mut install = host_command(&qwen, &repo);
    install
        .arg("extensions")
        .arg("install")
        .arg(&source)
        .arg("--consent");
    let out = run_bounded(install, RUN_LIMIT);
    assert!(out.status.success(), "{out:?}");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("Extension \"prove-it\" installed successfully and enabled."),
        "{said}"
    );
    let installed = repo.home().join(".qwen/extensions/prove-it");
    assert!(installed.join("hooks/hooks.json").is_file());

    let server = Qwen.start(failing_change());
    let out = Qwen.run(&qwen, &repo, &server, "add a greeting");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    assert!(!repo.path(INFO.wiring).exists(), "{context}");
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let feedback = turns[2].last_user_text();
    assert!(feedback.starts_with(&format!("{BLOCK}1 of 3")), "{context}");
    assert!(feedback.contains(ANSWER_WRONG), "{context}");
    let answer = Qwen.final_answer(&out).unwrap_or_default();
    assert!(answer.ends_with(FIXED), "{answer}\n{context}");
    assert_eq!(last_answers(&repo), ["silent"], "{context}");
    let state = repo.stock_state_tree().unwrap();
    let note = repo.note(&state).unwrap_or_default();
    assert!(
        note.contains("host: qwen"),
        "the extension's hook proved it: {note}\n{context}"
    );

    // The extension's hooks are the user's: a session started below the root is gated too.
    std::fs::create_dir(repo.path("src")).unwrap();
    let server = Qwen.start(read_only());
    let out = Qwen.run_in(
        &qwen,
        &repo,
        &repo.path("src"),
        &server,
        "what is in answer.txt?",
    );
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    assert_eq!(last_answers(&repo), ["silent", "silent"], "{context}");
}

/// Qwen Code ends a turn by itself after its cap of blocks, from its variable or its settings'
/// `stopHookBlockingCap`: set to 3, the gate's budget is 1 and its last block the second, and
/// the agent reports the unverified end before Qwen Code would stop honouring blocks.
#[test]
#[ignore = "drives the real qwen CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn a_lower_block_cap_in_the_variable_or_the_settings_still_lets_the_yield_through() {
    use crate::e2e::describe;
    use crate::e2e::scenarios::{ALWAYS_FAILING, BLOCK, CLAIM, REPORTED, YIELD};
    use crate::fake_model::Reply;

    let qwen = INFO.binary();
    for in_settings in [false, true] {
        let repo = Qwen.wired_repo(ALWAYS_FAILING, &[]);
        if in_settings {
            let file = repo.path(INFO.wiring);
            let mut settings: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            settings["stopHookBlockingCap"] = json!(3);
            std::fs::write(&file, settings.to_string()).unwrap();
            repo.commit_all("Qwen Code honours 2 blocks in a row");
        }
        let script = Script::new(
            vec![
                Reply::Shell("echo change > change.txt"),
                Reply::Text(CLAIM),
                Reply::Text(CLAIM),
            ],
            Reply::Text(REPORTED),
        );
        let server = Qwen.start(script);
        let mut cmd = command(&qwen, &repo, &repo.root, &server, "make a change");
        if !in_settings {
            cmd.env("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "3");
        }
        let out = run_bounded(cmd, RUN_LIMIT);
        let context = describe(&out, &server);
        assert!(out.status.success(), "{context}");
        let seen = server.final_user_text();
        assert_eq!(seen.matches(BLOCK).count(), 1, "{context}");
        assert!(seen.contains(&format!("{BLOCK}1 of 1")), "{context}");
        assert_eq!(seen.matches(YIELD).count(), 0, "the budget is 1: {context}");
        assert!(
            seen.contains("prove-it: NOT_PROVEN: this turn ended unverified (after 1 attempt"),
            "{context}"
        );
        let answer = Qwen.final_answer(&out).unwrap_or_default();
        assert!(answer.ends_with(REPORTED), "{answer}\n{context}");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("overriding and ending the turn"),
            "{context}"
        );
    }
}

/// `qwen --worktree <name>` runs the session in a linked worktree under `.qwen/worktrees/` of
/// the checkout, a worktree nested inside another, as Claude Code's under `.claude/worktrees/`:
/// its stops are gated on the worktree's own state, and its fix is proven there, the checkout
/// around it untouched.
#[test]
#[ignore = "drives the real qwen CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn a_session_in_a_qwen_worktree_is_gated_on_the_worktrees_state() {
    use crate::e2e::describe;
    use crate::e2e::scenarios::{ANSWER, ANSWER_CHECK, ANSWER_WRONG, BLOCK, FIXED, failing_change};

    let qwen = INFO.binary();
    let repo = Qwen.wired_repo(ANSWER_CHECK, ANSWER);
    let server = Qwen.start(failing_change());
    let mut cmd = command(&qwen, &repo, &repo.root, &server, "add a greeting");
    cmd.arg("--worktree=greeting");
    let out = run_bounded(cmd, RUN_LIMIT);
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    let worktree = repo.path(".qwen/worktrees/greeting");
    assert!(
        repo.git(&["worktree", "list"])
            .contains(&worktree.display().to_string()),
        "{context}"
    );
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let feedback = turns[2].last_user_text();
    assert!(feedback.starts_with(&format!("{BLOCK}1 of 3")), "{context}");
    assert!(feedback.contains(ANSWER_WRONG), "{context}");
    let answer = Qwen.final_answer(&out).unwrap_or_default();
    assert!(answer.ends_with(FIXED), "{answer}\n{context}");
    // The change and its fix are the worktree's; the checkout has neither.
    assert!(worktree.join("greeting.txt").is_file(), "{context}");
    assert!(!repo.path("greeting.txt").exists(), "{context}");
    let mut status = repo.command(assert_cmd::cargo::cargo_bin("git-prove-it"));
    status.arg("status").current_dir(&worktree);
    let out = status.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}\n{context}");
    let notes = repo.git(&["notes", "--ref", "prove-it", "list"]);
    let proofs: Vec<String> = notes
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(|note| repo.git(&["cat-file", "-p", note]))
        .collect();
    assert!(
        proofs.iter().any(|proof| proof.contains("host: qwen")),
        "{proofs:?}\n{context}"
    );
}

/// `qwen -p` in plain text: each outcome a person must see (bounded, skipped, could not check,
/// ended unverified) ends its stdout as the agent's report.
#[test]
#[ignore = "drives the real qwen CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn qwen_p_text_output_ends_with_the_report_of_each_outcome() {
    crate::e2e::headless::each_outcome_reaches_the_text_output(
        &Qwen,
        &|binary, repo, server, prompt| {
            let cmd = command_as(binary, repo, &repo.root, server, prompt, "text");
            run_bounded(cmd, RUN_LIMIT)
        },
    );
}
