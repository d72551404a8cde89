//! A commit's run sees the commit: its worktree lives outside the repository's directory tree
//! and is mounted at the checkout's path, so neither walking up nor an absolute path into the
//! checkout reaches the checkout's code; where no namespace can be had, links back into the
//! checkout refuse the run. And the checks file's `setup` prepares each commit's worktree.

use predicates::prelude::*;

use crate::check::tree_of;
use crate::harness::TestRepo;
use crate::run_rev::leftovers;

/// The issue's reproducer: a `node_modules` link in the checkout (ignored) to the checkout's
/// own `lib`, and a verify.sh that requires it. `good` exports 1, `bad` exports 2.
fn node_history(repo: &TestRepo, setup: bool) -> (String, String) {
    repo.write("lib/index.js", "module.exports=1\n");
    repo.write(".gitignore", "node_modules/\n");
    std::fs::create_dir_all(repo.path("node_modules")).unwrap();
    repo.symlink("../lib", "node_modules/lib");
    repo.verify_script(r#"node -e "process.exit(require(\"lib\")===1?0:1)""#);
    if setup {
        repo.write(
            "setup.sh",
            "#!/bin/sh\nmkdir -p node_modules && ln -sfn ../lib node_modules/lib\n",
        );
        repo.chmod("setup.sh", 0o755);
        repo.write("prove-it.toml", "setup = \"setup.sh\"\n");
    }
    let good = repo.commit_all("good");
    repo.write("lib/index.js", "module.exports=2\n");
    let bad = repo.commit_all("bad");
    repo.git(&["checkout", "-q", &good]);
    (good, bad)
}

/// Walking up from the commit's worktree once found the checkout's `node_modules`, whose link
/// led to the checkout's `lib`: the bad commit was "proven" with the good code.
#[test]
fn a_commit_run_never_finds_the_checkouts_node_modules() {
    let repo = TestRepo::new();
    let (_, bad) = node_history(&repo, false);
    repo.prove_it(&["run", &bad])
        .assert()
        .code(predicate::ne(0));
    assert_eq!(repo.note(&tree_of(&repo, &bad)), None, "no false proof");
    assert_eq!(leftovers(&repo), (0, 0));
}

/// Without a setup, a commit's run that fails while the checkout holds dependency folders the
/// worktree lacks says it cannot test the commit, with the hint to declare a setup, and
/// records no failure of its code: the good commit is no more "failed" than the bad one.
#[test]
fn without_a_setup_a_failing_commit_run_cannot_test_and_records_no_failure() {
    let repo = TestRepo::new();
    let (good, bad) = node_history(&repo, false);
    repo.prove_it(&["run", &good])
        .assert()
        .code(125)
        .stdout(predicate::str::contains(
            "but with no setup: the checkout holds node_modules, which this commit's worktree lacks",
        ))
        .stdout(predicate::str::contains(
            "hint: declare how to set a commit's worktree up",
        ));
    let record = repo.git(&[
        "notes",
        "--ref",
        "prove-it-failures",
        "show",
        &tree_of(&repo, &good),
    ]);
    assert!(
        record.contains("outcome: INSUFFICIENT_EVIDENCE\n"),
        "{record}"
    );
    assert!(record.contains("cannot-test: no setup"), "{record}");
    assert!(!record.contains("DISPROVEN"), "{record}");
    // bisect skips what it cannot test: it names no first failing commit.
    repo.prove_it(&["bisect", &good, &bad])
        .assert()
        .stdout(predicate::str::contains("first failing commit").not());
    assert_eq!(leftovers(&repo), (0, 0));
}

/// With a setup that links the commit's own `lib`, the good commit is proven, the bad one
/// fails, and bisect names the bad one.
#[test]
fn with_a_setup_the_node_reproducer_proves_good_fails_bad_and_bisects() {
    let repo = TestRepo::new();
    let (good, bad) = node_history(&repo, true);
    repo.prove_it(&["run", &good]).assert().code(0);
    let note = repo
        .note(&tree_of(&repo, &good))
        .expect("the good commit is proven");
    assert!(note.contains("\nisolation: namespace\n"), "{note}");
    repo.prove_it(&["run", &bad]).assert().code(1);
    assert_eq!(repo.note(&tree_of(&repo, &bad)), None);
    repo.prove_it(&["bisect", &good, &bad])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!(
            "first failing commit: {bad} bad"
        )));
    assert_eq!(leftovers(&repo), (0, 0));
}

