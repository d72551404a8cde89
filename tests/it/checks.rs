//! Checks with inputs: `prove-it.toml` declares named checks, each proven for the
//! part of the tree it reads, run only when those inputs changed, several at once.

use std::time::Duration;

use predicates::prelude::*;

use crate::harness::{TestRepo, json_stdout};

pub const TWO_CHECKS: &str = r#"[checks.api]
run = "packages/api/verify.sh"
inputs = ["packages/api", "packages/shared", "Cargo.lock"]

[checks.docs]
run = "docs/verify.sh"
inputs = ["docs"]
"#;

/// A monorepo with two checks whose scripts count their runs in HOME and then run `body`.
pub fn monorepo(api_body: &str, docs_body: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("prove-it.toml", TWO_CHECKS);
    repo.write("packages/api/src.txt", "api\n");
    repo.write("packages/shared/lib.txt", "shared\n");
    repo.write("docs/index.md", "docs\n");
    repo.write("Cargo.lock", "lock\n");
    repo.write("README.md", "readme\n");
    script(&repo, "packages/api/verify.sh", "api", api_body);
    script(&repo, "docs/verify.sh", "docs", docs_body);
    repo.commit_all("monorepo");
    repo
}

pub fn script(repo: &TestRepo, path: &str, name: &str, body: &str) {
    let counter = repo.home().join(format!("runs-{name}"));
    repo.write(
        path,
        &format!(
            "#!/bin/sh\necho \"$PWD $PROVE_IT_CHECK $PROVE_IT_TREE\" >> '{}'\n{body}\n",
            counter.display()
        ),
    );
    repo.chmod(path, 0o755);
}

