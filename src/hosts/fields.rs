//! Reading the fields of a hook's JSON object, with errors that name the field.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::{AfterTool, Event, InputError, Prompt, Start, Stop};

pub(super) type Object = Map<String, Value>;

/// The input as a JSON object.
pub(super) fn object(input: &[u8]) -> Result<Object, InputError> {
    match serde_json::from_slice(input).map_err(InputError::NotJson)? {
        Value::Object(map) => Ok(map),
        _ => Err(InputError::NotJson(serde::de::Error::custom(
            "expected an object",
        ))),
    }
}

/// A field that must be a non-empty string.
pub(super) fn string(map: &Object, field: &'static str) -> Result<String, InputError> {
    match map.get(field) {
        Some(Value::String(value)) if !value.is_empty() => Ok(value.clone()),
        _ => Err(InputError::Field {
            field,
            expected: "non-empty string",
        }),
    }
}

/// A field that is a string when present; null, absent or another type reads as absent.
pub(super) fn optional_string(map: &Object, field: &str) -> Option<String> {
    map.get(field).and_then(Value::as_str).map(str::to_string)
}

/// A boolean flag that may be absent or null (false), but is never of another type.
pub(super) fn flag(map: &Object, field: &'static str) -> Result<bool, InputError> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(value)) => Ok(*value),
        Some(_) => Err(InputError::Field {
            field,
            expected: "boolean",
        }),
    }
}

/// A session start in Claude Code's field names, which Codex and Gemini share.
pub(super) fn snake_start(map: &Object) -> Result<Event, InputError> {
    Ok(Event::Start(Start {
        session: string(map, "session_id")?,
        cwd: PathBuf::from(string(map, "cwd")?),
        source: optional_string(map, "source"),
    }))
}

/// A prompt submitted, in Claude Code's field names, which Codex and Gemini share.
pub(super) fn snake_prompt(map: &Object) -> Result<Event, InputError> {
    Ok(Event::Prompt(Prompt {
        session: string(map, "session_id")?,
        cwd: PathBuf::from(string(map, "cwd")?),
    }))
}

/// A tool call's end in Claude Code's field names, which Codex, Gemini, Qwen Code and Copilot's
/// snake_case dialect share.
pub(super) fn snake_after_tool(map: &Object) -> Result<Event, InputError> {
    Ok(Event::AfterTool(AfterTool {
        session: string(map, "session_id")?,
        cwd: PathBuf::from(string(map, "cwd")?),
    }))
}

/// A stop in Claude Code's field names, which Codex, Gemini and Copilot's snake_case dialect
/// share; `turn` names the field of the turn id, where the host sends one.
pub(super) fn snake_stop(map: &Object, turn: Option<&str>) -> Result<Stop, InputError> {
    Ok(Stop {
        session: string(map, "session_id")?,
        turn: turn.and_then(|field| optional_string(map, field)),
        cwd: PathBuf::from(string(map, "cwd")?),
        stop_hook_active: flag(map, "stop_hook_active")?,
        claim: optional_string(map, "last_assistant_message"),
        transcript: None,
        background: Vec::new(),
    })
}

/// `background_tasks` of a stop: the in-flight work the host registered in the session
/// (Claude Code: `{"id","type","status","description","command"?,"agent_type"?...}`; Qwen
/// Code: `{"id","status","agent_type","started_at","description"?}`; an empty array when
/// nothing is in flight), each as one line. Entries that are not objects are left out; a
/// field that is not an array reads as none.
pub(super) fn background_tasks(map: &Object) -> Vec<String> {
    let Some(Value::Array(tasks)) = map.get("background_tasks") else {
        return Vec::new();
    };
    tasks
        .iter()
        .filter_map(Value::as_object)
        .map(|task| {
            let field = |name: &str| optional_string(task, name).filter(|text| !text.is_empty());
            let kind = field("type")
                .or_else(|| field("agent_type"))
                .unwrap_or_else(|| "task".to_string());
            let mut line = match field("id") {
                Some(id) => format!("{kind} {id}"),
                None => kind,
            };
            if let Some(status) = field("status") {
                line.push_str(&format!(" ({status})"));
            }
            if let Some(description) = field("description") {
                line.push_str(&format!(": {description}"));
            }
            if let Some(command) =
                field("command").filter(|c| Some(c) != field("description").as_ref())
            {
                line.push_str(&format!(" [{command}]"));
            }
            line
        })
        .collect()
}
