//! Issue 21, "a newcomer's first hour": each step works cold and every message says what to do.
//! The tests of `init` and `doctor` proper stay in init.rs and doctor.rs; these pin what a
//! newcomer met on the way.

use std::time::Duration;

use predicates::prelude::*;

use crate::harness::TestRepo;

/// The message said "timed out after 300 s after 300.0 s", and the log of a killed run was
/// empty (cargo prints nothing until it ends), so nothing could be diagnosed.
#[test]
fn a_timed_out_run_says_its_timeout_once_and_its_log_says_why() {
    let repo = TestRepo::with_commit();
    repo.verify_script("echo compiling the world\nsleep 30\nexit 0");
    repo.prove_it(&["run", "--timeout", "1"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "not proven: verify.sh timed out after 1 s on tree",
        ))
        .stdout(predicate::str::contains("after 1 s after").not());
    let log = std::fs::read_to_string(repo.path(".git/prove-it/last-run.log")).unwrap();
    assert!(log.starts_with("compiling the world\n"), "{log}");
    assert!(
        log.ends_with(
            "[git-prove-it: verify.sh timed out after 1 s; it and everything it started were killed]\n"
        ),
        "{log}"
    );
}

/// A run that fails by itself keeps its log as it printed it: the note is only for our kill.
#[test]
fn a_failed_run_keeps_its_log_and_says_how_long_it_ran() {
    let repo = TestRepo::with_commit();
    repo.verify_fails(3);
    repo.prove_it(&["run"]).assert().code(1).stdout(
        predicate::str::is_match(r"not proven: verify.sh exit code 3 after \d+\.\d s on tree")
            .unwrap(),
    );
    let log = std::fs::read_to_string(repo.path(".git/prove-it/last-run.log")).unwrap();
    assert_eq!(log, "checking\ntest x ... FAILED\n");
}
