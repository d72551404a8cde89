//! The agent hosts' hooks: one event on stdin, one answer on stdout in the host's protocol.

use std::io::{Read, Write};

use crate::gate::{self, Message, Reply};
use crate::hosts::{CLAUDE_BLOCK_CAP_ENV, Event, Host, Incoming, InputError};
use crate::report;

/// An agent host's hook: reads one JSON event on stdin and answers on stdout in the host's
/// protocol. Session starts record the anchor; stops run the gate; other events do nothing.
/// Exit status is always 0: hosts read blocks and notices from stdout (ADAPTERS.md).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// At a session start that records an anchor, tell the user that the gate is armed: once
    /// per repository (the Claude Code plugin's hooks ask for this).
    #[arg(long)]
    pub announce: bool,
}

/// Copilot's camelCase payloads carry no event name: the command line gives it.
#[derive(Debug, clap::Args)]
pub(crate) struct CopilotArgs {
    /// At a session start that records an anchor, tell the user that the gate is armed, once
    /// per repository.
    #[arg(long)]
    pub announce: bool,
    /// The event, as named in Copilot's hook configuration: sessionStart or agentStop. Not
    /// needed for payloads that name their event (hook_event_name).
    pub event: Option<String>,
}

/// Hook input larger than this is not an event.
const INPUT_CAP: u64 = 16 * 1024 * 1024;

pub(crate) fn run(
    host: Host,
    event_arg: Option<&str>,
    announce: bool,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, crate::cli::Failure> {
    let mut again = vec!["hook", host.name()];
    again.extend(event_arg);
    if announce {
        again.push("--announce");
    }
    let (dialect, event, reply) = match super::without_callers_git_env(&again) {
        None => answer(host, event_arg, announce, stdin),
        Some(Ok(status)) if status.success() => return Ok(crate::exit::OK),
        Some(Ok(status)) => (
            host,
            None,
            Reply::CouldNotCheck(format!(
                "the hook, run again without the caller's GIT_DIR and the like, ended with {status}"
            )),
        ),
        Some(Err(error)) => (
            host,
            None,
            Reply::CouldNotCheck(format!(
                "could not run the hook again without the caller's GIT_DIR and the like: {error}"
            )),
        ),
    };
    let message = report::reply(&reply, dialect.notices_as_blocks(event.as_ref()));
    if let Message::Notice(text) | Message::Block(text) = &message {
        // Hosts show stderr in their verbose modes and logs; stdout is the protocol.
        let _ = writeln!(err, "{}", text.lines().next().unwrap_or_default());
    }
    out.write_all(dialect.render(event.as_ref(), &message).as_bytes())?;
    out.flush()?;
    Ok(crate::exit::OK)
}

/// The dialect to answer in, the event when it could be read, and the gate's reply.
fn answer(
    host: Host,
    event_arg: Option<&str>,
    announce: bool,
    stdin: &mut dyn Read,
) -> (Host, Option<Event>, Reply) {
    let mut input = Vec::new();
    if let Err(error) = stdin.take(INPUT_CAP).read_to_end(&mut input) {
        let error = InputError::Read(error);
        return (
            host,
            None,
            Reply::CouldNotCheck(report::error_chain(&error)),
        );
    }
    let Incoming { host, event } = match host.parse(&input, event_arg) {
        Ok(incoming) => incoming,
        Err(error) => {
            return (
                host,
                None,
                Reply::CouldNotCheck(report::error_chain(&error)),
            );
        }
    };
    let reply = super::guarded(|| match &event {
        Event::Stop(stop) => {
            gate::stop(&host.rules(std::env::var(CLAUDE_BLOCK_CAP_ENV).ok()), stop)
        }
        Event::Start(start) => gate::session_start(start, announce),
        Event::Other { .. } => Reply::Silent,
    });
    (host, Some(event), reply)
}
