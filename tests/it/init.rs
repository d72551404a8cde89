//! `git prove-it init`: stack detection, the verify.sh it writes, host wiring, and the
//! demonstration, which must leave the repository exactly as it found it.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use predicates::prelude::*;

use crate::harness::TestRepo;

/// Every file under `dir` (the .git directory included) with its mode and content.
fn snapshot(dir: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let content = if meta.file_type().is_symlink() {
                    std::fs::read_link(&path)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes()
                } else {
                    std::fs::read(&path).unwrap()
                };
                let rel = path.strip_prefix(dir.ancestors().last().unwrap()).unwrap();
                files.insert(
                    rel.display().to_string(),
                    (meta.permissions().mode(), content),
                );
            }
        }
    }
    files
}

/// The lines of verify.sh that run something (neither comments nor blank).
fn active_lines(repo: &TestRepo) -> Vec<String> {
    std::fs::read_to_string(repo.path("verify.sh"))
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[track_caller]
fn assert_demo_shown(stdout: &str) {
    for needle in [
        "verify.sh: exit code 0 in ",
        ": PROVEN, the gate lets the turn end",
        "a copy of verify.sh with 'exit 1' appended: exit code 1 in ",
        ": DISPROVEN, the gate sends the agent back with:",
        "    | prove-it: DISPROVEN (attempt 1 of 3 for this turn): verify.sh failed (exit code 1).",
        "is a violation, not a fix",
        "PROVE_IT_SKIP=1",
    ] {
        assert!(stdout.contains(needle), "{needle:?} not in:\n{stdout}");
    }
}

/// A sample project: file names and contents at its root.
type Files = &'static [(&'static str, &'static str)];

#[test]
fn each_stack_gets_its_checks_commented_and_one_active_check_that_passes() {
    let cases: &[(Files, &str, &str)] = &[
        (
            &[("Cargo.toml", "[package]\nname = \"x\"\n")],
            "stack: Rust (Cargo.toml)",
            "# cargo test --quiet",
        ),
        (
            &[(
                "package.json",
                r#"{"scripts": {"test": "jest", "lint": "eslint ."}}"#,
            )],
            "stack: Node (npm) (package.json)",
            "# npm run lint",
        ),
        (
            &[
                ("package.json", r#"{"scripts": {"test": "vitest"}}"#),
                ("pnpm-lock.yaml", ""),
            ],
            "stack: Node (pnpm) (pnpm-lock.yaml)",
            "# pnpm test",
        ),
        (
            &[("package.json", "{}"), ("yarn.lock", "")],
            "stack: Node (yarn) (yarn.lock)",
            "# yarn test",
        ),
        (
            &[("package.json", "{}"), ("bun.lock", "")],
            "stack: Node (bun) (bun.lock)",
            "# bun run test",
        ),
        (
            &[("pyproject.toml", "[project]\n")],
            "stack: Python (pyproject.toml)",
            "# python -m pytest -q ${PROVE_IT_REPORTS:+\"--junitxml=$PROVE_IT_REPORTS/pytest.xml\"}",
        ),
        (
            &[("pyproject.toml", "[project]\n"), ("uv.lock", "")],
            "stack: Python (uv) (uv.lock)",
            "# uv run pytest -q ${PROVE_IT_REPORTS:+\"--junitxml=$PROVE_IT_REPORTS/pytest.xml\"}",
        ),
        (
            &[("go.mod", "module x\n")],
            "stack: Go (go.mod)",
            "# go test ./...",
        ),
        (
            &[("Makefile", "test:\n\ttrue\n")],
            "stack: Make (Makefile)",
            "# make test",
        ),
        (
            &[("build.gradle.kts", ""), ("gradlew", "")],
            "stack: Gradle (build.gradle.kts)",
            "# ./gradlew --quiet check",
        ),
        (
            &[("pom.xml", "<project/>\n")],
            "stack: Maven (pom.xml)",
            "# mvn --quiet verify",
        ),
        (
            &[("notes.txt", "hello\n")],
            "stack: none recognised at the worktree root",
            "# make test",
        ),
    ];
    for (files, stack_line, check) in cases {
        let repo = TestRepo::new();
        for (name, content) in *files {
            repo.write(name, content);
        }
        let assert = repo.prove_it(&["init", "--yes"]).assert().code(0);
        let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
        assert!(
            stdout.contains(stack_line),
            "{stack_line:?} not in:\n{stdout}"
        );
        let script = std::fs::read_to_string(repo.path("verify.sh")).unwrap();
        assert!(
            script.contains(&format!("\n{check}\n")),
            "{check:?} not in:\n{script}"
        );
        assert_eq!(
            active_lines(&repo),
            [
                "set -eu",
                "base=$(git rev-parse -q --verify HEAD || git hash-object -t tree /dev/null)",
                "git diff --check \"$base\"",
            ]
        );
        assert_demo_shown(&stdout);
        // The day-one verify.sh proves the new repository (unborn HEAD) for real.
        repo.prove_it(&["run"]).assert().code(0);
    }
}

#[test]
fn several_stacks_are_all_listed() {
    let repo = TestRepo::new();
    repo.write("Cargo.toml", "[package]\n");
    repo.write("package.json", "{}");
    repo.write("Makefile", "check:\n\ttrue\n");
    // Each stack's tools on PATH, so that init has nothing to say about installing them.
    let bin = tools_on_path(&repo, &["cargo", "npm", "make"]);
    repo.prove_it(&["init", "--yes"])
        .env("PATH", path_with(&bin))
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "stack: Rust (Cargo.toml)\nstack: Node (npm) (package.json)\nstack: Make (Makefile)\n",
        ));
}

