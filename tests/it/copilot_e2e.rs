//! Copilot CLI, end to end: `copilot -p --output-format json` in a repository wired by
//! `git prove-it init --host copilot`, offline (`COPILOT_OFFLINE`, a bring-your-own-key
//! provider pointing at a fake OpenAI Chat Completions API), trusted through
//! `COPILOT_ALLOW_ALL`, so Copilot itself calls `git prove-it hook copilot
//! sessionStart|agentStop` and acts on our answers. Copilot shows the user no hook's notice,
//! and its claim is read from its transcript. The scenarios are `crate::e2e::scenarios`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::e2e::harness::{host_command, host_path};
use crate::e2e::{Agent, Feedback, HostInfo, json_lines, run_bounded, scenarios_for};
use crate::fake_model::chat::Chat;
use crate::fake_model::{FakeModel, Script};
use crate::harness::TestRepo;

/// Longer than any scenario needs (each takes about a second); a run past it fails the test.
const RUN_LIMIT: Duration = Duration::from_secs(120);

pub struct Copilot;

const INFO: HostInfo = HostInfo {
    name: "copilot",
    binary: "copilot",
    env: "PROVE_IT_COPILOT",
    product: "Copilot CLI",
    wiring: ".github/hooks/prove-it-copilot.json",
};

scenarios_for!(
    Copilot,
    "drives the real copilot CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"
);

/// Copilot unpacks its 235 MB package into `XDG_CACHE_HOME` on its first run: once for the
/// whole test run (and kept in Cargo's target directory for the next), not once a test.
fn package_cache(copilot: &Path) -> &'static Path {
    static CACHE: OnceLock<PathBuf> = OnceLock::new();
    CACHE.get_or_init(|| {
        let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache");
        let home = tempfile::tempdir().unwrap();
        let out = Command::new(copilot)
            .arg("--version")
            .env_clear()
            .env("PATH", host_path(copilot))
            .env("HOME", home.path())
            .env("XDG_CACHE_HOME", &cache)
            .env("COPILOT_HOME", home.path())
            .output()
            .expect("copilot --version runs");
        assert!(out.status.success(), "copilot --version: {out:?}");
        cache
    })
}

impl Agent for Copilot {
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
        run_copilot_as(binary, repo, dir, server, prompt, &[])
    }

    /// `--continue`: the most recent session (`COPILOT_HOME` keeps it).
    fn run_resumed(
        &self,
        binary: &Path,
        repo: &TestRepo,
        server: &FakeModel,
        prompt: &str,
    ) -> Option<Output> {
        let args = ["--continue"];
        Some(run_copilot_as(
            binary, repo, &repo.root, server, prompt, &args,
        ))
    }

    fn shows_notices(&self) -> bool {
        false
    }

    /// Each block is the model's next user message, after Copilot's date line.
    fn feedback(&self) -> Feedback {
        Feedback::AfterPreamble
    }

    fn shell_tool(&self) -> &'static str {
        "bash"
    }

    fn final_answer(&self, out: &Output) -> Option<String> {
        json_lines(out)
            .iter()
            .filter(|event| event["type"] == "assistant.message")
            .filter_map(|event| event["data"]["content"].as_str())
            .rfind(|content| !content.is_empty())
            .map(str::to_owned)
    }

    /// The user messages of the session (the prompt, then each block of the gate, raw).
    fn user_messages(&self, out: &Output) -> Option<Vec<String>> {
        Some(
            json_lines(out)
                .iter()
                .filter(|event| event["type"] == "user.message")
                .filter_map(|event| event["data"]["content"].as_str().map(str::to_owned))
                .collect(),
        )
    }

    /// The assistant messages of the (only) session Copilot recorded under its home
    /// (`events.jsonl`), which the adapter reads the claim from.
    fn transcript_answers(&self, repo: &TestRepo) -> Option<Vec<String>> {
        let sessions = repo.home().join("copilot-home/session-state");
        let mut events: Vec<Value> = Vec::new();
        for entry in std::fs::read_dir(&sessions).unwrap().flatten() {
            let file = entry.path().join("events.jsonl");
            if let Ok(text) = std::fs::read_to_string(&file) {
                events.extend(
                    text.lines()
                        .filter_map(|line| serde_json::from_str(line).ok()),
                );
            }
        }
        Some(
            events
                .iter()
                .filter(|event| event["type"] == "assistant.message")
                .filter_map(|event| event["data"]["content"].as_str().map(str::to_owned))
                .filter(|content| !content.is_empty())
                .collect(),
        )
    }
}

/// One headless run of `copilot -p` on `prompt` in `dir`, with `extra` arguments, in JSON.
fn run_copilot_as(
    binary: &Path,
    repo: &TestRepo,
    dir: &Path,
    server: &FakeModel,
    prompt: &str,
    extra: &[&str],
) -> Output {
    let json = [&["--output-format", "json"], extra].concat();
    run_copilot_p(binary, repo, dir, server, prompt, &json)
}

/// One headless run of `copilot -p` on `prompt` in `dir`, with `extra` arguments, in plain
/// text unless they say otherwise.
fn run_copilot_p(
    binary: &Path,
    repo: &TestRepo,
    dir: &Path,
    server: &FakeModel,
    prompt: &str,
    extra: &[&str],
) -> Output {
    let home = repo.home().join("copilot-home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = host_command(binary, repo);
    cmd.current_dir(dir);
    cmd.args(["-p", prompt, "--allow-all-tools", "--no-auto-update"])
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
        .env("XDG_CACHE_HOME", package_cache(binary))
        .env("COPILOT_ALLOW_ALL", "true");
    cmd.args(extra);
    run_bounded(cmd, RUN_LIMIT)
}

/// `copilot -p` in plain text: each outcome a person must see (bounded, skipped, could not
/// check, ended unverified) ends its stdout as the agent's report.
#[test]
#[ignore = "drives the real copilot CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn copilot_p_text_output_ends_with_the_report_of_each_outcome() {
    crate::e2e::headless::each_outcome_reaches_the_text_output(
        &Copilot,
        &|binary, repo, server, prompt| {
            run_copilot_p(binary, repo, &repo.root, server, prompt, &[])
        },
    );
}
