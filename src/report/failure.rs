//! The words of a command that failed: one plain sentence, its causes, the `hint:` lines that
//! fix it, printed as git prints its errors, or as one JSON object with `--json`.

use std::io::Write;

use serde::Serialize;

/// What a failed command says: one plain sentence, the causes worth reading, and the `hint:`
/// lines that fix it. Filled by `cli/` from its error; rendered as git prints its errors, and
/// as a JSON object on stdout with `--json`.
#[derive(Debug, Serialize)]
pub(crate) struct FailureReport {
    pub version: u32,
    /// A stable name of the kind of failure, for scripts: `not_a_repository`, `bad_revision`,
    /// `not_a_commit`, `bare_repository`, `push_refused`, `error` for the rest.
    pub code: &'static str,
    pub message: String,
    pub causes: Vec<String>,
    pub hints: Vec<String>,
}

/// A failure `cli/` recognised, so that its words and hints are said here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FailureKind {
    NotARepository,
    BadRevision,
    NotACommit,
    BareRepository,
    /// The remote refused the proofs ref: git's own reason for each refused ref.
    PushRefused {
        remote: String,
        reasons: Vec<String>,
    },
    Other,
}

impl FailureKind {
    pub(crate) fn code(&self) -> &'static str {
        match self {
            FailureKind::NotARepository => "not_a_repository",
            FailureKind::BadRevision => "bad_revision",
            FailureKind::NotACommit => "not_a_commit",
            FailureKind::BareRepository => "bare_repository",
            FailureKind::PushRefused { .. } => "push_refused",
            FailureKind::Other => "error",
        }
    }

    /// The hints that fix this kind of failure, said before any the command added.
    pub(crate) fn hints(&self) -> Vec<String> {
        if let FailureKind::PushRefused { remote, reasons } = self {
            return push_refused_hints(remote, reasons);
        }
        let hints: &[&str] = match self {
            FailureKind::NotARepository => &[
                "run this inside a git repository: cd into one",
                "or make this directory one: git init",
            ],
            FailureKind::BadRevision => &[
                "name a commit, a branch or a tag that exists here: git log --oneline --all shows them",
            ],
            FailureKind::NotACommit => {
                &["name a commit (a tag or a tree will not do): git log --oneline"]
            }
            FailureKind::BareRepository => &[
                "run this in a clone with a working tree; in a bare repository only check, log and sync work",
            ],
            FailureKind::PushRefused { .. } | FailureKind::Other => &[],
        };
        hints.iter().map(ToString::to_string).collect()
    }
}

/// What to do when `remote` refused the proofs for `reasons`, git's own words for each ref.
pub(crate) fn push_refused_hints(remote: &str, reasons: &[String]) -> Vec<String> {
    let mut hints = Vec::new();
    let any = |needle: &str| reasons.iter().any(|reason| reason.contains(needle));
    if any("hook declined") {
        hints.push(format!(
            "a hook on {remote} refuses refs/notes/prove-it; ask whoever runs {remote} to let pushes to refs/notes/prove-it through"
        ));
        hints.push(format!(
            "its own words, if it printed any, are the 'remote:' lines above; see them with: git push --dry-run {remote} refs/notes/prove-it"
        ));
    } else if any("failed to update ref") || any("failed to lock") {
        hints.push(format!(
            "the proofs on {remote} stayed locked through every retry: another push may still be running there; run 'git prove-it sync {remote}' again later"
        ));
        hints.push(format!(
            "if none is, a lock left by a killed push is in the way (the 'caused by' lines name it); whoever runs {remote} can remove it"
        ));
    } else if any("[rejected]") {
        hints.push(format!(
            "the proofs on {remote} kept moving; run 'git prove-it sync {remote}' again"
        ));
    } else {
        hints.push(format!(
            "{remote} does not accept refs/notes/prove-it from you; check that you may push there: git push --dry-run {remote} refs/notes/prove-it"
        ));
    }
    hints.push(
        "nothing was lost: the proofs stay in this repository until a sync gets them through"
            .to_string(),
    );
    hints
}

impl FailureReport {
    /// Print the failure the way git does: the message, its causes, then what to do about it.
    pub(crate) fn human(&self, err: &mut dyn Write) -> std::io::Result<()> {
        writeln!(err, "error: {}", self.message)?;
        for cause in &self.causes {
            writeln!(err, "caused by: {cause}")?;
        }
        for hint in &self.hints {
            writeln!(err, "hint: {hint}")?;
        }
        Ok(())
    }
}

/// The causes of `error` worth showing a person: a library's bare variant name (`NotFound`) or
/// a cause that repeats what was already said is left out.
pub(crate) fn readable_causes(error: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut said = error.to_string();
    let mut causes = Vec::new();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        let bare_name = !text.trim().contains(char::is_whitespace);
        if !bare_name && !said.contains(text.trim()) {
            said.push('\n');
            said.push_str(&text);
            causes.push(text);
        }
        source = cause.source();
    }
    causes
}

pub(crate) use crate::gate::error_chain;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Layer(&'static str, #[source] Option<Box<Layer>>);

    fn chain(texts: &[&'static str]) -> Layer {
        texts
            .iter()
            .rev()
            .fold(None, |source, text| Some(Layer(text, source.map(Box::new))))
            .unwrap()
    }

    #[test]
    fn a_bare_variant_name_is_not_a_cause_a_person_can_read() {
        let error = chain(&[
            "could not resolve",
            "reference x could not be found",
            "NotFound",
        ]);
        assert_eq!(readable_causes(&error), ["reference x could not be found"]);
    }

    #[test]
    fn a_cause_that_repeats_the_message_is_said_once() {
        let error = chain(&["git push failed: remote said no", "remote said no"]);
        assert!(readable_causes(&error).is_empty());
    }
}
