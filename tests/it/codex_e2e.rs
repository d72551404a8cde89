//! Codex CLI, end to end: `codex exec --json` in a repository wired by
//! `git prove-it init --host codex` (`.codex/hooks.json`), against a fake OpenAI Responses API,
//! so Codex itself calls `git prove-it hook codex` at SessionStart and Stop and reads our
//! answers. Codex loads a repository's `.codex/` only for a trusted project, and runs its hooks
//! in `codex exec` only with `--dangerously-bypass-hook-trust`: each run's own `CODEX_HOME`
//! trusts the repository, as `codex exec --trust` would record it. Codex has no cap on blocks,
//! and `codex exec` shows no `systemMessage`. The scenarios are `crate::e2e::scenarios`;
//! doctor's reading of Codex's trust is tested below.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::e2e::harness::{host_command, wired_by_init};
use crate::e2e::scenarios::{
    ANSWER, ANSWER_CHECK, ANSWER_WRONG, BLOCK, FIXED, failing_change, read_only,
};
use crate::e2e::{
    Agent, Feedback, HostInfo, describe, json_lines, last_answers, run_bounded, scenarios_for,
};
use crate::fake_model::responses::Responses;
use crate::fake_model::{FakeModel, Script};
use crate::harness::TestRepo;

/// Codex has no cap on blocks: a run past this was not ended by the gate's budget, and fails.
const RUN_LIMIT: Duration = Duration::from_secs(120);
/// The variable that holds the fake server's key (`env_key` in the provider's config).
const KEY_VAR: &str = "PROVE_IT_FAKE_OPENAI_KEY";

pub struct Codex;

pub(crate) const INFO: HostInfo = HostInfo {
    name: "codex",
    binary: "codex",
    env: "PROVE_IT_CODEX",
    product: "Codex CLI",
    wiring: ".codex/hooks.json",
};

scenarios_for!(
    Codex,
    "drives the real codex CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"
);

