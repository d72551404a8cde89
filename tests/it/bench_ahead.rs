//! The benchmark of proving ahead (BENCHMARKS.md, "Prove ahead"), not a test: one session of
//! the real Claude Code against a scripted fake model that takes its time, on a project whose
//! verify.sh is a Python unittest suite of about 20 s. `bench/run` (`PROVE_IT_BENCH_ONLY=ahead`)
//! runs it once per session, in release, and reads what it writes; run alone, with
//! `PROVE_IT_BENCH_AHEAD_OUT` unset, it does nothing.
//!
//! - `PROVE_IT_BENCH_AHEAD_OUT`: the file the session's figures are appended to, one JSON line.
//! - `PROVE_IT_BENCH_AHEAD`: `on` or `off`, `prove-it.ahead` for the session.
//! - `PROVE_IT_BENCH_AHEAD_TAIL`: `long` (after the last edit, the model reads files and runs the
//!   suite itself, longer than verify.sh plus the settle time) or `short` (it reads one file
//!   and answers, a few seconds).
//! - `PROVE_IT_CLAUDE`: the Claude Code binary, as for the end-to-end tests.
//!
//! What is measured, all from timestamps taken outside the gate: each hook's process, by a
//! `git-prove-it` first on the host's PATH that stamps the real binary's start and end with the
//! event's name; each run of verify.sh, by verify.sh itself (its process group, its nice value,
//! its start and end); the CPU time of each run's process group, by sampling `/proc` every
//! 100 ms (a run killed between two samples loses at most 100 ms of it); the agent's own test
//! run, by the command the model runs.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::claude_e2e::INFO;
use crate::e2e::harness::{host_command, host_path, wired_by_init};
use crate::e2e::{describe, last_answers, run_bounded};
use crate::fake_model::anthropic::Anthropic;
use crate::fake_model::{Api, FakeModel, Reply, Response, Script};
use crate::harness::TestRepo;

/// The model's time before each edit, in seconds: spaced by 2 to 8 s.
const EDIT_DELAYS: &[u64] = &[3, 6, 2, 8, 4];
/// Longer than any session here takes.
const RUN_LIMIT: Duration = Duration::from_secs(400);
/// How often the CPU time of verify.sh's runs is sampled.
const SAMPLE: Duration = Duration::from_millis(100);

/// The agent's own run of the suite, which stamps its start, end and exit in `$HOME/agent-runs`.
const AGENT_TESTS: &str = "s=$(date +%s%N); python3 -m unittest discover -s tests -t . -q; \
    rc=$?; echo \"$s $(date +%s%N) $rc\" >> \"$HOME/agent-runs\"; test $rc = 0";

/// verify.sh: the suite, stamped (process group, nice value, start; then end and exit) in
/// `$HOME/verify-runs`; a run killed has no end.
const VERIFY: &str = "log=\"$HOME/verify-runs\"\n\
    set -- $(sed 's/.*) //' /proc/$$/stat)\n\
    group=$3 nice=${17}\n\
    echo \"begin $group $nice $(date +%s%N)\" >> \"$log\"\n\
    python3 -m unittest discover -s tests -t . -q\n\
    rc=$?\n\
    echo \"end $group $(date +%s%N) $rc\" >> \"$log\"\n\
    exit $rc";

/// The Anthropic API, each agent turn answered after the next of `delays` (the model's time).
struct Thinking {
    delays: Mutex<VecDeque<Duration>>,
}

impl Api for Thinking {
    fn is_agent_turn(&self, method: &str, path: &str, body: &Value) -> bool {
        Anthropic.is_agent_turn(method, path, body)
    }

    fn user_texts(&self, body: &Value) -> Vec<String> {
        Anthropic.user_texts(body)
    }

