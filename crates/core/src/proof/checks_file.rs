//! `prove-it.toml`: the checks a repository declares, each a script and the paths it reads
//! (SPEC.md section 2.1). One parser, over the `toml` crate; an error names the line. Pure: it
//! turns text into values and never touches the repository.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The checks file, at the worktree root.
pub use crate::git::CHECKS_FILE;

/// The name of the check a root verify.sh is, with every path as input.
pub const VERIFY_CHECK: &str = "verify.sh";

/// One check as the file declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub name: String,
    /// The script's repository-relative path; it runs from its own directory.
    pub run: String,
    /// The repository-relative paths it reads, normalised, sorted, and none inside another.
    pub inputs: Vec<String>,
    /// Each input declared without a trailing `?`, normalised, with the line that declares
    /// it: a working state must hold something there.
    pub required: Vec<(String, usize)>,
}

/// The mark after an input that may be missing from a state: `"generated/?"`.
pub const OPTIONAL_MARK: char = '?';

/// Why a checks file cannot be used, in words that name the line where the file says it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("prove-it.toml is not a valid checks file: {why}")]
pub struct Invalid {
    pub why: String,
    /// The file asks for a later git-prove-it than this one (`min-version`): what fixes it is
    /// an install, not an edit.
    pub needs_newer: bool,
}

impl Invalid {
    pub fn new(why: impl Into<String>) -> Invalid {
        Invalid {
            why: why.into(),
            needs_newer: false,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    checks: BTreeMap<String, toml::Spanned<Entry>>,
    /// Run in a commit's worktree before its checks (`npm ci`, `uv sync`).
    setup: Option<toml::Spanned<String>>,
    /// The paths whose change makes `setup` run again; without it, it runs at every commit.
    #[serde(rename = "setup-inputs")]
    setup_inputs: Option<toml::Spanned<Vec<toml::Spanned<String>>>>,
    /// The oldest git-prove-it that reads this file as it is meant: compared before this
    /// strict reading (`needs_newer`), named here so that it is a known key.
    #[serde(rename = "min-version")]
    _min_version: Option<toml::Value>,
    /// The protected paths, gitignore-style patterns (SPEC.md section 2.2).
    protect: Option<toml::Spanned<Vec<toml::Spanned<String>>>>,
}

/// The `protect` patterns `text` declares, as written (empty without any).
pub fn protect(text: &str) -> Result<Vec<String>, Invalid> {
    let file = read(text)?;
    let Some(patterns) = file.protect else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for pattern in patterns.into_inner() {
        let value = pattern.get_ref();
        if value.trim().is_empty() || value.chars().any(char::is_control) {
            return Err(Invalid::new(format!(
                "line {}: protect: {value:?} is not a pattern (empty, or holding a control character)",
                line_of(text, pattern.span())
            )));
        }
        out.push(value.clone());
    }
    Ok(out)
}

/// Protected paths: gitignore-style patterns, matched as git matches `.gitignore` lines
/// (gitoxide's matcher): a path is protected when a pattern matches it or one of its
/// directories, and the last pattern that matches is not a `!` one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    pub patterns: Vec<String>,
}

impl Protected {
    pub fn new(patterns: Vec<String>) -> Protected {
        Protected { patterns }
    }

