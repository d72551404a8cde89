//! Failures on record and flaky proofs where reviewers look: `log` (its `--json`, `-p`
//! and `--stats`), `check`, `status`, and `sync --with-failures`. Failures are recorded by
//! real failing runs of `git prove-it run <rev>`.

use predicates::prelude::*;

use crate::check::{short, tree_of};
use crate::checks_report::CHECKS;
use crate::harness::{BareRemote, TestRepo, json_stdout};

const FAILURES_REF: &str = "refs/notes/prove-it-failures";

/// main: initial (proven), breaks (verify.sh fails with 1, failure recorded), another (same
/// failing verify.sh, another tree: never run), fixed (verify.sh changed, never run).
fn history() -> TestRepo {
    let repo = TestRepo::with_commit();
    repo.verify_fails(1);
    repo.commit_all("breaks");
    repo.write("b.txt", "b\n");
    repo.commit_all("another");
    repo.verify_passes();
    repo.commit_all("fixed");
    repo.prove_it(&["run", "HEAD~3"]).assert().code(0);
    repo.prove_it(&["run", "HEAD~2"]).assert().code(1);
    repo
}

/// The line of `log`'s output that names `rev`.
/// The line of `log` for `rev`, its runs of spaces (the padding of the standing column, which
/// fits the longest words listed) squeezed to one; compare it with [`squeezed`] words.
fn line_of(out: &str, repo: &TestRepo, rev: &str) -> String {
    let short = short(repo, rev);
    squeezed(
        out.lines()
            .find(|line| line.starts_with(&short))
            .unwrap_or_else(|| panic!("no line for {rev} in {out}")),
    )
}

fn squeezed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn stdout(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.get_output().stdout.clone()).unwrap()
}

#[test]
fn log_says_failed_only_for_the_state_that_failed() {
    let repo = history();
    let out = stdout(
        &repo
            .prove_it(&["log", "--color=never"])
            .env("PROVE_IT_TEST_CLOCK_OFFSET", "190")
            .assert()
            .code(0),
    );
    assert!(
        line_of(&out, &repo, "HEAD~2").contains(&squeezed(" failed (exit 1, 3 min ago) breaks")),
        "{out}"
    );
    // Another tree (a.txt unchanged but b.txt added), and a fixed verify.sh: no failure of theirs.
    assert!(
        line_of(&out, &repo, "HEAD~1").contains(&squeezed(" unproven      another")),
        "{out}"
    );
    assert!(
        line_of(&out, &repo, "HEAD").contains(&squeezed(" unproven      fixed")),
        "{out}"
    );
    assert!(
        line_of(&out, &repo, "HEAD~3").contains(&squeezed(" proven        initial")),
        "{out}"
    );
    // The standing column fits the failure's words: the subjects start in one column.
    let starts: Vec<usize> = ["fixed", "another", "breaks", "initial"]
        .iter()
        .zip(out.lines())
        .map(|(subject, line)| line.find(&format!(" {subject}")).expect(subject))
        .collect();
    assert!(
        starts.iter().all(|&at| at == starts[0]),
        "{starts:?}\n{out}"
    );

    // Hours later, the same failure in hours; -p shows its last lines.
    let later = stdout(
        &repo
            .prove_it(&["log", "-p", "--color=never", "HEAD~2", "-n", "1"])
            .env("PROVE_IT_TEST_CLOCK_OFFSET", "7300")
            .assert()
            .code(0),
    );
    assert!(
        later.contains(" failed (exit 1, 2 h ago) breaks\n"),
        "{later}"
    );
    assert!(
        later.contains("    last lines of the failed run ("),
        "{later}"
    );
    assert!(later.contains("    test x ... FAILED\n"), "{later}");

    // Proving it anyway (a flaky machine, a fixed dependency) ends the failure's say.
    hand_prove(&repo, "HEAD~2");
    let after = stdout(&repo.prove_it(&["log", "--color=never"]).assert().code(0));
    assert!(
        line_of(&after, &repo, "HEAD~2").contains(&squeezed(" proven        breaks")),
        "{after}"
    );
}

/// A valid proof of `rev`'s tree and verify.sh, written by hand with stock git: a pass
/// recorded elsewhere, and synced here.
fn hand_prove(repo: &TestRepo, rev: &str) {
    let tree = tree_of(repo, rev);
    let blob = repo
        .git(&["rev-parse", &format!("{rev}:verify.sh")])
        .trim()
        .to_string();
    let record = format!(
        "prove-it-record: 1\noutcome: PROVEN\ntree: {tree}\nhead: none\nverify: {blob} 100755\nexit-code: 0\nduration-ms: 5\ntime: 2026-11-29T18:52:16Z\nhost: cli\nsession: none\ntool: git-prove-it test\nSigned-off-by: A U Thor <author@example.com>\n"
    );
    crate::check::hand_write_note(repo, &tree, &record);
}

