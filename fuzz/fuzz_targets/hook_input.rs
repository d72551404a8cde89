//! A hook's stdin, read in every host's dialect and answered in its protocol: no panic, stdout
//! empty or one JSON object, unreadable input answered visibly (git_prove_it::fuzzing).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    git_prove_it::fuzzing::hook_input(data);
});
