//! git config: read as git resolves it for this repository, written to the repository's own
//! config file as `git config --local` writes it.

use std::os::unix::fs::PermissionsExt;

use gix::ObjectId;

use super::{Error, Repo};

impl Repo {
    /// A string from git config, as git would resolve it for this repository.
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.git
            .config_snapshot()
            .string(key)
            .map(|v| v.to_string())
    }

    /// A digest of what turns worktree files into the state tree's blobs besides their bytes,
    /// from outside the worktree: every `filter.*` section of the config in force, the
    /// end-of-line settings, `core.fileMode` and `core.symlinks` (with either off, a mode
    /// change or a link turned into a file no longer shows), `attr.tree`, and every attributes
    /// file git reads besides the worktree's: the installation's and the system's, the global
    /// one (`core.attributesFile`, or when it is unset `$XDG_CONFIG_HOME/git/attributes`, else
    /// `~/.config/git/attributes`) and the repository's `info/attributes`, by their bytes (not
    /// their paths, which move with the process's environment while the rules stay the same:
    /// an absent file reads as empty). A clean filter or an end-of-line rule set there can map
    /// any edit back to a proven blob, so the gate anchors this digest and refuses a stop where
    /// it changed. The worktree's `.gitattributes` files are part of the state tree already.
    pub fn filter_digest(&self) -> ObjectId {
        let snapshot = self.git.config_snapshot();
        let mut data = Vec::new();
        if let Some(sections) = snapshot.plumbing().sections_by_name("filter") {
            for section in sections {
                data.extend_from_slice(&section.to_bstring());
                data.push(0);
            }
        }
        for key in [
            "core.autocrlf",
            "core.eol",
            "core.safecrlf",
            "core.attributesFile",
            "core.fileMode",
            "core.symlinks",
            "attr.tree",
        ] {
            let value = snapshot.string(key);
            data.extend_from_slice(format!("{key}={value:?}\0").as_bytes());
        }
        for file in self.attribute_files() {
            data.extend_from_slice(&std::fs::read(file).unwrap_or_default());
            data.push(0);
        }
        gix::objs::compute_hash(self.git.object_hash(), gix::objs::Kind::Blob, &data)
            .unwrap_or_else(|_| ObjectId::null(self.git.object_hash()))
    }

    /// A digest of the ignore rules git reads from outside the worktree: the repository's
    /// `info/exclude`, and `core.excludesFile` (its value and its file's bytes), which defaults to
    /// `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`). A rule added there hides a new file
    /// from the state tree, so the gate anchors this digest and refuses a stop where it changed.
    /// The worktree's own `.gitignore` files are part of the state tree already.
    pub fn ignore_digest(&self) -> ObjectId {
        let snapshot = self.git.config_snapshot();
        let mut data = Vec::new();
        let value = snapshot.string("core.excludesFile");
        data.extend_from_slice(format!("core.excludesFile={value:?}\0").as_bytes());
        // Read here, as git reads it, rather than resolved once in the context: it is one
        // more source of the state, as `info/exclude` is.
        let default = || {
            std::env::var_os("XDG_CONFIG_HOME")
                .map(std::path::PathBuf::from)
                .filter(|dir| dir.is_absolute())
                .or_else(|| {
                    std::env::var_os("HOME")
                        .map(|home| std::path::PathBuf::from(home).join(".config"))
                })
                .map(|dir| dir.join("git").join("ignore"))
        };
        let excludes = match snapshot.trusted_path("core.excludesFile") {
            Ok(Some(path)) => Some(path),
            _ => default(),
        };
        for file in [
            Some(self.git.common_dir().join("info").join("exclude")),
            excludes,
        ]
        .into_iter()
        .flatten()
        {
            // Contents only: the same rules read through another HOME are the same rules.
            data.extend_from_slice(&std::fs::read(file).unwrap_or_default());
            data.push(0);
        }
        gix::objs::compute_hash(self.git.object_hash(), gix::objs::Kind::Blob, &data)
            .unwrap_or_else(|_| ObjectId::null(self.git.object_hash()))
    }

    /// The attributes files outside the worktree that git reads, whether they exist or not:
    /// gix's list of the global ones (installation, system, then `core.attributesFile` or the
    /// XDG default), then `info/attributes`. Where gix cannot resolve its list, the configured
    /// file and the XDG default are taken, so that neither is ever left out.
    pub(super) fn attribute_files(&self) -> Vec<std::path::PathBuf> {
        let mut files = self.git.attribute_global_paths().unwrap_or_else(|_| {
            let snapshot = self.git.config_snapshot();
            let xdg = gix::path::env::xdg_config("attributes", &mut |name| {
                std::env::var_os(name).filter(|value| !value.is_empty())
            });
            snapshot
                .trusted_path("core.attributesFile")
                .ok()
                .flatten()
                .into_iter()
                .chain(xdg)
                .collect()
        });
        files.push(self.git.common_dir().join("info").join("attributes"));
        files
    }

    /// Set `key` (`section.subsection.name`) to `value` in the repository's own config file, as
    /// `git config --local key value` does: under git's lock (`config.lock`, so that a `git
    /// config` running at the same moment fails rather than loses a write), replacing the last
    /// value of `key` or adding it, and keeping every other line, comment and include as it is,
    /// and the file's permissions. gix parses the file losslessly and writes back what it read.
    ///
    /// The config this handle reads is not updated: a process resolves its config once.
    pub fn set_config(&self, key: &str, value: &str) -> Result<(), Error> {
        let path = self.git.common_dir().join("config");
        let failed = |source: gix::Error| Error::ConfigWrite {
            key: key.to_string(),
            path: path.clone(),
            source,
        };
        // Locked before reading, as git does, so that no write lands between our read and ours.
        let mut lock = gix::lock::File::acquire_to_update_resource(
            &path,
            gix::lock::acquire::Fail::Immediately,
            None,
            0,
        )
        .map_err(|e| failed(gix::Error::from_error(e)))?;
        let mut file =
            gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
                .map_err(|e| failed(gix::Error::from_error(e)))?;
        file.set_raw_value(key, value)
            .map_err(|e| failed(gix::Error::from_error(e)))?;
        let mode = std::fs::metadata(&path)
            .map(|meta| meta.permissions().mode())
            .map_err(|e| failed(gix::Error::from_error(e)))?;
        lock.with_mut(|lock| {
            file.write_to(lock)?;
            lock.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))
        })
        .map_err(|e| failed(gix::Error::from_error(e)))?;
        lock.commit()
            .map_err(|e| failed(gix::Error::from_error(e.error)))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_repo::{git_repo, run};

    /// A config file with what `git config` keeps and a careless rewrite would lose: comments of
    /// both kinds, an include, a multi-valued key, quoting, odd spacing, a subsection, and a
    /// last line without a newline.
    const RICH: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n# a comment of the user's\n; and another kind\n[include]\n\tpath = extra.inc\n[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\tfetch = +refs/notes/*:refs/notes/*\n[alias]\n  lg=log --oneline   # trailing comment\n\tq = \"!echo \\\"quoted; not a comment\\\"\"\n[user]\n\tname = Someone";

    #[test]
    fn setting_a_value_keeps_every_other_setting_and_comment_as_git_reads_them() {
        let (dir, repo) = git_repo();
        let config = dir.path().join(".git/config");
        std::fs::write(&config, RICH).unwrap();
        std::fs::write(dir.path().join(".git/extra.inc"), "[extra]\n\tkey = 1\n").unwrap();
        let before = run(dir.path(), &["config", "--list", "--local"]);

        repo.set_config("notes.prove-it.mergeStrategy", "union")
            .unwrap();

        let after = run(dir.path(), &["config", "--list", "--local"]);
        assert_eq!(
            after,
            format!("{before}notes.prove-it.mergestrategy=union\n")
        );
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(text.starts_with(RICH), "{text}");
        assert_eq!(
            run(
                dir.path(),
                &["config", "--get", "notes.prove-it.mergeStrategy"]
            ),
            "union\n"
        );
        assert!(!dir.path().join(".git/config.lock").exists());
    }

    #[test]
    fn a_new_key_is_written_byte_for_byte_as_git_config_writes_it() {
        let (ours, repo) = git_repo();
        let (theirs, _) = git_repo();
        repo.set_config("notes.prove-it.mergeStrategy", "union")
            .unwrap();
        run(
            theirs.path(),
            &["config", "--local", "notes.prove-it.mergeStrategy", "union"],
        );
        assert_eq!(
            std::fs::read_to_string(ours.path().join(".git/config")).unwrap(),
            std::fs::read_to_string(theirs.path().join(".git/config")).unwrap()
        );
    }

    #[test]
    fn setting_a_value_again_replaces_it_in_place() {
        let (dir, repo) = git_repo();
        run(
            dir.path(),
            &["config", "notes.prove-it.mergeStrategy", "ours"],
        );
        run(dir.path(), &["config", "user.name", "Someone"]);
        let before = std::fs::read_to_string(dir.path().join(".git/config")).unwrap();

        repo.set_config("notes.prove-it.mergeStrategy", "union")
            .unwrap();

        let after = std::fs::read_to_string(dir.path().join(".git/config")).unwrap();
        assert_eq!(
            after,
            before.replace("mergeStrategy = ours", "mergeStrategy = union")
        );
        assert_eq!(
            run(
                dir.path(),
                &["config", "--get-all", "notes.prove-it.mergeStrategy"]
            ),
            "union\n"
        );
    }

    /// git fails rather than waits when another writer holds the config's lock; so do we.
    #[test]
    fn a_held_config_lock_is_an_error_and_is_left_alone() {
        let (dir, repo) = git_repo();
        let lock = dir.path().join(".git/config.lock");
        std::fs::write(&lock, "another writer's").unwrap();
        let before = std::fs::read(dir.path().join(".git/config")).unwrap();

        let error = repo
            .set_config("notes.prove-it.mergeStrategy", "union")
            .unwrap_err();

        assert!(
            error
                .to_string()
                .starts_with("could not set notes.prove-it.mergeStrategy in "),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), "another writer's");
        assert_eq!(
            std::fs::read(dir.path().join(".git/config")).unwrap(),
            before
        );
    }

    #[test]
    fn the_config_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt as _;
        let (dir, repo) = git_repo();
        let config = dir.path().join(".git/config");
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();

        repo.set_config("prove-it.ledger", "true").unwrap();

        let mode = std::fs::metadata(&config).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            run(dir.path(), &["config", "--get", "prove-it.ledger"]),
            "true\n"
        );
    }
}
