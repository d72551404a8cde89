//! Claude Code, end to end: `claude -p --output-format stream-json` in a repository wired with
//! `hooks/claude-settings.json`, against a fake Anthropic Messages API, so Claude Code itself
//! calls `git prove-it hook claude` at SessionStart and Stop and reads our answers. The
//! scenarios are `crate::e2e::scenarios`; the plugin's own tests are below.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::e2e::harness::host_command;
use crate::e2e::scenarios::{
    ALWAYS_FAILING, ANSWER_CHECK, ANSWER_WRONG, QUOTE_THE_NOTICE, REPORTED, YIELD, failing_change,
    reporting_when_told,
};
use crate::e2e::{Agent, Feedback, HostInfo, describe, json_lines, run_bounded, scenarios_for};
use crate::fake_model::anthropic::Anthropic;
use crate::fake_model::{FakeModel, Reply, Script};
use crate::harness::TestRepo;

/// The feedback prefix Claude Code puts before a Stop hook's reason in the model's next turn.
const FEEDBACK: &str = "Stop hook feedback";
/// What Claude Code puts before each line of a Stop hook's notice.
const STOP_SAYS: &str = "Stop says: ";
/// Longer than any scenario needs; a run past it is killed and the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(240);

pub struct Claude;

pub(crate) const INFO: HostInfo = HostInfo {
    name: "claude",
    binary: "claude",
    env: "PROVE_IT_CLAUDE",
    product: "Claude Code",
    wiring: ".claude/settings.json",
};

scenarios_for!(
    Claude,
    "drives the real claude CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"
);

impl Agent for Claude {
    fn info(&self) -> &'static HostInfo {
        &INFO
    }

    fn start(&self, script: Script) -> FakeModel {
        FakeModel::start(Anthropic, script)
    }

    /// Wired by our settings file, as README tells a user to, rather than by init.
    fn wired_repo(&self, verify: &str, files: &[(&str, &str)]) -> TestRepo {
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

    fn run_in(
        &self,
        binary: &Path,
        repo: &TestRepo,
        dir: &Path,
        server: &FakeModel,
        prompt: &str,
    ) -> Output {
        let stream = [
            "--output-format".as_ref(),
            "stream-json".as_ref(),
            "--verbose".as_ref(),
        ];
        run_claude_as(binary, repo, dir, server, prompt, &stream)
    }

    /// `--continue`: the most recent conversation in the folder (`CLAUDE_CONFIG_DIR` keeps it).
    fn run_resumed(
        &self,
        binary: &Path,
        repo: &TestRepo,
        server: &FakeModel,
        prompt: &str,
    ) -> Option<Output> {
        let args = [
            "--continue".as_ref(),
            "--output-format".as_ref(),
            "stream-json".as_ref(),
            "--verbose".as_ref(),
        ];
        Some(run_claude_as(
            binary, repo, &repo.root, server, prompt, &args,
        ))
    }

    /// Claude Code 2.1.328 runs no hook of the root's `.claude/settings.json` when started in
    /// a subdirectory.
    fn reads_project_hooks_below_root(&self) -> bool {
        false
    }

    /// Our settings file as the run's user settings (`CLAUDE_CONFIG_DIR/settings.json`).
    fn wire_for_every_folder(&self, repo: &TestRepo) -> Vec<(&'static str, PathBuf)> {
        let config = repo.home().join("claude-config");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::copy(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("hooks/claude-settings.json"),
            config.join("settings.json"),
        )
        .unwrap();
        vec![("CLAUDE_CONFIG_DIR", config)]
    }

    /// `claude -p` shows no `systemMessage` in its result: the hook sees
    /// `CLAUDE_CODE_ENTRYPOINT=sdk-cli` and tells the agent instead.
    fn shows_notices(&self) -> bool {
        false
    }

    fn feedback(&self) -> Feedback {
        Feedback::Framed {
            mark: FEEDBACK,
            before: "",
        }
    }

    fn shell_tool(&self) -> &'static str {
        "Bash"
    }

    /// The texts Claude Code showed the user as system messages (a hook's `systemMessage`),
    /// without the "Stop says: " it puts before each line of a Stop hook's.
    fn notices(&self, out: &Output) -> Vec<String> {
        json_lines(out)
            .into_iter()
            .filter(|event| event["type"] == "system")
            .filter_map(|event| {
                let text = event["content"].as_str()?;
                let lines: Vec<&str> = text
                    .lines()
                    .map(|line| line.strip_prefix(STOP_SAYS).unwrap_or(line))
                    .collect();
                Some(lines.join("\n"))
            })
            .collect()
    }

    /// The run's final result event's text, unless it is an error.
    fn final_answer(&self, out: &Output) -> Option<String> {
        let result = json_lines(out)
            .into_iter()
            .rfind(|event| event["type"] == "result")?;
        if result["is_error"] != false {
            return None;
        }
        result["result"].as_str().map(str::to_owned)
    }
}

fn run_claude_with(
    claude: &Path,
    repo: &TestRepo,
    server: &FakeModel,
    prompt: &str,
    extra: &[&std::ffi::OsStr],
) -> Output {
    let stream = [
        "--output-format".as_ref(),
        "stream-json".as_ref(),
        "--verbose".as_ref(),
    ];
    let args: Vec<&std::ffi::OsStr> = stream.into_iter().chain(extra.iter().copied()).collect();
    run_claude_as(claude, repo, &repo.root, server, prompt, &args)
}