/// An absolute path into the checkout (an editable install, a generated config) leads into
/// the commit's worktree during its run, not to the checkout's files.
#[test]
fn an_absolute_path_into_the_checkout_leads_into_the_commit() {
    let repo = TestRepo::new();
    let root = repo.root.display().to_string();
    repo.verify_script(&format!("grep -q good '{root}/state.txt'"));
    repo.write("state.txt", "bad\n");
    let bad = repo.commit_all("bad state");
    repo.write("state.txt", "good\n");
    repo.prove_it(&["run", &bad]).assert().code(1);
    assert_eq!(repo.note(&tree_of(&repo, &bad)), None, "no false proof");
    // The working state, run in its own checkout, is proven as the checkout's.
    repo.prove_it(&["run"]).assert().code(0);
}

/// The worktrees of commit runs live in the user's cache, never under the repository, and
/// the run's git directory is the repository's (`git describe` works there).
#[test]
fn commit_worktrees_live_in_the_users_cache_outside_the_repository() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen");
    repo.verify_script(&format!(
        "git rev-parse --git-dir > '{seen}'\ngit describe --tags >> '{seen}'\ngit status --porcelain >> '{seen}'",
        seen = seen.display()
    ));
    let first = repo.commit_all("first");
    repo.git(&["tag", "v1.0"]);
    repo.write("a.txt", "dirty working state\n");
    repo.prove_it(&["run", &first]).assert().code(0);
    let seen = std::fs::read_to_string(seen).unwrap();
    let mut lines = seen.lines();
    let git_dir = lines.next().unwrap();
    assert!(
        git_dir.starts_with(
            &repo
                .home()
                .join(".cache/git-prove-it")
                .display()
                .to_string()
        ),
        "{seen}"
    );
    assert_eq!(lines.next(), Some("v1.0"), "{seen}");
    assert_eq!(lines.next(), None, "the commit's worktree is clean: {seen}");
    assert!(!repo.path(".git/prove-it/worktrees").exists());
    assert_eq!(leftovers(&repo), (0, 0));
}

/// A commit's scripts run in its view, started by this process rather than by a run of
/// itself inside the view: verify.sh must still see itself and its directory at the
/// checkout's path, and never the caller's `GIT_DIR` (git sets it for hooks).
#[test]
fn a_commits_verify_sh_runs_at_the_checkouts_path_without_the_callers_git_dir() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen");
    repo.verify_script(&format!(
        "echo \"$0\" > '{seen}'\npwd -P >> '{seen}'\necho \"dir=${{GIT_DIR-unset}}\" >> '{seen}'",
        seen = seen.display()
    ));
    let first = repo.commit_all("first");
    repo.prove_it(&["run", &first])
        .env("GIT_DIR", repo.path(".git"))
        .assert()
        .code(0);
    let seen = std::fs::read_to_string(seen).unwrap();
    let root = std::fs::canonicalize(&repo.root).unwrap();
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(
        lines,
        [
            root.join("verify.sh").display().to_string().as_str(),
            root.display().to_string().as_str(),
            "dir=unset",
        ],
        "{seen}"
    );
    let note = repo.note(&tree_of(&repo, &first)).unwrap();
    assert!(note.contains("isolation: namespace"), "{note}");
}

