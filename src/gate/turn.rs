//! What the gate remembers about a session between stops: the turn, the blocks given in it, and
//! the last answer as data (the verdict and the facts its words need), never as rendered text.
//! Stored by `git::SessionFiles` as bytes; this module owns their meaning.

use serde::{Deserialize, Serialize};

use super::decide::{Quiet, Verdict};

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
    /// verify.sh's diff since the session started, when it was edited.
    pub diff: Option<String>,
    /// No anchor was found for this session.
    pub anchor_missing: bool,
}

impl Answer {
    /// Whether the answer ends the turn with a notice to the user (rather than silently or
    /// with a block). `report::message` words exactly these as notices, which its tests pin.
    pub(crate) fn is_notice(verdict: &Verdict, facts: &Facts) -> bool {
        match verdict {
            Verdict::Quiet(Quiet::NotArmed | Quiet::Unchanged) | Verdict::Block { .. } => false,
            Verdict::Quiet(Quiet::Proven) => facts.anchor_missing,
            Verdict::Bounded | Verdict::Yield { .. } | Verdict::Skipped => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Why;

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
                            reason: "is not a regular file".into(),
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
}