/// The day-one check looks at what changed since the last commit, so a whitespace error there
/// is caught, and the demonstration says verify.sh does not pass yet.
#[test]
fn the_active_check_catches_whitespace_errors_since_the_last_commit() {
    let repo = TestRepo::new();
    repo.write("a.txt", "fine\n");
    repo.commit_all("initial");
    repo.prove_it(&["init", "--yes"]).assert().code(0);
    repo.write("a.txt", "trailing space \n");
    repo.prove_it(&["run"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("trailing whitespace"));
    repo.prove_it(&["init", "--yes"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("verify.sh: exit code 2"))
        .stdout(predicate::str::contains(
            "hint: verify.sh does not pass yet",
        ));
}

#[test]
fn the_demonstration_changes_nothing_and_records_nothing() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    repo.prove_it(&["init", "--yes", "--host", "claude", "--pre-push"])
        .assert()
        .code(0);
    assert!(
        !repo.git(&["for-each-ref"]).contains("refs/notes/"),
        "the first init recorded something"
    );
    assert!(!repo.path(".git/prove-it").exists(), "no state directory");

    // The second run has nothing to set up: everything it does is the demonstration.
    let before = snapshot(&repo.root);
    let assert = repo
        .prove_it(&["init", "--yes", "--host", "claude", "--pre-push"])
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert_demo_shown(&stdout);
    assert!(stdout.contains("kept verify.sh as it is (it is armed; --force overwrites it)"));
    assert!(stdout.contains("already wired: Claude Code in "));
    assert!(stdout.contains("already installed: the pre-push hook at "));
    assert!(stdout.contains("already set: notes.prove-it.mergeStrategy = union"));
    let after = snapshot(&repo.root);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "files appeared or vanished"
    );
    for (path, content) in &before {
        assert!(after[path] == *content, "{path} changed");
    }
    assert!(!repo.git(&["for-each-ref"]).contains("refs/notes/"));
}