/// Where no namespace can be had, a link from the environment into the checkout refuses the
/// run, naming it; without one, the proof says `isolation: none`.
#[test]
fn without_namespaces_a_pythonpath_into_the_checkout_refuses_the_run() {
    let repo = TestRepo::with_commit();
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    std::fs::create_dir_all(repo.path("src")).unwrap();
    repo.prove_it(&["run", &head])
        .env("PROVE_IT_TEST_NO_NAMESPACE", "1")
        .env("PYTHONPATH", repo.path("src"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "PYTHONPATH names {}",
            repo.path("src").display()
        )))
        .stderr(predicate::str::contains("hint:"));
    assert_eq!(repo.note(&tree_of(&repo, "HEAD")), None);
    repo.prove_it(&["run", &head])
        .env("PROVE_IT_TEST_NO_NAMESPACE", "1")
        .assert()
        .code(0);
    let note = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    assert!(note.contains("\nisolation: none\n"), "{note}");
    assert_eq!(leftovers(&repo), (0, 0));
}

/// A proof of the working state says it ran in its own checkout.
#[test]
fn a_working_state_proof_says_it_ran_in_its_checkout() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    let note = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    assert!(note.contains("\nisolation: checkout\n"), "{note}");
}

/// A setup that fails means the commit cannot be tested: no failure of its checks is recorded.
#[test]
fn a_failing_setup_cannot_test_the_commit_and_records_no_failure_of_its_code() {
    let repo = TestRepo::with_commit();
    repo.write(
        "setup.sh",
        "#!/bin/sh\necho 'npm ERR! could not resolve'\nexit 1\n",
    );
    repo.chmod("setup.sh", 0o755);
    repo.write("prove-it.toml", "setup = \"setup.sh\"\n");
    let head = repo.commit_all("a setup that fails");
    repo.prove_it(&["run", &head])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot test commit"))
        .stderr(predicate::str::contains(
            "setup setup.sh failed: exit code 1",
        ))
        .stderr(predicate::str::contains("npm ERR! could not resolve"));
    assert_eq!(repo.note(&tree_of(&repo, "HEAD")), None);
    // Recorded as a commit that cannot be tested, never as a failure of its code.
    let record = repo
        .git(&["notes", "--ref", "prove-it-failures", "show", "HEAD^{tree}"])
        .clone();
    assert!(
        record.contains("outcome: INSUFFICIENT_EVIDENCE\n"),
        "{record}"
    );
    assert!(
        record.contains("cannot-test: setup setup.sh failed: exit code 1\n"),
        "{record}"
    );
    assert!(!record.contains("DISPROVEN"), "{record}");
    repo.prove_it(&["log", "-n", "1"])
        .assert()
        .stdout(predicate::str::contains("cannot test"));
    assert_eq!(leftovers(&repo), (0, 0));
}

/// Along a range, a setup with `setup-inputs` runs again only where those paths changed.
#[test]
fn setup_inputs_spare_the_setup_where_they_did_not_change() {
    let repo = TestRepo::new();
    let count = repo.home().join("setups");
    repo.write(
        "setup.sh",
        &format!("#!/bin/sh\ncat deps.txt >> '{}'\n", count.display()),
    );
    repo.chmod("setup.sh", 0o755);
    repo.write(
        "prove-it.toml",
        "setup = \"setup.sh\"\nsetup-inputs = [\"deps.txt\"]\n",
    );
    repo.write("deps.txt", "one\n");
    repo.verify_passes();
    repo.commit_all("base");
    for (n, deps) in [(1, "one"), (2, "one"), (3, "two"), (4, "two")] {
        repo.write("n.txt", &format!("{n}\n"));
        repo.write("deps.txt", &format!("{deps}\n"));
        repo.commit_all(&format!("commit {n}"));
    }
    repo.prove_it(&["run", "main~4..main", "--jobs", "1"])
        .assert()
        .code(0);
    let ran = std::fs::read_to_string(&count).unwrap();
    assert_eq!(ran, "one\ntwo\n", "setup ran where deps.txt changed only");
}

/// A checks file that needs a newer git-prove-it says which, rather than naming a key.
#[test]
fn a_checks_file_needing_a_newer_version_says_which() {
    let repo = TestRepo::with_commit();
    repo.write(
        "prove-it.toml",
        "min-version = \"99.0.0\"\nsetup = \"setup.sh\"\nfuture-key = 1\n",
    );
    repo.prove_it(&["run"])
        .assert()
        .code(predicate::ne(0))
        .stderr(predicate::str::contains(
            "it needs git-prove-it 99.0.0 or later (min-version)",
        ));
}

