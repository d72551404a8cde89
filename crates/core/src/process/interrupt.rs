//! Watching for the signals that ask git-prove-it to stop, so that the children it started are
//! killed (or asked to stop) rather than left running after it is gone.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// A flag raised by Ctrl-C, SIGTERM or SIGHUP, for `Request::interrupt`.
pub fn interrupt_flag() -> std::io::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        signal_hook::flag::register(signal, Arc::clone(&flag))?;
    }
    Ok(flag)
}
