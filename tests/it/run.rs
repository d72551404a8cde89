//! `git prove-it run`: proving the working state, recording the proof, and refusing to.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use predicates::prelude::*;

use crate::harness::{EMAIL, NAME, TestRepo, json_stdout};

/// A verify.sh that counts its runs in a file outside the repository.
fn counting_verify(repo: &TestRepo) -> std::path::PathBuf {
    let counter = repo.home().join("runs");
    repo.verify_script(&format!("echo run >> '{}'\nexit 0", counter.display()));
    counter
}

fn runs(counter: &std::path::Path) -> usize {
    std::fs::read_to_string(counter).map_or(0, |s| s.lines().count())
}

#[test]
fn proves_and_records_a_note_that_stock_git_reads() {
    let repo = TestRepo::with_commit();
    repo.write("b.txt", "untracked work\n");
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("proven: tree"));
    let tree = repo.stock_state_tree().unwrap();
    let note = repo.note(&tree).expect("a note on the state tree");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let verify_blob = repo.git(&["rev-parse", "HEAD:verify.sh"]);
    for line in [
        "prove-it-record: 1".to_string(),
        "outcome: PROVEN".to_string(),
        format!("tree: {tree}"),
        format!("head: {}", head.trim()),
        format!("verify: {} 100755", verify_blob.trim()),
        "verify-anchor: none".to_string(),
        "exit-code: 0".to_string(),
        "host: cli".to_string(),
        "session: none".to_string(),
        format!("tool: git-prove-it {}", env!("CARGO_PKG_VERSION")),
        format!("Signed-off-by: {NAME} <{EMAIL}>"),
    ] {
        assert!(
            note.lines().any(|l| l == line),
            "missing {line:?} in\n{note}"
        );
    }
    // The record's lines come in the documented order, sign-off last.
    assert!(note.starts_with("prove-it-record: 1\noutcome: PROVEN\ntree: "));
    assert!(
        note.trim_end()
            .ends_with(&format!("Signed-off-by: {NAME} <{EMAIL}>"))
    );
    // Recording did not stage anything in the user's index.
    assert_eq!(repo.git(&["status", "--porcelain"]), "?? b.txt\n");
    // The proven tree exists in the object database, so `git notes prune` keeps the proof.
    repo.git(&["notes", "--ref", "prove-it", "prune"]);
    assert!(repo.note(&tree).is_some());
    assert_eq!(repo.git(&["cat-file", "-t", &tree]).trim(), "tree");
}

#[test]
fn a_proven_state_is_never_run_again_unless_forced() {
    let repo = TestRepo::with_commit();
    let counter = counting_verify(&repo);
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("already proven"))
        .stdout(predicate::str::contains(format!("by {NAME} <{EMAIL}>")));
    assert_eq!(runs(&counter), 1);
    repo.verify_script(&format!(
        "# edited\necho run >> '{c}'\nexit 0",
        c = counter.display()
    ));
    let first = repo.note(&repo.stock_state_tree().unwrap());
    assert!(first.is_none(), "editing verify.sh makes a new state");
    repo.prove_it(&["run"]).assert().code(0);
    // The second run is two seconds later by the debug build's clock, so its record cannot be
    // identical to the first (identical records are one record: notes are merged by union).
    repo.prove_it(&["run", "--force"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "2")
        .assert()
        .code(0);
    assert_eq!(runs(&counter), 3);
    // A forced re-run adds a second record to the same note rather than replacing the first.
    let note = repo.note(&repo.stock_state_tree().unwrap()).unwrap();
    assert_eq!(note.matches("prove-it-record: 1").count(), 2, "{note}");
}

#[test]
fn a_proof_survives_commit_amend_and_rebase() {
    let repo = TestRepo::with_commit();
    let counter = counting_verify(&repo);
    repo.write("feature.txt", "feature\n");
    repo.prove_it(&["run"]).assert().code(0);
    repo.commit_all("add feature");
    repo.prove_it(&["status"]).assert().code(0);
    repo.git(&["commit", "-q", "--amend", "-m", "add feature, reworded"]);
    repo.prove_it(&["status"]).assert().code(0);
    // Rebase the same content onto a rewritten base: the tree is the same, so is the proof.
    repo.git(&["rebase", "-q", "--root", "--committer-date-is-author-date"]);
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("already proven"));
    assert_eq!(runs(&counter), 1);
}

