//! The hosts by name (`git prove-it hook <host>`, `init --host <host>`), and the registry that
//! maps each name to its adapter. Everything a host does is its adapter's; `Host` only
//! dispatches, and holds the rules that combine what adapters say (the block budget).

use std::path::Path;

use clap::ValueEnum as _;

use super::adapter::Adapter;
use super::trust::Trust;
use super::wiring::{self, HookEntry, Wired, Wiring};
use super::{Event, InputError, Stop, fields};
use super::{claude, codex, copilot, cursor, gemini, qwen, vscode};
use crate::gate::{HostRules, Message};

/// An agent host, as its hook protocol (its dialect) identifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Host {
    /// Claude Code: .claude/settings.json
    Claude,
    /// Codex CLI: .codex/hooks.json
    Codex,
    /// Gemini CLI: .gemini/settings.json
    Gemini,
    /// GitHub Copilot CLI: .github/hooks/prove-it-copilot.json
    Copilot,
    /// Cursor: .cursor/hooks.json (follow-up messages; Cursor cannot block)
    Cursor,
    /// VS Code agent hooks: .github/hooks/prove-it-vscode.json
    Vscode,
    /// Qwen Code: .qwen/settings.json
    Qwen,
}

/// An event, and the host whose dialect it came in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Incoming {
    pub host: Host,
    pub event: Event,
}

