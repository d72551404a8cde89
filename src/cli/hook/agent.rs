//! The agent hosts' hooks: one event on stdin, one answer on stdout in the host's protocol.

use std::io::{Read, Write};

use crate::context::Settings;
use crate::context::policy::HookPolicy;
use crate::gate::{self, Message, Reply};
use crate::hosts::{Event, Host, Incoming, InputError, Rules};
use crate::report;

/// An agent host's hook: reads one JSON event on stdin and answers on stdout in the host's
/// protocol. Session starts record the anchor; stops run the gate; a prompt starts a new turn
/// where the last one ended; a subagent in a worktree of its own is anchored at its start and
/// gated at its stop; a task completed or a teammate idle is gated as a stop; other events do
/// nothing. Exit status is 0: hosts read blocks and notices from stdout (ADAPTERS.md), but for
/// Claude Code's TaskCompleted and TeammateIdle, which block by exit status 2 with the reason on
/// stderr.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// At a session start that records an anchor, tell the user that the gate is armed; in a
    /// repository without an armed verify.sh, that the gate is inert there and how to arm it.
    /// Each once per repository (the Claude Code and Codex plugins' and the Gemini CLI
    /// extension's hooks ask for this).
    #[arg(long)]
    pub announce: bool,
}

/// Copilot's camelCase payloads carry no event name: the command line gives it.
#[derive(Debug, clap::Args)]
pub(crate) struct CopilotArgs {
    /// At a session start that records an anchor, tell the user that the gate is armed; in a
    /// repository without an armed verify.sh, that the gate is inert there and how to arm it.
    /// Each once per repository.
    #[arg(long)]
    pub announce: bool,
    /// The event, as named in Copilot's hook configuration: sessionStart, agentStop or
    /// userPromptSubmitted. Not needed for payloads that name their event (hook_event_name).
    pub event: Option<String>,
}

/// `git prove-it hook <host>`, one subcommand per host of the registry (`hosts::Host::all`), so
/// that a host added in `hosts/` gets its hook command with nothing to change here.
#[derive(Debug)]
pub(crate) struct AgentHook {
    pub host: Host,
    pub announce: bool,
    /// The event's name, for hosts that take it on the command line.
    pub event: Option<String>,
}

impl clap::FromArgMatches for AgentHook {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let (name, sub) = matches
            .subcommand()
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::MissingSubcommand))?;
        let host = Host::named(name)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidSubcommand))?;
        Ok(if host.takes_event_arg() {
            let args = CopilotArgs::from_arg_matches(sub)?;
            AgentHook {
                host,
                announce: args.announce,
                event: args.event,
            }
        } else {
            AgentHook {
                host,
                announce: Args::from_arg_matches(sub)?.announce,
                event: None,
            }
        })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Subcommand for AgentHook {
    fn augment_subcommands(mut cmd: clap::Command) -> clap::Command {
        use clap::Args as _;
        for &host in Host::all() {
            let sub = clap::Command::new(host.name());
            let sub = if host.takes_event_arg() {
                CopilotArgs::augment_args(sub)
            } else {
                Args::augment_args(sub)
            };
            // After the arguments, whose struct's doc comment would be the about otherwise.
            cmd = cmd.subcommand(sub.about(report::host::hook_help(host)).long_about(None));
        }
        cmd
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        Host::named(name).is_some()
    }
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
    let (dialect, event, reply, rules) = answer(host, event_arg, announce, stdin);
    // The rules the gate answered with, built once; where no event was read, the dialect's.
    let rules = rules.unwrap_or_else(|| dialect.rules(&env_var));
    let message = report::reply(&reply, rules.notices_as_blocks(event.as_ref()));
    if let Message::Block(text) = &message
        && dialect.blocks_by_exit(event.as_ref())
    {
        // The host reads this event's block from the exit status and sends stderr back.
        writeln!(err, "{text}")?;
        return Ok(crate::exit::HOOK_BLOCK);
    }
    if let Message::Notice(text) | Message::Block(text) = &message {
        // Hosts show stderr in their verbose modes and logs; stdout is the protocol.
        let _ = writeln!(err, "{}", text.lines().next().unwrap_or_default());
    }
    // A prompt, or a tool call's end, is never answered on stdout (`gate::prompt`,
    // `gate::after_tool`): what it says goes to stderr only.
    let message = match event {
        Some(Event::Prompt(_) | Event::AfterTool(_)) => Message::Silent,
        _ => message,
    };
    out.write_all(dialect.render(event.as_ref(), &message).as_bytes())?;
    out.flush()?;
    Ok(crate::exit::OK)
}

