//! `--exec`: history from before a repository adopted git-prove-it, proven with a script from
//! outside it, whose records never count as a proof of a commit's own verify.sh or checks.

use crate::harness::{Imported, TestRepo, fast_import};

/// A history of `n` commits without verify.sh: commit `i` (1-based) writes `state.txt` as
/// `bad i` when `bad` holds `i`, else `good i`; with `adopt`, the last commit adds a passing
/// verify.sh.
fn old_history(repo: &TestRepo, n: usize, bad: &[usize], adopt: bool) {
    let mut commits: Vec<Imported<'_>> = Vec::new();
    for i in 1..=n {
        let state = if bad.contains(&i) { "bad" } else { "good" };
        let mut files = vec![("100644", "state.txt", format!("{state} {i}\n"))];
        if adopt && i == n {
            files.push(("100755", "verify.sh", "#!/bin/sh\nexit 0\n".to_string()));
        }
        commits.push((format!("commit {i}"), files));
    }
    fast_import(repo, &commits);
}

/// A script outside the repository that fails when state.txt says bad.
const TEST: &str = "! grep -q bad state.txt";

fn stdout(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stdout).into_owned()
}

#[test]
fn a_history_without_verify_sh_is_proven_with_a_script_from_outside_it() {
    let repo = TestRepo::new();
    old_history(&repo, 4, &[], false);
    let script = repo.home_script("test.sh", TEST);
    let script = script.to_str().unwrap();
    repo.prove_it(&["run", "main~3..main", "--exec", script])
        .assert()
        .success();
    let blob = repo.git(&["hash-object", script]).trim().to_string();
    let note = repo
        .note("main^{tree}")
        .expect("a record on the commit's tree");
    assert!(note.contains("check: exec:test.sh\n"), "{note}");
    assert!(note.contains(&format!("verify: {blob} 100755\n")), "{note}");
    // The script's bytes are in the object database: the record's blob can be read back.
    assert_eq!(
        repo.git(&["cat-file", "-p", &blob]),
        std::fs::read_to_string(script).unwrap()
    );
    // A second run finds every commit on record and runs nothing.
    let again = repo
        .prove_it(&["run", "main~3..main", "--exec", script])
        .assert()
        .success();
    assert!(!stdout(&again).contains("proven in"), "{}", stdout(&again));
}

#[test]
fn check_alone_never_counts_a_script_from_outside_the_history() {
    let repo = TestRepo::new();
    old_history(&repo, 3, &[], false);
    let script = repo.home_script("test.sh", TEST);
    let script = script.to_str().unwrap();
    repo.prove_it(&["run", "main~2..main", "--exec", script])
        .assert()
        .success();
    repo.prove_it(&["check", "--all", "main~2..main"])
        .assert()
        .code(1);
    repo.prove_it(&["check", "--all", "--exec", script, "main~2..main"])
        .assert()
        .success();
    // Another script (other bytes under the same name) proves nothing of those commits.
    std::fs::create_dir(repo.home().join("other")).unwrap();
    let other = repo.home_script("other/test.sh", &format!("{TEST}\n# another"));
    repo.prove_it(&[
        "check",
        "--all",
        "--exec",
        other.to_str().unwrap(),
        "main~2..main",
    ])
    .assert()
    .code(1);
}

/// A commit with its own verify.sh stands by it alone: a record of a script from outside the
/// history on its tree must never stand in for a proof of the repository's own verify.sh.
#[test]
fn check_exec_does_not_count_for_a_commit_with_its_own_verify_sh() {
    let repo = TestRepo::new();
    old_history(&repo, 3, &[], true);
    let script = repo.home_script("test.sh", TEST);
    let script = script.to_str().unwrap();
    repo.prove_it(&["run", "main~2..main", "--exec", script])
        .assert()
        .success();
    let checked = repo
        .prove_it(&["check", "--all", "--exec", script, "main~2..main"])
        .assert()
        .code(1);
    let out = stdout(&checked);
    assert!(out.contains("not proven: 1 of 2 commits"), "{out}");
    assert!(out.contains("commit 3"), "{out}");
    // Proven by its own verify.sh, the commit counts again.
    repo.prove_it(&["run", "main"]).assert().success();
    repo.prove_it(&["check", "--all", "--exec", script, "main~2..main"])
        .assert()
        .success();
}

#[test]
fn bisect_exec_finds_the_first_failing_commit() {
    let repo = TestRepo::new();
    old_history(&repo, 9, &[6, 7, 8, 9], false);
    let script = repo.home_script("test.sh", TEST);
    let found = repo
        .prove_it(&[
            "bisect",
            "main~8",
            "main",
            "--exec",
            script.to_str().unwrap(),
        ])
        .assert()
        .success();
    let out = stdout(&found);
    let first = repo.git(&["rev-parse", "main~3"]);
    assert!(
        out.contains(&format!("first failing commit: {}", first.trim())),
        "{out}"
    );
    assert!(out.contains("check exec:test.sh failed"), "{out}");
}

/// Each commit of a range must be proven by the same script: one edited while the range runs
/// would prove the rest with other bytes than the first commits', under the same name.
#[test]
fn a_script_changed_during_the_range_is_refused() {
    let repo = TestRepo::new();
    old_history(&repo, 4, &[], false);
    let path = repo.home().join("test.sh");
    let script = repo.home_script(
        "test.sh",
        &format!("printf '# edited\\n' >> '{}'\n{TEST}", path.display()),
    );
    let refused = repo
        .prove_it(&[
            "run",
            "main~3..main",
            "--jobs",
            "1",
            "--exec",
            script.to_str().unwrap(),
        ])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        err.contains("changed while the commits were proven"),
        "{err}"
    );
    assert_eq!(crate::run_rev::leftovers(&repo), (0, 0));
}

#[test]
fn log_shows_the_records_of_a_script_under_its_name() {
    let repo = TestRepo::new();
    old_history(&repo, 2, &[], false);
    let script = repo.home_script("unit.sh", TEST);
    repo.prove_it(&["run", "main", "--exec", script.to_str().unwrap()])
        .assert()
        .success();
    let log = repo
        .prove_it(&["log", "--color", "never"])
        .assert()
        .success();
    let out = stdout(&log);
    let first = out.lines().next().unwrap_or_default();
    assert!(first.contains("exec:unit.sh PROVEN"), "{out}");
    assert!(first.contains("not-armed"), "{out}");
    let json = repo.prove_it(&["log", "--json"]).assert().success();
    let json: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    assert_eq!(json["commits"][0]["exec"][0]["name"], "exec:unit.sh");
    assert_eq!(json["commits"][0]["proven"], false);
}
