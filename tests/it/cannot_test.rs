//! Exit code 125 from verify.sh or a check: the state cannot be tested, as `git bisect run` has
//! it. Never a proof, never a failure of the code: recorded as such, shown by `run`, `run
//! <range>` and `log`, skipped by `bisect`, and blocking at a stop with words that say so.

use std::collections::BTreeSet;

use predicates::prelude::*;
use serde_json::Value;

use crate::harness::{Imported, TestRepo, fast_import, json_stdout};
use crate::hosts::{Answer, Host, hook};

/// verify.sh of the generated histories: it counts its runs, then exits 125 where state.txt
/// says `skip`, 1 where it says `fail`, and 0 elsewhere.
fn verify_sh(repo: &TestRepo) -> String {
    let home = repo.home().display().to_string();
    format!(
        "#!/bin/sh\n\
         cat n.txt >> '{home}/runs'\n\
         if grep -q skip state.txt; then echo 'cannot build this commit: no compiler'; exit 125; fi\n\
         if grep -q fail state.txt; then echo 'test state ... FAILED'; exit 1; fi\n\
         echo ok\n"
    )
}

/// A linear history on main whose commit k (1-based, subject `commit k`) has state.txt
/// `states[k - 1]`: `ok`, `fail` or `skip`.
fn history(states: &[&str]) -> TestRepo {
    let repo = TestRepo::new();
    let verify = verify_sh(&repo);
    let commits: Vec<Imported<'_>> = states
        .iter()
        .enumerate()
        .map(|(i, state)| {
            let k = i + 1;
            let mut files = vec![
                ("100644", "state.txt", format!("{state}\n")),
                ("100644", "n.txt", format!("{k}\n")),
            ];
            if k == 1 {
                files.insert(0, ("100755", "verify.sh", verify.clone()));
            }
            (format!("commit {k}"), files)
        })
        .collect();
    fast_import(&repo, &commits);
    repo
}

/// Commit `k` (1-based) of a history of `n`, as a full id.
fn id(repo: &TestRepo, n: usize, k: usize) -> String {
    repo.git(&["rev-parse", &format!("main~{}", n - k)])
        .trim()
        .to_string()
}

