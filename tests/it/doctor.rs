//! `git prove-it doctor`: one line per check, a fix for each that is not ok, and exit 1 when
//! something is broken.

use predicates::prelude::*;

use crate::check::tree_of;
use crate::harness::{BareRemote, NAME, TestRepo, json_stdout, path_with_our_binary};

fn set_up() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    repo.prove_it(&[
        "init",
        "--yes",
        "--host",
        "claude",
        "--pre-push",
        "--no-demo",
    ])
    .assert()
    .code(0);
    repo
}

#[test]
fn a_bare_repository_without_verify_sh_is_broken_and_says_how_to_fix_it() {
    let repo = TestRepo::new();
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "FAIL  verify.sh does not exist at the worktree root: nothing is gated\n      fix: git prove-it init\n",
        ))
        .stdout(predicate::str::contains(
            "warn  no pre-push hook: unproven commits can be pushed",
        ))
        .stdout(predicate::str::contains("      fix: git prove-it install pre-push\n"))
        .stdout(predicate::str::contains("ok    refs/notes/prove-it: no proofs yet\n"))
        .stdout(predicate::str::contains("ok    no remote: proofs stay in this clone\n"))
        .stdout(predicate::str::contains("1 problem to fix\n"));
    repo.verify_passes();
    repo.chmod("verify.sh", 0o644);
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "FAIL  verify.sh is not executable by its owner: nothing is gated\n      fix: chmod u+x verify.sh\n",
        ));
}

#[test]
fn after_init_everything_that_matters_is_ok() {
    let repo = set_up();
    repo.prove_it(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("ok    verify.sh is armed\n"))
        .stdout(predicate::str::contains(
            "ok    Claude Code: the gate's hooks are wired in .claude/settings.json\n",
        ))
        .stdout(predicate::str::contains(
            "ok    the pre-push hook is installed at ",
        ))
        .stdout(predicate::str::contains(format!(
            "ok    proofs are signed off by {NAME} <"
        )))
        .stdout(predicate::str::contains("ok    git-prove-it is on PATH: "))
        .stdout(predicate::str::contains("problem").not());
}

#[test]
fn claude_trust_is_read_from_its_state_file() {
    let repo = set_up();
    repo.prove_it(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("warn  Claude Code: "))
        .stdout(predicate::str::contains(
            "does not record trusting this folder",
        ));
    let root = repo.root.canonicalize().unwrap();
    let state = serde_json::json!({
        "projects": { root.parent().unwrap().to_str().unwrap(): { "hasTrustDialogAccepted": true } }
    });
    std::fs::write(repo.home().join(".claude.json"), state.to_string()).unwrap();
    repo.prove_it(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "ok    Claude Code: this folder is trusted, so its project hooks run\n",
        ));
}

#[test]
fn claude_settings_without_the_gate_or_with_too_short_a_timeout_fail() {
    let repo = set_up();
    repo.write(
        ".claude/settings.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}]}}"#,
    );
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "FAIL  Claude Code: the gate's SessionStart, Stop, SubagentStart, SubagentStop, TaskCompleted and TeammateIdle hooks are not wired in .claude/settings.json\n      fix: git prove-it init --host claude\n",
        ));
    repo.prove_it(&["init", "--yes", "--host", "claude", "--no-demo"])
        .assert()
        .code(0);
    repo.git(&["config", "prove-it.timeout", "1200"]);
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "FAIL  Claude Code: the Stop hook's timeout (900 s) does not exceed verify.sh's (1200 s)",
        ));
    repo.write(".claude/settings.json", "{ nope");
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "FAIL  Claude Code: .claude/settings.json cannot be read (it is not valid JSON: ",
        ));
}

