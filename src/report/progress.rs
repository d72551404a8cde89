use std::io::{IsTerminal, Write};
use std::time::Duration;

/// A one-line elapsed-time display on a terminal's stderr while verify.sh runs; silent elsewhere.
pub(crate) struct Progress {
    enabled: bool,
    shown: bool,
}

/// A run longer than this earns the hint that slower checks belong in CI.
const SLOW: Duration = Duration::from_secs(60);

impl Progress {
    /// Show progress only when stderr is a terminal and output is not being streamed to it.
    pub(crate) fn new(streaming: bool) -> Self {
        Progress {
            enabled: !streaming && std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    pub(crate) fn tick(&mut self, elapsed: Duration) {
        if self.enabled {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r\x1b[2Kprove-it: running verify.sh ... {}s",
                elapsed.as_secs()
            );
            let _ = err.flush();
            self.shown = true;
        }
    }

    /// Clear the line, and say so when the run was slow enough to belong in CI.
    pub(crate) fn finish(&mut self, elapsed: Duration, err: &mut dyn Write) {
        if self.shown {
            let _ = write!(err, "\r\x1b[2K");
        }
        if elapsed > SLOW {
            let _ = writeln!(
                err,
                "hint: verify.sh took {}s; keep it under a minute, slower checks belong in CI",
                elapsed.as_secs()
            );
        }
    }
}