#[test]
fn init_sets_the_union_merge_strategy_and_installs_the_pre_push_hook() {
    let repo = TestRepo::with_commit();
    repo.remove("verify.sh");
    repo.prove_it(&["init", "--yes", "--pre-push"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("installed the pre-push hook at "))
        .stdout(predicate::str::contains(
            "set notes.prove-it.mergeStrategy = union",
        ));
    assert_eq!(
        repo.git(&["config", "notes.prove-it.mergeStrategy"]),
        "union\n"
    );
    let hook = std::fs::read_to_string(repo.path(".git/hooks/pre-push")).unwrap();
    assert!(hook.contains("exec git prove-it hook git pre-push"));
}

#[test]
fn an_existing_verify_sh_is_kept_unless_forced() {
    let repo = TestRepo::new();
    repo.write("Cargo.toml", "");
    repo.verify_script("echo mine");
    repo.prove_it(&["init", "--yes"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("kept verify.sh as it is"));
    assert_eq!(
        std::fs::read_to_string(repo.path("verify.sh")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    repo.prove_it(&["init", "--yes", "--force"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "overwrote verify.sh: one active check",
        ));
    assert!(
        std::fs::read_to_string(repo.path("verify.sh"))
            .unwrap()
            .contains("# cargo test --quiet")
    );
}

/// Claude Code's subagents work in `.claude/worktrees/`, which the state would hold as embedded
/// repositories (a session's stop refused while one holds changes): wiring Claude Code ignores
/// it, once, keeping what `.gitignore` held; and `doctor` has nothing to say of it after.
#[test]
fn wiring_claude_code_ignores_its_subagents_worktrees_once() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "target/");
    repo.prove_it(&["init", "--yes", "--host", "claude"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "ignored .claude/worktrees/ in .gitignore",
        ))
        // What init changed is in the line that commits it.
        .stdout(predicate::str::contains(
            ".claude/settings.json .gitignore && git commit",
        ));
    assert_eq!(
        std::fs::read_to_string(repo.path(".gitignore")).unwrap(),
        "target/\n.claude/worktrees/\n"
    );
    repo.prove_it(&["init", "--yes", "--host", "claude"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("ignored .claude/worktrees/").not());
    assert_eq!(
        std::fs::read_to_string(repo.path(".gitignore")).unwrap(),
        "target/\n.claude/worktrees/\n"
    );
    let doctor = repo.prove_it(&["doctor"]).output().unwrap();
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        !said.contains(".claude/worktrees/ is not ignored"),
        "{said}"
    );
}

/// Other hosts leave `.gitignore` alone.
#[test]
fn wiring_another_host_leaves_gitignore_alone() {
    let repo = TestRepo::new();
    repo.prove_it(&["init", "--yes", "--host", "codex"])
        .assert()
        .code(0);
    assert!(!repo.path(".gitignore").exists());
}

#[test]
fn claude_settings_are_merged_keeping_every_other_key_and_hook() {
    let repo = TestRepo::new();
    let existing = r#"{
  "permissions": { "allow": ["Bash(cargo test:*)"] },
  "hooks": {
    "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "./guard.sh" }] }],
    "Stop": [{ "hooks": [{ "type": "command", "command": "./notify.sh", "timeout": 5 }] }]
  },
  "model": "opus"
}
"#;
    repo.write(".claude/settings.json", existing);
    repo.prove_it(&["init", "--yes", "--host", "claude"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "wired Claude Code: SessionStart, Stop, SubagentStart, SubagentStop, TaskCompleted, TeammateIdle and PostToolUse hooks merged into ",
        ));
    let text = std::fs::read_to_string(repo.path(".claude/settings.json")).unwrap();
    let merged: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = merged.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["permissions", "hooks", "model"], "{text}");
    assert_eq!(merged["permissions"]["allow"][0], "Bash(cargo test:*)");
    assert_eq!(merged["model"], "opus");
    let hooks = &merged["hooks"];
    assert_eq!(hooks["PreToolUse"][0]["hooks"][0]["command"], "./guard.sh");
    assert_eq!(hooks["Stop"][0]["hooks"][0]["command"], "./notify.sh");
    assert_eq!(
        hooks["Stop"][1]["hooks"][0]["command"],
        "git prove-it hook claude"
    );
    assert_eq!(hooks["Stop"][1]["hooks"][0]["timeout"], 900);
    assert_eq!(
        hooks["SessionStart"][0]["hooks"][0]["command"],
        "git prove-it hook claude"
    );
    assert_eq!(hooks["SessionStart"][0]["hooks"][0]["timeout"], 60);

    // Twice is once.
    repo.prove_it(&["init", "--yes", "--host", "claude"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("already wired: Claude Code"));
    assert_eq!(
        std::fs::read_to_string(repo.path(".claude/settings.json")).unwrap(),
        text
    );
}

#[test]
fn malformed_settings_are_an_error_that_changes_nothing() {
    let repo = TestRepo::new();
    repo.write(".claude/settings.json", "{ \"hooks\": { \"Stop\": [ }\n");
    repo.prove_it(&["init", "--yes", "--host", "claude"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: could not wire Claude Code: ",
        ))
        .stderr(predicate::str::contains("cannot be read as settings"))
        .stderr(predicate::str::contains("caused by: it is not valid JSON"))
        .stderr(predicate::str::contains("nothing was changed"));
    assert!(!repo.path("verify.sh").exists());
    assert_eq!(
        std::fs::read_to_string(repo.path(".claude/settings.json")).unwrap(),
        "{ \"hooks\": { \"Stop\": [ }\n"
    );
    assert!(
        repo.git_output(&["config", "notes.prove-it.mergeStrategy"])
            .stdout
            .is_empty()
    );
}

#[test]
fn without_a_terminal_init_asks_for_yes_and_changes_nothing() {
    let repo = TestRepo::new();
    repo.prove_it(&["init", "--host", "claude"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("git prove-it init will:"))
        .stderr(predicate::str::contains(
            "  - write verify.sh with one active check",
        ))
        .stderr(predicate::str::contains(
            "  - add the gate's SessionStart, Stop, SubagentStart, SubagentStop, TaskCompleted, TeammateIdle and PostToolUse hooks for Claude Code to ",
        ))
        .stderr(predicate::str::contains(
            "hint: run 'git prove-it init --yes'",
        ));
    assert!(!repo.path("verify.sh").exists());
    assert!(!repo.path(".claude").exists());
}

/// A verify.sh that exits before its last line would pass whatever is appended to it: the
/// demonstration shows that instead of pretending the gate refused.
#[test]
fn a_verify_sh_that_ignores_its_last_lines_is_shown_as_such() {
    let repo = TestRepo::new();
    repo.verify_script("exit 0");
    repo.prove_it(&["init", "--yes"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "a copy of verify.sh with 'exit 1' appended: exit code 0 in ",
        ))
        .stdout(predicate::str::contains("hint: the copy passed although"));
}

#[test]
fn a_verify_sh_that_is_not_armed_is_reported() {
    let repo = TestRepo::new();
    repo.write("verify.sh", "#!/bin/sh\nexit 0\n");
    repo.prove_it(&["init", "--yes"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "kept verify.sh as it is (it is not executable by its owner; --force overwrites it)",
        ))
        .stdout(predicate::str::contains(
            "no demonstration: verify.sh is not executable by its owner",
        ));
}

/// The stop hook's command as `init` wrote it in a host's configuration, and its timeout.
fn stop_command(config: &serde_json::Value, event: &str) -> (String, Option<u64>) {
    let entry = &config["hooks"][event].as_array().unwrap()[0];
    // Claude Code's shape nests hooks in a group; the others list them directly.
    let hook = entry.get("hooks").map_or(entry, |hooks| &hooks[0]);
    let command = hook
        .get("command")
        .or_else(|| hook.get("bash"))
        .and_then(serde_json::Value::as_str)
        .unwrap()
        .to_string();
    let timeout = hook
        .get("timeout")
        .or_else(|| hook.get("timeoutSec"))
        .and_then(serde_json::Value::as_u64);
    (command, timeout)
}

#[test]
fn every_host_is_wired_where_it_looks_and_its_command_runs_the_gate() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.verify_script("echo 'check 7 failed'\nexit 1");
    repo.commit_all("initial");
    let mut args = vec!["init", "--yes", "--no-demo"];
    // claude twice: a host named again is wired once.
    for host in [
        "claude", "codex", "gemini", "copilot", "cursor", "vscode", "qwen", "claude",
    ] {
        args.extend(["--host", host]);
    }
    repo.prove_it(&args)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("wired Claude Code: ").count(1))
        .stdout(predicate::str::contains(
            "trust: Codex skips hooks it does not trust, silently",
        ))
        .stdout(predicate::str::contains(
            "trust: Gemini CLI loads a repository's hooks only in a trusted folder",
        ));
    let before = snapshot(&repo.root);
    repo.prove_it(&args)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("already wired: Cursor in "));
    assert_eq!(before, snapshot(&repo.root), "init twice changes nothing");

    let cwd = repo.root.display().to_string();
    for (path, event, timeout, payload) in [
        (
            ".codex/hooks.json",
            "Stop",
            Some(900),
            serde_json::json!({"session_id": "s", "turn_id": "t", "cwd": cwd,
                "hook_event_name": "Stop", "stop_hook_active": false}),
        ),
        (
            ".gemini/settings.json",
            "AfterAgent",
            Some(900_000),
            serde_json::json!({"session_id": "s", "cwd": cwd, "hook_event_name": "AfterAgent",
                "prompt_response": "done", "stop_hook_active": false}),
        ),
        (
            ".github/hooks/prove-it-copilot.json",
            "agentStop",
            Some(900),
            serde_json::json!({"sessionId": "s", "timestamp": 1, "cwd": cwd,
                "stopReason": "end_turn", "stop_hook_active": false}),
        ),
        (
            ".cursor/hooks.json",
            "stop",
            None,
            serde_json::json!({"conversation_id": "s", "hook_event_name": "stop",
                "workspace_roots": [cwd], "status": "completed", "loop_count": 0}),
        ),
        (
            ".github/hooks/prove-it-vscode.json",
            "Stop",
            Some(900),
            serde_json::json!({"sessionId": "s", "cwd": cwd, "hookEventName": "Stop",
                "stop_hook_active": false}),
        ),
        (
            ".qwen/settings.json",
            "Stop",
            Some(900),
            serde_json::json!({"session_id": "s", "cwd": cwd, "hook_event_name": "Stop",
                "prompt_id": "s########0", "stop_hook_active": false,
                "last_assistant_message": "done", "background_tasks": []}),
        ),
    ] {
        let config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(repo.path(path)).unwrap()).unwrap();
        let (command, wired_timeout) = stop_command(&config, event);
        assert_eq!(wired_timeout, timeout, "{path}");
        // Run the command line as the host would, through a shell, in a changed repository.
        repo.write("b.txt", &format!("{path}\n"));
        let mut shell = repo.command("sh");
        shell.args(["-c", &command]);
        let out = assert_cmd::Command::from_std(shell)
            .write_stdin(payload.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(out.status.success(), "{path}: {stdout}");
        assert!(
            stdout.contains("check 7 failed") && stdout.contains("attempt 1 of 3"),
            "{path}: the wired command blocks with verify.sh's output: {stdout}"
        );
    }
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "ok    Gemini CLI: the gate's hooks are wired in .gemini/settings.json\n",
        ))
        .stdout(predicate::str::contains(
            "ok    Cursor: the gate's hooks are wired in .cursor/hooks.json\n",
        ))
        .stdout(predicate::str::contains("warn  Copilot CLI: "))
        .stdout(predicate::str::contains("likely do not run"));
}

