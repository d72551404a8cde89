//! The index's stat data is the agent's to write: an entry naming one blob with the stat data
//! of a file that holds another passes every stat comparison, ctime included. A stop must read
//! such a path from disk, and a run must key its record by the bytes it ran. Each test is one
//! trap, in a real repository, through the real binary (`git prove-it hook claude`).

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::harness::TestRepo;

/// verify.sh that fails while a.txt holds "bad", and notes each run in `$HOME/runs.log`.
const CHECKS_A: &str = "echo ran >> \"$HOME/runs.log\"\n\
    if grep -q bad a.txt; then echo 'a.txt is bad'; exit 1; fi\nexit 0";

fn event(repo: &TestRepo, name: &str) -> String {
    json!({
        "session_id": "sealed-index-session",
        "transcript_path": "/t.jsonl",
        "cwd": repo.root,
        "hook_event_name": name,
        "prompt_id": "p1",
        "stop_hook_active": false,
        "last_assistant_message": "Done, all tests pass.",
    })
    .to_string()
}

/// The hook's answer (`None` for silence), with `env` set for the hook process.
fn hook_with(repo: &TestRepo, name: &str, env: &[(&str, &str)]) -> Option<Value> {
    let mut cmd = repo.prove_it(&["hook", "claude"]);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = cmd.write_stdin(event(repo, name)).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    (!out.stdout.is_empty()).then(|| serde_json::from_slice(&out.stdout).unwrap())
}

fn hook(repo: &TestRepo, name: &str) -> Option<Value> {
    hook_with(repo, name, &[])
}

#[track_caller]
fn block_reason(answer: Option<Value>) -> String {
    let json = answer.expect("a block, not silence");
    assert_eq!(json["decision"], "block", "{json}");
    json["reason"].as_str().unwrap().to_string()
}

fn an_hour_back(path: &Path) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

fn runs(repo: &TestRepo) -> usize {
    std::fs::read_to_string(repo.home().join("runs.log")).map_or(0, |log| log.lines().count())
}

/// A committed, proven repository whose verify.sh checks a.txt ("good\n", its mtime an hour
/// back so that the index's stat data is not racily clean), with a session started on it.
/// With `ahead`, the session starts with its clock ten seconds ahead, so that every file of the
/// repository predates the anchor by its ctime, and the stop may take a blob from the index
/// only where the anchor's state holds the same one.
fn proven_session(ahead: bool) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n");
    an_hour_back(&repo.path("a.txt"));
    repo.verify_script(CHECKS_A);
    repo.commit_all("initial");
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(
        hook_with(
            &repo,
            "SessionStart",
            if ahead {
                &[("PROVE_IT_TEST_CLOCK_OFFSET", "10")]
            } else {
                &[]
            }
        ),
        None
    );
    repo
}

/// Rewrite the index so that its one entry naming blob `from` names `to`, stat data and all
/// else as it was, as a crafted index file would (with its trailing checksum made good).
fn swap_index_blob(repo: &TestRepo, from: &str, to: &str) {
    swap_index_blob_in(repo, ".", from, to);
}

/// `swap_index_blob` in the repository checked out at `dir` (`.` or a submodule's path).
fn swap_index_blob_in(repo: &TestRepo, dir: &str, from: &str, to: &str) {
    let raw = |hex: &str| -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    };
    let (from, to) = (raw(from.trim()), raw(to.trim()));
    let git = |args: &[&str]| {
        let out = repo
            .command("git")
            .current_dir(repo.path(dir))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let path = repo
        .path(dir)
        .join(git(&["rev-parse", "--git-path", "index"]).trim());
    let mut bytes = std::fs::read(&path).unwrap();
    let at: Vec<usize> = bytes
        .windows(from.len())
        .enumerate()
        .filter(|(_, w)| *w == from.as_slice())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "one entry names the blob");
    bytes[at[0]..at[0] + to.len()].copy_from_slice(&to);
    let body = bytes.len() - 20;
    let scratch = repo.home().join("index-body");
    std::fs::write(&scratch, &bytes[..body]).unwrap();
    let sum = std::process::Command::new("sha1sum")
        .arg(&scratch)
        .output()
        .unwrap();
    let hex = String::from_utf8(sum.stdout).unwrap();
    bytes[body..].copy_from_slice(&raw(&hex[..40]));
    std::fs::write(&path, bytes).unwrap();
    // git itself now takes the entry for the file: its stat data matches.
    assert_eq!(git(&["diff-files", "--name-only"]), "");
}

// An index entry rewritten to name the honest blob, with the broken file's own stat data
// (ctime included), made the stop's state tree take the honest blob: the state was the proven
// one and the turn ended quietly while the disk held broken bytes.
#[test]
fn honest_index_blob_with_the_broken_files_stat_is_read_from_disk() {
    let repo = proven_session(false);
    let good = repo.git(&["rev-parse", ":a.txt"]);
    repo.write("a.txt", "bad\n");
    an_hour_back(&repo.path("a.txt"));
    repo.git(&["update-index", "a.txt"]);
    let bad = repo.git(&["rev-parse", ":a.txt"]);
    swap_index_blob(&repo, &bad, &good);
    assert_eq!(repo.git(&["rev-parse", ":a.txt"]), good);

    let reason = block_reason(hook(&repo, "Stop"));
    assert!(reason.contains("a.txt is bad"), "{reason}");
    // What is on disk, committed, has no proof.
    repo.git(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{},a.txt", bad.trim()),
    ]);
    repo.git(&["commit", "-q", "-m", "the hidden change"]);
    repo.prove_it(&["check", "--strict"]).assert().code(1);
}