/// One hook event of Claude Code from `cwd`, and the hook's stdout.
fn claude(repo: &TestRepo, event: &str, cwd: &std::path::Path) -> String {
    let mut payload = serde_json::json!({
        "session_id": "86ca0000-isolation",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": cwd,
        "hook_event_name": event,
    });
    if event == "Stop" {
        payload["prompt_id"] = "99ce0000-prompt-1".into();
        payload["stop_hook_active"] = false.into();
        payload["last_assistant_message"] = "All tests pass.".into();
    } else {
        payload["source"] = "startup".into();
    }
    let out = repo
        .prove_it(&["hook", "claude"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Claude Code puts its worktrees under `.claude/worktrees/` of the checkout: a stop there
/// walked up to the checkout's `node_modules`, whose link led to the checkout's `lib`, and
/// the gate proved the worktree's broken code.
#[test]
fn a_stop_in_a_claude_worktree_inside_the_checkout_proves_the_worktrees_own_code() {
    let repo = TestRepo::new();
    node_history(&repo, false);
    repo.write(".gitignore", "node_modules/\n.claude/\n");
    repo.commit_all("ignore claude's worktrees");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        ".claude/worktrees/agent",
        "-b",
        "agent",
    ]);
    let inner = repo.path(".claude/worktrees/agent");
    assert_eq!(claude(&repo, "SessionStart", &inner), "");
    // The broken code, in the agent's worktree, with no node_modules of its own.
    std::fs::write(inner.join("lib/index.js"), "module.exports=2\n").unwrap();
    let answer = claude(&repo, "Stop", &inner);
    assert!(answer.contains("\"decision\":\"block\""), "{answer}");
    assert!(answer.contains("Cannot find module"), "{answer}");
    // Its own node_modules, still broken code: still blocked.
    std::fs::create_dir_all(inner.join("node_modules")).unwrap();
    std::os::unix::fs::symlink("../lib", inner.join("node_modules/lib")).unwrap();
    let answer = claude(&repo, "Stop", &inner);
    assert!(answer.contains("\"decision\":\"block\""), "{answer}");
    // Fixed: proven, and the proof says the outer checkout was hidden.
    std::fs::write(inner.join("lib/index.js"), "module.exports = 1\n").unwrap();
    let answer = claude(&repo, "Stop", &inner);
    assert!(!answer.contains("block"), "{answer}");
    let notes = repo.git(&["notes", "--ref", "prove-it", "list"]);
    let proof = notes
        .lines()
        .filter_map(|line| line.split_whitespace().nth(1))
        .filter_map(|object| repo.note(object))
        .find(|note| note.contains("host: claude"))
        .unwrap_or_else(|| panic!("the stop recorded no proof: {answer} {notes}"));
    assert!(proof.contains("\nisolation: namespace\n"), "{proof}");
}

/// Earlier versions proved commits inside the checkout: `doctor` lists the records that may
/// come from such runs (no `isolation:` line, made outside a session), and none of today's.
#[test]
fn doctor_lists_proofs_without_an_isolation_line_and_revoke_unisolated_takes_them_back() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    let out = repo.prove_it(&["doctor"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.contains("no isolation line"), "{text}");
    // An earlier version's record of the same tree: the same record without the line.
    let tree = tree_of(&repo, "HEAD");
    let note = repo.note(&tree).unwrap();
    let old = note.replace("isolation: checkout\n", "");
    repo.git(&["notes", "--ref", "prove-it", "add", "-f", "-m", &old, &tree]);
    let out = repo.prove_it(&["doctor"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("1 proof record made outside an agent session carries no isolation line"),
        "{text}"
    );
    assert!(text.contains(&tree), "{text}");
    // A team cleans them up in bulk; the proof stops counting and doctor stops listing it.
    repo.prove_it(&[
        "revoke",
        "--unisolated",
        "--reason",
        "made inside the checkout",
    ])
    .assert()
    .code(0)
    .stdout(predicate::str::contains("revoked 1 proof"));
    let out = repo.prove_it(&["doctor"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.contains("no isolation line"), "{text}");
    repo.prove_it(&["check"]).assert().code(1);
    repo.prove_it(&["revoke", "--unisolated", "--reason", "again"])
        .assert()
        .code(2);
}

/// `run <rev>` started from a worktree nested in the checkout shows the commit at the nested
/// worktree's path with the checkout hidden: neither its `node_modules` nor its code is seen.
#[test]
fn a_commit_run_from_a_nested_worktree_sees_neither_the_checkout_nor_the_worktree() {
    let repo = TestRepo::new();
    let (_, bad) = node_history(&repo, false);
    repo.write(".gitignore", "node_modules/\n.claude/\n");
    repo.commit_all("ignore claude's worktrees");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        ".claude/worktrees/agent",
        "-b",
        "agent",
    ]);
    let inner = repo.path(".claude/worktrees/agent");
    std::fs::create_dir_all(inner.join("node_modules")).unwrap();
    std::os::unix::fs::symlink("../lib", inner.join("node_modules/lib")).unwrap();
    let run = |rev: &str| {
        repo.prove_it(&["run", rev])
            .current_dir(&inner)
            .output()
            .unwrap()
    };
    // The bad commit, from the nested worktree whose own node_modules holds the good lib.
    let out = run(&bad);
    assert_eq!(
        out.status.code(),
        Some(125),
        "cannot test without a setup: {out:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Cannot find module"), "{stdout}");
    assert_eq!(repo.note(&tree_of(&repo, &bad)), None, "no false proof");
    assert_eq!(leftovers(&repo).1, 0);
}

