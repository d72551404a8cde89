//! The decision at an agent's stop: what the gate observed (`Observed`) in, a verdict out
//! (`Decision`), rule by rule as SPEC section 8, "The decision", writes them. Pure: it reads no
//! file, runs nothing and prints nothing, so every branch is tested by a table.

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::armed::{Armed, NotRunnable};
use crate::context::policy::{UncoveredPolicy, VerifyEdits, Weakening};
use crate::proof::{Outcome, Script};

/// What the gate saw at session start, as far as the decision needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AnchorFacts {
    pub armed: bool,
    /// `None` when the worktree's content made the state tree uncomputable at session start.
    pub state_tree: Option<ObjectId>,
    pub head_tree: Option<ObjectId>,
    pub verify: Option<Script>,
    pub max_blocks: u32,
    pub timeout_secs: u64,
    /// `prove-it.retries` at session start.
    pub retries: u32,
    /// `prove-it.sign` at session start.
    pub sign: bool,
    pub verify_edits: VerifyEdits,
    /// With a checks file at session start: it and each named check's script, by path
    /// (`gate::anchor::Prover`); `None` without one.
    pub provers: Option<Vec<(String, Script)>>,
    /// `prove-it.weakening` at session start.
    pub weakening: Weakening,
}

/// With a checks file: what the gate saw of its checks (SPEC.md section 2.1).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ChecksFacts {
    /// The checks file and each named check's script, by path, sorted.
    pub provers: Vec<(String, Script)>,
    /// A check that cannot run, its script, and why (`Check::runnable`): refused, as a
    /// disarmed verify.sh is.
    pub unrunnable: Option<(String, String, NotRunnable)>,
    /// The checks `PROVE_IT_SKIP` named that the checks file declares: not run, visibly.
    pub skipped: Vec<String>,
}

/// How the session's anchor disagrees with the session's own copy of it, saved when the
/// session started. Either way the anchor cannot be trusted: a rewritten
/// `state-tree:` would make a changed session look unchanged, a deleted one would make an edit
/// of verify.sh look like none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Tampered {
    /// The session recorded an anchor, and the anchors ref no longer holds it.
    Missing,
    /// The anchor's note text is not the one the session recorded.
    Changed,
    /// An anchor is there, and the session's own copy of it is not.
    Unsealed,
}

/// The working state now, when verify.sh is armed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    /// The state tree could not be computed because of the worktree's content.
    ContentError(String),
    /// Checked-out submodules (or nested repositories) hold changes their commit does not:
    /// their paths, sorted. The state tree cannot show them, so nothing may prove it.
    DirtySubmodules(Vec<String>),
    Tree {
        tree: ObjectId,
        head_tree: Option<ObjectId>,
        verify: Option<Script>,
        /// The outcome of the best valid proof of `tree`, if there is one. With a checks
        /// file: `Some` when every check not skipped has one (BOUNDED_CLAIM_SURVIVES if any
        /// of them is).
        proof: Option<Outcome>,
        /// `Some` with a checks file.
        checks: Option<ChecksFacts>,
    },
}

/// What running verify.sh showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunFacts {
    Passed(Outcome),
    /// It passed, and its proof is contested: a run of the same script failed on the same
    /// state (`checks`: the named checks so contested; empty for the root verify.sh).
    Flaky {
        checks: Vec<String>,
    },
    Failed {
        /// Each failing script, in the order the checks were run.
        failing: Vec<Failing>,
        /// The first one's exit code, when it exited.
        exit_code: Option<i32>,
        /// The failures that predate the session: the same check failed with the same last
        /// lines on the state the session started from, and it is on record.
        predates: Vec<Predated>,
    },
    /// verify.sh (or a check) said the state cannot be tested (exit 125).
    CannotTest {
        reason: String,
        /// Each script that said so, with its last lines.
        said: Vec<Untestable>,
    },
    /// verify.sh passed, but the state after it is not the one it tested.
    StateChanged {
        paths: Vec<String>,
    },
    /// The state after the run could not be computed because of the worktree's content.
    ContentError(String),
}

/// Everything the gate observed at one stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Observed {
    /// `PROVE_IT_SKIP=1` in the hook's environment.
    pub skip: bool,
    /// `Err(reason)` when verify.sh is not armed now, the reason reading after "verify.sh ".
    pub armed_now: Result<(), crate::armed::Armed>,
    /// `None` when no anchor was found for this session and worktree.
    pub anchor: Option<AnchorFacts>,
    /// Whether HEAD's tree holds an executable verify.sh: without an anchor, the best evidence
    /// that the repository was armed when the session started.
    pub armed_at_head: bool,
    /// The working state; `None` when it was not computed (verify.sh not armed now).
    pub state: Option<State>,
    /// The gate's budget in force now (0 = warn-only).
    pub max_blocks: u32,
    /// verify.sh's timeout in force now.
    pub timeout_secs: u64,
    /// `prove-it.retries` in force now.
    pub retries: u32,
    /// `prove-it.sign` in force now.
    pub sign: bool,
    /// `prove-it.verifyEdits` in force now.
    pub verify_edits: VerifyEdits,
    /// `Some` when the anchor disagrees with the session's own copy of it.
    pub tampered: Option<Tampered>,
    /// The anchor recorded the filter configuration (`Repo::filter_digest`), and it differs now.
    pub filters_changed: bool,
    /// The anchor recorded the ignore rules from outside the worktree
    /// (`Repo::ignore_digest`), and they differ now.
    pub ignores_changed: bool,
    /// With an anchor: the `.gitignore` files of the worktree that are themselves ignored (no
    /// part of the state), appeared or changed since the session started, and hide paths on
    /// disk (`Repo::hiding_rules`).
    pub hiding_rules: Vec<HidingRule>,
    /// Without an anchor, verify.sh in HEAD's tree (`Some(None)`: HEAD has none): the
    /// baseline an edit is told by, so that deleting the anchor and its copy does not make a
    /// weakened verify.sh look unedited. `None` with an anchor or an unborn HEAD.
    pub verify_at_head: Option<Option<Script>>,
    /// Without an anchor, the checks file and check scripts of HEAD's tree, when it has a
    /// checks file (the baseline an edit of them is told by).
    pub provers_at_head: Option<Vec<(String, Script)>>,
    /// A checks file is at the worktree root now.
    pub checks_file_now: bool,
    /// Without an anchor and without a checks file now: HEAD's tree has one (the session
    /// started with it, as far as can be told).
    pub checks_file_at_head: bool,
    /// Blocks already given in this turn.
    pub blocks: u32,
    pub run: Option<RunFacts>,
    /// With a checks file: the paths this session changed (since its start commit; without
    /// an anchor, since HEAD) that no check reads, the first ones, and how many.
    pub uncovered: (Vec<String>, usize),
    /// `prove-it.uncovered`: name them in a notice, or refuse the turn.
    pub uncovered_policy: UncoveredPolicy,
    /// The protected paths weakened since the session started (without an anchor, since
    /// HEAD), each finding as its record line (SPEC.md section 2.2), and the ways the tests of
    /// the proof in hand fell short of the baseline's (its `tests-weakened:` lines).
    pub weakened: Vec<WeakeningFound>,
    /// Of these, the ones the agent was already sent back for: refused once each.
    pub weakened_refused: Vec<WeakeningFound>,
    /// `prove-it.weakening` in force now.
    pub weakening: Weakening,
}

