//! The anchor: what the gate saw when an agent session started in a worktree, version 1.
//!
//! One parser and one renderer for the note text under `refs/notes/prove-it-anchors`. It holds
//! the state tree, HEAD's tree, the policy in force (budget, timeout, signing, what an edit of
//! verify.sh does) and verify.sh (blob, mode and full text), so a later stop can tell whether
//! the session changed anything, whether the policy was weakened and how verify.sh was edited.
//! Pure: this module never touches the repository.

use std::fmt::Write as _;

use gix::ObjectId;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::context::policy::VerifyEdits;
use crate::proof::{Script, codec};
use crate::verify::Environment;

const MAGIC_KEY: &str = "prove-it-anchor";
const VERSION: u32 = 1;
const VERIFY_TEXT: &str = "verify-text";
const PROVER: &str = "prover";
const PROVER_TEXT: &str = "prover-text";
const START_INPUT: &str = "start-input";
const ENV_VAR: &str = "env-var";
const PROTECT: &str = "protect";
const PROTECT_TREE: &str = "protect-tree";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Anchor {
    pub session: String,
    pub worktree: String,
    pub time: OffsetDateTime,
    /// The state tree at session start; `None` when the worktree's content made it uncomputable.
    pub state_tree: Option<ObjectId>,
    /// HEAD's tree at session start; `None` on an unborn branch.
    pub head_tree: Option<ObjectId>,
    /// verify.sh as the state tree holds it; `None` when it is not part of the state.
    pub verify: Option<Script>,
    /// The gate's budget in force at session start (0 = warn-only).
    pub max_blocks: u32,
    pub timeout_secs: u64,
    /// `prove-it.retries` at session start; anchors written before it existed read as 0.
    pub retries: u32,
    /// `prove-it.sign` at session start: cached proofs count only with a good signature.
    /// Anchors written before it existed read as off.
    pub sign: bool,
    /// `prove-it.verifyEdits` at session start; older anchors read as `show`.
    pub verify_edits: VerifyEdits,
    /// `Repo::filter_digest` at session start: the clean filters and attributes from outside
    /// the worktree. Anchors written before it existed have none, and are not compared.
    pub filters: Option<ObjectId>,
    /// `Repo::ignore_digest` at session start: the ignore rules from outside the worktree.
    /// Anchors written before it existed have none, and are not compared.
    pub ignores: Option<ObjectId>,
    /// The digest of the hook's environment at session start (`verify::Environment`): a stop
    /// in another environment is not the session's, and a record made during the session
    /// proves a state only with this digest. Anchors written before it existed have none, and
    /// are not compared.
    pub env: Option<ObjectId>,
    /// That environment's variables by name, each with a salted digest of its value, so that a
    /// stop can name the variables that differ (`env-var:` lines).
    pub env_vars: Vec<(String, String)>,
    /// The proofs ref at session start: the records it holds were made before the session and
    /// count whatever environment made them. `None`: there was none (or an older anchor).
    pub proofs_at_start: Option<ObjectId>,
    /// verify.sh's text at session start, for the diff a later edit is shown with.
    pub verify_text: Option<String>,
    /// With a checks file at session start: it and each named check's script, by path, with
    /// their texts (`None` in anchors of repositories without one, and in older anchors).
    pub provers: Option<Vec<Prover>>,
    /// With a checks file at session start: each check's input tree then, by check name, so
    /// that a failure recorded for the state the session started from can be found
    /// (`start-input:` lines; empty without one, and in older anchors).
    pub start_inputs: Vec<(String, ObjectId)>,
    /// `prove-it.weakening` at session start; older anchors read as `show`.
    pub weakening: VerifyEdits,
    /// The checks file's `protect` patterns at session start, as written (SPEC.md section
    /// 2.2): the list that counts for the session, whatever the file says later.
    pub protect: Vec<String>,
    /// The tree of the protected paths at session start (a real tree, in the object
    /// database); `None` without protected paths, and in older anchors.
    pub protect_tree: Option<ObjectId>,
    /// `prove-it.ahead` was off at session start (`ahead: off`): nothing is proven ahead in
    /// this session, whatever the setting says later. Older anchors read as on.
    pub ahead_off: bool,
}

/// A file that says how a state is proven besides verify.sh: the checks file, or a named
/// check's script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prover {
    pub path: String,
    pub script: Script,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed anchor: {0}")]
pub(crate) struct Malformed(String);