/// A virtualenv in the checkout with the package installed in editable mode (a real
/// `pip install -e .`, whose `.pth` file names the checkout's `src`).
fn editable_python(repo: &TestRepo, setup: bool) -> (String, String, Vec<(String, String)>) {
    repo.write(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n[project]\nname = \"pkg\"\nversion = \"0.1\"\n",
    );
    repo.write("src/pkg/__init__.py", "VALUE = 1\n");
    repo.write(".gitignore", ".venv/\n*.egg-info/\n__pycache__/\n");
    repo.verify_script(
        r#"exec python3 -c "import pkg, sys; sys.exit(0 if pkg.VALUE == 1 else 1)""#,
    );
    let install = "python3 -m venv --system-site-packages .venv && .venv/bin/pip install -q --no-build-isolation --no-index -e .";
    if setup {
        repo.write("setup.sh", &format!("#!/bin/sh\nset -e\n{install}\n"));
        repo.chmod("setup.sh", 0o755);
        repo.write("prove-it.toml", "setup = \"setup.sh\"\n");
    }
    let good = repo.commit_all("good");
    repo.write("src/pkg/__init__.py", "VALUE = 2\n");
    let bad = repo.commit_all("bad");
    repo.git(&["checkout", "-q", &good]);
    let out = repo.command("sh").args(["-c", install]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let venv = repo.path(".venv");
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        crate::harness::path_with_our_binary().to_string_lossy()
    );
    let env = vec![
        ("PATH".to_string(), path),
        ("VIRTUAL_ENV".to_string(), venv.display().to_string()),
    ];
    (good, bad, env)
}

/// A real editable install of the checkout: a commit's run either tests the commit's code or
/// is refused naming the link, never proves the bad commit with the checkout's good code.
#[test]
fn an_editable_pip_install_never_lends_the_checkouts_code_to_a_commit() {
    let repo = TestRepo::new();
    let (_, bad, env) = editable_python(&repo, false);
    let run = |extra: &[(&str, &str)]| {
        let mut cmd = repo.prove_it(&["run", &bad]);
        cmd.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        cmd.envs(extra.iter().copied());
        cmd.output().unwrap()
    };
    // In a namespace the checkout's virtualenv is not there: the commit cannot be tested.
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no setup: the checkout holds .venv"),
        "{out:?}"
    );
    // Without one, the editable install's link into the checkout refuses the run.
    let out = run(&[("PROVE_IT_TEST_NO_NAMESPACE", "1")]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("__editable__.pkg-0.1.pth names"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "VIRTUAL_ENV names {}",
            repo.path(".venv").display()
        )),
        "{stderr}"
    );
    assert_eq!(repo.note(&tree_of(&repo, &bad)), None, "no false proof");
}