/// A failure of this turn that is on record, with the same last lines, for the state the
/// session started from: it predates the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Predated {
    /// The named check; `None` for the root verify.sh.
    pub check: Option<String>,
    /// When that failure was recorded (RFC 3339) and by which host (`cli`, `claude`, ...).
    pub time: String,
    pub host: String,
}

/// One failing script of a run, as data: the report says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Failing {
    /// The check of `prove-it.toml` it ran; `None` for verify.sh run alone.
    pub check: Option<String>,
    pub ending: Ending,
    /// Where its full output is kept, where several failed.
    pub log: Option<String>,
    /// Its last lines, within the lines one run gets.
    pub lines: Vec<String>,
}

/// How a failing script's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Ending {
    /// Its script ended so.
    Ended(crate::process::Ended),
    /// The stop waited for the run made ahead for its state past its whole timeout.
    AheadOutlasted { timeout_secs: u64 },
}

impl Ending {
    /// A script that exited with `code`, for tests of what is said of it.
    #[cfg(test)]
    pub(crate) fn code(code: i32) -> Ending {
        Ending::Ended(crate::process::Ended::new(
            crate::process::Exit::Code(code),
            std::time::Duration::from_secs(300),
        ))
    }

    /// A failure record's `exit:` for a script that ended (`proof::exit_value`); `None` for a
    /// stop that never saw its run end. The words for each are the report's.
    pub(crate) fn exit_value(self) -> Option<String> {
        match self {
            Ending::Ended(ended) => Some(crate::proof::exit_value(ended)),
            Ending::AheadOutlasted { .. } => None,
        }
    }
}

impl Failing {
    /// How the failing scripts ended, as one value: each ending as `say` puts it, named with its
    /// check where checks ran ("api: exit code 1; docs: timed out after 300 s").
    pub(crate) fn exits(failing: &[Failing], say: impl Fn(Ending) -> String) -> String {
        failing
            .iter()
            .map(|f| match &f.check {
                Some(check) => format!("{check}: {}", say(f.ending)),
                None => say(f.ending),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The checks of `prove-it.toml` among `failing`; empty when verify.sh alone ran.
    pub(crate) fn checks(failing: &[Failing]) -> Vec<String> {
        failing.iter().filter_map(|f| f.check.clone()).collect()
    }

    /// Every failing script's last lines, in order.
    pub(crate) fn lines(failing: &[Failing]) -> Vec<String> {
        failing.iter().flat_map(|f| f.lines.clone()).collect()
    }
}

/// Why a turn may not end as proven.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Why {
    Failed {
        /// Each failing script: data, which the report says.
        failing: Vec<Failing>,
        exit_code: Option<i32>,
        /// Which of these failures predate the session (`RunFacts::Failed::predates`).
        #[serde(default)]
        predates: Vec<Predated>,
    },
    /// verify.sh (or a check) said the state cannot be tested (exit 125): not a failure of the
    /// code, but an agent's state must be testable before its turn ends.
    CannotTest {
        reason: String,
        said: Vec<Untestable>,
    },
    /// The checks file the session started with was deleted.
    ChecksFileDeleted,
    /// A check of `prove-it.toml` cannot run: its script `script`, for `why`.
    CheckDisarmed {
        check: String,
        script: String,
        why: NotRunnable,
    },
    /// Armed at session start, not now: how verify.sh stands now.
    Disarmed {
        armed: Armed,
    },
    /// The policy in force is weaker than at session start.
    Weakened(Weakened),
    Content {
        message: String,
    },
    StateChanged {
        paths: Vec<String>,
    },
    /// The session's anchor was deleted or rewritten.
    AnchorTampered(Tampered),
    /// verify.sh changed since the session started, and `prove-it.verifyEdits = block`.
    VerifyEdited,
    /// Submodules hold changes their commit does not: a change, and unprovable.
    DirtySubmodules {
        paths: Vec<String>,
    },
    /// The turn changed paths no check reads, and `prove-it.uncovered = block`.
    Uncovered {
        paths: Vec<String>,
        count: usize,
    },
    /// A `.gitignore` that is itself ignored appeared or changed during the session and hides
    /// paths on disk from the state tree.
    HiddenByIgnoredRules {
        rules: Vec<HidingRule>,
    },
    /// Protected paths were weakened (each finding as its record line), and
    /// `prove-it.weakening = block`: sent back once for each new weakening.
    ProtectedWeakened {
        findings: Vec<WeakeningFound>,
    },
}

/// An ignored `.gitignore` of the worktree and the paths on disk it hides (the first ones,
/// and how many).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HidingRule {
    pub rule: String,
    pub hidden: Vec<String>,
    pub count: usize,
    /// The rule file lies outside the worktree (`.git/info/exclude`, `core.excludesFile`):
    /// the paths it hides are new since the session started.
    #[serde(default)]
    pub outside: bool,
}

/// How the policy was weakened since the session started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Weakened {
    /// Fewer blocks per turn (0: warn-only).
    MaxBlocks { anchor: u32, now: u32 },
    /// A longer verify.sh timeout: past the host's hook timeout, a hung verify.sh would let the
    /// turn end without a verdict.
    Timeout { anchor: u64, now: u64 },
    /// More retries of a failing check: a check that fails most of the time would pass once
    /// it is run often enough.
    Retries { anchor: u32, now: u32 },
    /// `prove-it.sign` turned off: an unsigned or forged proof would count again.
    Signing,
    /// `prove-it.verifyEdits` lowered from `block` to `show`.
    VerifyEdits,
    /// `prove-it.weakening` lowered from `block` to `show`.
    Weakening,
    /// The clean filters or attributes from outside the worktree changed: a filter can map an
    /// edit back to a proven blob, hiding it from the state tree.
    Filters,
    /// The ignore rules from outside the worktree changed: a new rule hides a new file that
    /// verify.sh reads from the state tree.
    Ignores,
}

