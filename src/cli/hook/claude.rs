use std::io::{Read, Write};

use super::gate;
use crate::hosts::{Event, InputError, claude};
use crate::report::{self, Message};

/// Claude Code's hooks: reads one JSON event on stdin and answers on stdout in Claude Code's
/// protocol. SessionStart records the anchor; Stop runs the gate; other events do nothing.
///
/// Wire it with hooks/claude-settings.json. Exit status is always 0: a block is
/// {"decision":"block","reason":...} on stdout, a notice {"systemMessage":...}.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Hook input larger than this is not an event.
const INPUT_CAP: u64 = 16 * 1024 * 1024;

pub(crate) fn run(
    _args: &Args,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, crate::cli::Failure> {
    let message = match super::without_callers_git_env(&["hook", "claude"]) {
        None => super::guarded(|| answer(stdin)),
        Some(Ok(status)) if status.success() => return Ok(crate::exit::OK),
        Some(Ok(status)) => report::could_not_check(&format!(
            "the hook, run again without the caller's GIT_DIR and the like, ended with {status}"
        )),
        Some(Err(error)) => report::could_not_check(&format!(
            "could not run the hook again without the caller's GIT_DIR and the like: {error}"
        )),
    };
    if let Message::Notice(text) | Message::Block(text) = &message {
        // Claude Code shows stderr in its verbose mode and transcript; stdout is the protocol.
        let _ = writeln!(err, "{}", text.lines().next().unwrap_or_default());
    }
    out.write_all(claude::render(&message).as_bytes())?;
    out.flush()?;
    Ok(crate::exit::OK)
}

fn answer(stdin: &mut dyn Read) -> Message {
    let mut input = Vec::new();
    if let Err(error) = stdin.take(INPUT_CAP).read_to_end(&mut input) {
        return report::could_not_check(&chain(&InputError::Read(error)));
    }
    match claude::parse(&input) {
        Err(error) => report::could_not_check(&chain(&error)),
        Ok(Event::Stop(stop)) => gate::stop(claude::HOST, &stop),
        Ok(Event::Start(start)) => match gate::session_start(&start) {
            Ok(message) => message,
            Err(error) => Message::Notice(format!(
                "prove-it: could not record this session's anchor: {error:#}. Stops in this \
                 session will count as changes."
            )),
        },
        Ok(Event::Other { .. }) => Message::Silent,
    }
}

fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
