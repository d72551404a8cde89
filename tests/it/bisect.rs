//! `git prove-it bisect <good> <bad>`: the first failing commit of a first-parent
//! line, from records first and the rest by halving, in one temporary worktree that is gone
//! afterwards, whatever happened.

use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::checks_report::CHECKS;
use crate::harness::{Imported, TestRepo, fast_import, json_stdout};
use crate::run_rev::leftovers;

/// verify.sh of the generated histories: it counts its runs in `runs` (outside the repository,
/// since the worktree it runs in is temporary), waits in `slow` mode, fails everywhere while
/// `fail-all` exists, and otherwise fails where state.txt says so.
fn verify_sh(repo: &TestRepo) -> String {
    let home = repo.home().display().to_string();
    format!(
        "#!/bin/sh\n\
         cat n.txt >> '{home}/runs'\n\
         git rev-parse --git-dir >> '{home}/dirs'\n\
         if [ -f '{home}/slow' ]; then touch '{home}/started'; sleep 30; fi\n\
         if [ -f '{home}/fail-all' ]; then echo 'everything fails today'; exit 1; fi\n\
         if grep -q fail state.txt; then echo \"state.txt says fail at $(cat n.txt)\"; echo 'test state ... FAILED' >&2; exit 1; fi\n\
         echo ok\n"
    )
}