/// A weakening a stop found: a protected path's (`check` is `None`), or one way the tests of a
/// proof's run fell short of its baseline's, with the named check whose run it was (`None`:
/// verify.sh's). `line` is the record's line (`weakened:`, `tests-weakened:`), data the report
/// words; a turn refuses each one once, by this value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WeakeningFound {
    pub check: Option<String>,
    pub line: String,
}

impl WeakeningFound {
    /// Found with no check: a protected path's, or verify.sh's run's.
    pub(crate) fn of_state(line: impl Into<String>) -> WeakeningFound {
        WeakeningFound {
            check: None,
            line: line.into(),
        }
    }

    /// Found in the run of the named check `check`.
    pub(crate) fn of_check(check: &str, line: &str) -> WeakeningFound {
        WeakeningFound {
            check: Some(check.to_string()),
            line: line.to_string(),
        }
    }
}

/// A script that said the state cannot be tested (exit 125): its check (`None`: the root
/// verify.sh alone; where several said so, each is named, `verify.sh` too), its full output, and
/// its last lines (within the lines one run gets, shared by all that said so).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Untestable {
    pub check: Option<String>,
    pub log: String,
    pub lines: Vec<String>,
}

impl Untestable {
    /// The checks named among `said`; empty for the root verify.sh alone.
    pub(crate) fn checks(said: &[Untestable]) -> Vec<String> {
        said.iter().filter_map(|u| u.check.clone()).collect()
    }

    /// Every such script's last lines, in order.
    pub(crate) fn lines(said: &[Untestable]) -> Vec<String> {
        said.iter().flat_map(|u| u.lines.clone()).collect()
    }
}

/// Why a turn ends without a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Quiet {
    /// verify.sh is not armed and was not at session start: the repository opted out.
    NotArmed,
    /// The session changed nothing.
    Unchanged,
    /// The state has a proof (found, or made just now) through the anchor's verify.sh.
    Proven,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Verdict {
    /// The turn ends; nothing needs saying.
    Quiet(Quiet),
    /// Proven through a verify.sh that was edited during the session.
    Bounded,
    /// Send the agent back: attempt `attempt` of `max`.
    Block { why: Why, attempt: u32, max: u32 },
    /// The budget is spent (or the gate is warn-only): the turn ends unverified, loudly.
    Yield { why: Why, max: u32 },
    /// `PROVE_IT_SKIP=1`: the turn ends unverified, and the gate says so.
    Skipped,
    /// verify.sh (or `checks`) passed on a state on which a run of the same script failed:
    /// the turn ends, unverified and saying so, and the contest stays for a person.
    Flaky {
        #[serde(default)]
        checks: Vec<String>,
    },
    /// `PROVE_IT_SKIP=api,docs`: the other checks are proven; these were not run, and the
    /// turn ends unverified, saying so.
    SkippedChecks { checks: Vec<String> },
    /// The checks are proven, but the turn changed paths none of them reads: the turn ends,
    /// naming them.
    Uncovered { paths: Vec<String>, count: usize },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Run verify.sh, then decide again with its result in `Observed::run`.
    Run,
    Verdict(Verdict),
}

impl Verdict {
    /// The outcome in the shared vocabulary (the table in SPEC.md, pinned by these tests).
    pub(crate) fn outcome(&self) -> Outcome {
        match self {
            Verdict::Quiet(Quiet::NotArmed | Quiet::Unchanged) => Outcome::InsufficientEvidence,
            Verdict::Quiet(Quiet::Proven) => Outcome::Proven,
            Verdict::Bounded => Outcome::BoundedClaimSurvives,
            Verdict::Block { .. } => Outcome::Disproven,
            Verdict::Yield { .. }
            | Verdict::Skipped
            | Verdict::SkippedChecks { .. }
            | Verdict::Uncovered { .. }
            | Verdict::Flaky { .. } => Outcome::NotProven,
        }
    }
}

/// May this turn end? SPEC section 8, "The decision", rule by rule.
pub(crate) fn decide(observed: &Observed) -> Decision {
    use Decision::Verdict as Done;

    // Rule 1: a person's deliberate bypass, never silent.
    if observed.skip {
        return Done(Verdict::Skipped);
    }
    // A weaker budget than the anchor's is refused, and the anchor's budget is what counts.
    let anchor_max = observed.anchor.as_ref().map_or(0, |a| a.max_blocks);
    let max = observed.max_blocks.max(anchor_max);
    let refuse = |why: Why| {
        Done(if observed.blocks < max {
            Verdict::Block {
                why,
                attempt: observed.blocks + 1,
                max,
            }
        } else {
            Verdict::Yield { why, max }
        })
    };

    // An anchor the session's own copy disagrees with cannot say what the session started
    // from: refused loudly, never read as "unchanged".
    if let Some(tampered) = observed.tampered {
        return refuse(Why::AnchorTampered(tampered));
    }
    // Rules 3 and 4: not armed now.
    match disarmed(observed) {
        Some(Ok(why)) => return refuse(why),
        Some(Err(quiet)) => return Done(quiet),
        None => {}
    }
    if let Some(why) = weaker_than_the_anchor(observed, anchor_max) {
        return refuse(why);
    }
    let TreeSeen {
        tree,
        head_tree,
        verify,
        proof,
        checks,
    } = match tree_seen(observed) {
        Ok(seen) => seen,
        Err(why) => return refuse(why),
    };

    // Rule 5: a session that changed nothing is left alone. No anchor counts as changed.
    if !changed(observed, tree, *head_tree) {
        return Done(Verdict::Quiet(Quiet::Unchanged));
    }
    // A check that cannot run: refused like a disarmed verify.sh.
    if let Some((check, script, why)) = checks.as_ref().and_then(|c| c.unrunnable.clone()) {
        return refuse(Why::CheckDisarmed { check, script, why });
    }
    let edited = edited(observed, *verify, checks.as_ref());
    // Rule 5b: with `verifyEdits = block`, an edited verify.sh is refused
    // before anything runs; it is the person's to change.
    if edited && observed.verify_edits == VerifyEdits::Block {
        return refuse(Why::VerifyEdited);
    }
    // With `weakening = block`, a weakening (of protected paths, or of the tests a run ran)
    // not refused before sends the agent back once, naming it; a person accepts it (SPEC.md
    // section 2.2).
    if let Some(findings) = weakenings_to_refuse(observed) {
        return refuse(Why::ProtectedWeakened { findings });
    }
    let closing = Closing {
        observed,
        skipped: checks
            .as_ref()
            .map(|c| c.skipped.clone())
            .unwrap_or_default(),
        edited,
    };
    match &observed.run {
        // Rule 6: a proof, whoever wrote it, means nothing runs again.
        None => match proof {
            Some(outcome) => closing.proven(*outcome, &refuse),
            None => Decision::Run,
        },
        // Rule 7.
        Some(RunFacts::Passed(outcome)) => closing.proven(*outcome, &refuse),
        // A pass does not settle a contest: a person does (SPEC.md section 2.3).
        Some(RunFacts::Flaky { checks }) => Done(Verdict::Flaky {
            checks: checks.clone(),
        }),
        // Rules 8 and 10.
        Some(ran) => refuse(not_passed(ran)),
    }
}

