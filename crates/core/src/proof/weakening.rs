//! Weakening of protected paths (SPEC.md section 2.2): how each protected file changed since a
//! baseline, classified as added (new, or lines only added: never reported), changed (shown,
//! never refused) or weakened (deleted, a test gone or newly skipped, a count that fell).
//! Test names and skip markers come from light per-language rules over the text. Pure: it
//! turns texts into findings and findings into record lines, and never touches the repository.

use std::collections::BTreeMap;

/// One way a protected file was weakened. Each is one `weakened:` line of a record; the list
/// is open, so that findings of other sources (a test report, say) can join it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Finding {
    /// A protected file is gone from the protected set (deleted, or moved out of it).
    Deleted { path: String },
    /// A test the file held is gone (by name): deleted or renamed.
    TestGone { path: String, test: String },
    /// A test the file held runs no more: skipped, ignored, expected to fail, a todo.
    TestSkipped { path: String, test: String },
    /// A count fell: `what` is `tests` or `assertions`.
    Fewer {
        path: String,
        what: String,
        before: usize,
        after: usize,
    },
    /// A `weakened:` line of a shape this build does not know, kept as written: it still
    /// says the proof was made through a weakening.
    Other(String),
}

const DELETED: &str = "deleted";
const TEST_GONE: &str = "test-gone";
const TEST_SKIPPED: &str = "test-skipped";
const FEWER: &str = "fewer-";
/// Between a file's path and a test's name in a record line.
const TEST_SEPARATOR: &str = "::";

impl Finding {
    /// The value of its `weakened:` line.
    pub fn to_line(&self) -> String {
        let line = match self {
            Finding::Deleted { path } => format!("{DELETED} {path}"),
            Finding::TestGone { path, test } => format!("{TEST_GONE} {path}{TEST_SEPARATOR}{test}"),
            Finding::TestSkipped { path, test } => {
                format!("{TEST_SKIPPED} {path}{TEST_SEPARATOR}{test}")
            }
            Finding::Fewer {
                path,
                what,
                before,
                after,
            } => format!("{FEWER}{what} {before} {after} {path}"),
            Finding::Other(line) => line.clone(),
        };
        line.replace(['\n', '\r'], " ")
    }

    /// A `weakened:` line's value read back.
    pub fn from_line(line: &str) -> Finding {
        Self::known(line).unwrap_or_else(|| Finding::Other(line.to_string()))
    }

    fn known(line: &str) -> Option<Finding> {
        let (kind, rest) = line.split_once(' ')?;
        let test = |rest: &str| {
            rest.split_once(TEST_SEPARATOR)
                .map(|(path, test)| (path.to_string(), test.to_string()))
        };
        match kind {
            DELETED => Some(Finding::Deleted {
                path: rest.to_string(),
            }),
            TEST_GONE => test(rest).map(|(path, test)| Finding::TestGone { path, test }),
            TEST_SKIPPED => test(rest).map(|(path, test)| Finding::TestSkipped { path, test }),
            _ => {
                let what = kind.strip_prefix(FEWER)?;
                let mut parts = rest.splitn(3, ' ');
                let before = parts.next()?.parse().ok()?;
                let after = parts.next()?.parse().ok()?;
                Some(Finding::Fewer {
                    path: parts.next()?.to_string(),
                    what: what.to_string(),
                    before,
                    after,
                })
            }
        }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Deleted { path } => {
                write!(f, "{path}: deleted or moved out of the protected paths")
            }
            Finding::TestGone { path, test } => write!(f, "{path}: test {test} is gone"),
            Finding::TestSkipped { path, test } => write!(f, "{path}: test {test} is now skipped"),
            Finding::Fewer {
                path,
                what,
                before,
                after,
            } => write!(f, "{path}: {what} fell from {before} to {after}"),
            Finding::Other(line) => write!(f, "{line}"),
        }
    }
}

/// How the protected paths changed since a baseline: what a stop says, and a record keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protection {
    /// Sorted; empty when nothing was weakened.
    pub weakened: Vec<Finding>,
    /// The protected files edited without weakening, sorted: shown, never refused.
    pub changed: Vec<String>,
    /// The unified diff of the weakened and changed files.
    pub diff: Option<String>,
}

/// A test as a file declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Test {
    pub name: String,
    pub skipped: bool,
}

/// What the rules read of one file: its tests, and how many assertions it makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tests {
    pub tests: Vec<Test>,
    pub assertions: usize,
}

/// The language of `path`, by its extension, as far as the rules know one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Python,
    Rust,
    Script,
    Go,
}

fn language(path: &str) -> Option<Language> {
    let ext = path.rsplit_once('.')?.1;
    Some(match ext {
        "py" => Language::Python,
        "rs" => Language::Rust,
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Language::Script,
        "go" => Language::Go,
        _ => return None,
    })
}