impl Anchor {
    pub(crate) fn render(&self) -> String {
        let none = || "none".to_string();
        let id = |id: Option<ObjectId>| id.map_or_else(none, |id| id.to_string());
        let time = self
            .time
            .to_offset(time::UtcOffset::UTC)
            .format(&Rfc3339)
            .expect("a UTC time within the year range of the clock formats as RFC 3339");
        let mut out = String::new();
        // The writes below go to a String and cannot fail.
        let _ = writeln!(out, "{MAGIC_KEY}: {VERSION}");
        let _ = writeln!(out, "session: {}", one_line(&self.session));
        let _ = writeln!(out, "worktree: {}", one_line(&self.worktree));
        let _ = writeln!(out, "time: {time}");
        let _ = writeln!(out, "state-tree: {}", id(self.state_tree));
        let _ = writeln!(out, "head-tree: {}", id(self.head_tree));
        let _ = writeln!(
            out,
            "verify: {}",
            self.verify.map_or_else(none, |s| s.to_string())
        );
        let _ = writeln!(out, "max-blocks: {}", self.max_blocks);
        let _ = writeln!(out, "timeout: {}", self.timeout_secs);
        if self.retries > 0 {
            let _ = writeln!(out, "retries: {}", self.retries);
        }
        let _ = writeln!(out, "sign: {}", if self.sign { "on" } else { "off" });
        let _ = writeln!(out, "verify-edits: {}", self.verify_edits.as_str());
        if self.weakening != VerifyEdits::Show {
            let _ = writeln!(out, "weakening: {}", self.weakening.as_str());
        }
        if self.ahead_off {
            let _ = writeln!(out, "ahead: off");
        }
        if let Some(tree) = self.protect_tree {
            let _ = writeln!(out, "{PROTECT_TREE}: {tree}");
        }
        for pattern in &self.protect {
            let _ = writeln!(out, "{PROTECT}: {}", one_line(pattern));
        }
        if let Some(filters) = self.filters {
            let _ = writeln!(out, "filters: {filters}");
        }
        if let Some(ignores) = self.ignores {
            let _ = writeln!(out, "ignores: {ignores}");
        }
        if let Some(env) = self.env {
            let _ = writeln!(out, "env: {env}");
        }
        if let Some(proofs) = self.proofs_at_start {
            let _ = writeln!(out, "proofs-at-start: {proofs}");
        }
        for (name, digest) in &self.env_vars {
            let _ = writeln!(out, "{ENV_VAR}: {digest} {}", one_line(name));
        }
        for prover in self.provers.iter().flatten() {
            let _ = writeln!(
                out,
                "{PROVER}: {} {}",
                prover.script,
                one_line(&prover.path)
            );
        }
        for (check, tree) in &self.start_inputs {
            let _ = writeln!(out, "{START_INPUT}: {tree} {}", one_line(check));
        }
        if let Some(text) = &self.verify_text {
            codec::write_text(&mut out, &format!("{VERIFY_TEXT}:"), text);
        }
        for prover in self.provers.iter().flatten() {
            let key = format!("{PROVER_TEXT}: {}", one_line(&prover.path));
            codec::write_text(&mut out, &key, &prover.text);
        }
        out
    }

    /// When the session recorded its environment and `now` is another: the names of the
    /// variables that differ (empty when the anchor cannot say which).
    pub(crate) fn environment_differs(&self, now: &Environment) -> Option<Vec<String>> {
        let recorded = self.env?;
        if now.digest() == recorded {
            return None;
        }
        Some(crate::verify::changed_names(
            &self.env_vars,
            &now.by_name(&self.session),
        ))
    }

    pub(crate) fn parse(text: &str) -> Result<Anchor, Malformed> {
        let format = codec::Format {
            magic: MAGIC_KEY,
            version: VERSION,
            carries_text: &|key| key == VERIFY_TEXT || key == PROVER_TEXT,
            text_end: codec::TextEnd::Exact,
            // Unknown shapes are tolerated like unknown keys: a newer writer may add them.
            skip_keyless: true,
        };
        let read = format.read(text).map_err(|error| match error {
            codec::Error::Version(version) => {
                Malformed(format!("version {version} is not supported"))
            }
            _ => Malformed(format!("it does not start with {MAGIC_KEY}: {VERSION}")),
        })?;
        let mut fields = AnchorFields::default();
        for field in read {
            fields.take(field)?;
        }
        fields.anchor()
    }
}

/// An anchor's fields as read: the ones said once by key, the repeated ones and the texts in
/// the order written.
#[derive(Default)]
struct AnchorFields<'a> {
    fields: std::collections::HashMap<&'a str, &'a str>,
    verify_text: Option<String>,
    provers: Option<Vec<Prover>>,
    prover_texts: std::collections::HashMap<String, String>,
    start_inputs: Vec<(String, ObjectId)>,
    env_vars: Vec<(String, String)>,
    protect: Vec<String>,
}