/// The fields of `State::Tree`, borrowed, for the rules that read them.
struct TreeSeen<'a> {
    tree: &'a ObjectId,
    head_tree: &'a Option<ObjectId>,
    verify: &'a Option<Script>,
    proof: &'a Option<Outcome>,
    checks: &'a Option<ChecksFacts>,
}

/// The state tree and what was seen of it, or why a state without one is refused.
fn tree_seen(observed: &Observed) -> Result<TreeSeen<'_>, Why> {
    match &observed.state {
        Some(State::Tree {
            tree,
            head_tree,
            verify,
            proof,
            checks,
        }) => Ok(TreeSeen {
            tree,
            head_tree,
            verify,
            proof,
            checks,
        }),
        Some(State::ContentError(message)) => Err(Why::Content {
            message: message.clone(),
        }),
        // Before rule 5 and rule 6: the tree looks the same (and may even have a proof) while
        // the submodule's worktree is not what any proof tested.
        Some(State::DirtySubmodules(paths)) => Err(Why::DirtySubmodules {
            paths: paths.clone(),
        }),
        None => unreachable!("the state is observed whenever verify.sh is armed"),
    }
}

/// Rule 5's question: did the session change the state (or HEAD) since its anchor? Without an
/// anchor, it did.
fn changed(observed: &Observed, tree: &ObjectId, head_tree: Option<ObjectId>) -> bool {
    observed
        .anchor
        .as_ref()
        .is_none_or(|anchor| anchor.state_tree != Some(*tree) || anchor.head_tree != head_tree)
}

/// Whether `decide` may ask for a run of what was observed: a state tree the session changed,
/// which nothing proves and nothing has run on yet. (It asks for one when no rule refuses the
/// turn first.) A stop waits for a run already in flight only then.
pub(crate) fn may_run(observed: &Observed) -> bool {
    match &observed.state {
        Some(State::Tree {
            tree,
            head_tree,
            proof: None,
            ..
        }) => observed.run.is_none() && changed(observed, tree, *head_tree),
        _ => false,
    }
}

/// The verdict on the run `decide` asked for, now that `observed.run` holds what it showed:
/// the same rules, which a run's result always settles.
pub(crate) fn after_run(observed: &Observed) -> Verdict {
    debug_assert!(observed.run.is_some(), "a run's result is observed");
    match decide(observed) {
        Decision::Verdict(verdict) => verdict,
        Decision::Run => unreachable!("a run's result always decides"),
    }
}

/// Rules 3 and 4: the checks file the session started with (without an anchor: HEAD's) gone,
/// or verify.sh not armed now: `Ok` the refusal when it was armed at the start, `Err` the quiet
/// verdict when it never was; `None` when armed.
fn disarmed(observed: &Observed) -> Option<Result<Why, Verdict>> {
    let checks_at_start = match &observed.anchor {
        Some(anchor) => anchor.provers.as_ref().is_some_and(|p| !p.is_empty()),
        None => observed.checks_file_at_head,
    };
    if checks_at_start && !observed.checks_file_now {
        return Some(Ok(Why::ChecksFileDeleted));
    }
    let armed = observed.armed_now.err()?;
    let armed_at_start = match &observed.anchor {
        Some(anchor) => anchor.armed,
        None => observed.armed_at_head,
    };
    Some(if armed_at_start {
        Ok(Why::Disarmed { armed })
    } else {
        Err(Verdict::Quiet(Quiet::NotArmed))
    })
}

/// A setting laxer now than the session's anchor recorded (the budget, the timeout, retries,
/// signing, the policies for edits and weakenings), a filter or an ignore rule changed, or
/// rules that hide paths of the state: the refusal, before rule 5, since what they change or
/// hide is what makes a state look unchanged.
fn weaker_than_the_anchor(observed: &Observed, anchor_max: u32) -> Option<Why> {
    if observed.max_blocks < anchor_max {
        return Some(Why::Weakened(Weakened::MaxBlocks {
            anchor: anchor_max,
            now: observed.max_blocks,
        }));
    }
    let anchor = observed.anchor.as_ref()?;
    let weakened = if observed.timeout_secs > anchor.timeout_secs {
        Weakened::Timeout {
            anchor: anchor.timeout_secs,
            now: observed.timeout_secs,
        }
    } else if observed.retries > anchor.retries {
        Weakened::Retries {
            anchor: anchor.retries,
            now: observed.retries,
        }
    } else if anchor.sign && !observed.sign {
        Weakened::Signing
    } else if observed.verify_edits < anchor.verify_edits {
        Weakened::VerifyEdits
    } else if observed.weakening < anchor.weakening {
        Weakened::Weakening
    } else {
        // A state that cannot be read (verify.sh not as recorded, through that very filter,
        // say) is refused later in its own, more precise words.
        let readable = !matches!(observed.state, Some(State::ContentError(_)));
        if observed.filters_changed && readable {
            Weakened::Filters
        } else if observed.ignores_changed
            && readable
            // Named with the paths they hide, where new paths are hidden.
            && !observed.hiding_rules.iter().any(|rule| rule.outside)
        {
            Weakened::Ignores
        } else if (observed.ignores_changed && readable) || !observed.hiding_rules.is_empty() {
            return Some(Why::HiddenByIgnoredRules {
                rules: observed.hiding_rules.clone(),
            });
        } else {
            return None;
        }
    };
    Some(Why::Weakened(weakened))
}