/// The tests and assertions of `text`, the file at `path`.
pub fn tests_of(path: &str, text: &str) -> Tests {
    match language(path) {
        Some(Language::Python) => python(text),
        Some(Language::Rust) => rust(text),
        Some(Language::Script) => script(text),
        Some(Language::Go) => go(text),
        None => Tests::default(),
    }
}

fn count(text: &str, needles: &[&str]) -> usize {
    needles
        .iter()
        .map(|needle| text.matches(needle).count())
        .sum()
}

/// The identifier at the start of `text`.
fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// `def test_*` and `class Test*`, with the decorators and the `pytest.skip(` calls that skip
/// them; a method is named `Class.test_x`.
fn python(text: &str) -> Tests {
    const SKIPS: &[&str] = &[
        "@pytest.mark.skip",
        "@pytest.mark.xfail",
        "@unittest.skip",
        "@unittest.expectedFailure",
        "@skip",
    ];
    let mut tests: Vec<Test> = Vec::new();
    let mut decorated_skip = false;
    let mut class: Option<(String, usize)> = None;
    // The test whose body the next lines are, and its indentation.
    let mut body: Option<(usize, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let at = indent(line);
        if body.is_some_and(|(_, def)| at <= def) {
            body = None;
        }
        if class.as_ref().is_some_and(|(_, level)| at <= *level)
            && !trimmed.starts_with('@')
            && !trimmed.starts_with("class ")
        {
            class = None;
        }
        if trimmed.starts_with('@') {
            decorated_skip |= SKIPS.iter().any(|skip| trimmed.starts_with(skip));
            continue;
        }
        let def = trimmed
            .strip_prefix("async def ")
            .or_else(|| trimmed.strip_prefix("def "));
        if let Some(name) = trimmed.strip_prefix("class ").map(ident) {
            if name.starts_with("Test") {
                tests.push(Test {
                    name: name.to_string(),
                    skipped: decorated_skip,
                });
            }
            class = Some((name.to_string(), at));
        } else if let Some(name) = def.map(ident)
            && name.starts_with("test")
        {
            let inherited = class.as_ref().is_some_and(|(class, _)| {
                tests.iter().any(|test| test.name == *class && test.skipped)
            });
            let name = match &class {
                Some((class, _)) => format!("{class}.{name}"),
                None => name.to_string(),
            };
            tests.push(Test {
                name,
                skipped: decorated_skip || inherited,
            });
            body = Some((tests.len() - 1, at));
        } else if let Some((test, _)) = body
            && (trimmed.starts_with("pytest.skip(")
                || trimmed.starts_with("self.skipTest(")
                || trimmed.starts_with("raise unittest.SkipTest")
                || trimmed.starts_with("pytest.xfail("))
        {
            tests[test].skipped = true;
        }
        decorated_skip = false;
    }
    Tests {
        tests,
        assertions: count(text, &["assert", "pytest.raises("]),
    }
}

/// `#[test]` functions (any attribute naming `test`: `#[tokio::test]`, `#[rstest]`), and
/// `#[ignore]` among their attributes.
fn rust(text: &str) -> Tests {
    let mut tests = Vec::new();
    let (mut is_test, mut ignored) = (false, false);
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(attribute) = trimmed.strip_prefix("#[") {
            let attribute = attribute.trim_end().trim_end_matches(']');
            let name = attribute.split(['(', ' ', '=']).next().unwrap_or("");
            if name == "test" || name.ends_with("::test") || name == "rstest" {
                is_test = true;
            }
            if name == "ignore" {
                ignored = true;
            }
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with("//") {
            continue;
        }
        if is_test {
            let after = trimmed
                .trim_start_matches("pub ")
                .trim_start_matches("pub ")
                .trim_start_matches("async ")
                .trim_start_matches("unsafe ");
            if let Some(rest) = after.strip_prefix("fn ") {
                tests.push(Test {
                    name: ident(rest).to_string(),
                    skipped: ignored,
                });
            }
        }
        is_test = false;
        ignored = false;
    }
    Tests {
        tests,
        assertions: count(
            text,
            &["assert!", "assert_eq!", "assert_ne!", "assert_matches!"],
        ),
    }
}