/// Stock `git notes add -f` replaces a note wholesale and does no compare-and-swap (DESIGN
/// section 10): the reflog still holds the proof it dropped, and doctor finds and restores it.
#[test]
fn a_proof_overwritten_by_stock_git_notes_add_is_found_and_restored() {
    let repo = set_up();
    repo.commit_all("set up");
    repo.prove_it(&["run"]).assert().code(0);
    let tree = tree_of(&repo, "HEAD");
    let proof = repo.note(&tree).unwrap();
    repo.git(&[
        "notes",
        "--ref",
        "prove-it",
        "add",
        "-f",
        "-m",
        "looks fine to me",
        &tree,
    ]);
    repo.prove_it(&["check"]).assert().code(1);
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "FAIL  1 proof note lost records to updates not made by git-prove-it (notes: Notes added by 'git notes add')",
        ))
        .stdout(predicate::str::contains("      fix: git prove-it doctor --restore\n"));

    repo.prove_it(&["doctor", "--restore"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "restored 1 overwritten proof note into refs/notes/prove-it\n",
        ))
        .stdout(predicate::str::contains(
            "ok    no proof records dropped by other writers",
        ));
    let note = repo.note(&tree).unwrap();
    assert!(note.contains("looks fine to me"), "{note}");
    assert!(note.contains(proof.trim()), "{note}");
    repo.prove_it(&["check"]).assert().code(0);
    // Restoring is itself an update of ours, and twice is once.
    repo.prove_it(&["doctor", "--restore"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("restored").not());
}

#[test]
fn the_remote_without_proofs_is_a_warning_until_sync() {
    let remote = BareRemote::new();
    let repo = set_up();
    repo.publish_to(&remote);
    repo.prove_it(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "warn  origin has no refs/notes/prove-it: CI and other clones cannot see any proof\n      fix: git prove-it sync origin\n",
        ));
    // Committed: only the proofs of trees a commit holds travel.
    repo.commit_all("wire the gate");
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["sync"]).assert().code(0);
    repo.prove_it(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "ok    origin has refs/notes/prove-it\n",
        ));
}

#[test]
fn a_missing_identity_is_a_warning_with_the_fix() {
    let repo = set_up();
    repo.prove_it(&["doctor"])
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env("EMAIL", "")
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "warn  no git identity: proofs are signed off by git-prove-it <git-prove-it@localhost>",
        ))
        .stdout(predicate::str::contains(
            "      fix: git config --global user.name",
        ));
}

#[test]
fn json_lists_every_check_with_its_status_and_fix() {
    let repo = TestRepo::new();
    let assert = repo.prove_it(&["doctor", "--json"]).assert().code(1);
    let json = json_stdout(&assert);
    assert_eq!(json["version"], 1);
    assert_eq!(json["ok"], false);
    let checks = json["checks"].as_array().unwrap();
    assert_eq!(checks[0]["status"], "fail");
    assert_eq!(checks[0]["fix"], "git prove-it init");
    assert!(checks.iter().all(|c| {
        ["ok", "warn", "fail"].contains(&c["status"].as_str().unwrap())
            && (c["status"] == "ok") == c["fix"].is_null()
    }));
}

#[test]
fn gemini_and_copilot_trust_are_read_from_their_files() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    let init = [
        "init",
        "--yes",
        "--no-demo",
        "--host",
        "gemini",
        "--host",
        "copilot",
    ];
    repo.prove_it(&init).assert().code(0);
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains("warn  Gemini CLI: "))
        .stdout(predicate::str::contains("warn  Copilot CLI: "));
    let root = repo.root.canonicalize().unwrap();
    let gemini = repo.home().join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    let folders = serde_json::json!({ root.to_str().unwrap(): "TRUST_FOLDER" });
    std::fs::write(gemini.join("trustedFolders.json"), folders.to_string()).unwrap();
    let copilot = repo.home().join(".copilot");
    std::fs::create_dir_all(&copilot).unwrap();
    let config = serde_json::json!({ "trusted_folders": [root.parent().unwrap()] });
    std::fs::write(copilot.join("config.json"), config.to_string()).unwrap();
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "ok    Gemini CLI: this folder is trusted, so its project hooks run\n",
        ))
        .stdout(predicate::str::contains(
            "ok    Copilot CLI: this folder is trusted, so its project hooks run\n",
        ));
}

