//! Signed proofs: `prove-it.sign` signs every record with a real ed25519 key through
//! ssh-keygen, and `check --require-signed` and `log` tell good signatures from unsigned,
//! tampered, copied and unknown ones.

use std::path::PathBuf;

use predicates::prelude::*;

use crate::check::{hand_write_note, short, tree_of};
use crate::harness::{TestRepo, json_stdout};

const ALICE: &str = "alice@example.com";

/// A fresh ed25519 key pair without a passphrase in the test's home: the private key's path and
/// the public key line.
pub fn keygen(repo: &TestRepo, name: &str) -> (PathBuf, String) {
    let path = repo.home().join(name);
    let out = repo
        .command("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "ssh-keygen: {out:?}");
    let public = std::fs::read_to_string(path.with_extension("pub")).unwrap();
    (path, public.trim().to_string())
}

/// Sign proofs with `key`, as git's own settings for SSH commit signing say.
pub fn sign_with(repo: &TestRepo, key: &str) {
    repo.git(&["config", "prove-it.sign", "true"]);
    repo.git(&["config", "gpg.format", "ssh"]);
    repo.git(&["config", "user.signingKey", key]);
}

/// An allowed signers file outside the repository with `lines` as `principal options key`.
fn allowed_signers(repo: &TestRepo, lines: &[String]) -> String {
    let path = repo.home().join("allowed_signers");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.to_str().unwrap().to_string()
}

/// A repository with one commit whose proof is signed by alice, and a file allowing her.
fn signed_by_alice() -> (TestRepo, String) {
    let repo = TestRepo::with_commit();
    let (key, public) = keygen(&repo, "alice");
    sign_with(&repo, key.to_str().unwrap());
    repo.prove_it(&["run"]).assert().code(0);
    let allowed = allowed_signers(&repo, &[format!("{ALICE} {public}")]);
    (repo, allowed)
}

fn check_signed(repo: &TestRepo, allowed: &str) -> assert_cmd::assert::Assert {
    repo.prove_it(&["check", "--require-signed", "--allowed-signers", allowed])
        .assert()
}

#[test]
fn a_signed_proof_passes_require_signed_and_log_names_the_signer() {
    let (repo, allowed) = signed_by_alice();
    let tree = tree_of(&repo, "HEAD");
    let note = repo.note(&tree).unwrap();
    assert!(
        note.contains("\nssh-signature: -----BEGIN SSH SIGNATURE-----\n"),
        "{note}"
    );
    assert!(
        note.trim_end()
            .ends_with("ssh-signature: -----END SSH SIGNATURE-----")
    );

    check_signed(&repo, &allowed)
        .code(0)
        .stdout(format!("proven: {} initial\n", short(&repo, "HEAD")));
    let json = json_stdout(
        &repo
            .prove_it(&[
                "check",
                "--json",
                "--require-signed",
                "--allowed-signers",
                &allowed,
            ])
            .assert()
            .code(0),
    );
    assert_eq!(json["require_signed"], true);
    let signature = &json["commits"][0]["signature"];
    assert_eq!(signature["status"], "good");
    assert_eq!(signature["principal"], ALICE);
    assert!(
        signature["key"]
            .as_str()
            .unwrap()
            .starts_with("ED25519 key SHA256:"),
        "{signature}"
    );

    repo.prove_it(&["log", "--allowed-signers", &allowed])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!(
            ", host cli, good signature by {ALICE})"
        )));
    // Without an allowed signers file, log says it is signed and that it could not check it.
    repo.prove_it(&["log"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "signed, not verified: no allowed signers)",
        ));
}