/// `it(`, `test(` and `describe(` titles, with `.skip`, `.todo`, `xit`, `xtest`, `xdescribe`
/// marking them skipped; a title is named as written.
fn script(text: &str) -> Tests {
    const CALLS: &[(&str, bool)] = &[
        ("it.skip(", true),
        ("it.todo(", true),
        ("test.skip(", true),
        ("test.todo(", true),
        ("describe.skip(", true),
        ("describe.todo(", true),
        ("xit(", true),
        ("xtest(", true),
        ("xdescribe(", true),
        ("it.only(", false),
        ("test.only(", false),
        ("describe.only(", false),
        ("it(", false),
        ("test(", false),
        ("describe(", false),
    ];
    let mut tests = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let boundary = at == 0
            || !(bytes[at - 1].is_ascii_alphanumeric()
                || bytes[at - 1] == b'_'
                || bytes[at - 1] == b'.');
        let found = boundary
            .then(|| CALLS.iter().find(|(call, _)| rest.starts_with(call)))
            .flatten();
        let Some((call, skipped)) = found else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let args = rest[call.len()..].trim_start();
        if let Some(quote) = args
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"' | '`'))
            && let Some(end) = args[1..].find(quote)
        {
            tests.push(Test {
                name: args[1..=end].to_string(),
                skipped: *skipped,
            });
        }
        at += call.len();
    }
    Tests {
        tests,
        assertions: count(
            text,
            &["expect(", "assert.", "assert(", "expect.assertions("],
        ),
    }
}

/// `func TestX(`, with `t.Skip` in its body marking it skipped.
fn go(text: &str) -> Tests {
    let mut tests: Vec<Test> = Vec::new();
    let mut current: Option<usize> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("func ") {
            current = None;
            let name = ident(rest);
            if name.starts_with("Test") && rest[name.len()..].starts_with('(') {
                tests.push(Test {
                    name: name.to_string(),
                    skipped: false,
                });
                current = Some(tests.len() - 1);
            }
        } else if let Some(test) = current
            && line.trim_start().starts_with("t.Skip")
        {
            tests[test].skipped = true;
        }
    }
    Tests {
        tests,
        assertions: count(
            text,
            &["t.Error", "t.Fatal", "assert.", "require.", "t.Fail"],
        ),
    }
}

/// How one protected file at `path` changed from `before` to `after` (both present): its
/// findings when weakened; else whether it changed (an existing line edited or removed) or
/// only grew.
pub fn classify(path: &str, before: &str, after: &str) -> Result<bool, Vec<Finding>> {
    let (old, new) = (tests_of(path, before), tests_of(path, after));
    let mut findings = Vec::new();
    let by_name = |tests: &[Test]| {
        let mut names: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for test in tests {
            let entry = names.entry(test.name.clone()).or_default();
            entry.0 += 1;
            entry.1 += usize::from(!test.skipped);
        }
        names
    };
    let (old_names, new_names) = (by_name(&old.tests), by_name(&new.tests));
    for (name, (count, running)) in &old_names {
        let (now, running_now) = new_names.get(name).copied().unwrap_or_default();
        if now < *count {
            findings.push(Finding::TestGone {
                path: path.to_string(),
                test: name.clone(),
            });
        } else if running_now < *running {
            findings.push(Finding::TestSkipped {
                path: path.to_string(),
                test: name.clone(),
            });
        }
    }
    let fewer = |what: &str, before: usize, after: usize| Finding::Fewer {
        path: path.to_string(),
        what: what.to_string(),
        before,
        after,
    };
    // A test renamed is one gone and one new: the count of tests does not fall, and the
    // gone one is named above.
    if new.tests.len() < old.tests.len() && findings.is_empty() {
        findings.push(fewer("tests", old.tests.len(), new.tests.len()));
    }
    if new.assertions < old.assertions {
        findings.push(fewer("assertions", old.assertions, new.assertions));
    }
    if !findings.is_empty() {
        return Err(findings);
    }
    Ok(!only_added(before, after))
}

