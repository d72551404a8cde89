//! Codex CLI: hooks in `$CODEX_HOME/hooks.json` or `.codex/hooks.json`, in Claude Code's shape.
//! Its events are Claude Code's with `turn_id` for the turn (the same through a block loop), and
//! `last_assistant_message` and `transcript_path` may be null. It reads the same answer keys
//! (`claude::answer`) and rejects any others. It has no cap on consecutive blocks.

use super::fields::Object;
use super::{Event, InputError};

pub(super) fn parse(map: &Object) -> Result<Event, InputError> {
    super::claude::parse_shape(map, "turn_id")
}

#[cfg(test)]
mod tests {
    use crate::gate::Message;
    use crate::hosts::{Event, Host, Stop};

    #[test]
    fn parses_codex_stop_with_its_turn_id_and_a_null_claim() {
        let input = br#"{"session_id":"01a2","turn_id":"01b3","transcript_path":null,"cwd":"/repo","hook_event_name":"Stop","model":"gpt-5.1-codex","permission_mode":"bypassPermissions","stop_hook_active":true,"last_assistant_message":null}"#;
        let incoming = Host::Codex.parse(input, None).unwrap();
        assert_eq!(incoming.host, Host::Codex);
        assert_eq!(
            incoming.event,
            Event::Stop(Stop {
                session: "01a2".into(),
                turn: Some("01b3".into()),
                cwd: "/repo".into(),
                stop_hook_active: true,
                claim: None,
                transcript: None,
            })
        );
    }

    #[test]
    fn answers_with_codex_keys_only() {
        let block = Host::Codex.render(None, &Message::Block("fix it".into()));
        let value: serde_json::Value = serde_json::from_str(&block).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["decision", "reason"]);
        assert_eq!(Host::Codex.render(None, &Message::Silent), "");
    }
}