    fn respond(&self, method: &str, path: &str, body: &Value, reply: Option<&Reply>) -> Response {
        if reply.is_some() {
            let delay = self.delays.lock().unwrap().pop_front();
            if let Some(delay) = delay {
                std::thread::sleep(delay);
            }
        }
        Anthropic.respond(method, path, body, reply)
    }
}

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// The edits, then what the model does after the last one, each turn with its delay.
fn script(long: bool) -> (Vec<u64>, Script) {
    let mut delays = Vec::new();
    let mut turns = Vec::new();
    for (k, delay) in EDIT_DELAYS.iter().enumerate() {
        let k = k + 1;
        let edit = if k < EDIT_DELAYS.len() {
            format!(
                "printf 'def step_{k}(x):\\n    \"\"\"Step {k} of the change.\"\"\"\\n    \
                 return x + {k}\\n\\n\\n' >> calc/extra.py"
            )
        } else {
            // The last edit adds the change's test.
            "printf 'import unittest\\n\\nfrom calc import extra\\n\\n\\nclass TestExtra(\
             unittest.TestCase):\\n    def test_steps(self):\\n        self.assertEqual(\
             extra.step_4(extra.step_1(0)), 5)\\n' > tests/test_extra.py"
                .to_string()
        };
        delays.push(*delay);
        turns.push(Reply::Shell(leak(edit)));
    }
    if long {
        for (delay, command) in [
            (2, "cat calc/core.py calc/extra.py"),
            (2, AGENT_TESTS),
            (2, "cat tests/test_extra.py tests/test_m00.py"),
        ] {
            delays.push(delay);
            turns.push(Reply::Shell(command));
        }
    } else {
        delays.push(3);
        turns.push(Reply::Shell("cat calc/extra.py"));
    }
    delays.push(3);
    (
        delays,
        Script::new(turns, Reply::Text("Done: the steps are in, tests pass.")),
    )
}

/// The project: a small library and 40 test modules of 4 tests each that do real work
/// (a sieve against trial division, a merge sort against `sorted`, ...), about 20 s in all on
/// one core of the benchmark's machine.
fn project() -> Vec<(String, String)> {
    let mut files = vec![
        (
            "calc/__init__.py".to_string(),
            "\"\"\"Numeric and text routines, tested by tests/.\"\"\"\n".to_string(),
        ),
        ("calc/core.py".to_string(), CORE.to_string()),
        (
            "calc/extra.py".to_string(),
            "\"\"\"The change's steps.\"\"\"\n\n\n".to_string(),
        ),
        ("tests/__init__.py".to_string(), String::new()),
        (".gitignore".to_string(), "__pycache__/\n".to_string()),
    ];
    for i in 0..40 {
        files.push((
            format!("tests/test_m{i:02}.py"),
            TEST_MODULE
                .replace("SEED_VALUE", &(i + 1).to_string())
                .replace("NN", &format!("{i:02}")),
        ));
    }
    files
}

const CORE: &str = r#""""The routines under test."""


def sieve(limit):
    """The primes below limit."""
    flags = [True] * limit
    flags[0:2] = [False, False]
    for i in range(2, int(limit ** 0.5) + 1):
        if flags[i]:
            flags[i * i::i] = [False] * len(range(i * i, limit, i))
    return [i for i, prime in enumerate(flags) if prime]


def is_prime(n):
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def merge_sort(items):
    if len(items) <= 1:
        return list(items)
    mid = len(items) // 2
    left, right = merge_sort(items[:mid]), merge_sort(items[mid:])
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def matmul(a, b):
    cols = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a]


def lcg(seed, count):
    """count pseudo-random numbers below 2**31 from seed (deterministic)."""
    out = []
    for _ in range(count):
        seed = (1103515245 * seed + 12345) % 2 ** 31
        out.append(seed)
    return out


def word_counts(text):
    counts = {}
    for word in text.split():
        counts[word] = counts.get(word, 0) + 1
    return counts
"#;

const TEST_MODULE: &str = r#"import unittest

from calc import core

SEED = SEED_VALUE
SIZE = 165000


class TestMNN(unittest.TestCase):
    def test_sieve_agrees_with_trial_division(self):
        limit = SIZE + SEED
        primes = core.sieve(limit)
        self.assertEqual(primes, [n for n in range(limit) if core.is_prime(n)])

    def test_merge_sort_agrees_with_sorted(self):
        items = core.lcg(SEED, SIZE)
        self.assertEqual(core.merge_sort(items), sorted(items))

    def test_matmul_by_identity(self):
        n = 40
        a = [core.lcg(SEED + r, n) for r in range(n)]
        identity = [[int(r == c) for c in range(n)] for r in range(n)]
        self.assertEqual(core.matmul(a, identity), a)

    def test_word_counts_sum_to_the_words(self):
        words = [str(x % 97) for x in core.lcg(SEED, SIZE)]
        counts = core.word_counts(" ".join(words))
        self.assertEqual(sum(counts.values()), len(words))