    /// The `protect` list of the checks file `text`.
    pub fn of_text(text: &str) -> Result<Protected, Invalid> {
        protect(text).map(Protected::new)
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// A matcher for many paths.
    pub fn matcher(&self) -> Matcher {
        Matcher(gix::ignore::Search::from_overrides(
            self.patterns.iter(),
            gix::ignore::search::Ignore::default(),
        ))
    }
}

/// [`Protected`]'s patterns, parsed once.
pub struct Matcher(gix::ignore::Search);

impl Matcher {
    /// Whether the repository-relative file `path` is protected.
    pub fn holds(&self, path: &str) -> bool {
        use gix::bstr::ByteSlice;
        let case = gix::glob::pattern::Case::Sensitive;
        let matches = |path: &str, is_dir: bool| {
            self.0
                .pattern_matching_relative_path(path.as_bytes().as_bstr(), Some(is_dir), case)
                .map(|found| !found.pattern.is_negative())
        };
        // As in git, a file inside a matched directory cannot be taken back by a later `!`.
        for (at, _) in path.match_indices('/') {
            if matches(&path[..at], true) == Some(true) {
                return true;
            }
        }
        matches(path, false) == Some(true)
    }
}

/// What the checks file runs in a commit's worktree before its checks, each time the worktree
/// is moved to another commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// The script's repository-relative path; it runs from the worktree's root.
    pub run: String,
    /// With `setup-inputs`, the paths whose change makes it run again (normalised as a
    /// check's inputs are); `None`: it runs every time.
    pub inputs: Option<Vec<String>>,
}

/// The version of this build, which `min-version` is compared with.
const THIS_VERSION: &str = env!("CARGO_PKG_VERSION");

/// `Err` when `text` says it needs a newer git-prove-it than this one (`min-version`): said
/// before anything else, so that a key this build does not know is explained by the version
/// it came with rather than reported as unknown.
fn needs_newer(text: &str) -> Result<(), Invalid> {
    let Ok(table) = text.parse::<toml::Table>() else {
        return Ok(());
    };
    let Some(wanted) = table.get("min-version").and_then(toml::Value::as_str) else {
        return Ok(());
    };
    let number = |version: &str| -> Option<Vec<u64>> {
        version
            .trim()
            .trim_start_matches('v')
            .split('.')
            .map(|part| part.parse().ok())
            .collect()
    };
    match (number(wanted), number(THIS_VERSION)) {
        (Some(wanted_parts), Some(ours)) if wanted_parts > ours => Err(Invalid {
            needs_newer: true,
            ..Invalid::new(format!(
                "it needs git-prove-it {wanted} or later (min-version), and this is {THIS_VERSION}"
            ))
        }),
        (None, _) => Err(Invalid::new(format!(
            "min-version = {wanted:?} is not a version such as \"{THIS_VERSION}\""
        ))),
        _ => Ok(()),
    }
}

/// `text` read as a checks file, once it is known not to need a newer build.
fn read(text: &str) -> Result<File, Invalid> {
    needs_newer(text)?;
    toml::from_str(text).map_err(|error| Invalid::new(one_paragraph(&error)))
}

/// The line of `text` where `span` starts, counted from 1.
fn line_of(text: &str, span: std::ops::Range<usize>) -> usize {
    1 + text[..span.start.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
}

/// The `setup` the checks file `text` declares, if any.
pub fn setup(text: &str) -> Result<Option<Setup>, Invalid> {
    let file = read(text)?;
    let line_of = |span: std::ops::Range<usize>| line_of(text, span);
    let Some(run) = file.setup else {
        if let Some(inputs) = file.setup_inputs {
            return Err(Invalid::new(format!(
                "line {}: setup-inputs is set without a setup script to run",
                line_of(inputs.span())
            )));
        }
        return Ok(None);
    };
    let path = normal_path(run.get_ref()).map_err(|why| {
        Invalid::new(format!(
            "line {}: setup = {:?} {why}",
            line_of(run.span()),
            run.get_ref()
        ))
    })?;
    let inputs = match file.setup_inputs {
        None => None,
        Some(inputs) => {
            let mut paths = vec![path.clone(), CHECKS_FILE.to_string()];
            for input in inputs.into_inner() {
                paths.push(input_path(input.get_ref()).map_err(|why| {
                    Invalid::new(format!(
                        "line {}: setup-inputs: {:?} {why}",
                        line_of(input.span()),
                        input.get_ref()
                    ))
                })?);
            }
            Some(outermost(paths))
        }
    };
    Ok(Some(Setup { run: path, inputs }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    run: toml::Spanned<String>,
    inputs: toml::Spanned<Vec<toml::Spanned<String>>>,
}

/// The checks `text` declares, in name order. Every error says where: the toml crate's own
/// errors give line and column, and ours the line of the value at fault.
pub fn parse(text: &str) -> Result<Vec<Declared>, Invalid> {
    let file = read(text)?;
    let line_of = |span: std::ops::Range<usize>| line_of(text, span);
    let mut checks = Vec::with_capacity(file.checks.len());
    for (name, entry) in file.checks {
        let at = line_of(entry.span());
        let entry = entry.into_inner();
        if !valid_name(&name) {
            return Err(Invalid::new(format!(
                "line {at}: the check name {name:?} must start with a letter or digit and hold only letters, digits, '.', '_' and '-'"
            )));
        }
        if name == VERIFY_CHECK {
            return Err(Invalid::new(format!(
                "line {at}: the check name \"{VERIFY_CHECK}\" is the root verify.sh's; give this check another name"
            )));
        }
        let run = normal_path(entry.run.get_ref()).map_err(|why| {
            Invalid::new(format!(
                "line {}: check {name}: run = {:?} {why}",
                line_of(entry.run.span()),
                entry.run.get_ref()
            ))
        })?;
        if entry.inputs.get_ref().is_empty() {
            return Err(Invalid::new(format!(
                "line {}: check {name}: inputs is empty; list the paths the check reads (\".\" for all of them)",
                line_of(entry.inputs.span())
            )));
        }
        let mut inputs = Vec::new();
        let mut required = Vec::new();
        for input in entry.inputs.into_inner() {
            let line = line_of(input.span());
            let (written, optional) = match input.get_ref().strip_suffix(OPTIONAL_MARK) {
                Some(path) => (path, true),
                None => (input.get_ref().as_str(), false),
            };
            let path = input_path(written);
            match path {
                Ok(path) => {
                    if !optional && !path.is_empty() {
                        required.push((path.clone(), line));
                    }
                    inputs.push(path);
                }
                Err(why) => {
                    return Err(Invalid::new(format!(
                        "line {line}: check {name}: input {:?} {why}",
                        input.get_ref()
                    )));
                }
            }
        }
        checks.push(Declared {
            name,
            run,
            inputs: outermost(inputs),
            required,
        });
    }
    Ok(checks)
}

/// The toml crate's message on one line per fact, without its source excerpt's blank lines.
fn one_paragraph(error: &toml::de::Error) -> String {
    let text = error.to_string();
    text.lines()
        .map(str::trim_end)
        .filter(|line| !line.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `name` may name a check of the checks file: `[A-Za-z0-9][A-Za-z0-9._-]*`, and not
/// the root verify.sh's.
pub fn is_check_name(name: &str) -> bool {
    name != VERIFY_CHECK && valid_name(name)
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// An input as [`normal_path`] names it, `"."` (every path) being `""`.
fn input_path(path: &str) -> Result<String, &'static str> {
    normal_path(path).or_else(|why| {
        if matches!(path.trim_end_matches('/'), "." | "") {
            Ok(String::new())
        } else {
            Err(why)
        }
    })
}

/// A repository-relative path as git names it: `/`-separated, no `.` or `..` component, not
/// absolute, no trailing slash.
fn normal_path(path: &str) -> Result<String, &'static str> {
    if path.starts_with('/') {
        return Err("is absolute; paths are relative to the repository root");
    }
    if path.contains('\\') {
        return Err("holds a backslash; separate directories with '/'");
    }
    if path.chars().any(char::is_control) {
        return Err("holds a control character");
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if parts.contains(&"..") {
        return Err("leaves the repository root through '..'");
    }
    if parts.is_empty() {
        return Err("names no path");
    }
    if parts.first() == Some(&".git") {
        return Err("is inside .git, which is not part of any state");
    }
    Ok(parts.join("/"))
}

/// The inputs sorted, without repeats and without any path inside another ("" is the root).
fn outermost(mut inputs: Vec<String>) -> Vec<String> {
    inputs.sort();
    inputs.dedup();
    let all = inputs.clone();
    inputs.retain(|path| {
        !all.iter().any(|other| {
            other != path && (other.is_empty() || path.starts_with(&format!("{other}/")))
        })
    });
    inputs
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"
[checks.api]
run = "packages/api/verify.sh"          # an executable in the worktree, run from its directory
inputs = ["packages/api", "packages/shared", "Cargo.lock"]
[checks.docs]
run = "docs/verify.sh"
inputs = ["docs"]
"#;

    #[test]
    fn the_issues_example_parses_in_name_order() {
        let checks = parse(TWO).unwrap();
        assert_eq!(
            checks,
            [
                Declared {
                    name: "api".into(),
                    run: "packages/api/verify.sh".into(),
                    inputs: vec![
                        "Cargo.lock".into(),
                        "packages/api".into(),
                        "packages/shared".into()
                    ],
                    required: vec![
                        ("packages/api".into(), 4),
                        ("packages/shared".into(), 4),
                        ("Cargo.lock".into(), 4)
                    ],
                },
                Declared {
                    name: "docs".into(),
                    run: "docs/verify.sh".into(),
                    inputs: vec!["docs".into()],
                    required: vec![("docs".into(), 7)],
                },
            ]
        );
    }

    #[test]
    fn protect_patterns_match_as_gitignore_lines_do() {
        let text = "protect = [\"tests/\", \"*_test.go\", \"/ci.yml\", \"!tests/fixtures/\"]\n";
        assert_eq!(parse(text).unwrap(), []);
        let protected = Protected::new(protect(text).unwrap());
        let matcher = protected.matcher();
        for (path, want) in [
            ("tests/test_a.py", true),
            ("pkg/tests/x.rs", true),
            ("a/b_test.go", true),
            ("ci.yml", true),
            ("sub/ci.yml", false),
            ("src/lib.rs", false),
            ("tests/fixtures/data.txt", true),
        ] {
            assert_eq!(matcher.holds(path), want, "{path}");
        }
        assert_eq!(protect("").unwrap(), Vec::<String>::new());
        let error = protect("\nprotect = [\"\"]\n").unwrap_err();
        assert!(error.to_string().contains("line 2"), "{error}");
    }

    #[test]
    fn an_empty_file_declares_no_checks() {
        assert_eq!(parse("").unwrap(), []);
        assert_eq!(parse("[checks]\n").unwrap(), []);
    }

    #[test]
    fn paths_are_normalised_and_nested_inputs_folded_into_their_parent() {
        let checks = parse(
            "[checks.a]\nrun = \"./a//verify.sh\"\ninputs = [\"a/\", \"a/src\", \"./b\", \"b\"]\n",
        )
        .unwrap();
        assert_eq!(checks[0].run, "a/verify.sh");
        assert_eq!(checks[0].inputs, ["a", "b"]);
        let all = parse("[checks.a]\nrun = \"a.sh\"\ninputs = [\".\", \"a\"]\n").unwrap();
        assert_eq!(all[0].inputs, [""]);
    }

    #[test]
    fn a_trailing_question_mark_makes_an_input_optional() {
        let checks =
            parse("[checks.a]\nrun = \"a.sh\"\ninputs = [\"a\",\n  \"gen/?\", \"b?\"]\n").unwrap();
        assert_eq!(checks[0].inputs, ["a", "b", "gen"]);
        assert_eq!(checks[0].required, [("a".to_string(), 3)]);
        let error = parse("[checks.a]\nrun = \"a.sh\"\ninputs = [\"../b?\"]\n").unwrap_err();
        assert!(error.to_string().contains("line 3"), "{error}");
    }

    #[test]
    fn each_error_names_its_line() {
        let cases: &[(&str, &str)] = &[
            (
                "[checks.a]\nrun = \"a.sh\"\ninputs = [\"../up\"]\n",
                "line 3",
            ),
            (
                "[checks.a]\nrun = \"/abs.sh\"\ninputs = [\"a\"]\n",
                "line 2",
            ),
            ("\n\n[checks.a]\nrun = \"a.sh\"\ninputs = []\n", "line 5"),
            (
                "[checks.\"-x\"]\nrun = \"a.sh\"\ninputs = [\"a\"]\n",
                "line 1",
            ),
            (
                "[checks.\"verify.sh\"]\nrun = \"a.sh\"\ninputs = [\"a\"]\n",
                "line 1",
            ),
            ("[checks.a]\nrun = \"a.sh\"\n", "line 1"),
            (
                "[checks.a]\nrun = \"a.sh\"\ninputs = [\"a\"]\ntimeout = 3\n",
                "line 4",
            ),
            ("[checks.a]\nrun = 3\ninputs = [\"a\"]\n", "line 2"),
            ("[checks.a\nrun = \"a.sh\"\n", "line 1"),
            (
                "[checks.a]\nrun = \"a.sh\"\ninputs = [\".git/config\"]\n",
                "line 3",
            ),
        ];
        for (text, line) in cases {
            let error = parse(text).expect_err(text).to_string();
            assert!(error.contains(line), "{text:?}: {error}");
            assert!(error.starts_with("prove-it.toml is not a valid checks file"));
        }
    }
}
