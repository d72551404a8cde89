//! The tests a run ran: the JUnit XML files a script wrote into `PROVE_IT_REPORTS`, or, without
//! any, the summary lines of the common test runners in its output; and what a run's tests say
//! against a baseline's (fewer passing, more skipped, a passing test gone or now skipped).
//!
//! Pure: it reads bytes and lines handed to it (the one exception, `read_dir`, reads the run's
//! own report directory), and never touches the repository nor prints.

use std::collections::BTreeMap;
use std::path::Path;

use quick_xml::events::Event;

/// The most report files a run's directory may hold; more is an error, never a silent pass.
pub const MAX_FILES: usize = 256;
/// The largest report file read (bytes); a larger one is an error.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// The most test cases a run's reports may name in all.
pub const MAX_CASES: usize = 1_000_000;

/// Why a run's test reports could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("{file}: not JUnit XML that reads: {reason}")]
    Malformed { file: String, reason: String },
    #[error("{file}: {bytes} bytes, over the cap of {MAX_FILE_BYTES}")]
    TooLarge { file: String, bytes: u64 },
    #[error("more than {MAX_FILES} report files")]
    TooManyFiles,
    #[error("more than {MAX_CASES} test cases")]
    TooManyCases,
    #[error("{file}: {reason}")]
    Unreadable { file: String, reason: String },
}

/// Where a run's counts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// JUnit XML files in `PROVE_IT_REPORTS`: counts and names.
    Junit,
    /// The runners' summary lines in the output: counts only.
    Summary,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Junit => "junit",
            Source::Summary => "summary",
        }
    }

    pub fn parse(text: &str) -> Option<Source> {
        match text {
            "junit" => Some(Source::Junit),
            "summary" => Some(Source::Summary),
            _ => None,
        }
    }
}

/// How one test case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Passed,
    Skipped,
    Failed,
}

/// The counts of a run's tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "passed={} failed={} skipped={}",
            self.passed, self.failed, self.skipped
        )
    }
}

/// What a run's tests were, as a run reads them now: every case by name when reports named
/// them (each named once), else the summed counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tests {
    pub counts: Counts,
    pub source: Source,
    /// Each test case (`classname::name`) and how it ended; empty for `Source::Summary`.
    pub cases: BTreeMap<String, Status>,
}

impl Tests {
    /// The passing names, sorted.
    pub fn passing_names(&self) -> Vec<String> {
        self.cases
            .iter()
            .filter(|(_, status)| **status == Status::Passed)
            .map(|(name, _)| name.clone())
            .collect()
    }
}

/// What a record says of its run's tests (`tests:`, `tests-pass-z:`, `tests-pass:` lines).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recorded {
    /// `None`: the run gave no counts (or the record predates the lines).
    pub counts: Option<(Counts, Source)>,
    /// The passing names kept as plain lines, sorted: records made before names were packed.
    pub passing: Vec<String>,
    /// The passing names kept, packed (`super::test_names`): read only when compared.
    pub packed: Option<String>,
    /// How many names the packed value holds, when the bound cut the rest.
    pub cut: Option<u64>,
    /// Why the reports could not be read, when they could not.
    pub error: Option<String>,
}

impl Recorded {
    /// What a record keeps of `tests`: the counts, and as many passing names as fit packed.
    pub fn of(tests: &Result<Option<Tests>, Error>) -> Recorded {
        match tests {
            Err(error) => Recorded {
                error: Some(error.to_string()),
                ..Recorded::default()
            },
            Ok(None) => Recorded::default(),
            Ok(Some(tests)) => {
                let names = tests.passing_names();
                let packed = (!names.is_empty()).then(|| super::test_names::pack(&names));
                Recorded {
                    counts: Some((tests.counts, tests.source)),
                    passing: Vec::new(),
                    cut: packed
                        .as_ref()
                        .filter(|packed| packed.kept < names.len())
                        .map(|packed| packed.kept as u64),
                    packed: packed.map(|packed| packed.text),
                    error: None,
                }
            }
        }
    }

