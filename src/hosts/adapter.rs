//! What every host's module provides: the one trait an agent host implements, so that adding a
//! host is its own file and one line in the registry (`host.rs`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::fields::Object;
use super::trust::{HooksOff, Trust};
use super::wiring::Scheme;
use super::{Event, Host, InputError, Stop};
use crate::gate::Message;

/// One agent host: how it talks to the hook, how `init` wires it and how `doctor` reads its
/// trust. Implemented by a unit struct in the host's module.
pub(crate) trait Adapter: Sync {
    /// The name in `git prove-it hook <name>`, in proofs and in the ledger.
    fn name(&self) -> &'static str;

    /// The host's name for people.
    fn title(&self) -> &'static str;

    /// Whether `git prove-it hook <name>` takes the event's name as an argument, for payloads
    /// that do not name their event.
    fn takes_event_arg(&self) -> bool {
        false
    }

    /// The host whose dialect `payload` speaks, when it is not this one's: a host may call our
    /// hook for another's configuration (VS Code reads Claude Code's settings).
    fn dialect(&self, _payload: &Object) -> Option<Host> {
        None
    }

    /// One event from the hook's stdin, in this host's dialect. `arg` is the event name given
    /// on the command line, for hosts whose payloads carry none.
    fn parse(&self, payload: &Object, arg: Option<&str>) -> Result<Event, InputError>;

    /// The hook's stdout for a message in answer to `event` (None: the input could not be
    /// read), as one JSON value, or nothing at all. The hook's exit code is 0, but where
    /// [`Adapter::blocks_by_exit`].
    fn answer(&self, event: Option<&Event>, message: &Message) -> Option<Value>;

    /// Whether a block in answer to `event` is the hook's exit status (2, the reason on
    /// stderr) rather than its stdout: the events whose decision the host reads that way only
    /// (Claude Code's `TaskCompleted` and `TeammateIdle`).
    fn blocks_by_exit(&self, _event: Option<&Event>) -> bool {
        false
    }

    /// Consecutive blocks after which the host ends the turn by itself (or stops calling the
    /// hook), if it has such a cap, as the hook's environment (`var`) sets it
    /// (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, `QWEN_CODE_STOP_HOOK_BLOCK_CAP`).
    fn cap(&self, _var: &dyn Fn(&str) -> Option<String>) -> Option<u32> {
        None
    }

    /// Where a person sets the host's cap on blocks ([`Adapter::cap`]), for `doctor` to name;
    /// `None` where it cannot be set.
    fn cap_setting(&self) -> Option<&'static str> {
        None
    }

    /// The variables the host sets for some of its hook calls and not others, or whose value
    /// a person may change mid-session without changing what verify.sh does (Claude Code's
    /// `CLAUDE_EFFORT`): left out of the environment a session is anchored with.
    fn per_event_env(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether the host shows a hook's notice to the user. Where it does not, the turn's end
    /// unverified is told to the agent as one last block, to report it.
    fn shows_notices(&self) -> bool;

    /// Whether this run of the host is headless (`claude -p`), as the hook's environment
    /// (`var`) tells: a host that shows notices to a person at its screen may show none in the
    /// output a script or a person reads afterwards, and is then treated as showing none.
    fn headless(&self, _var: &dyn Fn(&str) -> Option<String>) -> bool {
        false
    }

    /// Whether a notice from outside the gate's own count (the gate could not check, a bypass)
    /// is told to the agent as a block in answer to `event`, for a host that shows no notices
    /// (`report::reply` words it so).
    fn notices_as_blocks(&self, _event: Option<&Event>) -> bool {
        false
    }

    /// The agent's claim at a stop, for the ledger. `previous_answer_ns` is the time of the
    /// gate's previous answer in this session (ns since the epoch), for hosts that read the
    /// claim from a file written at their own pace.
    fn claim(&self, stop: &Stop, _previous_answer_ns: Option<u64>) -> Option<String> {
        stop.claim.clone()
    }

    /// The directory the host says the session's project is in, from the hook's environment
    /// (`var`, as for [`Adapter::headless`]; `gate::HostRules::project_dir`); None for hosts
    /// that say none.
    fn project_dir(&self, _var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        None
    }

    /// Where `init` wires the host, and what it writes there.
    fn wiring(&self) -> &'static Scheme;

    /// Whether the host, started in a subdirectory of the worktree (`src/`), still reads the
    /// project's hooks at its root. Where it does not, only a user-level configuration
    /// ([`Adapter::user_config`]) gates a session started there.
    fn reads_project_hooks_below_root(&self) -> bool {
        true
    }

    /// The host's user-level configuration, read wherever it starts, in the shape of its
    /// project file (`wiring`), where it has one worth naming.
    fn user_config(&self) -> Option<PathBuf> {
        None
    }

    /// The file where the host records the folders it trusts, and whether it trusts
    /// `workdir` (canonical); None for hosts that do not ask.
    fn trust_record(&self, _workdir: &Path) -> Option<(bool, PathBuf)> {
        None
    }

    /// The settings, in any of the host's settings layers that apply to `workdir` (canonical),
    /// that keep it from running the gate's hooks; empty where the host has none documented.
    fn hooks_off(&self, _workdir: &Path) -> Vec<HooksOff> {
        Vec::new()
    }

    /// What `doctor` says of whether the host runs `workdir`'s project hooks (canonical).
    fn trust(&self, workdir: &Path) -> Option<Trust> {
        let (trusted, record) = self.trust_record(workdir)?;
        Some(if trusted {
            Trust::Trusted
        } else {
            Trust::NotRecorded { record }
        })
    }
}
