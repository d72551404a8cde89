//! The gate's words: what the agent is told when it is sent back, and what the user sees when a
//! turn ends unverified. Host adapters wrap these in their own protocol.

use std::fmt::Write as _;

use crate::gate::{
    Answer, Ending, Facts, Failing, Message, Part, Quiet, Reply, Tampered, Untestable, Verdict,
    Weakened, WeakeningFound, Why,
};
use crate::proof::{CHECKS_FILE, FAILURES_REF};

/// Claude Code truncates longer block reasons; stay well below its limit.
pub(crate) const REASON_CAP: usize = 7_900;
/// One output line is cut at this many characters, so twenty lines always fit.
const LINE_CAP: usize = 300;

const ANCHOR_MISSING: &str = "No session-start anchor was found for this session (the SessionStart \
hook is not wired, or verify.sh was not armed when the session started), so the session was \
treated as having changed the repository.";

/// The ways a run's tests fell short of its baseline's, one line each.
fn tests_weakened(text: &mut String, findings: &[WeakeningFound]) {
    for finding in findings {
        let _ = writeln!(text, "  - tests: {}", cut_line(&weakening(finding)));
    }
}

/// A weakening found, as its record line, after the check whose run it was.
pub(crate) fn weakening(found: &WeakeningFound) -> String {
    match &found.check {
        Some(check) => format!("check {check}: {}", found.line),
        None => found.line.clone(),
    }
}

pub(crate) fn message(verdict: &Verdict, ctx: &Facts) -> Message {
    message_within(verdict, ctx, REASON_CAP)
}

/// `message`, with a block kept within `limit` characters, its instruction and bypass whole.
fn message_within(verdict: &Verdict, ctx: &Facts, limit: usize) -> Message {
    let tree = ctx.tree.as_deref().map_or("?", super::short);
    match verdict {
        Verdict::Quiet(Quiet::NotArmed | Quiet::Unchanged) => Message::Silent,
        Verdict::Quiet(Quiet::Proven) => proven(ctx, tree),
        Verdict::Bounded => bounded(ctx, tree),
        Verdict::SkippedChecks { checks } => Message::Notice(format!(
            "prove-it: skipped by PROVE_IT_SKIP={}: NOT_PROVEN, this turn ended unverified; \
             the other checks passed, and {} {} not run. Unset PROVE_IT_SKIP to gate every check \
             again.",
            checks.join(","),
            checks.join(", "),
            if checks.len() == 1 { "was" } else { "were" }
        )),
        Verdict::Uncovered { paths, count } => uncovered(paths, *count, tree),
        Verdict::Flaky { checks } => Message::Notice(format!(
            "prove-it: NOT_PROVEN: {} passed on the working state (tree {tree}), but a run of \
             the same script failed on this very state: it is flaky, and the proof is contested. \
             The turn ends; the contest stays until a person resolves it with 'git prove-it \
             revoke' or 'git prove-it accept' (see 'git prove-it status').",
            if checks.is_empty() {
                "verify.sh".to_string()
            } else {
                format!("check {}", checks.join(", "))
            }
        )),
        Verdict::Skipped => Message::Notice(
            "prove-it: skipped by PROVE_IT_SKIP=1: NOT_PROVEN, this turn ended unverified; \
             verify.sh was not run. Unset PROVE_IT_SKIP to gate turns again."
                .to_string(),
        ),
        Verdict::Block { why, attempt, max } => block(why, *attempt, *max, ctx, tree, limit),
        Verdict::Yield { why, max } => yielded(why, *max, ctx, tree),
    }
}

/// What passed, as a proof's notice opens with it: the checks file's checks, or verify.sh.
fn passed(ctx: &Facts) -> &'static str {
    if ctx.checks {
        "the checks of prove-it.toml passed"
    } else {
        "verify.sh passed"
    }
}

/// A proof of the working state: silent, unless the user must hear that the session had no
/// anchor, or be shown the protected paths it changed.
fn proven(ctx: &Facts, tree: &str) -> Message {
    if ctx.anchor_missing {
        return Message::Notice(format!(
            "prove-it: PROVEN: {} on the working state (tree {tree}). {ANCHOR_MISSING}",
            passed(ctx)
        ));
    }
    if ctx.changed().is_empty() {
        return Message::Silent;
    }
    let mut text = format!(
        "prove-it: PROVEN: {} on the working state (tree {tree}). Protected tests or \
         configs were changed during this session, without a test gone, skipped or \
         fewer assertions; shown for review:\n",
        passed(ctx)
    );
    protection_words(&mut text, ctx, tree);
    Message::Notice(cap(text))
}

/// A proof that holds only for what the session left of the checks: the notice names what
/// bounds it (protected paths weakened, the tests fallen short of the baseline's, or an edit of
/// the checks or of verify.sh) for a person to review.
fn bounded(ctx: &Facts, tree: &str) -> Message {
    if ctx.diff.is_none() && !ctx.weakened().is_empty() {
        bounded_by_weakening(ctx, tree)
    } else if ctx.diff.is_none() && !ctx.tests_weakened.is_empty() {
        bounded_by_tests(ctx, tree)
    } else if ctx
        .diff
        .as_deref()
        .is_some_and(|d| diffed(d) != "verify.sh")
    {
        bounded_by_checks_edit(ctx, tree)
    } else {
        bounded_by_verify_edit(ctx, tree)
    }
}

/// Bounded by protected tests or configs the session weakened: each weakening, and the tests
/// that fell short.
fn bounded_by_weakening(ctx: &Facts, tree: &str) -> Message {
    let mut text = format!(
        "prove-it: BOUNDED_CLAIM_SURVIVES: {} on the working state (tree {tree}), but \
         protected tests or configs were weakened during this session, so the proof \
         holds only for what is left of them. Review the weakening:\n",
        passed(ctx)
    );
    protection_words(&mut text, ctx, tree);
    tests_weakened(&mut text, &ctx.tests_weakened);
    Message::Notice(cap(text))
}

/// Bounded by the tests the run ran falling short of the baseline's: each way they did.
fn bounded_by_tests(ctx: &Facts, tree: &str) -> Message {
    let mut text = format!(
        "prove-it: BOUNDED_CLAIM_SURVIVES: {} passed on the working state (tree {tree}), \
         but the tests it ran fell short of the baseline's (the proof of the state this \
         session started from), so the proof holds only for the tests that still ran. \
         Restore them, or say so in your answer for a person to review:\n",
        if ctx.checks {
            "the checks of prove-it.toml"
        } else {
            "verify.sh"
        }
    );
    tests_weakened(&mut text, &ctx.tests_weakened);
    Message::Notice(cap(text))
}