impl Agent for Codex {
    fn info(&self) -> &'static HostInfo {
        &INFO
    }

    fn start(&self, script: Script) -> FakeModel {
        FakeModel::start(Responses, script)
    }

    fn run_in(
        &self,
        binary: &Path,
        repo: &TestRepo,
        dir: &Path,
        server: &FakeModel,
        prompt: &str,
    ) -> Output {
        run_codex_trusting(binary, repo, dir, server, prompt, Trust::Recorded)
    }

    /// `codex exec resume --last`: the most recent session (`CODEX_HOME` keeps it).
    fn run_resumed(
        &self,
        binary: &Path,
        repo: &TestRepo,
        server: &FakeModel,
        prompt: &str,
    ) -> Option<Output> {
        let resume = ["resume", "--last"];
        Some(run_codex_as(
            binary,
            repo,
            &repo.root,
            server,
            prompt,
            Trust::Recorded,
            &resume,
        ))
    }

    fn shows_notices(&self) -> bool {
        false
    }

    /// A user message in a `<hook_prompt>` tag naming the hook that answered: the one init
    /// wired in the repository.
    fn feedback(&self) -> Feedback {
        Feedback::Framed {
            mark: "<hook_prompt",
            before: "/.codex/hooks.json\">",
        }
    }

    fn shell_tool(&self) -> &'static str {
        "exec_command"
    }

    fn final_answer(&self, out: &Output) -> Option<String> {
        self.answers(out)?.pop()
    }

    /// What the agent said, message by message, as `codex exec` shows it.
    fn answers(&self, out: &Output) -> Option<Vec<String>> {
        Some(
            json_lines(out)
                .into_iter()
                .filter(|event| {
                    event["type"] == "item.completed" && event["item"]["type"] == "agent_message"
                })
                .filter_map(|event| event["item"]["text"].as_str().map(str::to_owned))
                .collect(),
        )
    }
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
fn codex_home(repo: &TestRepo, server: &FakeModel, trust: Trust) -> PathBuf {
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

fn run_codex_trusting(
    codex: &Path,
    repo: &TestRepo,
    dir: &Path,
    server: &FakeModel,
    prompt: &str,
    trust: Trust,
) -> Output {
    run_codex_as(codex, repo, dir, server, prompt, trust, &[])
}

/// [`run_codex_trusting`], as `codex exec <exec_args>...` (`resume --last`), with `--json`.
fn run_codex_as(
    codex: &Path,
    repo: &TestRepo,
    dir: &Path,
    server: &FakeModel,
    prompt: &str,
    trust: Trust,
    exec_args: &[&str],
) -> Output {
    let json = [exec_args, &["--json"]].concat();
    run_codex_exec(codex, repo, dir, server, prompt, trust, &json)
}

/// `codex exec <exec_args>...` on `prompt`, in its plain text output unless `--json` is one
/// of them.
fn run_codex_exec(
    codex: &Path,
    repo: &TestRepo,
    dir: &Path,
    server: &FakeModel,
    prompt: &str,
    trust: Trust,
    exec_args: &[&str],
) -> Output {
    let mut cmd = host_command(codex, repo);
    cmd.current_dir(dir);
    cmd.arg("exec").args(exec_args);
    cmd.arg("--skip-git-repo-check");
    if trust == Trust::Flag {
        cmd.arg("--trust");
    }
    cmd.args(["--dangerously-bypass-hook-trust", prompt])
        .env("CODEX_HOME", codex_home(repo, server, trust))
        .env(KEY_VAR, "sk-fake-key-for-tests");
    run_bounded(cmd, RUN_LIMIT)
}

// Codex only: doctor reads the project trust Codex records itself.

#[test]
#[ignore = "drives the real codex CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn doctor_reads_the_project_trust_codex_records() {
    let codex = INFO.binary();
    let repo = wired_by_init(&INFO, "echo fine", ANSWER);
    let server = Codex.start(read_only());
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
        &repo.root,
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

// The Codex plugin (`codex/.codex-plugin/`, listed by `.agents/plugins/marketplace.json`):
// installed from this checkout as a local marketplace, offline, it wires the gate by itself.

#[test]
#[ignore = "drives the real codex CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn the_plugin_installed_from_a_local_marketplace_blocks_a_failing_change() {
    let codex = INFO.binary();
    let repo = TestRepo::new();
    for (path, content) in ANSWER {
        repo.write(path, content);
    }
    repo.verify_script(ANSWER_CHECK);
    repo.commit_all("initial, not wired: the plugin is");
    let server = Codex.start(failing_change());
    let home = codex_home(&repo, &server, Trust::Recorded);
    // Plugins on, as a user has them (the other runs turn them off to stay offline at start).
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert!(config.contains("\nplugins = false\n"));
    std::fs::write(
        home.join("config.toml"),
        config.replace("\nplugins = false\n", "\nplugins = true\n"),
    )
    .unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    for args in [
        &["plugin", "marketplace", "add", root][..],
        &["plugin", "add", "prove-it@git-prove-it"],
    ] {
        let mut cmd = host_command(&codex, &repo);
        cmd.args(args).env("CODEX_HOME", &home);
        let out = run_bounded(cmd, RUN_LIMIT);
        assert!(out.status.success(), "codex {args:?}: {out:?}");
    }
    let installed = home.join("plugins/cache/git-prove-it/prove-it/0.1.0");
    assert!(installed.join(".codex-plugin/plugin.json").is_file());
    trust_plugin_hooks(&codex, &repo, &home);

    // Not run_codex_trusting: it writes the run's config.toml afresh, without the plugin.
    let mut cmd = host_command(&codex, &repo);
    cmd.args(["exec", "--json", "--skip-git-repo-check", "add a greeting"])
        .env("CODEX_HOME", &home)
        .env(KEY_VAR, "sk-fake-key-for-tests");
    let out = run_bounded(cmd, RUN_LIMIT);
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    assert!(!repo.path(".codex/hooks.json").exists(), "{context}");
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let feedback = turns[2].last_user_text();
    assert!(feedback.contains("<hook_prompt"), "{context}");
    assert!(feedback.contains(&format!("{BLOCK}1 of 3")), "{context}");
    assert!(feedback.contains(ANSWER_WRONG), "{context}");
    assert_eq!(
        Codex.final_answer(&out).as_deref(),
        Some(FIXED),
        "{context}"
    );
    let state = repo.stock_state_tree().unwrap();
    let note = repo.note(&state).unwrap_or_default();
    assert!(
        note.contains("host: codex"),
        "the plugin's hook proved it: {note}\n{context}"
    );
}

