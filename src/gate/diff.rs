//! The unified diff of verify.sh since the session's anchor, as shown to the user and stored in
//! the record.

/// A record carries at most this many lines of the diff. Far above any real verify.sh's edit,
/// so that what is cut is never the lines that change what runs; the
/// messages fit it to their room themselves, changed lines first (`report::gate`).
pub(crate) const DIFF_LINE_CAP: usize = 5_000;

/// `None` when the texts are equal. A diff longer than [`DIFF_LINE_CAP`] lines loses its
/// unchanged context first, saying so; only changed lines beyond the cap are cut, saying how
/// many, and where the whole of verify.sh at session start is kept.
pub(crate) fn verify_diff(before: &str, after: &str) -> Option<String> {
    if before == after {
        return None;
    }
    let text = unified(before, after, 3);
    let total = text.lines().count();
    if total <= DIFF_LINE_CAP {
        return Some(text);
    }
    let changed = unified(before, after, 0);
    let changed_total = changed.lines().count();
    if changed_total <= DIFF_LINE_CAP {
        return Some(format!(
            "{changed}... (unchanged lines left out: the whole diff is {total} lines; every changed line is above)\n"
        ));
    }
    let mut cut: String = changed
        .lines()
        .take(DIFF_LINE_CAP)
        .flat_map(|line| [line, "\n"])
        .collect();
    cut.push_str(&format!(
        "... (verify.sh at session start is in the session's anchor, git notes --ref prove-it-anchors list; cut here: {} more lines of diff)\n",
        changed_total - DIFF_LINE_CAP
    ));
    Some(cut)
}

/// The diff of another file that says how a state is proven (the checks file, a check's
/// script) since the session started, under its own path; `None` when equal. Cut like
/// [`verify_diff`]'s, at the same cap.
pub(crate) fn file_diff(path: &str, before: &str, after: &str) -> Option<String> {
    if before == after {
        return None;
    }
    let text = similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("a/{path} (session start)"),
            &format!("b/{path} (now)"),
        )
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= DIFF_LINE_CAP {
        return Some(text);
    }
    let mut cut: String = lines[..DIFF_LINE_CAP]
        .iter()
        .flat_map(|line| [*line, "\n"])
        .collect();
    cut.push_str(&format!(
        "... ({} more lines of diff of {path}; the session's anchor holds it as it was)\n",
        lines.len() - DIFF_LINE_CAP
    ));
    Some(cut)
}

fn unified(before: &str, after: &str, context: usize) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(context)
        .header("a/verify.sh (session start)", "b/verify.sh (now)")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(verify_diff("a\n", "a\n"), None);
    }

    #[test]
    fn shows_the_removed_check_as_a_unified_diff() {
        let diff = verify_diff("#!/bin/sh\ncargo test\n", "#!/bin/sh\nexit 0\n").unwrap();
        assert_eq!(
            diff,
            "--- a/verify.sh (session start)\n+++ b/verify.sh (now)\n@@ -1,2 +1,2 @@\n \
             #!/bin/sh\n-cargo test\n+exit 0\n"
        );
    }

    /// A weakening after hundreds of lines of padding was cut from the
    /// stored diff at 200 lines; it is kept, and so is every changed line past the cap.
    #[test]
    fn a_weakening_after_long_padding_is_never_cut() {
        let before: String = (0..300)
            .map(|i| format!("echo pad {i}\n"))
            .collect::<String>()
            + "cargo test\n";
        let padded: String = (0..300).map(|i| format!("echo padding {i}\n")).collect();
        let diff = verify_diff(&before, &(padded.clone() + "cargo test || true\n")).unwrap();
        assert!(diff.contains("\n+cargo test || true\n"), "{diff}");
        assert!(diff.contains("\n-cargo test\n"), "{diff}");
        // Past the cap, unchanged lines go first and the changed ones all stay.
        let long: String = (0..DIFF_LINE_CAP).map(|i| format!("check {i}\n")).collect();
        let every_eighth: String = (0..DIFF_LINE_CAP)
            .map(|i| {
                if i % 8 == 0 {
                    format!("c{i}\n")
                } else {
                    format!("check {i}\n")
                }
            })
            .collect();
        assert!(unified(&long, &every_eighth, 3).lines().count() > DIFF_LINE_CAP);
        let diff = verify_diff(&long, &every_eighth).unwrap();
        assert!(diff.contains("\n+c4992\n"), "the last changed line is kept");
        assert!(diff.contains("\n-check 4992\n"));
        assert!(
            diff.ends_with("every changed line is above)\n"),
            "{}",
            &diff[diff.len() - 200..]
        );
    }

    #[test]
    fn long_diffs_are_cut_and_say_so() {
        let before: String = (0..2 * DIFF_LINE_CAP)
            .map(|i| format!("check {i}\n"))
            .collect();
        let diff = verify_diff(&before, "exit 0\n").unwrap();
        assert_eq!(diff.lines().count(), DIFF_LINE_CAP + 1);
        assert!(diff.ends_with("more lines of diff)\n"), "{diff}");
    }
}
