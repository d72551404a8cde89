//! Dependencies between the crate's top-level modules point one way: every
//! `crate::<module>` a file under `src/` names, in `use` lines and in paths, is checked against
//! the table of forbidden directions below. A failure names the file, the line and the rule.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Which files a rule is about.
#[derive(Debug, Clone, Copy)]
enum From {
    /// The files of one top-level module (`src/git.rs`, `src/git/**`).
    Module(&'static str),
    /// Every module but this one.
    AllBut(&'static str),
}

/// What a rule forbids those files to name.
#[derive(Debug, Clone, Copy)]
enum Names {
    /// Any module but these (and their own).
    Only(&'static [&'static str]),
    /// These modules.
    Never(&'static [&'static str]),
}

struct Rule {
    from: From,
    names: Names,
    /// Why the direction matters, for whoever breaks it.
    reason: &'static str,
    /// Not enforced yet, and why: files others are rewriting still break it. Switch it on (set
    /// `None`) once they are merged.
    pending: Option<&'static str>,
}

/// The layers, bottom up, as ARCHITECTURE.md draws them: each names only what is below it.
const RULES: &[Rule] = &[
    Rule {
        from: From::Module("outcome"),
        names: Names::Only(&[]),
        reason: "the five outcomes are a leaf: everything may name them, they name nothing",
        pending: None,
    },
    Rule {
        from: From::Module("armed"),
        names: Names::Only(&[]),
        reason: "whether a script can prove anything is a value every layer passes up to report/, which words it; it names nothing",
        pending: None,
    },
    Rule {
        from: From::Module("process"),
        names: Names::Only(&[]),
        reason: "the process supervisor starts children for every layer and knows none of them",
        pending: None,
    },
    Rule {
        from: From::Module("git"),
        names: Names::Only(&["armed", "outcome", "exit", "process"]),
        reason: "git/ is the bottom layer: it stores and loads what the layers above decide, and names nothing above it (gate, hosts, report, cli, claim, setup, signing, verify, proof): how two notes merge is passed in by the caller",
        pending: None,
    },
    Rule {
        from: From::Module("signing"),
        names: Names::Only(&["process"]),
        reason: "signing/ makes and checks SSH signatures over text with ssh-keygen; it is handed settings and text, never the repository or a record",
        pending: None,
    },
    Rule {
        from: From::Module("verify"),
        names: Names::Only(&["process"]),
        reason: "verify.rs is verify.sh's contract (how it runs, what it is told); the gate and run call it, it calls neither",
        pending: None,
    },
    Rule {
        from: From::Module("isolation"),
        names: Names::Only(&["process"]),
        reason: "isolation builds the namespaced request a commit run starts through and names the links back into a checkout; it knows no repository type, record or verdict",
        pending: None,
    },
    Rule {
        from: From::Module("context"),
        names: Names::Only(&["git", "process", "signing"]),
        reason: "the context is resolved once from the repository's settings and the environment (the machine's CPUs as the process layer counts them), below everything that uses it",
        pending: None,
    },
    Rule {
        from: From::Module("proof"),
        names: Names::Only(&[
            "armed",
            "context",
            "git",
            "isolation",
            "outcome",
            "process",
            "signing",
            "verify",
        ]),
        reason: "proof/ is the record format, the one lookup and the making of a proof; it never decides a turn, never renders and never names a host",
        pending: None,
    },
    Rule {
        from: From::Module("claim"),
        names: Names::Only(&["context", "outcome", "process"]),
        reason: "the claim gauntlet runs an agent command and validates packets; it never touches the gate, the hosts' adapters or the renderers",
        pending: None,
    },
    Rule {
        from: From::Module("gate"),
        names: Names::Only(&[
            "armed",
            "claim",
            "context",
            "git",
            "isolation",
            "outcome",
            "process",
            "proof",
            "verify",
        ]),
        reason: "the gate observes, decides and acts on values; the commands call it, hosts and report render its answer (it names claim only for PROVE_IT_ROUND)",
        pending: None,
    },
    Rule {
        from: From::Module("hosts"),
        names: Names::Only(&["gate", "outcome"]),
        reason: "a host adapter parses its host's payloads into the gate's events and delivers the gate's answer in its protocol; it never touches the repository, the renderers or the commands",
        pending: None,
    },
    Rule {
        from: From::Module("setup"),
        names: Names::Never(&["cli", "report"]),
        reason: "setup/ returns what init and doctor found as values; cli/ acts on them and report/ renders them",
        pending: None,
    },
    Rule {
        from: From::Module("report"),
        names: Names::Never(&["git", "cli", "context", "process", "signing", "verify"]),
        reason: "renderers take plain values filled by the command that calls them, never the repository's types, and never call back into the commands",
        pending: None,
    },
    Rule {
        from: From::AllBut("cli"),
        names: Names::Never(&["cli"]),
        reason: "cli/ is the top: it parses arguments, calls the layers below and hands their values to the renderers; nothing below calls back up",
        pending: None,
    },
];