/// Trusts the plugin's hooks as approving them in interactive Codex does: `hooks/list` from
/// `codex app-server` gives each hook's key and hash, recorded as
/// `[hooks.state."<key>"] trusted_hash` in `config.toml`.
fn trust_plugin_hooks(codex: &Path, repo: &TestRepo, home: &Path) {
    use std::io::{BufRead as _, Write as _};
    let mut cmd = host_command(codex, repo);
    let mut child = cmd
        .arg("app-server")
        .env("CODEX_HOME", home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cwd = serde_json::json!([repo.root]);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"clientInfo":{{"name":"prove-it-tests","version":"1"}}}}}}
{{"jsonrpc":"2.0","method":"initialized"}}
{{"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{{"cwds":{cwd}}}}}"#
    )
    .unwrap();
    let listed = std::io::BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
        .find(|message| message["id"] == 2);
    let _ = child.kill();
    let _ = child.wait();
    let listed = listed.expect("codex app-server answers hooks/list");
    let hooks = listed["result"]["data"][0]["hooks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    for hook in &hooks {
        let hash = hook["currentHash"].as_str().unwrap();
        let hash = hash.split('/').next().unwrap();
        config += &format!(
            "\n[hooks.state.{:?}]\ntrusted_hash = {hash:?}\n",
            hook["key"].as_str().unwrap()
        );
    }
    assert_eq!(
        hooks.len(),
        3,
        "the plugin's SessionStart, Stop and PostToolUse hooks: {listed}"
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
}

/// `codex exec` without `--json` prints the agent's last message alone on stdout: each outcome
/// a person must see (bounded, skipped, could not check, ended unverified) ends it as the
/// agent's report.
#[test]
#[ignore = "drives the real codex CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn codex_exec_text_output_ends_with_the_report_of_each_outcome() {
    crate::e2e::headless::each_outcome_reaches_the_text_output(
        &Codex,
        &|binary, repo, server, prompt| {
            run_codex_exec(
                binary,
                repo,
                &repo.root,
                server,
                prompt,
                Trust::Recorded,
                &[],
            )
        },
    );
}

/// The agent deletes the failing test instead of fixing the code: the stop names it to the
/// agent, and the run ends with the agent's report of it.
#[test]
#[ignore = "drives the real codex CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn deleting_a_failing_test_is_named_to_the_agent() {
    crate::e2e::scenarios::deleting_a_failing_test_is_named_to_the_agent(&Codex);
}

/// An honest session that adds a test: no report, no block.
#[test]
#[ignore = "drives the real codex CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn adding_a_test_is_never_reported() {
    crate::e2e::scenarios::adding_a_test_is_never_reported(&Codex);
}

/// Under `prove-it.weakening = block` the deleted test sends the agent back, naming it.
#[test]
#[ignore = "drives the real codex CLI; see docs/development.md: .ci/install-hosts, then cargo test _e2e -- --ignored"]
fn under_block_a_deleted_test_sends_the_agent_back() {
    crate::e2e::scenarios::under_block_a_deleted_test_sends_the_agent_back(&Codex);
}
