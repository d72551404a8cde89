//! Where policy comes from besides flags: the process environment and, inside a repository, its
//! git config (as git resolves it for that repository).

use crate::git::Repo;

pub(crate) struct Sources<'a>(pub(crate) Option<&'a Repo>);

impl<'a> Sources<'a> {
    pub(crate) fn of(repo: &'a Repo) -> Self {
        Sources(Some(repo))
    }
}

impl crate::policy::Sources for Sources<'_> {
    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn config(&self, key: &str) -> Option<String> {
        self.0.and_then(|repo| repo.config_string(key))
    }
}
