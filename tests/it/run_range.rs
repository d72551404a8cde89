//! `git prove-it run <range>`: every commit of a range proven in parallel, reused
//! temporary worktrees, failures on record and not run again, retries, and cleanup.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;

use crate::harness::{Imported, TestRepo, fast_import, gone_within_5s, json_stdout};

/// A history of `n` commits on top of a first one holding `verify` (a verify.sh body): commit
/// `i` (1-based) writes `state.txt` as `bad i` when `bad` holds `i`, else `good i`. Written in
/// one `git fast-import` stream: 200 commits in a few milliseconds.
pub fn history(repo: &TestRepo, n: usize, bad: &[usize], verify: &str) {
    let mut commits: Vec<Imported<'_>> = vec![(
        "base".to_string(),
        vec![
            ("100755", "verify.sh", format!("#!/bin/sh\n{verify}\n")),
            ("100644", ".gitignore", "target/\n".to_string()),
            ("100644", "state.txt", "good 0\n".to_string()),
        ],
    )];
    for i in 1..=n {
        let state = if bad.contains(&i) { "bad" } else { "good" };
        commits.push((
            format!("commit {i}"),
            vec![("100644", "state.txt", format!("{state} {i}\n"))],
        ));
    }
    fast_import(repo, &commits);
}