#[test]
fn stock_ssh_keygen_verifies_a_proof_as_spec_md_describes() {
    // Interop: the signed bytes are the record's lines before its first ssh-signature line, and
    // the signature is those lines without their key, so a reviewer can check one by hand.
    let (repo, allowed) = signed_by_alice();
    let note = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    let (signed, armor) = note.split_at(note.find("ssh-signature:").unwrap());
    let armor: String = armor
        .lines()
        .map(|l| l.strip_prefix("ssh-signature: ").unwrap().to_string() + "\n")
        .collect();
    let sig = repo.home().join("proof.sig");
    std::fs::write(&sig, armor).unwrap();
    let verify = |bytes: &str| {
        assert_cmd::Command::from_std(repo.command("ssh-keygen"))
            .args([
                "-Y",
                "verify",
                "-n",
                "git-prove-it",
                "-I",
                ALICE,
                "-f",
                &allowed,
                "-s",
            ])
            .arg(&sig)
            .write_stdin(bytes.to_string())
            .output()
            .unwrap()
    };
    assert!(verify(signed).status.success(), "{:?}", verify(signed));
    assert!(
        !verify(&signed.replace("host: cli", "host: ci"))
            .status
            .success()
    );
}

#[test]
fn an_unsigned_proof_counts_unless_signatures_are_required() {
    let repo = TestRepo::with_commit();
    let (_, public) = keygen(&repo, "alice");
    let allowed = allowed_signers(&repo, &[format!("{ALICE} {public}")]);
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["check"]).assert().code(0);
    check_signed(&repo, &allowed)
        .code(1)
        .stdout(predicate::str::contains("not proven: 1 of 1 commits"))
        .stdout(predicate::str::contains(format!(
            "  {} initial (unsigned (--require-signed))",
            short(&repo, "HEAD")
        )));
    repo.prove_it(&["log", "--allowed-signers", &allowed])
        .assert()
        .stdout(predicate::str::contains(", host cli, unsigned)"));
}

#[test]
fn a_tampered_record_has_a_bad_signature() {
    let (repo, allowed) = signed_by_alice();
    let tree = tree_of(&repo, "HEAD");
    let note = repo.note(&tree).unwrap();
    // The agent makes its run look ten times faster and from CI; the signature still follows.
    let forged = note
        .replace("host: cli", "host: ci")
        .replace("duration-ms: ", "duration-ms: 1");
    hand_write_note(&repo, &tree, &forged);
    // It still parses as a proof, so only the signature can tell.
    repo.prove_it(&["check"]).assert().code(0);
    check_signed(&repo, &allowed)
        .code(1)
        .stdout(predicate::str::contains(
            "(BAD signature (--require-signed))",
        ));
    let json = json_stdout(
        &repo
            .prove_it(&["log", "--json", "--allowed-signers", &allowed])
            .assert()
            .code(0),
    );
    assert_eq!(json["commits"][0]["signature"]["status"], "bad");
    repo.prove_it(&["log", "--allowed-signers", &allowed])
        .assert()
        .stdout(predicate::str::contains(", host ci, BAD signature)"));
}

#[test]
fn a_signed_record_copied_to_another_tree_never_counts() {
    let (repo, allowed) = signed_by_alice();
    let proven = tree_of(&repo, "HEAD");
    let record = repo.note(&proven).unwrap();
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    let tree = tree_of(&repo, "HEAD");

    // Copied as it is: its tree is not the note's.
    hand_write_note(&repo, &tree, &record);
    check_signed(&repo, &allowed)
        .code(1)
        .stdout(predicate::str::contains(
            "not a valid record: tree mismatch: ",
        ));
    let log = repo
        .prove_it(&["log", "--json", "--allowed-signers", &allowed])
        .assert()
        .code(0);
    assert_eq!(
        json_stdout(&log)["commits"][0]["signature"]["status"],
        "tree-mismatch"
    );
    repo.prove_it(&["log", "-n", "1"])
        .assert()
        .stdout(predicate::str::contains("tree mismatch"));

    // Copied with its tree line rewritten: the signature no longer matches.
    hand_write_note(&repo, &tree, &record.replace(&proven, &tree));
    check_signed(&repo, &allowed)
        .code(1)
        .stdout(predicate::str::contains("BAD signature"));
}