/// The commits verify.sh ran on, by their n.txt.
fn runs(repo: &TestRepo) -> Vec<String> {
    std::fs::read_to_string(repo.home().join("runs"))
        .map(|runs| runs.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

fn failures_note(repo: &TestRepo, object: &str) -> String {
    let out = repo.git_output(&["notes", "--ref", "prove-it-failures", "show", object]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn proofs_note(repo: &TestRepo, object: &str) -> Option<String> {
    let out = repo.git_output(&["notes", "--ref", "prove-it", "show", object]);
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A committed repository whose verify.sh exits 125.
fn untestable_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.verify_script("echo 'node_modules is missing'\nexit 125");
    repo.commit_all("initial");
    repo
}

/// What real `git bisect run` answers on the same history: the first bad commit, or the
/// commits it could be when only skipped commits are left.
fn git_bisect_run(repo: &TestRepo, good: &str, bad: &str) -> BTreeSet<String> {
    repo.git(&["bisect", "start", bad, good]);
    let out = repo
        .command("git")
        .args(["bisect", "run", "./verify.sh"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    repo.git(&["bisect", "reset"]);
    if let Some(line) = text
        .lines()
        .find(|l| l.ends_with(" is the first bad commit"))
    {
        return BTreeSet::from([line.split(' ').next().unwrap().to_string()]);
    }
    let (_, any) = text
        .split_once("The first bad commit could be any of:")
        .unwrap_or_else(|| panic!("git bisect run said: {text}"));
    any.lines()
        .map(str::trim)
        .filter(|line| line.len() == 40)
        .map(str::to_string)
        .collect()
}

/// What our bisect answers, as the same set: the first failing commit, or the candidates.
fn our_bisect(repo: &TestRepo, good: &str, bad: &str, code: i32) -> (BTreeSet<String>, Value) {
    let assert = repo
        .prove_it(&["bisect", good, bad, "--json"])
        .assert()
        .code(code);
    let json = json_stdout(&assert);
    let answer = match json["first_bad"]["commit"].as_str() {
        Some(commit) => BTreeSet::from([commit.to_string()]),
        None => json["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["commit"].as_str().unwrap().to_string())
            .collect(),
    };
    (answer, json)
}

#[test]
fn run_exits_125_and_records_cannot_test_never_a_failure_nor_a_proof() {
    let repo = untestable_repo();
    repo.prove_it(&["run"])
        .assert()
        .code(125)
        .stdout(predicate::str::contains("cannot test: verify.sh says tree"))
        .stdout(predicate::str::contains("not a failure of the code"))
        .stdout(predicate::str::contains("node_modules is missing"));
    let assert = repo.prove_it(&["run", "--json"]).assert().code(125);
    let json = json_stdout(&assert);
    assert_eq!(json["result"], "cannot_test", "{json}");
    assert_eq!(json["outcome"], "NOT_PROVEN", "{json}");
    assert_eq!(json["reason"], "exit 125", "{json}");

    let note = failures_note(&repo, "HEAD^{tree}");
    assert!(note.contains("cannot-test: exit 125"), "{note}");
    assert!(note.contains("outcome: INSUFFICIENT_EVIDENCE"), "{note}");
    assert!(!note.contains("DISPROVEN"), "never a failure: {note}");
    assert_eq!(proofs_note(&repo, "HEAD^{tree}"), None, "never a proof");
    repo.prove_it(&["status"]).assert().code(1);
    repo.prove_it(&["log"])
        .assert()
        .success()
        .stdout(predicate::str::contains("cannot test (exit 125"));
}

#[test]
fn a_check_that_exits_125_leaves_the_state_untestable_and_another_failing_fails_it() {
    let repo = TestRepo::new();
    repo.write("prove-it.toml", crate::checks_report::CHECKS);
    repo.write("api/verify.sh", "#!/bin/sh\nexit 0\n");
    repo.write(
        "docs/verify.sh",
        "#!/bin/sh\necho 'no mdbook here'\nexit 125\n",
    );
    repo.chmod("api/verify.sh", 0o755);
    repo.chmod("docs/verify.sh", 0o755);
    repo.commit_all("two checks");
    let assert = repo.prove_it(&["run", "--json"]).assert().code(125);
    let json = json_stdout(&assert);
    assert_eq!(json["outcome"], "NOT_PROVEN", "{json}");
    let docs = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "docs")
        .unwrap();
    assert_eq!(docs["result"], "cannot_test", "{json}");
    repo.prove_it(&["log"])
        .assert()
        .success()
        .stdout(predicate::str::contains("cannot test"))
        .stdout(predicate::str::contains("docs (exit 125"));

    // A failure beside it is a failure: exit 1, DISPROVEN.
    repo.write("api/verify.sh", "#!/bin/sh\nexit 1\n");
    repo.prove_it(&["run"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("docs").and(predicate::str::contains("cannot test")));
}

#[test]
fn run_range_shows_cannot_test_runs_it_again_and_is_not_proven() {
    let repo = history(&["ok", "ok", "skip", "ok"]);
    let base = id(&repo, 4, 1);
    let range = format!("{base}..main");
    repo.prove_it(&["run", &range])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "commit 3: cannot test: exit 125; not proven, and not a failure of the code",
        ))
        .stdout(predicate::str::contains("2 of 3 commits proven"));
    let mut ran = runs(&repo);
    ran.sort();
    assert_eq!(ran, ["2", "3", "4"].map(String::from).to_vec());
    // Not skipped as a failure on record is: it runs again (it may be testable now).
    repo.prove_it(&["run", &range]).assert().code(1);
    assert_eq!(runs(&repo).iter().filter(|n| *n == "3").count(), 2);
    assert!(!failures_note(&repo, &format!("{}^{{tree}}", id(&repo, 4, 3))).contains("DISPROVEN"));
}

#[test]
fn bisect_skips_a_commit_that_exits_125_as_git_bisect_run_does() {
    // Commit 3 cannot be tested; commit 6 is the first failing one.
    let states = ["ok", "ok", "skip", "ok", "ok", "fail", "fail", "fail"];
    let repo = history(&states);
    let (good, bad) = (id(&repo, 8, 1), id(&repo, 8, 8));
    let (ours, json) = our_bisect(&repo, &good, &bad, 0);
    assert_eq!(ours, BTreeSet::from([id(&repo, 8, 6)]), "{json}");
    assert_eq!(ours, git_bisect_run(&repo, &good, &bad));
}

#[test]
fn bisect_names_the_range_skipped_commits_leave_unnarrowed_as_git_bisect_run_does() {
    // Commits 4 and 5 cannot be tested and sit just before the first failing one, 6: it could
    // be any of 4, 5 and 6, and both tools say so.
    let states = ["ok", "ok", "ok", "skip", "skip", "fail", "fail"];
    let repo = history(&states);
    let (good, bad) = (id(&repo, 7, 1), id(&repo, 7, 7));
    let (ours, json) = our_bisect(&repo, &good, &bad, 1);
    let expected: BTreeSet<String> = [4, 5, 6].map(|k| id(&repo, 7, k)).into();
    assert_eq!(ours, expected, "{json}");
    assert_eq!(ours, git_bisect_run(&repo, &good, &bad));
    let candidates = json["candidates"].as_array().unwrap();
    assert_eq!(candidates[0]["untestable"], "exit 125", "{json}");
    assert_eq!(candidates[2]["untestable"], Value::Null, "{json}");
    repo.prove_it(&["bisect", &good, &bad])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "could not narrow it down: only commits that cannot be tested are left; the first failing commit could be any of these 3:",
        ))
        .stdout(predicate::str::contains("commit 4 (cannot be tested: exit 125)"));
}

#[test]
fn bisect_takes_a_cannot_test_record_as_a_skip_without_running_the_commit() {
    let states = ["ok", "skip", "fail"];
    let repo = history(&states);
    let untestable = id(&repo, 3, 2);
    repo.prove_it(&["run", &untestable]).assert().code(125);
    let before = runs(&repo).len();
    let (good, bad) = (id(&repo, 3, 1), id(&repo, 3, 3));
    let (ours, json) = our_bisect(&repo, &good, &bad, 1);
    assert_eq!(ours.len(), 2, "{json}");
    // Only BAD ran: the untestable commit's record spared its run.
    assert_eq!(runs(&repo)[before..], ["3".to_string()], "{json}");
    // --retry-failed runs it again.
    repo.prove_it(&["bisect", &good, &bad, "--retry-failed", "--json"])
        .assert()
        .code(1);
    assert!(runs(&repo)[before..].contains(&"2".to_string()));
}

#[test]
fn a_stop_on_a_state_that_cannot_be_tested_blocks_saying_so() {
    let repo = untestable_repo();
    let session = "86ca0000-cannot-test";
    hook(&repo, Host::Claude, Host::Claude.start(&repo, session), &[]);
    repo.write("a.txt", "changed by the agent\n");
    let Answer::Block(reason) = hook(
        &repo,
        Host::Claude,
        Host::Claude.stop(&repo, session, 0),
        &[],
    ) else {
        panic!("a state that cannot be tested must block")
    };
    assert!(
        reason.contains("verify.sh says this state cannot be tested (exit 125)"),
        "{reason}"
    );
    assert!(reason.contains("not a failure of the code"), "{reason}");
    assert!(reason.contains("node_modules is missing"), "{reason}");
    assert!(!reason.contains("verify.sh failed"), "{reason}");
    let tree = repo.git(&["stash", "create"]);
    let note = failures_note(&repo, &format!("{}^{{tree}}", tree.trim()));
    assert!(note.contains("cannot-test: exit 125"), "{note}");
    assert!(!note.contains("DISPROVEN"), "{note}");
}

/// The newest run of a key says where it stands: a failure then a cannot-test record of the
/// same state and script reads as "cannot test", so `run <range>` runs it again rather than
/// skipping it as failed; a failure after that reads as failed again.
#[test]
fn the_newest_of_a_failure_and_a_cannot_test_record_says_where_a_commit_stands() {
    let repo = TestRepo::new();
    let mode = repo.home().join("exit-code");
    std::fs::write(&mode, "1").unwrap();
    repo.write("a.txt", "a\n");
    repo.commit_all("base");
    repo.verify_script(&format!(
        "echo run >> '{0}.runs'\nexit $(cat '{0}')",
        mode.display()
    ));
    repo.commit_all("verify");
    fn clock(secs: &str) -> [(&'static str, &str); 1] {
        [("PROVE_IT_TEST_CLOCK_OFFSET", secs)]
    }
    let log = |secs: &str| {
        let assert = repo
            .prove_it(&["log", "-n", "1"])
            .envs(clock(secs))
            .assert()
            .success();
        String::from_utf8_lossy(&assert.get_output().stdout).into_owned()
    };
    repo.prove_it(&["run"]).envs(clock("0")).assert().code(1);
    assert!(log("0").contains("failed (exit 1"), "{}", log("0"));
    std::fs::write(&mode, "125").unwrap();
    repo.prove_it(&["run"]).envs(clock("60")).assert().code(125);
    assert!(log("60").contains("cannot test (exit 125"), "{}", log("60"));
    let runs = || {
        std::fs::read_to_string(repo.home().join("exit-code.runs"))
            .unwrap()
            .lines()
            .count()
    };
    let before = runs();
    repo.prove_it(&["run", "HEAD~1..HEAD"])
        .envs(clock("90"))
        .assert()
        .code(1);
    assert_eq!(
        runs(),
        before + 1,
        "a commit that cannot be tested is run again"
    );
    std::fs::write(&mode, "1").unwrap();
    repo.prove_it(&["run"]).envs(clock("120")).assert().code(1);
    assert!(log("120").contains("failed (exit 1"), "{}", log("120"));
}