/// A directory in the test's home holding a stub of each of `tools`.
fn tools_on_path(repo: &TestRepo, tools: &[&str]) -> std::path::PathBuf {
    let bin = repo.home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in tools {
        std::fs::write(bin.join(tool), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(bin.join(tool), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// PATH as the tests build it, with `extra` first.
fn path_with(extra: &Path) -> std::ffi::OsString {
    let mut dirs = vec![extra.to_owned()];
    dirs.extend(std::env::split_paths(
        &crate::harness::path_with_our_binary(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// Init suggested `uv run pytest -q` without uv on PATH. It still lists the
/// stack's checks, but says what to install, in its output and in verify.sh.
#[test]
fn init_says_what_to_install_when_a_stacks_tool_is_not_on_path() {
    let repo = TestRepo::new();
    repo.write("pyproject.toml", "[project]\nname = \"x\"\n");
    repo.write("uv.lock", "");
    repo.prove_it(&["init", "--yes", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "stack: Python (uv) (uv.lock)\nhint: uv not on PATH here: install it before enabling the Python (uv) checks in verify.sh\n",
        ));
    let verify = std::fs::read_to_string(repo.path("verify.sh")).unwrap();
    assert!(
        verify.contains(
            "# Not on PATH when init ran, install before enabling: uv\n# uv run ruff check .\n"
        ),
        "{verify}"
    );

    // With uv on PATH, nothing is said of it.
    let other = TestRepo::new();
    other.write("pyproject.toml", "[project]\nname = \"x\"\n");
    other.write("uv.lock", "");
    let bin = tools_on_path(&other, &["uv"]);
    other
        .prove_it(&["init", "--yes", "--no-demo"])
        .env("PATH", path_with(&bin))
        .assert()
        .code(0)
        .stdout(predicate::str::contains("stack: Python (uv) (uv.lock)\n"))
        .stdout(predicate::str::contains("not on PATH").not());
    let verify = std::fs::read_to_string(other.path("verify.sh")).unwrap();
    assert!(!verify.contains("Not on PATH"), "{verify}");
}

/// The stacks a newcomer met that init did not know.
#[test]
fn init_recognises_flutter_python_requirements_ruby_dotnet_deno_zig_and_cmake() {
    let repo = TestRepo::new();
    for (file, content) in [
        (
            "pubspec.yaml",
            "dependencies:\n  flutter:\n    sdk: flutter\n",
        ),
        ("requirements.txt", "pytest\n"),
        ("Gemfile", "source 'https://rubygems.org'\n"),
        ("App.csproj", "<Project/>\n"),
        ("deno.json", "{}\n"),
        ("build.zig", "\n"),
        ("CMakeLists.txt", "project(x)\n"),
    ] {
        repo.write(file, content);
    }
    let assert = repo
        .prove_it(&["init", "--yes", "--no-demo"])
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    for line in [
        "stack: Python (requirements.txt)",
        "stack: Flutter (pubspec.yaml)",
        "stack: Ruby (Gemfile)",
        "stack: .NET (App.csproj)",
        "stack: Deno (deno.json)",
        "stack: Zig (build.zig)",
        "stack: CMake (CMakeLists.txt)",
    ] {
        assert!(
            stdout.contains(&format!("{line}\n")),
            "{line} in:\n{stdout}"
        );
    }
    let verify = std::fs::read_to_string(repo.path("verify.sh")).unwrap();
    for check in [
        "# flutter test\n",
        "# bundle exec rake test\n",
        "# dotnet test --nologo\n",
        "# deno test\n",
        "# zig build test\n",
    ] {
        assert!(verify.contains(check), "{check} in:\n{verify}");
    }
}

/// Init did not say that verify.sh and the host files must be committed for
/// teammates and CI; it names exactly the files it wrote, and nothing when it wrote none.
#[test]
fn init_says_to_commit_what_it_wrote_and_only_that() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    repo.prove_it(&["init", "--yes", "--host", "claude", "--host", "codex", "--no-demo"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "\ncommit what init wrote, so that teammates and CI get it too:\n  git add verify.sh .claude/settings.json .codex/hooks.json .gitignore && git commit -m 'Gate agent turns on verify.sh'\n",
        ));
    // The command it gives works as given.
    repo.git(&[
        "add",
        "verify.sh",
        ".claude/settings.json",
        ".codex/hooks.json",
        ".gitignore",
    ]);
    repo.prove_it(&[
        "init",
        "--yes",
        "--host",
        "claude",
        "--host",
        "codex",
        "--no-demo",
    ])
    .assert()
    .code(0)
    .stdout(predicate::str::contains("commit what init wrote").not());
}

/// For a Rust project that uses cargo-nextest, init offers nextest's run writing JUnit into the
/// run's report directory through a tool config file of its own: enabled as written, a real
/// nextest run gives the proof its tests by name, and the project's own configuration is never
/// edited. Needs cargo-nextest: `PROVE_IT_NEXTEST=/path/to/cargo-nextest`.
#[test]
#[ignore = "needs cargo-nextest, named by PROVE_IT_NEXTEST"]
fn init_nextest_line_gives_a_real_nextest_runs_tests_by_name() {
    let nextest = std::env::var("PROVE_IT_NEXTEST").expect("PROVE_IT_NEXTEST");
    let cargo = std::env::var("CARGO").expect("CARGO, set by cargo test");
    let repo = TestRepo::new();
    let config = "[profile.default]\nretries = 0\n";
    repo.write(".config/nextest.toml", config);
    repo.write(".gitignore", "/target\n");
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.write(
        "Cargo.lock",
        "# This file is automatically @generated by Cargo.\n# It is not intended for manual \
         editing.\nversion = 4\n\n[[package]]\nname = \"tiny\"\nversion = \"0.1.0\"\n",
    );
    repo.write(
        "src/lib.rs",
        "#[test]\nfn one() {}\n\n#[test]\nfn two() {}\n",
    );
    let stdout = repo.prove_it(&["init", "--yes"]).assert().code(0);
    let stdout = String::from_utf8_lossy(&stdout.get_output().stdout).into_owned();
    assert!(
        stdout.contains("stack: Rust (cargo-nextest) (.config/nextest.toml)"),
        "{stdout}"
    );
    // Enable the nextest lines as a person would, with the toolchain the hermetic run lacks.
    let home = std::env::var("HOME").unwrap_or_default();
    let env = format!(
        "export RUSTUP_HOME='{}' CARGO_HOME='{}' CARGO_TARGET_DIR='{}' CARGO_NET_OFFLINE=true \
         PATH='{}:{}':\"$PATH\"\n",
        std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{home}/.rustup")),
        std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo")),
        repo.home().join("target").display(),
        Path::new(&cargo).parent().unwrap().display(),
        Path::new(&nextest).parent().unwrap().display(),
    );
    let script = std::fs::read_to_string(repo.path("verify.sh")).unwrap();
    let mut enabled = 0;
    let script: String = script
        .lines()
        .map(|line| {
            let line = if line == "set -eu" {
                format!("{line}\n{env}")
            } else if line.starts_with("# [ -z \"${PROVE_IT_REPORTS")
                || line.starts_with("# cargo nextest run")
            {
                enabled += 1;
                line[2..].to_string()
            } else {
                line.to_string()
            };
            format!("{line}\n")
        })
        .collect();
    assert_eq!(enabled, 2, "{script}");
    repo.write("verify.sh", &script);
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().success();
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    let note = repo.note(&tree).unwrap();
    assert!(
        note.contains("tests: passed=2 failed=0 skipped=0 source=junit\ntests-pass-z: "),
        "{note}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path(".config/nextest.toml")).unwrap(),
        config
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    // Run by hand, without the variable, it is a plain nextest run that writes no report.
    let by_hand = repo.command("sh").arg("verify.sh").output().unwrap();
    assert!(by_hand.status.success(), "{by_hand:?}");
}
