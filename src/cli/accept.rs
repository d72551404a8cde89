//! `git prove-it accept`: a person's word that a contested proof counts.

use std::io::Write;

use crate::proof::MarkKind;

/// Accept contested proofs: a person's word that the pass counts although a run of the same
/// script failed on the same state. The failure stays on record as history. Runs nothing.
///
/// Takes the contested proofs of a commit (REV) or of a tree (its id, or REV^{tree}): each
/// check's (with a checks file), or only --check NAME's (`verify.sh` names the root
/// verify.sh). Writes one record per check and key into refs/notes/prove-it, naming the
/// digests of the proofs it accepts and of their contests, with the reason; signed when
/// prove-it.sign is on. A later failing run of the same script contests them again.
///
/// Exit status: 0 proofs were accepted, 2 none was contested, or a usage or repository error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A commit or a tree.
    #[arg(value_name = "REV|TREE")]
    target: String,

    /// Only the proofs of this check of prove-it.toml (`verify.sh`: the root verify.sh).
    #[arg(long, value_name = "NAME")]
    check: Option<String>,

    /// Why, as the record keeps it.
    #[arg(long, value_name = "TEXT")]
    reason: String,

    /// Print what was written as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<u8, super::Failure> {
    if args.target.contains("..") {
        return Err(crate::report::refusal::accept_takes_no_range(&args.target).into());
    }
    super::revoke::resolve_command(
        MarkKind::Accept,
        Some(&args.target),
        false,
        args.check.as_deref(),
        &args.reason,
        args.json,
        out,
    )
}