fn malformed(what: &str) -> Malformed {
    Malformed(what.to_string())
}

impl<'a> AnchorFields<'a> {
    fn take(&mut self, field: codec::Field<'a>) -> Result<(), Malformed> {
        let codec::Field { key, value, text } = field;
        match (key, text) {
            (VERIFY_TEXT, Some(text)) => self.verify_text = Some(text),
            (PROVER_TEXT, Some(text)) => {
                self.prover_texts.insert(value.to_string(), text);
            }
            (PROTECT, _) => self.protect.push(value.to_string()),
            (ENV_VAR, _) => {
                let (digest, name) = value
                    .split_once(' ')
                    .ok_or_else(|| malformed("env-var: is not <digest> <name>"))?;
                self.env_vars.push((name.to_string(), digest.to_string()));
            }
            (START_INPUT, _) => {
                let (tree, check) = value
                    .split_once(' ')
                    .and_then(|(tree, check)| {
                        Some((ObjectId::from_hex(tree.as_bytes()).ok()?, check))
                    })
                    .ok_or_else(|| malformed("start-input: is not <tree> <check>"))?;
                self.start_inputs.push((check.to_string(), tree));
            }
            (PROVER, _) => {
                let mut parts = value.splitn(3, ' ');
                let (Some(blob), Some(mode), Some(path)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    return Err(malformed("prover: is not <blob> <mode> <path>"));
                };
                let script = parse_script(&format!("{blob} {mode}"))
                    .ok_or_else(|| malformed("prover: is not <blob> <mode> <path>"))?;
                self.provers.get_or_insert_with(Vec::new).push(Prover {
                    path: path.to_string(),
                    script,
                    text: String::new(),
                });
            }
            _ => {
                self.fields.insert(key, value);
            }
        }
        Ok(())
    }

    /// A field said once, required.
    fn field(&self, key: &str) -> Result<&'a str, Malformed> {
        self.fields
            .get(key)
            .copied()
            .ok_or_else(|| Malformed(format!("it has no {key}:")))
    }

    /// An object id said once: required (`none` for none) when `required`, else optional.
    fn id(&self, key: &str, required: bool) -> Result<Option<ObjectId>, Malformed> {
        let value = if required {
            Some(self.field(key)?).filter(|value| *value != "none")
        } else {
            self.fields.get(key).copied()
        };
        value
            .map(|hex| {
                ObjectId::from_hex(hex.as_bytes())
                    .map_err(|_| Malformed(format!("{key}: {hex} is not an object id")))
            })
            .transpose()
    }

    /// A number said once: required, or 0 when absent and not `required`.
    fn number<N: std::str::FromStr + Default>(
        &self,
        key: &str,
        required: bool,
    ) -> Result<N, Malformed> {
        match self.fields.get(key).copied() {
            None if !required => Ok(N::default()),
            _ => self
                .field(key)?
                .parse()
                .map_err(|_| Malformed(format!("{key}: is not a number"))),
        }
    }

    /// A policy said once, `show` when absent.
    fn policy(&self, key: &str) -> Result<VerifyEdits, Malformed> {
        match self.fields.get(key).copied() {
            None => Ok(VerifyEdits::Show),
            Some(value) => VerifyEdits::parse(value)
                .ok_or_else(|| Malformed(format!("{key}: is not show or block"))),
        }
    }

    fn anchor(self) -> Result<Anchor, Malformed> {
        let verify = match self.field("verify")? {
            "none" => None,
            value => {
                Some(parse_script(value).ok_or_else(|| malformed("verify: is not <blob> <mode>"))?)
            }
        };
        let prover_texts = &self.prover_texts;
        Ok(Anchor {
            session: self.field("session")?.to_string(),
            worktree: self.field("worktree")?.to_string(),
            time: OffsetDateTime::parse(self.field("time")?, &Rfc3339)
                .map_err(|_| malformed("time: is not RFC 3339"))?,
            state_tree: self.id("state-tree", true)?,
            head_tree: self.id("head-tree", true)?,
            verify,
            max_blocks: self.number("max-blocks", true)?,
            timeout_secs: self.number("timeout", true)?,
            retries: self.number("retries", false)?,
            sign: match self.fields.get("sign").copied() {
                None | Some("off") => false,
                Some("on") => true,
                Some(_) => return Err(malformed("sign: is not on or off")),
            },
            verify_edits: self.policy("verify-edits")?,
            filters: self.id("filters", false)?,
            ignores: self.id("ignores", false)?,
            env: self.id("env", false)?,
            proofs_at_start: self.id("proofs-at-start", false)?,
            protect_tree: self.id(PROTECT_TREE, false)?,
            weakening: self.policy("weakening")?,
            ahead_off: self
                .fields
                .get("ahead")
                .is_some_and(|value| *value == "off"),
            provers: self.provers.map(|provers| {
                provers
                    .into_iter()
                    .map(|prover| Prover {
                        text: prover_texts.get(&prover.path).cloned().unwrap_or_default(),
                        ..prover
                    })
                    .collect()
            }),
            env_vars: self.env_vars,
            verify_text: self.verify_text,
            start_inputs: self.start_inputs,
            protect: self.protect,
        })
    }
}