#[test]
fn log_json_carries_each_failure_and_stats_count_them() {
    let repo = history();
    let json = json_stdout(&repo.prove_it(&["log", "--json"]).assert().code(0));
    let commits = json["commits"].as_array().unwrap();
    let failed = &commits[2];
    assert_eq!(failed["subject"], "breaks");
    // The status stays the proofs' word; the failure is beside it.
    assert_eq!(failed["status"], "unproven");
    assert_eq!(failed["proven"], false);
    let failure = &failed["failure"];
    assert_eq!(failure["exit"], "exit code 1");
    assert_eq!(failure["exit_code"], 1);
    assert_eq!(failure["attempts"], 1);
    assert!(
        failure["time"].as_str().unwrap().ends_with('Z'),
        "{failure}"
    );
    let output: Vec<&str> = failure["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(output.contains(&"test x ... FAILED"), "{output:?}");
    for other in [&commits[0], &commits[1], &commits[3]] {
        assert!(other.get("failure").is_none(), "{other}");
    }

    let stats = json_stdout(
        &repo
            .prove_it(&["log", "--stats", "--json"])
            .assert()
            .code(0),
    );
    assert_eq!(stats["commits"], 4);
    assert_eq!(stats["proven"], 1);
    assert_eq!(stats["failed"], 1);
    assert_eq!(stats["flaky"], 0);
    repo.prove_it(&["log", "--stats"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "failed 1 of 4 commits: a failure is on record ('git prove-it log' shows it)\n",
        ));
}

#[test]
fn check_says_failed_and_its_exit_status_is_the_proofs_alone() {
    let repo = history();
    repo.prove_it(&["check", "HEAD~2"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "190")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "  {} breaks (its last run failed: exit 1, 3 min ago)\n",
            short(&repo, "HEAD~2")
        )));
    repo.prove_it(&["check", "--all", "HEAD~3..HEAD~1"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("not proven: 2 of 2 commits\n"))
        .stdout(predicate::str::contains(format!(
            "  {} another (no proof for its tree)\n",
            short(&repo, "HEAD~1")
        )));
    repo.prove_it(&["check", "HEAD~3"]).assert().code(0);
}

#[test]
fn a_kill_at_the_timeout_reads_as_such() {
    let repo = TestRepo::with_commit();
    repo.verify_script("sleep 30");
    repo.commit_all("hangs");
    repo.prove_it(&["run", "--timeout", "1", "HEAD"])
        .assert()
        .code(1);
    repo.prove_it(&["log", "--color=never", "-n", "1"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "7300")
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            " failed (timed out after 1 s, 2 h ago) hangs\n",
        ));
    let json = json_stdout(
        &repo
            .prove_it(&["log", "--json", "-n", "1"])
            .assert()
            .code(0),
    );
    assert_eq!(
        json["commits"][0]["failure"]["exit_code"],
        serde_json::Value::Null
    );
}

/// A verify.sh that fails on its first run and passes on its second, by a counter file outside
/// the repository.
fn flaky_verify(repo: &TestRepo) {
    let counter = repo.home().join("runs");
    repo.verify_script(&format!(
        "n=$(cat '{c}' 2>/dev/null || echo 0)\nn=$((n + 1))\necho $n > '{c}'\necho \"run $n\"\n[ $n -ge 2 ]",
        c = counter.display()
    ));
}

#[test]
fn a_proof_that_passed_after_a_failed_run_is_flaky_in_log_and_stats() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    flaky_verify(&repo);
    repo.commit_all("flaky");
    repo.git(&["config", "prove-it.retries", "2"]);
    repo.prove_it(&["run", "HEAD"]).assert().code(0);
    let out = stdout(&repo.prove_it(&["log", "--color=never"]).assert().code(0));
    assert!(
        line_of(&out, &repo, "HEAD").contains(&squeezed(" proven (flaky: 1) flaky  (")),
        "{out}"
    );
    assert!(
        line_of(&out, &repo, "HEAD~1").contains(&squeezed(" proven        initial")),
        "{out}"
    );
    let json = json_stdout(&repo.prove_it(&["log", "--json"]).assert().code(0));
    assert_eq!(json["commits"][0]["proof"]["flaky"], 1);
    assert!(json["commits"][1]["proof"].get("flaky").is_none());
    // A pass is a proof: no failure is shown for a proven commit.
    assert!(json["commits"][0].get("failure").is_none());
    let stats = json_stdout(
        &repo
            .prove_it(&["log", "--stats", "--json"])
            .assert()
            .code(0),
    );
    assert_eq!(
        (stats["proven"].clone(), stats["flaky"].clone()),
        (2.into(), 1.into())
    );
    assert_eq!(stats["failed"], 0);
    repo.prove_it(&["log", "--stats"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "  1 of them flaky: passed only after failed runs (prove-it.retries)\n",
        ));
}