#[test]
fn codex_project_trust_is_read_from_its_config() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    repo.prove_it(&["init", "--yes", "--no-demo", "--host", "codex"])
        .assert()
        .code(0);
    repo.prove_it(&["doctor"]).assert().stdout(predicate::str::contains(
        "/.codex/config.toml does not record trusting this project, so Codex does not read its .codex/hooks.json",
    ));
    // Another project trusted, and this one's parent not: still untrusted.
    let codex = repo.home().join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    let root = repo.root.canonicalize().unwrap();
    let config = format!(
        "model = \"x\"\n\n[projects.\"/elsewhere\"]\ntrust_level = \"trusted\"\n\n[projects.{:?}]\ntrust_level = \"untrusted\"\n",
        root.to_str().unwrap()
    );
    std::fs::write(codex.join("config.toml"), config).unwrap();
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "does not record trusting this project",
        ));
    // The parent trusted, in the shape Codex writes: the project is, its hooks still unknown.
    let config = format!(
        "[projects.{:?}]\ntrust_level = \"trusted\"\n\n[features]\napps = false\n",
        root.parent().unwrap().to_str().unwrap()
    );
    std::fs::write(codex.join("config.toml"), config).unwrap();
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "warn  Codex CLI: this project is trusted, but whether Codex approved its hooks cannot be checked from here",
        ));
}

#[test]
fn an_unreachable_remote_is_given_up_on_and_everything_it_started_is_ended() {
    let repo = set_up();
    // An ssh "transport" that records its pid, then hangs like an unanswered connection.
    let pid_file = repo.home().join("ssh.pid");
    let ssh = repo.home_script(
        "hanging-ssh",
        &format!("echo $$ > {}\nexec sleep 300", pid_file.display()),
    );
    repo.git(&["remote", "add", "origin", "ssh://prove-it.invalid/repo.git"]);
    let out = repo
        .prove_it(&["doctor"])
        .env("GIT_SSH_COMMAND", &ssh)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("warn  could not ask origin for its proofs: git ls-remote -- origin refs/notes/prove-it gave no answer within 10 s"),
        "{stdout}"
    );
    // The hanging transport was killed with git, not left behind (a zombie awaiting its
    // reaper is dead). SIGKILL is sent to the whole group before doctor returns, but a
    // grandchild on a loaded machine may still be running the kill for a moment: it gets a
    // few seconds to die, far less than the 300 s it would otherwise sleep.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let stat_path = format!("/proc/{}/stat", pid.trim());
    let state_of = |stat: &str| stat.rsplit_once(") ").map(|(_, rest)| rest[..1].to_owned());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut stat = std::fs::read_to_string(&stat_path).unwrap_or_default();
    while !matches!(state_of(&stat).as_deref(), None | Some("Z" | "X"))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
        stat = std::fs::read_to_string(&stat_path).unwrap_or_default();
    }
    assert!(
        matches!(state_of(&stat).as_deref(), None | Some("Z" | "X")),
        "the ssh transport {pid} outlived doctor: {stat}"
    );
}

/// Doctor passed while verify.sh failed; `--run` runs it as the gate would,
/// fails with it, and records nothing either way.
#[test]
fn doctor_run_fails_when_the_gate_would_refuse_verify_sh_and_records_nothing() {
    let repo = set_up();
    repo.verify_fails(1);
    repo.prove_it(&["doctor"]).assert().code(0);
    repo.prove_it(&["doctor", "--run"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "FAIL  --run: verify.sh exit code 1 on the working state (tree ",
        ))
        .stdout(predicate::str::contains(
            "the gate would send the agent back\n      fix: fix what it reports",
        ));
    repo.verify_passes();
    repo.prove_it(&["doctor", "--run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "ok    --run: verify.sh passed on the working state (tree ",
        ))
        .stdout(predicate::str::contains("nothing was recorded"));
    assert_eq!(repo.git(&["notes", "--ref", "prove-it", "list"]), "");
    assert!(!repo.path(".git/prove-it/last-run.log").exists());
}

/// Under PROVE_IT_SKIP the gate checks nothing, so doctor must not pass.
#[test]
fn doctor_fails_while_prove_it_skip_is_set() {
    let repo = set_up();
    repo.prove_it(&["doctor"]).assert().code(0);
    repo.prove_it(&["doctor"])
        .env("PROVE_IT_SKIP", "1")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "FAIL  PROVE_IT_SKIP is set: the gate ends every turn in this environment without running verify.sh\n      fix: unset PROVE_IT_SKIP\n",
        ));
}