// The reverse: honest bytes on disk, an index entry naming a broken blob with their stat data.
// `run` proved the broken tree (verify.sh ran the honest bytes) and a commit of the index then
// passed `check --strict`.
#[test]
fn broken_index_blob_with_the_honest_files_stat_proves_nothing() {
    let repo = proven_session(true);
    let good = repo.git(&["rev-parse", ":a.txt"]);
    let bad = repo.hash_object("bad\n", true);
    // The same entry written again drops the index's cached tree of the root, as any edit of
    // the index does, so that a commit of the index writes the crafted blob.
    repo.git(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{},a.txt", good.trim()),
    ]);
    repo.git(&["update-index", "-q", "--refresh"]);
    swap_index_blob(&repo, &good, &bad);
    let broken = repo.git(&["write-tree"]).trim().to_string();
    let honest = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    assert_ne!(broken, honest);

    // The agent's own run runs the bytes on disk, and says so: it proves the honest tree (here
    // already proven), never the broken one.
    let ran = crate::harness::json_stdout(&repo.prove_it(&["run", "--json"]).assert().code(0));
    assert_eq!(ran["tree"], honest.as_str(), "{ran}");
    let before = runs(&repo);
    let ran = crate::harness::json_stdout(
        &repo
            .prove_it(&["run", "--force", "--json"])
            .assert()
            .code(0),
    );
    assert_eq!(ran["tree"], honest.as_str(), "{ran}");
    assert_eq!(runs(&repo), before + 1, "verify.sh ran");
    assert_eq!(repo.note(&broken), None, "a proof of the broken tree");
    // The stop reads a.txt from disk: the session's state is unchanged.
    assert_eq!(hook(&repo, "Stop"), None);
    assert_eq!(repo.note(&broken), None, "a proof of the broken tree");

    repo.git(&["commit", "-q", "-m", "broken"]);
    assert_eq!(repo.git(&["rev-parse", "HEAD^{tree}"]).trim(), broken);
    repo.prove_it(&["check", "--strict"]).assert().code(1);
}

// Reading from disk what the anchor cannot vouch for must not cost an ordinary session its
// proofs: an edit (staged or not) is proven at the stop, and the next stop is a cache hit.
#[test]
fn an_ordinary_edit_is_proven_and_the_next_stop_is_a_cache_hit() {
    let repo = proven_session(true);
    repo.write("a.txt", "good, and better\n");
    let before = runs(&repo);
    assert_eq!(hook(&repo, "Stop"), None);
    assert_eq!(runs(&repo), before + 1, "the stop ran verify.sh");
    repo.git(&["add", "a.txt"]);
    assert_eq!(hook(&repo, "Stop"), None);
    assert_eq!(runs(&repo), before + 1, "the second stop was a cache hit");
    let status = crate::harness::json_stdout(&repo.prove_it(&["status", "--json"]).assert());
    assert_eq!(status["proven"], true, "{status}");
}

// With a checks file, each check's key is cut from the state: an index entry naming a broken
// blob over a check's honest input let `run` prove the broken input tree, and a commit of the
// index passed `check --strict`. Now `run` runs (and keys) the inputs as the disk has them.
#[test]
fn broken_index_blob_under_a_checks_input_proves_nothing() {
    let repo = crate::checks::monorepo(
        "exit 0",
        "if grep -q bad index.md; then echo 'index.md is bad'; exit 1; fi",
    );
    an_hour_back(&repo.path("docs/index.md"));
    repo.git(&["update-index", "-q", "--refresh"]);
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(
        hook_with(
            &repo,
            "SessionStart",
            &[("PROVE_IT_TEST_CLOCK_OFFSET", "10")]
        ),
        None
    );
    let good = repo.git(&["rev-parse", ":docs/index.md"]);
    let bad = repo.hash_object("bad\n", true);
    repo.git(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{},docs/index.md", good.trim()),
    ]);
    repo.git(&["update-index", "-q", "--refresh"]);
    swap_index_blob(&repo, &good, &bad);

    let before = crate::checks::runs(&repo, "docs").len();
    repo.prove_it(&["run", "--force"]).assert().code(0);
    assert_eq!(crate::checks::runs(&repo, "docs").len(), before + 1);
    assert_eq!(hook(&repo, "Stop"), None);
    repo.git(&["commit", "-q", "-m", "broken docs"]);
    assert_eq!(repo.git(&["show", "HEAD:docs/index.md"]), "bad\n");
    repo.prove_it(&["check", "--strict"]).assert().code(1);
}

// A checked-out submodule's state is its own state tree, from its own index: an entry there
// naming the committed blob with the broken file's stat data made the submodule look clean,
// and the stop end quietly. Its index is now trusted only as far as the commit the anchor
// records for it.
#[test]
fn honest_index_blob_with_the_broken_files_stat_in_a_submodule_is_read_from_disk() {
    let (repo, _source) = crate::harness::with_submodule();
    repo.prove_it(&["run"]).assert().code(0);
    assert_eq!(hook(&repo, "SessionStart"), None);
    let in_sub = |args: &[&str]| {
        let out = repo
            .command("git")
            .current_dir(repo.path("sub"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let good = in_sub(&["rev-parse", ":a.txt"]);
    repo.write("sub/a.txt", "bad\n");
    an_hour_back(&repo.path("sub/a.txt"));
    in_sub(&["update-index", "a.txt"]);
    let bad = in_sub(&["rev-parse", ":a.txt"]);
    swap_index_blob_in(&repo, "sub", &bad, &good);

    let reason = block_reason(hook(&repo, "Stop"));
    assert!(
        reason.contains("the submodule 'sub' has changes"),
        "{reason}"
    );
}
