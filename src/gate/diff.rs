//! The unified diff of verify.sh since the session's anchor, as shown to the user and stored in
//! the record.

/// A record and a message carry at most this many lines of the diff.
pub(crate) const DIFF_LINE_CAP: usize = 200;

/// `None` when the texts are equal. Long diffs are cut at [`DIFF_LINE_CAP`] lines, saying so.
pub(crate) fn verify_diff(before: &str, after: &str) -> Option<String> {
    if before == after {
        return None;
    }
    let diff = similar::TextDiff::from_lines(before, after);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header("a/verify.sh (session start)", "b/verify.sh (now)")
        .to_string();
    let total = text.lines().count();
    if total <= DIFF_LINE_CAP {
        return Some(text);
    }
    let mut cut: String = text
        .lines()
        .take(DIFF_LINE_CAP)
        .flat_map(|line| [line, "\n"])
        .collect();
    cut.push_str(&format!(
        "... ({} more lines of diff)\n",
        total - DIFF_LINE_CAP
    ));
    Some(cut)
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

    #[test]
    fn long_diffs_are_cut_and_say_so() {
        let before: String = (0..500).map(|i| format!("check {i}\n")).collect();
        let diff = verify_diff(&before, "exit 0\n").unwrap();
        assert_eq!(diff.lines().count(), DIFF_LINE_CAP + 1);
        assert!(diff.ends_with("more lines of diff)\n"), "{diff}");
    }
}