/// `claude -p` in `dir` with `args` (its output format among them).
fn run_claude_as(
    claude: &Path,
    repo: &TestRepo,
    dir: &Path,
    server: &FakeModel,
    prompt: &str,
    extra: &[&std::ffi::OsStr],
) -> Output {
    let config = repo.home().join("claude-config");
    std::fs::create_dir_all(&config).unwrap();
    let mut cmd = host_command(claude, repo);
    cmd.current_dir(dir);
    cmd.args(["-p", prompt, "--allowedTools", "Bash"])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .args(extra);
    run_bounded(cmd, RUN_LIMIT)
}

/// How many blocks of the gate the model was shown, by the end of the conversation.
fn blocks_seen(server: &FakeModel) -> usize {
    server.final_user_text().matches(FEEDBACK).count()
}

// Claude Code only: this repository is also a Claude Code plugin (`.claude-plugin/`,
// `hooks/hooks.json`).

fn plugin_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
#[ignore = "drives the real claude CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn the_plugin_wires_the_gate_and_announces_it_once() {
    let claude = INFO.binary();
    // No .claude/settings.json: the hooks come from the plugin alone.
    let repo = TestRepo::new();
    repo.write("answer.txt", "4\n");
    repo.verify_script(ANSWER_CHECK);
    repo.commit_all("initial");
    let server = Claude.start(failing_change());
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
        json_lines(out).iter().any(|event: &Value| {
            event["subtype"] == "hook_response"
                && event["hook_event"] == "SessionStart"
                && event["output"]
                    .as_str()
                    .is_some_and(|text| text.contains("the gate is armed in this repository"))
        })
    };
    assert!(announced(&out), "{context}");

    // A second session in the same repository is not told again.
    let server = Claude.start(Script::new(vec![], Reply::Text("Nothing to do.")));
    let out = run_claude_with(&claude, &repo, &server, "anything to do?", &plugin);
    assert!(out.status.success(), "{}", describe(&out, &server));
    assert!(!announced(&out), "{}", describe(&out, &server));
}

#[test]
#[ignore = "drives the real claude CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn claude_code_validates_the_plugin_and_its_marketplace() {
    let claude = INFO.binary();
    let repo = TestRepo::new();
    let config = repo.home().join("claude-config");
    let out = host_command(&claude, &repo)
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

/// `claude -p --output-format json` (and text) ended an unverified turn with
/// the model's "All tests pass." as its result, exit 0: the yield was a `systemMessage`, which
/// neither format shows. The hook now tells the agent in one last block, and the result is the
/// agent's report of it (the model here does as it is asked).
#[test]
#[ignore = "drives the real claude CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn claude_p_json_and_text_results_report_the_unverified_end() {
    let claude = INFO.binary();
    for format in ["json", "text"] {
        let repo = Claude.wired_repo(ALWAYS_FAILING, &[]);
        let server = Claude.start(reporting_when_told());
        let args = ["--output-format".as_ref(), format.as_ref()];
        let out = run_claude_as(&claude, &repo, &repo.root, &server, "make a change", &args);
        let context = format!("{format}: {}", describe(&out, &server));
        assert!(out.status.success(), "{context}");
        let last = server.agent_turns().last().unwrap().last_user_text();
        assert!(last.contains(YIELD), "{context}");
        assert!(last.contains(QUOTE_THE_NOTICE), "{context}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let result = if format == "json" {
            let result: Value = serde_json::from_str(&stdout).expect("one JSON result");
            assert_eq!(result["is_error"], false, "{context}");
            result["result"].as_str().unwrap_or_default().to_owned()
        } else {
            stdout.trim().to_owned()
        };
        assert_eq!(result, REPORTED, "{context}");
        // What a script checks afterwards: the state is not proven.
        repo.prove_it(&["status"]).assert().code(1);
    }
}

/// `claude -p` in plain text prints the agent's last answer alone: each outcome a person must
/// see (bounded, skipped, could not check, ended unverified) ends it as the agent's report.
#[test]
#[ignore = "drives the real claude CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn claude_p_text_output_ends_with_the_report_of_each_outcome() {
    crate::e2e::headless::each_outcome_reaches_the_text_output(
        &Claude,
        &|binary, repo, server, prompt| {
            let args = ["--output-format".as_ref(), "text".as_ref()];
            run_claude_as(binary, repo, &repo.root, server, prompt, &args)
        },
    );
}

/// The agent deletes the failing test instead of fixing the code: the stop names it to the
/// agent, and the run ends with the agent's report of it.
#[test]
#[ignore = "drives the real claude CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn deleting_a_failing_test_is_named_to_the_agent() {
    crate::e2e::scenarios::deleting_a_failing_test_is_named_to_the_agent(&Claude);
}

/// An honest session that adds a test: no report, no block.
#[test]
#[ignore = "drives the real claude CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn adding_a_test_is_never_reported() {
    crate::e2e::scenarios::adding_a_test_is_never_reported(&Claude);
}

/// Under `prove-it.weakening = block` the deleted test sends the agent back, naming it.
#[test]
#[ignore = "drives the real claude CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn under_block_a_deleted_test_sends_the_agent_back() {
    crate::e2e::scenarios::under_block_a_deleted_test_sends_the_agent_back(&Claude);
}
