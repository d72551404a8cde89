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
}

pub const CLAUDE: Host = Host {
    name: "claude",
    binary: "claude",
    env: "PROVE_IT_CLAUDE",
    product: "Claude Code",
};
pub const CODEX: Host = Host {
    name: "codex",
    binary: "codex",
    env: "PROVE_IT_CODEX",
    product: "Codex CLI",
};
pub const GEMINI: Host = Host {
    name: "gemini",
    binary: "gemini",
    env: "PROVE_IT_GEMINI",
    product: "Gemini CLI",
};
pub const COPILOT: Host = Host {
    name: "copilot",
    binary: "copilot",
    env: "PROVE_IT_COPILOT",
    product: "Copilot CLI",
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
pub fn describe(out: &Output, server: &crate::fake_model::FakeModel) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}\nrequests:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        server.describe()
    )
}
