//! `git prove-it log`: the reviewer's view, one line per commit with its proof.

use predicates::prelude::*;

use crate::check::{bounded_record, hand_write_note, short, tree_of};
use crate::harness::{EMAIL, NAME, TestRepo, json_stdout};

/// main: initial (proven), hand-written note, malformed record, no verify.sh, unproven.
pub fn history() -> TestRepo {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("b.txt", "b\n");
    repo.commit_all("hand-written");
    hand_write_note(&repo, &tree_of(&repo, "HEAD"), "LGTM, tests pass");
    repo.write("c.txt", "c\n");
    repo.commit_all("malformed");
    let tree = tree_of(&repo, "HEAD");
    hand_write_note(
        &repo,
        &tree,
        &format!(
            "prove-it-record: 1\noutcome: PROVEN\ntree: {tree}\nexit-code: 0\ntime: yesterday"
        ),
    );
    repo.remove("verify.sh");
    repo.commit_all("unarmed");
    repo.verify_passes();
    repo.write("d.txt", "d\n");
    repo.commit_all("unproven");
    repo
}

#[test]
fn each_commit_shows_where_it_stands_and_who_proved_it_plain_when_piped() {
    let repo = history();
    let out = repo.prove_it(&["log"]).assert().code(0);
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(!out.contains('\x1b'), "piped output is plain: {out:?}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    let starts = |i: usize, rev: &str, status: &str, subject: &str| {
        let want = format!("{} {status:<13} {subject}", short(&repo, rev));
        assert!(lines[i].starts_with(&want), "{:?} vs {want:?}", lines[i]);
    };
    starts(0, "HEAD", "unproven", "unproven");
    starts(1, "HEAD~1", "not-armed", "unarmed");
    starts(2, "HEAD~2", "invalid", "malformed");
    starts(3, "HEAD~3", "invalid", "hand-written");
    starts(4, "HEAD~4", "proven", "initial");
    assert!(lines[1].ends_with("(no verify.sh in its tree)"));
    assert!(
        lines[2]
            .contains("not a valid record: malformed record: time \"yesterday\" is not RFC 3339")
    );
    assert!(lines[3].contains("first line is not `prove-it-record: 1`"));
    assert!(lines[4].contains(&format!("({NAME} <{EMAIL}>, ")));
    assert!(lines[4].ends_with(", host cli, unsigned)"), "{}", lines[4]);
}

#[test]
fn max_count_and_ranges_limit_the_list() {
    let repo = history();
    let out = repo.prove_it(&["log", "-n", "2"]).assert().code(0);
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout)
            .lines()
            .count(),
        2
    );
    let out = repo.prove_it(&["log", "HEAD~2..HEAD~1"]).assert().code(0);
    let out = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    // One commit, then the line saying its verify.sh is not the base's: the
    // unarmed commit has none.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].contains("unarmed"));
    assert!(lines[1].starts_with("verify.sh changed since "), "{out}");
}

#[test]
fn colour_only_when_asked_or_on_a_terminal_without_no_color() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["log", "--color=always"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("\x1b[32mproven"));
    repo.prove_it(&["log", "--color=never"])
        .assert()
        .stdout(predicate::str::contains('\x1b').not());
    repo.prove_it(&["log"])
        .env("NO_COLOR", "1")
        .assert()
        .stdout(predicate::str::contains('\x1b').not());
    repo.prove_it(&["log", "--color=sometimes"])
        .assert()
        .code(2);
}

#[test]
fn p_shows_the_verify_sh_diff_a_proof_through_an_edited_verify_sh_carries() {
    let repo = TestRepo::with_commit();
    let bounded = bounded_record(&repo);
    hand_write_note(&repo, &tree_of(&repo, "HEAD"), &bounded);
    let out = repo.prove_it(&["log", "-p"]).assert().code(0);
    let out = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(out.contains("proven-edited"), "{out}");
    assert!(out.contains("through an edited verify.sh"), "{out}");
    assert!(out.contains("\n    -exit 1\n    +exit 0\n"), "{out}");
    repo.prove_it(&["log"])
        .assert()
        .stdout(predicate::str::contains("+exit 0").not());
}

