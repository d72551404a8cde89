//! A newcomer's first hour: each step works cold and every message says what to do.
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
    repo.prove_it(&["run"])
        .assert()
        .code(1)
        .stdout(crate::harness::matches(
            r"not proven: verify.sh exit code 3 after \d+\.\d s on tree",
        ));
    let log = std::fs::read_to_string(repo.path(".git/prove-it/last-run.log")).unwrap();
    assert_eq!(log, "checking\ntest x ... FAILED\n");
}

/// With the plugin installed user-wide, a session in a repository without
/// verify.sh was gated by nothing and said nothing. The plugin's SessionStart (`--announce`)
/// says once per repository that the gate is inert there and how to arm it; a plain start
/// (project settings) says nothing, and arming it brings the usual announcement.
#[test]
fn a_session_in_an_unarmed_repository_is_told_once_that_the_gate_is_inert() {
    use crate::hosts::{Answer, Host};
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("initial");
    let start = |session: &str, args: &[&str]| {
        let payload = serde_json::json!({
            "session_id": session, "transcript_path": "/t.jsonl",
            "cwd": repo.root.display().to_string(),
            "hook_event_name": "SessionStart", "source": "startup"
        });
        let out = repo
            .prove_it(&[&["hook", "claude"][..], args].concat())
            .write_stdin(payload.to_string())
            .output()
            .unwrap();
        Host::Claude.read(&out)
    };
    assert_eq!(start("s0", &[]), Answer::Silent);
    let Answer::Notice(notice) = start("s1", &["--announce"]) else {
        panic!("the first announcing start in an unarmed repository tells the user");
    };
    assert_eq!(
        notice,
        "prove-it: the gate is inert in this repository: it has no executable verify.sh at its \
         root, so no turn is checked here. To arm it, run /prove-it:init in this session, or git \
         prove-it init in a terminal. This notice is shown once for this repository."
    );
    assert_eq!(start("s2", &["--announce"]), Answer::Silent);
    // Once armed, the gate's own announcement is made, once.
    repo.verify_passes();
    let Answer::Notice(notice) = start("s3", &["--announce"]) else {
        panic!("arming it brings the announcement");
    };
    assert!(
        notice.contains("the gate is armed in this repository"),
        "{notice}"
    );
    assert_eq!(start("s4", &["--announce"]), Answer::Silent);
}