/// Two checks: api passes, docs fails with 3. Commits: checks (run: api proven, docs failed),
/// api-only (api's inputs changed, docs' did not: never run), docs-fixed (docs' script changed).
fn checks_history() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("prove-it.toml", CHECKS);
    repo.write("api/verify.sh", "#!/bin/sh\nexit 0\n");
    repo.write(
        "docs/verify.sh",
        "#!/bin/sh\necho 'broken link' >&2\nexit 3\n",
    );
    repo.chmod("api/verify.sh", 0o755);
    repo.chmod("docs/verify.sh", 0o755);
    repo.commit_all("checks");
    repo.prove_it(&["run", "HEAD"]).assert().code(1);
    repo.write("api/lib.txt", "api\n");
    repo.commit_all("api-only");
    repo.write("docs/verify.sh", "#!/bin/sh\nexit 0\n");
    repo.commit_all("docs-fixed");
    repo
}

#[test]
fn with_checks_a_failure_belongs_to_its_check_and_its_input_tree() {
    let repo = checks_history();
    let out = stdout(
        &repo
            .prove_it(&["log", "--color=never"])
            .env("PROVE_IT_TEST_CLOCK_OFFSET", "190")
            .assert()
            .code(0),
    );
    assert!(
        line_of(&out, &repo, "HEAD~2").contains(&squeezed(
            " failed        checks  (proven 1/2 checks, failed: docs (exit 3, 3 min ago))"
        )),
        "{out}"
    );
    // docs' input tree is the same one commit later: its failure is still on record for it.
    assert!(
        line_of(&out, &repo, "HEAD~1").contains(
            &squeezed(" failed        api-only  (proven 0/2 checks, missing: api; failed: docs (exit 3, 3 min ago))")
        ),
        "{out}"
    );
    assert!(
        line_of(&out, &repo, "HEAD").contains(&squeezed(
            " unproven      docs-fixed  (proven 0/2 checks, missing: api, docs)"
        )),
        "{out}"
    );
    let patch = stdout(
        &repo
            .prove_it(&["log", "-p", "--color=never", "-n", "1", "HEAD~2"])
            .assert()
            .code(0),
    );
    assert!(
        patch.contains("    check docs         failed        "),
        "{patch}"
    );
    assert!(patch.contains("      broken link\n"), "{patch}");
    assert!(
        patch.contains("    check api          proven        "),
        "{patch}"
    );

    let json = json_stdout(
        &repo
            .prove_it(&["log", "--json", "HEAD~2", "-n", "1"])
            .assert()
            .code(0),
    );
    let checks = json["commits"][0]["checks"].as_array().unwrap();
    assert_eq!(checks[0]["name"], "api");
    assert!(checks[0].get("failure").is_none());
    assert_eq!(checks[1]["name"], "docs");
    assert_eq!(checks[1]["standing"], "unproven");
    assert_eq!(checks[1]["failure"]["exit_code"], 3);
    assert!(
        json["commits"][0].get("failure").is_none(),
        "each check has its own"
    );
    repo.prove_it(&["check", "HEAD~2"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "190")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "(proven 1/2 checks, failed: docs (exit 3, 3 min ago))",
        ));
    let stats = json_stdout(
        &repo
            .prove_it(&["log", "--stats", "--json"])
            .assert()
            .code(0),
    );
    assert_eq!(stats["failed"], 2);
}

#[test]
fn status_says_the_last_run_failed_for_the_state_and_each_check() {
    let repo = TestRepo::with_commit();
    repo.verify_fails(1);
    repo.prove_it(&["run"]).assert().code(1);
    repo.prove_it(&["status"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "190")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "proof:      none, last run failed: exit 1, 3 min ago (run 'git prove-it run' to prove this state)\n",
        ));
    let json = json_stdout(&repo.prove_it(&["status", "--json"]).assert().code(1));
    assert_eq!(json["failure"]["exit_code"], 1);
    // Another state: no failure of its own.
    repo.write("a.txt", "changed\n");
    repo.prove_it(&["status"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "proof:      none (run 'git prove-it run' to prove this state)\n",
        ));
    let json = json_stdout(&repo.prove_it(&["status", "--json"]).assert().code(1));
    assert!(json.get("failure").is_none(), "{json}");

    let checks = checks_history();
    checks.git(&["checkout", "-q", "HEAD~2"]);
    checks
        .prove_it(&["status"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "190")
        .assert()
        .code(1)
        .stdout(crate::harness::matches(
            r"\n  docs +[0-9a-f]{12} not proven, last run failed: exit 3, 3 min ago\n",
        ))
        .stdout(crate::harness::matches(r"\n  api +[0-9a-f]{12} PROVEN by "));
    let json = json_stdout(&checks.prove_it(&["status", "--json"]).assert().code(1));
    let listed = json["checks"].as_array().unwrap();
    assert!(listed[0].get("failure").is_none());
    assert_eq!(listed[1]["failure"]["exit_code"], 3);
}

