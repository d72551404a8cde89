//! The passing test names a proof record keeps, packed: sorted, one a line, deflated with zlib
//! and base64-encoded into one `tests-pass-z:` value within a bound, so that a later run, in
//! this clone or another that fetched the notes, can name a test that vanished; and the
//! bounded reading back of such a value.
//!
//! Pure: it turns names into text and text into names, and never touches the repository.

use std::io::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// The most bytes of a packed value (its base64 text); the names past what fits are cut.
pub const PACKED_BYTES: usize = 64 * 1024;
/// The most bytes of names, one a line, packed or read back: a value that inflates to more
/// does not read, so a forged record cannot make a reader allocate without bound.
pub const RAW_BYTES: usize = 8 * 1024 * 1024;
/// The raw bytes deflated first to learn how well the names compress.
const PROBE_BYTES: usize = 256 * 1024;

/// Why a packed value could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("the packed test names are not base64")]
    NotBase64,
    #[error("the packed test names do not inflate: {reason}")]
    Corrupt { reason: String },
    #[error("the packed test names inflate to more than {RAW_BYTES} bytes")]
    TooLarge,
    #[error("the packed test names are not UTF-8")]
    NotUtf8,
}

/// Names packed into one value, and how many of them (the first, in the order given) it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    pub text: String,
    pub kept: usize,
}

/// The first of `names` (sorted) that fit in [`PACKED_BYTES`] once packed, packed. A name's
/// control characters (a newline would split it in two) read as spaces, as in every record
/// line.
pub fn pack(names: &[String]) -> Packed {
    let names: Vec<String> = names.iter().map(|name| clean(name)).collect();
    let mut n = within_raw(&names, RAW_BYTES);
    // Deflate a first slice to learn the ratio, so a run of a million names is not deflated
    // whole only to be cut to a few thousand.
    let probe = within_raw(&names[..n], PROBE_BYTES);
    let probe_raw: usize = names[..probe].iter().map(|name| name.len() + 1).sum();
    let probe_packed = encoded_len(deflate(&joined(&names[..probe])).len());
    if probe_packed > 0 && probe < n {
        let fits = probe_raw.saturating_mul(PACKED_BYTES) / probe_packed;
        n = within_raw(&names[..n], fits.saturating_add(fits / 8));
    }
    loop {
        let text = STANDARD.encode(deflate(&joined(&names[..n])));
        if text.len() <= PACKED_BYTES || n == 0 {
            return Packed { text, kept: n };
        }
        // Shrink by the overshoot, a little more, and always by one at least.
        let smaller = n.saturating_mul(PACKED_BYTES) / text.len();
        n = (smaller - smaller / 32).min(n - 1);
    }
}

/// The names a packed value holds, in its order.
pub fn unpack(text: &str) -> Result<Vec<String>, Error> {
    // Base64 is 4 bytes for 3: a longer value cannot be one this build wrote, nor bounded.
    if text.len() > RAW_BYTES {
        return Err(Error::TooLarge);
    }
    let packed = STANDARD.decode(text.trim()).map_err(|_| Error::NotBase64)?;
    let raw = inflate(&packed)?;
    let raw = String::from_utf8(raw).map_err(|_| Error::NotUtf8)?;
    Ok(raw
        .split('\n')
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect())
}