#[test]
fn a_failing_verify_sh_exits_1_with_its_last_20_lines_and_records_nothing() {
    let repo = TestRepo::with_commit();
    repo.verify_script("for i in $(seq 1 30); do echo \"line $i\"; done\necho 'boom' >&2\nexit 3");
    let out = repo.prove_it(&["run"]).assert().code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.contains("not proven: verify.sh exit code 3"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  line 30\n") && stdout.contains("  boom\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  line 12\n") && !stdout.contains("  line 11\n"),
        "{stdout}"
    );
    assert_eq!(repo.git(&["notes", "--ref", "prove-it", "list"]), "");

    let json = repo.prove_it(&["run", "--json"]).assert().code(1);
    let value = json_stdout(&json);
    assert_eq!(value["outcome"], "DISPROVEN");
    assert_eq!(value["result"], "failed");
    assert_eq!(value["exit_code"], 3);
    assert_eq!(value["tail"].as_array().unwrap().len(), 20);
}

#[test]
fn the_full_output_goes_to_a_private_log_under_the_git_dir() {
    let repo = TestRepo::with_commit();
    repo.verify_script("for i in $(seq 1 100); do echo \"line $i\"; done\nexit 1");
    repo.prove_it(&["run"]).assert().code(1);
    let dir = repo.path(".git/prove-it");
    let log = dir.join("last-run.log");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("line 1\n") && text.ends_with("line 100\n"));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&log), 0o600);
}