/// Whether `after` holds every line of `before`, in order: lines were only added.
fn only_added(before: &str, after: &str) -> bool {
    let mut after = after.lines();
    before
        .lines()
        .all(|line| after.by_ref().any(|other| other == line))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(path: &str, text: &str) -> Vec<(String, bool)> {
        tests_of(path, text)
            .tests
            .into_iter()
            .map(|test| (test.name, test.skipped))
            .collect()
    }

    /// A file's path, its text, and the tests it declares with whether each is skipped.
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, bool)]);

    #[test]
    fn each_language_names_its_tests_and_skips() {
        let cases: &[Case<'_>] = &[
            (
                "t/test_a.py",
                "import pytest\n\ndef test_one():\n    assert 1\n\n@pytest.mark.skip(reason='x')\ndef test_two():\n    pass\n\ndef test_three():\n    pytest.skip('later')\n\ndef helper():\n    pass\n",
                &[
                    ("test_one", false),
                    ("test_two", true),
                    ("test_three", true),
                ],
            ),
            (
                "t/test_b.py",
                "import unittest\n\nclass TestThing(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(1, 1)\n\n    @unittest.skip('no')\n    def test_b(self):\n        pass\n\ndef test_free():\n    pass\n",
                &[
                    ("TestThing", false),
                    ("TestThing.test_a", false),
                    ("TestThing.test_b", true),
                    ("test_free", false),
                ],
            ),
            (
                "tests/it.rs",
                "#[test]\nfn one() { assert!(true); }\n\n#[test]\n#[ignore = \"slow\"]\nfn two() {}\n\n#[tokio::test]\nasync fn three() {}\n\nfn helper() {}\n",
                &[("one", false), ("two", true), ("three", false)],
            ),
            (
                "a.test.ts",
                "describe('math', () => {\n  it('adds', () => { expect(1).toBe(1) })\n  it.skip(\"subtracts\", () => {})\n  xit(`multiplies`, () => {})\n  test.todo('divides')\n})\n",
                &[
                    ("math", false),
                    ("adds", false),
                    ("subtracts", true),
                    ("multiplies", true),
                    ("divides", true),
                ],
            ),
            (
                "a_test.go",
                "func TestA(t *testing.T) {\n\tif x { t.Error(1) }\n}\n\nfunc TestB(t *testing.T) {\n\tt.Skip(\"later\")\n}\n\nfunc helper() {}\n",
                &[("TestA", false), ("TestB", true)],
            ),
            ("README.md", "def test_x():\n", &[]),
        ];
        for (path, text, want) in cases {
            let want: Vec<(String, bool)> =
                want.iter().map(|(n, s)| ((*n).to_string(), *s)).collect();
            assert_eq!(names(path, text), want, "{path}");
        }
    }

    #[test]
    fn changes_are_added_changed_or_weakened() {
        let base = "def test_a():\n    assert f() == 1\n\ndef test_b():\n    assert g()\n";
        let gone = |test: &str| Finding::TestGone {
            path: "t.py".into(),
            test: test.into(),
        };
        type Classified = Result<bool, Vec<Finding>>;
        let cases: &[(&str, &str, Classified)] = &[
            ("same", base, Ok(false)),
            (
                "a new test only adds lines",
                "def test_a():\n    assert f() == 1\n\ndef test_b():\n    assert g()\n\ndef test_c():\n    assert h()\n",
                Ok(false),
            ),
            (
                "an expected value fixed",
                "def test_a():\n    assert f() == 2\n\ndef test_b():\n    assert g()\n",
                Ok(true),
            ),
            (
                "a test deleted",
                "def test_a():\n    assert f() == 1\n",
                Err(vec![
                    gone("test_b"),
                    Finding::Fewer {
                        path: "t.py".into(),
                        what: "assertions".into(),
                        before: 2,
                        after: 1,
                    },
                ]),
            ),
            (
                "a test renamed",
                "def test_a():\n    assert f() == 1\n\ndef test_bb():\n    assert g()\n",
                Err(vec![gone("test_b")]),
            ),
            (
                "a test skipped",
                "def test_a():\n    assert f() == 1\n\n@pytest.mark.skip\ndef test_b():\n    assert g()\n",
                Err(vec![Finding::TestSkipped {
                    path: "t.py".into(),
                    test: "test_b".into(),
                }]),
            ),
            (
                "an assertion removed",
                "def test_a():\n    f()\n\ndef test_b():\n    assert g()\n",
                Err(vec![Finding::Fewer {
                    path: "t.py".into(),
                    what: "assertions".into(),
                    before: 2,
                    after: 1,
                }]),
            ),
        ];
        for (what, after, want) in cases {
            assert_eq!(&classify("t.py", base, after), want, "{what}");
        }
    }

    /// A test skipped at the baseline and still skipped is not new: nothing to report.
    #[test]
    fn a_test_skipped_before_and_still_skipped_is_not_reported() {
        let before = "@pytest.mark.skip\ndef test_a():\n    pass\n";
        let after = "@pytest.mark.skip\ndef test_a():\n    pass\n\ndef test_b():\n    pass\n";
        assert_eq!(classify("t.py", before, after), Ok(false));
    }

    #[test]
    fn findings_round_trip_through_their_lines() {
        for finding in [
            Finding::Deleted {
                path: "tests/a b.py".into(),
            },
            Finding::TestGone {
                path: "a.test.ts".into(),
                test: "adds two :: numbers".into(),
            },
            Finding::TestSkipped {
                path: "t.rs".into(),
                test: "two".into(),
            },
            Finding::Fewer {
                path: "t y.py".into(),
                what: "assertions".into(),
                before: 3,
                after: 1,
            },
        ] {
            assert_eq!(Finding::from_line(&finding.to_line()), finding);
        }
        assert_eq!(
            Finding::from_line("fewer-passed 3 2 junit"),
            Finding::Fewer {
                path: "junit".into(),
                what: "passed".into(),
                before: 3,
                after: 2
            }
        );
        assert_eq!(
            Finding::from_line("something-new x"),
            Finding::Other("something-new x".into())
        );
    }
}
