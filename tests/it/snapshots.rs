//! What each host's hook prints for each verdict (a pass, a failing turn to its unverified end,
//! an edited verify.sh, a person's skip, input it cannot read), and what each command that reads
//! or runs proofs prints, human and JSON, kept as snapshots (`insta`) and reviewed like code: a change of wording or of a host's protocol shows as a diff in review. Paths,
//! object ids and times are replaced by placeholders. To accept a change:
//! `INSTA_UPDATE=always cargo test --test it snapshots`, then read the diff of `snapshots/`.

use serde_json::Value;

use assert_cmd::cargo::cargo_bin;

use crate::harness::{BareRemote, TestRepo, path_with_our_binary};
use crate::hosts::{ALL, Host};

/// The hook's whole answer: exit code, stdout and stderr.
fn answer(repo: &TestRepo, host: Host, event: (Option<&str>, String)) -> String {
    answer_with(repo, host, event, &[])
}

/// The hook's whole answer, with `env` set for it.
fn answer_with(
    repo: &TestRepo,
    host: Host,
    event: (Option<&str>, String),
    env: &[(&str, &str)],
) -> String {
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.args(["hook", host.name()]).args(event.0);
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(event.1)
        .output()
        .unwrap();
    let mut text = format!("exit: {}\n", out.status.code().unwrap_or(-1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // One JSON object a line: shown pretty, its fields in order, so that a diff reads well.
    for line in stdout.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(json) => text.push_str(&serde_json::to_string_pretty(&json).unwrap()),
            Err(_) => text.push_str(line),
        }
        text.push('\n');
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stderr.is_empty() {
        text.push_str("stderr:\n");
        text.push_str(&stderr);
    }
    text
}

fn event(event: (Option<&'static str>, Value)) -> (Option<&'static str>, String) {
    (event.0, event.1.to_string())
}

/// What differs from run to run in an output, each with the placeholder it is shown as, replaced
/// in order. (`regex-lite`, not insta's filters: those bring `regex` into the test build, whose
/// features differ from the release build's and so build gix again for the repository's unit
/// check.)
#[derive(Clone, Default)]
struct Scrub(Vec<(regex_lite::Regex, &'static str)>);

impl Scrub {
    fn pattern(mut self, pattern: &str, placeholder: &'static str) -> Self {
        let pattern = regex_lite::Regex::new(pattern).expect("a valid pattern");
        self.0.push((pattern, placeholder));
        self
    }

    fn literal(self, text: &str, placeholder: &'static str) -> Self {
        self.pattern(&regex_lite::escape(text), placeholder)
    }

    fn apply(&self, text: &str) -> String {
        self.0
            .iter()
            .fold(text.to_string(), |text, (pattern, placeholder)| {
                pattern
                    .replace_all(&text, regex_lite::NoExpand(placeholder))
                    .into_owned()
            })
    }
}

/// Snapshot `text` as `name`, with what differs from run to run replaced.
fn snapshot(repo: &TestRepo, name: &str, text: &str) {
    snapshot_scrubbed(repo, &Scrub::default(), name, text);
}

/// Snapshot `text` as `name`, scrubbed by `scrub` first, then of what differs in every output:
/// the repository's paths, object ids, durations.
fn snapshot_scrubbed(repo: &TestRepo, scrub: &Scrub, name: &str, text: &str) {
    let root = std::fs::canonicalize(&repo.root).unwrap();
    let scrub = scrub
        .clone()
        .literal(&root.display().to_string(), "[REPO]")
        .literal(&repo.root.display().to_string(), "[REPO]")
        .literal(&repo.home().display().to_string(), "[HOME]")
        .pattern(r"\b[0-9a-f]{40}\b", "[OID]")
        .pattern(r"\b[0-9a-f]{12}\b", "[OID12]")
        .pattern(r"\b\d+\.\d+ s\b", "[SECS] s")
        .pattern(r"\b\d+ ms\b", "[MS] ms");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, scrub.apply(text)));
}

/// A repository whose verify.sh passes or fails on the line it prints.
fn repository(passes: bool) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.verify_script(if passes {
        "echo 'all 3 tests passed'"
    } else {
        "echo 'test check_42 ... FAILED'\nexit 1"
    });
    repo.commit_all("initial");
    repo
}

/// Every host's answers to a turn whose verify.sh fails: the session's start, each stop until
/// the turn ends unverified.
#[test]
fn each_hosts_answers_to_a_failing_turn() {
    for host in ALL {
        let repo = repository(false);
        let mut text = format!(
            "== start\n{}",
            answer(&repo, host, event(host.start(&repo, "s1")))
        );
        repo.write("b.txt", "change\n");
        for after in 0..6 {
            let stop = answer(&repo, host, event(host.stop(&repo, "s1", after)));
            // The turn ends at the first answer that is not a block of the budget: its
            // end unverified, told as a notice or, where notices are not shown, as one last
            // block.
            let ended = !stop.contains("DISPROVEN") || stop.contains("NOT_PROVEN");
            text.push_str(&format!("== stop {}\n{stop}", after + 1));
            if ended {
                break;
            }
        }
        snapshot(&repo, &format!("{}-failing-turn", host.name()), &text);
    }
}

/// Every host's answer to a stop whose verify.sh passes, and to the next, found proven.
#[test]
fn each_hosts_answers_to_a_passing_turn() {
    for host in ALL {
        let repo = repository(true);
        let mut text = format!(
            "== start\n{}",
            answer(&repo, host, event(host.start(&repo, "s1")))
        );
        repo.write("b.txt", "change\n");
        text.push_str(&format!(
            "== stop, run\n{}",
            answer(&repo, host, event(host.stop(&repo, "s1", 0)))
        ));
        text.push_str(&format!(
            "== stop, proven\n{}",
            answer(&repo, host, event(host.stop(&repo, "s1", 0)))
        ));
        snapshot(&repo, &format!("{}-passing-turn", host.name()), &text);
    }
}

/// Every host's answer to a turn that edited verify.sh and passes: proven, bounded by the edit,
/// with the diff since the session's start.
#[test]
fn each_hosts_answer_to_an_edited_verify_sh() {
    for host in ALL {
        let repo = repository(true);
        let mut text = format!(
            "== start\n{}",
            answer(&repo, host, event(host.start(&repo, "s1")))
        );
        repo.verify_script("echo 'all 2 tests passed'");
        text.push_str(&format!(
            "== stop\n{}",
            answer(&repo, host, event(host.stop(&repo, "s1", 0)))
        ));
        snapshot(&repo, &format!("{}-edited-verify", host.name()), &text);
    }
}

/// Every host's answer to a stop a person skipped (`PROVE_IT_SKIP=1`): the turn ends
/// unverified, visibly.
#[test]
fn each_hosts_answer_to_a_skipped_stop() {
    for host in ALL {
        let repo = repository(false);
        answer(&repo, host, event(host.start(&repo, "s1")));
        repo.write("b.txt", "change\n");
        let text = answer_with(
            &repo,
            host,
            event(host.stop(&repo, "s1", 0)),
            &[("PROVE_IT_SKIP", "1")],
        );
        snapshot(&repo, &format!("{}-skipped-stop", host.name()), &text);
    }
}

/// Every host's answer to input it cannot read: loud, in its own protocol.
#[test]
fn each_hosts_answer_to_malformed_input() {
    for host in ALL {
        let repo = repository(true);
        let text = answer(
            &repo,
            host,
            (
                Some("Stop").filter(|_| host == Host::Copilot),
                "{not json".to_string(),
            ),
        );
        snapshot(&repo, &format!("{}-malformed-input", host.name()), &text);
    }
}

/// A command's whole output: exit code, stdout and stderr.
fn command(repo: &TestRepo, args: &[&str]) -> String {
    command_in(repo, args, "", &[], true)
}

/// The human and JSON output of the commands that read proofs, on a history of one proven
/// commit and one that is not.
#[test]
fn the_reading_commands_human_and_json_output() {
    let repo = repository(true);
    repo.prove_it(&["run"]).assert().success();
    repo.write("b.txt", "unproven\n");
    repo.commit_all("second");
    // Times of day and durations, which differ from run to run.
    let scrub = Scrub::default()
        .pattern(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", "[TIME]")
        .pattern(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", "[TIME]")
        .pattern(r#""duration_ms": \d+"#, r#""duration_ms": [MS]"#)
        .pattern(r"\b\d+ (seconds|minutes|hours) ago\b", "[AGO]");
    for args in [
        &["status"][..],
        &["status", "--json"],
        &["check", "HEAD~1", "HEAD"],
        &["check", "--json", "HEAD~1", "HEAD"],
        &["log", "--color", "never"],
        &["log", "--json"],
    ] {
        let name = format!("command-{}", args.join("-").replace("--", ""));
        snapshot_scrubbed(&repo, &scrub, &name, &command(&repo, args));
    }
}

/// The human and JSON output of the commands that run verify.sh: the working state failing
/// and passing, a commit, a range, a bisection, and the ledger of a session's refusal.
#[test]
fn the_running_commands_human_and_json_output() {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    repo.verify_script(
        "grep -q good a.txt && echo 'all 1 tests passed' || { echo 'test a ... FAILED'; exit 1; }",
    );
    repo.commit_all("good");
    for n in 1..=3 {
        repo.write("b.txt", &format!("{n}\n"));
        repo.commit_all(&format!("good {n}"));
    }
    repo.write("a.txt", "bad\n");
    repo.commit_all("bad");
    let scrub = Scrub::default()
        .pattern(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", "[TIME]")
        .pattern(r#""duration_ms": \d+"#, r#""duration_ms": [MS]"#)
        .pattern(r"\bin \d+(\.\d+)? ?m?s\b", "in [DURATION]")
        .pattern(r"/tmp/[^ \n\x22]*", "[TMP]")
        .pattern(r"\b\d+ s ago\b", "[AGO]")
        .pattern(
            r#""recorded_secs_ago": \d+"#,
            r#""recorded_secs_ago": [SECS]"#,
        )
        // The short ids the progress lines name commits by.
        .pattern(r"\bcommit [0-9a-f]{7}\b", "commit [OID7]");
    for args in [
        &["run"][..],
        &["run", "--json"],
        &["run", "HEAD~1"],
        &["run", "HEAD~1", "--json"],
        &["run", "HEAD~4..HEAD~1", "--jobs", "1"],
        &["run", "HEAD~4..HEAD", "--jobs", "1", "--json"],
        &["bisect", "HEAD~4", "HEAD"],
        &["bisect", "HEAD~4", "HEAD", "--json"],
    ] {
        let name = format!("command-{}", args.join("-").replace("--", ""));
        snapshot_scrubbed(&repo, &scrub, &name, &command(&repo, args));
    }
    repo.write("a.txt", "good again\n");
    for args in [&["run"][..], &["run", "--json"]] {
        let name = format!("command-{}-passing", args.join("-").replace("--", ""));
        snapshot_scrubbed(&repo, &scrub, &name, &command(&repo, args));
    }
}

/// A command's whole output run with `args`, from `dir` of the repository (`""`: its root),
/// with `env` set and the git identity taken away when `identity` is false.
fn command_in(
    repo: &TestRepo,
    args: &[&str],
    dir: &str,
    env: &[(&str, &str)],
    identity: bool,
) -> String {
    let mut cmd = repo.prove_it(args);
    cmd.current_dir(repo.path(dir));
    for (name, value) in env {
        cmd.env(name, value);
    }
    if !identity {
        for name in [
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
        ] {
            cmd.env_remove(name);
        }
        cmd.env("EMAIL", "");
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stdout = serde_json::from_str::<Value>(&stdout).map_or_else(
        |_| stdout.to_string(),
        |json| format!("{}\n", serde_json::to_string_pretty(&json).unwrap()),
    );
    let mut text = format!(
        "$ {}git prove-it {}\nexit: {}\n{stdout}",
        if dir.is_empty() {
            String::new()
        } else {
            format!("(in {dir}/) ")
        },
        args.join(" "),
        out.status.code().unwrap_or(-1),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stderr.is_empty() {
        text.push_str("stderr:\n");
        text.push_str(&stderr);
    }
    text
}

/// `doctor --run` and `doctor --run --json`, each run's output after the last's of its kind.
#[derive(Default)]
struct DoctorOutput {
    human: String,
    json: String,
}

impl DoctorOutput {
    /// Both runs, as [`command_in`] takes its arguments.
    fn add(&mut self, repo: &TestRepo, dir: &str, env: &[(&str, &str)], identity: bool) {
        let human = command_in(repo, &["doctor", "--run"], dir, env, identity);
        self.human.push_str(&human);
        let json = command_in(repo, &["doctor", "--run", "--json"], dir, env, identity);
        self.json.push_str(&json);
    }
}

/// How doctor's snapshots are scrubbed: this build's path, which the check of what git runs for
/// `git prove-it` names, is the same placeholder on every machine.
fn doctor_scrub() -> Scrub {
    Scrub::default().literal(&cargo_bin("git-prove-it").display().to_string(), "[BIN]")
}

/// doctor's human and JSON output on a set-up with something wrong in every part: checks that
/// cannot run and paths no check reads, hosts wired badly or not at all, hooks turned off, the
/// gate skipped, no pre-push hook, no identity, no remote, notes merged stock; then the same
/// repository with its settings, its checks file and verify.sh unreadable or broken.
#[test]
fn doctor_human_and_json_output_of_a_broken_set_up() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    repo.prove_it(&[
        "init",
        "--yes",
        "--no-demo",
        "--host",
        "claude",
        "--host",
        "codex",
    ])
    .assert()
    .code(0);
    repo.remove("verify.sh");
    repo.write(
        "prove-it.toml",
        "[checks.api]\nrun = \"api/check.sh\"\ninputs = [\"api\"]\n\n\
         [checks.web]\nrun = \"web/check.sh\"\ninputs = [\"web\"]\n",
    );
    repo.write("api/check.sh", "#!/bin/sh\necho '2 passed in 0.01s'\n");
    repo.chmod("api/check.sh", 0o755);
    repo.write("web/check.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("web/check.sh", 0o644);
    repo.write("docs/guide.md", "guide\n");
    repo.write(".qwen/settings.json", "{}");
    repo.write(
        ".claude/settings.local.json",
        r#"{"disableAllHooks": true}"#,
    );
    // A person took the line init wrote out of .gitignore.
    repo.write(".gitignore", "");
    repo.write("src/lib.txt", "lib\n");
    repo.commit_all("checks");
    repo.git(&["config", "--unset", "notes.prove-it.mergeStrategy"]);
    repo.git(&["config", "prove-it.timeout", "1200"]);
    repo.git(&["config", "prove-it.retries", "1"]);
    let man = repo.home().join("man");
    let man = man.to_str().unwrap();
    let mut output = DoctorOutput::default();
    let skip = [("MANPATH", man), ("PROVE_IT_SKIP", "1")];
    output.add(&repo, "src", &skip, false);

    // Unreadable settings, a checks file that cannot be parsed, a verify.sh that cannot run.
    repo.git(&["config", "prove-it.timeout", "soon"]);
    repo.git(&["config", "prove-it.maxBlocks", "lots"]);
    repo.write("prove-it.toml", "[checks.api\n");
    repo.verify_script("exit 0");
    repo.chmod("verify.sh", 0o644);
    repo.write(".qwen/settings.json", "{ nope");
    std::fs::create_dir_all(repo.path(".husky")).unwrap();
    output.add(&repo, "", &[("MANPATH", man)], true);
    let scrub = doctor_scrub();
    snapshot_scrubbed(&repo, &scrub, "command-doctor-broken", &output.human);
    snapshot_scrubbed(&repo, &scrub, "command-doctor-broken-json", &output.json);
}

/// doctor's human and JSON output on a set-up that works, with what is worth a warning: a
/// remote without the proofs, hosts that do not trust the folder or read their hooks only where
/// they start, a host's cap below the budget, a verify.sh line whose program is missing, notes
/// of trees no commit holds; then, once the proofs are synced, a proof overwritten by stock git
/// without its isolation line, a pre-push hook of someone else's, and verify.sh failing with no
/// test counts.
#[test]
fn doctor_human_and_json_output_of_a_working_set_up() {
    let remote = BareRemote::new();
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    repo.publish_to(&remote);
    repo.prove_it(&[
        "init",
        "--yes",
        "--no-demo",
        "--pre-push",
        "--host",
        "claude",
        "--host",
        "gemini",
        "--host",
        "codex",
    ])
    .assert()
    .code(0);
    repo.verify_script("no-such-linter-here --check . || true\necho '3 passed in 0.01s'");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path(".claude/settings.json")).unwrap())
            .unwrap();
    // Claude Code wired for every folder too, by the user's settings.
    let user = repo.home().join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, settings.to_string()).unwrap();
    settings["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("PostToolUse");
    repo.write(".claude/settings.json", &settings.to_string());
    repo.commit_all("wire the gate");
    let root = repo.root.canonicalize().unwrap();
    let parent = root.parent().unwrap().to_str().unwrap();
    let trusted = serde_json::json!({ "projects": { parent: { "hasTrustDialogAccepted": true } } });
    std::fs::write(repo.home().join(".claude.json"), trusted.to_string()).unwrap();
    std::fs::create_dir_all(repo.home().join(".codex")).unwrap();
    std::fs::write(
        repo.home().join(".codex/config.toml"),
        format!("[projects.{parent:?}]\ntrust_level = \"trusted\"\n"),
    )
    .unwrap();
    repo.prove_it(&["run"]).assert().code(0);
    // A working state proven and never committed.
    repo.write("b.txt", "b\n");
    repo.prove_it(&["run"]).assert().code(0);
    let man = repo.home().join("man");
    repo.prove_it(&["install-man", "--dir", man.to_str().unwrap()])
        .assert()
        .code(0);
    // man-db is not on every machine the tests run on: a stand-in answers `man -w` as it would
    // for the pages just installed.
    std::fs::create_dir_all(repo.home().join("bin")).unwrap();
    repo.home_script(
        "bin/man",
        "test \"$1\" = -w && test -f \"$MANPATH/man1/$2.1\" && echo \"$MANPATH/man1/$2.1\"",
    );
    let mut path = vec![repo.home().join("bin")];
    path.extend(std::env::split_paths(&path_with_our_binary()));
    let path = std::env::join_paths(path).unwrap();
    let env = [
        ("MANPATH", man.to_str().unwrap()),
        ("PATH", path.to_str().unwrap()),
        ("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "3"),
    ];
    let mut output = DoctorOutput::default();
    output.add(&repo, "", &env, true);

    // The proofs synced, then one of them rewritten by stock git as an earlier version wrote it.
    repo.prove_it(&["sync"]).assert().code(0);
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let tree = tree.trim();
    let note = repo.note(tree).unwrap();
    let old = note.replace("isolation: checkout\n", "");
    repo.git(&["notes", "--ref", "prove-it", "add", "-f", "-m", &old, tree]);
    repo.write(".git/hooks/pre-push", "#!/bin/sh\nexit 0\n");
    repo.verify_script("echo 'test a ... FAILED'\nexit 1");
    repo.prove_it(&["run"]).assert().code(1);
    output.add(&repo, "", &env, true);
    let scrub = doctor_scrub();
    snapshot_scrubbed(&repo, &scrub, "command-doctor-working", &output.human);
    snapshot_scrubbed(&repo, &scrub, "command-doctor-working-json", &output.json);
}