/// Bounded by an edit of prove-it.toml or a check's script: the edit's diff, beside the
/// protected paths, each in half the room.
fn bounded_by_checks_edit(ctx: &Facts, tree: &str) -> Message {
    let mut text = format!(
        "prove-it: BOUNDED_CLAIM_SURVIVES: the checks passed on the working state (tree \
         {tree}), but prove-it.toml or a check's script was edited during this session, \
         so the proof holds only for the edited checks. Review the edit:\n"
    );
    tests_weakened(&mut text, &ctx.tests_weakened);
    let room = REASON_CAP.saturating_sub(text.len()) / 2;
    if let Some(diff) = ctx.diff.as_deref() {
        text.push_str(&diff_to_fit(diff, room, tree));
    }
    protection_words(&mut text, ctx, tree);
    Message::Notice(cap(text))
}

/// Bounded by an edit of verify.sh: its diff (against HEAD's when the session had no anchor),
/// sharing the room with the protected paths when there are any.
fn bounded_by_verify_edit(ctx: &Facts, tree: &str) -> Message {
    let mut text = format!(
        "prove-it: BOUNDED_CLAIM_SURVIVES: verify.sh passed on the working state (tree \
         {tree}), but verify.sh was edited during this session, so the proof holds only \
         for the edited checks. Review the edit:\n"
    );
    if ctx.anchor_missing {
        let _ = writeln!(
            text,
            "{ANCHOR_MISSING} verify.sh was compared with the one in HEAD's tree."
        );
    }
    tests_weakened(&mut text, &ctx.tests_weakened);
    let room = REASON_CAP.saturating_sub(text.len());
    let room = if ctx.protection.is_none() {
        room
    } else {
        room / 2
    };
    match ctx.diff.as_deref() {
        Some(diff) => text.push_str(&diff_to_fit(diff, room, tree)),
        None => text.push_str("(the diff is not available)\n"),
    }
    protection_words(&mut text, ctx, tree);
    Message::Notice(cap(text))
}

/// The checks passed, but the session changed paths none of them reads: those paths, and
/// how to cover them.
fn uncovered(paths: &[String], count: usize, tree: &str) -> Message {
    let mut text = format!(
        "prove-it: NOT_PROVEN: the checks of prove-it.toml passed on the working state \
         (tree {tree}), but this session changed {} that no check reads, so nothing \
         tested {}:\n",
        paths_word(count),
        if count == 1 { "it" } else { "them" }
    );
    named_paths(&mut text, paths, count);
    let _ = writeln!(
        text,
        "Add them to the inputs of the checks that read them in prove-it.toml (SPEC.md section 2.1)."
    );
    Message::Notice(cap(text))
}

/// The agent sent back: the headline, what the reason shows, and the instruction and the
/// bypass, which `limit` never cuts.
fn block(why: &Why, attempt: u32, max: u32, ctx: &Facts, tree: &str, limit: usize) -> Message {
    let head = format!(
        "prove-it: DISPROVEN (attempt {attempt} of {max} for this turn): {}\n",
        headline(why, ctx.checks)
    );
    let mut foot = if ctx.checks {
        "\nFix the cause, then end your turn again: the gate checks the new \
        working state. Weakening verify.sh, prove-it.toml or a check's script (deleting \
        or skipping checks, narrowing a check's inputs, removing an execute bit, \
        replacing a script) is a violation, not a fix. A person can bypass this gate \
        knowingly by starting the agent with PROVE_IT_SKIP=1.\n"
    } else {
        "\nFix the cause, then end your turn again: the gate checks the new \
        working state. Weakening verify.sh (deleting or skipping checks, removing its \
        execute bit, replacing it) is a violation, not a fix. A person can bypass this \
        gate knowingly by starting the agent with PROVE_IT_SKIP=1.\n"
    }
    .to_string();
    if ctx.anchor_missing {
        let _ = writeln!(foot, "{ANCHOR_MISSING}");
    }
    // The instruction and the bypass must survive any amount of output; the failure's
    // key lines from earlier in it get what room the rest leaves.
    let room = limit.saturating_sub(head.len() + foot.len());
    let mut body = String::new();
    details(&mut body, why, tree, ctx, "");
    let keys = key_lines(&ctx.earlier, room.saturating_sub(body.len()));
    let mut body = String::new();
    details(&mut body, why, tree, ctx, &keys);
    Message::Block(format!("{head}{}{foot}", cap_to(body, room)))
}

/// The turn ended unverified once the blocks ran out (or none are given): the user is told
/// why, and not to take the work as done.
fn yielded(why: &Why, max: u32, ctx: &Facts, tree: &str) -> Message {
    let budget = if max == 0 {
        "warn-only mode (prove-it.maxBlocks = 0)".to_string()
    } else {
        format!("after {max} attempts")
    };
    let mut text = format!(
        "prove-it: NOT_PROVEN: this turn ended unverified ({budget}). {}\n",
        headline(why, ctx.checks)
    );
    let mut rest = String::new();
    details(&mut rest, why, tree, ctx, "");
    let keys = key_lines(
        &ctx.earlier,
        REASON_CAP.saturating_sub(text.len() + rest.len() + 200),
    );
    details(&mut text, why, tree, ctx, &keys);
    let _ = writeln!(
        text,
        "\nDo not treat this work as done: run `git prove-it run` to see the failure."
    );
    Message::Notice(cap(text))
}

/// The words of an answer the gate gave: its verdict's message, or, for a host that shows no
/// notices, the notice told to the agent as one last block.
pub(crate) fn answer(answer: &Answer) -> Message {
    told_to_the_agent(message(&answer.verdict, &answer.facts), answer.to_the_agent)
}

/// A notice as the one last block that tells it to the agent, when `to_the_agent`.
fn told_to_the_agent(message: Message, to_the_agent: bool) -> Message {
    match message {
        Message::Notice(text) if to_the_agent => Message::Block(notice_for_the_agent(&text)),
        message => message,
    }
}