/// The policy in force is reported, and one proof is "1 proven tree".
#[test]
fn doctor_reports_the_policy_in_force_and_counts_proven_trees_in_english() {
    let repo = set_up();
    repo.prove_it(&["doctor"]).assert().code(0).stdout(predicate::str::contains(
        "ok    policy in force: verify.sh timeout 300 s, budget 3 blocks a turn, ledger off, signing off, verify.sh edits shown\n",
    ));
    repo.git(&["config", "prove-it.timeout", "60"]);
    repo.git(&["config", "prove-it.maxBlocks", "1"]);
    repo.git(&["config", "prove-it.ledger", "true"]);
    repo.git(&["config", "prove-it.verifyEdits", "block"]);
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "ok    policy in force: verify.sh timeout 60 s, budget 1 block a turn, ledger on, signing off, verify.sh edits blocked\n",
        ))
        .stdout(predicate::str::contains("ok    refs/notes/prove-it: 1 proven tree\n"));
}

/// A check verify.sh runs whose program is not installed fails every turn;
/// doctor says which, and stays quiet about the programs that are there.
#[test]
fn doctor_warns_of_an_enabled_check_whose_program_is_not_found() {
    let repo = set_up();
    repo.verify_script(
        "set -eu\ngit diff --check HEAD\nno-such-linter-here --check .\n# uv run pytest",
    );
    repo.prove_it(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "warn  verify.sh runs no-such-linter-here, which is not found here: that check fails whatever the work is\n      fix: install no-such-linter-here, or take its line out of verify.sh\n",
        ))
        .stdout(predicate::str::contains("verify.sh runs git").not())
        .stdout(predicate::str::contains("verify.sh runs uv").not());
}

/// In a contributor's clone, `fix: git prove-it sync origin` pushed proofs to
/// a project they do not own. doctor asks the push remote, and says when origin looks foreign.
#[test]
fn doctor_advises_the_push_remote_and_never_syncing_to_someone_elses_origin() {
    let upstream = BareRemote::new();
    let owner = set_up();
    owner.publish_to(&upstream);
    let clone = TestRepo::clone_of(&upstream);
    clone
        .prove_it(&["init", "--yes", "--no-demo"])
        .assert()
        .code(0);
    let contributor = |args: &[&str]| {
        let mut cmd = clone.prove_it(args);
        cmd.env("GIT_AUTHOR_EMAIL", "contributor@example.com")
            .env("GIT_COMMITTER_EMAIL", "contributor@example.com");
        cmd
    };
    let warned = |n: usize| {
        contributor(&["doctor"])
            .assert()
            .code(0)
            .stdout(predicate::str::contains(
                "warn  origin looks like someone else's project (none of the last 200 commits on origin's branches are yours): syncing proofs there pushes them upstream\n",
            ))
            .stdout(predicate::str::contains("git prove-it sync origin").not())
            .stdout(predicate::str::contains(
                "fix: add your fork as a remote and push there: git remote add fork <your fork's URL> && git config remote.pushDefault fork && git prove-it sync fork\n",
            ));
        n
    };
    warned(0);
    // The contributor's own commits here leave origin someone else's: the warning stayed only
    // until their first commit, and then doctor advised syncing proofs to origin.
    for n in 1..=2 {
        clone.write("a.txt", &format!("contribution {n}\n"));
        let mut commit = clone.command("git");
        commit
            .args(["commit", "-qam", "contribution"])
            .env("GIT_AUTHOR_EMAIL", "contributor@example.com")
            .env("GIT_COMMITTER_EMAIL", "contributor@example.com");
        assert!(commit.status().unwrap().success());
        warned(n);
    }

    // Their fork as the push remote: that is where doctor looks, and what it advises syncing.
    let fork = BareRemote::new();
    clone.git(&["remote", "add", "fork", fork.path.to_str().unwrap()]);
    clone.git(&["config", "remote.pushDefault", "fork"]);
    contributor(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "warn  fork has no refs/notes/prove-it: CI and other clones cannot see any proof\n      fix: git prove-it sync fork\n",
        ))
        .stdout(predicate::str::contains("someone else's").not());
    clone.git(&["config", "--unset", "remote.pushDefault"]);
    clone.git(&["config", "branch.main.pushRemote", "fork"]);
    contributor(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("fix: git prove-it sync fork\n"));

    // The owner, whose commits these are, is told to sync origin as before.
    owner
        .prove_it(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("fix: git prove-it sync origin\n"))
        .stdout(predicate::str::contains("someone else's").not());
}