#[test]
fn a_good_signature_by_a_key_not_allowed_is_an_unknown_signer() {
    let repo = TestRepo::with_commit();
    let (_, alice) = keygen(&repo, "alice");
    let (mallory, _) = keygen(&repo, "mallory");
    sign_with(&repo, mallory.to_str().unwrap());
    repo.prove_it(&["run"]).assert().code(0);
    let allowed = allowed_signers(&repo, &[format!("{ALICE} {alice}")]);
    check_signed(&repo, &allowed)
        .code(1)
        .stdout(predicate::str::contains(
            "(unknown signer: ED25519 key SHA256:",
        ));
    repo.prove_it(&["log", "--allowed-signers", &allowed])
        .assert()
        .stdout(predicate::str::contains(
            ", unknown signer: ED25519 key SHA256:",
        ));
}

#[test]
fn signing_asked_for_and_impossible_is_an_error_and_records_nothing() {
    let repo = TestRepo::with_commit();
    let tree = tree_of(&repo, "HEAD");
    let missing = repo.home().join("no-such-key");
    sign_with(&repo, missing.to_str().unwrap());
    let marker = repo.home().join("verify-ran");
    repo.verify_script(&format!("touch '{}'", marker.display()));
    repo.commit_all("verify.sh leaves a mark");
    let tree_after = tree_of(&repo, "HEAD");
    assert_ne!(tree, tree_after);
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: could not sign the proof; nothing was recorded",
        ))
        .stderr(predicate::str::contains(format!(
            "caused by: the signing key {} does not exist",
            missing.display()
        )))
        .stderr(predicate::str::contains("hint: name your SSH key"));
    assert!(
        !marker.exists(),
        "verify.sh must not run when no proof could be signed"
    );
    assert_eq!(repo.note(&tree_after), None);

    // No key configured, an OpenPGP format, no ssh-keygen: each says so, nothing is recorded.
    repo.git(&["config", "--unset", "user.signingKey"]);
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no signing key is configured"));
    repo.git(&["config", "user.signingKey", missing.to_str().unwrap()]);
    repo.git(&["config", "gpg.format", "openpgp"]);
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "only SSH signatures are supported",
        ));
    let (key, _) = keygen(&repo, "alice");
    sign_with(&repo, key.to_str().unwrap());
    repo.git(&["config", "gpg.ssh.program", "/nonexistent/ssh-keygen"]);
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "/nonexistent/ssh-keygen was not found",
        ))
        .stderr(predicate::str::contains(
            "hint: install OpenSSH's ssh-keygen",
        ));
    assert_eq!(repo.note(&tree_after), None);
    // ssh-keygen that fails to sign (a public key with no private key beside it nor an agent).
    repo.git(&["config", "--unset", "gpg.ssh.program"]);
    let lone = repo.home().join("lone.pub");
    std::fs::copy(key.with_extension("pub"), &lone).unwrap();
    repo.git(&["config", "user.signingKey", lone.to_str().unwrap()]);
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("could not sign the proof"));
    assert_eq!(repo.note(&tree_after), None);
}