/// A remote, and a clone of it whose main (pushed, without hooks) fails on top of a proven
/// commit, its failure recorded.
fn failing_clone() -> (BareRemote, TestRepo) {
    let remote = BareRemote::new();
    let origin = TestRepo::with_commit();
    origin.publish_to(&remote);
    let clone = TestRepo::clone_of(&remote);
    clone.prove_it(&["run"]).assert().code(0);
    clone.verify_fails(1);
    clone.commit_all("breaks");
    clone.prove_it(&["run", "HEAD"]).assert().code(1);
    clone.git(&["push", "-q", "--no-verify", "origin", "main"]);
    assert!(clone.git(&["show-ref"]).contains(FAILURES_REF));
    (remote, clone)
}

fn ls_remote(repo: &TestRepo) -> String {
    repo.git(&["ls-remote", "origin"])
}

/// The failure records of the note on `tree` in `repo`'s failures ref, read by stock git.
fn failure_records(repo: &TestRepo, tree: &str) -> usize {
    let out = repo.git_output(&["notes", "--ref", FAILURES_REF, "show", tree]);
    String::from_utf8_lossy(&out.stdout)
        .matches("outcome: DISPROVEN")
        .count()
}

#[test]
fn sync_keeps_failures_local_unless_with_failures() {
    let (remote, alice) = failing_clone();
    // The pre-push hook sends the proofs along with a push, never the failures.
    alice.prove_it(&["install", "pre-push"]).assert().code(0);
    let pushed = alice.git_output(&["push", "-q", "origin", "HEAD~1:refs/heads/proven"]);
    assert!(pushed.status.success(), "{pushed:?}");
    let listed = ls_remote(&alice);
    assert!(listed.contains("\trefs/notes/prove-it\n"), "{listed}");
    assert!(!listed.contains(FAILURES_REF), "{listed}");

    alice
        .prove_it(&["sync"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("failure").not());
    assert!(!ls_remote(&alice).contains(FAILURES_REF));

    alice
        .prove_it(&["sync", "--with-failures"])
        .assert()
        .code(0)
        .stdout(predicate::str::ends_with(
            "sync: failures: origin has no failure records yet; pushed our failure records to origin\n",
        ));
    let listed = ls_remote(&alice);
    assert!(listed.contains(FAILURES_REF), "{listed}");
    assert_eq!(
        remote.ref_id(FAILURES_REF).unwrap(),
        alice.git(&["rev-parse", FAILURES_REF]).trim()
    );

    // Another clone fetches them only when it asks, and then its log shows the failure too.
    let bob = TestRepo::clone_of(&remote);
    bob.prove_it(&["sync"]).assert().code(0);
    assert!(!bob.git(&["show-ref"]).contains(FAILURES_REF));
    let json = json_stdout(
        &bob.prove_it(&["sync", "--with-failures", "--json"])
            .assert()
            .code(0),
    );
    assert_eq!(json["failures"]["fetched"], true);
    assert_eq!(json["failures"]["merge"], "fast_forward");
    assert_eq!(json["failures"]["pushed"], false);
    assert!(bob.git(&["show-ref"]).contains(FAILURES_REF));
    bob.prove_it(&["log", "--color=never", "-n", "1"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(" failed (exit 1, "));
}

#[test]
fn failures_recorded_on_both_sides_are_merged_by_union() {
    let (remote, alice) = failing_clone();
    alice
        .prove_it(&["sync", "--with-failures"])
        .assert()
        .code(0);
    // Bob fails the same commit before he has Alice's failure: a record of his own, later.
    let bob = TestRepo::clone_of(&remote);
    bob.prove_it(&["run", "HEAD"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "60")
        .assert()
        .code(1);
    let tree = tree_of(&bob, "HEAD");
    assert_eq!(failure_records(&bob, &tree), 1);
    bob.prove_it(&["sync", "--with-failures"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "sync: failures: merged failure records from origin into ours (1 note gained records); pushed our failure records to origin\n",
        ));
    assert_eq!(failure_records(&bob, &tree), 2);
    alice
        .prove_it(&["sync", "--with-failures"])
        .assert()
        .code(0);
    assert_eq!(failure_records(&alice, &tree), 2);
}