/// Under prove-it.retries a stop may run verify.sh several times, each up to the
/// timeout; the host's hook must outlast them all, or a flaky check's retries end the turn
/// without a verdict.
#[test]
fn a_stop_hook_that_retries_would_outlast_fails_doctor() {
    let repo = set_up();
    repo.prove_it(&["init", "--yes", "--host", "claude", "--no-demo"])
        .assert()
        .code(0);
    repo.git(&["config", "prove-it.retries", "1"]);
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "verify.sh timeout 300 s, retries 1,",
        ))
        .stdout(predicate::str::contains(
            "ok    Claude Code: the gate's hooks are wired",
        ));
    repo.git(&["config", "prove-it.retries", "3"]);
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "FAIL  Claude Code: the Stop hook's timeout (900 s) does not exceed verify.sh's (1200 s: 300 s for each of 4 runs under prove-it.retries 3)",
        ))
        .stdout(predicate::str::contains("or prove-it.retries"));
}

/// Doctor told a Gemini user to raise the "Stop hook timeout" above 1200,
/// where Gemini's end-of-turn event is AfterAgent and its field counts milliseconds.
#[test]
fn a_too_short_stop_hook_timeout_is_told_in_the_hosts_own_event_and_unit() {
    let repo = set_up();
    repo.prove_it(&[
        "init",
        "--yes",
        "--host",
        "gemini",
        "--host",
        "copilot",
        "--no-demo",
    ])
    .assert()
    .code(0);
    repo.git(&["config", "prove-it.timeout", "1200"]);
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "the AfterAgent hook's timeout (900000 ms) does not exceed verify.sh's (1200 s): a slow run would end the turn unverified\n      fix: raise the AfterAgent hook's \"timeout\" in .gemini/settings.json above 1200000 (ms), or lower git config prove-it.timeout\n",
        ))
        .stdout(predicate::str::contains(
            "the agentStop hook's timeout (900 s) does not exceed verify.sh's (1200 s): a slow run would end the turn unverified\n      fix: raise the agentStop hook's \"timeoutSec\" in .github/hooks/prove-it-copilot.json above 1200 (s)",
        ))
        .stdout(predicate::str::contains(
            "FAIL  Claude Code: the Stop hook's timeout (900 s) does not exceed verify.sh's (1200 s)",
        ));
}

/// A `git-prove-it` earlier on the hook's PATH is the one every hook runs, whatever version
/// doctor is: doctor lists each one git finds, in its order, and names the one that shadows it.
#[test]
fn a_second_git_prove_it_earlier_on_path_is_listed_and_named() {
    let repo = set_up();
    let shadow_dir = repo.home().join("shadow");
    std::fs::create_dir_all(&shadow_dir).unwrap();
    let shadow = repo.home_script("shadow/git-prove-it", "exit 0");
    let ours = assert_cmd::cargo::cargo_bin("git-prove-it");
    let with = |first: &std::path::Path, then: std::ffi::OsString| {
        let mut dirs = vec![first.to_owned()];
        dirs.extend(std::env::split_paths(&then));
        std::env::join_paths(dirs).unwrap()
    };
    repo.prove_it(&["doctor"])
        .env("PATH", with(&shadow_dir, path_with_our_binary()))
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!(
            "warn  git runs {} for 'git prove-it', not this git-prove-it (",
            shadow.display()
        )))
        .stdout(predicate::str::contains(format!(
            "every git-prove-it git finds, in its order: {}, {}\n",
            shadow.display(),
            ours.display()
        )))
        .stdout(predicate::str::contains(format!(
            "      fix: remove {} or put ",
            shadow.display()
        )));
    // Behind ours, the other one is listed and nothing is wrong.
    let mut dirs: Vec<_> = std::env::split_paths(&path_with_our_binary()).collect();
    dirs.insert(1, shadow_dir.clone());
    repo.prove_it(&["doctor"])
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!(
            "ok    git-prove-it is on PATH: {}, which git runs first of: {}, {}\n",
            ours.display(),
            ours.display(),
            shadow.display()
        )));
}