    /// The passing names kept (sorted), and whether they are all of the run's passing tests.
    /// Packed names that do not read leave only the counts to compare.
    pub fn names(&self) -> (Vec<String>, bool) {
        let mut names = self.passing.clone();
        let mut read = true;
        if let Some(packed) = &self.packed {
            match super::test_names::unpack(packed) {
                Ok(more) => names.extend(more),
                Err(_) => read = false,
            }
        }
        names.sort();
        names.dedup();
        let all = read
            && self.cut.is_none()
            && self.counts.is_some_and(|(counts, source)| {
                source == Source::Junit && names.len() as u64 == counts.passed
            });
        (names, all)
    }
}

/// One way a run's tests fell short of its baseline's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Weakening {
    /// The baseline's run gave counts (or JUnit reports), this one none.
    ReportDisappeared {
        before: Counts,
        source: Source,
    },
    /// This run's reports could not be read.
    Unreadable(String),
    FewerPassing {
        before: u64,
        now: u64,
    },
    MoreSkipped {
        before: u64,
        now: u64,
    },
    /// Passing in the baseline, not named now; with the new names, so that a rename shows as
    /// one gone and one new.
    Vanished {
        gone: Vec<String>,
        new: Vec<String>,
    },
    NewlySkipped(Vec<String>),
    NowFailing(Vec<String>),
}

impl std::fmt::Display for Weakening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Weakening::ReportDisappeared { before, source } => write!(
                f,
                "the test report disappeared (the baseline's run gave {} counts: {before})",
                source.as_str()
            ),
            Weakening::Unreadable(reason) => {
                write!(f, "the test report could not be read: {reason}")
            }
            Weakening::FewerPassing { before, now } => {
                write!(f, "fewer passing tests: {before} before, {now} now")
            }
            Weakening::MoreSkipped { before, now } => {
                write!(f, "more skipped tests: {before} before, {now} now")
            }
            Weakening::Vanished { gone, new } => {
                write!(f, "passing tests gone: {}", gone.join(", "))?;
                if !new.is_empty() {
                    write!(f, " (new: {})", new.join(", "))?;
                }
                Ok(())
            }
            Weakening::NewlySkipped(names) => write!(f, "newly skipped: {}", names.join(", ")),
            Weakening::NowFailing(names) => write!(f, "now failing: {}", names.join(", ")),
        }
    }
}

/// How many names one finding lists.
const NAMES_SHOWN: usize = 50;

fn shown(mut names: Vec<String>) -> Vec<String> {
    let more = names.len().saturating_sub(NAMES_SHOWN);
    names.truncate(NAMES_SHOWN);
    if more > 0 {
        names.push(format!("and {more} more"));
    }
    names
}

/// What `now` (this run's tests) says against `baseline` (the baseline proof's record of its
/// run): empty when nothing fell short. Added tests are never a finding; a test skipped in the
/// baseline and still skipped is not either.
pub fn weakenings(baseline: &Recorded, now: &Result<Option<Tests>, Error>) -> Vec<Weakening> {
    let now = match now {
        Err(error) => return vec![Weakening::Unreadable(error.to_string())],
        Ok(now) => now,
    };
    let Some((before, before_source)) = baseline.counts else {
        return Vec::new();
    };
    let Some(now) = now else {
        return vec![Weakening::ReportDisappeared {
            before,
            source: before_source,
        }];
    };
    let mut found = Vec::new();
    if before_source == Source::Junit && now.source == Source::Summary {
        found.push(Weakening::ReportDisappeared {
            before,
            source: before_source,
        });
    }
    if now.counts.passed < before.passed {
        found.push(Weakening::FewerPassing {
            before: before.passed,
            now: now.counts.passed,
        });
    }
    if now.counts.skipped > before.skipped {
        found.push(Weakening::MoreSkipped {
            before: before.skipped,
            now: now.counts.skipped,
        });
    }
    if before_source == Source::Junit && now.source == Source::Junit {
        let (mut gone, mut skipped, mut failing) = (Vec::new(), Vec::new(), Vec::new());
        // A baseline cut short names only the tests up to its cut: the rest compare by count.
        let (passing, all_names) = baseline.names();
        for name in &passing {
            match now.cases.get(name) {
                None => gone.push(name.clone()),
                Some(Status::Skipped) => skipped.push(name.clone()),
                Some(Status::Failed) => failing.push(name.clone()),
                Some(Status::Passed) => {}
            }
        }
        if !gone.is_empty() {
            // The names new since the baseline, when it kept all of its own: a rename reads
            // as one gone and one new.
            let new = if all_names {
                now.cases
                    .iter()
                    .filter(|(name, status)| {
                        **status == Status::Passed && passing.binary_search(name).is_err()
                    })
                    .map(|(name, _)| name.clone())
                    .collect()
            } else {
                Vec::new()
            };
            found.push(Weakening::Vanished {
                gone: shown(gone),
                new: shown(new),
            });
        }
        if !skipped.is_empty() {
            found.push(Weakening::NewlySkipped(shown(skipped)));
        }
        if !failing.is_empty() {
            found.push(Weakening::NowFailing(shown(failing)));
        }
    }
    found
}

