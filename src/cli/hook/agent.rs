//! The agent hosts' hooks: one event on stdin, one answer on stdout in the host's protocol.

use std::io::{Read, Write};

use crate::gate::{self, HostRules, Message};
use crate::hosts::{self, CLAUDE_BLOCK_CAP_ENV, Event, Host, Incoming, InputError, Stop};
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
    let (dialect, event, message) = match super::without_callers_git_env(&again) {
        None => answer(host, event_arg, announce, stdin),
        Some(Ok(status)) if status.success() => return Ok(crate::exit::OK),
        Some(Ok(status)) => (
            host,
            None,
            report::could_not_check(&format!(
                "the hook, run again without the caller's GIT_DIR and the like, ended with {status}"
            )),
        ),
        Some(Err(error)) => (
            host,
            None,
            report::could_not_check(&format!(
                "could not run the hook again without the caller's GIT_DIR and the like: {error}"
            )),
        ),
    };
    if let Message::Notice(text) | Message::Block(text) = &message {
        // Hosts show stderr in their verbose modes and logs; stdout is the protocol.
        let _ = writeln!(err, "{}", text.lines().next().unwrap_or_default());
    }
    out.write_all(dialect.render(event.as_ref(), &message).as_bytes())?;
    out.flush()?;
    Ok(crate::exit::OK)
}

/// The dialect to answer in, the event when it could be read, and the answer.
fn answer(
    host: Host,
    event_arg: Option<&str>,
    announce: bool,
    stdin: &mut dyn Read,
) -> (Host, Option<Event>, Message) {
    let mut input = Vec::new();
    if let Err(error) = stdin.take(INPUT_CAP).read_to_end(&mut input) {
        return (
            host,
            None,
            report::could_not_check(&report::error_chain(&InputError::Read(error))),
        );
    }
    let Incoming { host, event } = match host.parse(&input, event_arg) {
        Ok(incoming) => incoming,
        Err(error) => {
            return (
                host,
                None,
                report::could_not_check(&report::error_chain(&error)),
            );
        }
    };
    let message = super::guarded(|| {
        report::reply(&match &event {
            Event::Stop(stop) => gate::stop(&Rules::of(host), stop),
            Event::Start(start) => gate::session_start(start, announce),
            Event::Other { .. } => gate::Reply::Silent,
        })
    });
    (host, Some(event), message)
}

/// A host's rules for the gate, with the host's own settings read from the environment once.
struct Rules {
    host: Host,
    /// `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, Claude Code's own cap on consecutive blocks.
    claude_cap: Option<String>,
}

impl Rules {
    fn of(host: Host) -> Rules {
        Rules {
            host,
            claude_cap: std::env::var(CLAUDE_BLOCK_CAP_ENV).ok(),
        }
    }
}

impl HostRules for Rules {
    fn name(&self) -> &'static str {
        self.host.name()
    }

    fn block_budget(&self, policy: u32) -> u32 {
        self.host.block_budget(policy, self.claude_cap.as_deref())
    }

    fn shows_notices(&self) -> bool {
        self.host.shows_notices()
    }

    fn claim(&self, stop: &Stop, previous_answer_ns: Option<u64>) -> Option<String> {
        stop.claim.clone().or_else(|| {
            let transcript = stop.transcript.as_deref()?;
            hosts::copilot::last_answer(transcript, previous_answer_ns)
        })
    }
}