/// A verify.sh that appends `<dir> <state>` to `runs` outside the repository, then fails when
/// state.txt says bad.
fn logging_verify(runs: &Path) -> String {
    format!(
        "echo \"$(git rev-parse --git-dir) $(cat state.txt)\" >> '{}'\necho \"checked: $(cat state.txt)\"\n! grep -q bad state.txt",
        runs.display()
    )
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| text.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

fn note_count(repo: &TestRepo, notes_ref: &str) -> usize {
    let out = repo.git_output(&["notes", "--ref", notes_ref, "list"]);
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// No temporary worktree is left, in git's records or on disk.
#[track_caller]
fn no_worktree_left(repo: &TestRepo) {
    assert_eq!(crate::run_rev::leftovers(repo), (0, 0));
}

const BAD: &[usize] = &[37, 120, 121, 122, 200];

#[test]
fn a_200_commit_range_is_proven_in_parallel_reused_worktrees_with_its_failures_on_record() {
    let repo = TestRepo::new();
    let runs = repo.home().join("runs");
    history(&repo, 200, BAD, &logging_verify(&runs));

    let first = repo
        .prove_it(&["run", "main~200..main", "--jobs", "2"])
        .assert()
        .code(1);
    let out = String::from_utf8_lossy(&first.get_output().stdout).into_owned();
    let ran = lines(&runs);
    assert_eq!(ran.len(), 200, "each commit ran once");
    // Two worktrees at once, each reused along the range: two directories ran everything.
    let mut dirs: Vec<&str> = ran.iter().map(|l| l.split(' ').next().unwrap()).collect();
    dirs.sort_unstable();
    dirs.dedup();
    assert_eq!(dirs.len(), 2, "{dirs:?}");
    assert!(
        dirs.iter()
            .all(|d| d.contains("/git-prove-it/") && d.contains("/worktrees/")),
        "{dirs:?}"
    );
    // One line per commit, in history order, then the table.
    let subjects: Vec<usize> = out
        .lines()
        .take_while(|line| !line.is_empty())
        .filter(|line| !line.starts_with(' '))
        .map(|line| {
            let subject = line.split(": ").next().unwrap();
            subject.rsplit(' ').next().unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(subjects, (1..=200).collect::<Vec<_>>(), "{out}");
    assert!(out.contains("commit 37: failed: exit code 1"), "{out}");
    assert!(out.contains("    checked: bad 37"), "{out}");
    assert!(out.contains("195 of 200 commits proven"), "{out}");
    assert_eq!(note_count(&repo, "prove-it"), 195);
    assert_eq!(note_count(&repo, "prove-it-failures"), 5);
    let tree = repo.git(&["rev-parse", "main~80^{tree}"]);
    let failure = repo.git(&["notes", "--ref", "prove-it-failures", "show", tree.trim()]);
    assert!(failure.contains("outcome: DISPROVEN"), "{failure}");
    assert!(failure.contains(" checked: bad 120"), "{failure}");
    no_worktree_left(&repo);

    // Again: the proofs cost a lookup, the failures on record are not run again.
    let again = repo.prove_it(&["run", "main~200..main"]).assert().code(1);
    let out = String::from_utf8_lossy(&again.get_output().stdout).into_owned();
    assert_eq!(lines(&runs).len(), 200, "nothing ran");
    assert!(
        out.contains("commit 120: failed (recorded: exit 1,"),
        "{out}"
    );
    assert!(out.contains("--retry-failed"), "{out}");
    assert!(out.contains("nothing run, 200 from records"), "{out}");

    // --retry-failed runs exactly the five again.
    repo.prove_it(&["run", "main~200..main", "--retry-failed"])
        .assert()
        .code(1);
    let ran = lines(&runs);
    assert_eq!(ran.len(), 205);
    assert!(
        ran[200..].iter().all(|line| line.contains(" bad ")),
        "{ran:?}"
    );
    no_worktree_left(&repo);
}

#[test]
fn a_range_of_proven_commits_exits_0_and_says_so_in_json() {
    let repo = TestRepo::new();
    let runs = repo.home().join("runs");
    history(&repo, 6, &[], &logging_verify(&runs));
    repo.prove_it(&["run", "main~2"]).assert().code(0);
    let assert = repo
        .prove_it(&["run", "main~6..main", "--json"])
        .assert()
        .code(0);
    let json = json_stdout(&assert);
    assert_eq!(json["outcome"], "PROVEN");
    let commits = json["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 6);
    assert_eq!(commits[0]["subject"], "commit 1");
    // main~2 is commit 4, proven before the range.
    assert_eq!(commits[3]["result"], "already_proven", "{json}");
    assert_eq!(commits[5]["result"], "proven", "{json}");
    assert_eq!(
        lines(&runs).len(),
        6,
        "5 in the range and the one proven before"
    );
    no_worktree_left(&repo);
}

/// Two commits whose verify.sh each waits for the other's to start: they pass only when two
/// run at once.
#[test]
fn commits_of_a_range_run_at_once_up_to_jobs() {
    let rendezvous = |repo: &TestRepo| {
        let dir = repo.home().join("rendezvous");
        std::fs::create_dir_all(&dir).unwrap();
        format!(
            "d='{}'\ntouch \"$d/$(cat state.txt | tr ' ' _)\"\ni=0\nwhile [ \"$(ls \"$d\" | wc -l)\" -lt 2 ]; do i=$((i+1)); [ $i -gt 30 ] && exit 1; sleep 0.1; done",
            dir.display()
        )
    };
    let repo = TestRepo::new();
    history(&repo, 2, &[], &rendezvous(&repo));
    repo.prove_it(&["run", "main~2..main", "--jobs", "2"])
        .assert()
        .code(0);

    let serial = TestRepo::new();
    history(&serial, 2, &[], &rendezvous(&serial));
    serial
        .prove_it(&["run", "main~2..main", "--jobs", "1"])
        .assert()
        .code(1);
}

#[test]
fn a_worktree_reused_along_a_range_keeps_ignored_build_caches() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen");
    history(
        &repo,
        3,
        &[],
        &format!(
            "if [ -e target/cache ]; then echo warm >> '{0}'; else echo cold >> '{0}'; fi\nmkdir -p target && touch target/cache",
            seen.display()
        ),
    );
    repo.prove_it(&["run", "main~3..main", "--jobs", "1"])
        .assert()
        .code(0);
    assert_eq!(lines(&seen), ["cold", "warm", "warm"]);
    no_worktree_left(&repo);
}

#[test]
fn a_flaky_commit_passes_under_retries_and_the_range_says_flaky() {
    let repo = TestRepo::new();
    let marks = repo.home().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    // Each commit fails on its first run and passes on its second.
    history(
        &repo,
        3,
        &[],
        &format!(
            "m='{}'/\"$(cat state.txt | tr ' ' _)\"\nif [ -e \"$m\" ]; then exit 0; fi\ntouch \"$m\"\necho 'flaked'\nexit 1",
            marks.display()
        ),
    );
    repo.git(&["config", "prove-it.retries", "1"]);
    let assert = repo.prove_it(&["run", "main~3..main"]).assert().code(0);
    let out = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(out.contains("after 1 failed run (flaky: 1)"), "{out}");
    assert!(out.contains("proven (flaky)"), "{out}");
    let tree = repo.git(&["rev-parse", "main^{tree}"]);
    let note = repo.note(tree.trim()).unwrap();
    assert!(note.contains("\nflaky: 1\n"), "{note}");
    assert_eq!(note_count(&repo, "prove-it-failures"), 0);
}

#[test]
fn an_interrupted_range_ends_every_run_and_leaves_no_worktree() {
    let repo = TestRepo::new();
    let pids = repo.home().join("pids");
    history(
        &repo,
        4,
        &[],
        &format!("echo $$ >> '{}'\nsleep 60", pids.display()),
    );
    let mut cmd = repo.command(cargo_bin("git-prove-it"));
    cmd.args(["run", "main~4..main", "--jobs", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    while lines(&pids).len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the runs never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = repo
        .command("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("interrupted"), "{stdout}");
    for pid in lines(&pids) {
        assert!(gone_within_5s(&pid), "verify.sh {pid} still runs");
    }
    assert_eq!(
        lines(&pids).len(),
        2,
        "no commit started after the interrupt"
    );
    no_worktree_left(&repo);
}

#[test]
fn a_commit_without_verify_sh_in_a_range_is_not_armed_and_not_proven() {
    let repo = TestRepo::new();
    repo.write("a.txt", "root\n");
    repo.commit_all("root");
    repo.write("b.txt", "before verify.sh\n");
    repo.commit_all("unarmed");
    repo.verify_passes();
    repo.commit_all("armed");
    repo.write("c.txt", "more\n");
    repo.commit_all("third");
    let assert = repo
        .prove_it(&["run", "HEAD~3..HEAD", "--json"])
        .assert()
        .code(1);
    let json = json_stdout(&assert);
    let results: Vec<&str> = json["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["result"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["not_armed", "proven", "proven"], "{json}");
    assert_eq!(json["outcome"], "DISPROVEN");
    let human = repo.prove_it(&["run", "HEAD~3..HEAD"]).assert().code(1);
    let out = String::from_utf8_lossy(&human.get_output().stdout).into_owned();
    assert!(
        out.contains("unarmed: not armed: its tree has no verify.sh"),
        "{out}"
    );
    assert!(
        out.contains(
            "hint: a commit from before verify.sh (or prove-it.toml) existed cannot be proven"
        ),
        "{out}"
    );
    let assert = repo.prove_it(&["run", "HEAD~2..HEAD"]).assert().code(0);
    let out = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(out.contains("2 of 2 commits proven; nothing run"), "{out}");
}

#[test]
fn a_failure_record_keeps_the_last_lines_but_not_a_secret_verify_sh_printed() {
    let repo = TestRepo::new();
    repo.verify_script("echo \"deploying with $DEPLOY_TOKEN\"\necho 'test x ... FAILED'\nexit 1");
    repo.commit_all("leaky");
    repo.prove_it(&["run"])
        .env("DEPLOY_TOKEN", "tok_9f8e7d6c5b4a")
        .assert()
        .code(1);
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let record = repo.git(&["notes", "--ref", "prove-it-failures", "show", tree.trim()]);
    assert!(record.contains(" deploying with [redacted]\n"), "{record}");
    assert!(record.contains(" test x ... FAILED\n"), "{record}");
    assert!(!record.contains("tok_9f8e7d6c5b4a"), "{record}");
    assert!(!record.contains("DEPLOY_TOKEN"), "no environment: {record}");
}

/// The trap: a range once passed each commit's run its log through a hidden `run --log`, which
/// given by hand could write over a file of the worktree (verify.sh itself, say); commits are
/// proven in-process now, and `run` takes no such flag.
#[test]
fn run_takes_no_log_flag_that_could_write_over_a_file() {
    let repo = TestRepo::new();
    repo.verify_passes();
    repo.commit_all("armed");
    let before = std::fs::read_to_string(repo.path("verify.sh")).unwrap();
    for hidden in [
        &["run", "--log", "verify.sh"][..],
        &["run", "--isolation", "namespace"],
        &["run", "--host", "pre-push"],
        &["run", "--without-setup", "node_modules"],
        &["run", "--shown-git-dir", "/tmp"],
    ] {
        repo.prove_it(hidden)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("unexpected argument"));
    }
    assert_eq!(
        std::fs::read_to_string(repo.path("verify.sh")).unwrap(),
        before
    );
    assert!(
        repo.note(repo.git(&["rev-parse", "HEAD^{tree}"]).trim())
            .is_none()
    );
}

#[test]
fn a_range_keeps_a_bounded_folder_of_commit_logs() {
    let repo = TestRepo::new();
    history(&repo, 3, &[2], "! grep -q bad state.txt");
    let logs = repo.path(".git/prove-it/commit-logs");
    std::fs::create_dir_all(&logs).unwrap();
    for n in 0..600 {
        std::fs::write(logs.join(format!("old-{n}.log")), "old\n").unwrap();
    }
    repo.prove_it(&["run", "main~3..main"]).assert().code(1);
    let kept: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(kept.len() <= 500 + 4, "{}", kept.len());
    let head = repo.git(&["rev-parse", "main~1"]);
    assert!(
        kept.contains(&format!("{}.failed.log", head.trim())),
        "the failing commit's log is kept"
    );
}

#[test]
fn a_range_with_a_checks_file_names_the_failing_check_and_skips_it_when_recorded() {
    let repo = crate::checks::monorepo("exit 0", "exit 0");
    crate::checks::script(
        &repo,
        "docs/verify.sh",
        "docs",
        "echo 'docs: broken link'\nexit 3",
    );
    repo.commit_all("break the docs");
    crate::checks::script(&repo, "docs/verify.sh", "docs", "exit 0");
    repo.commit_all("fix the docs");
    let first = repo.prove_it(&["run", "HEAD~2..HEAD"]).assert().code(1);
    let out = String::from_utf8_lossy(&first.get_output().stdout).into_owned();
    assert!(
        out.contains("break the docs: failed: check docs: exit code 3 after"),
        "{out}"
    );
    assert!(out.contains("    docs: broken link"), "{out}");
    assert!(out.contains("1 of 2 commits proven"), "{out}");
    let docs_runs = crate::checks::runs(&repo, "docs").len();
    let again = repo.prove_it(&["run", "HEAD~2..HEAD"]).assert().code(1);
    let out = String::from_utf8_lossy(&again.get_output().stdout).into_owned();
    assert!(
        out.contains("break the docs: failed (recorded: check docs: exit 3, "),
        "{out}"
    );
    assert_eq!(
        crate::checks::runs(&repo, "docs").len(),
        docs_runs,
        "nothing ran again"
    );
    no_worktree_left(&repo);
}

/// On a terminal, a line on stderr says how far the range is, and is cleared for each
/// commit's line.
#[test]
fn a_terminal_shows_how_far_the_range_is() {
    let repo = TestRepo::new();
    history(&repo, 2, &[], "sleep 1.3");
    let bin = cargo_bin("git-prove-it");
    let out = repo
        .command("script")
        .args([
            "-qec",
            &format!("'{}' run main~2..main --jobs 1", bin.display()),
            "/dev/null",
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("prove-it: running 2 commits, 0 done, ... 1s"),
        "{shown:?}"
    );
    assert!(
        shown.contains("prove-it: running 2 commits, 1 done, ... "),
        "{shown:?}"
    );
    // Cleared before the commit's line, which starts a line of its own.
    assert!(shown.contains("\r\x1b[2K"), "{shown:?}");
    assert!(shown.contains("commit 1: proven in 1."), "{shown:?}");
    assert!(shown.contains("2 of 2 commits proven"), "{shown:?}");
}

/// A worktree moves from one commit to the next by the smallest checkout: a file the next
/// commit does not change is left as it is (its inode and modification time kept), only the
/// changed one is written.
#[test]
fn a_worktree_moved_along_a_range_rewrites_only_the_changed_paths() {
    let repo = TestRepo::new();
    let seen = repo.home().join("inodes");
    history(
        &repo,
        2,
        &[],
        &format!(
            "echo \"$(stat -c %i.%y verify.sh | tr ' ' _) $(cat state.txt | tr ' ' _)\" >> '{}'",
            seen.display()
        ),
    );
    repo.prove_it(&["run", "main~2..main", "--jobs", "1"])
        .assert()
        .code(0);
    let seen = std::fs::read_to_string(&seen).unwrap();
    let runs: Vec<Vec<&str>> = seen.lines().map(|line| line.split(' ').collect()).collect();
    assert_eq!(runs.len(), 2, "{seen}");
    assert_eq!(runs[0][0], runs[1][0], "verify.sh was rewritten: {seen}");
    assert_eq!([runs[0][1], runs[1][1]], ["good_1", "good_2"], "{seen}");
}

/// Untracked files a commit's run leaves outside its check's inputs are gone before the next
/// commit of the range runs in the same worktree (a worktree whose run left none is not
/// cleaned); ignored ones (build caches) stay.
#[test]
fn untracked_files_a_run_leaves_are_gone_before_the_next_commit_runs() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen");
    repo.write(
        "prove-it.toml",
        "[checks.src]\nrun = \"check.sh\"\ninputs = [\"src\", \"check.sh\"]\n",
    );
    repo.write(".gitignore", "cache/\n");
    repo.write(
        "check.sh",
        &format!(
            "#!/bin/sh\nls left.txt cache/kept.txt >> '{}' 2>/dev/null\necho left > left.txt\nmkdir -p cache && echo kept > cache/kept.txt\nexit 0\n",
            seen.display()
        ),
    );
    repo.chmod("check.sh", 0o755);
    repo.commit_all("base");
    for n in 1..=3 {
        repo.write("src/n.txt", &format!("{n}\n"));
        repo.commit_all(&format!("commit {n}"));
    }
    repo.prove_it(&["run", "main~3..main", "--jobs", "1"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("3 of 3 commits proven"));
    let seen = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        ["cache/kept.txt", "cache/kept.txt"],
        "the second and third runs see the ignored cache and not the untracked file: {seen}"
    );
}

/// What a verify.sh that describes its worktree appends to `seen`: the commit checked out,
/// `git status` (nothing), and every path with its type, mode bits and content, one line.
fn describing_verify(seen: &Path) -> String {
    format!(
        "#!/bin/sh\n{{ echo \"head $(git rev-parse HEAD)\"; echo \"status $(git status --porcelain | tr '\\n' ' ')\"; find . -path ./.git -prune -o \\( -type f -o -type l \\) -print | sort | while read -r f; do if [ -L \"$f\" ]; then echo \"$f link $(readlink \"$f\")\"; else echo \"$f $(stat -c %a \"$f\") $(cat \"$f\" | tr '\\n' ' ')\"; fi; done; echo end; }} >> '{}'\n",
        seen.display()
    )
}

/// The same description, from the commit's own tree as git checks it out.
fn described_by_git(repo: &TestRepo, commit: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = repo.home().join("described-by-git");
    let _ = std::fs::remove_file(&out);
    repo.git(&[
        "worktree",
        "add",
        "--detach",
        "--quiet",
        dir.path().join("wt").to_str().unwrap(),
        commit,
    ]);
    let script = describing_verify(&out);
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script[script.find('\n').unwrap() + 1..])
        .current_dir(dir.path().join("wt"))
        .status()
        .unwrap();
    assert!(status.success());
    repo.git(&[
        "worktree",
        "remove",
        "--force",
        dir.path().join("wt").to_str().unwrap(),
    ]);
    std::fs::read_to_string(&out).unwrap()
}

/// A worktree moved from commit to commit in this process (no `git checkout`) holds exactly
/// what git would check out: files changed, added in new folders, removed with the folders
/// they empty, a mode changed, a link added and retargeted; HEAD at the commit and `git
/// status` clean, for tools that ask git.
#[test]
fn a_worktree_moved_in_place_holds_what_git_checks_out_and_a_clean_index() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen");
    repo.write("verify.sh", &describing_verify(&seen));
    repo.chmod("verify.sh", 0o755);
    repo.write("a.txt", "a 1\n");
    repo.write("gone/deep/b.txt", "b\n");
    repo.write("tool.sh", "echo tool\n");
    repo.commit_all("base");
    repo.write("a.txt", "a 2\n");
    repo.remove("gone/deep/b.txt");
    repo.chmod("tool.sh", 0o755);
    repo.symlink("a.txt", "link");
    repo.write("new/deep/c.txt", "c\n");
    let second = repo.commit_all("second");
    repo.remove("link");
    repo.symlink("new/deep/c.txt", "link");
    repo.remove("new/deep/c.txt");
    repo.write("new/deep/c.txt/inside.txt", "a folder where a file was\n");
    std::fs::remove_dir_all(repo.path("gone")).unwrap();
    repo.write("gone", "a file where a folder was\n");
    let third = repo.commit_all("third");
    repo.prove_it(&["run", "main~2..main", "--jobs", "1"])
        .assert()
        .code(0);
    let seen = std::fs::read_to_string(&seen).unwrap();
    let runs: Vec<&str> = seen.split_inclusive("end\n").collect();
    assert_eq!(runs.len(), 2, "{seen}");
    assert_eq!(runs[0], described_by_git(&repo, &second), "{seen}");
    assert_eq!(runs[1], described_by_git(&repo, &third), "{seen}");
    assert!(runs[1].contains(&format!("head {third}")), "{seen}");
    assert!(runs[1].contains("status \n"), "{seen}");
}

/// The move in place writes only what differs between two commits: a file the run before
/// changed in place is not among them, so the reading that follows shows it, and git puts it
/// back before the next commit runs, which sees the commit's bytes (each run spoils the file
/// again, so neither is proven).
#[test]
fn a_file_a_run_wrote_in_place_is_the_commits_again_for_the_next_run() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen");
    history(
        &repo,
        2,
        &[],
        &format!(
            "cat kept.txt >> '{}'\necho spoiled > kept.txt",
            seen.display()
        ),
    );
    repo.write("kept.txt", "as committed\n");
    repo.commit_all("kept");
    repo.write("state.txt", "good 3\n");
    repo.commit_all("commit 3");
    repo.prove_it(&["run", "main~2..main", "--jobs", "1"])
        .assert()
        .code(1);
    assert_eq!(lines(&seen), ["as committed", "as committed"]);
}

/// A run that swaps a folder of its worktree for a link to a folder elsewhere cannot have the
/// next commit's files written through the link, outside the worktree: the link is seen and
/// git checks the commit out, as it checks out over links.
#[test]
fn a_folder_swapped_for_a_link_takes_no_write_outside_the_worktree() {
    let repo = TestRepo::new();
    let outside = repo.home().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("file.txt"), "outside\n").unwrap();
    history(
        &repo,
        0,
        &[],
        &format!(
            "cat src/file.txt >> '{0}.seen'\nrm -rf src && ln -s '{0}' src",
            outside.display()
        ),
    );
    for n in 1..=2 {
        repo.write("src/file.txt", &format!("commit {n}\n"));
        repo.commit_all(&format!("commit {n}"));
    }
    repo.prove_it(&["run", "main~2..main", "--jobs", "1"])
        .assert()
        .code(1);
    assert_eq!(
        std::fs::read_to_string(outside.join("file.txt")).unwrap(),
        "outside\n",
        "a commit's file was written through the link"
    );
    assert_eq!(
        lines(&outside.with_extension("seen")),
        ["commit 1", "commit 2"]
    );
}

/// A commit whose worktree was moved in place from a commit found exactly as committed after
/// its run is not read before its own run: the reading after it is the one that counts. A
/// process the first commit's run left behind, changing a file the move did not write while
/// the second commit runs, is seen there, and the second commit is not proven; the third,
/// after git puts the file back, is.
#[test]
fn a_file_changed_by_a_process_left_behind_is_seen_by_the_next_commits_reading() {
    let repo = TestRepo::new();
    let dir = repo.home().join("signals");
    std::fs::create_dir_all(&dir).unwrap();
    let verify = format!(
        "n=$(cut -d' ' -f2 state.txt)\nif [ \"$n\" = 1 ]; then\n  ( while [ ! -e '{0}/go' ]; do sleep 0.01; done; echo spoiled > kept.txt; touch '{0}/done' ) > /dev/null 2>&1 &\nfi\nif [ \"$n\" = 2 ]; then\n  touch '{0}/go'\n  while [ ! -e '{0}/done' ]; do sleep 0.01; done\nfi\nexit 0",
        dir.display()
    );
    history(&repo, 0, &[], &verify);
    repo.write("kept.txt", "as committed\n");
    repo.commit_all("kept");
    for n in 1..=3 {
        repo.write("state.txt", &format!("good {n}\n"));
        repo.commit_all(&format!("commit {n}"));
    }
    let report = json_stdout(
        &repo
            .prove_it(&["run", "main~3..main", "--jobs", "1", "--json"])
            .assert(),
    );
    let results: Vec<String> = report["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|commit| commit["result"].as_str().unwrap_or("?").to_string())
        .collect();
    assert_eq!(results, ["proven", "state_changed", "proven"], "{report}");
    assert_eq!(
        report["commits"][1]["changed_paths"],
        serde_json::json!(["kept.txt"]),
        "{report}"
    );
}