/// Whether what proves the state (verify.sh, the checks file, a check's script) differs from
/// what the session started with (without an anchor: HEAD's).
fn edited(observed: &Observed, verify: Option<Script>, checks: Option<&ChecksFacts>) -> bool {
    let provers_now = checks.map(|c| c.provers.clone());
    match &observed.anchor {
        Some(anchor) => {
            anchor.verify != verify
                || anchor.provers.as_ref().unwrap_or(&Vec::new())
                    != provers_now.as_ref().unwrap_or(&Vec::new())
        }
        None => {
            matches!(observed.verify_at_head, Some(Some(head)) if Some(head) != verify)
                || observed
                    .provers_at_head
                    .as_ref()
                    .is_some_and(|head| Some(head) != provers_now.as_ref())
        }
    }
}

/// Under `weakening = block` (the anchor's or now, whichever is stricter), the weakenings not
/// refused before in this turn; `None` when there is none to refuse.
fn weakenings_to_refuse(observed: &Observed) -> Option<Vec<WeakeningFound>> {
    let weakening = observed
        .anchor
        .as_ref()
        .map_or(observed.weakening, |anchor| {
            anchor.weakening.max(observed.weakening)
        });
    if weakening != Weakening::Block {
        return None;
    }
    let fresh: Vec<WeakeningFound> = observed
        .weakened
        .iter()
        .filter(|finding| !observed.weakened_refused.contains(finding))
        .cloned()
        .collect();
    (!fresh.is_empty()).then_some(fresh)
}

/// What the verdict on a proven state reads besides the proof's outcome.
struct Closing<'a> {
    observed: &'a Observed,
    /// The checks a person skipped.
    skipped: Vec<String>,
    /// What proves the state was edited during the session.
    edited: bool,
}

impl Closing<'_> {
    /// The verdict on a state proven with `outcome`: skipped checks, an edit, a weakening or a
    /// bounded proof end the turn bounded or unverified; paths no check reads are said, or
    /// refused under `uncovered = block`.
    fn proven(&self, outcome: Outcome, refuse: &dyn Fn(Why) -> Decision) -> Decision {
        let observed = self.observed;
        let weakened = !observed.weakened.is_empty();
        // A notice of its own only where no other notice (skipped checks, an edit to review)
        // ends the turn: those say the turn is unverified or bounded already.
        let quiet =
            self.skipped.is_empty() && !self.edited && !weakened && outcome == Outcome::Proven;
        let (uncovered, uncovered_count) = &observed.uncovered;
        if *uncovered_count > 0 {
            let (paths, count) = (uncovered.clone(), *uncovered_count);
            match observed.uncovered_policy {
                UncoveredPolicy::Block => return refuse(Why::Uncovered { paths, count }),
                UncoveredPolicy::Notice if quiet => {
                    return Decision::Verdict(Verdict::Uncovered { paths, count });
                }
                UncoveredPolicy::Notice => {}
            }
        }
        Decision::Verdict(if !self.skipped.is_empty() {
            Verdict::SkippedChecks {
                checks: self.skipped.clone(),
            }
        } else if self.edited || weakened || outcome == Outcome::BoundedClaimSurvives {
            Verdict::Bounded
        } else {
            Verdict::Quiet(Quiet::Proven)
        })
    }
}