/// The words of any reply of the gate's, host-neutral. `notices_as_blocks`: the host shows no
/// notices and wants one told to the agent as a block here (`hosts::Host::notices_as_blocks`).
pub(crate) fn reply(reply: &Reply, notices_as_blocks: bool) -> Message {
    let message = match reply {
        Reply::Silent => Message::Silent,
        Reply::Announce => Message::Notice(
            "prove-it: the gate is armed in this repository: when a turn that changed it ends \
             on a working state never proven, verify.sh (or each check of prove-it.toml whose \
             inputs changed) runs, and a failure sends the agent back (at most 3 times a turn by default). Proofs are git notes under \
             refs/notes/prove-it; `git prove-it status` shows the current state. This notice \
             is shown once."
                .to_string(),
        ),
        Reply::Inert => Message::Notice(
            "prove-it: the gate is inert in this repository: it has no executable verify.sh at \
             its root, so no turn is checked here. To arm it, run /prove-it:init in this \
             session, or git prove-it init in a terminal. This notice is shown once for this \
             repository."
                .to_string(),
        ),
        // A gauntlet round's agent answers with a packet, which a quoted notice would spoil:
        // it is never told one as a block, on any host.
        Reply::StandAside { round } => {
            return Message::Notice(format!(
                "prove-it: standing aside: this agent runs round {round} of a git prove-it \
                 claim gauntlet (PROVE_IT_ROUND is set), whose turns are not gated."
            ));
        }
        Reply::Answer(decided) => answer(decided),
        Reply::AnchorNotRecorded(error) => Message::Notice(format!(
            "prove-it: could not record this session's anchor: {error}. Stops in this \
             session will count as changes."
        )),
        Reply::NotIndexed(error) => Message::Notice(format!(
            "prove-it: could not note this worktree in the session index: {error}. Its anchor \
             is recorded, but a stop whose working directory is elsewhere will not find it.\n\
             hint: make $XDG_STATE_HOME (or ~/.local/state) a directory you can write"
        )),
        // One line: a tool call's end is answered on stderr only, and only its first line.
        Reply::NotProvingAhead(error) => Message::Notice(cap(format!(
            "prove-it: nothing is being proven ahead: {error}. The next stop runs the checks \
             itself."
        ))),
        Reply::CouldNotCheck(error) => could_not_check(error),
        Reply::ForeignEnvironment { changed } => foreign_environment(changed),
        Reply::NotGated { worktree } => Message::Notice(format!(
            "prove-it: {worktree} was not gated: this session did not start in that \
             repository, so its verify.sh was not run.\n\
             hint: to prove its working state by hand, run `git prove-it run` in {worktree}\n\
             hint: a session gates the repositories its SessionStart hook anchored"
        )),
        Reply::CwdUnreadable(error) => Message::Notice(cap(format!(
            "prove-it: the stop's working directory was not gated: {error}. The worktrees this \
             session started in were gated.\n\
             hint: end the turn from inside the repository the work is in"
        ))),
        Reply::WorktreeGone { worktree, error } => Message::Notice(cap(format!(
            "prove-it: could not check this turn: {error}. NOT_PROVEN: this turn ended \
             unverified.\n\
             hint: if core.bare was set to true there, set it back: git -C {worktree} config \
             core.bare false\n\
             hint: if {worktree} was removed or replaced on purpose, start a new session"
        ))),
        Reply::Several(parts) => several(parts),
        // Its own notice is never told as a block: nothing counts it, and a host whose
        // background task outlives the budget would be sent back without end.
        Reply::Background { tasks, reply: inner } => {
            return background(tasks, self::reply(inner, notices_as_blocks));
        }
    };
    told_to_the_agent(message, notices_as_blocks)
}

/// The background tasks alive at a stop, named after the stop's own message: a block says
/// they may have changed files while verify.sh ran, anything else that its verdict is about
/// the working state as of this stop.
fn background(tasks: &[String], message: Message) -> Message {
    let listed: String = tasks
        .iter()
        .take(BACKGROUND_LISTED)
        .map(|task| format!("\n  - {}", one_line_of(task)))
        .collect();
    let more = match tasks.len().saturating_sub(BACKGROUND_LISTED) {
        0 => String::new(),
        n => format!("\n  - and {n} more"),
    };
    let count = match tasks.len() {
        1 => "1 background task".to_string(),
        n => format!("{n} background tasks"),
    };
    match message {
        Message::Block(text) => Message::Block(cap(format!(
            "{text}\n{count} of yours {} still running as you stopped, and may have changed \
             files while verify.sh ran:{listed}{more}",
            if tasks.len() == 1 { "was" } else { "were" }
        ))),
        Message::Notice(text) => Message::Notice(cap(format!(
            "{text}\n{count} still running: the verdict above is about the working state as of \
             this stop; what they change later is checked at the next stop:{listed}{more}"
        ))),
        Message::Silent => Message::Notice(cap(format!(
            "prove-it: {count} still running as the agent stopped: this stop checked the \
             working state as of now, and what they change later is checked at the next \
             stop:{listed}{more}"
        ))),
    }
}

/// Background tasks named in one message, at most.
const BACKGROUND_LISTED: usize = 10;

fn one_line_of(text: &str) -> String {
    let line = text.replace(['\n', '\r'], " ");
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line,
    }
}

/// One message for a stop about several worktrees: any block blocks, naming each worktree that
/// blocked; else every notice, the loudest first; else silence.
fn several(parts: &[Part]) -> Message {
    // Each part keeps its share of the host's limit, its name included, so that every block
    // keeps its instruction and bypass however much output each carries.
    let share = REASON_CAP / parts.len().max(1) - 2;
    let worded: Vec<(u8, Message)> = parts
        .iter()
        .map(|part| {
            let name = part.worktree.as_deref().map_or(0, |name| name.len() + 4);
            let message = match &part.reply {
                Reply::Answer(answer) => told_to_the_agent(
                    message_within(&answer.verdict, &answer.facts, share.saturating_sub(name)),
                    answer.to_the_agent,
                ),
                other => reply(other, false),
            };
            (
                loudness(&part.reply),
                named(message, part.worktree.as_deref()),
            )
        })
        .collect();
    let blocks: Vec<&String> = worded
        .iter()
        .filter_map(|(_, message)| match message {
            Message::Block(text) => Some(text),
            _ => None,
        })
        .collect();
    if !blocks.is_empty() {
        let texts: Vec<String> = blocks
            .into_iter()
            .map(|text| cap_to(text.clone(), share))
            .collect();
        return Message::Block(texts.join("\n\n"));
    }
    let mut notices: Vec<(u8, &String)> = worded
        .iter()
        .filter_map(|(rank, message)| match message {
            Message::Notice(text) => Some((*rank, text)),
            _ => None,
        })
        .collect();
    if notices.is_empty() {
        return Message::Silent;
    }
    notices.sort_by_key(|(rank, _)| *rank);
    let texts: Vec<&str> = notices.iter().map(|(_, text)| text.as_str()).collect();
    Message::Notice(cap(texts.join("\n\n")))
}

/// How loud a part of a stop's reply is, loudest (0) first: the gate's failures, then turns
/// ended unverified, then the rest, then repositories not gated.
fn loudness(reply: &Reply) -> u8 {
    match reply {
        Reply::CouldNotCheck(_) | Reply::WorktreeGone { .. } | Reply::ForeignEnvironment { .. } => {
            0
        }
        Reply::Answer(Answer {
            verdict: Verdict::Yield { .. } | Verdict::Skipped,
            ..
        })
        | Reply::CwdUnreadable(_) => 1,
        Reply::NotGated { .. } => 3,
        _ => 2,
    }
}

/// A message about `worktree`, saying so after its `prove-it: `.
fn named(message: Message, worktree: Option<&str>) -> Message {
    let Some(worktree) = worktree else {
        return message;
    };
    let name = |text: String| match text.strip_prefix("prove-it: ") {
        Some(rest) => format!("prove-it: in {worktree}: {rest}"),
        None => format!("In {worktree}: {text}"),
    };
    match message {
        Message::Silent => Message::Silent,
        Message::Notice(text) => Message::Notice(name(text)),
        Message::Block(text) => Message::Block(name(text)),
    }
}

