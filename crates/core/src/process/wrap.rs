//! How a program is started: plainly, behind a prefix that makes a view of the filesystem of its
//! own, or in the namespaces a helper holds (`isolation` builds each).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Namespaces, Request};

/// How each script of a run is started: plainly, or in a view of the filesystem of its own.
#[derive(Debug, Clone, Default)]
pub enum Wrap {
    #[default]
    Plain,
    /// The program and arguments that start a script (appended, with its arguments) in its
    /// view from the directory it is started in (`isolation::View::prefix`,
    /// `isolation::Nested::prefix`).
    Prefix(Vec<OsString>),
    /// Enter user and mount namespaces kept by descriptor, in which the folder `from` is shown
    /// at `to`: the child enters them itself before its program starts, where a prefix that
    /// makes them starts seven programs (`isolation::enter`).
    Enter {
        /// The namespaces, opened while the child that made them waited.
        namespaces: Arc<Namespaces>,
        /// The folder shown at `to` (as given, and as the kernel resolves it).
        from: Vec<PathBuf>,
        to: PathBuf,
        /// The prefix that makes the namespaces again for each program, where the directory
        /// cannot be opened in them.
        again: Vec<OsString>,
    },
}

impl Wrap {
    /// The request that starts `program` from `dir` in this view. Entering held namespaces,
    /// the directory and the program's path, when inside `from`, are entered and run at the
    /// same place under `to`, resolved in the namespaces' own mounts.
    pub fn request<'a>(&self, program: &Path, dir: &Path) -> Request<'a> {
        let request = match self {
            Wrap::Plain => Request::new(program),
            Wrap::Prefix(prefix) => match prefix.split_first() {
                Some((wrapper, args)) => Request::new(wrapper).args(args).arg(program),
                None => Request::new(program),
            },
            Wrap::Enter {
                namespaces,
                from,
                to,
                again,
            } => {
                let shown = |path: &Path| {
                    from.iter()
                        .find_map(|tree| path.strip_prefix(tree).ok())
                        .map_or_else(|| path.to_owned(), |rest| to.join(rest))
                };
                // The directory is opened from the namespaces' own root before they are
                // entered (which resets it), so it is the view's, never the checkout's.
                match namespaces.entry(&shown(dir)) {
                    Ok(entry) => Request::new(shown(program)).enter(entry),
                    Err(_) => Wrap::Prefix(again.clone()).request(program, dir),
                }
            }
        };
        request.current_dir(dir)
    }
}