impl Host {
    /// The registry: each host's adapter.
    fn adapter(self) -> &'static dyn Adapter {
        match self {
            Host::Claude => &claude::Claude,
            Host::Codex => &codex::Codex,
            Host::Gemini => &gemini::Gemini,
            Host::Copilot => &copilot::Copilot,
            Host::Cursor => &cursor::Cursor,
            Host::Vscode => &vscode::Vscode,
            Host::Qwen => &qwen::Qwen,
        }
    }

    /// Every host, in the order `--help` lists them.
    pub(crate) fn all() -> &'static [Host] {
        Host::value_variants()
    }

    /// The name in `git prove-it hook <name>`, in proofs and in the ledger.
    pub(crate) fn name(self) -> &'static str {
        self.adapter().name()
    }

    /// The host's name for people.
    pub(crate) fn title(self) -> &'static str {
        self.adapter().title()
    }

    /// Whether `git prove-it hook <name>` takes the event's name as an argument.
    pub(crate) fn takes_event_arg(self) -> bool {
        self.adapter().takes_event_arg()
    }

    /// The host whose name in `git prove-it hook <name>` is `name`.
    pub(crate) fn named(name: &str) -> Option<Host> {
        Host::all().iter().copied().find(|host| host.name() == name)
    }

    /// Whether the host shows a hook's notice (`systemMessage`) to the user. Where it does not,
    /// the turn's end unverified is told to the agent as one last block, to report it.
    pub(crate) fn shows_notices(self) -> bool {
        self.adapter().shows_notices()
    }

    /// Whether a notice outside the gate's own count is told to the agent as a block in answer
    /// to `event` (None: the input could not be read).
    pub(crate) fn notices_as_blocks(self, event: Option<&Event>) -> bool {
        self.adapter().notices_as_blocks(event)
    }

    /// The blocks the gate may give in one turn: the policy's, kept below the host's cap so
    /// that the gate's own "ended unverified" (and, where notices are not shown, the last block
    /// that carries it) is what ends the turn, never the host giving up silently.
    /// `cap` is the host's cap as this run's environment sets it; `shows_notices`, whether
    /// this run shows them ([`Rules`]).
    fn block_budget(policy: u32, cap: Option<u32>, shows_notices: bool) -> u32 {
        let Some(cap) = cap else {
            return policy;
        };
        let last_block = u32::from(!shows_notices);
        policy.min(cap.saturating_sub(1 + last_block))
    }

    /// Read one event from the hook's stdin. `arg` is the event name given on the command line
    /// (Copilot's camelCase payloads carry none). The host in the answer is the dialect the
    /// payload speaks: VS Code reads Claude Code's settings and sends its own payload.
    pub(crate) fn parse(self, input: &[u8], arg: Option<&str>) -> Result<Incoming, InputError> {
        let payload = fields::object(input)?;
        let host = self.adapter().dialect(&payload).unwrap_or(self);
        Ok(Incoming {
            host,
            event: host.adapter().parse(&payload, arg)?,
        })
    }

    /// The hook's stdout for a message in answer to `event` (None: the input could not be read);
    /// the exit code is always 0.
    pub(crate) fn render(self, event: Option<&Event>, message: &Message) -> String {
        self.adapter()
            .answer(event, message)
            .map(|value| format!("{value}\n"))
            .unwrap_or_default()
    }

    /// The host's own cap on blocks as `var` sets it, when it holds the gate's budget below
    /// `policy`: the cap, the budget, and the setting that sets the cap.
    pub(crate) fn cap_below(
        self,
        policy: u32,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Option<(u32, u32, &'static str)> {
        let setting = self.adapter().cap_setting()?;
        let cap = self.adapter().cap(var)?;
        let budget = Host::block_budget(policy, Some(cap), self.shows_notices());
        (budget < policy).then_some((cap, budget, setting))
    }

    /// Whether a block in answer to `event` is told by the hook's exit status (2, the reason
    /// on stderr) rather than on stdout.
    pub(crate) fn blocks_by_exit(self, event: Option<&Event>) -> bool {
        self.adapter().blocks_by_exit(event)
    }

    /// The agent's claim at `stop`, for the ledger; `previous_answer_ns` is the time of the
    /// gate's previous answer in this session (ns since the epoch).
    pub(crate) fn claim(self, stop: &Stop, previous_answer_ns: Option<u64>) -> Option<String> {
        self.adapter().claim(stop, previous_answer_ns)
    }

    /// The host's rules for this run, as the hook's environment (`var`) gives its settings:
    /// its cap on blocks (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`...), whether the run is headless,
    /// and the project folder the host names.
    pub(crate) fn rules(self, var: &dyn Fn(&str) -> Option<String>) -> Rules {
        Rules {
            host: self,
            cap: self.adapter().cap(var),
            headless: self.adapter().headless(var),
            project_dir: self.adapter().project_dir(var),
            environment: None,
        }
    }

    /// The variables some host sets for some of its hook calls and not others (ADAPTERS.md),
    /// every host's: left out of every environment's digest, so that a stop and a `run` in the
    /// same environment agree whichever host, if any, called them.
    pub(crate) fn per_event_env() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Host::all()
            .iter()
            .flat_map(|host| host.adapter().per_event_env().iter().copied())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// This process's environment as a hook's (`verify::Environment`), without `per_event_env`.
    pub(crate) fn environment() -> crate::gate::Environment {
        crate::gate::Environment::of_process(&Host::per_event_env())
    }

    /// The project configuration file, relative to the worktree root.
    pub(crate) fn config_path(self) -> &'static str {
        self.adapter().wiring().path
    }

    /// Merge our hook entries into the configuration `existing` (None: no file yet); see
    /// [`wiring::Scheme::wire`].
    pub(crate) fn wire(self, existing: Option<&str>) -> Result<Wired, wiring::Error> {
        self.adapter().wiring().wire(existing)
    }

    /// The key of a hook's timeout in the host's configuration and how many milliseconds one
    /// unit of it is: `("timeout", 1)` for Gemini, `("timeoutSec", 1000)` for Copilot; None
    /// where the host has no such setting. For hints in the host's own names and units.
    pub(crate) fn timeout_field(self) -> Option<(&'static str, u64)> {
        let scheme = self.adapter().wiring();
        let key = match scheme.layout {
            wiring::Layout::Grouped { timeout_key } => Some(timeout_key),
            wiring::Layout::Flat { timeout_key, .. } => timeout_key,
        };
        key.map(|key| (key, scheme.timeout_unit_ms))
    }

    /// Per entry: whether our hook is wired in `config`, with its timeout in seconds.
    pub(crate) fn wired_timeouts(
        self,
        config: &str,
    ) -> Result<Vec<(HookEntry, Wiring)>, wiring::Error> {
        self.adapter().wiring().wired_timeouts(config)
    }

    /// Whether the host, started in a subdirectory of the worktree, still reads the project's
    /// hooks at its root.
    pub(crate) fn reads_project_hooks_below_root(self) -> bool {
        self.adapter().reads_project_hooks_below_root()
    }

    /// The host's user-level configuration file, and whether it wires the gate's hooks (all
    /// of them), where the host has one.
    pub(crate) fn user_wiring(self) -> Option<(std::path::PathBuf, bool)> {
        let file = self.adapter().user_config()?;
        let wired = super::trust::read_record(&file)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| self.wired_timeouts(&text).ok())
            .is_some_and(|entries| {
                entries
                    .iter()
                    .all(|(_, wiring)| matches!(wiring, Wiring::Wired(_)))
            });
        Some((file, wired))
    }

    /// The user-level file to wire so that a session started in a subdirectory is gated,
    /// where the host reads the project's hooks only where it starts and that file does not
    /// wire the gate yet.
    pub(crate) fn user_level_to_wire(self) -> Option<std::path::PathBuf> {
        if self.reads_project_hooks_below_root() {
            return None;
        }
        match self.user_wiring()? {
            (file, false) => Some(file),
            (_, true) => None,
        }
    }

    /// The file where the host records the folders it trusts, and whether it trusts `workdir`;
    /// None for hosts that do not ask.
    pub(crate) fn trust_record(self, workdir: &Path) -> Option<(bool, std::path::PathBuf)> {
        self.adapter().trust_record(&canonical(workdir))
    }

    /// The settings of the host's layers that keep it from running the gate's hooks in
    /// `workdir`, each with its file and key.
    pub(crate) fn hooks_off(self, workdir: &Path) -> Vec<super::HooksOff> {
        self.adapter().hooks_off(&canonical(workdir))
    }

    /// Whether the host is likely to run `workdir`'s project hooks, where it asks for trust and
    /// records it somewhere readable; None for hosts that do not ask.
    pub(crate) fn trust(self, workdir: &Path) -> Option<Trust> {
        self.adapter().trust(&canonical(workdir))
    }
}