/// What could not be checked when the hook itself panicked, with the panic's message where it
/// had one: the hook answers with it as an error of the gate's, so that a host never reads a
/// crash as a pass.
pub(crate) fn crashed(panic: Option<&str>) -> String {
    format!(
        "git-prove-it crashed: {}",
        panic.unwrap_or("an internal error")
    )
}

/// The gate could not decide; say so loudly, never as a pass.
pub(crate) fn could_not_check(error: &str) -> Message {
    Message::Notice(cap(format!(
        "prove-it: could not check this turn: {error}. NOT_PROVEN: this turn ended unverified."
    )))
}

/// A hook call in another environment than its session's: nothing was run, recorded or
/// started, naming the variables that differ (never their values).
fn foreign_environment(changed: &[String]) -> Message {
    let which = match changed {
        [] => "its variables differ".to_string(),
        [one] => format!("{one} differs"),
        many if many.len() <= 8 => format!("{} differ", many.join(", ")),
        many => format!(
            "{} and {} more differ",
            many[..8].join(", "),
            many.len() - 8
        ),
    };
    Message::Notice(cap(format!(
        "prove-it: this hook call ran in another environment than its session started with \
         ({which}), so nothing was run, recorded or started for the session. NOT_PROVEN: it \
         proves nothing.\n\
         hint: the host's own hooks run in the session's environment; a stop piped in from the \
         agent's shell, or with another PATH or variables, is not the gate's\n\
         hint: if the host itself changed one of these between its hook calls, report it: \
         ADAPTERS.md lists the variables each host sets per call, which are left out"
    )))
}

/// A notice as a block, for a host that shows no notices to the user: the agent is the only
/// one who can tell them. Given at most once a turn.
pub(crate) fn notice_for_the_agent(notice: &str) -> String {
    format!(
        "{notice}\n\nThis host does not show prove-it's notices to the user, so end your answer \
         by quoting the notice above to them, plainly. Do not say that the work is done or \
         verified unless the notice says it was proven. The gate will not block again for it \
         this turn."
    )
}

/// What a diff of the session's edits is of: verify.sh alone, or the checks too.
fn diffed(diff: &str) -> &'static str {
    if diff
        .lines()
        .all(|line| !line.starts_with("--- a/") || line.starts_with("--- a/verify.sh "))
    {
        "verify.sh"
    } else {
        "what proves this state (verify.sh, prove-it.toml, the checks' scripts)"
    }
}

/// The protected paths weakened and changed, and their diff as it fits.
fn protection_words(text: &mut String, ctx: &Facts, tree: &str) {
    let Some(protection) = &ctx.protection else {
        return;
    };
    for (head, lines) in [
        ("Weakened:", &protection.weakened),
        ("Changed:", &protection.changed),
    ] {
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(text, "{head}");
        for line in lines.iter().take(20) {
            let _ = writeln!(text, "    {}", cut_line(line));
        }
        if lines.len() > 20 {
            let _ = writeln!(text, "    ... and {} more", lines.len() - 20);
        }
    }
    if let Some(diff) = &protection.diff {
        let room = REASON_CAP.saturating_sub(text.len() + 200);
        text.push_str(&diff_to_fit(diff, room, tree));
    }
}

/// `1 path`, `3 paths`.
fn paths_word(count: usize) -> String {
    format!("{count} path{}", if count == 1 { "" } else { "s" })
}

/// Up to twenty of `paths`, one a line, then how many more of `count` there are.
fn named_paths(text: &mut String, paths: &[String], count: usize) {
    for path in paths.iter().take(20) {
        let _ = writeln!(text, "    {}", cut_line(path));
    }
    let shown = paths.len().min(20);
    if count > shown {
        let _ = writeln!(text, "    ... and {} more", count - shown);
    }
}

/// The first line of what the agent or the user is told: what kept the state from a proof.
fn headline(why: &Why, checks: bool) -> String {
    match why {
        Why::Failed { failing, .. } => failed_headline(failing),
        Why::CannotTest { reason, said } => cannot_test_headline(reason, &Untestable::checks(said)),
        Why::ChecksFileDeleted => format!(
            "{CHECKS_FILE}, which declares this repository's checks, was deleted during this \
             session. Restore it."
        ),
        Why::CheckDisarmed { check, script, why } => format!(
            "check {check} of prove-it.toml: its script {script} {}, so this state cannot be \
             proven. Restore it.",
            super::armed::script(*why)
        ),
        Why::Disarmed { armed } => format!(
            "verify.sh was armed when this session started, and now it {}. Restore it.",
            super::armed::verify(*armed)
        ),
        Why::Weakened(weakened) => format!(
            "the gate's policy was weakened during this session: {weakened}. Restore it (policy changes \
             take effect in new sessions)."
        ),
        Why::Content { message } => format!("the working state cannot be read: {message}."),
        Why::DirtySubmodules { paths } => dirty_submodules_headline(paths),
        Why::StateChanged { paths } => state_changed_headline(paths, checks),
        Why::AnchorTampered(tampered) => format!(
            "{}, so the gate cannot tell what this session started from.",
            tampered_words(*tampered)
        ),
        Why::VerifyEdited => "verify.sh was changed during this session, and this repository \
             refuses such edits (prove-it.verifyEdits = block)."
            .to_string(),
        Why::Uncovered { count, .. } => format!(
            "this session changed {} that no check of prove-it.toml reads, so no check tested \
             {}, and this repository refuses that (prove-it.uncovered = block).",
            paths_word(*count),
            if *count == 1 { "it" } else { "them" }
        ),
        Why::HiddenByIgnoredRules { rules } => {
            let names = rules
                .iter()
                .map(|rule| {
                    format!(
                        "'{}' ({})",
                        cut_line(&rule.rule),
                        if rule.outside {
                            "outside the worktree"
                        } else {
                            "itself ignored, so no proof records it"
                        }
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let count: usize = rules.iter().map(|rule| rule.count).sum();
            let what = if rules.iter().any(|rule| rule.outside) {
                "the ignore rules set outside the worktree changed during this session, and"
            } else {
                "ignore rules that appeared or changed during this session"
            };
            format!(
                "{what} hide {} on disk from the working state, so verify.sh may read what no \
                 proof names: {names}.",
                paths_word(count),
            )
        }
        Why::ProtectedWeakened { .. } => "protected tests or configs, or the tests the run \
             ran, were weakened during this session (a test deleted or skipped, fewer \
             assertions or passing tests, a protected file deleted, a test report gone), and \
             this repository refuses that (prove-it.weakening = block)."
            .to_string(),
    }
}

/// What was weakened, as a fragment: in a refusal's words and in the ledger.
impl std::fmt::Display for Weakened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Weakened::MaxBlocks { anchor, now } => write!(
                f,
                "blocks per turn lowered from {anchor} to {now} (PROVE_IT_MAX_BLOCKS or prove-it.maxBlocks)"
            ),
            Weakened::Timeout { anchor, now } => write!(
                f,
                "verify.sh timeout raised from {anchor} s to {now} s (PROVE_IT_TIMEOUT or prove-it.timeout)"
            ),
            Weakened::Retries { anchor, now } => write!(
                f,
                "retries of a failing check raised from {anchor} to {now} (PROVE_IT_RETRIES or prove-it.retries)"
            ),
            Weakened::Signing => write!(f, "signing of proofs turned off (prove-it.sign)"),
            Weakened::VerifyEdits => write!(
                f,
                "edits of verify.sh shown instead of refused (PROVE_IT_VERIFY_EDITS or prove-it.verifyEdits)"
            ),
            Weakened::Weakening => write!(
                f,
                "weakened tests and configs shown instead of refused (PROVE_IT_WEAKENING or prove-it.weakening)"
            ),
            Weakened::Filters => write!(
                f,
                "the clean filters or attributes set outside the worktree changed (filter.*, core.autocrlf, core.eol, core.fileMode, core.symlinks, core.attributesFile, ~/.config/git/attributes, .git/info/attributes), which can hide edits from the state tree"
            ),
            Weakened::Ignores => write!(
                f,
                "the ignore rules set outside the worktree changed (.git/info/exclude, core.excludesFile, ~/.config/git/ignore), which can hide a new file verify.sh reads from the state tree"
            ),
        }
    }
}