#[test]
fn not_armed_exits_3_and_says_why() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.prove_it(&["run"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "not armed: verify.sh does not exist",
        ));
    repo.write("verify.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("verify.sh", 0o644);
    repo.prove_it(&["run"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains("not executable"));
    // Group and other execute bits do not count: git itself looks at the owner's bit only.
    repo.chmod("verify.sh", 0o655);
    repo.prove_it(&["run"]).assert().code(3);
    repo.remove("verify.sh");
    std::fs::create_dir(repo.path("verify.sh")).unwrap();
    repo.prove_it(&["run"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains("not a regular file"));
    repo.remove("verify.sh");
    let outside = repo.home().join("outside.sh");
    std::fs::write(&outside, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo.symlink(outside.to_str().unwrap(), "verify.sh");
    repo.prove_it(&["run"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains("leading outside the worktree"));
    assert_eq!(
        repo.git_output(&["notes", "--ref", "prove-it", "list"])
            .stdout,
        b""
    );
}

#[test]
fn a_symlink_to_a_script_inside_the_worktree_is_armed() {
    let repo = TestRepo::with_commit();
    repo.remove("verify.sh");
    repo.write("scripts/check.sh", "#!/bin/sh\nexit 0\n");
    repo.chmod("scripts/check.sh", 0o755);
    repo.symlink("scripts/check.sh", "verify.sh");
    repo.prove_it(&["run"]).assert().code(0);
    let tree = repo.stock_state_tree().unwrap();
    let target = repo.git(&["hash-object", "scripts/check.sh"]);
    assert!(
        repo.note(&tree)
            .unwrap()
            .contains(&format!("\nverify: {} 100755\n", target.trim())),
        "the record names the bytes that ran, the file the link leads to"
    );
}

#[test]
fn verify_sh_that_writes_into_the_worktree_is_not_proven_and_names_the_paths() {
    let repo = TestRepo::with_commit();
    repo.verify_script("echo $$ > generated.txt\nexit 0");
    let out = repo.prove_it(&["run", "--json"]).assert().code(1);
    let value = json_stdout(&out);
    assert_eq!(value["result"], "state_changed");
    assert_eq!(value["changed_paths"], serde_json::json!(["generated.txt"]));
    assert_eq!(repo.git(&["notes", "--ref", "prove-it", "list"]), "");
    repo.prove_it(&["run"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("changed: verify.sh").not())
        .stdout(predicate::str::contains(
            "hint: add files that verify.sh generates to .gitignore",
        ));
    // Generated files that are ignored are not part of the state.
    repo.write(".gitignore", "generated.txt\n");
    repo.prove_it(&["run"]).assert().code(0);
}

#[test]
fn a_hung_verify_sh_is_killed_at_the_timeout() {
    let repo = TestRepo::with_commit();
    repo.verify_script("sleep 30 &\nsleep 30\nexit 0");
    for args in [&["run", "--timeout", "1"][..], &["run"][..]] {
        repo.prove_it(args)
            .env("PROVE_IT_TIMEOUT", "1")
            .timeout(Duration::from_secs(20))
            .assert()
            .code(1)
            .stdout(predicate::str::contains("timed out after 1 s"));
    }
    repo.git(&["config", "prove-it.timeout", "1"]);
    repo.prove_it(&["run"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("timed out after 1 s"));
}

#[test]
fn a_nonsense_timeout_is_a_usage_error() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"])
        .env("PROVE_IT_TIMEOUT", "soon")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: PROVE_IT_TIMEOUT must be a whole number of seconds",
        ));
}

#[test]
fn a_background_child_holding_the_output_open_does_not_hang_the_run() {
    let repo = TestRepo::with_commit();
    repo.verify_script("sleep 30 &\necho started\nexit 0");
    repo.prove_it(&["run"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(0);
}

#[test]
fn verify_sh_runs_at_the_root_with_the_documented_environment() {
    let repo = TestRepo::with_commit();
    let seen = repo.home().join("seen");
    repo.verify_script(&format!(
        "{{ pwd; echo \"$PROVE_IT\"; echo \"$PROVE_IT_TREE\"; echo \"$PROVE_IT_HOST\"; cat; }} > '{}'\nexit 0",
        seen.display()
    ));
    std::fs::create_dir_all(repo.path("sub/dir")).unwrap();
    repo.write("sub/dir/x.txt", "x\n");
    let mut cmd = repo.prove_it(&["run"]);
    cmd.current_dir(repo.path("sub/dir"))
        .write_stdin("stdin must not reach verify.sh\n");
    cmd.assert().code(0);
    let seen = std::fs::read_to_string(seen).unwrap();
    let root = repo.root.canonicalize().unwrap();
    let tree = repo.stock_state_tree().unwrap();
    assert_eq!(seen, format!("{}\n1\n{tree}\ncli\n", root.display()));
}

#[test]
fn invalid_utf8_output_is_replaced_and_json_stays_valid() {
    let repo = TestRepo::with_commit();
    repo.verify_script("printf 'bad \\377\\376 bytes\\n'\nexit 1");
    let out = repo.prove_it(&["run", "--json"]).assert().code(1);
    let value = json_stdout(&out);
    assert_eq!(value["tail"][0], "bad \u{fffd}\u{fffd} bytes");
}

#[test]
fn death_by_a_signal_is_named() {
    let repo = TestRepo::with_commit();
    repo.verify_script("kill -KILL $$");
    repo.prove_it(&["run"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("killed by signal 9 (SIGKILL)"));
}

#[test]
fn a_script_without_a_shebang_is_an_error_with_a_hint() {
    let repo = TestRepo::with_commit();
    repo.write("verify.sh", "exit 0\n");
    repo.chmod("verify.sh", 0o755);
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("error: could not start"))
        .stderr(predicate::str::contains(
            "hint: verify.sh must be executable and start with a line such as #!/bin/sh",
        ));
}

#[test]
fn without_a_git_identity_the_proof_is_signed_off_by_a_fallback_and_says_so() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"])
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env("EMAIL", "")
        .assert()
        .code(0);
    let note = repo.note(&repo.stock_state_tree().unwrap()).unwrap();
    assert!(note.contains("\nidentity: missing\n"), "{note}");
    assert!(
        note.contains("\nSigned-off-by: git-prove-it <git-prove-it@localhost>\n"),
        "{note}"
    );
}

#[test]
fn outside_a_repository_and_in_a_bare_one_it_is_an_error() {
    let repo = TestRepo::new();
    let elsewhere = repo.home().join("plain");
    std::fs::create_dir_all(&elsewhere).unwrap();
    repo.prove_it(&["run"])
        .current_dir(&elsewhere)
        .env("GIT_CEILING_DIRECTORIES", repo.home())
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: not in a git repository",
        ));
    let bare = repo.home().join("bare.git");
    repo.git(&["init", "-q", "--bare", bare.to_str().unwrap()]);
    repo.prove_it(&["status"])
        .current_dir(&bare)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bare repository"));
}

#[test]
fn a_record_for_another_tree_is_not_trusted_and_a_real_run_adds_beside_it() {
    let repo = TestRepo::with_commit();
    let tree = repo.stock_state_tree().unwrap();
    let forged = "prove-it-record: 1\noutcome: PROVEN\ntree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nhead: none\nverify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\nverify-anchor: none\nexit-code: 0\nduration-ms: 1\ntime: 2026-11-29T12:00:00Z\nhost: cli\nsession: none\ntool: by hand\nSigned-off-by: Mallory <m@example.com>\n";
    repo.git(&["notes", "--ref", "prove-it", "add", "-m", forged, &tree]);
    repo.prove_it(&["status"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "ignored:    tree mismatch: record is for tree 4b825dc",
        ));
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("proven: tree"));
    let note = repo.note(&tree).unwrap();
    assert!(
        note.contains("Mallory") && note.contains(&format!("tree: {tree}")),
        "{note}"
    );
}

#[test]
fn verbose_streams_the_output_to_stderr() {
    let repo = TestRepo::with_commit();
    repo.verify_script("echo streamed-line\nexit 0");
    repo.prove_it(&["run", "--verbose"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("streamed-line"));
}

/// verify.sh runs in its own process group, so a terminal's Ctrl-C reaches only us: we must end
/// verify.sh and everything it started ourselves instead of leaving them running.
#[test]
fn an_interrupt_ends_verify_sh_and_its_children() {
    let repo = TestRepo::with_commit();
    let pids = repo.home().join("pids");
    repo.verify_script(&format!(
        "sleep 30 &\necho $! > '{p}.tmp'\nmv '{p}.tmp' '{p}'\nsleep 30",
        p = pids.display()
    ));
    let mut cmd = repo.command(assert_cmd::cargo::cargo_bin("git-prove-it"));
    let child = cmd
        .arg("run")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !pids.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "verify.sh never started"
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
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("not proven: verify.sh interrupted"));
    let grandchild = std::fs::read_to_string(&pids).unwrap();
    assert!(
        crate::harness::gone_within_5s(grandchild.trim()),
        "the background child of verify.sh survived the interrupt"
    );
    assert_eq!(repo.git(&["notes", "--ref", "prove-it", "list"]), "");
}

#[test]
fn a_terminal_shows_elapsed_time_while_verify_sh_runs() {
    let repo = TestRepo::with_commit();
    repo.verify_script("sleep 2\nexit 0");
    // `script` gives the command a pseudo-terminal, as a person's shell would.
    let bin = assert_cmd::cargo::cargo_bin("git-prove-it");
    let out = repo
        .command("script")
        .args(["-qec", &format!("'{}' run", bin.display()), "/dev/null"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(
        shown.contains("prove-it: running verify.sh ... 1s"),
        "{shown:?}"
    );
    assert!(shown.contains("proven: tree"), "{shown:?}");
    // Piped, the same run shows no progress line.
    repo.write("b.txt", "b\n");
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stderr(predicate::str::is_empty());
}

#[test]
fn an_ignored_verify_sh_is_refused_before_anything_runs() {
    let repo = TestRepo::new();
    let counter = counting_verify(&repo);
    repo.write(".gitignore", "verify.sh\n");
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: verify.sh is not part of the working state",
        ))
        .stderr(predicate::str::contains("hint: verify.sh is ignored"));
    assert_eq!(runs(&counter), 0);
}

/// Every file under .git/objects with its inode and mtime: a rewrite (temporary file, rename)
/// shows as a new inode even within the same second.
fn loose_files(
    repo: &TestRepo,
) -> std::collections::BTreeMap<String, (u64, std::time::SystemTime)> {
    use std::os::unix::fs::MetadataExt;
    let root = repo.path(".git/objects");
    let mut found = std::collections::BTreeMap::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                dirs.push(entry.path());
            } else {
                let rel = entry
                    .path()
                    .strip_prefix(&root)
                    .unwrap()
                    .display()
                    .to_string();
                found.insert(rel, (meta.ino(), meta.modified().unwrap()));
            }
        }
    }
    found
}

