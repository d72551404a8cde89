//! Running a real agent host against a fake model server: finding its binary, skipping loudly
//! when it is missing, and bounding every run.
//!
//! Each host's binary comes from `PROVE_IT_<HOST>` (e.g. `PROVE_IT_CODEX`) or its name on PATH.
//! Without it the host's tests pass after printing `SKIPPED ...` on stderr, unless
//! `PROVE_IT_E2E_REQUIRED` names the host (a comma-separated list, or `1` for every host), as
//! `.ci/run` does for the hosts it installed: then a missing binary fails the test.

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::fake_model::{FakeModel, Reply, Script};
use crate::harness::TestRepo;

/// A host the end-to-end tests drive.
#[derive(Debug, Clone, Copy)]
pub struct Host {
    /// Its name in `PROVE_IT_E2E_REQUIRED` and in `git prove-it hook <name>`.
    pub name: &'static str,
    /// The binary on PATH.
    pub binary: &'static str,
    /// The variable that names the binary.
    pub env: &'static str,
    /// Its product name, for messages.
    pub product: &'static str,
    /// The file `git prove-it init --host <name>` wires.
    pub wiring: &'static str,
}

pub const CLAUDE: Host = Host {
    name: "claude",
    binary: "claude",
    env: "PROVE_IT_CLAUDE",
    product: "Claude Code",
    wiring: ".claude/settings.json",
};
pub const CODEX: Host = Host {
    name: "codex",
    binary: "codex",
    env: "PROVE_IT_CODEX",
    product: "Codex CLI",
    wiring: ".codex/hooks.json",
};
pub const GEMINI: Host = Host {
    name: "gemini",
    binary: "gemini",
    env: "PROVE_IT_GEMINI",
    product: "Gemini CLI",
    wiring: ".gemini/settings.json",
};
pub const COPILOT: Host = Host {
    name: "copilot",
    binary: "copilot",
    env: "PROVE_IT_COPILOT",
    product: "Copilot CLI",
    wiring: ".github/hooks/prove-it-copilot.json",
};

impl Host {
    fn binary_path(&self) -> Option<PathBuf> {
        if let Some(path) = std::env::var_os(self.env) {
            return Some(PathBuf::from(path));
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(self.binary))
            .find(|candidate| candidate.is_file())
    }

    fn required(&self) -> bool {
        let Some(required) = std::env::var_os("PROVE_IT_E2E_REQUIRED") else {
            return false;
        };
        let required = required.to_string_lossy();
        required == "1" || required.split(',').any(|name| name.trim() == self.name)
    }

    /// The binary, or None after saying on stderr that `test` is skipped. Fails instead when
    /// `PROVE_IT_E2E_REQUIRED` names this host.
    pub fn or_skip(&self, test: &str) -> Option<PathBuf> {
        let found = self.binary_path();
        if found.is_none() {
            assert!(
                !self.required(),
                "PROVE_IT_E2E_REQUIRED names {} but no {} binary was found (set {} or put `{}` on PATH)",
                self.name,
                self.product,
                self.env,
                self.binary
            );
            // Straight to stderr: the test harness captures print macros of passing tests.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: no {} binary (set {} or put `{}` on PATH)",
                self.product,
                self.env,
                self.binary
            );
        }
        found
    }
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
pub fn wired_by_init(host: &Host, verify: &str, files: &[(&str, &str)]) -> TestRepo {
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
            answers.push(state["last"]["kind"].as_str().unwrap_or("").to_owned());
        }
    }
    answers
}

/// The working state is proven by `host`'s stop hook, and stock git reads the proof.
pub fn assert_proven_by(repo: &TestRepo, host: &Host) {
    let state = repo.stock_state_tree().unwrap();
    let note = repo.git(&["notes", "--ref", "prove-it", "show", &state]);
    assert!(note.contains(&format!("tree: {state}")), "{note}");
    assert!(note.contains(&format!("host: {}", host.name)), "{note}");
    repo.prove_it(&["status"]).assert().code(0);
}

/// The working state was not proven (after an always-failing verify.sh).
pub fn assert_unproven(repo: &TestRepo) {
    let state = repo.stock_state_tree().unwrap();
    assert!(repo.note(&state).is_none(), "{state} was proven");
}