/// How a failing script ended, as a failure record says it (`exit code 1`, `timed out after
/// 300 s`), or that the stop's wait for the run made ahead outlasted its timeout.
fn ending_value(ending: Ending) -> String {
    match ending {
        Ending::Ended(ended) => crate::proof::exit_value(ended),
        Ending::AheadOutlasted { timeout_secs } => format!(
            "could not check in time: the run made ahead for this state outlasted the timeout of {timeout_secs} s"
        ),
    }
}

/// How the failing scripts ended, as one value, each in the report's words.
pub(crate) fn exits(failing: &[Failing]) -> String {
    Failing::exits(failing, ending_value)
}

/// The headline of a failed run: verify.sh's, or the failed checks' by name.
fn failed_headline(failing: &[Failing]) -> String {
    let exit = exits(failing);
    match Failing::checks(failing).as_slice() {
        [] => format!("verify.sh failed ({exit})."),
        [check] => format!("check {check} failed ({exit})."),
        checks => format!("checks {} failed ({exit}).", checks.join(", ")),
    }
}

/// The headline of a run that could not test the state (exit 125): verify.sh's, or the
/// checks' that said so.
fn cannot_test_headline(reason: &str, checks: &[String]) -> String {
    if checks.is_empty() {
        return format!(
            "verify.sh says this state cannot be tested ({reason}): it could not run the tests, \
             so nothing is known of whether the work passes."
        );
    }
    format!(
        "{} this state cannot be tested ({reason}): the tests could not run, so nothing is \
         known of whether the work passes.",
        if checks.len() == 1 {
            format!("check {} says", checks[0])
        } else {
            format!("checks {} say", checks.join(", "))
        }
    )
}

/// The headline of submodules with changes their commits do not record, each named.
fn dirty_submodules_headline(paths: &[String]) -> String {
    let named = paths
        .iter()
        .map(|path| format!("'{}'", cut_line(path)))
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() == 1 {
        format!(
            "the submodule {named} has changes its commit does not record, so no proof \
             can vouch for this state."
        )
    } else {
        format!(
            "the submodules {named} have changes their commits do not record, so no \
             proof can vouch for this state."
        )
    }
}

/// The headline of a state whose inputs changed while the checks (`checks`) or verify.sh ran.
fn state_changed_headline(paths: &[String], checks: bool) -> String {
    if checks {
        format!(
            "the checks passed but their inputs changed while they ran ({} path{}), so the \
             state they tested is not the current one.",
            paths.len(),
            if paths.len() == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "verify.sh passed but changed the working state while it ran ({} path{}), so the \
             state it tested is not the current one.",
            paths.len(),
            if paths.len() == 1 { "" } else { "s" }
        )
    }
}

/// What became of the session's anchor, for the headline that says the gate cannot trust it.
fn tampered_words(tampered: Tampered) -> &'static str {
    match tampered {
        Tampered::Missing => "this session's anchor was deleted from refs/notes/prove-it-anchors",
        Tampered::Changed => "this session's anchor in refs/notes/prove-it-anchors was rewritten",
        Tampered::Unsealed => {
            "this session's own copy of its anchor is missing from .git/prove-it/sessions"
        }
    }
}

/// The failure's key lines found before the last lines of its output, as many as fit in
/// `room` characters; empty when there are none or none fit.
fn key_lines(earlier: &[String], room: usize) -> String {
    const HEAD: &str = "Key lines from earlier in the output (panics, assertions, failures):\n";
    let mut text = String::new();
    for line in earlier {
        let line = format!("    {}\n", cut_line(line));
        if HEAD.len() + text.len() + line.len() > room {
            break;
        }
        text.push_str(&line);
    }
    if text.is_empty() {
        text
    } else {
        format!("{HEAD}{text}")
    }
}

/// The last lines of a failing run: each failing check's, under a line naming it, its exit and
/// its full output where several failed.
fn failed_lines(failing: &[Failing]) -> Vec<String> {
    if failing.len() < 2 {
        return Failing::lines(failing);
    }
    let mut lines = Vec::new();
    for failed in failing {
        lines.push(format!(
            "--- check {} ({}; its full output: {}):",
            failed.check.as_deref().unwrap_or("verify.sh"),
            ending_value(failed.ending),
            failed.log.as_deref().unwrap_or_default()
        ));
        lines.extend(failed.lines.iter().cloned());
    }
    lines
}

/// What a verdict's reason shows; `keys` is the block of [`key_lines`] a failure shows before
/// its last lines.
fn details(text: &mut String, why: &Why, tree: &str, ctx: &Facts, keys: &str) {
    match why {
        Why::Failed {
            exit_code,
            failing,
            predates,
        } => {
            failed_details(text, *exit_code, &failed_lines(failing), tree, ctx, keys);
            for predated in predates {
                let what = match &predated.check {
                    Some(check) => format!("Check {check}"),
                    None => "verify.sh".to_string(),
                };
                let _ = writeln!(
                    text,
                    "This failure predates the session: {what} failed with these same last lines on the state this session started from (recorded {} by {}, in {FAILURES_REF}). It still has to pass before the turn can end; it did not start with your changes.",
                    predated.time, predated.host
                );
            }
        }
        Why::CannotTest { said, .. } => cannot_test_details(text, said, tree, ctx),
        Why::StateChanged { paths } => state_changed_details(text, paths),
        Why::HiddenByIgnoredRules { rules } => {
            for rule in rules {
                let _ = writeln!(text, "{} hides:", cut_line(&rule.rule));
                named_paths(text, &rule.hidden, rule.count);
            }
            let _ = writeln!(
                text,
                "Remove the rule, or put it in a .gitignore that is part of the state (committed or not ignored), where the diff shows it."
            );
        }
        Why::Uncovered { paths, count } => {
            named_paths(text, paths, *count);
            let _ = writeln!(
                text,
                "Add each to the inputs of the check that reads it in prove-it.toml (SPEC.md section 2.1), or undo the change."
            );
        }
        Why::DirtySubmodules { .. } => dirty_submodules_hints(text),
        Why::Content { .. } => {
            let _ = writeln!(
                text,
                "Fix or remove the path named above; until then no proof can be recorded for this state."
            );
        }
        Why::Disarmed { .. }
        | Why::Weakened { .. }
        | Why::ChecksFileDeleted
        | Why::CheckDisarmed { .. } => {
            diff_since_start(text, ctx, tree);
        }
        Why::AnchorTampered(_) => anchor_tampered_hints(text),
        Why::ProtectedWeakened { .. } => protected_weakened_details(text, ctx, tree),
        Why::VerifyEdited => {
            let _ = writeln!(
                text,
                "hint: restore verify.sh to what it was when the session started (git diff \
                 shows the change), or leave the change to a person and say so"
            );
            diff_since_start(text, ctx, tree);
        }
    }
}

