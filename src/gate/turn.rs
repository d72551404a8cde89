//! What the gate remembers about a session between stops: the turn, the blocks given in it, and
//! the last answer as data (the verdict and the facts its words need), never as rendered text.
//! Stored by `git::SessionFiles` as bytes; this module owns their meaning.

use serde::{Deserialize, Serialize};

use super::decide::{Quiet, Verdict};

/// More blocks than any budget gives in one turn: the policy allows 7, and a host's cap keeps
/// an anchor's below 8; only an anchor edited by hand for a host without a cap goes past.
const MAX_PLAUSIBLE_BLOCKS: u32 = 64;

/// The saved state of one session in one worktree.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TurnState {
    /// The host's turn id the count belongs to, when the host sends one.
    pub turn: Option<String>,
    /// Blocks already given in this turn.
    pub blocks: u32,
    /// The last answer given, so that a second hook process waiting on the lock gives it too.
    pub last: Option<LastAnswer>,
    /// Whether a notice was told to the agent as a last block this turn (for hosts that show
    /// no notices).
    #[serde(default)]
    pub notice_told: bool,
    /// A person's prompt came after the last answer, which let the turn end: the next stop
    /// starts a new turn and a new budget, whatever its turn id (Gemini CLI names none, and a
    /// prompt like the previous one got its turn's spent budget).
    #[serde(default)]
    pub prompted: bool,
    /// The weakenings of protected paths the agent was already sent back for under
    /// `prove-it.weakening = block` (their `weakened:` lines): each is refused once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weakenings_refused: Vec<super::decide::WeakeningFound>,
}

impl TurnState {
    /// The state saved in `bytes`; anything unreadable (including a state file of an older
    /// build) starts afresh, which only ever makes the gate stricter: a fresh budget, never a
    /// turn let through.
    pub(crate) fn from_bytes(bytes: Option<&[u8]>) -> TurnState {
        bytes
            .and_then(|data| serde_json::from_slice(data).ok())
            .unwrap_or_default()
    }

    /// The state saved in `bytes`, as far as the gate could have written it by `now_ns`: the
    /// files are the agent's to edit, and a state no stop of the gate's could
    /// have left (an answer given in the future, a turn that is not its answer's, a count its
    /// answer contradicts, a notice told with no answer) is treated as absent, a fresh start,
    /// never as "already answered".
    pub(crate) fn load(bytes: Option<&[u8]>, now_ns: u64) -> TurnState {
        let state = Self::from_bytes(bytes);
        if state.is_possible(now_ns) {
            state
        } else {
            TurnState::default()
        }
    }

    /// A prompt was submitted (`gate::Prompt`): the next stop starts a new turn, if the last
    /// answer let this one end (a pass, silence, a notice). After a block, or a notice told to
    /// the agent as a block, the agent is still at work on the turn, and the only prompt that
    /// can come then is one it sent itself from its shell to reset its budget (or the host's
    /// own continuation, Gemini CLI's `BeforeAgent` with the block's reason): nothing changes.
    /// Whether the next stop starts a new turn.
    pub(crate) fn prompt(&mut self) -> bool {
        let ended = self
            .last
            .as_ref()
            .is_some_and(|last| last.answer.lets_the_turn_end());
        self.prompted |= ended;
        ended
    }

    /// Whether the gate's own `act::record` could have saved this state by `now_ns`.
    fn is_possible(&self, now_ns: u64) -> bool {
        let Some(last) = &self.last else {
            // Every stop that counts or tells saves its answer, and a prompt marks only an
            // answered turn.
            return self.blocks == 0 && !self.notice_told && !self.prompted;
        };
        let counted = match &last.answer.verdict {
            Verdict::Block { attempt, max, .. } => {
                *attempt >= 1 && attempt <= max && self.blocks == *attempt
            }
            Verdict::Yield { max, .. } => self.blocks <= *max,
            Verdict::Quiet(_)
            | Verdict::Bounded
            | Verdict::Flaky { .. }
            | Verdict::Skipped
            | Verdict::SkippedChecks { .. }
            | Verdict::Uncovered { .. } => self.blocks <= MAX_PLAUSIBLE_BLOCKS,
        };
        last.at_ns <= now_ns
            && last.turn == self.turn
            && counted
            && (self.notice_told || !last.answer.to_the_agent)
            && (!self.prompted || last.answer.lets_the_turn_end())
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("the turn state serialises")
    }
}

/// An answer the gate gave, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LastAnswer {
    /// When it was given, in nanoseconds since the Unix epoch.
    pub at_ns: u64,
    pub turn: Option<String>,
    pub answer: Answer,
}

/// The gate's answer to one stop, as data: `report` words it, a host adapter delivers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Answer {
    pub verdict: Verdict,
    pub facts: Facts,
    /// A notice told to the agent as one last block, for a host that shows no notices.
    pub to_the_agent: bool,
}

