//! The exit codes of every command, in one place (SPEC.md, "Exit codes").

/// `run`, `status`: proven. Any command: success.
pub const OK: u8 = 0;
/// `run`: verify.sh failed, or the working state changed under it. `status`: not proven.
pub const NOT_PROVEN: u8 = 1;
/// Usage or repository error: nothing could be decided.
pub const ERROR: u8 = 2;
/// `hook claude`: a block of an event the host reads from the exit status (`TaskCompleted`,
/// `TeammateIdle`), its reason on stderr. The same number as `ERROR`, as Claude Code has it.
pub const HOOK_BLOCK: u8 = 2;
/// `run`, `status`: verify.sh is not armed (missing, not executable, or not a file inside the worktree).
pub const NOT_ARMED: u8 = 3;
/// `run`: the state cannot be tested (verify.sh or a check exited 125, as `git bisect run` has
/// it): neither proven nor failing. The same code, so that `git bisect run git prove-it run`
/// skips such a commit.
pub const CANNOT_TEST: u8 = 125;
/// Any command whose stdout was closed before it finished writing (`check --all | head -1`):
/// its output was cut short, so its answer is not known, and 0 would claim it. 128 + SIGPIPE,
/// as git and a shell report a command killed by the closed pipe (SPEC.md, "Exit codes").
pub const BROKEN_PIPE: u8 = 141;

// `claim` (SPEC.md, "claim"): one code per oracle outcome, and two for no verdict at all.
// PROVEN is `OK` (0); DISPROVEN shares 1 with `run`'s failure, which is also a DISPROVEN.

/// `claim`: the oracle's verdict is DISPROVEN.
pub const DISPROVEN: u8 = 1;
/// `claim`: the oracle's verdict is NOT_PROVEN.
pub const CLAIM_NOT_PROVEN: u8 = 4;
/// `claim`: the oracle's verdict is INSUFFICIENT_EVIDENCE.
pub const INSUFFICIENT_EVIDENCE: u8 = 5;
/// `claim`: the oracle's verdict is BOUNDED_CLAIM_SURVIVES.
pub const BOUNDED_CLAIM_SURVIVES: u8 = 6;
/// `claim`: the oracle packet is missing or compromised, so there is no verdict.
pub const ORACLE_COMPROMISED: u8 = 7;
/// `claim`: no agent command is configured, or its preset cannot run here (its program is not on
/// PATH, or its host needs a trust step): PROVE_IT_REQUIRES_SUBAGENTS, and nothing ran.
pub const REQUIRES_SUBAGENTS: u8 = 8;