/// A failed run's exit code, its key lines (`keys`) when there are any, its last lines, and
/// where its whole output is kept.
fn failed_details(
    text: &mut String,
    exit_code: Option<i32>,
    tail: &[String],
    tree: &str,
    ctx: &Facts,
    keys: &str,
) {
    let code = exit_code.map_or_else(|| "none".to_string(), |c| c.to_string());
    let last = if tail.len() == 1 {
        "line".to_string()
    } else {
        format!("{} lines", tail.len())
    };
    if keys.is_empty() {
        let _ = writeln!(
            text,
            "The working state (tree {tree}) is not proven; exit code: {code}. Last {last} of output:"
        );
    } else {
        let _ = writeln!(
            text,
            "The working state (tree {tree}) is not proven; exit code: {code}."
        );
        text.push_str(keys);
        let _ = writeln!(text, "Last {last} of output:");
    }
    for line in tail {
        let _ = writeln!(text, "    {}", cut_line(line));
    }
    if let Some(log) = &ctx.log {
        let _ = writeln!(text, "Full output: {log}");
        let _ = writeln!(
            text,
            "That file is this failing run's output, kept apart from the latest run's log: a later run, passing or not, does not write over it."
        );
    }
}

/// A run that could not test the state: its last lines, where its output is, and that the
/// state is to be made testable.
fn cannot_test_details(text: &mut String, said: &[Untestable], tree: &str, ctx: &Facts) {
    let _ = writeln!(
        text,
        "The working state (tree {tree}) is not proven, and this is not a failure of the code: exit code 125 means the state cannot be tested. Last lines of output:"
    );
    for script in said {
        // Where several said so, each one's lines under a line naming it and its full output.
        if said.len() > 1 {
            let _ = writeln!(
                text,
                "    {}",
                cut_line(&format!(
                    "--- check {} (its full output: {}):",
                    script.check.as_deref().unwrap_or("verify.sh"),
                    script.log
                ))
            );
        }
        for line in &script.lines {
            let _ = writeln!(text, "    {}", cut_line(line));
        }
    }
    if let Some(log) = &ctx.log {
        let _ = writeln!(text, "Full output: {log}");
    }
    let _ = writeln!(
        text,
        "Make the state testable (install or restore what the script says is missing), so that the tests can run and pass."
    );
}

/// The paths that changed while verify.sh ran, up to twenty, and what keeps them still.
fn state_changed_details(text: &mut String, paths: &[String]) {
    let _ = writeln!(text, "Paths that changed:");
    for path in paths.iter().take(20) {
        let _ = writeln!(text, "    {}", cut_line(path));
    }
    if paths.len() > 20 {
        let _ = writeln!(text, "    ... and {} more", paths.len() - 20);
    }
    let _ = writeln!(
        text,
        "Generated files belong in .gitignore; verify.sh must not edit tracked files."
    );
    let _ = writeln!(
        text,
        "A path written while verify.sh ran counts even if its content is back as it was."
    );
}

/// How to record a submodule's changes, or drop them.
fn dirty_submodules_hints(text: &mut String) {
    let _ = writeln!(
        text,
        "hint: commit inside the submodule, then stage its new commit here \
         (git -C <path> commit -a, then git add <path>)"
    );
    let _ = writeln!(
        text,
        "hint: or restore it to its commit (git -C <path> stash -u)"
    );
}

/// Where the anchor lives, which the agent is not to touch, and how a person starts afresh.
fn anchor_tampered_hints(text: &mut String) {
    let _ = writeln!(
        text,
        "hint: the anchor and its copy are written when a session starts and never \
         changed by the gate; do not edit refs/notes/prove-it-anchors or \
         .git/prove-it/sessions"
    );
    let _ = writeln!(
        text,
        "hint: a person can start a new session, which records a new anchor"
    );
}

/// The diff of what proves this state since the session started, as it fits, when there is
/// one.
fn diff_since_start(text: &mut String, ctx: &Facts, tree: &str) {
    if let Some(diff) = &ctx.diff {
        let _ = writeln!(text, "{} since the session started:", diffed(diff));
        text.push_str(&diff_to_fit(diff, DIFF_ROOM, tree));
    }
}

/// The protected paths and tests the session weakened, and that the refusal comes once.
fn protected_weakened_details(text: &mut String, ctx: &Facts, tree: &str) {
    protection_words(text, ctx, tree);
    if !ctx.tests_weakened.is_empty() {
        let _ = writeln!(text, "The tests the run ran, against the session's start:");
        tests_weakened(text, &ctx.tests_weakened);
    }
    let _ = writeln!(
        text,
        "hint: restore what was weakened (git diff shows it), or leave the change to a \
         person and say so: this weakening is refused once, and the next stop shows it \
         in a bounded proof for review"
    );
}

/// Room for a diff in a block, beside the headline, the instruction and the bypass.
const DIFF_ROOM: usize = REASON_CAP - 1_500;

/// `diff` as it fits in `room` characters: whole when it fits; else its changed lines first,
/// every one of them while they fit (a weakening after hundreds of lines of padding is never
/// the part cut), then saying what was left out and where the whole diff is.
fn diff_to_fit(diff: &str, room: usize, tree: &str) -> String {
    if diff.len() <= room {
        return diff.to_string();
    }
    let changed = changed_lines(diff);
    let hint = format!(
        "hint: the whole diff is stored in the proof: git notes --ref prove-it show {tree}\n"
    );
    let mut text = format!(
        "The diff is {} lines long, too long to show whole here; its {} changed lines come \
         first, each removed line beside the line that replaced it:\n",
        diff.lines().count(),
        changed.len()
    );
    let budget = room.saturating_sub(text.len() + hint.len() + 80);
    let mut shown = 0;
    for line in &changed {
        let line = cut_line(line);
        if text.len() + line.len() + 1 > budget {
            break;
        }
        text.push_str(&line);
        text.push('\n');
        shown += 1;
    }
    if shown < changed.len() {
        let _ = writeln!(
            text,
            "[... cut to fit the hook's limit: {} more changed lines]",
            changed.len() - shown
        );
    } else {
        let _ = writeln!(
            text,
            "(every changed line is above; unchanged lines left out)"
        );
    }
    text.push_str(&hint);
    text
}

