//! A proof note's text, split and parsed as the proof reader does: no panic, no record lost,
//! records render back to themselves, merging is idempotent (git_prove_it::fuzzing).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    git_prove_it::fuzzing::proof_record(data);
});
