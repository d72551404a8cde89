//! Issue 21: every error a person reads is one plain sentence and `hint:` lines that fix it,
//! and with `--json` a failure is a JSON object on stdout too.

use predicates::prelude::*;

use crate::harness::TestRepo;

/// The lines of an error message that are neither its sentence nor a hint.
fn stray_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .skip(1)
        .filter(|line| !line.starts_with("hint: "))
        .collect()
}

// Issue 21 item 7: outside a repository every command said `caused by: NotFound` and no way out.
#[test]
fn outside_a_repository_every_command_says_how_to_get_into_one() {
    let repo = TestRepo::new();
    let elsewhere = repo.home().join("plain");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for command in [
        &["run"][..],
        &["status"],
        &["check"],
        &["log"],
        &["sync"],
        &["ledger"],
        &["doctor"],
    ] {
        let assert = repo
            .prove_it(command)
            .current_dir(&elsewhere)
            .env("GIT_CEILING_DIRECTORIES", repo.home())
            .assert()
            .code(2)
            .stdout("");
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert!(
            stderr.starts_with("error: not in a git repository"),
            "{command:?}: {stderr}"
        );
        assert!(!stderr.contains("caused by"), "{command:?}: {stderr}");
        assert!(
            stderr.contains("hint: ") && stderr.contains("git init"),
            "{command:?}: {stderr}"
        );
        assert!(stderr.contains("cd into"), "{command:?}: {stderr}");
    }
}

// Issue 21 item 7: `run nosuchrev` printed three `caused by:` lines of gix internals.
#[test]
fn an_unknown_revision_is_one_sentence_and_a_hint() {
    let repo = TestRepo::with_commit();
    for command in [
        &["run", "nosuchrev"][..],
        &["check", "nosuchrev"],
        &["log", "nosuchrev"],
    ] {
        let assert = repo.prove_it(command).assert().code(2).stdout("");
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert!(
            stderr.starts_with("error: could not resolve the revision \"nosuchrev\"\n"),
            "{command:?}: {stderr}"
        );
        assert!(stray_lines(&stderr).is_empty(), "{command:?}: {stderr}");
        assert!(
            stderr.contains("hint: name a commit"),
            "{command:?}: {stderr}"
        );
    }
}

// Issue 21 item 7: with --json a failure printed nothing on stdout, so a script read nothing.
#[test]
fn with_json_a_failure_is_a_json_error_object_on_stdout() {
    let repo = TestRepo::with_commit();
    let assert = repo
        .prove_it(&["run", "--json", "nosuchrev"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("error: could not resolve"));
    let value = crate::harness::json_stdout(&assert);
    assert_eq!(value["version"], 1);
    assert_eq!(value["code"], "bad_revision");
    assert_eq!(
        value["message"],
        "could not resolve the revision \"nosuchrev\""
    );
    assert!(
        value["hints"][0]
            .as_str()
            .unwrap()
            .starts_with("name a commit")
    );

    let elsewhere = repo.home().join("plain");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for command in [
        &["status", "--json"][..],
        &["sync", "--json"],
        &["ledger", "--json"],
    ] {
        let assert = repo
            .prove_it(command)
            .current_dir(&elsewhere)
            .env("GIT_CEILING_DIRECTORIES", repo.home())
            .assert()
            .code(2);
        let value = crate::harness::json_stdout(&assert);
        assert_eq!(value["code"], "not_a_repository", "{command:?}");
        assert!(
            value["hints"]
                .as_array()
                .unwrap()
                .iter()
                .any(|hint| hint.as_str().unwrap().contains("git init")),
            "{command:?}: {value}"
        );
    }
    // Without --json, stdout stays empty: the object is for scripts that asked for one.
    repo.prove_it(&["status"])
        .current_dir(&elsewhere)
        .env("GIT_CEILING_DIRECTORIES", repo.home())
        .assert()
        .code(2)
        .stdout("");
}

// Issue 21 item 8: a verify.sh without the execute bit was told "create an executable verify.sh".
#[test]
fn a_verify_sh_without_the_execute_bit_is_told_chmod() {
    let repo = TestRepo::new();
    repo.write("verify.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("verify.sh", 0o644);
    repo.prove_it(&["run"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "hint: make it executable: chmod +x verify.sh",
        ))
        .stdout(predicate::str::contains("create an executable").not());
    let assert = repo.prove_it(&["run", "--json"]).assert().code(3);
    let value = crate::harness::json_stdout(&assert);
    assert_eq!(value["hints"][0], "make it executable: chmod +x verify.sh");
}

// Issue 21 item 8: `run` with no verify.sh did not mention `init`, which writes one.
#[test]
fn run_without_verify_sh_points_at_init() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.prove_it(&["run"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "hint: write one for this project's stack: git prove-it init",
        ));
}
