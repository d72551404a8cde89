//! The verify.sh contract: which program runs (the repository's verify.sh, its shebang picking
//! the interpreter), in which directory (the worktree root), with which `PROVE_IT*` environment,
//! under which limits (a timeout, a capped log), and how its exit is read. Running it is
//! `crate::process`'s job; this module never prints, the caller decides what the user sees.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::process::Combined;

pub use crate::process::{Error, Exit};

/// How long to wait for the end of the output once verify.sh has exited.
/// A background process it left behind may hold the pipe open for ever, and
/// must not hold the run with it.
const EOF_GRACE: Duration = Duration::from_millis(250);

/// The run log keeps at most this much of verify.sh's output.
pub const LOG_CAP: u64 = 8 * 1024 * 1024;

/// What to run and how to capture it.
pub struct Request<'a> {
    /// The absolute path of verify.sh; its shebang picks the interpreter.
    pub program: &'a Path,
    /// The worktree root, which becomes the current directory.
    pub workdir: &'a Path,
    /// Environment variables added to the inherited environment.
    pub env: &'a [(OsString, OsString)],
    /// After this long the whole process group is killed.
    pub timeout: Duration,
    /// Where the full output is written (mode 0600), if anywhere.
    pub log_path: Option<&'a Path>,
    /// The most bytes of output the log keeps.
    pub log_cap: u64,
    /// How many of the last lines of output the result keeps.
    pub tail_lines: usize,
    /// Where every chunk of output is copied as it arrives, if anywhere.
    pub echo: Option<Box<dyn Write + Send>>,
    /// Set when the user interrupts us: verify.sh sits in its own process group, so the
    /// terminal's Ctrl-C does not reach it, and we must end it ourselves.
    pub interrupt: Option<&'a AtomicBool>,
    /// How verify.sh is started: plainly, or in a view of the filesystem of its own
    /// (`crate::process::Wrap`).
    pub view: &'a crate::process::Wrap,
    /// Variables of ours that verify.sh must not inherit (a commit's run leaves out the
    /// caller's repository-locating variables, `git::LOCAL_ENV`).
    pub env_remove: &'a [&'a str],
}

/// What one run of verify.sh did.
pub struct Ran {
    pub exit: Exit,
    /// From the spawn to the exit of verify.sh itself.
    pub duration: Duration,
    /// The last `tail_lines` lines of output, oldest first.
    pub tail: Vec<String>,
    /// Every byte of output seen, which may be more than the log kept.
    pub output_bytes: u64,
}

/// The exit code by which verify.sh (or a check) says the state cannot be tested, rather than
/// that it fails: `git bisect run` gives 125 that meaning, so one script serves both.
pub const CANNOT_TEST: i32 = 125;

impl Ran {
    /// Whether verify.sh exited with code 0.
    pub fn passed(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    /// Whether verify.sh said the state cannot be tested ([`CANNOT_TEST`]).
    pub fn cannot_test(&self) -> bool {
        self.exit == Exit::Code(CANNOT_TEST)
    }
}

/// The environment verify.sh gets on top of ours (SPEC.md): `PROVE_IT=1`, the state tree it
/// proves as `PROVE_IT_TREE`, and the host that asked as `PROVE_IT_HOST`. Each run adds its
/// own `PROVE_IT_REPORTS` (`proof::prove`), a directory made for that run alone.
pub fn env(tree: &str, host: &str) -> Vec<(OsString, OsString)> {
    [
        ("PROVE_IT", "1"),
        ("PROVE_IT_TREE", tree),
        ("PROVE_IT_HOST", host),
    ]
    .into_iter()
    .map(|(key, value)| (key.into(), value.into()))
    .collect()
}

/// Variables a shell sets for each command it starts, whoever started it: never part of an
/// environment's digest.
const SHELL_SET: [&str; 4] = ["PWD", "OLDPWD", "SHLVL", "_"];

/// git-prove-it's own settings (`PROVE_IT_TIMEOUT`, `PROVE_IT_SKIP`, ...): the anchor keeps the
/// policy they give, and the gate compares that; verify.sh gets the ones a run sets.
const OWN_PREFIX: &str = "PROVE_IT";

/// The environment a hook or a run had, as far as it can change what verify.sh does: every
/// variable but git-prove-it's own settings, the ones a shell sets per command and the ones
/// `per_event` names (what the
/// agent hosts set for some of their hook calls and not others, ADAPTERS.md). A proof made in
/// an environment the agent chose (a `PATH` whose test tool always passes) carries another
/// digest than the one its session started with, and does not spare that session's stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// Name and value, sorted by name.
    vars: Vec<(OsString, OsString)>,
}

