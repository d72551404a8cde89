//! SSH signatures over proof records, made and checked by `ssh-keygen -Y`, as git itself signs
//! commits with `gpg.format = ssh`.
//!
//! Shelling out to ssh-keygen is deliberate and allowed by the project's rules: it is what git
//! itself runs for `gpg.format = ssh`, so proofs are signed and checked exactly as the same
//! people's commits are, with the same keys, agent and allowed signers files; a reimplementation
//! would be a second, weaker copy.
//!
//! This module owns the SSH signatures of proof records: which settings ask for them and which
//! program and key make them (`config`), the ssh-keygen runs that make and check them
//! (`keygen`), the reading of allowed signers files (`allowed_signers`) and of the signature
//! armour (`armor`). It never prints, never touches the repository, and spawns only ssh-keygen
//! (or `gpg.ssh.program`), through `crate::process`.

mod allowed_signers;
mod armor;
mod config;
mod error;
mod keygen;

pub use armor::Signature;
pub use config::{Signer, allowed_signers};
pub use error::Error;
pub use keygen::{SignatureCheck, Verifier, is_sound};
