//! Driving a real agent host: finding its binary (or failing, saying how to install it), the
//! PATH it runs with, bounding every run, and what each host module tells the scenarios.

use std::io::Read as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::fake_model::{FakeModel, Script};
use assert_cmd::cargo::cargo_bin;

use crate::harness::{TOOLS, TestRepo, built_path, is_program};

/// A host the end-to-end tests drive, by name.
#[derive(Debug, Clone, Copy)]
pub struct HostInfo {
    /// Its name in `git prove-it hook <name>` and `init --host <name>`.
    pub name: &'static str,
    /// The binary on PATH.
    pub binary: &'static str,
    /// The variable that names the binary (as `.ci/run` sets it).
    pub env: &'static str,
    /// Its product name, for messages.
    pub product: &'static str,
    /// The file `git prove-it init --host <name>` wires.
    pub wiring: &'static str,
}

impl HostInfo {
    /// The host's binary: `$PROVE_IT_<HOST>`, else its name on the caller's PATH. Missing, the
    /// test fails, saying how to install it.
    pub fn binary(&self) -> PathBuf {
        let found = match std::env::var_os(self.env) {
            Some(path) => Some(PathBuf::from(path)),
            None => std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(|dir| dir.join(self.binary))
                .find(|candidate| is_program(candidate)),
        };
        match found {
            Some(path) if is_program(&path) => path,
            _ => panic!(
                "no {} binary `{}`: {} is {}, and `{}` is not on PATH; install the pinned \
                 version with `.ci/install-hosts DIR` and run with {}=DIR/bin/{} (see \
                 docs/development.md)",
                self.product,
                self.binary,
                self.env,
                std::env::var(self.env).map_or("unset".into(), |value| format!("`{value}`")),
                self.binary,
                self.env,
                self.binary,
            ),
        }
    }
}

/// How the model is shown a block's reason in its next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    /// As the whole user message, raw.
    Raw,
    /// As a user message of its own, after the host's own preamble (Copilot's current date).
    AfterPreamble,
    /// Inside a user message of the host's own, which always holds `mark`; the reason follows
    /// `before` (the host's words right in front of it).
    Framed {
        mark: &'static str,
        before: &'static str,
    },
}

/// One host as the scenarios drive it: how it is launched and wired, and how to read its wire
/// format. A reader that returns None says the host shows no such thing.
pub trait Agent: Sync {
    fn info(&self) -> &'static HostInfo;

    /// A fake model server speaking the host's model API, answering with `script`.
    fn start(&self, script: Script) -> FakeModel;

    /// A repository with `files` and verify.sh (`#!/bin/sh` and `verify`), wired to the host,
    /// committed.
    fn wired_repo(&self, verify: &str, files: &[(&str, &str)]) -> TestRepo {
        wired_by_init(self.info(), verify, files)
    }

    /// Run the host non-interactively on `prompt` in the repository against the server,
    /// bounded so that a run the gate did not end fails the test.
    fn run(&self, binary: &Path, repo: &TestRepo, server: &FakeModel, prompt: &str) -> Output {
        self.run_in(binary, repo, &repo.root, server, prompt)
    }

    /// [`Agent::run`], started in `dir` (the repository or a directory below it).
    fn run_in(
        &self,
        binary: &Path,
        repo: &TestRepo,
        dir: &Path,
        server: &FakeModel,
        prompt: &str,
    ) -> Output;

    /// Run the host again on `prompt`, resuming the repository's last session (Gemini CLI's
    /// `--resume latest`, Claude Code's `--continue`); None where the module does not say how,
    /// which fails the scenario that needs it.
    fn run_resumed(
        &self,
        _binary: &Path,
        _repo: &TestRepo,
        _server: &FakeModel,
        _prompt: &str,
    ) -> Option<Output> {
        None
    }

    /// Whether a resumed session shows the model the blocks of its earlier turns (Qwen Code
    /// keeps only the prompts and the answers, joined).
    fn resumes_with_blocks(&self) -> bool {
        true
    }

    /// Whether the host, started in a subdirectory, reads the hooks wired at the repository's
    /// root (ADAPTERS.md, "Where each host reads its hooks").
    fn reads_project_hooks_below_root(&self) -> bool {
        true
    }

    /// Wire the gate in the host's user-level configuration of the repository's runs, which
    /// it reads wherever it starts, where the host needs that to gate a subdirectory; the
    /// variables that name that configuration, for `doctor` to find it.
    fn wire_for_every_folder(&self, _repo: &TestRepo) -> Vec<(&'static str, PathBuf)> {
        Vec::new()
    }

    /// Whether the host shows the user a hook's notice; where it does not, the gate tells the
    /// agent in one last block.
    fn shows_notices(&self) -> bool;

    fn feedback(&self) -> Feedback;

    /// The shell tool the host offers the model (which the fake model calls).
    fn shell_tool(&self) -> &'static str;

