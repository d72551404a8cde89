//! What `--verbose` streams: a script's output as it runs, and with several at once each line
//! after its run's name, so that the interleaved lines stay readable.

use std::io::{self, Write};

/// Each line written to `inner` after `[name] `.
pub(crate) struct Prefixed<W> {
    inner: W,
    prefix: Vec<u8>,
    at_line_start: bool,
}

impl<W: Write> Prefixed<W> {
    pub(crate) fn new(name: &str, inner: W) -> Self {
        Prefixed {
            inner,
            prefix: format!("[{name}] ").into_bytes(),
            at_line_start: true,
        }
    }
}

impl<W: Write> Write for Prefixed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut out = Vec::with_capacity(buf.len() + self.prefix.len());
        for &byte in buf {
            if self.at_line_start {
                out.extend_from_slice(&self.prefix);
            }
            out.push(byte);
            self.at_line_start = byte == b'\n';
        }
        // One write for the whole chunk, so that another run's lines do not cut into it.
        self.inner.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `--verbose`'s stream: stderr, each run's lines after its name where several run at once.
pub(crate) fn to_stderr(name: Option<&str>) -> Box<dyn Write + Send> {
    match name {
        Some(name) => Box::new(Prefixed::new(name, io::stderr())),
        None => Box::new(io::stderr()),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::Prefixed;

    #[test]
    fn each_line_is_named_however_the_writes_cut_it() {
        let mut out = Prefixed::new("api", Vec::new());
        out.write_all(b"one\ntw").unwrap();
        out.write_all(b"o\n\nthree").unwrap();
        assert_eq!(
            String::from_utf8(out.inner).unwrap(),
            "[api] one\n[api] two\n[api] \n[api] three"
        );
    }
}