#[test]
fn require_signed_needs_a_readable_allowed_signers_file() {
    let (repo, _) = signed_by_alice();
    repo.prove_it(&["check", "--require-signed"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--require-signed needs an allowed signers file",
        ))
        .stderr(predicate::str::contains("prove-it.allowedSigners"));
    repo.prove_it(&["check", "--require-signed", "--allowed-signers", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: the allowed signers file nope cannot be read",
        ));
    repo.prove_it(&["check", "--require-signed", "--allowed-signers", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("caused by: not a file"));
    // --allowed-signers means nothing without --require-signed.
    repo.prove_it(&["check", "--allowed-signers", "nope"])
        .assert()
        .code(2);
}

#[test]
fn a_committed_allowed_signers_file_named_in_config_is_the_ci_gate() {
    let repo = TestRepo::with_commit();
    let (key, public) = keygen(&repo, "alice");
    repo.write(".github/allowed_signers", &format!("{ALICE} {public}\n"));
    repo.commit_all("allow alice to sign proofs");
    sign_with(&repo, key.to_str().unwrap());
    repo.prove_it(&["run"]).assert().code(0);
    repo.git(&[
        "config",
        "prove-it.allowedSigners",
        ".github/allowed_signers",
    ]);
    // From a subdirectory too: the configured path is relative to the worktree root.
    std::fs::create_dir_all(repo.path("sub")).unwrap();
    let mut check = repo.prove_it(&["check", "--require-signed"]);
    check.current_dir(repo.path("sub"));
    check.assert().code(0);
    // git's own setting is the fallback.
    repo.git(&["config", "--unset", "prove-it.allowedSigners"]);
    let absolute = repo.path(".github/allowed_signers");
    repo.git(&[
        "config",
        "gpg.ssh.allowedSignersFile",
        absolute.to_str().unwrap(),
    ]);
    repo.prove_it(&["check", "--require-signed"])
        .assert()
        .code(0);
    repo.prove_it(&["log"])
        .assert()
        .stdout(predicate::str::contains(format!(
            "good signature by {ALICE}"
        )));
}

#[test]
fn a_retired_key_still_verifies_the_proofs_it_made_before_it_was_retired() {
    // Key rotation: the old key stays in allowed_signers with valid-before, and proofs are
    // checked as of their own time, so they keep verifying; new proofs by it do not.
    let repo = TestRepo::with_commit();
    let (old, old_public) = keygen(&repo, "old");
    sign_with(&repo, old.to_str().unwrap());
    repo.prove_it(&["run"]).assert().code(0);
    let note = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    let time = note
        .lines()
        .find_map(|l| l.strip_prefix("time: "))
        .unwrap()
        .to_string();
    let proven_at =
        time::OffsetDateTime::parse(&time, &time::format_description::well_known::Rfc3339).unwrap();
    // Retired one second after that proof; the proofs below are made three seconds later, by
    // the clock of the debug build (no sleeping).
    let retired = proven_at + time::Duration::seconds(1);
    let later = |args: &[&str]| {
        let mut cmd = repo.prove_it(args);
        cmd.env("PROVE_IT_TEST_CLOCK_OFFSET", "3");
        cmd
    };
    let stamp = format!(
        "{:04}{:02}{:02}{:02}{:02}{:02}Z",
        retired.year(),
        u8::from(retired.month()),
        retired.day(),
        retired.hour(),
        retired.minute(),
        retired.second()
    );
    let (new, new_public) = keygen(&repo, "new");
    let allowed = allowed_signers(
        &repo,
        &[
            format!("{ALICE} valid-before=\"{stamp}\" {old_public}"),
            format!("{ALICE} {new_public}"),
        ],
    );
    check_signed(&repo, &allowed).code(0);

    // A new proof signed with the retired key is refused; one with the new key passes.
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    later(&["run"]).assert().code(0);
    check_signed(&repo, &allowed)
        .code(1)
        .stdout(predicate::str::contains("unknown signer"));
    sign_with(&repo, new.to_str().unwrap());
    later(&["run", "--force"]).assert().code(0);
    check_signed(&repo, &allowed).code(0);
}

#[test]
fn with_signing_on_an_unsigned_proof_is_made_again_signed() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    let (key, _) = keygen(&repo, "alice");
    sign_with(&repo, key.to_str().unwrap());
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("with an SSH signature"));
    let note = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    assert_eq!(note.matches("prove-it-record: 1").count(), 2, "{note}");
    // Now a signed proof exists: nothing runs.
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("already proven"))
        .stdout(predicate::str::contains(", signed)"));
}