/// With a setup that installs the commit itself, the good commit is proven and the bad one
/// fails, whatever the checkout's own virtualenv holds.
#[test]
fn with_a_setup_an_editable_install_proves_each_commits_own_code() {
    let repo = TestRepo::new();
    let (good, bad, env) = editable_python(&repo, true);
    let run = |rev: &str| {
        repo.prove_it(&["run", rev])
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .output()
            .unwrap()
    };
    let out = run(&bad);
    assert_eq!(out.status.code(), Some(1), "the bad commit fails: {out:?}");
    let out = run(&good);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let note = repo.note(&tree_of(&repo, &good)).unwrap();
    assert!(note.contains("\nisolation: namespace\n"), "{note}");
    assert_eq!(leftovers(&repo), (0, 0));
}

/// `log` and `check` say how a commit's proof was isolated, and `check --require-isolated`
/// counts only a run that could see no other checkout: a namespace, or the working state's
/// own checkout; never `isolation: none`, nor an earlier version's record without the line.
#[test]
fn check_require_isolated_refuses_proofs_of_runs_that_could_see_the_checkout() {
    let repo = TestRepo::with_commit();
    let first = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.write("b.txt", "b\n");
    let second = repo.commit_all("second");
    repo.write("c.txt", "c\n");
    let third = repo.commit_all("third");
    repo.prove_it(&["run", &first]).assert().code(0);
    repo.prove_it(&["run", &second])
        .env("PROVE_IT_TEST_NO_NAMESPACE", "1")
        .assert()
        .code(0);
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["log"])
        .assert()
        .stdout(predicate::str::contains("host cli, isolation namespace,"))
        .stdout(predicate::str::contains("host cli, isolation none,"));
    repo.prove_it(&["check", "--require-isolated", &first])
        .assert()
        .code(0);
    repo.prove_it(&["check", "--require-isolated", &third])
        .assert()
        .code(0);
    repo.prove_it(&["check", &second]).assert().code(0);
    repo.prove_it(&["check", "--require-isolated", &second])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "its proof's run was not isolated from other checkouts (isolation: none) (--require-isolated)",
        ));
    // An earlier version's record: the same proof without the line.
    let tree = tree_of(&repo, &first);
    let note = repo.note(&tree).unwrap();
    repo.git(&[
        "notes",
        "--ref",
        "prove-it",
        "add",
        "-f",
        "-m",
        &note.replace("isolation: namespace\n", ""),
        &tree,
    ]);
    repo.prove_it(&["check", &first]).assert().code(0);
    repo.prove_it(&["check", "--require-isolated", "--format", "json", &first])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("\"not_isolated\":true"));
}

/// `doctor` says when this build is older than the checks file needs, and how to get one.
#[test]
fn doctor_says_when_the_checks_file_needs_a_newer_release() {
    let repo = TestRepo::with_commit();
    repo.write("prove-it.toml", "min-version = \"99.0.0\"\n");
    let out = repo.prove_it(&["doctor"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("it needs git-prove-it 99.0.0 or later (min-version)"),
        "{text}"
    );
    assert!(text.contains("cargo install git-prove-it"), "{text}");
}

/// A setup that edits a file of the commit (a test weakened before the checks run, or a file
/// left untracked) would have the checks prove another tree: the commit cannot be tested.
#[test]
fn a_setup_that_changes_the_commits_files_cannot_test_the_commit() {
    let repo = TestRepo::new();
    repo.write("test.txt", "strict\n");
    repo.verify_script("grep -q lenient test.txt");
    repo.write("setup.sh", "#!/bin/sh\necho lenient > test.txt\n");
    repo.chmod("setup.sh", 0o755);
    repo.write("prove-it.toml", "setup = \"setup.sh\"\n");
    let head = repo.commit_all("a setup that weakens the test");
    repo.prove_it(&["run", &head])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "setup setup.sh changed the commit's files",
        ));
    assert_eq!(repo.note(&tree_of(&repo, &head)), None);
    let notes = repo.git(&["notes", "--ref", "prove-it", "list"]);
    assert_eq!(notes, "", "no proof of any tree: {notes}");
}