pub fn runs(repo: &TestRepo, name: &str) -> Vec<String> {
    std::fs::read_to_string(repo.home().join(format!("runs-{name}")))
        .map(|text| text.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The input tree stock git writes for `paths` of the working state: an index holding only
/// those paths (`read-tree --empty`, `update-index --index-info`), then `write-tree`.
pub fn stock_input_tree(repo: &TestRepo, paths: &[&str]) -> String {
    let state = repo.stock_state_tree().unwrap();
    let listed = repo.git(&["ls-tree", "-r", "--full-tree", &state]);
    let mut info = String::new();
    for line in listed.lines() {
        let (meta, path) = line.split_once('\t').unwrap();
        if paths
            .iter()
            .any(|p| path == *p || path.starts_with(&format!("{p}/")))
        {
            let parts: Vec<&str> = meta.split(' ').collect();
            info.push_str(&format!("{} {}\t{path}\n", parts[0], parts[2]));
        }
    }
    let index = repo.home().join("pruned-index");
    let _ = std::fs::remove_file(&index);
    let with_index = |args: &[&str], stdin: Option<&str>| {
        let mut cmd = repo.command("git");
        cmd.env("GIT_INDEX_FILE", &index).args(args);
        let mut cmd = assert_cmd::Command::from_std(cmd);
        if let Some(stdin) = stdin {
            cmd.write_stdin(stdin.to_string());
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    with_index(&["read-tree", "--empty"], None);
    with_index(&["update-index", "--index-info"], Some(&info));
    with_index(&["write-tree"], None).trim().to_string()
}

const API_INPUTS: &[&str] = &[
    "packages/api",
    "packages/shared",
    "Cargo.lock",
    "prove-it.toml",
];
const DOCS_INPUTS: &[&str] = &["docs", "prove-it.toml"];

#[test]
fn each_check_is_proven_on_its_input_tree_and_stock_git_reads_the_proof() {
    let repo = monorepo("exit 0", "exit 0");
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("proven: tree"))
        .stdout(predicate::str::contains("all 2 checks"));
    let api = stock_input_tree(&repo, API_INPUTS);
    let docs = stock_input_tree(&repo, DOCS_INPUTS);
    assert_ne!(api, docs);
    let note = repo.note(&api).expect("a note on api's input tree");
    assert!(
        note.contains(&format!("tree: {api}\ncheck: api\n")),
        "{note}"
    );
    let blob = repo.git(&["rev-parse", "HEAD:packages/api/verify.sh"]);
    assert!(
        note.contains(&format!("verify: {} 100755", blob.trim())),
        "{note}"
    );
    let note = repo.note(&docs).expect("a note on docs' input tree");
    assert!(note.contains("check: docs\n"), "{note}");
    // Each script ran once, from its own directory, told its name and its input tree.
    let api_runs = runs(&repo, "api");
    assert_eq!(api_runs.len(), 1);
    assert!(
        api_runs[0].ends_with(&format!("packages/api api {api}")),
        "{api_runs:?}"
    );
    // Nothing changed: nothing runs.
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("nothing was run"));
    assert_eq!(runs(&repo, "api").len(), 1);
}

#[test]
fn a_change_outside_a_checks_inputs_runs_only_the_checks_it_touches() {
    let repo = monorepo("exit 0", "exit 0");
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("docs/index.md", "more docs\n");
    let out = json_stdout(&repo.prove_it(&["run", "--json"]).assert().code(0));
    let checks = out["checks"].as_array().unwrap();
    assert_eq!(checks[0]["name"], "api");
    assert_eq!(checks[0]["result"], "already_proven");
    assert_eq!(checks[1]["name"], "docs");
    assert_eq!(checks[1]["result"], "proven");
    assert_eq!(runs(&repo, "api").len(), 1);
    assert_eq!(runs(&repo, "docs").len(), 2);
    // A file no check reads changes no key.
    repo.write("README.md", "changed\n");
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(runs(&repo, "api").len(), 1);
    assert_eq!(runs(&repo, "docs").len(), 2);
    // The checks file is an input of every check.
    repo.write("prove-it.toml", &format!("{TWO_CHECKS}# a comment\n"));
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(runs(&repo, "api").len(), 2);
    assert_eq!(runs(&repo, "docs").len(), 3);
}

#[test]
fn a_failing_check_fails_the_run_and_the_passing_one_is_still_recorded() {
    let repo = monorepo("echo 'api test broke' >&2\nexit 4", "exit 0");
    repo.prove_it(&["run"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("api test broke"))
        .stdout(predicate::str::contains("1 of 2 checks failed: api"));
    assert!(repo.note(&stock_input_tree(&repo, DOCS_INPUTS)).is_some());
    assert!(repo.note(&stock_input_tree(&repo, API_INPUTS)).is_none());
    // The next run reruns only the failing check.
    repo.prove_it(&["run"]).assert().code(1);
    assert_eq!(runs(&repo, "docs").len(), 1);
    assert_eq!(runs(&repo, "api").len(), 2);
}

/// A check's body that marks it started and waits (5 s at most) for `other` to have started.
fn waiting_for(me: &str, other: &str) -> String {
    format!(
        "touch \"$HOME/started-{me}\"\ni=0\nwhile [ ! -e \"$HOME/started-{other}\" ]; do i=$((i+1)); [ $i -gt 100 ] && exit 9; sleep 0.05; done\nexit 0"
    )
}

/// Two checks that each wait for the other to have started can only pass when they run at
/// once: with one job the first gives up, with two both pass.
#[test]
fn checks_run_in_parallel_up_to_prove_it_jobs() {
    let repo = monorepo(&waiting_for("api", "docs"), &waiting_for("docs", "api"));
    repo.prove_it(&["run"])
        .env("PROVE_IT_JOBS", "1")
        .assert()
        .code(1);
    for name in ["api", "docs"] {
        let _ = std::fs::remove_file(repo.home().join(format!("started-{name}")));
    }
    // The failure with one job would contest the pass on the same inputs (SPEC.md section
    // 3.3): forget it, as a person who knows why it failed would.
    repo.git(&["update-ref", "-d", "refs/notes/prove-it-failures"]);
    // --force: one job let the second check pass on the first's mark, and it is proven.
    repo.prove_it(&["run", "--force"])
        .env("PROVE_IT_JOBS", "2")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("all 2 checks"));
}

/// `run --jobs N` says it for one run, over PROVE_IT_JOBS.
#[test]
fn run_jobs_sets_how_many_checks_run_at_once() {
    let repo = monorepo(&waiting_for("api", "docs"), &waiting_for("docs", "api"));
    repo.prove_it(&["run", "--jobs", "1"])
        .env("PROVE_IT_JOBS", "2")
        .assert()
        .code(1);
    for name in ["api", "docs"] {
        let _ = std::fs::remove_file(repo.home().join(format!("started-{name}")));
    }
    // The failure with one job would contest the pass on the same inputs (SPEC.md section
    // 3.3): forget it, as a person who knows why it failed would.
    repo.git(&["update-ref", "-d", "refs/notes/prove-it-failures"]);
    repo.prove_it(&["run", "--force", "--jobs", "2"])
        .env("PROVE_IT_JOBS", "1")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("all 2 checks"));
}

#[test]
fn two_checks_with_equal_input_trees_never_prove_each_other() {
    let repo = TestRepo::new();
    repo.write(
        "prove-it.toml",
        "[checks.a]\nrun = \"a.sh\"\ninputs = [\"src\"]\n[checks.b]\nrun = \"b.sh\"\ninputs = [\"src\"]\n",
    );
    repo.write("src/x", "x\n");
    script(&repo, "a.sh", "a", "exit 0");
    script(&repo, "b.sh", "b", "exit 0");
    repo.prove_it(&["run"]).assert().code(0);
    let tree = stock_input_tree(&repo, &["src", "prove-it.toml"]);
    let note = repo.note(&tree).unwrap();
    assert!(
        note.contains("check: a\n") && note.contains("check: b\n"),
        "{note}"
    );
    assert_eq!(runs(&repo, "a").len(), 1);
    assert_eq!(runs(&repo, "b").len(), 1);
}

#[test]
fn a_checks_file_in_error_names_its_line_and_runs_nothing() {
    let repo = monorepo("exit 0", "exit 0");
    repo.write(
        "prove-it.toml",
        "[checks.api]\nrun = \"packages/api/verify.sh\"\ninputs = [\"../outside\"]\n",
    );
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("line 3"))
        .stderr(predicate::str::contains("hint: fix prove-it.toml"));
    assert!(runs(&repo, "api").is_empty());
}