/// Read a run's report directory: every regular file ending in `.xml` (at any depth), in name
/// order. `Ok(None)` when there is none.
pub fn read_dir(dir: &Path) -> Result<Option<Tests>, Error> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    if files.is_empty() {
        return Ok(None);
    }
    files.sort();
    let mut cases = BTreeMap::new();
    for (name, path) in files {
        let bytes = read_bounded(&path, &name)?;
        read_junit(&bytes, &name, &mut cases)?;
    }
    Ok(Some(tests_of(cases)))
}

fn collect(
    root: &Path,
    dir: &Path,
    files: &mut Vec<(String, std::path::PathBuf)>,
) -> Result<(), Error> {
    let unreadable = |source: std::io::Error| Error::Unreadable {
        file: dir.strip_prefix(root).unwrap_or(dir).display().to_string(),
        reason: source.to_string(),
    };
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        let path = entry.path();
        // Links are not followed: the directory is the run's, and what it names is not.
        let kind = entry.file_type().map_err(unreadable)?;
        if kind.is_dir() {
            collect(root, &path, files)?;
        } else if kind.is_file() && path.extension().is_some_and(|ext| ext == "xml") {
            if files.len() >= MAX_FILES {
                return Err(Error::TooManyFiles);
            }
            let name = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string();
            files.push((name, path));
        }
    }
    Ok(())
}

fn read_bounded(path: &Path, name: &str) -> Result<Vec<u8>, Error> {
    use std::io::Read as _;
    let unreadable = |source: std::io::Error| Error::Unreadable {
        file: name.to_string(),
        reason: source.to_string(),
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        let total = std::fs::metadata(path).map_or(bytes.len() as u64, |meta| meta.len());
        return Err(Error::TooLarge {
            file: name.to_string(),
            bytes: total,
        });
    }
    Ok(bytes)
}

/// The counts of `cases`, each counted once.
fn tests_of(cases: BTreeMap<String, Status>) -> Tests {
    let mut counts = Counts::default();
    for status in cases.values() {
        match status {
            Status::Passed => counts.passed += 1,
            Status::Skipped => counts.skipped += 1,
            Status::Failed => counts.failed += 1,
        }
    }
    Tests {
        counts,
        source: Source::Junit,
        cases,
    }
}