/// One `crate::<module>` a file names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Import {
    line: usize,
    module: String,
}

impl Rule {
    fn applies_to(&self, module: &str) -> bool {
        match self.from {
            From::Module(m) => module == m,
            From::AllBut(m) => module != m,
        }
    }

    fn forbids(&self, from: &str, named: &str) -> bool {
        if named == from {
            return false;
        }
        match self.names {
            Names::Only(allowed) => !allowed.contains(&named),
            Names::Never(forbidden) => forbidden.contains(&named),
        }
    }

    fn describe(&self) -> String {
        let from = match self.from {
            From::Module(m) => format!("`{m}`"),
            From::AllBut(m) => format!("nothing but `{m}`"),
        };
        match self.names {
            Names::Only(allowed) => format!("{from} may name only {}", allowed.join(", ")),
            Names::Never(forbidden) => format!("{from} never names {}", forbidden.join(", ")),
        }
    }
}

/// Every `.rs` file under `dir`, sorted.
fn sources(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files.sort();
}

/// The module path of a file relative to `src/`: `git/x.rs` is `[git, x]`, `git/mod.rs` is
/// `[git]`, `proof.rs` is `[proof]`; the crate roots are `[]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The top-level modules `text` (a file at module path `path`) names through `crate::` or
/// through `super::` chains that leave its module, with their lines. Comments, strings and
/// character literals are skipped; inline `mod name { .. }` blocks count for `super::`.
fn imports(text: &str, path: &[String]) -> Vec<Import> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Inline modules we are inside, with the brace depth at which each closes.
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let ident_at = |at: usize| -> (String, usize) {
        let end = (at..bytes.len())
            .find(|&j| !is_ident(bytes[j]))
            .unwrap_or(bytes.len());
        (text[at..end].to_string(), end)
    };
    while i < bytes.len() {
        let rest = &bytes[i..];
        match bytes[i] {
            b'\n' => line += 1,
            b'/' if rest.starts_with(b"//") => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if rest.starts_with(b"/*") => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
                line += text[i..end].matches('\n').count();
                i = end;
                continue;
            }
            b'r' if (rest.starts_with(b"r\"") || rest.starts_with(b"r#")) && {
                // `r"..."` or `br"..."`, not the end of an identifier.
                let before = |k: usize| i < k || !is_ident(bytes[i - k]);
                before(1) || (bytes[i - 1] == b'b' && before(2))
            } =>
            {
                let hashes = rest[1..].iter().take_while(|&&b| b == b'#').count();
                if rest.get(1 + hashes) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let start = i + 2 + hashes;
                    let end = text[start..]
                        .find(&close)
                        .map_or(bytes.len(), |e| start + e + close.len());
                    line += text[i..end].matches('\n').count();
                    i = end;
                    continue;
                }
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    if bytes.get(i) == Some(&b'\n') {
                        line += 1;
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            // A character literal ('a', '\n', '"'), not a lifetime ('a).
            b'\'' => {
                let len = if rest.get(1) == Some(&b'\\') {
                    // The escaped character, then the closing quote: '\n', '\'', '\u{1b}'.
                    rest.get(3..)
                        .and_then(|tail| tail.iter().position(|&b| b == b'\''))
                        .map(|p| p + 4)
                } else {
                    let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (rest.get(1 + ch) == Some(&b'\'')).then_some(ch + 2)
                };
                if let Some(len) = len {
                    i += len;
                    continue;
                }
            }
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
            }
            b'm' if rest.starts_with(b"mod ") && (i == 0 || !is_ident(bytes[i - 1])) => {
                let (_, end) = ident_at(i + 4);
                let after = text[end..].trim_start();
                if after.starts_with('{') {
                    inline.push(depth);
                }
            }
            b'c' if rest.starts_with(b"crate::") && (i == 0 || !is_ident(bytes[i - 1])) => {
                let at = i + "crate::".len();
                found.extend(named_at(text, at, line));
                i = at;
                continue;
            }
            b's' if rest.starts_with(b"super::") && (i == 0 || !is_ident(bytes[i - 1])) => {
                let mut at = i;
                let mut ups = 0;
                while text[at..].starts_with("super::") {
                    ups += 1;
                    at += "super::".len();
                }
                // The module we are in is the file's, plus the inline modules around us: a
                // `super` chain as long as that reaches the crate root, and the next name is a
                // top-level module; a shorter one stays inside the file's own top module.
                if ups == path.len() + inline.len() {
                    found.extend(named_at(text, at, line));
                }
                i = at;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The top-level modules named right after a `crate::` at `at`: one, or each item of a
/// `{..}` group.
fn named_at(text: &str, at: usize, line: usize) -> Vec<Import> {
    let rest = &text[at..];
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    if let Some(group) = rest.strip_prefix('{') {
        let mut names = Vec::new();
        let mut nesting = 0;
        let mut item_start = true;
        let mut offset_line = line;
        for (k, c) in group.char_indices() {
            match c {
                '{' => nesting += 1,
                '}' if nesting == 0 => break,
                '}' => nesting -= 1,
                ',' if nesting == 0 => item_start = true,
                '\n' => offset_line += 1,
                c if c.is_whitespace() => {}
                _ if item_start => {
                    item_start = false;
                    let name = ident(&group[k..]);
                    if !name.is_empty() && name != "self" {
                        names.push(Import {
                            line: offset_line,
                            module: name,
                        });
                    }
                }
                _ => {}
            }
        }
        names
    } else {
        let name = ident(rest);
        if name.is_empty() {
            Vec::new()
        } else {
            vec![Import { line, module: name }]
        }
    }
}

/// Where the crates' sources are, from the repository's root, and the module a crate is in the
/// binary's crate where it is one module (the claim gauntlet's crate is `crate::claim` there).
const SOURCES: &[(&str, Option<&str>)] = &[
    ("src", None),
    ("crates/core/src", None),
    ("crates/claim/src", Some("claim")),
];

/// Every import in `src/` that breaks a rule, as `file:line: message`, for enforced and for
/// pending rules.
fn breaches(root: &Path) -> (Vec<String>, Vec<(usize, String)>) {
    // The binary's crate and the core crate below it: one tree of modules, as the binary's
    // crate names the core's modules as its own (`crate::git`, ...).
    let mut files = Vec::new();
    for (src, module) in SOURCES {
        let src = root.join(src);
        let mut found = Vec::new();
        sources(&src, &mut found);
        files.extend(found.into_iter().map(|file| (src.clone(), *module, file)));
    }
    let path_of = |src: &Path, module: Option<&str>, file: &Path| {
        let mut path: Vec<String> = module.map(str::to_string).into_iter().collect();
        path.extend(module_path(file.strip_prefix(src).unwrap()));
        path
    };
    let tops: BTreeSet<String> = files
        .iter()
        .filter_map(|(src, module, file)| path_of(src, *module, file).first().cloned())
        .collect();
    let mut enforced = Vec::new();
    let mut pending = Vec::new();
    for (src, module, file) in &files {
        let path = path_of(src, *module, file);
        let Some(from) = path.first() else {
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a source file is text");
        for import in imports(&text, &path) {
            if !tops.contains(&import.module) {
                continue;
            }
            for (index, rule) in RULES.iter().enumerate() {
                if rule.applies_to(from) && rule.forbids(from, &import.module) {
                    let breach = format!(
                        "{}:{}: `{from}` names `crate::{}`, which breaks the rule \"{}\": {}",
                        file.strip_prefix(root).unwrap_or(file).display(),
                        import.line,
                        import.module,
                        rule.describe(),
                        rule.reason
                    );
                    if rule.pending.is_some() {
                        pending.push((index, breach));
                    } else {
                        enforced.push(breach);
                    }
                }
            }
        }
    }
    (enforced, pending)
}

#[test]
fn dependencies_between_top_level_modules_point_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (enforced, pending) = breaches(root);
    let mut report = String::new();
    for (index, rule) in RULES.iter().enumerate() {
        let Some(why) = rule.pending else {
            continue;
        };
        let count = pending.iter().filter(|(i, _)| *i == index).count();
        if count == 0 {
            writeln!(
                report,
                "pending rule now holds, switch it on: {}",
                rule.describe()
            )
            .unwrap();
        } else {
            writeln!(
                report,
                "pending rule, not enforced ({why}): {}, broken {count} times:",
                rule.describe()
            )
            .unwrap();
        }
    }
    for (_, breach) in &pending {
        writeln!(report, "  pending: {breach}").unwrap();
    }
    eprint!("{report}");
    assert!(
        enforced.is_empty(),
        "{} import(s) break the direction of dependencies:\n{}",
        enforced.len(),
        enforced.join("\n")
    );
}

/// The table must catch what it is for: a renderer naming the repository, in every form a
/// path can take, and nothing in comments or strings.
#[test]
fn the_scanner_finds_every_form_of_a_crate_path_and_skips_comments_and_strings() {
    let path = ["report".to_string(), "sync".to_string()];
    let text = "use crate::git::Synced;\n\
                use crate::{\n    outcome::Outcome,\n    cli::Failure,\n    self,\n};\n\
                // crate::hosts in a comment\n\
                /* crate::gate\n in a block */\n\
                let s = \"crate::setup in a string\";\n\
                let r = r#\"crate::claim \"raw\"\"#;\n\
                let c = '\"'; let t: &'static str = crate::proof::VERSION;\n\
                fn f() { super::super::signing::x(); super::json(); }\n\
                mod tests { use super::super::verify; use super::*; }\n";
    let named: Vec<(usize, String)> = imports(text, &path)
        .into_iter()
        .map(|import| (import.line, import.module))
        .collect();
    let expected = [
        (1, "git"),
        (3, "outcome"),
        (4, "cli"),
        (12, "proof"),
        (13, "signing"),
    ];
    assert_eq!(
        named,
        expected.map(|(line, module)| (line, module.to_string())),
        "`super::super::verify` inside `mod tests` of report/sync.rs is report::verify, not a top module"
    );
    let rule = |from: &str| {
        RULES
            .iter()
            .find(|rule| matches!(rule.from, From::Module(m) if m == from))
            .unwrap()
    };
    assert!(rule("report").applies_to("report") && rule("report").forbids("report", "git"));
    assert!(!rule("report").forbids("report", "outcome"));
    assert!(rule("git").forbids("git", "gate") && !rule("git").forbids("git", "outcome"));
}

/// Nothing starts this binary again: commits are proven in-process, the agent hook forgets the
/// caller's `GIT_DIR` itself, and the prover is the hook forked. The running binary's path is
/// read only to be shown (`doctor`).
#[test]
fn nothing_starts_this_binary_again() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for (src, _) in SOURCES {
        let mut files = Vec::new();
        sources(&root.join(src), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a source file is text");
            let reads = text.lines().any(|line| {
                line.split("//")
                    .next()
                    .unwrap_or_default()
                    .contains("current_exe()")
            });
            if reads {
                found.push(
                    file.strip_prefix(root)
                        .unwrap_or(&file)
                        .display()
                        .to_string(),
                );
            }
        }
    }
    assert_eq!(found, ["src/setup/doctor.rs"], "current_exe() read in");
}