/// `disableAllHooks` in any layer of Claude Code's settings (the user's, the project's, the
/// project's local file) turns the gate off as surely as unwiring it, and doctor said ok.
#[test]
fn disable_all_hooks_in_any_claude_settings_layer_fails_doctor() {
    let repo = set_up();
    let root = repo.root.canonicalize().unwrap();
    let wired = std::fs::read_to_string(repo.path(".claude/settings.json")).unwrap();
    let mut disabled: serde_json::Value = serde_json::from_str(&wired).unwrap();
    disabled["disableAllHooks"] = serde_json::Value::Bool(true);
    let off = r#"{"disableAllHooks": true}"#;
    let layers = [
        (repo.home().join(".claude/settings.json"), off.to_string()),
        (root.join(".claude/settings.json"), disabled.to_string()),
        (root.join(".claude/settings.local.json"), off.to_string()),
    ];
    for (file, text) in &layers {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let before = std::fs::read_to_string(file).ok();
        std::fs::write(file, text).unwrap();
        repo.prove_it(&["doctor"])
            .assert()
            .code(1)
            .stdout(predicate::str::contains(format!(
                "FAIL  Claude Code: disableAllHooks in {} keeps it from running the gate's hooks: no stop is gated\n      fix: {}: remove \"disableAllHooks\": true\n",
                file.display(),
                file.display()
            )));
        match before {
            Some(before) => std::fs::write(file, before).unwrap(),
            None => std::fs::remove_file(file).unwrap(),
        }
    }
    // CLAUDE_CONFIG_DIR moves the user's layer, and doctor reads it there.
    let config = repo.home().join("claude-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("settings.json"), off).unwrap();
    repo.prove_it(&["doctor"])
        .env("CLAUDE_CONFIG_DIR", &config)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "FAIL  Claude Code: disableAllHooks in {} keeps",
            config.join("settings.json").display()
        )));
    repo.prove_it(&["doctor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("disableAllHooks").not());
}

/// `disableAllHooks` in Qwen Code's user settings (under `QWEN_HOME` when set) or the
/// project's turns off every hook, the gate's included.
#[test]
fn disable_all_hooks_in_qwen_codes_settings_fails_doctor() {
    let repo = set_up();
    repo.prove_it(&["init", "--yes", "--host", "qwen", "--no-demo"])
        .assert()
        .code(0);
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "ok    Qwen Code: the gate's hooks are wired",
        ))
        .stdout(predicate::str::contains("keeps it from running").not());
    let root = repo.root.canonicalize().unwrap();
    let project = root.join(".qwen/settings.json");
    let wired = std::fs::read_to_string(&project).unwrap();
    let mut disabled: serde_json::Value = serde_json::from_str(&wired).unwrap();
    disabled["disableAllHooks"] = serde_json::Value::Bool(true);
    let home = repo.home().join("qwen-home");
    for (file, text, qwen_home) in [
        (project.clone(), disabled.to_string(), None),
        (
            repo.home().join(".qwen/settings.json"),
            r#"{"disableAllHooks": true}"#.to_string(),
            None,
        ),
        (
            home.join("settings.json"),
            r#"{"disableAllHooks": true}"#.to_string(),
            Some(&home),
        ),
    ] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let before = std::fs::read_to_string(&file).ok();
        std::fs::write(&file, text).unwrap();
        let mut doctor = repo.prove_it(&["doctor"]);
        if let Some(dir) = qwen_home {
            doctor.env("QWEN_HOME", dir);
        }
        doctor.assert().code(1).stdout(predicate::str::contains(format!(
            "FAIL  Qwen Code: disableAllHooks in {} keeps it from running the gate's hooks: no stop is gated\n      fix: {}: remove \"disableAllHooks\": true\n",
            file.display(),
            file.display()
        )));
        match before {
            Some(before) => std::fs::write(&file, before).unwrap(),
            None => std::fs::remove_file(&file).unwrap(),
        }
    }
}