/// The setup's output is in the commit's log, before its checks' output.
#[test]
fn the_setups_output_is_in_the_commits_log_before_the_checks() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("base");
    repo.write("setup.sh", "#!/bin/sh\necho installing the dependencies\n");
    repo.chmod("setup.sh", 0o755);
    repo.write("prove-it.toml", "setup = \"setup.sh\"\n");
    repo.verify_passes();
    let head = repo.commit_all("with a setup");
    repo.prove_it(&["run", "main~1..main"]).assert().code(0);
    let log = std::fs::read_to_string(repo.path(&format!(".git/prove-it/commit-logs/{head}.log")))
        .unwrap();
    assert!(
        log.starts_with("--- setup ---\ninstalling the dependencies\n--- checks ---\n"),
        "{log}"
    );
    assert!(log.contains("all good"), "{log}");
    let logs: Vec<_> = std::fs::read_dir(repo.path(".git/prove-it/commit-logs"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !logs.iter().any(|name| name.ends_with(".setup.log")),
        "{logs:?}"
    );
}

/// Along a range, one namespace is kept for the worktree and each script enters it: every
/// commit's check still runs from its own directory under the checkout's path, and reads that
/// commit's files there, never the checkout's nor the commit before's.
#[test]
fn each_commit_of_a_range_sees_its_own_files_at_the_checkouts_path_from_the_scripts_directory() {
    let repo = TestRepo::with_commit();
    let root = repo.root.canonicalize().unwrap().display().to_string();
    let seen = repo.home().join("seen");
    repo.write(
        "prove-it.toml",
        "[checks.pkg]\nrun = \"pkg/check.sh\"\ninputs = [\"pkg\", \"n.txt\"]\n",
    );
    repo.write(
        "pkg/check.sh",
        &format!(
            "#!/bin/sh\necho \"$(pwd -P) $(cat '{root}/n.txt') $(cat ../n.txt)\" >> '{}'\n",
            seen.display()
        ),
    );
    repo.chmod("pkg/check.sh", 0o755);
    for n in 1..=3 {
        repo.write("n.txt", &format!("{n}\n"));
        repo.commit_all(&format!("commit {n}"));
    }
    repo.write("n.txt", "checkout\n");
    repo.prove_it(&["run", "main~3..main", "--jobs", "1"])
        .assert()
        .code(0);
    let seen = std::fs::read_to_string(seen).unwrap();
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(
        lines,
        (1..=3)
            .map(|n| format!("{root}/pkg {n} {n}"))
            .collect::<Vec<_>>(),
        "{seen}"
    );
    assert_eq!(leftovers(&repo), (0, 0));
}

/// The trap: a fake util-linux earlier on `PATH` (an `unshare`, `nsenter` and `mount` that run
/// the program without any mount) would have each commit's script read the checkout's files
/// at the checkout's path while its record says `isolation: namespace`. A commit worktree's
/// namespace is made and entered by git-prove-it's own child with system calls: no program
/// from `PATH` takes part in it.
#[test]
fn a_fake_unshare_on_path_never_shows_the_checkout_to_a_commits_run() {
    let repo = TestRepo::with_commit();
    let root = repo.root.canonicalize().unwrap().display().to_string();
    let seen = repo.home().join("seen");
    let fakes = repo.home().join("fake-bin");
    std::fs::create_dir_all(&fakes).unwrap();
    for fake in ["unshare", "nsenter", "mount"] {
        let path = fakes.join(fake);
        // Drops every option and runs what follows `--` (or the last word) as it is.
        std::fs::write(
            &path,
            "#!/bin/sh\nwhile [ $# -gt 0 ] && [ \"$1\" != -- ]; do shift; done\n[ $# -gt 0 ] && shift\nexec \"$@\"\n",
        )
        .unwrap();
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&path, permissions).unwrap();
    }
    repo.write(
        "verify.sh",
        &format!("#!/bin/sh\ncat '{root}/n.txt' >> '{}'\n", seen.display()),
    );
    repo.chmod("verify.sh", 0o755);
    for n in 1..=2 {
        repo.write("n.txt", &format!("{n}\n"));
        repo.commit_all(&format!("commit {n}"));
    }
    repo.write("n.txt", "checkout\n");
    let path = format!(
        "{}:{}",
        fakes.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    repo.prove_it(&["run", "main~2..main", "--jobs", "1"])
        .env("PATH", path)
        .assert()
        .code(0);
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), "1\n2\n");
    let tree = repo.git(&["rev-parse", "main^{tree}"]);
    let note = repo.note(tree.trim()).unwrap();
    assert!(note.contains("\nisolation: namespace\n"), "{note}");
}

