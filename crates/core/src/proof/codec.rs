//! The one text format of every note this tool writes: proof records, failure, cannot-test and
//! contest records, and session anchors. A first line `<magic>: <version>`, then one
//! `key: value` line per field, in any order; a key that carries a text (a diff, a run's output,
//! a script) is followed by that text's lines, each indented by one space, so that no line of a
//! text can forge a key of its own.
//!
//! Reading splits a note into its fields and checks the first line; what each key means, which
//! may repeat and which are required, is each format's own (`record::read_fields`,
//! `gate::anchor`). Writing indents texts the same way for every format.

use std::fmt::Write as _;

/// One field of a note, in the order it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    pub key: &'a str,
    /// What follows `key:`, without the one space after the colon.
    pub value: &'a str,
    /// The text that follows a key that carries one; `None` for any other key.
    pub text: Option<String>,
}

/// Why a note's text is not of the format asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The first line is not `<magic>: <version>`.
    NotThisFormat,
    /// The first line is `<magic>: <version>` of another version.
    Version(String),
    /// A line that is neither a field nor a line of a text.
    NoKey(String),
}

/// How the texts of a format end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEnd {
    /// Each line of the text ends in a newline when read back (records: their diffs and output
    /// are lists of lines).
    Lines,
    /// Byte for byte: a text without a final newline is marked by a line `\`, as diff marks
    /// it (anchors: the scripts they keep are compared with the files they came from).
    Exact,
}

/// The shape of one format: its first line, the keys that carry a text, and what a line that
/// is no field means.
pub struct Format<'a> {
    pub magic: &'a str,
    pub version: u32,
    /// Whether a key carries a text.
    pub carries_text: &'a dyn Fn(&str) -> bool,
    pub text_end: TextEnd,
    /// A line without a key is skipped (a newer writer may add other shapes) rather than
    /// refused.
    pub skip_keyless: bool,
}

impl Format<'_> {
    /// The fields of `text`, in order, after its first line is checked.
    pub fn read<'t>(&self, text: &'t str) -> Result<Vec<Field<'t>>, Error> {
        let mut lines = text.lines().peekable();
        match lines.next().and_then(|first| first.split_once(':')) {
            Some((magic, version)) if magic == self.magic => {
                if version.trim() != self.version.to_string() {
                    return Err(Error::Version(version.trim().to_string()));
                }
            }
            _ => return Err(Error::NotThisFormat),
        }
        let mut fields = Vec::new();
        while let Some(line) = lines.next() {
            let Some((key, value)) = line.split_once(':') else {
                if self.skip_keyless {
                    continue;
                }
                return Err(Error::NoKey(line.to_string()));
            };
            let value = value.strip_prefix(' ').unwrap_or(value);
            let text = (self.carries_text)(key).then(|| {
                let mut text = String::new();
                while let Some(next) = lines.peek() {
                    if let Some(rest) = next.strip_prefix(' ') {
                        text.push_str(rest);
                        text.push('\n');
                    } else if self.text_end == TextEnd::Exact && *next == "\\" {
                        text.pop();
                    } else {
                        break;
                    }
                    lines.next();
                }
                text
            });
            fields.push(Field { key, value, text });
        }
        Ok(fields)
    }
}

/// Write a key that carries a list of lines (`TextEnd::Lines`), then each line indented.
pub fn write_lines<'a>(out: &mut String, key: &str, lines: impl Iterator<Item = &'a str>) {
    // Writing to a String cannot fail.
    let _ = writeln!(out, "{key}:");
    for line in lines {
        let _ = writeln!(out, " {line}");
    }
}

/// Write the line of a key that carries a text kept byte for byte (`TextEnd::Exact`), then the
/// text indented: a text without a final newline is marked by a line `\`, as diff marks it.
pub fn write_text(out: &mut String, key_line: &str, text: &str) {
    let _ = writeln!(out, "{key_line}");
    for line in text.split_inclusive('\n') {
        let _ = write!(out, " {line}");
    }
    if !text.is_empty() && !text.ends_with('\n') {
        out.push_str("\n\\\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCKS: &dyn Fn(&str) -> bool = &|key| key == "text";

    fn format(text_end: TextEnd, skip_keyless: bool) -> Format<'static> {
        Format {
            magic: "kind",
            version: 1,
            carries_text: BLOCKS,
            text_end,
            skip_keyless,
        }
    }

    #[test]
    fn fields_and_texts_read_back_in_order() {
        let mut note = String::from("kind: 1\na: one\n");
        write_lines(&mut note, "text", "x: forged\n\nlast\n".lines());
        note.push_str("b:two\n");
        let fields = format(TextEnd::Lines, false).read(&note).unwrap();
        assert_eq!(
            fields,
            [
                Field {
                    key: "a",
                    value: "one",
                    text: None
                },
                Field {
                    key: "text",
                    value: "",
                    text: Some("x: forged\n\nlast\n".into())
                },
                Field {
                    key: "b",
                    value: "two",
                    text: None
                },
            ]
        );
    }

    #[test]
    fn an_exact_text_keeps_a_missing_final_newline() {
        for text in ["no newline", "two\nlines", "ends\n", ""] {
            let mut note = String::from("kind: 1\n");
            write_text(&mut note, "text:", text);
            note.push_str("after: yes\n");
            let fields = format(TextEnd::Exact, false).read(&note).unwrap();
            assert_eq!(fields[0].text.as_deref(), Some(text), "{note:?}");
            assert_eq!(fields[1].value, "yes");
        }
    }

    #[test]
    fn another_kind_another_version_and_keyless_lines_are_told_apart() {
        let strict = format(TextEnd::Lines, false);
        assert_eq!(strict.read("other: 1\n"), Err(Error::NotThisFormat));
        assert_eq!(strict.read(""), Err(Error::NotThisFormat));
        assert_eq!(strict.read("kind: 2\n"), Err(Error::Version("2".into())));
        assert_eq!(
            strict.read("kind: 1\nno key\n"),
            Err(Error::NoKey("no key".into()))
        );
        let lenient = format(TextEnd::Lines, true);
        assert_eq!(lenient.read("kind: 1\nno key\na: b\n").unwrap().len(), 1);
    }
}