impl Environment {
    /// This process's environment.
    pub fn of_process(per_event: &[&str]) -> Environment {
        Environment::of(std::env::vars_os(), per_event)
    }

    pub fn of(
        vars: impl IntoIterator<Item = (OsString, OsString)>,
        per_event: &[&str],
    ) -> Environment {
        let mut vars: Vec<(OsString, OsString)> = vars
            .into_iter()
            .filter(|(name, _)| {
                let name = name.to_string_lossy();
                !SHELL_SET.contains(&name.as_ref())
                    && !per_event.contains(&name.as_ref())
                    && !name.starts_with(OWN_PREFIX)
            })
            .collect();
        vars.sort();
        Environment { vars }
    }

    /// One digest of every name and value (the `env:` of anchors and records).
    pub fn digest(&self) -> gix::ObjectId {
        let mut bytes = Vec::new();
        for (name, value) in &self.vars {
            bytes.extend_from_slice(name.as_encoded_bytes());
            bytes.push(0);
            bytes.extend_from_slice(value.as_encoded_bytes());
            bytes.push(0);
        }
        hash(&bytes)
    }

    /// Each variable's name with a short digest of its value salted with `salt`, so that an
    /// anchor can name the variables that changed without keeping any value (they may hold
    /// secrets).
    pub fn by_name(&self, salt: &str) -> Vec<(String, String)> {
        self.vars
            .iter()
            .map(|(name, value)| {
                let mut bytes = salt.as_bytes().to_vec();
                bytes.push(0);
                bytes.extend_from_slice(value.as_encoded_bytes());
                let digest = hash(&bytes).to_hex_with_len(VALUE_DIGEST_LEN).to_string();
                (name.to_string_lossy().into_owned(), digest)
            })
            .collect()
    }
}

/// How many hex digits of a value's salted digest an anchor keeps.
pub const VALUE_DIGEST_LEN: usize = 12;

fn hash(bytes: &[u8]) -> gix::ObjectId {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
        .expect("hashing bytes held in memory cannot fail")
}