/// A commit's scripts are started by the run's spawner, a small process forked before the run
/// grew, which clones itself into each script's namespaces: a script so started must still get
/// what one started plainly gets, no signal blocked or ignored beyond the shell's own, no
/// descriptor of the run, and the run as its parent.
#[test]
fn a_commit_script_gets_the_signals_descriptors_and_parent_a_working_state_script_gets() {
    let repo = TestRepo::new();
    repo.verify_script(
        r#"seen="$HOME/seen"
grep -E '^Sig(Blk|Ign):' /proc/self/status > "$seen"
# Listed while the shell only waits: in a pipeline, the shell would still hold the pipes'
# ends it is handing out, as many as the timing makes it.
ls /proc/$$/fd > "$HOME/fds"
sort -n "$HOME/fds" | tr '\n' ' ' >> "$seen"
echo >> "$seen"
cat /proc/$PPID/comm >> "$seen""#,
    );
    let commit = repo.commit_all("a verify.sh that says what it was given");
    repo.prove_it(&["run", &commit]).assert().success();
    let committed = std::fs::read_to_string(repo.home().join("seen")).unwrap();
    std::fs::remove_file(repo.home().join("seen")).unwrap();
    repo.prove_it(&["run", "--force"]).assert().success();
    let plain = std::fs::read_to_string(repo.home().join("seen")).unwrap();
    assert_eq!(committed, plain, "a commit's script was given other things");
    assert!(plain.contains("SigBlk:\t0000000000000000\n"), "{plain}");
    assert!(plain.contains("0 1 2 "), "{plain}");
    assert!(plain.ends_with("git-prove-it\n"), "{plain}");
    let record = repo.note(&tree_of(&repo, &commit)).unwrap();
    assert!(record.contains("isolation: namespace\n"), "{record}");
}

/// The spawner gone (killed by a script of the range), the run starts the next commits'
/// scripts itself, in the same namespaces, and proves them.
#[test]
fn a_range_whose_spawner_is_killed_proves_its_next_commits_all_the_same() {
    let repo = TestRepo::new();
    // The spawner is the run's other child running the run's own program (a zombie once
    // killed: the run reaps it only when it ends).
    repo.verify_script(
        r#"for pid in $(cat /proc/$PPID/task/*/children); do
    state=$(sed 's/.*) //' /proc/$pid/stat | cut -d' ' -f1)
    if [ "$pid" != $$ ] && [ "$state" != Z ] && [ "$(cat /proc/$pid/comm)" = git-prove-it ]; then
        kill -9 "$pid" && echo "$pid" >> "$HOME/killed"
    fi
done
test -f marker"#,
    );
    repo.write("marker", "0\n");
    let first = repo.commit_all("first");
    for n in 1..4 {
        repo.write("marker", &format!("{n}\n"));
        repo.commit_all(&format!("commit {n}"));
    }
    repo.prove_it(&["run", &format!("{first}..HEAD"), "--jobs", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("3 of 3 commits proven"));
    let killed = std::fs::read_to_string(repo.home().join("killed")).unwrap();
    assert_eq!(
        killed.lines().count(),
        1,
        "one spawner, killed once: {killed}"
    );
    for commit in ["HEAD", "HEAD~1", "HEAD~2"] {
        let record = repo.note(&tree_of(&repo, commit)).unwrap();
        assert!(record.contains("isolation: namespace\n"), "{record}");
    }
}