if __name__ == "__main__":
    unittest.main()
"#;

/// A `git-prove-it` that runs the real one, stamping its process's start and end (ns), its exit
/// and the hook event's name in `log`. The stamps bound the real binary's process alone.
fn timing_wrapper(dir: &Path, real: &Path, log: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let script = format!(
        "#!/bin/sh\n\
         input=\"{log}.in.$$\"\n\
         cat > \"$input\"\n\
         event=$(grep -o '\"hook_event_name\" *: *\"[A-Za-z]*\"' \"$input\" | head -n 1 | \
         sed 's/.*\"\\([A-Za-z]*\\)\"$/\\1/')\n\
         start=$(date +%s%N)\n\
         '{real}' \"$@\" < \"$input\"\n\
         rc=$?\n\
         end=$(date +%s%N)\n\
         echo \"$event $start $end $rc\" >> '{log}'\n\
         rm -f \"$input\"\n\
         exit $rc\n",
        log = log.display(),
        real = real.display(),
    );
    let path = dir.join("git-prove-it");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Every process's CPU time (user + system, clock ticks) whose process group is one of those
/// verify.sh's runs named in `runs`, by process group, sampled until `done`.
fn sample_cpu(runs: PathBuf, done: Arc<AtomicBool>) -> HashMap<i64, u64> {
    // (pid, start time) -> (group, ticks): a pid reused is another process.
    let mut seen: HashMap<(i64, u64), (i64, u64)> = HashMap::new();
    while !done.load(Ordering::SeqCst) {
        let groups: HashSet<i64> = std::fs::read_to_string(&runs)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.strip_prefix("begin "))
            .filter_map(|rest| rest.split(' ').next()?.parse().ok())
            .collect();
        if !groups.is_empty() {
            for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
                let Ok(pid) = entry.file_name().to_string_lossy().parse::<i64>() else {
                    continue;
                };
                let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                    continue;
                };
                let Some((_, rest)) = stat.rsplit_once(") ") else {
                    continue;
                };
                let fields: Vec<&str> = rest.split(' ').collect();
                // After the command: state, ppid, pgrp (3rd), ..., utime (12th), stime (13th),
                // ..., starttime (20th).
                let field = |n: usize| fields.get(n).and_then(|f| f.parse::<u64>().ok());
                let (Some(group), Some(user), Some(system), Some(start)) =
                    (field(2), field(11), field(12), field(19))
                else {
                    continue;
                };
                let group = i64::try_from(group).unwrap();
                if groups.contains(&group) {
                    seen.insert((pid, start), (group, user + system));
                }
            }
        }
        std::thread::sleep(SAMPLE);
    }
    let mut by_group = HashMap::new();
    for (group, ticks) in seen.into_values() {
        *by_group.entry(group).or_insert(0) += ticks;
    }
    by_group
}

/// The lines of `path` split on spaces.
fn lines(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| line.split(' ').map(str::to_owned).collect())
        .collect()
}