/// A checks file that declares no check, beside a verify.sh that is there but cannot run: the
/// refusal must not say verify.sh is missing, or its owner looks in the wrong place.
#[test]
fn a_checks_file_declaring_nothing_beside_a_verify_sh_that_cannot_run_says_it_cannot_run() {
    let repo = TestRepo::with_commit();
    repo.write("prove-it.toml", "protect = [\"tests/\"]\n");
    repo.verify_passes();
    repo.chmod("verify.sh", 0o644);
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "prove-it.toml declares no checks, and there is no executable verify.sh at the root",
        ));
}

#[test]
fn a_check_whose_script_is_missing_or_not_executable_is_refused_by_name() {
    let repo = monorepo("exit 0", "exit 0");
    repo.chmod("docs/verify.sh", 0o644);
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "check docs: its script docs/verify.sh is not executable",
        ));
    repo.remove("docs/verify.sh");
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("docs/verify.sh does not exist"));
}

#[test]
fn a_check_that_changes_its_inputs_while_it_runs_is_not_recorded() {
    let repo = monorepo("echo generated > generated.txt\nexit 0", "exit 0");
    repo.prove_it(&["run"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "changed: packages/api/generated.txt",
        ));
    assert!(repo.note(&stock_input_tree(&repo, DOCS_INPUTS)).is_some());
}

#[test]
fn a_root_verify_sh_beside_a_checks_file_is_the_check_of_every_path() {
    let repo = monorepo("exit 0", "exit 0");
    repo.verify_passes();
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("all 3 checks"));
    // Its record is the one it always was: on the state tree, without a check line.
    let state = repo.stock_state_tree().unwrap();
    let note = repo.note(&state).unwrap();
    assert!(!note.contains("check:"), "{note}");
}

