//! How a program is started: plainly, behind a prefix that makes a view of the filesystem of its
//! own, or in the namespaces a helper holds (`isolation` builds each).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Request;

/// How each script of a run is started: plainly, or in a view of the filesystem of its own.
#[derive(Debug, Clone, Default)]
pub(crate) enum Wrap {
    #[default]
    Plain,
    /// The program and arguments that start a script (appended, with its arguments) in its
    /// view from the directory it is started in (`isolation::View::prefix`,
    /// `isolation::Nested::prefix`).
    Prefix(Vec<OsString>),
    /// Enter the user and mount namespaces a process holds (`nsenter`), in which the folder
    /// `from` is shown at `to`: one program started where a prefix that makes them starts
    /// seven (`isolation::enter`).
    Enter {
        /// The process holding them.
        pid: u32,
        /// The folder shown at `to` (as given, and as the kernel resolves it).
        from: Vec<PathBuf>,
        to: PathBuf,
        /// The prefix that makes the namespaces again for each program, once the holder is gone.
        again: Vec<OsString>,
    },
}

impl Wrap {
    /// The request that starts `program` from `dir` in this view. Entering held namespaces,
    /// the directory and the program's path, when inside `from`, are entered and run at the
    /// same place under `to`, resolved in the namespaces' own mounts.
    pub(crate) fn request<'a>(&self, program: &Path, dir: &Path) -> Request<'a> {
        let request = match self {
            Wrap::Plain => Request::new(program),
            Wrap::Prefix(prefix) => match prefix.split_first() {
                Some((wrapper, args)) => Request::new(wrapper).args(args).arg(program),
                None => Request::new(program),
            },
            Wrap::Enter { pid, again, .. } if super::stopped(*pid) => {
                Wrap::Prefix(again.clone()).request(program, dir)
            }
            Wrap::Enter { pid, from, to, .. } => {
                let shown = |path: &Path| {
                    from.iter()
                        .find_map(|tree| path.strip_prefix(tree).ok())
                        .map_or_else(|| path.to_owned(), |rest| to.join(rest))
                };
                // The directory is opened through the holder's root before the namespaces are
                // entered (which would reset it), so it is the view's, never the checkout's.
                let mut wd = OsString::from(format!("--wd=/proc/{pid}/root"));
                wd.push(shown(dir));
                Request::new("nsenter")
                    .args(["--target", &pid.to_string(), "--user", "--mount"])
                    .arg("--preserve-credentials")
                    .arg(wd)
                    .arg("--")
                    .arg(shown(program))
            }
        };
        request.current_dir(dir)
    }
}
