use std::borrow::Cow;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

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
        /// The outcome of the best valid proof of `tree`, if there is one.
        proof: Option<Outcome>,
    },
}

/// What running verify.sh showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunFacts {
    Passed(Outcome),
    Failed {
        /// "exit code 1", "timed out after 300 s", ...
        exit: String,
        exit_code: Option<i32>,
        tail: Vec<String>,
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
    pub armed_now: Result<(), &'static str>,
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
    /// Blocks already given in this turn.
    pub blocks: u32,
    pub run: Option<RunFacts>,
}

/// Why a turn may not end as proven.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Why {
    Failed {
        exit: String,
        exit_code: Option<i32>,
        tail: Vec<String>,
    },
    /// Armed at session start, not now.
    Disarmed {
        /// Why verify.sh is not armed, reading after "verify.sh ".
        reason: Cow<'static, str>,
    },
    /// The policy in force is weaker than at session start.
    Weakened(Weakened),
    Content {
        message: String,
    },
    StateChanged {
        paths: Vec<String>,
    },
    /// Submodules hold changes their commit does not (issue 19): a change, and unprovable.
    DirtySubmodules {
        paths: Vec<String>,
    },
}

/// How the policy was weakened since the session started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Weakened {
    /// Fewer blocks per turn (0: warn-only).
    MaxBlocks { anchor: u32, now: u32 },
    /// A longer verify.sh timeout: past the host's hook timeout, a hung verify.sh would let the
    /// turn end without a verdict.
    Timeout { anchor: u64, now: u64 },
}

/// What was weakened, as a fragment: in the gate's words and in the ledger.
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
        }
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
            Verdict::Yield { .. } | Verdict::Skipped => Outcome::NotProven,
        }
    }
}

/// May this turn end? DESIGN section 4, rule by rule.
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

    // Rules 3 and 4: not armed now.
    if let Err(reason) = observed.armed_now {
        let armed_at_start = match &observed.anchor {
            Some(anchor) => anchor.armed,
            None => observed.armed_at_head,
        };
        return if armed_at_start {
            refuse(Why::Disarmed {
                reason: reason.into(),
            })
        } else {
            Done(Verdict::Quiet(Quiet::NotArmed))
        };
    }
    if observed.max_blocks < anchor_max {
        return refuse(Why::Weakened(Weakened::MaxBlocks {
            anchor: anchor_max,
            now: observed.max_blocks,
        }));
    }
    if let Some(anchor) = &observed.anchor
        && observed.timeout_secs > anchor.timeout_secs
    {
        return refuse(Why::Weakened(Weakened::Timeout {
            anchor: anchor.timeout_secs,
            now: observed.timeout_secs,
        }));
    }

    let (tree, head_tree, verify, proof) = match &observed.state {
        Some(State::Tree {
            tree,
            head_tree,
            verify,
            proof,
        }) => (tree, head_tree, verify, proof),
        Some(State::ContentError(message)) => {
            return refuse(Why::Content {
                message: message.clone(),
            });
        }
        // Before rule 5 and rule 6: the tree looks the same (and may even have a proof) while
        // the submodule's worktree is not what any proof tested.
        Some(State::DirtySubmodules(paths)) => {
            return refuse(Why::DirtySubmodules {
                paths: paths.clone(),
            });
        }
        None => unreachable!("the state is observed whenever verify.sh is armed"),
    };

    // Rule 5: a session that changed nothing is left alone. No anchor counts as changed.
    let changed = observed
        .anchor
        .as_ref()
        .is_none_or(|anchor| anchor.state_tree != Some(*tree) || anchor.head_tree != *head_tree);
    if !changed {
        return Done(Verdict::Quiet(Quiet::Unchanged));
    }
    let edited = observed
        .anchor
        .as_ref()
        .is_some_and(|anchor| anchor.verify != *verify);
    let proven = |outcome: Outcome| {
        Done(if edited || outcome == Outcome::BoundedClaimSurvives {
            Verdict::Bounded
        } else {
            Verdict::Quiet(Quiet::Proven)
        })
    };

    match &observed.run {
        // Rule 6: a proof, whoever wrote it, means nothing runs again.
        None => match proof {
            Some(outcome) => proven(*outcome),
            None => Decision::Run,
        },
        // Rule 7.
        Some(RunFacts::Passed(outcome)) => proven(*outcome),
        // Rules 8 and 10.
        Some(RunFacts::Failed {
            exit,
            exit_code,
            tail,
        }) => refuse(Why::Failed {
            exit: exit.clone(),
            exit_code: *exit_code,
            tail: tail.clone(),
        }),
        Some(RunFacts::StateChanged { paths }) => refuse(Why::StateChanged {
            paths: paths.clone(),
        }),
        Some(RunFacts::ContentError(message)) => refuse(Why::Content {
            message: message.clone(),
        }),
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
        }
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
            }),
            max_blocks: 3,
            timeout_secs: 300,
            blocks: 0,
            run: None,
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
        }) = &mut o.state
        {
            f(tree, head_tree, verify, proof);
        }
        o
    }

    fn failed() -> RunFacts {
        RunFacts::Failed {
            exit: "exit code 1".into(),
            exit_code: Some(1),
            tail: vec!["1 failed".into()],
        }
    }

    fn verdict(o: &Observed) -> Verdict {
        match decide(o) {
            Decision::Verdict(v) => v,
            Decision::Run => panic!("expected a verdict, got Run for {o:?}"),
        }
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
        o.armed_now = Err("does not exist at the worktree root");
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
        o.armed_now = Err("is not executable by its owner");
        o.state = None;
        o.blocks = 1;
        assert_eq!(
            verdict(&o),
            Verdict::Block {
                why: Why::Disarmed {
                    reason: "is not executable by its owner".into()
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
        o.armed_now = Err("does not exist at the worktree root");
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