#[test]
#[ignore = "the benchmark of proving ahead, run by bench/run with PROVE_IT_BENCH_ONLY=ahead"]
fn one_session() {
    let Some(out_file) = std::env::var_os("PROVE_IT_BENCH_AHEAD_OUT") else {
        eprintln!("PROVE_IT_BENCH_AHEAD_OUT is unset: bench/run runs this benchmark");
        return;
    };
    let ahead = std::env::var("PROVE_IT_BENCH_AHEAD").unwrap_or_else(|_| "on".into());
    let tail = std::env::var("PROVE_IT_BENCH_AHEAD_TAIL").unwrap_or_else(|_| "long".into());
    let claude = INFO.binary();

    let files = project();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    let repo = wired_by_init(&INFO, VERIFY, &files);
    repo.git(&["config", "prove-it.ahead", &ahead]);

    let home = repo.home().to_owned();
    let hooks = home.join("hooks");
    let wrapper = home.join("bench-bin");
    timing_wrapper(
        &wrapper,
        &assert_cmd::cargo::cargo_bin("git-prove-it"),
        &hooks,
    );

    let (delays, script) = script(tail == "long");
    let server = FakeModel::start(
        Thinking {
            delays: Mutex::new(delays.iter().map(|s| Duration::from_secs(*s)).collect()),
        },
        script,
    );

    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (runs, done) = (home.join("verify-runs"), done.clone());
        std::thread::spawn(move || sample_cpu(runs, done))
    };

    let out = run_claude(&claude, &repo, &wrapper, &server);
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    // A last sample of the runs' CPU time.
    std::thread::sleep(SAMPLE * 2);
    done.store(true, Ordering::SeqCst);
    let cpu = sampler.join().unwrap();

    let proven = repo
        .stock_state_tree()
        .ok()
        .is_some_and(|state| repo.note(&state).is_some());
    let record = json!({
        "ahead": ahead,
        "tail": tail,
        "edits": EDIT_DELAYS.len(),
        "hooks": hook_calls(&hooks),
        "verify": verify_runs(&home.join("verify-runs"), &cpu),
        "agent": agent_runs(&home.join("agent-runs")),
        "answers": last_answers(&repo),
        "proven": proven,
        "load": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
    });
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out_file)
        .unwrap();
    writeln!(file, "{record}").unwrap();
}

/// Each hook's call as the timing wrapper stamped it.
fn hook_calls(log: &Path) -> Vec<Value> {
    lines(log)
        .into_iter()
        .filter(|f| f.len() == 4)
        .map(|f| {
            json!({"event": f[0], "start": f[1].parse::<u64>().ok(),
                   "end": f[2].parse::<u64>().ok(), "rc": f[3].parse::<i64>().ok()})
        })
        .collect()
}

/// Each run of verify.sh as it stamped itself (a run killed has no end), with the CPU time its
/// process group was seen to take, in seconds.
fn verify_runs(log: &Path, cpu: &HashMap<i64, u64>) -> Vec<Value> {
    let ticks_per_second = 100.0;
    let stamps = lines(log);
    let ends: HashMap<&str, (u64, i64)> = stamps
        .iter()
        .filter(|f| f.len() == 4 && f[0] == "end")
        .map(|f| {
            let end = (f[2].parse().unwrap_or(0), f[3].parse().unwrap_or(-1));
            (f[1].as_str(), end)
        })
        .collect();
    stamps
        .iter()
        .filter(|f| f.len() == 4 && f[0] == "begin")
        .map(|f| {
            let end = ends.get(f[1].as_str());
            let group: i64 = f[1].parse().unwrap_or(0);
            json!({
                "group": group,
                "nice": f[2].parse::<i64>().ok(),
                "begin": f[3].parse::<u64>().ok(),
                "end": end.map(|e| e.0),
                "rc": end.map(|e| e.1),
                "cpu_s": cpu.get(&group).copied().unwrap_or(0) as f64 / ticks_per_second,
            })
        })
        .collect()
}

/// Each of the agent's own test runs, as its command stamped it.
fn agent_runs(log: &Path) -> Vec<Value> {
    lines(log)
        .into_iter()
        .filter(|f| f.len() == 3)
        .map(|f| {
            json!({"begin": f[0].parse::<u64>().ok(), "end": f[1].parse::<u64>().ok(),
                   "rc": f[2].parse::<i64>().ok()})
        })
        .collect()
}

/// `claude -p` in the repository, with the timing wrapper first on its PATH.
fn run_claude(
    claude: &Path,
    repo: &TestRepo,
    wrapper: &Path,
    server: &FakeModel,
) -> std::process::Output {
    let config = repo.home().join("claude-config");
    std::fs::create_dir_all(&config).unwrap();
    let mut path = vec![wrapper.to_owned()];
    path.extend(std::env::split_paths(&host_path(claude)));
    let mut cmd = host_command(claude, repo);
    cmd.args(["-p", "add the steps", "--allowedTools", "Bash"])
        .args(["--output-format", "stream-json", "--verbose"])
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1");
    run_bounded(cmd, RUN_LIMIT)
}