/// What a verdict's words need besides the verdict.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Facts {
    /// The state tree the verdict is about.
    pub tree: Option<String>,
    /// Where the full output of the last run is.
    pub log: Option<String>,
    /// The failure's key lines found before the last lines of its output (panics, assertion
    /// values, summaries), for the words to add to the tail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<String>,
    /// verify.sh's diff since the session started, when it was edited.
    pub diff: Option<String>,
    /// How the tests of the run this stop made fell short of its baseline's, one line each.
    /// Boxed: the answer a host is given stays small.
    #[serde(default, skip_serializing_if = "no_findings")]
    pub tests_weakened: Box<[super::decide::WeakeningFound]>,
    /// No anchor was found for this session.
    pub anchor_missing: bool,
    /// The state is proven by the checks of a checks file, not verify.sh alone.
    #[serde(default)]
    pub checks: bool,
    /// How the protected paths changed since the session started, when they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection: Option<Box<ProtectionFacts>>,
}

/// How the protected paths changed since the session started (SPEC.md section 2.2), in words.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ProtectionFacts {
    /// Each weakening, in words.
    pub weakened: Vec<String>,
    /// The protected files changed, not weakened.
    pub changed: Vec<String>,
    /// The diff of the weakened and changed protected files.
    pub diff: Option<String>,
}

impl Facts {
    /// The weakenings of protected paths, in words (empty when there are none).
    pub(crate) fn weakened(&self) -> &[String] {
        self.protection
            .as_ref()
            .map_or(&[], |p| p.weakened.as_slice())
    }

    /// The protected files changed, not weakened.
    pub(crate) fn changed(&self) -> &[String] {
        self.protection
            .as_ref()
            .map_or(&[], |p| p.changed.as_slice())
    }
}

fn no_findings<T>(findings: &[T]) -> bool {
    findings.is_empty()
}

impl Answer {
    /// Whether the host ends the turn on this answer: anything but a block, or a notice told
    /// to the agent as one.
    pub(crate) fn lets_the_turn_end(&self) -> bool {
        !matches!(self.verdict, Verdict::Block { .. }) && !self.to_the_agent
    }