    /// What the model is shown of a shell command that printed nothing.
    fn empty_shell_output(&self) -> Option<&'static str> {
        None
    }

    /// Whether the hook answers a stop's notice from outside the gate's count (a skip, the
    /// gate's own failure) by stopping the agent with it, which the host's headless output
    /// shows itself (Gemini CLI's `Agent execution stopped: ...`); elsewhere it is told to the
    /// agent as one last block, whose report is the run's final answer.
    fn stops_with_the_notice(&self) -> bool {
        false
    }

    /// The notices the host showed the user (read where `shows_notices`, or where it
    /// `stops_with_the_notice`).
    fn notices(&self, _out: &Output) -> Vec<String> {
        Vec::new()
    }

    /// The agent's final answer as the run's output shows it (an error result is none).
    fn final_answer(&self, out: &Output) -> Option<String>;

    /// Whether `final_answer` holds all the turn's answers joined (Gemini CLI's `response`),
    /// so that only its end is the last answer.
    fn joins_answers(&self) -> bool {
        false
    }

    /// Every answer of the agent, as the run's output lists them.
    fn answers(&self, _out: &Output) -> Option<Vec<String>> {
        None
    }

    /// The blocks the host showed the user, each as the gate's reason.
    fn blocks_shown(&self, _out: &Output) -> Option<Vec<String>> {
        None
    }

    /// The user messages of the session (the prompt, then each block) as the host records them.
    fn user_messages(&self, _out: &Output) -> Option<Vec<String>> {
        None
    }

    /// The agent's answers as the host's own transcript of the session records them.
    fn transcript_answers(&self, _repo: &TestRepo) -> Option<Vec<String>> {
        None
    }
}

/// PATH for a host's run: as for every test program (see `crate::harness::TOOLS`), with the
/// host binary's directory after this build's, and node's (most hosts' launchers are Node.js
/// scripts).
pub fn host_path(binary: &Path) -> std::ffi::OsString {
    let ours = cargo_bin("git-prove-it");
    let mut first = vec![
        ours.parent()
            .expect("the binary has a directory")
            .to_owned(),
    ];
    first.extend(binary.parent().map(Path::to_path_buf));
    let mut tools = TOOLS.to_vec();
    tools.push("node");
    built_path(&first, &tools)
}

/// The host's command in the repository, with the hermetic environment and its built PATH.
pub fn host_command(binary: &Path, repo: &TestRepo) -> Command {
    let mut cmd = repo.command(binary);
    cmd.env("PATH", host_path(binary));
    cmd
}

/// Run `cmd` to its end, or kill its whole process group after `limit` and fail the test:
/// a host that the gate's budget did not stop must not hang the suite.
pub fn run_bounded(mut cmd: Command, limit: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().expect("the host starts");
    // Drain both pipes on threads, so a chatty host never blocks on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the host") {
            break status;
        }
        if started.elapsed() > limit {
            // The group: the host's own children (hooks, shells, node workers) go with it.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            let stdout = out.join().unwrap_or_default();
            let stderr = err.join().unwrap_or_default();
            panic!(
                "the host ran past {limit:?} and was killed; stdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&stdout),
                String::from_utf8_lossy(&stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever the host left running in its group is not waited for.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// A host's run, its status, output and the model's view, for a failure message.
pub fn describe(out: &Output, server: &FakeModel) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}\nrequests:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        server.describe()
    )
}

/// A repository with `files` and verify.sh (`#!/bin/sh` and `verify`), wired to `host` by
/// `git prove-it init --host`, committed.
pub fn wired_by_init(host: &HostInfo, verify: &str, files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    for (path, content) in files {
        repo.write(path, content);
    }
    repo.verify_script(verify);
    repo.prove_it(&["init", "--yes", "--no-demo", "--host", host.name])
        .assert()
        .success();
    assert!(
        repo.path(host.wiring).is_file(),
        "init wrote {}",
        host.wiring
    );
    repo.commit_all("initial, wired by init");
    // The scenarios count verify.sh's runs at stops; proving ahead has a scenario of its own.
    repo.git(&["config", "prove-it.ahead", "off"]);
    repo
}

/// A host's output in JSON lines (`stream-json`, `--json`...): each line that parses.
pub fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The gate's last answer in each session of the repository, as its turn state records it:
/// `silent`, `notice` or `block`.
pub fn last_answers(repo: &TestRepo) -> Vec<String> {
    let dir = repo.path(".git/prove-it/sessions");
    let mut answers = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().extension().is_some_and(|ext| ext == "json") {
            let state: Value =
                serde_json::from_slice(&std::fs::read(entry.path()).unwrap()).unwrap();
            answers.push(answer_kind(&state["last"]["answer"]).to_owned());
        }
    }
    answers
}

/// What the gate's saved answer (its verdict and facts, as data) was to the host: `silent`,
/// `notice` or `block`, as `report` words each verdict; empty when there is none.
fn answer_kind(answer: &Value) -> &'static str {
    if answer.is_null() {
        return "";
    }
    if answer["to_the_agent"] == true {
        return "block";
    }
    let verdict = &answer["verdict"];
    match verdict.as_str() {
        Some("Bounded" | "Skipped") => "notice",
        Some(_) => "",
        None if verdict.get("Block").is_some() => "block",
        None if verdict.get("Yield").is_some() => "notice",
        // A proof found, or nothing changed: silent, unless the session had no anchor.
        None if verdict["Quiet"] == "Proven" && answer["facts"]["anchor_missing"] == true => {
            "notice"
        }
        None if verdict.get("Quiet").is_some() => "silent",
        None => "",
    }
}

/// Whether a model request offers a tool named `name`, in any of the APIs' shapes: Anthropic's
/// and Responses' `tools[].name`, Chat Completions' `tools[].function.name`, Gemini's
/// `tools[].functionDeclarations[].name`.
pub fn offers_tool(body: &Value, name: &str) -> bool {
    body["tools"].as_array().into_iter().flatten().any(|tool| {
        tool["name"] == name
            || tool["function"]["name"] == name
            || tool["functionDeclarations"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|declaration| declaration["name"] == name)
    })
}
