/// An error that ends a command, with the `hint:` lines that tell the user what to do.
#[derive(Debug)]
pub struct Failure {
    error: anyhow::Error,
    hints: Vec<String>,
}

impl Failure {
    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
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

    /// Print the error, its causes and hints, as git prints its errors.
    pub fn render(&self, err: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::report::render_failure(self.error.as_ref(), &self.hints, err)
    }
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(error: E) -> Self {
        Failure {
            error: error.into(),
            hints: Vec::new(),
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
    fn renders_the_error_its_causes_and_hints_as_git_does() {
        let error = anyhow::anyhow!("root cause").context("could not do the thing");
        let failure = Failure::from(error).hint("try the other thing");
        let mut err = Vec::new();
        failure.render(&mut err).unwrap();
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "error: could not do the thing\ncaused by: root cause\nhint: try the other thing\n"
        );
    }
}