/// After the read-only script: the model was asked twice (one command that changes nothing,
/// then the answer), the gate answered the stop silently, verify.sh (MARKS_HOME) never ran, and
/// the worktree is as committed.
pub fn assert_read_only_turn(repo: &TestRepo, server: &FakeModel, context: &str) {
    assert_eq!(server.agent_turns().len(), 2, "{context}");
    assert_eq!(last_answers(repo), ["silent"], "{context}");
    assert_nothing_ran(repo, context);
}

/// After a read-only turn: verify.sh (MARKS_HOME) never ran and the worktree is as committed.
fn assert_nothing_ran(repo: &TestRepo, context: &str) {
    assert!(
        !repo.home().join("verify-ran").exists(),
        "verify.sh ran on a read-only turn: {context}"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "{context}");
}

// The scenarios every host runs: their verify.sh and the model's script.

/// The head of every block of the gate (then "N of M for this turn)").
pub const BLOCK: &str = "prove-it: DISPROVEN (attempt ";
/// The notice that ends an always-failing turn by the default budget.
pub const YIELD: &str = "prove-it: NOT_PROVEN: this turn ended unverified (after 3 attempts)";

/// verify.sh of the failing change: answer.txt (committed as 4) must say 4.
pub const ANSWER_CHECK: &str = "test \"$(cat answer.txt)\" = 4 || \
    { echo \"answer.txt is wrong: expected 4, got $(cat answer.txt)\"; exit 1; }\n\
    echo all checks passed";
/// What ANSWER_CHECK says of the failing change.
pub const ANSWER_WRONG: &str = "answer.txt is wrong: expected 4, got 5";
/// The files ANSWER_CHECK checks.
pub const ANSWER: &[(&str, &str)] = &[("answer.txt", "4\n")];

/// A verify.sh that never passes.
pub const ALWAYS_FAILING: &str = "echo 'check 42 is broken'\nexit 1";

/// A verify.sh that leaves a mark in HOME (which the host, the hook and verify.sh inherit).
pub const MARKS_HOME: &str = "touch \"$HOME/verify-ran\"";

/// A change that breaks ANSWER_CHECK, a claim, then the fix and a claim.
pub fn failing_change() -> Script {
    Script::new(
        vec![
            Reply::Shell("echo hello > greeting.txt && echo 5 > answer.txt"),
            Reply::Text("All tests pass."),
            Reply::Shell("echo 4 > answer.txt"),
        ],
        Reply::Text("Fixed: answer.txt is 4 again, verify.sh passes."),
    )
}

/// A change, then the same claim at every stop.
pub fn always_claiming() -> Script {
    Script::new(
        vec![Reply::Shell("echo change > change.txt")],
        Reply::Text("All tests pass."),
    )
}

/// A change and a claim, then after every block another change (each its own command, so no
/// host's loop detection plays a part) and another claim.
pub fn acting_between_blocks() -> Script {
    Script::new(
        vec![
            Reply::Shell("echo 1 >> change.txt"),
            Reply::Text("All tests pass."),
            Reply::Shell("echo 2 >> change.txt"),
            Reply::Text("Fixed, all tests pass."),
            Reply::Shell("echo 3 >> change.txt"),
            Reply::Text("Fixed again, all tests pass."),
            Reply::Shell("echo 4 >> change.txt"),
        ],
        Reply::Text("Surely fixed now."),
    )
}

/// A command that changes nothing, then an answer.
pub fn read_only() -> Script {
    Script::new(
        vec![Reply::Shell("cat answer.txt")],
        Reply::Text("The answer is 4."),
    )
}

/// verify.sh deleted with a change and a claim, then restored.
pub fn deleting_verify_sh() -> Script {
    Script::new(
        vec![
            Reply::Shell("rm verify.sh && echo 5 > answer.txt"),
            Reply::Text("Done. All tests pass."),
            Reply::Shell("git checkout -- verify.sh"),
        ],
        Reply::Text("Restored verify.sh."),
    )
}

/// How the gate refuses a deleted verify.sh.
pub const REFUSED_DELETION: &str = "verify.sh was armed when this session started";