/// `path` as the hosts record folders, links resolved; as given when it cannot be resolved.
fn canonical(path: &Path) -> std::path::PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

/// What the gate needs of a host (`gate::HostRules`), with the host's own settings as the
/// hook's environment gave them.
pub(crate) struct Rules {
    host: Host,
    /// The host's cap on consecutive blocks in this run, if it has one.
    cap: Option<u32>,
    /// A headless run shows no notices, whatever the host shows a person at its screen.
    headless: bool,
    /// The folder the host says the session's project is in (`CLAUDE_PROJECT_DIR`).
    project_dir: Option<std::path::PathBuf>,
    /// The hook's environment, when it is to be compared with the session's anchor.
    environment: Option<crate::gate::Environment>,
}

impl Rules {
    /// These rules with the hook's environment (`Host::environment`) to compare with the
    /// session's.
    pub(crate) fn with_environment(self, environment: crate::gate::Environment) -> Rules {
        Rules {
            environment: Some(environment),
            ..self
        }
    }

    /// Whether a notice outside the gate's own count (a skip, the gate's own failure) is told
    /// to the agent as a block in answer to `event` (None: the input could not be read): the
    /// host's rule, or, in a headless run of a host that shows notices otherwise, Copilot's
    /// (`copilot::notice_becomes_a_block`), so that the notice reaches the run's output.
    pub(crate) fn notices_as_blocks(&self, event: Option<&Event>) -> bool {
        self.host.notices_as_blocks(event)
            || (self.headless && copilot::notice_becomes_a_block(event))
    }
}