#[test]
fn run_rev_proves_a_commits_checks_and_then_finds_them_proven() {
    let repo = monorepo("exit 0", "exit 0");
    repo.prove_it(&["run", "HEAD"]).assert().code(0);
    assert_eq!(runs(&repo, "api").len(), 1);
    repo.prove_it(&["run", "HEAD"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("nothing was run"));
    assert_eq!(runs(&repo, "api").len(), 1);
}

#[test]
fn doctor_reads_the_checks_file_and_names_a_check_that_cannot_run() {
    let repo = monorepo("exit 0", "exit 0");
    let out = repo.prove_it(&["doctor"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("prove-it.toml declares 2 checks: api, docs"),
        "{text}"
    );
    assert!(!text.contains("verify.sh does not exist"), "{text}");
    repo.chmod("docs/verify.sh", 0o644);
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "check docs: its script docs/verify.sh is not executable",
        ));
    repo.write("prove-it.toml", "[checks.x]\nrun = 1\n");
    repo.prove_it(&["doctor"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("line 2"));
}

/// An interrupt ends every check running at once, and everything each started; nothing is
/// recorded.
#[test]
fn an_interrupt_ends_every_running_check_and_their_children() {
    let started = |name: &str| {
        format!(
            "sleep 30 &\necho $! > \"$HOME/{name}.tmp\"\nmv \"$HOME/{name}.tmp\" \"$HOME/{name}.pid\"\nsleep 30"
        )
    };
    let repo = monorepo(&started("api"), &started("docs"));
    let mut cmd = repo.command(assert_cmd::cargo::cargo_bin("git-prove-it"));
    let child = cmd
        .arg("run")
        .env("PROVE_IT_JOBS", "2")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let since = std::time::Instant::now();
    let pid = |name: &str| repo.home().join(format!("{name}.pid"));
    while !(pid("api").exists() && pid("docs").exists()) {
        assert!(
            since.elapsed() < Duration::from_secs(20),
            "the checks never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = repo
        .command("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert!(since.elapsed() < Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("2 of 2 checks failed"), "{stdout}");
    for name in ["api", "docs"] {
        let grandchild = std::fs::read_to_string(pid(name)).unwrap();
        assert!(
            crate::harness::gone_within_5s(grandchild.trim()),
            "check {name}'s background child survived the interrupt"
        );
    }
    assert_eq!(repo.git(&["notes", "--ref", "prove-it", "list"]), "");
}

/// Each check has the timeout to itself, and one hung check does not hold the others.
#[test]
fn a_hung_check_is_killed_at_the_timeout_and_the_others_are_recorded() {
    let repo = monorepo("sleep 30 &\nsleep 30\nexit 0", "exit 0");
    repo.prove_it(&["run", "--timeout", "1"])
        .env("PROVE_IT_JOBS", "2")
        .timeout(Duration::from_secs(20))
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("api").and(predicate::str::contains("timed out after 1 s")),
        );
    assert!(repo.note(&stock_input_tree(&repo, DOCS_INPUTS)).is_some());
}

#[test]
fn verbose_streams_each_checks_output_after_its_name() {
    let repo = monorepo("echo from-api", "echo from-docs");
    repo.prove_it(&["run", "--verbose"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("[api] from-api"))
        .stderr(predicate::str::contains("[docs] from-docs"));
}

#[test]
fn doctor_run_without_a_root_verify_sh_points_at_run_for_the_checks() {
    let repo = monorepo("exit 0", "exit 0");
    repo.prove_it(&["doctor", "--run"])
        .assert()
        .stdout(predicate::str::contains(
            "--run: there is no root verify.sh to run; the checks of prove-it.toml are run by 'git prove-it run'",
        ));
    assert!(runs(&repo, "api").is_empty());
}

/// On a terminal, each check's start and end is a line, under a running count of the checks.
#[test]
fn a_terminal_shows_each_check_start_and_end() {
    let repo = monorepo("sleep 1.2\nexit 0", "exit 3");
    let bin = assert_cmd::cargo::cargo_bin("git-prove-it");
    let out = repo
        .command("script")
        .args(["-qec", &format!("'{}' run", bin.display()), "/dev/null"])
        .env("PROVE_IT_JOBS", "2")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    for line in [
        "prove-it: api started",
        "prove-it: docs started",
        "prove-it: docs failed in 0s",
        "prove-it: api passed in 1s",
        "prove-it: running 2 checks ... 1s",
    ] {
        assert!(shown.contains(line), "{line}: {shown:?}");
    }
}

/// `run` and the gate read "is there a checks file" alike: a link is one, never overlooked.
#[test]
fn a_checks_file_that_is_a_dangling_link_is_refused_not_overlooked() {
    let repo = monorepo("exit 0", "exit 0");
    repo.verify_passes();
    repo.remove("prove-it.toml");
    repo.symlink("nowhere.toml", "prove-it.toml");
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("prove-it.toml"));
    assert!(runs(&repo, "api").is_empty());
}

/// A check's script outside its own inputs is still what its record names: changed while it
/// ran, nothing is recorded.
#[test]
fn a_check_script_outside_its_inputs_changed_while_it_ran_is_not_recorded() {
    let repo = TestRepo::new();
    repo.write(
        "prove-it.toml",
        "[checks.api]\nrun = \"scripts/api.sh\"\ninputs = [\"api\"]\n",
    );
    repo.write("api/x", "x\n");
    script(
        &repo,
        "scripts/api.sh",
        "api",
        "echo '# swapped' >> \"$0\"\nexit 0",
    );
    repo.commit_all("a script outside its inputs");
    repo.prove_it(&["run"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("changed: scripts/api.sh"));
    assert_eq!(repo.git(&["notes", "--ref", "prove-it", "list"]), "");
}

/// A script whose bytes on disk an end-of-line conversion maps back to its committed blob is
/// not the script a record would name: refused before anything runs (as verify.sh is).
#[test]
fn a_check_script_changed_under_an_eol_conversion_is_refused_before_it_runs() {
    let repo = monorepo("exit 0", "exit 0");
    repo.git(&["config", "core.autocrlf", "true"]);
    let counter = repo.home().join("runs-docs");
    repo.write(
        "docs/verify.sh",
        &format!(
            "#!/bin/sh\r\necho \"$PWD $PROVE_IT_CHECK $PROVE_IT_TREE\" >> '{}'\r\nexit 0\r\n",
            counter.display()
        ),
    );
    repo.chmod("docs/verify.sh", 0o755);
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "docs/verify.sh on disk is not what the state tree records for it",
        ));
    assert!(runs(&repo, "docs").is_empty());
    assert!(runs(&repo, "api").is_empty());
}