/// A diff's changed lines, in the order a reviewer needs them when not all fit: each removed
/// line (a check taken away), followed by the added line most like it (the same check with
/// `|| true` appended), then the remaining added lines in order.
fn changed_lines(diff: &str) -> Vec<&str> {
    let mut removed = Vec::new();
    let mut added = Vec::new();
    for line in diff.lines() {
        if line.starts_with('-') && !line.starts_with("---") {
            removed.push(line);
        } else if line.starts_with('+') && !line.starts_with("+++") {
            added.push(line);
        }
    }
    let mut used = vec![false; added.len()];
    let mut ordered = Vec::with_capacity(removed.len() + added.len());
    // Pairing compares every removed line with every added one: bounded, so that a huge diff
    // costs no more than listing it.
    let pair = removed.len().saturating_mul(added.len()) <= 100_000;
    for line in &removed {
        ordered.push(*line);
        if !pair {
            continue;
        }
        let best = added
            .iter()
            .enumerate()
            .filter(|(i, _)| !used[*i])
            .map(|(i, new)| {
                (
                    i,
                    similar::TextDiff::from_chars(&line[1..], &new[1..]).ratio(),
                )
            })
            .filter(|(_, ratio)| *ratio >= 0.6)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((i, _)) = best {
            used[i] = true;
            ordered.push(added[i]);
        }
    }
    ordered.extend(
        added
            .iter()
            .zip(&used)
            .filter(|(_, used)| !**used)
            .map(|(line, _)| *line),
    );
    ordered
}