/// Gemini CLI's and Codex CLI's own switches of their hook systems turn the gate off too.
#[test]
fn the_other_hosts_switches_that_turn_hooks_off_fail_doctor() {
    let repo = set_up();
    repo.prove_it(&[
        "init",
        "--yes",
        "--host",
        "gemini",
        "--host",
        "codex",
        "--no-demo",
    ])
    .assert()
    .code(0);
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains("keeps it from running").not());
    let root = repo.root.canonicalize().unwrap();
    let project = root.join(".gemini/settings.json");
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&project).unwrap()).unwrap();
    settings["hooksConfig"] = serde_json::json!({ "enabled": false });
    std::fs::write(&project, settings.to_string()).unwrap();
    let user = repo.home().join(".gemini/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(
        &user,
        r#"{"hooksConfig": {"disabled": ["git prove-it hook gemini"]}}"#,
    )
    .unwrap();
    let codex = repo.home().join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(&codex, "[features]\nhooks = false\n").unwrap();
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "FAIL  Gemini CLI: hooksConfig.enabled in {} keeps it from running the gate's hooks: no stop is gated\n      fix: {}: set it to true, or remove it\n",
            project.display(),
            project.display()
        )))
        .stdout(predicate::str::contains(format!(
            "FAIL  Gemini CLI: hooksConfig.disabled in {} keeps it",
            user.display()
        )))
        .stdout(predicate::str::contains(format!(
            "FAIL  Codex CLI: [features] hooks in {} keeps it from running the gate's hooks",
            codex.display()
        )));
}

/// A host's own cap on blocks below the gate's budget holds the gate to fewer blocks, so that
/// its yield still reaches the agent: doctor names the setting, else the blocks seem to vanish.
#[test]
fn a_host_block_cap_below_the_budget_is_named() {
    let repo = set_up();
    repo.prove_it(&["doctor"])
        .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "3")
        .assert()
        .stdout(predicate::str::contains(
            "warn  Claude Code: CLAUDE_CODE_STOP_HOOK_BLOCK_CAP ends a turn after 3 blocks in this environment, below the gate's budget (3 blocks a turn): the gate gives at most 2 blocks a turn, then its yield\n      fix: raise CLAUDE_CODE_STOP_HOOK_BLOCK_CAP above 3, or lower git config prove-it.maxBlocks to 2\n",
        ));
    // At Claude Code's default cap of 8 the budget is whole: nothing to say.
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains("BLOCK_CAP").not());
}

/// A subagent's worktree under `.claude/worktrees/` that is not ignored is an embedded
/// repository of the session's state: the session's stop is refused while it holds changes.
#[test]
fn claude_worktrees_that_are_not_ignored_are_named() {
    let repo = set_up();
    // init ignored them; a person took the line out since.
    std::fs::remove_file(repo.path(".gitignore")).unwrap();
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "warn  Claude Code: .claude/worktrees/ is not ignored",
        ));
    repo.write(".gitignore", ".claude/worktrees/\n");
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(".claude/worktrees/ is not ignored").not());
}

/// Settings wired before proving ahead existed hold the gate: doctor warns that nothing is
/// proven ahead of a stop, and does not fail.
#[test]
fn claude_settings_without_the_after_tool_hook_are_a_warning_not_a_failure() {
    let repo = set_up();
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path(".claude/settings.json")).unwrap())
            .unwrap();
    settings["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("PostToolUse")
        .expect("init wires the after-tool hook");
    repo.write(".claude/settings.json", &settings.to_string());
    repo.prove_it(&["doctor"])
        .assert()
        .stdout(predicate::str::contains(
            "ok    Claude Code: the gate's hooks are wired in .claude/settings.json\n",
        ))
        .stdout(predicate::str::contains(
            "warn  Claude Code: the after-tool hook (PostToolUse) is not wired in .claude/settings.json, so nothing is proven ahead of a stop\n      fix: git prove-it init --host claude\n",
        ))
        .stdout(predicate::str::contains("FAIL").not());
}

/// A checks file that asks for a later git-prove-it is fixed by an install, any other unreadable
/// one by an edit: told apart by what the parser found, not by its words.
#[test]
fn a_checks_file_that_needs_a_newer_build_is_fixed_by_an_install_and_a_bad_one_by_an_edit() {
    let repo = set_up();
    repo.write("prove-it.toml", "min-version = \"99.0.0\"\n");
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "or later (min-version), and this is",
        ))
        .stdout(predicate::str::contains(
            "      fix: install the git-prove-it it names or a later one: cargo install git-prove-it, or the release's install.sh\n",
        ));
    // The same words in a comment prove nothing: the file is bad for another reason.
    repo.write(
        "prove-it.toml",
        "# no (min-version) here\n[checks.unit]\nrun = \"x.sh\"\nbogus = 1\n",
    );
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "      fix: fix prove-it.toml at the line named (SPEC.md section 2.1 gives its format)\n",
        ));
}