fn parse_script(value: &str) -> Option<Script> {
    let (blob, mode) = value.split_once(' ')?;
    Some(Script {
        blob: ObjectId::from_hex(blob.as_bytes()).ok()?,
        mode: u32::from_str_radix(mode, 8).ok()?,
    })
}

fn one_line(value: &str) -> String {
    value.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor(text: Option<&str>) -> Anchor {
        Anchor {
            session: "86ca-1".into(),
            worktree: "/repo".into(),
            time: OffsetDateTime::parse("2026-11-29T12:00:00Z", &Rfc3339).unwrap(),
            state_tree: Some(ObjectId::empty_tree(gix::hash::Kind::Sha1)),
            head_tree: None,
            verify: Some(Script {
                blob: ObjectId::empty_blob(gix::hash::Kind::Sha1),
                mode: 0o100755,
            }),
            max_blocks: 3,
            timeout_secs: 300,
            retries: 0,
            sign: true,
            verify_edits: VerifyEdits::Block,
            filters: None,
            ignores: None,
            env: None,
            env_vars: Vec::new(),
            proofs_at_start: None,
            verify_text: text.map(str::to_string),
            provers: None,
            start_inputs: Vec::new(),
            weakening: VerifyEdits::Show,
            protect: Vec::new(),
            protect_tree: None,
            ahead_off: false,
        }
    }

    /// A session started with proving ahead off keeps it off: the anchor says so, and an
    /// anchor written before the line existed reads as on.
    #[test]
    fn proving_ahead_off_round_trips_and_older_anchors_read_as_on() {
        let off = Anchor {
            ahead_off: true,
            ..anchor(None)
        };
        let text = off.render();
        assert!(text.contains("\nahead: off\n"), "{text}");
        assert_eq!(Anchor::parse(&text).unwrap(), off);
        assert!(!Anchor::parse(&anchor(None).render()).unwrap().ahead_off);
    }

    #[test]
    fn protected_paths_round_trip_and_older_anchors_have_none() {
        let with = Anchor {
            weakening: VerifyEdits::Block,
            protect: vec!["tests/".into(), "!tests/fixtures/".into(), "a b.py".into()],
            protect_tree: Some(ObjectId::empty_tree(gix::hash::Kind::Sha1)),
            ..anchor(None)
        };
        let text = with.render();
        assert!(text.contains("\nprotect: !tests/fixtures/\n"), "{text}");
        assert_eq!(Anchor::parse(&text).unwrap(), with);
        let old = Anchor::parse(&anchor(None).render()).unwrap();
        assert_eq!(
            (old.weakening, old.protect.len(), old.protect_tree),
            (VerifyEdits::Show, 0, None)
        );
    }

    #[test]
    fn retries_and_start_inputs_round_trip_and_older_anchors_read_as_none() {
        let mut with = anchor(None);
        with.retries = 2;
        with.start_inputs = vec![
            ("api".into(), ObjectId::empty_tree(gix::hash::Kind::Sha1)),
            (
                "my docs".into(),
                ObjectId::empty_blob(gix::hash::Kind::Sha1),
            ),
        ];
        let text = with.render();
        assert!(text.contains("\nretries: 2\n"), "{text}");
        assert_eq!(Anchor::parse(&text).unwrap(), with);
        let older = anchor(None).render();
        assert!(!older.contains("retries") && !older.contains("start-input"));
        assert_eq!(Anchor::parse(&older).unwrap().retries, 0);
    }

    #[test]
    fn provers_round_trip_with_their_texts() {
        let mut with = anchor(Some("#!/bin/sh\n"));
        with.provers = Some(vec![
            Prover {
                path: "packages/my api/verify.sh".into(),
                script: Script {
                    blob: ObjectId::empty_blob(gix::hash::Kind::Sha1),
                    mode: 0o100755,
                },
                text: "#!/bin/sh\nexit 0".into(),
            },
            Prover {
                path: "prove-it.toml".into(),
                script: Script {
                    blob: ObjectId::empty_tree(gix::hash::Kind::Sha1),
                    mode: 0o100644,
                },
                text: "[checks.api]\n\nverify-text:\n".into(),
            },
        ]);
        assert_eq!(Anchor::parse(&with.render()).unwrap(), with);
    }

    #[test]
    fn round_trips_through_its_text() {
        for text in [
            None,
            Some(""),
            Some("#!/bin/sh\nexit 0\n"),
            Some("no final newline"),
            Some("#!/bin/sh\n\n\nprove-it-anchor: 2\n\\\n  indented\n"),
        ] {
            let anchor = anchor(text);
            assert_eq!(Anchor::parse(&anchor.render()).unwrap(), anchor, "{text:?}");
        }
    }

    #[test]
    fn renders_keys_in_a_fixed_order() {
        assert_eq!(
            anchor(Some("#!/bin/sh\n")).render(),
            "prove-it-anchor: 1\nsession: 86ca-1\nworktree: /repo\ntime: 2026-11-29T12:00:00Z\n\
             state-tree: 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nhead-tree: none\n\
             verify: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100755\nmax-blocks: 3\n\
             timeout: 300\nsign: on\nverify-edits: block\nverify-text:\n #!/bin/sh\n"
        );
    }

    #[test]
    fn a_session_id_cannot_forge_a_key() {
        let mut forged = anchor(None);
        forged.session = "x\nmax-blocks: 0".into();
        let parsed = Anchor::parse(&forged.render()).unwrap();
        assert_eq!(parsed.max_blocks, 3);
    }

    /// Anchors written before signing and verify.sh edits were part of the policy still read.
    #[test]
    fn an_anchor_without_the_newer_policy_keys_still_reads() {
        let old = anchor(None)
            .render()
            .replace("sign: on\n", "")
            .replace("verify-edits: block\n", "")
            .replace(
                &format!("filters: {}\n", ObjectId::empty_blob(gix::hash::Kind::Sha1)),
                "",
            );
        let parsed = Anchor::parse(&old).unwrap();
        assert!(!parsed.sign);
        assert_eq!(parsed.verify_edits, VerifyEdits::Show);
        assert_eq!(parsed.filters, None, "not compared");
        let bad = anchor(None).render().replace("sign: on", "sign: maybe");
        assert!(Anchor::parse(&bad).is_err());
    }

    #[test]
    fn the_filter_digest_round_trips_and_is_checked() {
        let with = Anchor {
            filters: Some(ObjectId::empty_blob(gix::hash::Kind::Sha1)),
            ignores: Some(ObjectId::empty_blob(gix::hash::Kind::Sha1)),
            ..anchor(Some("#!/bin/sh\n"))
        };
        let text = with.render();
        assert!(
            text.contains("\nfilters: e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n"),
            "{text}"
        );
        assert_eq!(Anchor::parse(&text).unwrap(), with);
        let bad = text.replace("filters: e69de29b", "filters: nothex");
        assert!(Anchor::parse(&bad).is_err());
    }

    #[test]
    fn the_environment_round_trips_and_older_anchors_have_none() {
        let with = Anchor {
            env: Some(ObjectId::empty_tree(gix::hash::Kind::Sha1)),
            env_vars: vec![
                ("PATH".into(), "0123456789ab".into()),
                ("WEIRD NAME".into(), "ba9876543210".into()),
            ],
            proofs_at_start: Some(ObjectId::empty_blob(gix::hash::Kind::Sha1)),
            ..anchor(Some("#!/bin/sh\n"))
        };
        let text = with.render();
        assert!(text.contains("\nenv-var: 0123456789ab PATH\n"), "{text}");
        assert_eq!(Anchor::parse(&text).unwrap(), with);
        let old = anchor(None).render();
        let parsed = Anchor::parse(&old).unwrap();
        assert_eq!((parsed.env, parsed.proofs_at_start), (None, None));
        assert!(parsed.env_vars.is_empty());
        assert!(Anchor::parse(&text.replace("env: 4b825dc6", "env: nothex")).is_err());
    }

    #[test]
    fn garbage_and_other_versions_are_malformed() {
        assert!(Anchor::parse("").is_err());
        assert!(Anchor::parse("hello\n").is_err());
        let err = Anchor::parse("prove-it-anchor: 2\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed anchor: version 2 is not supported"
        );
        let missing = anchor(None).render().replace("max-blocks: 3\n", "");
        assert_eq!(
            Anchor::parse(&missing).unwrap_err().to_string(),
            "malformed anchor: it has no max-blocks:"
        );
    }
}