fn cut_line(line: &str) -> String {
    if line.chars().count() <= LINE_CAP {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(LINE_CAP).collect();
    cut.push_str(" [...]");
    cut
}

fn cap(text: String) -> String {
    cap_to(text, REASON_CAP)
}

fn cap_to(mut text: String, limit: usize) -> String {
    if text.len() > limit {
        let mut end = limit.saturating_sub(40);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[... cut to fit the hook's limit]\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(tail: Vec<String>) -> Why {
        Why::Failed {
            failing: vec![Failing {
                check: None,
                ending: crate::gate::Ending::code(1),
                log: None,
                lines: tail,
            }],
            exit_code: Some(1),
            predates: Vec::new(),
        }
    }

    #[test]
    fn a_block_carries_attempt_output_instruction_and_bypass() {
        let verdict = Verdict::Block {
            why: failed(vec![
                "test a ... FAILED".into(),
                "1 failed, 2 passed".into(),
            ]),
            attempt: 2,
            max: 3,
        };
        let ctx = Facts {
            tree: Some("0123456789abcdef0123".into()),
            log: Some("/repo/.git/prove-it/last-run.log".into()),
            ..Facts::default()
        };
        let Message::Block(reason) = message(&verdict, &ctx) else {
            panic!("a block")
        };
        for needle in [
            "DISPROVEN (attempt 2 of 3 for this turn): verify.sh failed (exit code 1).",
            "tree 0123456789ab",
            "    1 failed, 2 passed\n",
            "Weakening verify.sh",
            "is a violation, not a fix",
            "PROVE_IT_SKIP=1",
            "Full output: /repo/.git/prove-it/last-run.log",
            "this failing run's output, kept apart from the latest run's log",
        ] {
            assert!(reason.contains(needle), "{needle:?} not in {reason}");
        }
    }

    /// Trap 4 of the seed: a yield must never look like a pass.
    #[test]
    fn a_yield_says_the_turn_ended_unverified() {
        let verdict = Verdict::Yield {
            why: failed(vec!["boom".into()]),
            max: 3,
        };
        let Message::Notice(text) = message(&verdict, &Facts::default()) else {
            panic!("a notice")
        };
        assert!(
            text.starts_with(
                "prove-it: NOT_PROVEN: this turn ended unverified (after 3 attempts)."
            )
        );
        assert!(!text.contains("PROVEN:") || text.contains("NOT_PROVEN:"));
        assert!(text.contains("exit code: 1"), "{text}");
    }

    #[test]
    fn the_failures_key_lines_from_earlier_come_before_the_last_lines_within_the_cap() {
        let tail: Vec<String> = (0..20)
            .map(|i| format!("  {i}: std::rt::lang_start"))
            .collect();
        let ctx = Facts {
            earlier: vec!["  left: 1".into(), " right: 2".into()],
            ..Facts::default()
        };
        let verdict = Verdict::Block {
            why: failed(tail.clone()),
            attempt: 1,
            max: 3,
        };
        let Message::Block(reason) = message(&verdict, &ctx) else {
            panic!("a block")
        };
        let keys = reason
            .find("      left: 1\n     right: 2\n")
            .expect(&reason);
        assert!(
            keys < reason.find("Last 20 lines of output:").unwrap(),
            "{reason}"
        );

        // Twenty long lines and many long key lines: the key lines get what room is left.
        let tail = (0..20).map(|_| "x".repeat(10_000)).collect();
        let ctx = Facts {
            earlier: (0..12).map(|_| "left: ".repeat(1_000)).collect(),
            ..Facts::default()
        };
        let verdict = Verdict::Block {
            why: failed(tail),
            attempt: 1,
            max: 3,
        };
        let Message::Block(reason) = message(&verdict, &ctx) else {
            panic!("a block")
        };
        assert!(reason.len() <= REASON_CAP, "{}", reason.len());
        assert!(reason.contains("Key lines from earlier"), "{reason}");
        assert!(!reason.contains("[... cut to fit"), "{reason}");
        assert!(reason.contains("PROVE_IT_SKIP=1"));
    }

    /// Checks that could not test the state: each one's lines under a line naming it and its
    /// log, as failing checks' are; verify.sh alone, its lines without one.
    #[test]
    fn several_checks_that_cannot_test_are_each_named_with_their_lines() {
        let said = |check: Option<&str>, line: &str| Untestable {
            check: check.map(str::to_string),
            log: format!("/logs/{}.log", check.unwrap_or("verify")),
            lines: vec![line.to_string()],
        };
        let block = |said: Vec<Untestable>| {
            let verdict = Verdict::Block {
                why: Why::CannotTest {
                    reason: "exit code 125".into(),
                    said,
                },
                attempt: 1,
                max: 3,
            };
            let Message::Block(reason) = message(&verdict, &Facts::default()) else {
                panic!("a block")
            };
            reason
        };
        let two = block(vec![
            said(Some("api"), "no compiler"),
            said(Some("docs"), "no sphinx"),
        ]);
        let api = two
            .find("    --- check api (its full output: /logs/api.log):\n    no compiler\n")
            .expect(&two);
        let docs = two
            .find("    --- check docs (its full output: /logs/docs.log):\n    no sphinx\n")
            .expect(&two);
        assert!(api < docs, "{two}");
        assert!(
            two.contains(": checks api, docs say this state cannot be tested"),
            "{two}"
        );
        let alone = block(vec![said(None, "no compiler")]);
        assert!(alone.contains("\n    no compiler\n"), "{alone}");
        assert!(!alone.contains("--- check"), "{alone}");
    }

    #[test]
    fn huge_output_is_cut_below_the_hosts_limit() {
        let paths = (0..5000).map(|i| format!("dir/{i}")).collect();
        let verdict = Verdict::Block {
            why: Why::StateChanged { paths },
            attempt: 1,
            max: 3,
        };
        let Message::Block(reason) = message(&verdict, &Facts::default()) else {
            panic!("a block")
        };
        assert!(reason.contains("... and 4980 more"), "{reason}");
        let tail = (0..20).map(|_| "x".repeat(10_000)).collect();
        let diff = "+exit 0\n".repeat(3000);
        let ctx = Facts {
            diff: Some(diff),
            ..Facts::default()
        };
        let verdict = Verdict::Block {
            why: failed(tail),
            attempt: 1,
            max: 3,
        };
        let Message::Block(reason) = message(&verdict, &ctx) else {
            panic!("a block")
        };
        assert!(reason.len() < 8_000, "{}", reason.len());
        assert!(reason.contains("PROVE_IT_SKIP=1"));
        let verdict = Verdict::Block {
            why: Why::Disarmed {
                armed: crate::armed::Armed::NotAFile,
            },
            attempt: 1,
            max: 3,
        };
        let Message::Block(reason) = message(&verdict, &ctx) else {
            panic!("a block")
        };
        assert!(reason.len() < 8_000, "{}", reason.len());
        assert!(reason.contains("[... cut to fit"), "{reason}");
        assert!(reason.contains("PROVE_IT_SKIP=1"));
    }

    #[test]
    fn quiet_verdicts_say_nothing_unless_the_anchor_was_missing() {
        assert_eq!(
            message(&Verdict::Quiet(Quiet::Unchanged), &Facts::default()),
            Message::Silent
        );
        assert_eq!(
            message(&Verdict::Quiet(Quiet::Proven), &Facts::default()),
            Message::Silent
        );
        let ctx = Facts {
            anchor_missing: true,
            ..Facts::default()
        };
        assert!(matches!(
            message(&Verdict::Quiet(Quiet::Proven), &ctx),
            Message::Notice(text) if text.contains("No session-start anchor")
        ));
    }

    /// The gate decides which answers are notices (to tell them to the agent where a host shows
    /// none); the words here must agree with it for every verdict.
    #[test]
    fn the_gate_and_the_words_agree_on_which_verdicts_are_notices() {
        let why = || failed(vec!["boom".into()]);
        let verdicts = [
            Verdict::Quiet(Quiet::NotArmed),
            Verdict::Quiet(Quiet::Unchanged),
            Verdict::Quiet(Quiet::Proven),
            Verdict::Bounded,
            Verdict::Skipped,
            Verdict::Block {
                why: why(),
                attempt: 1,
                max: 3,
            },
            Verdict::Yield { why: why(), max: 3 },
        ];
        for anchor_missing in [false, true] {
            let facts = Facts {
                anchor_missing,
                ..Facts::default()
            };
            for verdict in &verdicts {
                assert_eq!(
                    matches!(message(verdict, &facts), Message::Notice(_)),
                    Answer::is_notice(verdict, &facts),
                    "{verdict:?} with anchor_missing {anchor_missing}"
                );
            }
        }
    }

    #[test]
    fn a_gauntlet_round_is_never_told_a_notice_as_a_block() {
        let round = Reply::StandAside { round: "03".into() };
        assert!(matches!(
            reply(&round, true),
            Message::Notice(text) if text.contains("standing aside")
        ));
        let skip = Reply::Answer(Answer {
            verdict: Verdict::Skipped,
            facts: Facts::default(),
            to_the_agent: false,
        });
        assert!(matches!(reply(&skip, true), Message::Block(_)));
        assert!(matches!(reply(&skip, false), Message::Notice(_)));
    }

    #[test]
    fn a_notice_for_the_agent_is_one_last_block_carrying_it() {
        let answer = Answer {
            verdict: Verdict::Yield {
                why: failed(vec!["boom".into()]),
                max: 3,
            },
            facts: Facts::default(),
            to_the_agent: true,
        };
        let Message::Block(text) = super::answer(&answer) else {
            panic!("a block")
        };
        assert!(text.starts_with("prove-it: NOT_PROVEN: this turn ended unverified"));
        assert!(text.contains("quoting the notice above"), "{text}");
    }

    /// A stop about several worktrees: any block blocks, naming each worktree; else
    /// every notice, the loudest first; else silence.
    #[test]
    fn several_worktrees_block_if_any_blocks_else_the_loudest_notice_comes_first() {
        let part = |worktree: &str, reply: Reply| Part {
            worktree: Some(worktree.to_string()),
            reply,
        };
        let block = |attempt| {
            Reply::Answer(Answer {
                verdict: Verdict::Block {
                    why: failed((0..20).map(|_| "x".repeat(10_000)).collect()),
                    attempt,
                    max: 3,
                },
                facts: Facts::default(),
                to_the_agent: false,
            })
        };
        let not_gated = Part {
            worktree: None,
            reply: Reply::NotGated {
                worktree: "/clone".into(),
            },
        };
        let Message::Block(text) = reply(
            &Reply::Several(vec![
                part("/a", block(1)),
                not_gated.clone(),
                part("/b", block(2)),
            ]),
            false,
        ) else {
            panic!("a block")
        };
        assert!(
            text.starts_with("prove-it: in /a: DISPROVEN (attempt 1 of 3"),
            "{text}"
        );
        assert!(
            text.contains("\n\nprove-it: in /b: DISPROVEN (attempt 2 of 3"),
            "{text}"
        );
        assert!(!text.contains("/clone"), "{text}");
        assert!(text.len() <= REASON_CAP, "{}", text.len());
        assert_eq!(text.matches("PROVE_IT_SKIP=1").count(), 2, "{text}");

        let Message::Notice(text) = reply(
            &Reply::Several(vec![
                not_gated.clone(),
                part("/a", Reply::Silent),
                part("/b", Reply::CouldNotCheck("the notes are corrupt".into())),
            ]),
            false,
        ) else {
            panic!("a notice")
        };
        assert!(
            text.starts_with("prove-it: in /b: could not check this turn: the notes are corrupt"),
            "{text}"
        );
        assert!(
            text.contains("\n\nprove-it: /clone was not gated"),
            "{text}"
        );
        assert_eq!(
            reply(&Reply::Several(vec![part("/a", Reply::Silent)]), false),
            Message::Silent
        );
        // A host that shows no notices gets the combined notice as one last block.
        assert!(matches!(
            reply(&Reply::Several(vec![not_gated]), true),
            Message::Block(text) if text.contains("quoting the notice above")
        ));
    }
}