/// `status` looked proofs up by its own rule and said PROVEN for an unsigned proof
/// that `run` and the gate, with signing on, do not count. One lookup now answers all three.
#[test]
fn with_signing_on_status_does_not_count_an_unsigned_proof_that_run_would_redo() {
    let repo = TestRepo::with_commit();
    repo.prove_it(&["run"]).assert().code(0);
    repo.prove_it(&["status"]).assert().code(0);
    let (key, _) = keygen(&repo, "alice");
    sign_with(&repo, key.to_str().unwrap());
    repo.prove_it(&["status"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("proof:      none"))
        .stdout(predicate::str::contains(
            "ignored:    an unsigned proof, which does not count while prove-it.sign is on",
        ));
    let status = json_stdout(&repo.prove_it(&["status", "--json"]).assert().code(1));
    assert_eq!(status["outcome"], "NOT_PROVEN", "{status}");
    assert_eq!(status["proven"], false, "{status}");
    // What status said is what run does: verify.sh runs again, and signs.
    repo.prove_it(&["run"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("with an SSH signature"));
    repo.prove_it(&["status"]).assert().code(0);
}

/// ssh-agent on a socket in the test's home, killed when dropped.
struct Agent {
    child: std::process::Child,
    socket: PathBuf,
}

impl Agent {
    fn start(repo: &TestRepo) -> Agent {
        let socket = repo.home().join("agent.sock");
        let child = repo
            .command("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&socket)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !socket.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "ssh-agent did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Agent { child, socket }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_literal_public_key_signs_through_ssh_agent_as_git_does() {
    let repo = TestRepo::with_commit();
    let (key, public) = keygen(&repo, "alice");
    sign_with(&repo, &format!("key::{public}"));
    // Without an agent there is no private key to sign with: an error, nothing recorded.
    repo.prove_it(&["run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("could not sign the proof"));
    assert_eq!(repo.note(&tree_of(&repo, "HEAD")), None);

    let agent = Agent::start(&repo);
    let added = repo
        .command("ssh-add")
        .arg(&key)
        .env("SSH_AUTH_SOCK", &agent.socket)
        .output()
        .unwrap();
    assert!(added.status.success(), "ssh-add: {added:?}");
    // The private key file is gone: only the agent can sign now.
    std::fs::remove_file(&key).unwrap();
    repo.prove_it(&["run"])
        .env("SSH_AUTH_SOCK", &agent.socket)
        .assert()
        .code(0);
    let allowed = allowed_signers(&repo, &[format!("{ALICE} {public}")]);
    check_signed(&repo, &allowed).code(0);
}

#[test]
fn run_rev_signs_the_proof_of_a_commit_too() {
    let repo = TestRepo::with_commit();
    let (key, public) = keygen(&repo, "alice");
    sign_with(&repo, key.to_str().unwrap());
    repo.write("b.txt", "b\n");
    repo.commit_all("second");
    repo.prove_it(&["run", "HEAD~1"]).assert().code(0);
    let allowed = allowed_signers(&repo, &[format!("{ALICE} {public}")]);
    repo.prove_it(&[
        "check",
        "--require-signed",
        "--allowed-signers",
        &allowed,
        "HEAD~1",
    ])
    .assert()
    .code(0);
}

/// One commit of `many_signed_proofs_each_keep_their_own_status_in_order`: how its proof is made.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Good,
    Unsigned,
    Tampered,
    NotAllowed,
    Expired,
    OtherNamespace,
    /// Its key is on two lines, bob's first: the one case where find-principals is asked.
    ListedTwice,
    Wildcard,
    Copied,
    /// A tampered record beside an older good one: the good one is shown.
    TamperedThenGood,
}

impl Kind {
    const ALL: [Kind; 10] = [
        Kind::Good,
        Kind::Unsigned,
        Kind::Tampered,
        Kind::NotAllowed,
        Kind::Expired,
        Kind::OtherNamespace,
        Kind::ListedTwice,
        Kind::Wildcard,
        Kind::Copied,
        Kind::TamperedThenGood,
    ];

    /// The signature's status in `--json`, and its principal when good.
    fn expected(self) -> (&'static str, Option<&'static str>) {
        match self {
            Kind::Good | Kind::TamperedThenGood => ("good", Some(ALICE)),
            Kind::Unsigned => ("unsigned", None),
            Kind::Tampered => ("bad", None),
            Kind::NotAllowed | Kind::Expired | Kind::OtherNamespace => ("unknown-signer", None),
            Kind::ListedTwice => ("good", Some("bob@example.com")),
            Kind::Wildcard => ("good", Some("*@wild.example.com")),
            Kind::Copied => ("tree-mismatch", None),
        }
    }

    /// What `log` says of it, at the end of its line.
    fn logged(self) -> String {
        match self.expected() {
            ("good", Some(principal)) => format!(", good signature by {principal})"),
            ("unsigned", _) => ", unsigned)".to_string(),
            ("bad", _) => ", BAD signature)".to_string(),
            ("unknown-signer", _) => ", unknown signer: ED25519 key SHA256:".to_string(),
            _ => "(not a valid record: tree mismatch: ".to_string(),
        }
    }
}

/// Replace the last `from` in `text`: tampers with the newest record of a note only.
fn replace_last(text: &str, from: &str, to: &str) -> String {
    let at = text.rfind(from).unwrap();
    format!("{}{to}{}", &text[..at], &text[at + from.len()..])
}

/// `check` and `log` check signatures on every core: each commit of a long mixed history keeps
/// its own status, in order, and skipping find-principals where its answer is certain changes
/// nothing (compared with a program that is asked everything), while sparing it.
#[test]
fn many_signed_proofs_each_keep_their_own_status_in_order() {
    let repo = TestRepo::with_commit();
    let key = |name| {
        let (path, public) = keygen(&repo, name);
        (path.to_str().unwrap().to_string(), public)
    };
    let (alice, alice_public) = key("alice");
    let (mallory, _) = key("mallory");
    let (old, old_public) = key("old");
    let (git_only, git_only_public) = key("git-only");
    let (twice, twice_public) = key("twice");
    let (wild, wild_public) = key("wild");
    let allowed = allowed_signers(
        &repo,
        &[
            format!("{ALICE} {alice_public}"),
            format!("old@example.com valid-before=\"20000101\" {old_public}"),
            format!("git@example.com namespaces=\"git\" {git_only_public}"),
            format!("bob@example.com {twice_public}"),
            format!("carol@example.com {twice_public}"),
            format!("*@wild.example.com {wild_public}"),
        ],
    );
    sign_with(&repo, &alice);
    repo.prove_it(&["run"]).assert().code(0);
    let first_record = repo.note(&tree_of(&repo, "HEAD")).unwrap();
    let mut kinds = vec![(
        repo.git(&["rev-parse", "HEAD"]).trim().to_string(),
        Kind::Good,
    )];
    for (n, kind) in Kind::ALL.iter().cycle().take(30).enumerate() {
        repo.write("n.txt", &format!("{n}\n"));
        let commit = repo.commit_all(&format!("commit {n}"));
        let tree = tree_of(&repo, "HEAD");
        let signer = match kind {
            Kind::NotAllowed => &mallory,
            Kind::Expired => &old,
            Kind::OtherNamespace => &git_only,
            Kind::ListedTwice => &twice,
            Kind::Wildcard => &wild,
            _ => &alice,
        };
        sign_with(&repo, signer);
        repo.git(&[
            "config",
            "prove-it.sign",
            &(*kind != Kind::Unsigned).to_string(),
        ]);
        match kind {
            Kind::Copied => hand_write_note(&repo, &tree, &first_record),
            Kind::Tampered => {
                repo.prove_it(&["run"]).assert().code(0);
                let note = repo.note(&tree).unwrap();
                hand_write_note(&repo, &tree, &note.replace("host: cli", "host: ci"));
            }
            Kind::TamperedThenGood => {
                repo.prove_it(&["run"]).assert().code(0);
                // A second record, two seconds later by the debug build's clock, so that it is
                // the newest and checked first.
                repo.prove_it(&["run", "--force"])
                    .env("PROVE_IT_TEST_CLOCK_OFFSET", "2")
                    .assert()
                    .code(0);
                let note = repo.note(&tree).unwrap();
                assert_eq!(note.matches("prove-it-record: 1").count(), 2, "{note}");
                hand_write_note(&repo, &tree, &replace_last(&note, "host: cli", "host: ci"));
            }
            _ => {
                repo.prove_it(&["run"]).assert().code(0);
            }
        }
        kinds.push((commit, *kind));
    }
    kinds.reverse();
    let order: Vec<String> = repo
        .git(&["rev-list", "HEAD"])
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(
        order,
        kinds.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>()
    );

    // ssh-keygen runs counted by -Y operation, through a program named ssh-keygen (so that the
    // shortcut applies) or named otherwise (so that find-principals is asked for every proof).
    let log = repo.home().join("ssh-keygen-runs");
    let counting = format!("echo \"$2\" >> '{}'\nexec ssh-keygen \"$@\"", log.display());
    std::fs::create_dir_all(repo.home().join("counting")).unwrap();
    let shortcut = repo.home_script("counting/ssh-keygen", &counting);
    let asking = repo.home_script("ask-everything", &counting);
    let check = |program: &std::path::Path| {
        repo.git(&["config", "gpg.ssh.program", program.to_str().unwrap()]);
        let _ = std::fs::remove_file(&log);
        let json = json_stdout(
            &repo
                .prove_it(&[
                    "check",
                    "--all",
                    "--require-signed",
                    "--json",
                    "--allowed-signers",
                    &allowed,
                ])
                .assert()
                .code(1),
        );
        let runs = std::fs::read_to_string(&log).unwrap();
        let finds = runs.lines().filter(|op| *op == "find-principals").count();
        (json, finds)
    };
    let (json, finds) = check(&shortcut);
    let commits = json["commits"].as_array().unwrap();
    assert_eq!(commits.len(), kinds.len());
    for ((commit, kind), report) in kinds.iter().zip(commits) {
        let (status, principal) = kind.expected();
        assert_eq!(report["commit"], commit.as_str(), "{kind:?}");
        assert_eq!(report["signature"]["status"], status, "{kind:?}: {report}");
        assert_eq!(
            report["signature"]["principal"].as_str(),
            principal,
            "{kind:?}"
        );
        assert_eq!(report["proven"], status == "good", "{kind:?}");
    }
    let signed = kinds
        .iter()
        .filter(|(_, k)| *k != Kind::Unsigned && *k != Kind::Copied)
        .count();
    let twice = kinds
        .iter()
        .filter(|(_, k)| *k == Kind::ListedTwice)
        .count();
    assert_eq!(
        finds, twice,
        "find-principals is asked only for the key listed twice"
    );
    let (asked, asked_finds) = check(&asking);
    assert_eq!(
        asked, json,
        "asking find-principals every time says the same"
    );
    // TamperedThenGood checks two records, the tampered one first.
    let records = signed
        + kinds
            .iter()
            .filter(|(_, k)| *k == Kind::TamperedThenGood)
            .count();
    assert_eq!(asked_finds, records);

    let out = repo
        .prove_it(&["log", "--color", "never", "--allowed-signers", &allowed])
        .assert()
        .code(0);
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), kinds.len(), "{out}");
    for ((commit, kind), line) in kinds.iter().zip(&lines) {
        assert!(line.starts_with(&commit[..7]), "{kind:?}: {line}");
        assert!(line.contains(&kind.logged()), "{kind:?}: {line}");
    }
}