impl HostRules for Rules {
    fn name(&self) -> &'static str {
        self.host.name()
    }

    fn block_budget(&self, policy: u32) -> u32 {
        Host::block_budget(policy, self.cap, self.shows_notices())
    }

    fn shows_notices(&self) -> bool {
        self.host.shows_notices() && !self.headless
    }

    fn claim(&self, stop: &Stop, previous_answer_ns: Option<u64>) -> Option<String> {
        self.host.claim(stop, previous_answer_ns)
    }

    fn project_dir(&self) -> Option<std::path::PathBuf> {
        self.project_dir.clone()
    }

    fn environment(&self) -> Option<&crate::gate::Environment> {
        self.environment.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn each_adapter_answers_to_its_command_line_name() {
        for &host in Host::all() {
            let value = host.to_possible_value().unwrap();
            assert_eq!(host.name(), value.get_name());
        }
    }

    /// The hook's environment, with `vars` set.
    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(name, value)| ((*name).to_string(), (*value).to_string()))
            .collect();
        move |name| {
            vars.iter()
                .find(|(set, _)| set == name)
                .map(|(_, value)| value.clone())
        }
    }

    /// The budget of a run with `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` set to `claude_cap`.
    fn budget(host: Host, policy: u32, claude_cap: Option<&str>) -> u32 {
        let vars: Vec<(&str, &str)> = claude_cap
            .map(|cap| (claude::CLAUDE_BLOCK_CAP_ENV, cap))
            .into_iter()
            .collect();
        host.rules(&env(&vars)).block_budget(policy)
    }

    #[test]
    fn the_budget_stays_below_each_hosts_cap() {
        // Claude Code ends a turn after 8 blocks: at most 7, and its notice shows the yield.
        assert_eq!(budget(Host::Claude, 3, None), 3);
        assert_eq!(budget(Host::Claude, 7, None), 7);
        assert_eq!(budget(Host::Claude, 7, Some("5")), 4);
        assert_eq!(budget(Host::Claude, 7, Some("not a number")), 7);
        // Copilot shows no notice: the yield is one more block, and both stay below 8.
        assert_eq!(budget(Host::Copilot, 7, None), 6);
        assert_eq!(budget(Host::Cursor, 7, None), 3);
        // No cap of their own: the policy is the only loop guard.
        assert_eq!(budget(Host::Codex, 7, None), 7);
        assert_eq!(budget(Host::Gemini, 3, None), 3);
        assert_eq!(budget(Host::Claude, 3, Some("1")), 0);
        // `claude -p` shows no notice: its yield is one more block, below the cap too.
        let headless = env(&[("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")]);
        assert_eq!(Host::Claude.rules(&headless).block_budget(7), 6);
        assert_eq!(Host::Claude.rules(&headless).block_budget(3), 3);
        // Qwen Code ends a turn after 8 blocks, or its own variable's count, and shows no
        // notice: its yield is one more block, below the cap too.
        let qwen = |vars: &[(&str, &str)]| Host::Qwen.rules(&env(vars)).block_budget(7);
        assert_eq!(qwen(&[]), 6);
        assert_eq!(qwen(&[("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "5")]), 3);
        assert_eq!(qwen(&[("QWEN_CODE_STOP_HOOK_BLOCK_CAP", " 2 ")]), 0);
        assert_eq!(qwen(&[("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "0")]), 6);
        assert_eq!(qwen(&[("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "2.5")]), 6);
        assert_eq!(qwen(&[("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "")]), 6);
        assert_eq!(qwen(&[(claude::CLAUDE_BLOCK_CAP_ENV, "3")]), 6);
        assert_eq!(budget(Host::Claude, 7, None), 7);
    }

    #[test]
    fn notices_are_shown_by_claude_and_vscode_only() {
        let shown: Vec<&str> = Host::all()
            .iter()
            .filter(|host| host.shows_notices())
            .map(|host| host.name())
            .collect();
        // Gemini CLI shows them to a person at its screen only, and the hook cannot tell.
        assert_eq!(shown, ["claude", "vscode"]);
    }

    /// `claude -p` ended an unverified turn with the model's "All tests
    /// pass." as its result, the yield in a `systemMessage` that its output never shows.
    #[test]
    fn a_headless_claude_run_shows_no_notices() {
        let interactive = env(&[
            ("CLAUDE_CODE_ENTRYPOINT", "cli"),
            ("CLAUDE_CODE_SESSION_ATTENDED", "1"),
        ]);
        assert!(Host::Claude.rules(&interactive).shows_notices());
        assert!(Host::Claude.rules(&env(&[])).shows_notices());
        for headless in [
            env(&[
                ("CLAUDE_CODE_ENTRYPOINT", "sdk-cli"),
                ("CLAUDE_CODE_SESSION_ATTENDED", "0"),
            ]),
            env(&[("CLAUDE_CODE_ENTRYPOINT", "sdk-ts")]),
            env(&[("CLAUDE_CODE_SESSION_ATTENDED", "0")]),
        ] {
            let rules = Host::Claude.rules(&headless);
            assert!(!rules.shows_notices());
            // A skip or the gate's own failure is told to the agent at a turn's first stop.
            assert!(rules.notices_as_blocks(None));
        }
        assert!(!Host::Claude.rules(&interactive).notices_as_blocks(None));
        // Other hosts read nothing of Claude Code's variables.
        let headless = env(&[("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")]);
        assert!(Host::Vscode.rules(&headless).shows_notices());
    }

    /// The first JSON block of the host's section in ADAPTERS.md.
    fn documented(host: Host) -> Value {
        let doc = include_str!("../../ADAPTERS.md");
        let section = doc
            .split("\n## ")
            .find(|section| section.starts_with(host.title()))
            .unwrap_or_else(|| panic!("ADAPTERS.md has no section for {}", host.title()));
        let block = section
            .split("```json\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .unwrap_or_else(|| panic!("no JSON snippet for {}", host.title()));
        serde_json::from_str(block).unwrap()
    }

    /// Each host's after-tool event, as its payload comes, wakes the prover and is answered
    /// with nothing the host shows: no key a host could read as a block or a message.
    #[test]
    fn each_hosts_after_tool_event_is_read_and_answered_with_nothing() {
        let claude = br#"{"session_id":"86ca","transcript_path":"/t.jsonl","cwd":"/repo","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"/repo/a.txt"},"tool_response":{"success":true},"tool_use_id":"toolu_01"}"#;
        let codex = br#"{"session_id":"86ca","turn_id":"01b3","transcript_path":null,"cwd":"/repo","hook_event_name":"PostToolUse","model":"gpt-5.1-codex","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":"a.txt","tool_use_id":"call_1"}"#;
        let gemini = br#"{"session_id":"86ca","transcript_path":"/t.json","cwd":"/repo","hook_event_name":"AfterTool","timestamp":"2026-11-29T18:49:48.461Z","tool_name":"write_file","tool_input":{"file_path":"a.txt"},"tool_response":{"llmContent":"ok"}}"#;
        let qwen = br#"{"session_id":"86ca","transcript_path":"/t.jsonl","cwd":"/repo","hook_event_name":"PostToolUse","timestamp":"2026-12-04T21:42:25.087Z","permission_mode":"yolo","tool_name":"write_file","tool_input":{},"tool_response":{},"tool_use_id":"toolu_1"}"#;
        let copilot_camel = br#"{"sessionId":"86ca","timestamp":1795978336226,"cwd":"/repo","toolName":"bash","toolArgs":"{}","toolResult":{"resultType":"success"}}"#;
        let copilot_snake = br#"{"session_id":"86ca","cwd":"/repo","hook_event_name":"PostToolUse","tool_name":"bash"}"#;
        let vscode = br#"{"timestamp":"2026-12-05T10:30:00.000Z","cwd":"/repo","sessionId":"86ca","hookEventName":"PostToolUse","transcript_path":"/t.json","tool_name":"editFiles","tool_input":{"files":["src/main.ts"]},"tool_use_id":"tool-123","tool_response":"ok"}"#;
        let cursor_edit = br#"{"conversation_id":"86ca","generation_id":"g1","hook_event_name":"afterFileEdit","workspace_roots":["/repo"],"file_path":"/repo/a.txt","edits":[{"old_string":"a","new_string":"b"}]}"#;
        let cursor_shell = br#"{"conversation_id":"86ca","generation_id":"g1","hook_event_name":"afterShellExecution","workspace_roots":["/repo"],"command":"ls","output":"a.txt"}"#;
        let cases: [(Host, &[u8], Option<&str>); 9] = [
            (Host::Claude, claude, None),
            (Host::Codex, codex, None),
            (Host::Gemini, gemini, None),
            (Host::Qwen, qwen, None),
            (Host::Copilot, copilot_camel, Some("postToolUse")),
            (Host::Copilot, copilot_snake, None),
            (Host::Vscode, vscode, None),
            (Host::Cursor, cursor_edit, None),
            (Host::Cursor, cursor_shell, None),
        ];
        for (host, payload, arg) in cases {
            let incoming = host.parse(payload, arg).unwrap();
            assert_eq!(
                incoming.event,
                Event::AfterTool(crate::hosts::AfterTool {
                    session: "86ca".into(),
                    cwd: "/repo".into(),
                }),
                "{}",
                host.title()
            );
            let answer = incoming
                .host
                .render(Some(&incoming.event), &Message::Silent);
            // Cursor answers every hook in JSON, with nothing in it here.
            let nothing = if host == Host::Cursor { "{}\n" } else { "" };
            assert_eq!(answer, nothing, "{}", host.title());
        }
    }

    #[test]
    fn each_host_is_wired_as_adapters_md_documents_it() {
        for &host in Host::all() {
            let wired = host.wire(None).unwrap();
            let ours: Value = serde_json::from_str(&wired.text).unwrap();
            assert_eq!(ours, documented(host), "{}", host.title());
            let again = host.wire(Some(&wired.text)).unwrap();
            assert!(again.added.is_empty(), "{}", host.title());
        }
    }

    #[test]
    fn each_stop_hook_outlasts_verify_sh_in_the_hosts_own_unit() {
        for &host in Host::all() {
            let wired = host.wire(None).unwrap();
            let timeouts = host.wired_timeouts(&wired.text).unwrap();
            let stop = timeouts.iter().find(|(entry, _)| entry.stop).unwrap();
            match host {
                Host::Cursor => assert_eq!(stop.1, Wiring::Wired(None)),
                _ => assert_eq!(stop.1, Wiring::Wired(Some(900)), "{}", host.title()),
            }
        }
        let gemini = Host::Gemini.wire(None).unwrap().text;
        assert!(gemini.contains("900000"), "milliseconds: {gemini}");
    }
}