/// Read one JUnit XML document's `<testcase>` elements into `cases`: a case with `<failure>`
/// or `<error>` failed, one with `<skipped>` was skipped, any other passed. A name met twice
/// is one test, with the worse of its two ends.
pub fn read_junit(
    bytes: &[u8],
    file: &str,
    cases: &mut BTreeMap<String, Status>,
) -> Result<(), Error> {
    let malformed = |reason: String| Error::Malformed {
        file: file.to_string(),
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|error| malformed(error.to_string()))?;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut current: Option<(String, Status)> = None;
    let mut depth = 0usize;
    let mut saw_root = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|error| malformed(format!("at byte {}: {error}", reader.error_position())))?;
        match event {
            Event::Start(element) => {
                depth += 1;
                saw_root |= is_root(element.local_name().into_inner());
                if element.local_name().into_inner() == "testcase" {
                    current = Some((case_name(&element).map_err(&malformed)?, Status::Passed));
                } else if let Some((_, status)) = current.as_mut()
                    && let Some(end) = mark(*status, element.local_name().into_inner())
                {
                    *status = end;
                }
            }
            Event::Empty(element) => {
                saw_root |= is_root(element.local_name().into_inner());
                if element.local_name().into_inner() == "testcase" {
                    let name = case_name(&element).map_err(&malformed)?;
                    insert(cases, name, Status::Passed)?;
                } else if let Some((_, status)) = current.as_mut()
                    && let Some(end) = mark(*status, element.local_name().into_inner())
                {
                    *status = end;
                }
            }
            Event::End(element) => {
                depth = depth.saturating_sub(1);
                if element.local_name().into_inner() == "testcase"
                    && let Some((name, status)) = current.take()
                {
                    insert(cases, name, status)?;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if depth != 0 || current.is_some() {
        return Err(malformed("the document ends inside an element".to_string()));
    }
    if !saw_root {
        return Err(malformed(
            "no <testsuites> nor <testsuite> element".to_string(),
        ));
    }
    Ok(())
}

fn is_root(name: &str) -> bool {
    name == "testsuites" || name == "testsuite"
}

fn mark(status: Status, child: &str) -> Option<Status> {
    let end = match child {
        "failure" | "error" => Status::Failed,
        "skipped" => Status::Skipped,
        _ => return None,
    };
    Some(status.max(end))
}

fn insert(cases: &mut BTreeMap<String, Status>, name: String, status: Status) -> Result<(), Error> {
    if cases.len() >= MAX_CASES && !cases.contains_key(&name) {
        return Err(Error::TooManyCases);
    }
    let slot = cases.entry(name).or_insert(status);
    *slot = (*slot).max(status);
    Ok(())
}

/// A case's name: `classname::name`, or `name` alone without a class; kept on one line.
fn case_name(element: &quick_xml::events::BytesStart<'_>) -> Result<String, String> {
    let (mut class, mut name) = (String::new(), None);
    for attribute in element.attributes() {
        let attribute = attribute.map_err(|error| error.to_string())?;
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|error| error.to_string())?;
        match attribute.key.local_name().into_inner() {
            "classname" => class = value.into_owned(),
            "name" => name = Some(value.into_owned()),
            _ => {}
        }
    }
    let name = name.ok_or("a <testcase> without a name")?;
    let full = if class.is_empty() {
        name
    } else {
        format!("{class}::{name}")
    };
    Ok(full
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect())
}

/// The counts the summary lines of the common runners in `output` give, summed over every
/// summary; `None` when no line is one.
pub fn summary_counts<'a>(output: impl Iterator<Item = &'a str>) -> Option<Tests> {
    let mut total = Counts::default();
    let mut any = false;
    for line in output {
        let line = strip_ansi(line);
        if let Some(counts) = summary_line(line.trim()) {
            total.add(counts);
            any = true;
        }
    }
    any.then(|| Tests {
        counts: total,
        source: Source::Summary,
        cases: BTreeMap::new(),
    })
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for next in chars.by_ref() {
                if next.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `"3 passed"` as (3, "passed").
fn count_word(part: &str) -> Option<(u64, &str)> {
    let part = part.trim();
    let (number, word) = part.split_once(' ')?;
    Some((number.trim().parse().ok()?, word.trim()))
}

/// Counts from `parts` ("N word" each), naming the words for passed, failed and skipped;
/// `None` when a part is not a count or names a word outside `known`.
fn counts_of<'a>(
    parts: impl Iterator<Item = &'a str>,
    known: &[&str],
    classify: impl Fn(&str) -> Option<Status>,
) -> Option<Counts> {
    let mut counts = Counts::default();
    let mut any = false;
    for part in parts {
        let (n, word) = count_word(part)?;
        if !known.contains(&word) {
            return None;
        }
        any = true;
        match classify(word) {
            Some(Status::Passed) => counts.passed += n,
            Some(Status::Failed) => counts.failed += n,
            Some(Status::Skipped) => counts.skipped += n,
            None => {}
        }
    }
    any.then_some(counts)
}

fn summary_line(line: &str) -> Option<Counts> {
    cargo_test(line)
        .or_else(|| nextest(line))
        .or_else(|| pytest(line))
        .or_else(|| go_test(line))
        .or_else(|| jest(line))
        .or_else(|| vitest(line))
        .or_else(|| node_tap(line))
        .or_else(|| mocha(line))
        .or_else(|| rspec(line))
        .or_else(|| phpunit(line))
}

/// `test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s`
fn cargo_test(line: &str) -> Option<Counts> {
    let rest = line.strip_prefix("test result: ")?;
    let (_, rest) = rest.split_once(". ")?;
    let parts = rest
        .split(';')
        .filter(|part| !part.trim().starts_with("finished"));
    counts_of(
        parts,
        &["passed", "failed", "ignored", "measured", "filtered out"],
        |word| match word {
            "passed" => Some(Status::Passed),
            "failed" => Some(Status::Failed),
            "ignored" => Some(Status::Skipped),
            _ => None,
        },
    )
}

/// `Summary [   0.010s] 5 tests run: 4 passed, 1 failed, 2 skipped`
fn nextest(line: &str) -> Option<Counts> {
    let rest = line.strip_prefix("Summary [")?;
    let (_, rest) = rest.split_once(" run: ")?;
    counts_of(
        rest.split(',').map(|part| {
            // "1 failed" may be followed by "(1 due to being leaky)".
            part.split_once(" (").map_or(part, |(head, _)| head)
        }),
        &[
            "passed",
            "failed",
            "skipped",
            "flaky",
            "leaky",
            "timed out",
            "exec failed",
        ],
        |word| match word {
            "passed" => Some(Status::Passed),
            "failed" | "timed out" | "exec failed" => Some(Status::Failed),
            "skipped" => Some(Status::Skipped),
            _ => None,
        },
    )
}

/// `===== 1 failed, 5 passed, 1 skipped, 2 warnings in 0.12s =====`
fn pytest(line: &str) -> Option<Counts> {
    let line = line.trim_matches(|c| c == '=' || c == ' ');
    let (body, time) = line.rsplit_once(" in ")?;
    let time = time.split_whitespace().next()?;
    if !time.ends_with('s') || time.trim_end_matches('s').parse::<f64>().is_err() {
        return None;
    }
    counts_of(
        body.split(','),
        &[
            "passed",
            "failed",
            "skipped",
            "error",
            "errors",
            "xfailed",
            "xpassed",
            "deselected",
            "warning",
            "warnings",
            "rerun",
        ],
        |word| match word {
            "passed" | "xpassed" => Some(Status::Passed),
            "failed" | "error" | "errors" => Some(Status::Failed),
            "skipped" | "xfailed" => Some(Status::Skipped),
            _ => None,
        },
    )
}

/// `--- PASS: TestX (0.00s)`, `--- FAIL: ...`, `--- SKIP: ...` (`go test -v`), one test each.
fn go_test(line: &str) -> Option<Counts> {
    let rest = line.strip_prefix("--- ")?;
    let mut counts = Counts::default();
    if rest.starts_with("PASS: ") {
        counts.passed = 1;
    } else if rest.starts_with("FAIL: ") {
        counts.failed = 1;
    } else if rest.starts_with("SKIP: ") {
        counts.skipped = 1;
    } else {
        return None;
    }
    Some(counts)
}

/// `Tests:       1 failed, 1 skipped, 5 passed, 7 total` (jest)
fn jest(line: &str) -> Option<Counts> {
    let rest = line.strip_prefix("Tests:")?;
    counts_of(
        rest.split(','),
        &["passed", "failed", "skipped", "todo", "total"],
        |word| match word {
            "passed" => Some(Status::Passed),
            "failed" => Some(Status::Failed),
            "skipped" | "todo" => Some(Status::Skipped),
            _ => None,
        },
    )
}

/// `Tests  1 failed | 5 passed | 1 skipped (7)` (vitest)
fn vitest(line: &str) -> Option<Counts> {
    let rest = line.strip_prefix("Tests ")?;
    let rest = rest.rsplit_once(" (").map_or(rest, |(head, _)| head);
    counts_of(
        rest.split('|'),
        &["passed", "failed", "skipped", "todo"],
        |word| match word {
            "passed" => Some(Status::Passed),
            "failed" => Some(Status::Failed),
            "skipped" | "todo" => Some(Status::Skipped),
            _ => None,
        },
    )
}

/// `# pass 5`, `# fail 0`, `# skip 1` (TAP, `node --test`), or `ℹ pass 5` (node's spec reporter).
fn node_tap(line: &str) -> Option<Counts> {
    let rest = line
        .strip_prefix("# ")
        .or_else(|| line.strip_prefix("ℹ "))?;
    let (word, number) = rest.split_once(' ')?;
    let n: u64 = number.trim().parse().ok()?;
    let mut counts = Counts::default();
    match word {
        "pass" => counts.passed = n,
        "fail" => counts.failed = n,
        "skip" | "skipped" | "todo" => counts.skipped = n,
        _ => return None,
    }
    Some(counts)
}

/// `5 passing (10ms)`, `2 failing`, `1 pending` (mocha)
fn mocha(line: &str) -> Option<Counts> {
    let line = line.split_once(" (").map_or(line, |(head, _)| head);
    let (n, word) = count_word(line)?;
    let mut counts = Counts::default();
    match word {
        "passing" => counts.passed = n,
        "failing" => counts.failed = n,
        "pending" => counts.skipped = n,
        _ => return None,
    }
    Some(counts)
}

/// `6 examples, 1 failure, 1 pending` (RSpec): passed is what is left.
fn rspec(line: &str) -> Option<Counts> {
    let mut parts = line.split(',');
    let (examples, word) = count_word(parts.next()?)?;
    if word != "examples" && word != "example" {
        return None;
    }
    let mut counts = Counts::default();
    for part in parts {
        let part = part.split_once(" (").map_or(part, |(head, _)| head);
        let (n, word) = count_word(part)?;
        match word {
            "failure" | "failures" => counts.failed += n,
            "pending" => counts.skipped += n,
            "error" | "errors" | "errors occurred outside of examples" => counts.failed += n,
            _ => return None,
        }
    }
    counts.passed = examples.saturating_sub(counts.failed + counts.skipped);
    Some(counts)
}

/// `OK (5 tests, 9 assertions)`, or `Tests: 6, Assertions: 9, Failures: 1, Skipped: 1.`
/// (PHPUnit).
fn phpunit(line: &str) -> Option<Counts> {
    if let Some(rest) = line.strip_prefix("OK (") {
        let (n, word) = count_word(rest.split(',').next()?)?;
        return (word == "tests" || word == "test").then_some(Counts {
            passed: n,
            ..Counts::default()
        });
    }
    if !line.starts_with("Tests: ") || !line.contains("Assertions: ") {
        return None;
    }
    let rest = line;
    let mut total = 0;
    let mut counts = Counts::default();
    for part in rest.trim_end_matches('.').split(',') {
        let (word, n) = part.trim().split_once(": ")?;
        let n: u64 = n.trim().parse().ok()?;
        match word {
            "Tests" => total = n,
            "Failures" | "Errors" => counts.failed += n,
            "Skipped" | "Incomplete" => counts.skipped += n,
            _ => {}
        }
    }
    counts.passed = total.saturating_sub(counts.failed + counts.skipped);
    Some(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(passed: u64, failed: u64, skipped: u64) -> Counts {
        Counts {
            passed,
            failed,
            skipped,
        }
    }

    /// Each runner's summary line, as it prints it, gives its counts; lines that only look
    /// like one give none.
    #[test]
    fn summary_lines_of_the_common_runners() {
        let table: &[(&str, Option<Counts>)] = &[
            (
                "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s",
                Some(counts(3, 0, 1)),
            ),
            (
                "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s",
                Some(counts(2, 1, 0)),
            ),
            (
                "     Summary [   0.010s] 5 tests run: 4 passed, 1 failed, 2 skipped",
                Some(counts(4, 1, 2)),
            ),
            (
                "     Summary [   0.004s] 3 tests run: 3 passed, 0 skipped",
                Some(counts(3, 0, 0)),
            ),
            (
                "========================= 5 passed, 1 skipped in 0.12s =========================",
                Some(counts(5, 0, 1)),
            ),
            (
                "1 failed, 4 passed, 1 skipped, 2 warnings in 0.10s",
                Some(counts(4, 1, 1)),
            ),
            ("5 passed in 0.01s", Some(counts(5, 0, 0))),
            ("--- SKIP: TestSlow (0.00s)", Some(counts(0, 0, 1))),
            ("    --- PASS: TestX/sub (0.00s)", Some(counts(1, 0, 0))),
            (
                "Tests:       1 skipped, 5 passed, 6 total",
                Some(counts(5, 0, 1)),
            ),
            (
                "      Tests  5 passed | 1 skipped (6)",
                Some(counts(5, 0, 1)),
            ),
            ("# pass 5", Some(counts(5, 0, 0))),
            ("# skip 1", Some(counts(0, 0, 1))),
            ("ℹ pass 4", Some(counts(4, 0, 0))),
            ("  5 passing (10ms)", Some(counts(5, 0, 0))),
            ("  1 pending", Some(counts(0, 0, 1))),
            ("6 examples, 0 failures, 1 pending", Some(counts(5, 0, 1))),
            ("OK (5 tests, 9 assertions)", Some(counts(5, 0, 0))),
            (
                "Tests: 6, Assertions: 9, Failures: 1, Skipped: 1.",
                Some(counts(4, 1, 1)),
            ),
            ("all 5 passed in the end", None),
            ("# tests 6", None),
            ("Compiling foo v0.1.0", None),
            ("ok  \texample.com/pkg\t0.01s", None),
        ];
        for (line, want) in table {
            let got = summary_counts(std::iter::once(*line)).map(|tests| tests.counts);
            assert_eq!(got, *want, "{line:?}");
        }
    }

    /// `cargo test` prints one summary per test binary: the run's counts are their sum.
    #[test]
    fn several_summaries_in_one_output_are_summed() {
        let output = "running 2 tests\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\u{1b}[32mtest result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\u{1b}[0m\n";
        let tests = summary_counts(output.lines()).unwrap();
        assert_eq!(tests.counts, counts(3, 0, 1));
        assert_eq!(tests.source, Source::Summary);
    }

    fn junit(xml: &str) -> Result<Tests, Error> {
        let mut cases = BTreeMap::new();
        read_junit(xml.as_bytes(), "report.xml", &mut cases)?;
        Ok(tests_of(cases))
    }

    const PYTEST: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4"><testcase classname="test_a" name="test_one" time="0.001" /><testcase classname="test_a" name="test_two" time="0.001"><skipped type="pytest.skip" message="later">skip</skipped></testcase><testcase classname="test_a" name="test_three"><failure message="assert 1 == 2">x</failure></testcase><testcase classname="test_a" name="test_&amp;four"></testcase></testsuite></testsuites>"#;

    /// Passing, skipped and failing cases are told apart by their children, and named by
    /// class and name.
    #[test]
    fn a_junit_report_gives_counts_and_names() {
        let tests = junit(PYTEST).unwrap();
        assert_eq!(tests.counts, counts(2, 1, 1));
        assert_eq!(
            tests.passing_names(),
            ["test_a::test_&four", "test_a::test_one"]
        );
    }

    /// A report that names the same test twice must not count it twice: a forged duplicate
    /// would hide a deleted test behind an unchanged count.
    #[test]
    fn a_report_naming_a_test_twice_counts_it_once() {
        let xml = r#"<testsuite><testcase classname="c" name="t"/><testcase classname="c" name="t"/><testcase classname="c" name="u"><skipped/></testcase><testcase classname="c" name="u"/></testsuite>"#;
        let tests = junit(xml).unwrap();
        assert_eq!(tests.counts, counts(1, 0, 1));
    }

    /// Malformed XML is an error naming the file, never a pass nor a panic.
    #[test]
    fn malformed_xml_is_a_clear_error() {
        for xml in [
            "<testsuite><testcase name=\"a\">",
            "<testsuite><testcase name=\"a\"></testsuite>",
            "not xml at all",
            "<html></html>",
            "<testsuite><testcase classname=\"x\"/></testsuite>",
        ] {
            let error = junit(xml).unwrap_err();
            assert!(
                error.to_string().starts_with("report.xml: "),
                "{xml:?}: {error}"
            );
        }
        assert!(junit("<testsuites/>").unwrap().counts == Counts::default());
    }

    fn recorded(xml: &str) -> Recorded {
        Recorded::of(&Ok(Some(junit(xml).unwrap())))
    }

    fn now(xml: &str) -> Result<Option<Tests>, Error> {
        Ok(Some(junit(xml).unwrap()))
    }

    /// The findings against a baseline: each trap is one, and honest work is none.
    #[test]
    fn weakenings_against_a_baseline() {
        let base = r#"<testsuite><testcase classname="c" name="a"/><testcase classname="c" name="b"/><testcase classname="c" name="s"><skipped/></testcase></testsuite>"#;
        let baseline = recorded(base);
        // Honest: the same, and one added.
        assert_eq!(weakenings(&baseline, &now(base)), []);
        let added = r#"<testsuite><testcase classname="c" name="a"/><testcase classname="c" name="b"/><testcase classname="c" name="n"/><testcase classname="c" name="s"><skipped/></testcase></testsuite>"#;
        assert_eq!(weakenings(&baseline, &now(added)), []);
        // Deleted.
        let deleted = r#"<testsuite><testcase classname="c" name="a"/><testcase classname="c" name="s"><skipped/></testcase></testsuite>"#;
        assert_eq!(
            weakenings(&baseline, &now(deleted)),
            [
                Weakening::FewerPassing { before: 2, now: 1 },
                Weakening::Vanished {
                    gone: vec!["c::b".into()],
                    new: vec![]
                }
            ]
        );
        // Newly skipped.
        let skipped = r#"<testsuite><testcase classname="c" name="a"/><testcase classname="c" name="b"><skipped/></testcase><testcase classname="c" name="s"><skipped/></testcase></testsuite>"#;
        assert_eq!(
            weakenings(&baseline, &now(skipped)),
            [
                Weakening::FewerPassing { before: 2, now: 1 },
                Weakening::MoreSkipped { before: 1, now: 2 },
                Weakening::NewlySkipped(vec!["c::b".into()])
            ]
        );
        // Renamed: one gone, one new, the counts unchanged.
        let renamed = r#"<testsuite><testcase classname="c" name="a"/><testcase classname="c" name="b2"/><testcase classname="c" name="s"><skipped/></testcase></testsuite>"#;
        assert_eq!(
            weakenings(&baseline, &now(renamed)),
            [Weakening::Vanished {
                gone: vec!["c::b".into()],
                new: vec!["c::b2".into()]
            }]
        );
        // The report disappeared: none now, or only a summary where JUnit was.
        assert_eq!(
            weakenings(&baseline, &Ok(None)),
            [Weakening::ReportDisappeared {
                before: counts(2, 0, 1),
                source: Source::Junit
            }]
        );
        let summary = summary_counts(std::iter::once("2 passed, 1 skipped in 0.1s"));
        assert!(matches!(
            weakenings(&baseline, &Ok(summary)).as_slice(),
            [Weakening::ReportDisappeared { .. }]
        ));
        // Unreadable now is a finding whatever the baseline.
        assert!(matches!(
            weakenings(&Recorded::default(), &Err(Error::TooManyFiles)).as_slice(),
            [Weakening::Unreadable(_)]
        ));
        // No baseline counts: nothing to compare.
        assert_eq!(weakenings(&Recorded::default(), &Ok(None)), []);
    }

    /// Counts from summary lines compare by count alone.
    #[test]
    fn summary_counts_compare_by_count() {
        let base = summary_counts(std::iter::once("5 passed, 1 skipped in 0.1s"));
        let baseline = Recorded::of(&Ok(base));
        let same = summary_counts(std::iter::once("5 passed, 1 skipped in 0.3s"));
        assert_eq!(weakenings(&baseline, &Ok(same)), []);
        let fewer = summary_counts(std::iter::once("4 passed, 2 skipped in 0.3s"));
        assert_eq!(
            weakenings(&baseline, &Ok(fewer)),
            [
                Weakening::FewerPassing { before: 5, now: 4 },
                Weakening::MoreSkipped { before: 1, now: 2 }
            ]
        );
    }

    /// A baseline cut short by the bound never reports the names past its cut as gone, nor
    /// anything as new; the counts still compare.
    #[test]
    fn a_baseline_cut_short_names_only_what_it_kept() {
        let case = |i: usize| format!("tests/test_{:04}.py::TestSuite::test_case_{i}", i / 50);
        let mut cases = BTreeMap::new();
        for i in 0..200_000 {
            cases.insert(case(i), Status::Passed);
        }
        let baseline = Recorded::of(&Ok(Some(tests_of(cases.clone()))));
        let kept = usize::try_from(baseline.cut.expect("200,000 names do not fit")).unwrap();
        assert!(kept > 10_000, "{kept}");
        let (names, all) = baseline.names();
        assert_eq!((names.len(), all), (kept, false));
        // One name gone before the cut, one past it: only the first is named.
        let mut sorted: Vec<String> = cases.keys().cloned().collect();
        sorted.sort();
        cases.remove(&sorted[kept / 2]);
        cases.remove(&sorted[kept + 10]);
        cases.insert("tests/zz.py::test_new".into(), Status::Passed);
        assert_eq!(
            weakenings(&baseline, &Ok(Some(tests_of(cases)))),
            [
                Weakening::FewerPassing {
                    before: 200_000,
                    now: 199_999
                },
                Weakening::Vanished {
                    gone: vec![sorted[kept / 2].clone()],
                    new: vec![]
                }
            ]
        );
    }
}
