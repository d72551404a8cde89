//! Allowed signers files (ssh-keygen(1), ALLOWED SIGNERS), read as ssh-keygen reads them where
//! that spares running it.

use super::armor::ed25519_key;

/// Above this size an allowed signers file is not kept in memory: ssh-keygen is asked everything.
pub(super) const CANDIDATES_MAX_BYTES: u64 = 1 << 20;

/// The lines of an allowed signers file that could name a key, read as ssh-keygen reads them
/// (sshsig.c in OpenSSH 8.2 to 9.x), to answer `-Y find-principals` without running it where
/// the answer is certain. That is the case for a plain ed25519 key, whose encoding is unique:
///
/// - find-principals names the principals of the first line, in file order, whose key is the
///   signature's and is valid at the verify time (`cert-authority` lines only name
///   certificates); lines it cannot parse are skipped.
/// - A line can hold the key only if its text, without whitespace (which base64 decoding
///   skips), contains the key's base64, which is unique for an ed25519 key: so when no line
///   does, find-principals names nobody, and the key is an unknown signer or the record is
///   altered, as `-Y check-novalidate` alone then says.
/// - When exactly one line does, and its principals field is a single principal `P` (no comma,
///   no quote), find-principals names `P` or nobody. Running `-Y verify -I P` directly gives
///   the same result either way: it succeeds only through a line holding the key for `P` at
///   the verify time, that is this line, when find-principals would have named `P` and the very
///   same `-Y verify -I P` would have run next; when it fails, both end in check-novalidate.
///
/// Anything else (two lines holding the key, several principals on its line, another key type,
/// a certificate) is asked of find-principals, as before.
#[derive(Debug, Clone)]
pub(super) struct Candidates {
    lines: Vec<Candidate>,
}

#[derive(Debug, Clone)]
struct Candidate {
    /// The line without any whitespace, to look for a key's base64 in.
    packed: Vec<u8>,
    /// The line's principals field, as this module would read it from find-principals' output
    /// (trimmed), when it is a single principal; `None` when it cannot be told without asking.
    principal: Option<String>,
}

/// What ssh-keygen's line parser skips at the start of a line and ends the principals field with.
const LINE_SPACE: &[u8] = b" \t\r\n";

impl Candidates {
    /// `None` for a file holding a NUL byte, where ssh-keygen's C strings would stop reading.
    pub(super) fn parse(contents: &[u8]) -> Option<Candidates> {
        if contents.contains(&0) {
            return None;
        }
        let lines = contents
            .split(|&b| b == b'\n')
            .filter_map(|line| {
                let start = line.iter().position(|b| !LINE_SPACE.contains(b))?;
                let line = &line[start..];
                if line[0] == b'#' {
                    return None;
                }
                // base64 decoding skips every isspace() character, vertical tab and form feed
                // included, so a key's base64 may be spread over them.
                let packed = line
                    .iter()
                    .copied()
                    .filter(|b| !b" \t\n\x0b\x0c\r".contains(b))
                    .collect();
                let field = line
                    .iter()
                    .position(|b| LINE_SPACE.contains(b) || *b == b'"')
                    .map(|end| &line[..end]);
                let principal = field
                    .filter(|field| line[field.len()] != b'"' && !field.contains(&b','))
                    .and_then(|field| std::str::from_utf8(field).ok())
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_string);
                Some(Candidate { packed, principal })
            })
            .collect();
        Some(Candidates { lines })
    }

    /// The principals find-principals would name for the key that signed `armor`, when they
    /// are certain: none, or the one of the only line that may hold the key (`None`: ask it).
    pub(super) fn principals(&self, armor: &str) -> Option<Vec<String>> {
        let key = ed25519_key(armor)?;
        let mut holding = self
            .lines
            .iter()
            .filter(|line| contains(&line.packed, key.as_bytes()));
        match (holding.next(), holding.next()) {
            (None, _) => Some(Vec::new()),
            (Some(line), None) => line.principal.clone().map(|p| vec![p]),
            (Some(_), Some(_)) => None,
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signing::armor::encode as base64_encode;
    use crate::signing::armor::tests::{armor_with, ed25519};

    #[test]
    fn find_principals_is_skipped_only_where_its_answer_is_certain() {
        let alice = base64_encode(&ed25519(1));
        let bob = base64_encode(&ed25519(2));
        let carol = base64_encode(&ed25519(3));
        let file = format!(
            "# alice {carol}\n\
             \talice@example.com valid-before=\"20300101\" ssh-ed25519 {alice} alice\n\
             \n\
             bob@example.com,robert@example.com ssh-ed25519 {bob}\n\
             x@example.com ssh-ed25519 {}\x0b{} split by a vertical tab\n\
             \"quoted@example.com\" ssh-ed25519 {carol}\n",
            &bob[..10],
            &bob[10..],
        );
        let candidates = Candidates::parse(file.as_bytes()).unwrap();
        let principals = |point| candidates.principals(&armor_with(&ed25519(point)));
        // One line holds alice's key, with one principal: certain.
        assert_eq!(principals(1), Some(vec!["alice@example.com".to_string()]));
        // Two lines may hold bob's (base64 skips the vertical tab), one of them with two
        // principals: ask ssh-keygen.
        assert_eq!(principals(2), None);
        // Carol's key is in a comment, and on a line whose principal is quoted: ask.
        assert_eq!(principals(3), None);
        // A key no line holds: nobody, certain.
        assert_eq!(principals(4), Some(vec![]));
        // Not an ed25519 key: ask.
        assert_eq!(
            candidates.principals(&armor_with(b"\0\0\0\x07ssh-rsa\0\0\0\x01\x03")),
            None
        );
        // Commas and NUL bytes: ask.
        let two = format!("a@example.com,b@example.com ssh-ed25519 {alice}\n");
        let two = Candidates::parse(two.as_bytes()).unwrap();
        assert_eq!(two.principals(&armor_with(&ed25519(1))), None);
        assert!(Candidates::parse(b"a\0b ssh-ed25519 AAAA\n").is_none());
    }
}