/// A variable of the hook's environment, where the host's settings for this run are.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The dialect to answer in, the event when it could be read, the gate's reply, and the host's
/// rules it was given (read once, from the hook's environment and the host's settings).
fn answer(
    host: Host,
    event_arg: Option<&str>,
    announce: bool,
    stdin: &mut dyn Read,
) -> (Host, Option<Event>, Reply, Option<Rules>) {
    let mut input = Vec::new();
    if let Err(error) = stdin.take(INPUT_CAP).read_to_end(&mut input) {
        let error = InputError::Read(error);
        return (
            host,
            None,
            Reply::CouldNotCheck(report::error_chain(&error)),
            None,
        );
    }
    let Incoming { host, event } = match host.parse(&input, event_arg) {
        Ok(incoming) => incoming,
        Err(error) => {
            return (
                host,
                None,
                Reply::CouldNotCheck(report::error_chain(&error)),
                None,
            );
        }
    };
    // The hook's environment, which a session's anchor records and its later hook calls must
    // match (`Host::environment`).
    let environment = Host::environment();
    let rules = host.rules(&env_var).with_environment(environment.clone());
    let hook = HookPolicy::resolve(&Settings::environment());
    let reply = super::guarded(|| match &event {
        Event::Stop(stop) => gate::stop(&rules, &hook, stop),
        Event::Start(start) => gate::session_start(&hook, start, announce, Some(&environment)),
        Event::Prompt(prompt) => gate::prompt(&rules, &hook, prompt),
        Event::AfterTool(event) => gate::after_tool(&rules, event),
        Event::SubagentStart { start, of } => {
            gate::subagent_start(&rules, &hook, start, of, Some(&environment))
        }
        Event::SubagentStop { stop, .. } => gate::subagent_stop(&rules, &hook, stop),
        Event::TaskDone(stop) => gate::stop(&rules, &hook, stop),
        Event::Other { .. } => Reply::Silent,
    });
    (host, Some(event), reply, Some(rules))
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory as _, Parser as _};

    use super::*;

    /// A host added to the registry gets `git prove-it hook <name>` with nothing to change in
    /// `cli/`: its help, and the event argument where its payloads carry no event name.
    #[test]
    fn every_registered_host_has_its_hook_subcommand() {
        let cli = crate::cli::Cli::command();
        let hook = cli.find_subcommand("hook").expect("git prove-it hook");
        for &host in Host::all() {
            let sub = hook
                .find_subcommand(host.name())
                .unwrap_or_else(|| panic!("no hook subcommand for {}", host.name()));
            assert_eq!(
                sub.get_about().map(ToString::to_string).as_deref(),
                Some(crate::report::host::hook_help(host))
            );
            assert_eq!(
                sub.get_positionals().count() == 1,
                host.takes_event_arg(),
                "{}",
                host.name()
            );
            assert!(sub.get_arguments().any(|arg| arg.get_id() == "announce"));
        }
        let parsed =
            crate::cli::Cli::try_parse_from(["git-prove-it", "hook", "copilot", "agentStop"]);
        assert!(parsed.is_ok(), "{parsed:?}");
        assert!(
            crate::cli::Cli::try_parse_from(["git-prove-it", "hook", "codex", "agentStop"])
                .is_err()
        );
    }
}