fn clean(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// How many of the first `names` fit in `bytes`, one a line.
fn within_raw(names: &[String], bytes: usize) -> usize {
    let mut total = 0;
    names
        .iter()
        .take_while(|name| {
            total += name.len() + 1;
            total <= bytes
        })
        .count()
}

fn joined(names: &[String]) -> Vec<u8> {
    let mut raw = names.join("\n").into_bytes();
    if !raw.is_empty() {
        raw.push(b'\n');
    }
    raw
}

fn encoded_len(bytes: usize) -> usize {
    bytes.div_ceil(3) * 4
}

fn deflate(raw: &[u8]) -> Vec<u8> {
    let mut out = gix::zlib::stream::deflate::Write::new(Vec::new(), gix::zlib::Compression::BEST);
    out.write_all(raw)
        .and_then(|()| out.flush())
        .expect("deflating into memory cannot fail");
    out.into_inner()
}

/// `packed` inflated, never past [`RAW_BYTES`].
fn inflate(packed: &[u8]) -> Result<Vec<u8>, Error> {
    let mut state = gix::zlib::Decompress::new();
    let mut out = vec![0; packed.len().saturating_mul(4).clamp(4096, RAW_BYTES + 1)];
    loop {
        let (read, written) = (state.total_in(), state.total_out());
        let input = &packed[usize::try_from(read)
            .unwrap_or(usize::MAX)
            .min(packed.len())..];
        let at = usize::try_from(written).unwrap_or(usize::MAX);
        if at >= out.len() {
            if out.len() > RAW_BYTES {
                return Err(Error::TooLarge);
            }
            out.resize((out.len() * 2).min(RAW_BYTES + 1), 0);
        }
        let status = state
            .decompress(input, &mut out[at..], gix::zlib::FlushDecompress::Finish)
            .map_err(|error| Error::Corrupt {
                reason: error.to_string(),
            })?;
        let done = usize::try_from(state.total_out()).unwrap_or(usize::MAX);
        if done > RAW_BYTES {
            return Err(Error::TooLarge);
        }
        match status {
            gix::zlib::Status::StreamEnd => {
                out.truncate(done);
                return Ok(out);
            }
            _ if state.total_in() == read && state.total_out() == written && at < out.len() => {
                return Err(Error::Corrupt {
                    reason: "the stream ends early".to_string(),
                });
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(count: usize) -> Vec<String> {
        let mut names: Vec<String> = (0..count)
            .map(|n| {
                format!(
                    "tests/unit/test_module_{:03}.py::TestThing{}::test_case_{n}[param-{}]",
                    n / 97,
                    n % 7,
                    n % 5
                )
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn names_pack_and_unpack_to_themselves() {
        let all = names(1000);
        let packed = pack(&all);
        assert_eq!(packed.kept, 1000);
        assert_eq!(unpack(&packed.text), Ok(all));
        let none = pack(&[]);
        assert_eq!((none.kept, unpack(&none.text)), (0, Ok(Vec::new())));
    }

    /// Far more names fit than plain lines in the same bytes, and those that do not are cut
    /// from the end, the value still within its bound.
    #[test]
    fn many_names_are_cut_to_the_bound_from_the_end() {
        let all = names(200_000);
        let packed = pack(&all);
        assert!(packed.text.len() <= PACKED_BYTES, "{}", packed.text.len());
        assert!(
            packed.kept > 10_000 && packed.kept < all.len(),
            "{}",
            packed.kept
        );
        assert_eq!(unpack(&packed.text).unwrap(), all[..packed.kept]);
    }

    /// A newline inside a name would read back as two names.
    #[test]
    fn a_name_with_a_newline_reads_back_as_one() {
        let packed = pack(&["a\nb".to_string()]);
        assert_eq!(unpack(&packed.text), Ok(vec!["a b".to_string()]));
    }

    /// A forged value that inflates without end is refused, never allocated.
    #[test]
    fn a_value_inflating_past_the_bound_does_not_read() {
        let bomb = STANDARD.encode(deflate(&vec![b'a'; RAW_BYTES + 10]));
        assert_eq!(unpack(&bomb), Err(Error::TooLarge));
    }

    #[test]
    fn corrupt_values_do_not_read() {
        assert_eq!(unpack("not base64!"), Err(Error::NotBase64));
        let cut = STANDARD.encode(&deflate(b"a\nb\n")[..4]);
        assert!(
            matches!(unpack(&cut), Err(Error::Corrupt { .. })),
            "{:?}",
            unpack(&cut)
        );
        let garbage = STANDARD.encode(b"garbage that is no zlib stream");
        assert!(matches!(unpack(&garbage), Err(Error::Corrupt { .. })));
    }
}
