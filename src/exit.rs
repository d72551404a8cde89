//! The exit codes of every command, in one place (SPEC.md, "Exit codes").

/// `run`, `status`: proven. Any command: success.
pub const OK: u8 = 0;
/// `run`: verify.sh failed, or the working state changed under it. `status`: not proven.
pub const NOT_PROVEN: u8 = 1;
/// Usage or repository error: nothing could be decided.
pub const ERROR: u8 = 2;
/// `run`, `status`: verify.sh is not armed (missing, not executable, or not a file inside the worktree).
pub const NOT_ARMED: u8 = 3;