    /// Whether the answer ends the turn with a notice to the user (rather than silently or
    /// with a block). `report::message` words exactly these as notices, which its tests pin.
    pub(crate) fn is_notice(verdict: &Verdict, facts: &Facts) -> bool {
        match verdict {
            Verdict::Quiet(Quiet::NotArmed | Quiet::Unchanged) | Verdict::Block { .. } => false,
            Verdict::Quiet(Quiet::Proven) => facts.anchor_missing || !facts.changed().is_empty(),
            Verdict::Bounded
            | Verdict::Flaky { .. }
            | Verdict::Yield { .. }
            | Verdict::Skipped
            | Verdict::SkippedChecks { .. }
            | Verdict::Uncovered { .. } => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Why;

    /// The turn state keeps what a failure was, never how it is said: its words are the
    /// report's, made when the answer is given again.
    #[test]
    fn a_failure_is_kept_as_data_not_as_its_words() {
        let why = Why::Failed {
            failing: vec![crate::gate::Failing {
                check: Some("api".into()),
                ending: crate::gate::Ending::code(3),
                log: Some("/tmp/api.log".into()),
                lines: vec!["1 failed".into()],
            }],
            exit_code: Some(3),
            predates: Vec::new(),
        };
        let saved = serde_json::to_string(&why).unwrap();
        assert!(saved.contains(r#""Code":3"#), "{saved}");
        for words in ["exit code", "--- check", "failed ("] {
            assert!(!saved.contains(words), "{words:?} in {saved}");
        }
        assert_eq!(serde_json::from_str::<Why>(&saved).unwrap(), why);
    }

    #[test]
    fn a_saved_state_reads_back_as_it_was() {
        let state = TurnState {
            turn: Some("t1".into()),
            blocks: 2,
            last: Some(LastAnswer {
                at_ns: 7,
                turn: Some("t1".into()),
                answer: Answer {
                    verdict: Verdict::Block {
                        why: Why::Disarmed {
                            armed: crate::armed::Armed::NotAFile,
                        },
                        attempt: 2,
                        max: 3,
                    },
                    facts: Facts {
                        tree: Some("4b825dc".into()),
                        ..Facts::default()
                    },
                    to_the_agent: false,
                },
            }),
            notice_told: true,
            prompted: false,
            weakenings_refused: vec![super::super::decide::WeakeningFound {
                check: Some("api".into()),
                line: "test-gone t.py::test_b".into(),
            }],
        };
        assert_eq!(TurnState::from_bytes(Some(&state.to_bytes())), state);
    }

    #[test]
    fn an_unreadable_or_older_state_starts_afresh() {
        assert_eq!(TurnState::from_bytes(None), TurnState::default());
        assert_eq!(
            TurnState::from_bytes(Some(b"{not json")),
            TurnState::default()
        );
        // An older build saved the rendered text; such a state is not replayed.
        let older =
            br#"{"turn":null,"blocks":1,"last":{"at_ns":1,"turn":null,"kind":"block","text":"x"}}"#;
        assert_eq!(TurnState::from_bytes(Some(older)), TurnState::default());
    }

    fn answered(at_ns: u64, turn: &str, verdict: Verdict) -> TurnState {
        TurnState {
            turn: Some(turn.into()),
            blocks: match verdict {
                Verdict::Block { attempt, .. } => attempt,
                _ => 0,
            },
            last: Some(LastAnswer {
                at_ns,
                turn: Some(turn.into()),
                answer: Answer {
                    verdict,
                    facts: Facts::default(),
                    to_the_agent: false,
                },
            }),
            notice_told: false,
            prompted: false,
            weakenings_refused: Vec::new(),
        }
    }

    fn block(attempt: u32) -> Verdict {
        Verdict::Block {
            why: Why::Content {
                message: "x".into(),
            },
            attempt,
            max: 3,
        }
    }

    /// The state files are the agent's to edit, and a forged last answer
    /// (given "in the future", quiet) made every later stop of the turn replay it silently.
    #[test]
    fn a_state_the_gate_could_not_have_written_is_absent() {
        let now = 1_000_000;
        let load = |state: &TurnState| TurnState::load(Some(&state.to_bytes()), now);
        let possible = [
            TurnState::default(),
            answered(now, "t1", Verdict::Quiet(Quiet::Unchanged)),
            answered(now - 5, "t1", block(2)),
            answered(
                now - 5,
                "t1",
                Verdict::Yield {
                    why: Why::Content {
                        message: "x".into(),
                    },
                    max: 3,
                },
            ),
        ];
        for state in &possible {
            assert_eq!(&load(state), state, "{state:?}");
        }
        let mut future = answered(now + 1, "t1", Verdict::Quiet(Quiet::Unchanged));
        let mut other_turn = answered(now, "t1", Verdict::Quiet(Quiet::Proven));
        other_turn.turn = Some("t2".into());
        let mut miscounted = answered(now, "t1", block(2));
        miscounted.blocks = 1;
        let past_its_max = answered(now, "t1", block(4));
        let mut huge = answered(now, "t1", Verdict::Quiet(Quiet::Proven));
        huge.blocks = u32::MAX;
        let told_nothing = TurnState {
            notice_told: true,
            ..TurnState::default()
        };
        let prompted_unanswered = TurnState {
            prompted: true,
            ..TurnState::default()
        };
        let mut prompted_mid_turn = answered(now, "t1", block(2));
        prompted_mid_turn.prompted = true;
        let counted_nothing = TurnState {
            blocks: 2,
            ..TurnState::default()
        };
        let mut told_untold = answered(now, "t1", Verdict::Skipped);
        told_untold.last.as_mut().unwrap().answer.to_the_agent = true;
        for state in [
            &future,
            &other_turn,
            &miscounted,
            &past_its_max,
            &huge,
            &told_nothing,
            &counted_nothing,
            &told_untold,
            &prompted_unanswered,
            &prompted_mid_turn,
        ] {
            assert_eq!(load(state), TurnState::default(), "{state:?}");
        }
        future.last.as_mut().unwrap().at_ns = now;
        assert_eq!(
            load(&future),
            future,
            "the same state, written in time, is kept"
        );
    }

    /// A state saved before `prompted` existed reads as it was, with no prompt since.
    #[test]
    fn a_state_saved_before_prompts_were_noted_reads_back() {
        let state = answered(7, "t1", block(1));
        let mut older: serde_json::Value = serde_json::from_slice(&state.to_bytes()).unwrap();
        older.as_object_mut().unwrap().remove("prompted");
        let older = serde_json::to_vec(&older).unwrap();
        assert_eq!(TurnState::load(Some(&older), 7), state);
    }

    /// A new prompt after a yield or a pass starts a new turn; after a
    /// block (or the yield told to the agent as a last block) the agent is still at work, and
    /// a prompt then can only be one it forged from its shell to reset its budget.
    #[test]
    fn a_prompt_starts_a_new_turn_only_after_an_answer_that_let_the_turn_end() {
        let yielded = Verdict::Yield {
            why: Why::Content {
                message: "x".into(),
            },
            max: 3,
        };
        let mut told = answered(5, "t1", yielded.clone());
        told.blocks = 3;
        told.last.as_mut().unwrap().answer.to_the_agent = true;
        told.notice_told = true;
        for (state, ends) in [
            (TurnState::default(), false),
            (answered(5, "t1", block(1)), false),
            (answered(5, "t1", block(3)), false),
            (told, false),
            (answered(5, "t1", yielded), true),
            (answered(5, "t1", Verdict::Quiet(Quiet::Proven)), true),
            (answered(5, "t1", Verdict::Quiet(Quiet::Unchanged)), true),
            (answered(5, "t1", Verdict::Bounded), true),
            (answered(5, "t1", Verdict::Skipped), true),
        ] {
            let mut prompted = state.clone();
            assert_eq!(prompted.prompt(), ends, "{state:?}");
            assert_eq!(prompted.prompted, ends, "{state:?}");
            assert_eq!(
                TurnState {
                    prompted: false,
                    ..prompted.clone()
                },
                state,
                "a prompt changes nothing else"
            );
            // The gate could have written it: it loads as it was.
            assert_eq!(TurnState::load(Some(&prompted.to_bytes()), 5), prompted);
        }
    }
}
