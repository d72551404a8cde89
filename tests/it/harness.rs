//! A hermetic repository for tests: a temp dir with `git init`, a cleared environment (HOME in
//! the temp dir, no system or global config, a fixed identity and date, TZ=UTC, LC_ALL=C), and
//! helpers to shape the working state and run both stock git and git-prove-it in it.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assert_cmd::cargo::cargo_bin;

pub const NAME: &str = "A U Thor";
pub const EMAIL: &str = "author@example.com";

pub struct TestRepo {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    home: PathBuf,
}

/// The environment every process in a test gets, and nothing else.
pub fn hermetic(cmd: &mut Command, home: &Path) {
    cmd.env_clear()
        .env("PATH", path_with_our_binary())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", home.join(".gitconfig"))
        .env("GIT_AUTHOR_NAME", NAME)
        .env("GIT_AUTHOR_EMAIL", EMAIL)
        .env("GIT_COMMITTER_NAME", NAME)
        .env("GIT_COMMITTER_EMAIL", EMAIL)
        .env("GIT_AUTHOR_DATE", "2026-11-29T12:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-29T12:00:00Z")
        .env("TZ", "UTC")
        .env("LC_ALL", "C");
}

/// The programs the tests run, and those that run under them (git's hooks, verify.sh scripts,
/// the hosts' shell tools, man pages, signing): PATH holds the directories that have them.
pub const TOOLS: &[&str] = &[
    "git",
    "sh",
    "bash",
    "env",
    "cat",
    "cp",
    "echo",
    "rm",
    "mv",
    "ln",
    "touch",
    "mkdir",
    "ls",
    "chmod",
    "chattr",
    "test",
    "true",
    "false",
    "printf",
    "head",
    "tail",
    "wc",
    "sort",
    "grep",
    "sed",
    "seq",
    "yes",
    "date",
    "sleep",
    "timeout",
    "kill",
    "id",
    "stat",
    "find",
    "pwd",
    "man",
    "script",
    "ssh-keygen",
    "ssh-agent",
    "ssh-add",
    "unshare",
    "mount",
    "node",
];

/// PATH with the directory of the binary under test first, so that `git prove-it` (as hooks
/// run it) is this build; then the directories that hold [`TOOLS`], and nothing else.
pub fn path_with_our_binary() -> std::ffi::OsString {
    static PATH: std::sync::OnceLock<std::ffi::OsString> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let bin = cargo_bin("git-prove-it");
        let ours = bin.parent().expect("the binary has a directory").to_owned();
        built_path(&[ours], TOOLS)
    })
    .clone()
}

/// A PATH built, not inherited: `first`, then each directory of the caller's PATH that holds
/// one of `tools` (the first that holds each, in the caller's order), so that a program the
/// tests do not name (an installed git-prove-it, an agent host) is never found by accident.
pub fn built_path(first: &[PathBuf], tools: &[&str]) -> std::ffi::OsString {
    let caller: Vec<PathBuf> =
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect();
    let wanted: Vec<&PathBuf> = tools
        .iter()
        .filter_map(|tool| caller.iter().find(|dir| is_program(&dir.join(tool))))
        .collect();
    let mut dirs: Vec<PathBuf> = first.to_vec();
    for dir in caller.iter().filter(|dir| wanted.contains(dir)) {
        if !dirs.contains(dir) {
            dirs.push(dir.clone());
        }
    }
    std::env::join_paths(dirs).expect("PATH entries join")
}

/// An executable file (or a link to one).
/// Whether output matches `pattern`, a regular expression (`regex-lite`: predicates' own
/// `is_match` would bring `regex` into the test build, whose features differ from the release
/// build's and so build gix again for the repository's unit check).
pub fn matches(pattern: &str) -> impl predicates::Predicate<str> {
    let pattern = regex_lite::Regex::new(pattern).expect("a valid pattern");
    predicates::function::function(move |text: &str| pattern.is_match(text))
}