/// A linear history of `n` commits on main, written by one `git fast-import` stream: commit k
/// (subject `commit k`) holds n.txt with k, verify.sh, and state.txt saying `fail` from commit
/// `first_bad` on.
fn history(n: usize, first_bad: usize) -> TestRepo {
    let repo = TestRepo::new();
    let verify = verify_sh(&repo);
    let commits: Vec<Imported<'_>> = (1..=n)
        .map(|k| {
            let state = if k >= first_bad { "fail\n" } else { "ok\n" };
            let mut files = vec![
                ("100644", "state.txt", state.to_string()),
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

/// Commit `k` of a history of `n` (1-based) as a full id.
fn id(repo: &TestRepo, n: usize, k: usize) -> String {
    repo.git(&["rev-parse", &format!("main~{}", n - k)])
        .trim()
        .to_string()
}

/// How many times verify.sh ran, as its own count says.
fn runs(repo: &TestRepo) -> usize {
    std::fs::read_to_string(repo.home().join("runs")).map_or(0, |runs| runs.lines().count())
}

/// What the caller's checkout looks like: status, HEAD and the staged diff.
fn checkout(repo: &TestRepo) -> (String, String, String) {
    (
        repo.git(&["status", "--porcelain"]),
        repo.git(&["rev-parse", "HEAD"]),
        repo.git(&["diff", "--cached"]),
    )
}

/// Staged, unstaged and untracked changes, for bisect to leave as they are.
fn dirty(repo: &TestRepo) {
    repo.write("state.txt", "fail\n");
    repo.git(&["add", "state.txt"]);
    repo.write("n.txt", "working tree\n");
    repo.write("untracked.txt", "u\n");
}

fn stdout(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stdout).into_owned()
}

fn stderr(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}

#[test]
fn finds_commit_137_of_200_in_at_most_log2_runs_and_leaves_the_checkout_alone() {
    let repo = history(200, 137);
    dirty(&repo);
    let before = checkout(&repo);
    let (good, bad, first) = (id(&repo, 200, 1), id(&repo, 200, 200), id(&repo, 200, 137));

    let assert = repo.prove_it(&["bisect", &good, &bad]).assert().code(0);
    let ran = runs(&repo);
    // ceil(log2(200)) + 2: BAD first, then halving the 199 commits between.
    assert!(ran <= 10, "{ran} runs: {}", stderr(&assert));
    let out = stdout(&assert);
    assert!(
        out.starts_with(&format!(
            "first failing commit: {first} commit 137\nverify.sh failed: exit code 1\n"
        )),
        "{out}"
    );
    assert!(out.contains("  state.txt says fail at 137\n"), "{out}");
    assert!(out.contains("  test state ... FAILED\n"), "{out}");
    assert!(
        out.ends_with(&format!("199 commits between, {ran} run, 0 from records\n")),
        "{out}"
    );
    let err = stderr(&assert);
    assert!(
        err.starts_with(&format!(
            "commit {} commit 200: ran: failed (exit 1)\n",
            &bad[..7]
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "commit {} commit 137: ran: failed (exit 1)\n",
            &first[..7]
        )),
        "{err}"
    );
    assert!(err.contains(": ran: proven\n"), "{err}");
    let dirs = std::fs::read_to_string(repo.home().join("dirs")).unwrap();
    let mut dirs: Vec<&str> = dirs.lines().collect();
    dirs.dedup();
    assert_eq!(dirs.len(), 1, "one worktree for every run: {dirs:?}");
    assert!(
        dirs[0].contains("/git-prove-it/") && dirs[0].contains("/worktrees/"),
        "{dirs:?}"
    );
    assert_eq!(
        checkout(&repo),
        before,
        "the working tree and index are untouched"
    );
    assert_eq!(leftovers(&repo), (0, 0), "no worktree is left");

    // Everything it needs is on record now: nothing runs again.
    let value = json_stdout(
        &repo
            .prove_it(&["bisect", "--json", &good, &bad])
            .assert()
            .code(0),
    );
    assert_eq!(runs(&repo), ran);
    assert_eq!(value["version"], 1);
    assert_eq!(value["first_bad"]["commit"], first.as_str());
    assert_eq!(value["first_bad"]["subject"], "commit 137");
    assert_eq!(value["first_bad"]["exit"], "exit code 1");
    assert_eq!(value["first_bad"]["checks"][0]["name"], "verify.sh");
    assert_eq!(value["first_bad"]["checks"][0]["exit_code"], 1);
    assert!(
        value["first_bad"]["output"]
            .as_array()
            .unwrap()
            .contains(&"state.txt says fail at 137".into()),
        "{value}"
    );
    assert_eq!(value["runs"], 0);
    assert_eq!(value["between"], 199);
    let steps = value["steps"].as_array().unwrap();
    assert_eq!(value["recorded"], steps.len());
    assert!(steps.iter().all(|s| s["how"] == "recorded"), "{value}");
    assert_eq!(steps[0]["commit"], bad.as_str());
    assert_eq!(steps[0]["result"], "failed");
    assert_eq!(checkout(&repo), before);
    assert_eq!(leftovers(&repo), (0, 0));
}

#[test]
fn results_on_record_spare_runs_and_say_so() {
    let repo = history(200, 137);
    for k in [130, 140, 200] {
        let code = if k < 137 { 0 } else { 1 };
        repo.prove_it(&["run", &id(&repo, 200, k)])
            .assert()
            .code(code);
    }
    let before = runs(&repo);
    let (good, bad, first) = (id(&repo, 200, 1), id(&repo, 200, 200), id(&repo, 200, 137));

    let assert = repo.prove_it(&["bisect", &good, &bad]).assert().code(0);
    let ran = runs(&repo) - before;
    // Only the 9 commits between the records: ceil(log2(10)) runs at most.
    assert!((1..=4).contains(&ran), "{ran} runs: {}", stderr(&assert));
    let err = stderr(&assert);
    for (k, said) in [
        (200, "failed (recorded, exit 1, "),
        (140, "failed (recorded, exit 1, "),
        (130, "proven (recorded)"),
    ] {
        let line = format!("commit {} commit {k}: {said}", &id(&repo, 200, k)[..7]);
        assert!(err.contains(&line), "{line:?} in {err}");
    }
    assert!(err.contains(" s ago)\n"), "{err}");
    let out = stdout(&assert);
    assert!(
        out.starts_with(&format!("first failing commit: {first} commit 137\n")),
        "{out}"
    );
    assert!(
        out.ends_with(&format!("199 commits between, {ran} run, 3 from records\n")),
        "{out}"
    );
    assert_eq!(leftovers(&repo), (0, 0));
}

#[test]
fn a_failure_on_record_is_taken_unless_retry_failed_runs_it_again() {
    let repo = history(200, 137);
    // Commit 101, the search's first probe, failed once for a reason of the day.
    std::fs::write(repo.home().join("fail-all"), "").unwrap();
    let flaky = id(&repo, 200, 101);
    repo.prove_it(&["run", &flaky]).assert().code(1);
    std::fs::remove_file(repo.home().join("fail-all")).unwrap();
    let (good, bad) = (id(&repo, 200, 1), id(&repo, 200, 200));

    // Taken as it is: the record's own last lines are shown.
    let assert = repo.prove_it(&["bisect", &good, &bad]).assert().code(0);
    let out = stdout(&assert);
    assert!(
        out.starts_with(&format!("first failing commit: {flaky} commit 101\n")),
        "{out}"
    );
    assert!(out.contains("  everything fails today\n"), "{out}");
    assert!(
        stderr(&assert).contains(&format!(
            "commit {} commit 101: failed (recorded",
            &flaky[..7]
        )),
        "{}",
        stderr(&assert)
    );

    // Forget the proofs that bisect made, so that commit 101 is the first probe again.
    repo.git(&["update-ref", "-d", "refs/notes/prove-it"]);
    let assert = repo
        .prove_it(&["bisect", "--retry-failed", &good, &bad])
        .assert()
        .code(0);
    let out = stdout(&assert);
    assert!(
        out.starts_with(&format!(
            "first failing commit: {} commit 137\n",
            id(&repo, 200, 137)
        )),
        "{out}"
    );
    let err = stderr(&assert);
    assert!(
        err.contains(&format!("commit {} commit 101: ran: proven\n", &flaky[..7])),
        "{err}"
    );
    // BAD's failure, recorded by the first bisect, is run again too.
    assert!(
        err.starts_with(&format!("commit {} commit 200: ran: failed", &bad[..7])),
        "{err}"
    );
    assert_eq!(leftovers(&repo), (0, 0));
}

#[test]
fn a_bad_that_is_proven_or_passes_is_refused_and_leaves_no_worktree() {
    let repo = history(40, 30);
    let good = id(&repo, 40, 1);
    let proven = id(&repo, 40, 20);
    repo.prove_it(&["run", &proven]).assert().code(0);
    let before = runs(&repo);
    repo.prove_it(&["bisect", &good, &proven])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "error: {proven} is proven: its checks pass, so there is no failing commit to look for\nhint: "
        )));
    assert_eq!(runs(&repo), before, "nothing ran");

    // Nothing on record: BAD runs first, passes, and is refused the same way.
    repo.prove_it(&["bisect", "--json", &good, "main~15"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("\"code\":\"error\""))
        .stderr(predicate::str::contains(
            "error: main~15 passes: its checks were run and it is proven now",
        ));
    assert_eq!(runs(&repo), before + 1);
    assert_eq!(leftovers(&repo), (0, 0), "no worktree after an error");
    repo.prove_it(&["check", "main~15"]).assert().code(0);
}

#[test]
fn a_good_that_is_not_an_ancestor_of_bad_is_refused() {
    let repo = history(10, 5);
    let (first, last) = (id(&repo, 10, 1), id(&repo, 10, 10));
    repo.prove_it(&["bisect", &last, &first])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "error: {last} is not an ancestor of {first}"
        )))
        .stderr(predicate::str::contains(format!(
            "hint: {first} is an ancestor of {last}: name the older commit, which passes, first: git prove-it bisect {first} {last}"
        )));
    repo.git(&["switch", "-q", "-c", "side", "main~6"]);
    repo.write("side.txt", "s\n");
    repo.commit_all("side");
    repo.prove_it(&["bisect", "side", "main"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: side is not an ancestor of main",
        ))
        .stderr(predicate::str::contains("git merge-base side main"));
    repo.prove_it(&["bisect", "main", "main"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("are the same commit"));
    repo.prove_it(&["bisect", "main~3..main", "main"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a single commit"));
    assert_eq!(runs(&repo), 0);
    assert_eq!(leftovers(&repo), (0, 0));
}

#[test]
fn sigterm_mid_run_removes_the_worktree() {
    let repo = history(30, 20);
    dirty(&repo);
    let before = checkout(&repo);
    std::fs::write(repo.home().join("slow"), "").unwrap();
    let started = repo.home().join("started");
    let child = repo
        .command(assert_cmd::cargo::cargo_bin("git-prove-it"))
        .args(["bisect", "main~29", "main"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !started.exists() {
        assert!(Instant::now() < deadline, "verify.sh never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error: interrupted"), "{err}");
    assert_eq!(leftovers(&repo), (0, 0), "no worktree after SIGTERM");
    assert_eq!(checkout(&repo), before);
    assert_eq!(runs(&repo), 1, "nothing ran after the interrupt");
}

#[test]
fn with_a_checks_file_it_names_the_check_that_fails() {
    let repo = TestRepo::new();
    repo.write("prove-it.toml", CHECKS);
    for dir in ["api", "docs"] {
        repo.write(
            &format!("{dir}/verify.sh"),
            "#!/bin/sh\nif grep -q broken *.txt; then echo \"$(pwd | sed 's|.*/||') is broken\"; exit 1; fi\n",
        );
        repo.chmod(&format!("{dir}/verify.sh"), 0o755);
    }
    repo.write("api/lib.txt", "api\n");
    repo.write("docs/index.txt", "docs 1\n");
    let good = repo.commit_all("two checks");
    for k in 2..=12 {
        repo.write("api/lib.txt", &format!("api {k}\n"));
        let docs = if k >= 8 { "broken" } else { "fine" };
        repo.write("docs/index.txt", &format!("docs {k} {docs}\n"));
        repo.commit_all(&format!("commit {k}"));
    }
    let first = repo.git(&["rev-parse", "main~4"]).trim().to_string();
    let assert = repo.prove_it(&["bisect", &good, "main"]).assert().code(0);
    let out = stdout(&assert);
    assert!(
        out.starts_with(&format!(
            "first failing commit: {first} commit 8\ncheck docs failed: exit code 1\nlast 1 lines of its output:\n  docs is broken\n"
        )),
        "{out}"
    );
    assert!(!out.contains("check api failed"), "{out}");
    let err = stderr(&assert);
    assert!(
        err.contains(&format!(
            "commit {} commit 8: ran: failed (check docs: exit 1)\n",
            &first[..7]
        )),
        "{err}"
    );
    let value = json_stdout(
        &repo
            .prove_it(&["bisect", "--json", &good, "main"])
            .assert()
            .code(0),
    );
    let checks = value["first_bad"]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{value}");
    assert_eq!(checks[0]["name"], "docs");
    assert_eq!(value["runs"], 0, "the checks are on record now: {value}");
    assert_eq!(leftovers(&repo), (0, 0));
}

/// Ten commits, each changing n.txt; `shape(k)` says what commit k does to verify.sh (and
/// state.txt fails from commit 8 on).
fn shaped(shape: impl Fn(usize) -> Option<u32>) -> TestRepo {
    let repo = TestRepo::new();
    let verify = verify_sh(&repo);
    for k in 1..=10 {
        repo.write("n.txt", &format!("{k}\n"));
        repo.write("state.txt", if k >= 8 { "fail\n" } else { "ok\n" });
        match shape(k) {
            Some(mode) => {
                repo.write("verify.sh", &verify);
                repo.chmod("verify.sh", mode);
            }
            None if repo.path("verify.sh").exists() => repo.remove("verify.sh"),
            None => {}
        }
        repo.commit_all(&format!("commit {k}"));
    }
    repo
}

#[test]
fn a_commit_that_cannot_be_tested_is_skipped_for_a_neighbour() {
    // Commit 6's verify.sh is not executable: run says it is not armed (exit 3).
    let repo = shaped(|k| Some(if k == 6 { 0o644 } else { 0o755 }));
    let assert = repo
        .prove_it(&["bisect", "main~9", "main"])
        .assert()
        .code(0);
    let out = stdout(&assert);
    assert!(
        out.starts_with(&format!(
            "first failing commit: {} commit 8\n",
            repo.git(&["rev-parse", "main~2"]).trim()
        )),
        "{out}"
    );
    let err = stderr(&assert);
    let six = repo.git(&["rev-parse", "--short=7", "main~4"]);
    assert!(
        err.contains(&format!(
            "commit {} commit 6: ran: cannot be tested (verify.sh ",
            six.trim()
        )),
        "{err}"
    );
    assert!(err.contains("), skipped\n"), "{err}");
    assert_eq!(leftovers(&repo), (0, 0));
}

#[test]
fn commits_that_cannot_be_tested_before_the_failing_one_are_listed_as_candidates() {
    // Commits 6 and 7 have no verify.sh; commit 8 brings it back, failing.
    let repo = shaped(|k| (!(6..=7).contains(&k)).then_some(0o755));
    let full = |k: usize| {
        repo.git(&["rev-parse", &format!("main~{}", 10 - k)])
            .trim()
            .to_string()
    };
    let assert = repo
        .prove_it(&["bisect", "main~9", "main"])
        .assert()
        .code(1);
    let out = stdout(&assert);
    assert!(
        out.starts_with(
            "could not narrow it down: only commits that cannot be tested are left; the first failing commit could be any of these 3:\n"
        ),
        "{out}"
    );
    for (k, why) in [
        (6, "(cannot be tested: no verify.sh nor checks in its tree)"),
        (7, "(cannot be tested: no verify.sh nor checks in its tree)"),
        (8, "(fails)"),
    ] {
        let line = format!("  {} commit {k} {why}\n", &full(k)[..12]);
        assert!(out.contains(&line), "{line:?} in {out}");
    }
    let value = json_stdout(
        &repo
            .prove_it(&["bisect", "--json", "main~9", "main"])
            .assert()
            .code(1),
    );
    assert!(value["first_bad"].is_null(), "{value}");
    let candidates = value["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 3);
    assert_eq!(candidates[2]["commit"], full(8).as_str());
    assert!(candidates[2]["untestable"].is_null());
    assert_eq!(
        candidates[0]["untestable"],
        "no verify.sh nor checks in its tree"
    );
    assert_eq!(leftovers(&repo), (0, 0));
}
