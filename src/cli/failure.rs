//! The error that ends a command (`Failure`): what went wrong, its causes and its `hint:` lines,
//! made from the layers' errors and the hints and refusals `report` words; `report::failure`
//! says it.

use crate::git;
use crate::report::{FailureKind, FailureReport, Hint, JSON_VERSION, Refusal, readable_causes};

/// An error that ends a command, with the `hint:` lines that tell the user what to do.
#[derive(Debug)]
pub struct Failure {
    error: anyhow::Error,
    hints: Vec<String>,
    /// The command was asked for `--json`: the failure is also a JSON object on stdout.
    json: bool,
}

impl Failure {
    pub(crate) fn json(mut self, json: bool) -> Self {
        self.json = json;
        self
    }

    /// Add a `hint:` line, said after those of the failure's kind.
    pub(crate) fn hint(mut self, hint: Hint) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// Add `hint:` lines, in their order.
    pub(crate) fn hints(mut self, hints: impl IntoIterator<Item = Hint>) -> Self {
        self.hints.extend(hints.into_iter().map(String::from));
        self
    }

    /// Whether the failure was writing to a closed pipe (`git prove-it status | head -1`), which is
    /// not worth an error message, but is never a success (`exit::BROKEN_PIPE`).
    pub fn is_broken_pipe(&self) -> bool {
        self.error.chain().any(|cause| {
            cause
                .downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
        })
    }

    /// Print the error, its causes and hints, as git prints its errors; with `--json`, also
    /// as one JSON object on `out`, so that a script reading stdout never reads nothing.
    pub fn render(
        &self,
        out: &mut dyn std::io::Write,
        err: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let report = self.report();
        if self.json {
            crate::report::json(&report, out)?;
        }
        report.human(err)
    }

    /// The failure as plain values: a `git::Error` the user can fix by moving or naming
    /// something else is said in its own words, without the library's causes below it.
    pub(crate) fn report(&self) -> FailureReport {
        let known = self
            .error
            .chain()
            .find_map(|cause| cause.downcast_ref::<git::Error>().and_then(kind_of));
        let (kind, causes) = match known {
            // A remote's refusal carries the remote's own words: those are for the user.
            Some(kind @ FailureKind::PushRefused { .. }) => {
                (kind, readable_causes(self.error.as_ref()))
            }
            Some(kind) => (kind, Vec::new()),
            None => (FailureKind::Other, readable_causes(self.error.as_ref())),
        };
        let mut hints = kind.hints();
        hints.extend(self.hints.iter().cloned());
        // One sentence on the error line: what git printed on further lines (a failed
        // `git ls-remote`'s advice, say, wrapped as a paragraph) is one cause below it.
        let text = self.error.to_string();
        let mut lines = text
            .lines()
            .map(str::trim_end)
            .filter(|line| !line.is_empty());
        let message = lines.next().unwrap_or_default().to_string();
        let rest = lines.map(str::trim).collect::<Vec<_>>().join(" ");
        let mut said: Vec<String> = Vec::new();
        if !rest.is_empty() {
            said.push(rest);
        }
        said.extend(causes);
        FailureReport {
            version: JSON_VERSION,
            code: kind.code(),
            message,
            causes: said,
            hints,
        }
    }
}

/// The kind of a repository error whose causes are a library's internals, not the user's.
fn kind_of(error: &git::Error) -> Option<FailureKind> {
    match error {
        git::Error::NotARepository { .. } => Some(FailureKind::NotARepository),
        git::Error::Revision { .. } => Some(FailureKind::BadRevision),
        git::Error::NotACommit { .. } => Some(FailureKind::NotACommit),
        git::Error::Bare { .. } => Some(FailureKind::BareRepository),
        git::Error::PushRefused {
            remote, refused, ..
        } => Some(FailureKind::PushRefused {
            remote: remote.clone(),
            reasons: refused.iter().map(|r| r.reason.clone()).collect(),
        }),
        _ => None,
    }
}

/// A failure the command found itself, said in `report`'s words: its sentence is the error's.
impl From<Refusal> for Failure {
    fn from(refusal: Refusal) -> Self {
        let (message, hints) = refusal.into_parts();
        Failure::from(anyhow::Error::msg(message)).hints(hints)
    }
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(error: E) -> Self {
        Failure {
            error: error.into(),
            hints: Vec::new(),
            json: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_anywhere_in_the_chain_is_recognised() {
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert!(Failure::from(pipe).is_broken_pipe());
        let wrapped = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            .context("could not print the report");
        assert!(Failure::from(wrapped).is_broken_pipe());
        let other = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(!Failure::from(other).is_broken_pipe());
    }

    #[test]
    fn an_error_of_several_lines_keeps_one_on_the_error_line() {
        let error = anyhow::anyhow!(
            "git ls-remote failed: fatal: no such remote\nfatal: Could not read.\n\nPlease make sure\nit exists.\n"
        );
        let mut err = Vec::new();
        Failure::from(error)
            .render(&mut Vec::new(), &mut err)
            .unwrap();
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "error: git ls-remote failed: fatal: no such remote\ncaused by: fatal: Could not read. Please make sure it exists.\n"
        );
    }

    #[test]
    fn a_refusal_is_its_sentence_and_its_hints_in_reports_words() {
        let mut err = Vec::new();
        Failure::from(crate::report::refusal::init_cannot_ask())
            .render(&mut Vec::new(), &mut err)
            .unwrap();
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "error: stdin is not a terminal, so init cannot ask: nothing was changed\n\
             hint: run 'git prove-it init --yes' (with the same flags) to set up as listed above\n"
        );
    }

    #[test]
    fn renders_the_error_its_causes_and_hints_as_git_does() {
        let error = anyhow::anyhow!("root cause").context("could not do the thing");
        let failure = Failure::from(error).hint(crate::report::hint::fix_the_path());
        let mut err = Vec::new();
        failure.render(&mut Vec::new(), &mut err).unwrap();
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "error: could not do the thing\ncaused by: root cause\n\
             hint: fix or remove the path named above; git add -A would fail on it too\n"
        );
    }
}
