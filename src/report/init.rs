use std::io::{self, Write};
use std::path::PathBuf;

use crate::hosts::{Host, Wired};
use crate::setup::demo::{Demo, Shown};
use crate::setup::{Stack, stack};

use crate::gate::Message;

/// One thing `init` does, or found already done.
#[derive(Debug)]
pub(crate) enum Step {
    WriteVerify {
        text: String,
        /// How many checks are there as comments.
        checks: usize,
        overwrite: bool,
    },
    /// verify.sh exists and is kept; `armed` says how it stands ("is armed", or why not).
    VerifyKept {
        armed: &'static str,
    },
    Wire {
        host: Host,
        path: PathBuf,
        wired: Wired,
        created: bool,
        /// The user-level file that would gate sessions started in a subdirectory, where the
        /// host reads `path` only in the directory it starts in and that file wires no gate.
        user_level: Option<PathBuf>,
    },
    PrePush {
        path: PathBuf,
        already: bool,
    },
    MergeStrategy {
        already: bool,
    },
}

impl Step {
    /// Whether the step writes anything.
    pub(crate) fn changes(&self) -> bool {
        match self {
            Step::WriteVerify { .. } => true,
            Step::VerifyKept { .. } => false,
            Step::Wire { wired, .. } => !wired.added.is_empty(),
            Step::PrePush { already, .. } | Step::MergeStrategy { already } => !already,
        }
    }
}

/// What the demonstration came to.
#[derive(Debug)]
pub(crate) enum DemoResult {
    Ran(Box<Demo>),
    /// verify.sh is not armed, so there was nothing to run; the reason reads after "verify.sh ".
    NotArmed(&'static str),
    Skipped,
}

/// What `git prove-it init` found, did and showed.
#[derive(Debug)]
pub(crate) struct InitReport {
    pub stacks: Vec<Stack>,
    pub steps: Vec<Step>,
    pub demo: DemoResult,
}

impl InitReport {
    /// What init is about to change, before it asks.
    pub(crate) fn plan(steps: &[Step], out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "git prove-it init will:")?;
        for step in steps.iter().filter(|step| step.changes()) {
            let line = match step {
                Step::WriteVerify {
                    overwrite: true, ..
                } => "overwrite verify.sh (--force)".to_string(),
                Step::WriteVerify { .. } => {
                    format!(
                        "write verify.sh with one active check ({})",
                        stack::ACTIVE_CHECK
                    )
                }
                Step::Wire {
                    host, path, wired, ..
                } => format!(
                    "add the gate's {} hooks for {} to {}",
                    wired.added.join(" and "),
                    host.title(),
                    path.display()
                ),
                Step::PrePush { path, .. } => {
                    format!("install the pre-push hook at {}", path.display())
                }
                Step::MergeStrategy { .. } => {
                    "set git config notes.prove-it.mergeStrategy union".to_string()
                }
                Step::VerifyKept { .. } => continue,
            };
            writeln!(out, "  - {line}")?;
        }
        Ok(())
    }

    pub(crate) fn human(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.stacks.is_empty() {
            writeln!(out, "stack: none recognised at the worktree root")?;
        }
        for stack in &self.stacks {
            writeln!(out, "stack: {} ({})", stack.name, stack.evidence)?;
        }
        for step in &self.steps {
            match step {
                Step::WriteVerify {
                    checks, overwrite, ..
                } => writeln!(
                    out,
                    "{} verify.sh: one active check ({}); {checks} more commented out, to enable one at a time",
                    if *overwrite { "overwrote" } else { "wrote" },
                    stack::ACTIVE_CHECK
                )?,
                Step::VerifyKept { armed } => writeln!(
                    out,
                    "kept verify.sh as it is (it {armed}; --force overwrites it)"
                )?,
                Step::Wire {
                    host,
                    path,
                    wired,
                    created,
                    ..
                } if !wired.added.is_empty() => writeln!(
                    out,
                    "wired {}: {} hooks {} {}",
                    host.title(),
                    wired.added.join(" and "),
                    if *created {
                        "written to"
                    } else {
                        "merged into"
                    },
                    path.display()
                )?,
                Step::Wire { host, path, .. } => {
                    writeln!(out, "already wired: {} in {}", host.title(), path.display())?;
                }
                Step::PrePush { path, already } => writeln!(
                    out,
                    "{} the pre-push hook at {}",
                    if *already {
                        "already installed:"
                    } else {
                        "installed"
                    },
                    path.display()
                )?,
                Step::MergeStrategy { already } => writeln!(
                    out,
                    "{} notes.prove-it.mergeStrategy = union (stock git notes merge keeps records whole)",
                    if *already { "already set:" } else { "set" }
                )?,
            }
            if let Step::Wire { host, .. } = step
                && let Some(trust) = host.trust_step()
            {
                writeln!(out, "  trust: {trust}")?;
            }
            if let Step::Wire {
                host,
                user_level: Some(user),
                ..
            } = step
            {
                writeln!(
                    out,
                    "  where: {} reads {} only in the directory it is started in: a session started in a subdirectory is not gated; to gate it, merge the same hooks into {}",
                    host.title(),
                    host.config_path(),
                    user.display()
                )?;
            }
        }
        match &self.demo {
            DemoResult::Skipped => {}
            DemoResult::NotArmed(reason) => writeln!(
                out,
                "\nno demonstration: verify.sh {reason}\nhint: make it an executable file at the worktree root (chmod +x verify.sh), or run init --force for a new one"
            )?,
            DemoResult::Ran(demo) => render_demo(demo, out)?,
        }
        writeln!(
            out,
            "\nnext: enable verify.sh's checks one at a time; 'git prove-it run' proves the working state, \
             'git prove-it doctor' checks the set-up"
        )
    }
}

fn render_demo(demo: &Demo, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "\nthe gate at an agent's stop, shown on this working state (tree {}); nothing is recorded:",
        super::short(&demo.tree)
    )?;
    shown(out, "verify.sh", &demo.verify)?;
    shown(
        out,
        "a copy of verify.sh with 'exit 1' appended",
        &demo.copy,
    )?;
    if !demo.verify.passed {
        writeln!(
            out,
            "hint: verify.sh does not pass yet: fix what it reports, then 'git prove-it run'"
        )?;
    }
    if demo.copy.passed {
        writeln!(
            out,
            "hint: the copy passed although 'exit 1' was appended: verify.sh ends before its last line (an exit or exec?), so lines added at its end are never checked"
        )?;
    }
    Ok(())
}

fn shown(out: &mut dyn Write, what: &str, shown: &Shown) -> io::Result<()> {
    let message = super::gate::answer(&shown.answer);
    let answer = match &message {
        Message::Silent => "the gate lets the turn end",
        Message::Block(_) => "the gate sends the agent back with:",
        Message::Notice(_) => "the turn ends with the notice:",
    };
    writeln!(
        out,
        "  {what}: {} in {}: {}, {answer}",
        shown.exit,
        super::seconds(shown.duration_ms),
        shown.outcome
    )?;
    if let Message::Block(text) | Message::Notice(text) = &message {
        for line in text.lines() {
            if line.is_empty() {
                writeln!(out, "    |")?;
            } else {
                writeln!(out, "    | {line}")?;
            }
        }
    }
    Ok(())
}