/// Rewriting every object of the state on each run cost a temporary file and a rename per
/// tree and blob; objects already stored must be left alone, as `git write-tree` does.
#[test]
fn a_forced_rerun_of_an_unchanged_state_writes_only_its_record() {
    let repo = TestRepo::with_commit();
    for dir in ["src/a", "src/b", "docs", "tests/deep/er"] {
        repo.write(&format!("{dir}/file.txt"), &format!("{dir}\n"));
    }
    repo.commit_all("directories");
    repo.write("untracked/new.txt", "not committed\n");
    repo.prove_it(&["run"]).assert().code(0);
    let before = loose_files(&repo);
    let notes_before = repo.git(&["rev-parse", "refs/notes/prove-it"]);
    repo.prove_it(&["run", "--force"])
        .env("PROVE_IT_TEST_CLOCK_OFFSET", "2")
        .assert()
        .code(0);
    let after = loose_files(&repo);
    for (path, seen) in &before {
        assert_eq!(
            after.get(path),
            Some(seen),
            "{path} was rewritten or removed"
        );
    }
    // The only new objects are the record's: the notes commit, its tree and the note's blob.
    let range = format!("{}..refs/notes/prove-it", notes_before.trim());
    let record: std::collections::BTreeSet<String> = repo
        .git(&["rev-list", "--objects", &range])
        .lines()
        .map(|line| {
            let id = line.split(' ').next().unwrap();
            format!("{}/{}", &id[..2], &id[2..])
        })
        .collect();
    let new: std::collections::BTreeSet<String> = after
        .keys()
        .filter(|path| !before.contains_key(*path))
        .cloned()
        .collect();
    assert_eq!(new, record, "files written besides the record's objects");
    assert_eq!(record.len(), 3, "{record:?}");
}