#[test]
fn json_lists_every_commit_with_its_status_and_problems() {
    let repo = history();
    let json = json_stdout(&repo.prove_it(&["log", "--json"]).assert().code(0));
    assert_eq!(json["version"], 1);
    let commits = json["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 5);
    assert_eq!(commits[4]["status"], "proven");
    assert_eq!(
        commits[4]["proof"]["signed_off_by"],
        format!("{NAME} <{EMAIL}>")
    );
    assert_eq!(commits[3]["status"], "invalid");
    assert!(
        commits[3]["invalid"][0]
            .as_str()
            .unwrap()
            .contains("malformed record")
    );
    assert_eq!(commits[0]["proof"], serde_json::Value::Null);
}

#[test]
fn stats_give_the_share_of_commits_proven_and_say_signatures_were_not_checked() {
    let repo = history();
    repo.prove_it(&["log", "--stats"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "proven 1 of 5 commits (20%); signatures not checked\n",
        ))
        .stdout(predicate::str::contains(
            "hint: to count signed proofs, name an allowed signers file",
        ));
    // A range, as git log takes it: the two newest commits, neither proven.
    repo.prove_it(&["log", "--stats", "HEAD~2..HEAD"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "proven 0 of 2 commits (0%); signatures not checked\n",
        ));
    let json = json_stdout(
        &repo
            .prove_it(&["log", "--stats", "--json"])
            .assert()
            .code(0),
    );
    assert_eq!(json["version"], 1);
    assert_eq!(json["commits"], 5);
    assert_eq!(json["proven"], 1);
    assert_eq!(json["proven_percent"], 20);
    assert!(json["signed"].is_null(), "{json}");
    let format = repo
        .prove_it(&["log", "--stats", "--format", "json"])
        .assert()
        .code(0);
    assert_eq!(json_stdout(&format), json);
}

#[test]
fn stats_count_a_proof_through_an_edited_verify_sh_and_say_so() {
    let repo = TestRepo::with_commit();
    let bounded = bounded_record(&repo);
    hand_write_note(&repo, &tree_of(&repo, "HEAD"), &bounded);
    repo.prove_it(&["log", "--stats"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "proven 1 of 1 commit (100%); signatures not checked\n  1 of them only through an edited verify.sh (BOUNDED_CLAIM_SURVIVES)\n",
        ));
}

/// Three commits: signed by alice and proven, proven unsigned, unproven; and a file allowing
/// alice.
pub fn signed_history() -> (TestRepo, String) {
    let repo = TestRepo::with_commit();
    let (key, public) = crate::signed::keygen(&repo, "alice");
    crate::signed::sign_with(&repo, key.to_str().unwrap());
    repo.prove_it(&["run"]).assert().code(0);
    repo.git(&["config", "prove-it.sign", "false"]);
    repo.write("b.txt", "b\n");
    repo.commit_all("unsigned");
    repo.prove_it(&["run"]).assert().code(0);
    repo.write("c.txt", "c\n");
    repo.commit_all("unproven");
    let allowed = repo.home().join("allowed_signers");
    std::fs::write(&allowed, format!("alice@example.com {public}\n")).unwrap();
    (repo, allowed.to_str().unwrap().to_string())
}

#[test]
fn stats_count_good_signatures_against_the_allowed_signers() {
    let (repo, allowed) = signed_history();
    repo.prove_it(&["log", "--stats", "--allowed-signers", &allowed])
        .assert()
        .code(0)
        .stdout("proven 2 of 3 commits (66%), signed 1 (33%)\n");
    let json = json_stdout(
        &repo
            .prove_it(&["log", "--stats", "--json", "--allowed-signers", &allowed])
            .assert()
            .code(0),
    );
    assert_eq!(json["signed"], 1);
    assert_eq!(json["signed_percent"], 33);
}

/// An element of an SVG document: its name, its attributes, and the text directly inside it.
type Element = (String, Vec<(String, String)>, String);

/// Every element of `svg` (which must be well-formed XML), in document order.
fn svg_elements(svg: &str) -> Vec<Element> {
    use quick_xml::events::{BytesStart, Event};
    let element = |e: &BytesStart| {
        let attributes = e
            .attributes()
            .map(|a| {
                let a = a.unwrap();
                let value = a
                    .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .unwrap();
                (a.key.as_ref().to_string(), value.into_owned())
            })
            .collect();
        (e.name().as_ref().to_string(), attributes, String::new())
    };
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut elements = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    loop {
        match reader
            .read_event()
            .unwrap_or_else(|e| panic!("not XML: {e}\n{svg}"))
        {
            Event::Start(e) => {
                elements.push(element(&e));
                open.push(elements.len() - 1);
            }
            Event::Empty(e) => elements.push(element(&e)),
            Event::Text(text) => {
                if let Some(&i) = open.last() {
                    elements[i].2.push_str(&text.xml10_content());
                }
            }
            Event::End(_) => {
                open.pop().expect("an end tag closes an open element");
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(open.is_empty(), "unclosed elements in {svg}");
    elements
}

#[test]
fn format_svg_writes_a_badge_with_the_share_and_a_colour_by_threshold() {
    let (repo, allowed) = signed_history();
    let badge = repo.home().join("badge.svg");
    repo.prove_it(&[
        "log",
        "--format",
        "svg",
        "--allowed-signers",
        &allowed,
        "--output",
        badge.to_str().unwrap(),
    ])
    .assert()
    .code(0)
    .stdout("");
    let svg = std::fs::read_to_string(&badge).unwrap();
    let elements = svg_elements(&svg);
    let (root, attributes, _) = &elements[0];
    assert_eq!(root, "svg");
    assert!(
        attributes.contains(&("aria-label".into(), "proven: 66%".into())),
        "{svg}"
    );
    let text = |name: &str| -> Vec<String> {
        elements
            .iter()
            .filter(|(n, _, _)| n == name)
            .map(|(_, _, t)| t.clone())
            .collect()
    };
    assert_eq!(text("title"), ["proven: 66%"]);
    assert_eq!(text("desc"), ["proven 2 of 3 commits, signed 1"]);
    assert_eq!(text("text"), ["proven", "66%"]);
    let fills: Vec<&str> = elements
        .iter()
        .flat_map(|(_, a, _)| a.iter())
        .filter(|(k, _)| k == "fill")
        .map(|(_, v)| v.as_str())
        .collect();
    assert!(fills.contains(&"#dfb317"), "66% is yellow: {fills:?}");

    // All proven is bright green, on stdout without --output; an empty range is n/a, in grey.
    repo.prove_it(&["run"]).assert().code(0);
    let out = repo
        .prove_it(&["log", "--stats", "--format", "svg"])
        .assert()
        .code(0);
    let svg = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let elements = svg_elements(&svg);
    assert!(
        elements
            .iter()
            .any(|(n, _, t)| n == "title" && t == "proven: 100%"),
        "{svg}"
    );
    assert!(svg.contains("fill=\"#4c1\""), "{svg}");
    let out = repo
        .prove_it(&["log", "--format", "svg", "HEAD..HEAD"])
        .assert()
        .code(0);
    let svg = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        svg_elements(&svg)
            .iter()
            .any(|(n, _, t)| n == "title" && t == "proven: n/a")
    );
    assert!(svg.contains("fill=\"#9f9f9f\""), "{svg}");
}