pub fn is_program(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// A bare repository on disk, standing in for a remote such as GitHub.
pub struct BareRemote {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl BareRemote {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("remote.git");
        let mut cmd = Command::new("git");
        hermetic(&mut cmd, dir.path());
        let out = cmd
            .args(["init", "-q", "--bare", "-b", "main"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "git init --bare: {out:?}");
        BareRemote { _dir: dir, path }
    }

    /// `git show-ref` in the remote: every ref and where it points, empty when it has none.
    pub fn refs(&self) -> String {
        let mut cmd = Command::new("git");
        hermetic(&mut cmd, &self.path);
        let out = cmd
            .arg("--git-dir")
            .arg(&self.path)
            .arg("show-ref")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The commit a ref of the remote points at, if it has the ref.
    pub fn ref_id(&self, name: &str) -> Option<String> {
        self.refs()
            .lines()
            .find(|line| line.ends_with(&format!(" {name}")))
            .map(|line| line[..40].to_string())
    }

    /// The proof note on `object` in the remote's refs/notes/prove-it, read by stock git.
    pub fn note(&self, object: &str) -> Option<String> {
        let mut cmd = Command::new("git");
        hermetic(&mut cmd, &self.path);
        let out = cmd
            .arg("--git-dir")
            .arg(&self.path)
            .args(["notes", "--ref", "prove-it", "show", object])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// How many objects carry a note in the remote's refs/notes/prove-it, by stock git.
    pub fn note_count(&self) -> usize {
        let mut cmd = Command::new("git");
        hermetic(&mut cmd, &self.path);
        let out = cmd
            .arg("--git-dir")
            .arg(&self.path)
            .args(["notes", "--ref", "prove-it", "list"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).lines().count()
    }
}

impl TestRepo {
    /// A clone of `remote` (with origin pointing at it), in its own temp dir and home.
    pub fn clone_of(remote: &BareRemote) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("repo");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut cmd = Command::new("git");
        hermetic(&mut cmd, &home);
        let out = cmd
            .args(["clone", "-q"])
            .arg(&remote.path)
            .arg(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "git clone: {out:?}");
        TestRepo {
            _dir: dir,
            root,
            home,
        }
    }

    /// This repository's origin is `remote`, and main is pushed there (without hooks).
    pub fn publish_to(&self, remote: &BareRemote) {
        self.git(&["remote", "add", "origin", remote.path.to_str().unwrap()]);
        self.git(&["push", "-q", "--no-verify", "-u", "origin", "main"]);
    }

    /// An empty repository on branch main.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("repo");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let repo = TestRepo {
            _dir: dir,
            root,
            home,
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    /// A repository with one commit holding a.txt and a verify.sh that passes.
    pub fn with_commit() -> Self {
        let repo = Self::new();
        repo.write("a.txt", "a\n");
        repo.verify_passes();
        repo.commit_all("initial");
        repo
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        hermetic(&mut cmd, &self.home);
        cmd.current_dir(&self.root);
        cmd
    }

    pub fn git_output(&self, args: &[&str]) -> Output {
        self.command("git").args(args).output().expect("git runs")
    }

    /// Run git and return its stdout; panic with its stderr when it fails.
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `git prove-it ...` as a command to run in the repository.
    pub fn prove_it(&self, args: &[&str]) -> assert_cmd::Command {
        let mut std = self.command(cargo_bin("git-prove-it"));
        std.args(args);
        assert_cmd::Command::from_std(std)
    }

    pub fn write(&self, rel: &str, content: &str) {
        self.write_bytes(rel.as_ref(), content.as_bytes());
    }

    pub fn write_bytes(&self, rel: &Path, content: &[u8]) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub fn chmod(&self, rel: &str, mode: u32) {
        std::fs::set_permissions(self.path(rel), std::fs::Permissions::from_mode(mode)).unwrap();
    }

    pub fn remove(&self, rel: &str) {
        let path = self.path(rel);
        if path.is_dir() && !path.is_symlink() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
    }

    pub fn symlink(&self, target: &str, rel: &str) {
        std::os::unix::fs::symlink(target, self.path(rel)).unwrap();
    }

    pub fn commit_all(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    /// An executable verify.sh with `body` after a `#!/bin/sh` line.
    pub fn verify_script(&self, body: &str) {
        self.write("verify.sh", &format!("#!/bin/sh\n{body}\n"));
        self.chmod("verify.sh", 0o755);
    }

    pub fn verify_passes(&self) {
        self.verify_script("echo all good\nexit 0");
    }

    pub fn verify_fails(&self, code: i32) {
        self.verify_script(&format!(
            "echo checking\necho 'test x ... FAILED' >&2\nexit {code}"
        ));
    }

    /// The tree stock git stages for the working state, without touching the real index:
    /// `cp -p index tmp; GIT_INDEX_FILE=tmp git add -A; git write-tree`.
    pub fn stock_state_tree(&self) -> Result<String, String> {
        let git_dir = self.git(&["rev-parse", "--absolute-git-dir"]);
        let index = Path::new(git_dir.trim()).join("index");
        let tmp = self.home.join("stock-index");
        let _ = std::fs::remove_file(&tmp);
        // `cp -p`, not a plain copy: the index's mtime decides which entries git sees as racily
        // clean, and a copy stamped a second later would hide a same-size rewrite from git.
        if index.exists() {
            let copied = self
                .command("cp")
                .arg("-p")
                .arg(&index)
                .arg(&tmp)
                .status()
                .unwrap();
            assert!(copied.success());
        }
        let run = |args: &[&str]| {
            let out = self
                .command("git")
                .env("GIT_INDEX_FILE", &tmp)
                .args(args)
                .output()
                .unwrap();
            if out.status.success() {
                Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
            } else {
                Err(String::from_utf8_lossy(&out.stderr).into_owned())
            }
        };
        run(&["add", "-A"])?;
        run(&["write-tree"])
    }

    /// Our state tree, as `git prove-it status --json` reports it.
    pub fn our_state_tree(&self) -> Result<String, String> {
        let out = self.prove_it(&["status", "--json"]).output().unwrap();
        if out.status.code() == Some(2) {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("status --json printed no JSON ({e}): {out:?}"));
        Ok(json["tree"].as_str().expect("tree in status").to_string())
    }

    /// Our state tree must equal stock git's, and both must agree on refusing.
    #[track_caller]
    pub fn assert_state_tree_matches_git(&self) -> String {
        let ours = self.our_state_tree();
        let stock = self.stock_state_tree();
        match (&ours, &stock) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "state tree differs from git add -A + write-tree"),
            (Err(_), Err(_)) => {}
            _ => panic!("ours {ours:?} vs git {stock:?}"),
        }
        ours.unwrap_or_default()
    }

    /// An executable `#!/bin/sh` script in the home directory, outside the repository, so that
    /// it is not part of the working state.
    pub fn home_script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.home.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// The blob id of `content`, written to the object database when `write` is set.
    pub fn hash_object(&self, content: &str, write: bool) -> String {
        let file = self.home.join("hash-object-input");
        std::fs::write(&file, content).unwrap();
        let mut args = vec!["hash-object"];
        if write {
            args.push("-w");
        }
        args.push(file.to_str().unwrap());
        self.git(&args).trim().to_string()
    }

    /// The proof note on `object` in refs/notes/prove-it, read by stock git.
    pub fn note(&self, object: &str) -> Option<String> {
        let out = self.git_output(&["notes", "--ref", "prove-it", "show", object]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// A repository with a submodule at `sub`, committed; the source repository is returned so
/// it lives as long as the test.
pub fn with_submodule() -> (TestRepo, TestRepo) {
    let source = TestRepo::with_commit();
    let repo = TestRepo::with_commit();
    repo.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        source.root.to_str().unwrap(),
        "sub",
    ]);
    repo.commit_all("add submodule");
    (repo, source)
}

/// The JSON object a command printed on stdout.
pub fn json_stdout(assert: &assert_cmd::assert::Assert) -> serde_json::Value {
    let stdout = &assert.get_output().stdout;
    serde_json::from_slice(stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON on stdout ({e}): {}",
            String::from_utf8_lossy(stdout)
        )
    })
}

/// Whether the process `pid` is gone (or a zombie) within 5 s: a process killed on a loaded
/// machine may take a moment to be scheduled to die.
pub fn gone_within_5s(pid: &str) -> bool {
    let stat = PathBuf::from(format!("/proc/{pid}/stat"));
    (0..100).any(|_| {
        let dead = std::fs::read_to_string(&stat)
            .map_or(true, |stat| stat.split_whitespace().nth(2) == Some("Z"));
        if !dead {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        dead
    })
}

/// One commit for [`fast_import`]: its message and the files it adds or changes, each as
/// (mode, path, content).
pub type Imported<'a> = (String, Vec<(&'a str, &'a str, String)>);

/// Write `commits` onto `refs/heads/main`, each on the one before, with one `git fast-import`
/// stream (200 commits in a few milliseconds), then check main out. Commit times rise by a
/// second each, from 1 700 000 001.
pub fn fast_import(repo: &TestRepo, commits: &[Imported<'_>]) {
    let mut stream = String::new();
    for (n, (message, files)) in commits.iter().enumerate() {
        let mark = n + 1;
        stream.push_str(&format!(
            "commit refs/heads/main\nmark :{mark}\ncommitter A U Thor <author@example.com> {} +0000\ndata {}\n{message}\n",
            1_700_000_000 + mark,
            message.len() + 1,
        ));
        if mark > 1 {
            stream.push_str(&format!("from :{}\n", mark - 1));
        }
        for (mode, path, content) in files {
            stream.push_str(&format!(
                "M {mode} inline {path}\ndata {}\n{content}\n",
                content.len()
            ));
        }
    }
    let input = repo.home().join("history.fi");
    std::fs::write(&input, stream).unwrap();
    let out = repo
        .command("git")
        .args(["fast-import", "--quiet"])
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "git fast-import: {out:?}");
    repo.git(&["checkout", "-q", "-f", "main"]);
}