/// Why a run that did not pass refuses the turn (rules 8 and 10).
fn not_passed(ran: &RunFacts) -> Why {
    match ran {
        RunFacts::Failed {
            failing,
            exit_code,
            predates,
        } => Why::Failed {
            failing: failing.clone(),
            exit_code: *exit_code,
            predates: predates.clone(),
        },
        RunFacts::CannotTest { reason, said } => Why::CannotTest {
            reason: reason.clone(),
            said: said.clone(),
        },
        RunFacts::StateChanged { paths } => Why::StateChanged {
            paths: paths.clone(),
        },
        RunFacts::ContentError(message) => Why::Content {
            message: message.clone(),
        },
        RunFacts::Passed(_) | RunFacts::Flaky { .. } => {
            unreachable!("a pass is decided on, never refused")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    fn script(n: u8) -> Script {
        Script {
            blob: id(n),
            mode: 0o100755,
        }
    }

    fn anchor() -> AnchorFacts {
        AnchorFacts {
            armed: true,
            state_tree: Some(id(1)),
            head_tree: Some(id(2)),
            verify: Some(script(9)),
            max_blocks: 3,
            timeout_secs: 300,
            retries: 0,
            sign: false,
            verify_edits: VerifyEdits::Show,
            provers: None,
            weakening: Weakening::Show,
        }
    }

    #[test]
    fn weakened_protected_paths_bound_the_proof_and_block_once_under_block() {
        let found = |check: &str| WeakeningFound {
            check: Some(check.into()),
            line: "test-gone t.py::test_b".into(),
        };
        let weakened = |policy: Weakening, refused: &[&str]| {
            let mut o = with_state(changed(), |_, _, _, proof| {
                *proof = Some(Outcome::Proven);
            });
            o.weakened = vec![found("api")];
            o.weakened_refused = refused.iter().map(|check| found(check)).collect();
            o.weakening = policy;
            decide(&o)
        };
        assert_eq!(
            weakened(Weakening::Show, &[]),
            Decision::Verdict(Verdict::Bounded)
        );
        assert!(matches!(
            weakened(Weakening::Block, &[]),
            Decision::Verdict(Verdict::Block {
                why: Why::ProtectedWeakened { .. },
                attempt: 1,
                ..
            })
        ));
        assert_eq!(
            weakened(Weakening::Block, &["api"]),
            Decision::Verdict(Verdict::Bounded)
        );
        // The same test gone from another check's run is another weakening, refused once too.
        assert!(matches!(
            weakened(Weakening::Block, &["docs"]),
            Decision::Verdict(Verdict::Block {
                why: Why::ProtectedWeakened { .. },
                ..
            })
        ));
        let mut lowered = changed();
        lowered.anchor.as_mut().unwrap().weakening = Weakening::Block;
        assert!(matches!(
            decide(&lowered),
            Decision::Verdict(Verdict::Block {
                why: Why::Weakened(Weakened::Weakening),
                ..
            })
        ));
    }

    /// A session that changed the state (tree 3 instead of the anchor's 1), no proof, no run.
    fn changed() -> Observed {
        Observed {
            skip: false,
            armed_now: Ok(()),
            anchor: Some(anchor()),
            armed_at_head: true,
            state: Some(State::Tree {
                tree: id(3),
                head_tree: Some(id(2)),
                verify: Some(script(9)),
                proof: None,
                checks: None,
            }),
            max_blocks: 3,
            timeout_secs: 300,
            retries: 0,
            sign: false,
            verify_edits: VerifyEdits::Show,
            tampered: None,
            filters_changed: false,
            ignores_changed: false,
            hiding_rules: Vec::new(),
            verify_at_head: None,
            provers_at_head: None,
            checks_file_now: false,
            checks_file_at_head: false,
            blocks: 0,
            run: None,
            uncovered: (Vec::new(), 0),
            uncovered_policy: UncoveredPolicy::Notice,
            weakened: Vec::new(),
            weakened_refused: Vec::new(),
            weakening: Weakening::Show,
        }
    }

    fn with_state(
        mut o: Observed,
        f: impl FnOnce(&mut ObjectId, &mut Option<ObjectId>, &mut Option<Script>, &mut Option<Outcome>),
    ) -> Observed {
        if let Some(State::Tree {
            tree,
            head_tree,
            verify,
            proof,
            ..
        }) = &mut o.state
        {
            f(tree, head_tree, verify, proof);
        }
        o
    }

    fn failed() -> RunFacts {
        RunFacts::Failed {
            failing: vec![Failing {
                check: None,
                ending: Ending::code(1),
                log: None,
                lines: vec!["1 failed".into()],
            }],
            exit_code: Some(1),
            predates: Vec::new(),
        }
    }

    fn verdict(o: &Observed) -> Verdict {
        match decide(o) {
            Decision::Verdict(v) => v,
            Decision::Run => panic!("expected a verdict, got Run for {o:?}"),
        }
    }

    /// A stop waits for a run in flight only where `decide` could ask for one: never for a
    /// session that changed nothing, a proven state, or a state a run already showed; and
    /// wherever `decide` asks for a run, `may_run` said it might.
    #[test]
    fn a_run_is_asked_for_only_where_may_run_says_one_may_be() {
        let unproven = changed();
        assert!(may_run(&unproven));
        assert_eq!(decide(&unproven), Decision::Run);
        let unchanged = with_state(changed(), |tree, _, _, _| *tree = id(1));
        assert!(!may_run(&unchanged));
        assert_eq!(verdict(&unchanged), Verdict::Quiet(Quiet::Unchanged));
        let proven = with_state(changed(), |_, _, _, proof| *proof = Some(Outcome::Proven));
        assert!(!may_run(&proven));
        let mut ran = changed();
        ran.run = Some(failed());
        assert!(!may_run(&ran));
        // A rule that refuses first: a run may be asked for, and is not.
        let mut tampered = changed();
        tampered.tampered = Some(Tampered::Changed);
        assert!(may_run(&tampered));
        assert!(matches!(verdict(&tampered), Verdict::Block { .. }));
    }

    #[test]
    fn a_proven_turn_that_changed_uncovered_paths_names_them_or_is_refused() {
        let mut o = with_state(changed(), |_, _, _, proof| *proof = Some(Outcome::Proven));
        o.uncovered = (vec!["test.js".into()], 1);
        let named = Verdict::Uncovered {
            paths: vec!["test.js".into()],
            count: 1,
        };
        assert_eq!(verdict(&o), named);
        assert_eq!(named.outcome(), Outcome::NotProven);
        o.uncovered_policy = UncoveredPolicy::Block;
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::Uncovered { count: 1, .. },
                attempt: 1,
                ..
            }
        ));
        // A failing run is refused for its failure first.
        o.run = Some(failed());
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::Failed { .. },
                ..
            }
        ));
        // Nothing changed: nothing to name.
        let mut quiet = o.clone();
        quiet.run = None;
        if let Some(State::Tree { tree, .. }) = &mut quiet.state {
            *tree = id(1);
        }
        quiet.anchor.as_mut().unwrap().head_tree = Some(id(2));
        assert_eq!(verdict(&quiet), Verdict::Quiet(Quiet::Unchanged));
    }

    #[test]
    fn skip_beats_everything() {
        let mut o = changed();
        o.skip = true;
        o.run = Some(failed());
        assert_eq!(verdict(&o), Verdict::Skipped);
        assert_eq!(Verdict::Skipped.outcome(), Outcome::NotProven);
    }

    #[test]
    fn not_armed_now_nor_at_start_is_quiet() {
        let mut o = changed();
        o.armed_now = Err(Armed::Missing);
        o.anchor = Some(AnchorFacts {
            armed: false,
            ..anchor()
        });
        o.state = None;
        assert_eq!(verdict(&o), Verdict::Quiet(Quiet::NotArmed));
        assert_eq!(verdict(&o).outcome(), Outcome::InsufficientEvidence);
        o.anchor = None;
        o.armed_at_head = false;
        assert_eq!(verdict(&o), Verdict::Quiet(Quiet::NotArmed));
    }

    #[test]
    fn disarming_mid_session_is_refused_and_counts() {
        let mut o = changed();
        o.armed_now = Err(Armed::NotExecutable);
        o.state = None;
        o.blocks = 1;
        assert_eq!(
            verdict(&o),
            Verdict::Block {
                why: Why::Disarmed {
                    armed: Armed::NotExecutable
                },
                attempt: 2,
                max: 3
            }
        );
        o.blocks = 3;
        assert!(matches!(verdict(&o), Verdict::Yield { max: 3, .. }));
    }

    #[test]
    fn without_an_anchor_a_verify_sh_in_head_counts_as_armed_at_start() {
        let mut o = changed();
        o.anchor = None;
        o.armed_now = Err(Armed::Missing);
        o.state = None;
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::Disarmed { .. },
                ..
            }
        ));
    }

    #[test]
    fn a_weaker_budget_than_the_anchors_is_refused_under_the_anchors_budget() {
        let mut o = changed();
        o.max_blocks = 0;
        assert_eq!(
            verdict(&o),
            Verdict::Block {
                why: Why::Weakened(Weakened::MaxBlocks { anchor: 3, now: 0 }),
                attempt: 1,
                max: 3
            }
        );
        // A stronger one is fine, and is the budget.
        o.max_blocks = 5;
        o.run = Some(failed());
        assert!(matches!(verdict(&o), Verdict::Block { max: 5, .. }));
    }

    #[test]
    fn more_retries_than_the_anchors_are_refused_and_fewer_are_not() {
        let mut o = changed();
        o.retries = 10;
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::Weakened(Weakened::Retries { anchor: 0, now: 10 }),
                ..
            }
        ));
        if let Some(anchor) = &mut o.anchor {
            anchor.retries = 10;
        }
        o.retries = 1;
        assert_eq!(decide(&o), Decision::Run);
    }

    #[test]
    fn a_longer_timeout_than_the_anchors_is_refused_and_a_shorter_one_is_not() {
        let mut o = changed();
        o.timeout_secs = 100_000;
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::Weakened(Weakened::Timeout {
                    anchor: 300,
                    now: 100_000
                }),
                ..
            }
        ));
        o.timeout_secs = 10;
        assert_eq!(decide(&o), Decision::Run);
    }

    #[test]
    fn an_unchanged_session_is_left_alone() {
        let o = with_state(changed(), |tree, _, _, _| *tree = id(1));
        assert_eq!(verdict(&o), Verdict::Quiet(Quiet::Unchanged));
    }

    #[test]
    fn a_commit_is_a_change_even_when_the_state_tree_did_not_move() {
        let o = with_state(changed(), |tree, head, _, _| {
            *tree = id(1);
            *head = Some(id(7));
        });
        assert_eq!(decide(&o), Decision::Run);
    }

    #[test]
    fn no_anchor_counts_as_changed() {
        let mut o = with_state(changed(), |tree, _, _, _| *tree = id(1));
        o.anchor = None;
        assert_eq!(decide(&o), Decision::Run);
    }

    #[test]
    fn a_changed_state_without_a_proof_runs_verify_sh() {
        assert_eq!(decide(&changed()), Decision::Run);
    }

    #[test]
    fn an_existing_proof_ends_the_turn_without_running() {
        let o = with_state(changed(), |_, _, _, proof| *proof = Some(Outcome::Proven));
        assert_eq!(verdict(&o), Verdict::Quiet(Quiet::Proven));
        assert_eq!(verdict(&o).outcome(), Outcome::Proven);
    }

    #[test]
    fn a_proof_through_an_edited_verify_sh_is_bounded_whoever_wrote_it() {
        let o = with_state(changed(), |_, _, verify, proof| {
            *verify = Some(script(8));
            *proof = Some(Outcome::Proven);
        });
        assert_eq!(verdict(&o), Verdict::Bounded);
        let o = with_state(changed(), |_, _, _, proof| {
            *proof = Some(Outcome::BoundedClaimSurvives);
        });
        assert_eq!(verdict(&o), Verdict::Bounded);
    }

    /// A pass on a state a failing run of the same script contests settles nothing: the turn
    /// ends, NOT_PROVEN and saying so, never as proven.
    #[test]
    fn a_contested_pass_ends_the_turn_flaky_and_not_proven() {
        let mut o = changed();
        o.run = Some(RunFacts::Flaky {
            checks: vec!["api".into()],
        });
        let flaky = Verdict::Flaky {
            checks: vec!["api".into()],
        };
        assert_eq!(verdict(&o), flaky);
        assert_eq!(flaky.outcome(), Outcome::NotProven);
    }

    #[test]
    fn a_passing_run_proves_or_bounds() {
        let mut o = changed();
        o.run = Some(RunFacts::Passed(Outcome::Proven));
        assert_eq!(verdict(&o), Verdict::Quiet(Quiet::Proven));
        o.run = Some(RunFacts::Passed(Outcome::BoundedClaimSurvives));
        assert_eq!(verdict(&o), Verdict::Bounded);
    }

    #[test]
    fn a_failing_run_blocks_until_the_budget_is_spent_then_yields() {
        let mut o = changed();
        o.run = Some(failed());
        for blocks in 0..3 {
            o.blocks = blocks;
            assert!(
                matches!(verdict(&o), Verdict::Block { attempt, max: 3, .. } if attempt == blocks + 1),
                "{blocks}"
            );
        }
        o.blocks = 3;
        let yielded = verdict(&o);
        assert!(matches!(
            yielded,
            Verdict::Yield {
                why: Why::Failed { .. },
                max: 3
            }
        ));
        assert_eq!(yielded.outcome(), Outcome::NotProven);
    }

    #[test]
    fn a_run_that_cannot_test_the_state_blocks_like_a_failure_never_as_one() {
        let mut o = changed();
        o.run = Some(RunFacts::CannotTest {
            reason: "exit 125".into(),
            said: vec![Untestable {
                check: None,
                log: "last-run.log".into(),
                lines: vec!["no compiler".into()],
            }],
        });
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::CannotTest { .. },
                attempt: 1,
                max: 3
            }
        ));
        o.blocks = 3;
        let yielded = verdict(&o);
        assert!(matches!(
            yielded,
            Verdict::Yield {
                why: Why::CannotTest { .. },
                max: 3
            }
        ));
        assert_eq!(yielded.outcome(), Outcome::NotProven);
    }

    #[test]
    fn warn_only_yields_at_once() {
        let mut o = changed();
        o.max_blocks = 0;
        o.anchor = Some(AnchorFacts {
            max_blocks: 0,
            ..anchor()
        });
        o.run = Some(failed());
        assert!(matches!(verdict(&o), Verdict::Yield { max: 0, .. }));
    }

    #[test]
    fn content_errors_and_a_moved_state_block_and_count() {
        let mut o = changed();
        o.state = Some(State::ContentError("unreadable".into()));
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::Content { .. },
                attempt: 1,
                ..
            }
        ));
        let mut o = changed();
        o.run = Some(RunFacts::StateChanged {
            paths: vec!["out.txt".into()],
        });
        o.blocks = 2;
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::StateChanged { .. },
                attempt: 3,
                ..
            }
        ));
        o.run = Some(RunFacts::ContentError("gone".into()));
        o.blocks = 3;
        assert!(matches!(
            verdict(&o),
            Verdict::Yield {
                why: Why::Content { .. },
                ..
            }
        ));
    }
    /// A deleted, rewritten or unsealed anchor is refused before anything
    /// else is read from it, even when the state looks unchanged.
    #[test]
    fn a_tampered_anchor_is_refused_never_unchanged() {
        for tampered in [Tampered::Missing, Tampered::Changed, Tampered::Unsealed] {
            let mut o = with_state(changed(), |tree, _, _, _| *tree = id(1));
            o.tampered = Some(tampered);
            assert_eq!(
                verdict(&o),
                Verdict::Block {
                    why: Why::AnchorTampered(tampered),
                    attempt: 1,
                    max: 3
                }
            );
            o.blocks = 3;
            assert!(matches!(
                verdict(&o),
                Verdict::Yield {
                    why: Why::AnchorTampered(_),
                    ..
                }
            ));
        }
    }

    /// Turning signing off mid-session is refused like a lower budget, and
    /// turning it on is fine.
    #[test]
    fn signing_turned_off_mid_session_is_refused_and_on_is_not() {
        let mut o = changed();
        o.anchor = Some(AnchorFacts {
            sign: true,
            ..anchor()
        });
        assert_eq!(
            verdict(&o),
            Verdict::Block {
                why: Why::Weakened(Weakened::Signing),
                attempt: 1,
                max: 3
            }
        );
        o.sign = true;
        assert_eq!(decide(&o), Decision::Run);
        let mut o = changed();
        o.sign = true;
        assert_eq!(decide(&o), Decision::Run);
    }

    /// An ignore rule added outside the worktree since the anchor is refused like a filter
    /// change, even where the state looks unchanged (the rule may be what makes it look so).
    #[test]
    fn changed_ignore_rules_are_refused_even_on_an_unchanged_state() {
        let mut o = changed();
        o.ignores_changed = true;
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::Weakened(Weakened::Ignores),
                ..
            }
        ));
    }

    /// An ignored `.gitignore` that appeared during the session and hides paths is refused,
    /// even where the state looks unchanged (the hidden paths are why it looks so).
    #[test]
    fn a_self_ignoring_rule_file_hiding_paths_is_refused_even_on_an_unchanged_state() {
        let mut o = changed();
        o.hiding_rules = vec![HidingRule {
            rule: "tests/.gitignore".into(),
            hidden: vec!["tests/evil.py".into()],
            count: 1,
            outside: false,
        }];
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::HiddenByIgnoredRules { .. },
                ..
            }
        ));
    }

    /// A filter configuration changed since the anchor is refused like a lower budget, even
    /// where the state looks unchanged (the filter may be what makes it look so).
    #[test]
    fn changed_filters_are_refused_even_on_an_unchanged_state() {
        let mut o = changed();
        o.filters_changed = true;
        assert_eq!(
            verdict(&o),
            Verdict::Block {
                why: Why::Weakened(Weakened::Filters),
                attempt: 1,
                max: 3
            }
        );
        o.anchor = None;
        assert_eq!(
            decide(&o),
            Decision::Run,
            "without an anchor nothing to compare"
        );
    }

    /// `verifyEdits = block` refuses an edited verify.sh before it runs,
    /// whether the anchor or the policy now says so; lowering it to `show` is refused.
    #[test]
    fn verify_edits_block_refuses_an_edited_verify_sh_and_show_bounds_it() {
        let edited = with_state(changed(), |_, _, verify, _| *verify = Some(script(8)));
        let table = [
            // (anchor's, now, verdict)
            (VerifyEdits::Show, VerifyEdits::Show, None),
            (
                VerifyEdits::Show,
                VerifyEdits::Block,
                Some(Why::VerifyEdited),
            ),
            (
                VerifyEdits::Block,
                VerifyEdits::Block,
                Some(Why::VerifyEdited),
            ),
            (
                VerifyEdits::Block,
                VerifyEdits::Show,
                Some(Why::Weakened(Weakened::VerifyEdits)),
            ),
        ];
        for (at_start, now, want) in table {
            let mut o = edited.clone();
            o.anchor = Some(AnchorFacts {
                verify_edits: at_start,
                ..anchor()
            });
            o.verify_edits = now;
            match want {
                Some(why) => assert_eq!(
                    verdict(&o),
                    Verdict::Block {
                        why,
                        attempt: 1,
                        max: 3
                    },
                    "{at_start:?} {now:?}"
                ),
                None => assert_eq!(decide(&o), Decision::Run, "{at_start:?} {now:?}"),
            }
        }
        // An unedited verify.sh is not refused by `block`.
        let mut o = changed();
        o.verify_edits = VerifyEdits::Block;
        assert_eq!(decide(&o), Decision::Run);
        o.run = Some(RunFacts::Passed(Outcome::Proven));
        assert_eq!(verdict(&o), Verdict::Quiet(Quiet::Proven));
        // With `show`, the edited one is bounded as before.
        let mut o = edited;
        o.run = Some(RunFacts::Passed(Outcome::BoundedClaimSurvives));
        assert_eq!(verdict(&o), Verdict::Bounded);
    }

    /// With the anchor and its copy both deleted, verify.sh is told edited
    /// against HEAD's, so a weakened one proves only BOUNDED (or is refused with `block`).
    #[test]
    fn without_an_anchor_an_edit_is_told_against_heads_verify_sh() {
        let mut o = with_state(changed(), |_, _, verify, _| *verify = Some(script(8)));
        o.anchor = None;
        o.run = Some(RunFacts::Passed(Outcome::Proven));
        assert_eq!(verdict(&o), Verdict::Quiet(Quiet::Proven), "no baseline");
        o.verify_at_head = Some(Some(script(9)));
        assert_eq!(verdict(&o), Verdict::Bounded);
        o.verify_at_head = Some(Some(script(8)));
        assert_eq!(
            verdict(&o),
            Verdict::Quiet(Quiet::Proven),
            "the same as HEAD's"
        );
        // A verify.sh HEAD does not have is new, not an edit.
        o.verify_at_head = Some(None);
        assert_eq!(verdict(&o), Verdict::Quiet(Quiet::Proven));
        o.verify_at_head = Some(Some(script(9)));
        o.run = None;
        o.verify_edits = VerifyEdits::Block;
        assert!(matches!(
            verdict(&o),
            Verdict::Block {
                why: Why::VerifyEdited,
                ..
            }
        ));
    }

    // A dirty submodule refuses even where the tree is the anchor's, or is proven: the tree
    // records the submodule's commit only.
    #[test]
    fn dirty_submodules_block_even_an_unchanged_or_proven_tree() {
        for anchor_tree in [id(1), id(3)] {
            let mut o = changed();
            o.anchor = Some(AnchorFacts {
                state_tree: Some(anchor_tree),
                ..anchor()
            });
            o.state = Some(State::DirtySubmodules(vec!["sub".into()]));
            assert_eq!(
                verdict(&o),
                Verdict::Block {
                    why: Why::DirtySubmodules {
                        paths: vec!["sub".into()]
                    },
                    attempt: 1,
                    max: 3,
                }
            );
        }
    }
}
