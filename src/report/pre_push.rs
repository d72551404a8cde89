//! The pre-push hook's warnings and refusals: pushed commits proven only through an edited
//! verify.sh, and pushed commits that weaken protected paths.

use super::check::list;
use std::io::{self, Write};

use super::{CommitReport, SyncReport};

/// What a pushed commit weakened its protected paths since when its own proof found it (its
/// `base`), rather than a base of the pushed range.
pub(crate) const PROOFS_BASELINE: &str = "its proof's baseline";

/// Every pushed commit proven only through an edited verify.sh, warned of as the gate's
/// BOUNDED notice is: such a proof counts, and says only that the edited
/// checks passed.
pub(crate) fn pushed_through_edited_verify(
    edited: &[CommitReport],
    err: &mut dyn Write,
) -> io::Result<()> {
    if edited.is_empty() {
        return Ok(());
    }
    let n = edited.len();
    writeln!(
        err,
        "prove-it: warning: BOUNDED_CLAIM_SURVIVES: {n} pushed commit{} proven only through a verify.sh or check script edited during the session",
        if n == 1 { " is" } else { "s are" }
    )?;
    for commit in edited {
        writeln!(
            err,
            "  {} {} (proven only through {})",
            &commit.commit[..commit.commit.len().min(7)],
            commit.subject,
            commit.edited_what()
        )?;
    }
    writeln!(
        err,
        "hint: review each edit with 'git prove-it log -p'; CI's 'git prove-it check --strict' refuses such proofs"
    )
}

/// Every pushed commit that weakens protected paths: a warning, or, under
/// `prove-it.weakening = block` (`refused`), the refusal of the push.
pub(crate) fn pushed_weakened(
    weakened: &[super::WeakenedReport],
    refused: bool,
    err: &mut dyn Write,
) -> io::Result<()> {
    if weakened.is_empty() {
        return Ok(());
    }
    let n = weakened.len();
    writeln!(
        err,
        "prove-it: {}: {n} pushed commit{} protected tests or configs",
        if refused {
            "push refused"
        } else {
            "warning: BOUNDED_CLAIM_SURVIVES"
        },
        if n == 1 { " weakens" } else { "s weaken" }
    )?;
    for item in weakened {
        let base = if item.base.len() == 40 {
            &item.base[..7]
        } else {
            item.base.as_str()
        };
        writeln!(
            err,
            "  {} weakened since {base}:",
            &item.commit[..item.commit.len().min(7)]
        )?;
        for finding in &item.findings {
            writeln!(err, "    {}", super::commits::printable(finding))?;
        }
    }
    if refused {
        writeln!(
            err,
            "hint: prove-it.weakening = block: restore what was weakened, or push it knowingly with PROVE_IT_ALLOW_WEAKENED=1 git push"
        )
    } else {
        writeln!(
            err,
            "hint: review each weakening with 'git prove-it log -p'; CI's 'git prove-it check --strict' refuses it unless --allow-weakened"
        )
    }
}

/// After a push went through the hook: where its proofs went.
pub(crate) fn proofs_sent(sync: &SyncReport, err: &mut dyn Write) -> io::Result<()> {
    if sync.pushed {
        writeln!(err, "prove-it: proofs sent to {}", sync.remote)
    } else {
        Ok(())
    }
}

/// After a push went through the hook but its proofs could not follow.
pub(crate) fn proofs_not_sent(
    remote: &str,
    failure: &super::FailureReport,
    err: &mut dyn Write,
) -> io::Result<()> {
    writeln!(
        err,
        "prove-it: warning: the push goes on, but its proofs were not sent to {remote}: {}",
        failure.message
    )?;
    for cause in &failure.causes {
        writeln!(err, "caused by: {cause}")?;
    }
    for hint in &failure.hints {
        writeln!(err, "hint: {hint}")?;
    }
    writeln!(
        err,
        "hint: send them later with 'git prove-it sync {remote}'"
    )
}

/// Why the pre-push hook refused a push: its pushed commits that are not proven.
#[derive(Debug)]
pub(crate) struct PushRefusal {
    pub remote: String,
    pub unproven: Vec<CommitReport>,
    /// Commits the hook tried to prove (`prove-it.prePush=prove`) and could not.
    pub tried: bool,
}

impl PushRefusal {
    pub(crate) fn human(&self, err: &mut dyn Write) -> io::Result<()> {
        let n = self.unproven.len();
        let what = if self.tried {
            "could not be proven"
        } else {
            "not proven"
        };
        // A check by hand (pre-commit's pre-push stage run with --from-ref, --to-ref) names no
        // remote.
        let to = if self.remote.is_empty() {
            String::new()
        } else {
            format!(" to {}", self.remote)
        };
        writeln!(
            err,
            "prove-it: refusing to push{to}: {n} commit{} {what}",
            if n == 1 { "" } else { "s" }
        )?;
        list(&self.unproven.iter().collect::<Vec<_>>(), err)?;
        for commit in &self.unproven {
            // Nothing could prove a commit without verify.sh, or whose checks file is in error.
            if !matches!(commit.status, "not-armed" | "checks-error") {
                writeln!(err, "hint: prove it: git prove-it run {}", commit.short())?;
            }
        }
        writeln!(
            err,
            "hint: or push it unproven, knowingly: git push --no-verify"
        )
    }
}
