//! `git prove-it revoke`: a person's word that proofs are false, recorded so that they never
//! count again.

use std::io::Write;

use anyhow::Context as _;

use crate::context::Context;
use crate::exit;
use crate::git::{ObjectId, Repo};
use crate::proof::{MarkKind, Resolver, Target, resolve, targets_of_tree};
use crate::report::{self, JSON_VERSION, ResolveReport, Resolved, could_not, refusal};
use crate::signing::Signer;

/// Revoke proofs: a person's word that they are false. They never count again, wherever the
/// proofs ref goes; `doctor --restore` never brings them back. Runs nothing.
///
/// Takes the proofs of a commit (REV), of every commit of a range (BASE..HEAD), or of a tree
/// (its id, or REV^{tree}): each check's (with a checks file), or only --check NAME's
/// (`verify.sh` names the root verify.sh). Writes one record per check and key into
/// refs/notes/prove-it, naming the digests of the proofs it revokes and of the contests of
/// them, with the reason; signed when prove-it.sign is on. A later passing run makes a new
/// proof that counts, unless a failing run contests it.
///
/// With --unisolated, the proofs that may come from an earlier version's commit runs, which
/// ran inside the checkout and could test its code instead of the commit's: those without an
/// isolation line made outside an agent session by run or the pre-push hook (git prove-it
/// doctor lists them); all of them, or those of REV|TREE|RANGE. Prove the commits again
/// afterwards (git prove-it run BASE..HEAD), then push the proofs ref to clean the remote.
///
/// Exit status: 0 proofs were revoked, 2 none to revoke, or a usage or repository error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A commit, a range of commits (BASE..HEAD), or a tree.
    #[arg(value_name = "REV|TREE|RANGE", required_unless_present = "unisolated")]
    target: Option<String>,

    /// Only the proofs without an isolation line made outside an agent session (earlier
    /// versions' commit runs may have seen the checkout).
    #[arg(long)]
    unisolated: bool,

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
    resolve_command(
        MarkKind::Revoke,
        args.target.as_deref(),
        args.unisolated,
        args.check.as_deref(),
        &args.reason,
        args.json,
        out,
    )
}

/// `revoke` and `accept`: the proofs `spec` names, resolved by a person for `reason`.
pub(super) fn resolve_command(
    kind: MarkKind,
    spec: Option<&str>,
    unisolated: bool,
    check: Option<&str>,
    reason: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<u8, super::Failure> {
    if reason.trim().is_empty() {
        return Err(refusal::empty_reason().into());
    }
    let cwd = std::env::current_dir().context(could_not::read_the_current_directory())?;
    let ctx = Context::resolve(Repo::discover_history(&cwd)?, None);
    let repo = &ctx.repo;
    let mut targets: Vec<Target> = Vec::new();
    for tree in trees_of(repo, spec)? {
        let found = targets_of_tree(repo, tree, check, kind)
            .with_context(|| could_not::read_the_checks_of_tree(tree))?;
        for target in found {
            if !targets.contains(&target) {
                targets.push(target);
            }
        }
    }
    if unisolated {
        let found = crate::proof::unisolated(repo)?;
        let mut only = crate::proof::unisolated_targets(&found);
        if spec.is_some() || check.is_some() {
            // Within what REV|TREE|RANGE and --check name.
            only.retain(|one| {
                targets
                    .iter()
                    .any(|t| t.key == one.key && t.check == one.check)
            });
        }
        targets = only;
    }
    if targets.iter().all(|t| t.proofs.is_empty()) {
        return Err(refusal::nothing_to_resolve(kind_verb(kind), spec).into());
    }
    let signer = Signer::from_config(&|key| repo.config_string(key), ctx.home.as_deref())
        .context(could_not::sign_the_record())?;
    let sign = |text: &str| match &signer {
        Some(signer) => signer.sign(text).map(Some),
        None => Ok(None),
    };
    let identity = repo.identity();
    let by = Resolver {
        kind,
        reason,
        time: ctx.clock.now_seconds(),
        tool: format!("git-prove-it {}", env!("CARGO_PKG_VERSION")),
        identity_missing: identity.missing,
        signed_off_by: identity.display.clone(),
        sign: &sign,
    };
    let written = resolve(repo, &targets, &by)?;
    let report = ResolveReport {
        version: JSON_VERSION,
        action: kind_verb(kind),
        reason: reason.to_string(),
        resolved: targets
            .iter()
            .filter(|t| !t.proofs.is_empty())
            .zip(&written)
            .map(|(target, mark)| Resolved {
                key: target.key.to_string(),
                check: target
                    .check
                    .clone()
                    .unwrap_or_else(|| crate::proof::VERIFY_CHECK.to_string()),
                proofs: target.proofs.len(),
                contests: mark.names.len() - target.proofs.len(),
                signed: mark.signature.is_some(),
            })
            .collect(),
    };
    if json {
        report::json(&report, out)?;
    } else {
        report.human(out)?;
    }
    Ok(exit::OK)
}

/// The trees `spec` names: a tree, a commit's, or each commit's of a range; none without one
/// (`--unisolated` alone looks at the whole proofs ref).
fn trees_of(repo: &Repo, spec: Option<&str>) -> Result<Vec<ObjectId>, super::Failure> {
    let Some(spec) = spec else {
        return Ok(Vec::new());
    };
    Ok(match repo.named_tree(spec)? {
        Some(tree) => vec![tree],
        None => {
            let selection = repo.select(&[spec.to_string()])?;
            let ids = if selection.hidden.is_empty() {
                selection.tips
            } else {
                repo.walk(&selection, None)?
            };
            ids.into_iter()
                .map(|id| repo.commit_info(id).map(|info| info.tree))
                .collect::<Result<_, _>>()?
        }
    })
}

fn kind_verb(kind: MarkKind) -> &'static str {
    match kind {
        MarkKind::Accept => "accept",
        _ => "revoke",
    }
}