/// The names of the variables that differ between `before` and `now` (each as `by_name` gives
/// them): added, removed or changed, sorted.
pub fn changed_names(before: &[(String, String)], now: &[(String, String)]) -> Vec<String> {
    let mut names: Vec<String> = before
        .iter()
        .filter(|var| !now.contains(var))
        .chain(now.iter().filter(|var| !before.contains(var)))
        .map(|(name, _)| name.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Runs verify.sh to its end or its timeout, calling `on_tick` with the
/// elapsed time every 200 ms or so while it runs. Its stdin is `/dev/null`,
/// its stdout and stderr one stream, and its process group is killed at the
/// timeout or an interrupt, never when it exits: what it leaves running in the
/// background is its own business, as in a terminal.
pub fn run(req: Request<'_>, on_tick: &mut dyn FnMut(Duration)) -> Result<Ran, Error> {
    let mut request = req
        .view
        .request(req.program, req.workdir)
        .envs(req.env.iter().map(|(key, value)| (key, value)))
        .combined(Combined {
            tail_lines: req.tail_lines,
            log: req.log_path.map(|path| (path.to_owned(), req.log_cap)),
            echo: req.echo,
        })
        .timeout(req.timeout)
        .eof_grace(EOF_GRACE);
    for name in req.env_remove {
        request = request.env_remove(name);
    }
    if let Some(flag) = req.interrupt {
        request = request.interrupt(flag);
    }
    let finished = request.run_ticking(on_tick)?;
    Ok(Ran {
        exit: finished.exit,
        duration: finished.duration,
        tail: finished.tail,
        output_bytes: finished.output_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment(vars: &[(&str, &str)], per_event: &[&str]) -> Environment {
        Environment::of(
            vars.iter()
                .map(|(name, value)| ((*name).into(), (*value).into())),
            per_event,
        )
    }

    /// What a shell, git-prove-it's own settings or a host's per-event variables hold never
    /// tells two environments apart; any other variable, and the order of none, does.
    #[test]
    fn an_environments_digest_leaves_out_what_is_set_per_call() {
        let base = environment(&[("PATH", "/bin"), ("HOME", "/h")], &["CLAUDE_EFFORT"]);
        let same = environment(
            &[
                ("HOME", "/h"),
                ("PATH", "/bin"),
                ("PWD", "/elsewhere"),
                ("SHLVL", "3"),
                ("PROVE_IT_SKIP", "1"),
                ("CLAUDE_EFFORT", "high"),
            ],
            &["CLAUDE_EFFORT"],
        );
        assert_eq!(base.digest(), same.digest());
        let path = environment(&[("PATH", "/tmp/lying:/bin"), ("HOME", "/h")], &[]);
        let added = environment(&[("PATH", "/bin"), ("HOME", "/h"), ("FAST", "1")], &[]);
        assert_ne!(base.digest(), path.digest());
        assert_ne!(base.digest(), added.digest());
        assert_eq!(
            changed_names(&base.by_name("s"), &path.by_name("s")),
            ["PATH"]
        );
        assert_eq!(
            changed_names(&base.by_name("s"), &added.by_name("s")),
            ["FAST"]
        );
        // A value is kept only as a salted digest, never as itself.
        assert!(base.by_name("s").iter().all(|(_, digest)| digest != "/bin"));
    }
    use crate::process::testing::{Shared, is_dead, read_pid, wait_until_dead};
    use rustix::process::{Pid, Signal};
    use std::fs::{self, Permissions};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::PathBuf;
    use std::sync::atomic::Ordering;
    use std::time::Instant;
    use tempfile::TempDir;

    /// A tempdir with `verify.sh` holding `body`, made executable.
    fn script(body: &str) -> (TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("verify.sh");
        fs::write(&path, body).unwrap();
        fs::set_permissions(&path, Permissions::from_mode(0o755)).unwrap();
        (dir, path)
    }

    fn request<'a>(dir: &'a TempDir, program: &'a Path) -> Request<'a> {
        Request {
            program,
            workdir: dir.path(),
            env: &[],
            timeout: Duration::from_secs(20),
            log_path: None,
            log_cap: 8 << 20,
            tail_lines: 50,
            echo: None,
            interrupt: None,
            view: &crate::process::Wrap::Plain,
            env_remove: &[],
        }
    }

    fn run_quietly(req: Request<'_>) -> Result<Ran, Error> {
        run(req, &mut |_| {})
    }

    #[test]
    fn exit_zero_keeps_the_output_lines() {
        let (dir, path) = script("#!/bin/sh\necho one\necho two\n");
        let ran = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(ran.exit, Exit::Code(0));
        assert!(ran.passed());
        assert_eq!(ran.tail, ["one", "two"]);
        assert_eq!(ran.output_bytes, 8);
    }

    #[test]
    fn non_zero_exit_code_is_reported() {
        let (dir, path) = script("#!/bin/sh\necho failing\nexit 3\n");
        let ran = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(ran.exit, Exit::Code(3));
        assert!(!ran.passed());
        assert_eq!(ran.exit.code(), Some(3));
        assert_eq!(ran.tail, ["failing"]);
    }

    #[test]
    fn stdout_and_stderr_are_interleaved_in_order() {
        let (dir, path) = script("#!/bin/sh\necho a\necho b >&2\necho c\necho d >&2\n");
        let ran = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(ran.tail, ["a", "b", "c", "d"]);
    }

    #[test]
    fn only_the_last_lines_are_kept() {
        let (dir, path) = script("#!/bin/sh\nseq 1 10000\n");
        let mut req = request(&dir, &path);
        req.tail_lines = 3;
        let ran = run_quietly(req).unwrap();
        assert_eq!(ran.tail, ["9998", "9999", "10000"]);
        let expected: usize = (1..=10000).map(|n: u32| n.to_string().len() + 1).sum();
        assert_eq!(ran.output_bytes, expected as u64);
    }

    #[test]
    fn a_huge_line_is_cut_in_memory() {
        let (dir, path) =
            script("#!/bin/sh\necho before\nhead -c 5000000 /dev/zero | tr '\\0' x\n");
        let ran = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(ran.exit, Exit::Code(0));
        assert_eq!(ran.output_bytes, 7 + 5_000_000);
        assert_eq!(ran.tail.len(), 2);
        assert_eq!(ran.tail[0], "before");
        let last = &ran.tail[1];
        assert!(
            last.len() < crate::process::LINE_CAP + 100,
            "kept {} bytes",
            last.len()
        );
        assert!(last.starts_with(&"x".repeat(crate::process::LINE_CAP)));
        assert!(last.ends_with(" [git-prove-it: line of 5000000 bytes cut]"));
    }

    #[test]
    fn a_cut_line_does_not_end_in_half_a_character() {
        // 4095 ASCII bytes and then "é" (two bytes) straddle the cap.
        let (dir, path) = script(&format!(
            "#!/bin/sh\nprintf '%s\\303\\251tail\\n' {}\n",
            "y".repeat(crate::process::LINE_CAP - 1)
        ));
        let ran = run_quietly(request(&dir, &path)).unwrap();
        let line = &ran.tail[0];
        assert!(line.starts_with(&"y".repeat(crate::process::LINE_CAP - 1)));
        assert!(!line.contains('\u{FFFD}'), "{line}");
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let (dir, path) = script("#!/bin/sh\nprintf '\\377\\376ok\\n'\n");
        let ran = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(ran.tail, ["\u{FFFD}\u{FFFD}ok"]);
    }

    #[test]
    fn carriage_returns_are_stripped_and_a_last_line_without_newline_is_kept() {
        let (dir, path) = script("#!/bin/sh\nprintf 'dos\\r\\nunix\\nlast'\n");
        let ran = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(ran.tail, ["dos", "unix", "last"]);
    }

    #[test]
    fn environment_variables_reach_the_script() {
        let (dir, path) = script("#!/bin/sh\necho \"$PROVE_IT $PROVE_IT_TREE $PROVE_IT_HOST\"\n");
        let env = [
            (OsString::from("PROVE_IT"), OsString::from("1")),
            (OsString::from("PROVE_IT_TREE"), OsString::from("abc123")),
            (OsString::from("PROVE_IT_HOST"), OsString::from("box")),
        ];
        let mut req = request(&dir, &path);
        req.env = &env;
        let ran = run_quietly(req).unwrap();
        assert_eq!(ran.tail, ["1 abc123 box"]);
    }

    #[test]
    fn the_workdir_is_the_current_directory() {
        let (dir, path) = script("#!/bin/sh\npwd -P\n");
        let workdir = tempfile::tempdir().unwrap();
        let mut req = request(&dir, &path);
        req.workdir = workdir.path();
        let ran = run_quietly(req).unwrap();
        let expected = workdir.path().canonicalize().unwrap();
        assert_eq!(ran.tail, [expected.to_str().unwrap()]);
    }

    #[test]
    fn stdin_is_closed() {
        let (dir, path) = script("#!/bin/sh\ncat\necho done\n");
        let mut req = request(&dir, &path);
        req.timeout = Duration::from_secs(9);
        let started = Instant::now();
        let ran = run_quietly(req).unwrap();
        assert_eq!(ran.exit, Exit::Code(0));
        assert_eq!(ran.tail, ["done"]);
        assert!(started.elapsed() < Duration::from_secs(9));
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        let (dir, path) =
            script("#!/bin/sh\nsleep 30 &\necho $! > grandchild.pid\necho started\nsleep 30\n");
        let mut req = request(&dir, &path);
        req.timeout = Duration::from_secs(1);
        let started = Instant::now();
        let ran = run_quietly(req).unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(ran.exit, Exit::TimedOut);
        assert_eq!(ran.tail, ["started"]);
        let grandchild = read_pid(&dir.path().join("grandchild.pid"));
        assert!(wait_until_dead(grandchild), "pid {grandchild} survived");
    }

    #[test]
    fn a_background_child_holding_the_pipe_does_not_hang_the_run() {
        let (dir, path) =
            script("#!/bin/sh\nsleep 30 &\necho $! > background.pid\necho bye\nexit 0\n");
        let started = Instant::now();
        let ran = run_quietly(request(&dir, &path)).unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(ran.exit, Exit::Code(0));
        assert_eq!(ran.tail, ["bye"]);
        let background = read_pid(&dir.path().join("background.pid"));
        assert!(!is_dead(background), "the background child was killed");
        let pid = Pid::from_raw(background).unwrap();
        rustix::process::kill_process(pid, Signal::KILL).unwrap();
    }

    #[test]
    fn death_by_signal_is_reported() {
        let (dir, path) = script("#!/bin/sh\necho dying\nkill -TERM $$\nsleep 5\n");
        let ran = run_quietly(request(&dir, &path)).unwrap();
        assert_eq!(ran.exit, Exit::Signal(15));
        assert_eq!(ran.tail, ["dying"]);
    }

    #[test]
    fn the_log_gets_the_full_output() {
        let (dir, path) = script("#!/bin/sh\necho out\necho err >&2\nprintf end\n");
        let log = dir.path().join("run.log");
        let mut req = request(&dir, &path);
        req.log_path = Some(&log);
        run_quietly(req).unwrap();
        assert_eq!(fs::read_to_string(&log).unwrap(), "out\nerr\nend");
        assert_eq!(fs::metadata(&log).unwrap().mode() & 0o777, 0o600);
    }

    #[test]
    fn the_log_is_capped_and_says_so() {
        let (dir, path) = script("#!/bin/sh\nseq 1 10000\n");
        let log = dir.path().join("run.log");
        fs::write(&log, "an old log that is longer than the cap").unwrap();
        fs::set_permissions(&log, Permissions::from_mode(0o644)).unwrap();
        let mut req = request(&dir, &path);
        req.log_path = Some(&log);
        req.log_cap = 10;
        let ran = run_quietly(req).unwrap();
        assert!(ran.output_bytes > 10);
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "1\n2\n3\n4\n5\n[git-prove-it: log truncated after 10 bytes]\n"
        );
        assert_eq!(fs::metadata(&log).unwrap().mode() & 0o777, 0o600);
    }

    #[test]
    fn a_log_cut_mid_line_ends_the_line_before_the_notice() {
        let (dir, path) = script("#!/bin/sh\necho abcdef\n");
        let log = dir.path().join("run.log");
        let mut req = request(&dir, &path);
        req.log_path = Some(&log);
        req.log_cap = 3;
        run_quietly(req).unwrap();
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "abc\n[git-prove-it: log truncated after 3 bytes]\n"
        );
    }

    #[test]
    fn an_unwritable_log_is_an_error_before_anything_runs() {
        let (dir, path) = script("#!/bin/sh\ntouch ran\n");
        let log = dir.path().join("missing-dir").join("run.log");
        let mut req = request(&dir, &path);
        req.log_path = Some(&log);
        let error = run_quietly(req).err().unwrap();
        assert!(matches!(error, Error::Log { .. }), "{error:?}");
        assert!(!dir.path().join("ran").exists());
    }

    #[test]
    fn the_echo_gets_every_byte() {
        let (dir, path) = script("#!/bin/sh\necho a\nprintf '\\377b'\n");
        let echo = Shared::default();
        let mut req = request(&dir, &path);
        req.echo = Some(Box::new(echo.clone()));
        run_quietly(req).unwrap();
        assert_eq!(*echo.0.lock().unwrap(), b"a\n\xffb");
    }

    #[test]
    fn a_script_without_shebang_is_a_spawn_error() {
        let (dir, path) = script("echo no shebang here\n");
        let error = run_quietly(request(&dir, &path)).err().unwrap();
        let Error::Spawn { source, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(
            source.raw_os_error(),
            Some(rustix::io::Errno::NOEXEC.raw_os_error())
        );
    }

    #[test]
    fn a_missing_script_is_a_spawn_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("verify.sh");
        let error = run_quietly(request(&dir, &path)).err().unwrap();
        assert!(matches!(error, Error::Spawn { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            format!("could not start {}", path.display())
        );
    }

    #[test]
    fn a_script_without_execute_permission_is_a_spawn_error() {
        let (dir, path) = script("#!/bin/sh\nexit 0\n");
        fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
        let error = run_quietly(request(&dir, &path)).err().unwrap();
        assert!(matches!(error, Error::Spawn { .. }), "{error:?}");
    }

    #[test]
    fn on_tick_is_called_while_the_script_runs() {
        let (dir, path) = script("#!/bin/sh\nsleep 1.5\n");
        let mut ticks = Vec::new();
        let ran = run(request(&dir, &path), &mut |elapsed| ticks.push(elapsed)).unwrap();
        assert_eq!(ran.exit, Exit::Code(0));
        assert!(!ticks.is_empty());
        assert!(ticks.windows(2).all(|pair| pair[0] <= pair[1]));
    }

    #[test]
    fn an_interrupt_kills_the_whole_group() {
        let (dir, script) = script("#!/bin/sh\nsleep 30 &\necho $! > grandchild.pid\nsleep 30\n");
        let flag = AtomicBool::new(false);
        let mut req = request(&dir, &script);
        req.interrupt = Some(&flag);
        let started = Instant::now();
        let ran = run(req, &mut |elapsed| {
            if elapsed >= Duration::from_millis(400) {
                flag.store(true, Ordering::Relaxed);
            }
        })
        .unwrap();
        assert_eq!(ran.exit, Exit::Interrupted);
        assert!(started.elapsed() < Duration::from_secs(10));
        let grandchild = read_pid(&dir.path().join("grandchild.pid"));
        assert!(
            wait_until_dead(grandchild),
            "the background sleep survived the interrupt"
        );
    }
}
