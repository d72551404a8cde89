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
    /// not worth an error message.
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
