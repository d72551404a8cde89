//! The scenarios every host runs: their verify.sh, the model's script and what must come of
//! it. A host's own module says how to launch and read it (`harness::Agent`); `scenarios_for!`
//! makes each scenario a test of that module.

use std::process::Output;

use crate::e2e::harness::{Agent, Feedback, HostInfo, describe, last_answers, offers_tool};
use crate::fake_model::{FakeModel, Reply, Script};
use crate::harness::{TestRepo, json_stdout};

/// Each scenario, as one `#[test]` in the calling module for the agent `$agent`, ignored with
/// `$reason` (so that a plain `cargo test` lists it as ignored, never as passed).
macro_rules! scenarios_for {
    ($agent:expr, $reason:literal) => {
        #[test]
        #[ignore = $reason]
        fn failing_change_is_blocked() {
            $crate::e2e::scenarios::failing_change_is_blocked(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn an_always_failing_verify_sh_ends_the_turn_unverified() {
            $crate::e2e::scenarios::an_always_failing_verify_sh_ends_the_turn_unverified(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn the_budget_holds_when_the_agent_acts_between_blocks() {
            $crate::e2e::scenarios::the_budget_holds_when_the_agent_acts_between_blocks(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn the_state_proven_ahead_spares_the_stops_run() {
            $crate::e2e::scenarios::the_state_proven_ahead_spares_the_stops_run(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn a_read_only_prompt_never_runs_verify_sh() {
            $crate::e2e::scenarios::a_read_only_prompt_never_runs_verify_sh(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn deleting_verify_sh_is_refused_until_it_is_restored() {
            $crate::e2e::scenarios::deleting_verify_sh_is_refused_until_it_is_restored(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn a_headless_run_ends_by_reporting_the_unverified_end() {
            $crate::e2e::scenarios::a_headless_run_ends_by_reporting_the_unverified_end(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn a_headless_run_ends_by_reporting_a_proof_bounded_by_an_edited_verify_sh() {
            $crate::e2e::scenarios::a_headless_run_ends_by_reporting_a_proof_bounded_by_an_edited_verify_sh(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn a_headless_run_ends_by_reporting_that_the_gate_could_not_check() {
            $crate::e2e::scenarios::a_headless_run_ends_by_reporting_that_the_gate_could_not_check(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn a_session_started_in_a_subdirectory_is_gated_or_doctor_says_it_is_not() {
            $crate::e2e::scenarios::a_session_started_in_a_subdirectory_is_gated_or_doctor_says_it_is_not(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn a_skipped_session_is_said_in_the_runs_output() {
            $crate::e2e::scenarios::a_skipped_session_is_said_in_the_runs_output(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn a_resumed_session_asked_the_same_again_after_a_yield_gets_its_whole_budget() {
            $crate::e2e::scenarios::a_resumed_session_asked_the_same_again_after_a_yield_gets_its_whole_budget(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn a_monorepos_failing_check_is_blocked_and_its_other_checks_are_not_run() {
            $crate::e2e::scenarios::a_monorepos_failing_check_is_blocked_and_its_other_checks_are_not_run(&$agent);
        }

        #[test]
        #[ignore = $reason]
        fn a_failure_from_before_the_session_is_said_to_predate_it_and_the_fix_is_proven() {
            $crate::e2e::scenarios::a_failure_from_before_the_session_is_said_to_predate_it_and_the_fix_is_proven(&$agent);
        }
    };
}
pub(crate) use scenarios_for;

/// What every message of the gate starts with.
pub const GATE: &str = "prove-it: ";
/// The head of every block of the gate (then "N of M for this turn)").
pub const BLOCK: &str = "prove-it: DISPROVEN (attempt ";
/// The notice that ends an always-failing turn by the default budget.
pub const YIELD: &str = "prove-it: NOT_PROVEN: this turn ended unverified (after 3 attempts)";
/// What the last block asks of the agent, on hosts that show the user no notice.
pub const QUOTE_THE_NOTICE: &str = "end your answer by quoting the notice above to them";

/// verify.sh of the failing change: answer.txt (committed as 4) must say 4.
pub const ANSWER_CHECK: &str = "test \"$(cat answer.txt)\" = 4 || \
    { echo \"answer.txt is wrong: expected 4, got $(cat answer.txt)\"; exit 1; }\n\
    echo all checks passed";
/// What ANSWER_CHECK says of the failing change.
pub const ANSWER_WRONG: &str = "answer.txt is wrong: expected 4, got 5";
/// The files ANSWER_CHECK checks.
pub const ANSWER: &[(&str, &str)] = &[("answer.txt", "4\n")];

/// A verify.sh that never passes.
pub const ALWAYS_FAILING: &str = "echo 'check 42 is broken'\nexit 1";
/// What ALWAYS_FAILING says.
pub const BROKEN: &str = "check 42 is broken";

/// A verify.sh that leaves a mark in HOME (which the host, the hook and verify.sh inherit).
pub const MARKS_HOME: &str = "touch \"$HOME/verify-ran\"";

/// The claim of the scripts below, until they fix something.
pub const CLAIM: &str = "All tests pass.";
/// The failing change's last answer, after the fix.
pub const FIXED: &str = "Fixed: answer.txt is 4 again, verify.sh passes.";

/// What a model that does as the last block asks ends its answer with.
pub const REPORTED: &str = "Not done: prove-it says NOT_PROVEN, this turn ended unverified.";
/// How the gate says a session is skipped.
pub const SKIPPED: &str = "prove-it: skipped by PROVE_IT_SKIP=1";
/// What a model told of the skip answers.
pub const REPORTED_SKIP: &str = "prove-it skipped this turn (PROVE_IT_SKIP=1): it is unverified.";

/// How the gate says a proof holds only through verify.sh edited during the session.
pub const BOUNDED: &str = "prove-it: BOUNDED_CLAIM_SURVIVES: verify.sh passed on the working \
    state";
/// What a model told of the bounded proof answers.
pub const REPORTED_BOUNDED: &str = "prove-it says BOUNDED_CLAIM_SURVIVES: I edited verify.sh, \
    so the proof holds only for the edited checks.";
/// How the gate says it could not check a turn.
pub const COULD_NOT_CHECK: &str = "prove-it: could not check this turn: ";
/// What a model told the gate could not check answers.
pub const REPORTED_COULD_NOT_CHECK: &str =
    "Not done: prove-it could not check this turn, which ended unverified.";

/// How the gate refuses a deleted verify.sh.
pub const REFUSED_DELETION: &str = "verify.sh was armed when this session started";

/// A change that breaks ANSWER_CHECK, a claim, then the fix and a claim.
pub fn failing_change() -> Script {
    Script::new(
        vec![
            Reply::Shell("echo hello > greeting.txt && echo 5 > answer.txt"),
            Reply::Text(CLAIM),
            Reply::Shell("echo 4 > answer.txt"),
        ],
        Reply::Text(FIXED),
    )
}

/// A change, then the same claim at every stop.
pub fn always_claiming() -> Script {
    Script::new(
        vec![Reply::Shell("echo change > change.txt")],
        Reply::Text(CLAIM),
    )
}

/// A change and a claim, then after every block another change (each its own command, so no
/// host's loop detection plays a part: Gemini CLI's stops after five identical calls) and
/// another claim.
pub fn acting_between_blocks() -> Script {
    Script::new(
        vec![
            Reply::Shell("echo 1 >> change.txt"),
            Reply::Text(CLAIM),
            Reply::Shell("echo 2 >> change.txt"),
            Reply::Text("Fixed, all tests pass."),
            Reply::Shell("echo 3 >> change.txt"),
            Reply::Text("Fixed again, all tests pass."),
            Reply::Shell("echo 4 >> change.txt"),
        ],
        Reply::Text("Surely fixed now."),
    )
}

/// A command that changes nothing, then an answer.
pub fn read_only() -> Script {
    Script::new(
        vec![Reply::Shell("cat answer.txt")],
        Reply::Text("The answer is 4."),
    )
}

/// verify.sh deleted with a change and a claim, then restored.
pub fn deleting_verify_sh() -> Script {
    Script::new(
        vec![
            Reply::Shell("rm verify.sh && echo 5 > answer.txt"),
            Reply::Text("Done. All tests pass."),
            Reply::Shell("git checkout -- verify.sh"),
        ],
        Reply::Text("Restored verify.sh."),
    )
}

/// A change, the claim at the budget's stops and at the last, then, told of the unverified
/// end, the report a model that does as it is asked gives. A host that gave no last block
/// ends the run with the claim.
pub fn reporting_when_told() -> Script {
    Script::new(
        vec![
            Reply::Shell("echo change > change.txt"),
            Reply::Text(CLAIM),
            Reply::Text(CLAIM),
            Reply::Text(CLAIM),
            Reply::Text(CLAIM),
        ],
        Reply::Text(REPORTED),
    )
}

/// A change that edits verify.sh (which still passes) and a claim, then, told of the bounded
/// proof, the report.
pub fn editing_verify_sh() -> Script {
    Script::new(
        vec![
            Reply::Shell("echo change > change.txt && echo 'echo edited' >> verify.sh"),
            Reply::Text(CLAIM),
        ],
        Reply::Text(REPORTED_BOUNDED),
    )
}

/// A change that also leaves the proofs ref on a blob, which no lookup can read, and a claim,
/// then, told the gate could not check, the report.
pub fn breaking_the_proofs_ref() -> Script {
    Script::new(
        vec![
            Reply::Shell(
                "echo change > change.txt && git update-ref refs/notes/prove-it HEAD:verify.sh",
            ),
            Reply::Text(CLAIM),
        ],
        Reply::Text(REPORTED_COULD_NOT_CHECK),
    )
}

/// A change and a claim, then, told of the skip, the report.
pub fn skipped() -> Script {
    Script::new(
        vec![Reply::Shell("echo change > change.txt"), Reply::Text(CLAIM)],
        Reply::Text(REPORTED_SKIP),
    )
}

/// `PROVE_IT_SKIP=1` set in the hook's command of the host's wiring, as a person's
/// `PROVE_IT_SKIP=1 <host>` gives it to the hook.
pub fn skip_in_the_wiring(repo: &TestRepo, wiring: &str) {
    let text = std::fs::read_to_string(repo.path(wiring)).unwrap();
    assert!(text.contains("git prove-it hook"), "{text}");
    repo.write(
        wiring,
        &text.replace("git prove-it hook", "PROVE_IT_SKIP=1 git prove-it hook"),
    );
}

/// One run of the host: its repository, the model's server, and the failure context.
struct Run {
    repo: TestRepo,
    server: FakeModel,
    out: Output,
    context: String,
}

/// Wire a repository with `verify` and `files`, run the host on `prompt` against `script`,
/// and require that the host exited successfully. `setup` runs before the host does.
fn run(
    agent: &dyn Agent,
    verify: &str,
    files: &[(&str, &str)],
    setup: impl FnOnce(&TestRepo),
    script: Script,
    prompt: &str,
) -> Run {
    let binary = agent.info().binary();
    let repo = agent.wired_repo(verify, files);
    setup(&repo);
    let server = agent.start(script);
    let out = agent.run(&binary, &repo, &server, prompt);
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    Run {
        repo,
        server,
        out,
        context,
    }
}

/// The gate's blocks in the model's last request (its last block, with the NOT_PROVEN notice,
/// included): the user side's messages that are blocks or, where the host frames them, each
/// frame's text (Claude Code may send consecutive frames as one message).
fn blocks_seen(agent: &dyn Agent, server: &FakeModel) -> Vec<String> {
    let is_block = |text: &str| text.contains(BLOCK) || text.contains(YIELD);
    if let Feedback::Framed { mark, .. } = agent.feedback() {
        let frames: Vec<String> = server
            .final_user_text()
            .split(mark)
            .skip(1)
            .map(str::to_owned)
            .collect();
        // Each frame holds a block: the host frames nothing else.
        assert!(
            frames.iter().all(|frame| is_block(frame)),
            "{frames:?}: {}",
            server.describe()
        );
        return frames;
    }
    let turns = server.agent_turns();
    turns
        .last()
        .map(|turn| turn.user_texts.clone())
        .unwrap_or_default()
        .into_iter()
        .filter(|text| text.contains(GATE))
        .collect()
}

/// A user message of the model's request is the gate's answer starting with `head`, in the
/// host's frame.
fn assert_feedback(agent: &dyn Agent, feedback: &str, head: &str, context: &str) {
    match agent.feedback() {
        Feedback::Raw => assert!(feedback.starts_with(head), "{context}"),
        Feedback::AfterPreamble => assert!(feedback.contains(head), "{context}"),
        Feedback::Framed { mark, before } => {
            assert!(feedback.contains(mark), "{context}");
            assert!(feedback.contains(&format!("{before}{head}")), "{context}");
        }
    }
}

/// The run's output ends with `expected` as the agent's last answer.
fn assert_final_answer(agent: &dyn Agent, out: &Output, expected: &str, context: &str) {
    let answer = agent.final_answer(out);
    if agent.joins_answers() {
        assert!(
            answer
                .as_deref()
                .is_some_and(|text| text.ends_with(expected)),
            "{answer:?}\n{context}"
        );
    } else {
        assert_eq!(answer.as_deref(), Some(expected), "{context}");
    }
}

/// The working state is proven by `host`'s stop hook, and stock git reads the proof.
fn assert_proven_by(repo: &TestRepo, host: &HostInfo) {
    let state = repo.stock_state_tree().unwrap();
    let note = repo.git(&["notes", "--ref", "prove-it", "show", &state]);
    assert!(note.contains(&format!("tree: {state}")), "{note}");
    assert!(note.contains(&format!("host: {}", host.name)), "{note}");
    repo.prove_it(&["status"]).assert().code(0);
}

/// The working state was not proven (after an always-failing verify.sh).
fn assert_unproven(repo: &TestRepo) {
    let state = repo.stock_state_tree().unwrap();
    assert!(repo.note(&state).is_none(), "{state} was proven");
}

/// The first three blocks are the budget's, in order, each with verify.sh's failing line, and
/// the model saw no other block.
fn assert_three_blocks(run: &Run, blocks: &[String]) {
    let context = &run.context;
    for (n, block) in blocks[..3].iter().enumerate() {
        assert!(
            block.contains(&format!("{BLOCK}{} of 3", n + 1)),
            "{context}"
        );
        assert!(block.contains(BROKEN), "{context}");
    }
    let seen = run.server.final_user_text();
    assert_eq!(seen.matches(BLOCK).count(), 3, "{context}");
    for attempt in 1..=3 {
        let block = format!("{BLOCK}{attempt} of 3");
        assert_eq!(seen.matches(&block).count(), 1, "{context}");
        assert!(
            seen.contains(&format!("{block} for this turn)")),
            "{context}"
        );
    }
}

/// The turn ended unverified by the gate's budget, and the user was told: by a notice the host
/// shows, or, where it shows none, by the agent, asked to quote it in one last block.
fn assert_the_yield_is_told(agent: &dyn Agent, run: &Run, blocks: &[String]) {
    let context = &run.context;
    if agent.shows_notices() {
        let notices = agent.notices(&run.out);
        assert!(
            notices.iter().any(|text| text.starts_with(YIELD)),
            "{notices:?}\n{context}"
        );
    } else {
        let seen = run.server.final_user_text();
        assert_eq!(seen.matches(YIELD).count(), 1, "{context}");
        assert!(blocks[3].contains(YIELD), "{context}");
        assert!(blocks[3].contains(QUOTE_THE_NOTICE), "{context}");
        // The last block is what the model answered last.
        let turns = run.server.agent_turns();
        let last = turns.last().unwrap().last_user_text();
        assert!(last.contains(YIELD), "{context}");
        assert!(last.contains(QUOTE_THE_NOTICE), "{context}");
    }
}

/// The claim ended the turn, the block came back as the model's next user message with
/// verify.sh's failing lines, and the fix is proven and in the ledger.
pub fn failing_change_is_blocked(agent: &dyn Agent) {
    let enable_ledger = |repo: &TestRepo| {
        repo.git(&["config", "prove-it.ledger", "true"]);
    };
    let run = run(
        agent,
        ANSWER_CHECK,
        ANSWER,
        enable_ledger,
        failing_change(),
        "add a greeting",
    );
    let Run {
        repo,
        server,
        out,
        context,
    } = &run;
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    // The fake calls the shell tool the real request offers.
    assert!(offers_tool(&turns[0].body, agent.shell_tool()), "{context}");
    if let Some(empty) = agent.empty_shell_output() {
        // The shell ran: its result is the user side's message in the second turn.
        assert!(turns[1].last_user_text().contains(empty), "{context}");
    }
    let feedback = turns[2].last_user_text();
    assert_feedback(agent, &feedback, &format!("{BLOCK}1 of 3"), context);
    assert!(
        feedback.contains(ANSWER_WRONG),
        "the model's next request carries verify.sh's failing lines: {context}"
    );
    assert_eq!(blocks_seen(agent, server).len(), 1, "{context}");
    assert_eq!(
        server.final_user_text().matches(BLOCK).count(),
        1,
        "{context}"
    );
    assert_final_answer(agent, out, FIXED, context);
    if let Some(shown) = agent.blocks_shown(out) {
        // The user saw the block.
        assert_eq!(shown.len(), 1, "{context}");
        assert!(shown[0].starts_with(BLOCK), "{context}");
    }

    assert_proven_by(repo, agent.info());

    // The block is in the ledger, with the claim where the host gave it by then (Copilot
    // writes its transcript lazily: at the stop the claim is there in some runs and not yet
    // in others). Never another message in its place.
    let ledger = json_stdout(&repo.prove_it(&["ledger", "--json"]).assert().code(0));
    let entries = ledger["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{ledger}");
    assert_eq!(entries[0]["host"], agent.info().name, "{ledger}");
    assert_eq!(entries[0]["exit_code"], 1, "{ledger}");
    let claim = &entries[0]["claim"];
    assert!(claim.is_null() || claim == CLAIM, "{ledger}");
    if let Some(answers) = agent.transcript_answers(repo) {
        // The transcript the host wrote has the shape the adapter reads.
        assert_eq!(answers, [CLAIM, FIXED], "{context}");
    }
}

/// The gate's default budget of 3 blocks ends the turn below any host's own cap, loudly, and
/// nothing is proven.
pub fn an_always_failing_verify_sh_ends_the_turn_unverified(agent: &dyn Agent) {
    let last_block = usize::from(!agent.shows_notices());
    let run = run(
        agent,
        ALWAYS_FAILING,
        &[],
        |_| {},
        always_claiming(),
        "make a change",
    );
    let Run {
        repo,
        server,
        out,
        context,
    } = &run;
    let blocks = blocks_seen(agent, server);
    assert_eq!(blocks.len(), 3 + last_block, "{context}");
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 5 + last_block, "{context}");
    for turn in turns.iter().skip(2) {
        assert!(turn.last_user_text().contains(BROKEN), "{context}");
    }
    assert_three_blocks(&run, &blocks);
    assert_the_yield_is_told(agent, &run, &blocks);
    if let Some(shown) = agent.blocks_shown(out) {
        assert_eq!(shown.len(), 3 + last_block, "{context}");
    }
    assert_final_answer(agent, out, CLAIM, context);
    if let Some(answers) = agent.answers(out) {
        // The stop after the last block ends the turn: nothing more went to the model.
        assert_eq!(answers, vec![CLAIM; 4 + last_block], "{context}");
    }
    if let Some(messages) = agent.user_messages(out) {
        // The host's own record of the session shows the same: the prompt, then the blocks.
        assert_eq!(messages.len(), 1 + blocks.len(), "{context}");
    }
    assert_eq!(last_answers(repo), ["notice"], "{context}");
    assert_unproven(repo);
}

/// After each block the agent runs a command, then claims again: still one turn, whose budget
/// holds (Gemini CLI then says `stop_hook_active: false`, as at a turn's first stop).
pub fn the_budget_holds_when_the_agent_acts_between_blocks(agent: &dyn Agent) {
    let last_block = usize::from(!agent.shows_notices());
    let run = run(
        agent,
        ALWAYS_FAILING,
        &[],
        |_| {},
        acting_between_blocks(),
        "make a change",
    );
    let Run {
        repo,
        server,
        context,
        ..
    } = &run;
    let blocks = blocks_seen(agent, server);
    assert_eq!(blocks.len(), 3 + last_block, "{context}");
    assert_eq!(server.agent_turns().len(), 8 + last_block, "{context}");
    assert_three_blocks(&run, &blocks);
    assert_the_yield_is_told(agent, &run, &blocks);
    assert_unproven(repo);
}

/// A turn that changes nothing is let through silently: verify.sh (MARKS_HOME, which leaves a
/// mark in the HOME the host, the hook and verify.sh inherit) never runs.
pub fn a_read_only_prompt_never_runs_verify_sh(agent: &dyn Agent) {
    let run = run(
        agent,
        MARKS_HOME,
        ANSWER,
        |_| {},
        read_only(),
        "what is in answer.txt?",
    );
    let Run {
        repo,
        server,
        out,
        context,
    } = &run;
    // The model was asked twice (one command that changes nothing, then the answer).
    assert_eq!(server.agent_turns().len(), 2, "{context}");
    assert_eq!(last_answers(repo), ["silent"], "{context}");
    assert!(
        !repo.home().join("verify-ran").exists(),
        "verify.sh ran on a read-only turn: {context}"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "{context}");
    assert!(blocks_seen(agent, server).is_empty(), "{context}");
    if let Some(shown) = agent.blocks_shown(out) {
        assert!(shown.is_empty(), "{context}");
    }
}

/// A change, then the agent runs its own tests for longer than verify.sh takes, then claims.
pub fn change_then_own_tests() -> Script {
    Script::new(
        vec![
            Reply::Shell("echo 4 > answer.txt"),
            // Qwen Code refuses a bare `sleep` in the foreground unless a comment says why.
            Reply::Shell("sleep 4 # intentional-sleep: the agent's own test suite"),
        ],
        Reply::Text(CLAIM),
    )
}

/// The host's after-tool hook wakes the prover, which proves the change while the agent runs
/// its own tests; the stop finds that proof (or joins its run) and runs verify.sh no more.
pub fn the_state_proven_ahead_spares_the_stops_run(agent: &dyn Agent) {
    let verify = "echo run >> \"$HOME/ahead-runs\"\nsleep 1\ntest \"$(cat answer.txt)\" = 4";
    let ahead = |repo: &TestRepo| {
        repo.git(&["config", "prove-it.ahead", "on"]);
        repo.git(&["config", "prove-it.settle", "100"]);
        repo.git(&["config", "prove-it.aheadIdle", "5"]);
    };
    let run = run(
        agent,
        verify,
        &[("answer.txt", "5\n")],
        ahead,
        change_then_own_tests(),
        "fix the answer",
    );
    let Run {
        repo, out, context, ..
    } = &run;
    let runs = std::fs::read_to_string(repo.home().join("ahead-runs")).unwrap_or_default();
    assert_eq!(
        runs.lines().count(),
        1,
        "verify.sh ran once, ahead: {context}"
    );
    // The run was the prover's (its log beside the stop's), not the stop's own.
    let logs: Vec<String> = std::fs::read_dir(repo.path(".git/prove-it/sessions"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| std::path::Path::new(name).extension() == Some("log".as_ref()))
        .collect();
    assert!(
        logs.iter().all(|name| name.ends_with(".ahead.log")) && !logs.is_empty(),
        "the stop ran verify.sh itself ({logs:?}): {context}"
    );
    assert_eq!(last_answers(repo), ["silent"], "{context}");
    assert_final_answer(agent, out, CLAIM, context);
    assert_proven_by(repo, agent.info());
}

/// Deleting verify.sh is refused until it is restored; then the changed state is proven by the
/// verify.sh of the session's start.
pub fn deleting_verify_sh_is_refused_until_it_is_restored(agent: &dyn Agent) {
    let run = run(
        agent,
        "echo fine",
        ANSWER,
        |_| {},
        deleting_verify_sh(),
        "change the answer",
    );
    let Run {
        repo,
        server,
        context,
        ..
    } = &run;
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let refusal = turns[2].last_user_text();
    if let Feedback::Framed { mark, .. } = agent.feedback() {
        assert!(refusal.contains(mark), "{context}");
    }
    assert!(refusal.contains(REFUSED_DELETION), "{context}");
    assert!(repo.path("verify.sh").is_file(), "{context}");
    let state = repo.stock_state_tree().unwrap();
    assert!(repo.note(&state).is_some(), "{context}");
}

/// Headless (`claude -p`, `gemini -p`), the NOT_PROVEN yield was only in the
/// host's transcript, and the run's result was the agent's "All tests pass.", exit 0. Every
/// host's headless run now gives the agent one last block with the yield, asking it to report
/// it: the run's final answer is that report (the model here does as it is asked), and a
/// script checks afterwards with `git prove-it status`, which exits 1.
pub fn a_headless_run_ends_by_reporting_the_unverified_end(agent: &dyn Agent) {
    assert!(
        !agent.shows_notices(),
        "a headless run shows no notice: the yield must be a last block"
    );
    let run = run(
        agent,
        ALWAYS_FAILING,
        &[],
        |_| {},
        reporting_when_told(),
        "make a change",
    );
    let Run {
        repo,
        server,
        out,
        context,
    } = &run;
    let blocks = blocks_seen(agent, server);
    assert_eq!(blocks.len(), 4, "{context}");
    assert_three_blocks(&run, &blocks);
    assert_the_yield_is_told(agent, &run, &blocks);
    assert_eq!(server.agent_turns().len(), 6, "{context}");
    assert_final_answer(agent, out, REPORTED, context);
    if let Some(shown) = agent.blocks_shown(out) {
        // The host's own output shows the last block too.
        assert_eq!(shown.len(), 4, "{shown:?}\n{context}");
        assert!(shown[3].starts_with(YIELD), "{shown:?}\n{context}");
    }
    assert_unproven(repo);
    repo.prove_it(&["status"]).assert().code(1);
}

/// Under `codex exec`, a `PROVE_IT_SKIP=1` session left no trace in stdout
/// or stderr. A skip is now said where the run's reader sees it: told to the agent as a block
/// at the turn's first stop, where the host's output shows no notice, and by the host itself
/// where its output does (Gemini CLI's `Agent execution stopped: ...`). The variable is set in
/// the wired hook's command, as a person's `PROVE_IT_SKIP=1 <host>` gives it to the hook.
pub fn a_skipped_session_is_said_in_the_runs_output(agent: &dyn Agent) {
    let skip = |repo: &TestRepo| skip_in_the_wiring(repo, agent.info().wiring);
    let run = run(agent, MARKS_HOME, &[], skip, skipped(), "make a change");
    assert_the_notice_reaches_the_output(agent, &run, SKIPPED, REPORTED_SKIP);
    let Run { repo, context, .. } = &run;
    assert!(
        !repo.home().join("verify-ran").exists(),
        "verify.sh never runs in a skipped session: {context}"
    );
    assert_unproven(repo);
}

/// A notice from outside the gate's count (`head`: a skip, the gate's own failure) reached the
/// run's final output: told to the agent once, as a last block at the turn's first stop, and
/// the agent's report of it (`reported`, as the model here does as it is asked) is the run's
/// final answer; or, where the hook stops the agent with it, shown by the host itself.
fn assert_the_notice_reaches_the_output(agent: &dyn Agent, run: &Run, head: &str, reported: &str) {
    let Run {
        server,
        out,
        context,
        ..
    } = run;
    let turns = server.agent_turns();
    if agent.stops_with_the_notice() {
        // The change, then the claim; the stop's notice ended the run.
        assert_eq!(turns.len(), 2, "{context}");
        assert!(
            turns.iter().all(|turn| !turn.user_text().contains(head)),
            "{context}"
        );
        let notices = agent.notices(out);
        assert!(
            notices.iter().any(|notice| notice.starts_with(head)),
            "{notices:?}\n{context}"
        );
        return;
    }
    // The change, the claim, then the report of the last block.
    assert_eq!(turns.len(), 3, "{context}");
    let last = turns[2].last_user_text();
    assert_feedback(agent, &last, head, context);
    assert!(last.contains(QUOTE_THE_NOTICE), "{context}");
    assert_eq!(
        server.final_user_text().matches(head).count(),
        1,
        "{context}"
    );
    assert_final_answer(agent, out, reported, context);
}

/// Headless, a proof made through verify.sh edited during the session
/// (BOUNDED_CLAIM_SURVIVES) was a notice no host's output shows: the run ended on the agent's
/// "All tests pass.". It is told to the agent in one last block, with the edit, and the run's
/// final answer is the agent's report of it; the state is proven, only so.
pub fn a_headless_run_ends_by_reporting_a_proof_bounded_by_an_edited_verify_sh(agent: &dyn Agent) {
    let run = run(
        agent,
        "echo fine",
        &[],
        |_| {},
        editing_verify_sh(),
        "make a change",
    );
    let Run {
        repo,
        server,
        out,
        context,
    } = &run;
    let turns = server.agent_turns();
    // The change, the claim, then the report of the last block.
    assert_eq!(turns.len(), 3, "{context}");
    let last = turns[2].last_user_text();
    assert_feedback(agent, &last, BOUNDED, context);
    assert!(
        last.contains("+echo edited"),
        "the edit is shown: {context}"
    );
    assert!(last.contains(QUOTE_THE_NOTICE), "{context}");
    assert_eq!(
        server.final_user_text().matches(BOUNDED).count(),
        1,
        "{context}"
    );
    assert_final_answer(agent, out, REPORTED_BOUNDED, context);
    if let Some(shown) = agent.blocks_shown(out) {
        assert_eq!(shown.len(), 1, "{shown:?}\n{context}");
        assert!(shown[0].starts_with(BOUNDED), "{shown:?}\n{context}");
    }
    let state = repo.stock_state_tree().unwrap();
    let note = repo.note(&state).unwrap_or_default();
    assert!(
        note.contains("outcome: BOUNDED_CLAIM_SURVIVES"),
        "{note}\n{context}"
    );
    assert!(
        note.contains(&format!("host: {}", agent.info().name)),
        "{note}\n{context}"
    );
}

/// Headless, the gate's own failure (here the agent's command leaves the proofs ref on a blob,
/// which no lookup can read) was a notice no host's output shows. It reaches the run's output
/// as a skip does: told to the agent at the turn's first stop, or shown by the host where the
/// hook stops the agent with it. Nothing runs, and the state is not proven.
pub fn a_headless_run_ends_by_reporting_that_the_gate_could_not_check(agent: &dyn Agent) {
    let run = run(
        agent,
        MARKS_HOME,
        &[],
        |_| {},
        breaking_the_proofs_ref(),
        "make a change",
    );
    assert_the_notice_reaches_the_output(agent, &run, COULD_NOT_CHECK, REPORTED_COULD_NOT_CHECK);
    let Run { repo, context, .. } = &run;
    let said = run.server.final_user_text() + &agent.notices(&run.out).join("\n");
    assert!(
        said.contains("NOT_PROVEN: this turn ended unverified."),
        "{context}"
    );
    assert!(
        !repo.home().join("verify-ran").exists(),
        "verify.sh never ran: {context}"
    );
    repo.prove_it(&["status"]).assert().failure();
}

/// A host that reads a project's hooks only in the directory it is started
/// in (Gemini CLI, and Claude Code too) ran no gate when started in `src/`, while `doctor`, even
/// run from `src/`, said the hooks were wired. Each host is started in `src/` with a failing
/// change: one that reads the root's hooks blocks it; one that does not lets it through, as
/// ADAPTERS.md records, and `doctor` run there says so (a failure), until the gate is wired in
/// the host's user-level configuration, which then gates the same run.
pub fn a_session_started_in_a_subdirectory_is_gated_or_doctor_says_it_is_not(agent: &dyn Agent) {
    let binary = agent.info().binary();
    let files = [("answer.txt", "4\n"), ("src/lib.txt", "code\n")];
    let repo = agent.wired_repo(ANSWER_CHECK, &files);
    let src = repo.path("src");
    // The shell runs in src/: the change (a new file, each run its own, and answer.txt broken)
    // and the fix are the root's.
    let script = |second: bool| {
        let change = if second {
            "echo hello > ../greeting-2.txt && echo 5 > ../answer.txt"
        } else {
            "echo hello > ../greeting-1.txt && echo 5 > ../answer.txt"
        };
        Script::new(
            vec![
                Reply::Shell(change),
                Reply::Text(CLAIM),
                Reply::Shell("echo 4 > ../answer.txt"),
            ],
            Reply::Text(FIXED),
        )
    };
    let gated = |repo: &TestRepo, second: bool| {
        let server = agent.start(script(second));
        let out = agent.run_in(&binary, repo, &src, &server, "add a greeting");
        let context = describe(&out, &server);
        assert!(out.status.success(), "{context}");
        let blocked = server.final_user_text().contains(ANSWER_WRONG);
        (blocked, server.agent_turns().len(), context)
    };
    let doctor_in_src = |repo: &TestRepo, env: &[(&str, std::path::PathBuf)]| {
        let mut cmd = repo.command(assert_cmd::cargo::cargo_bin("git-prove-it"));
        cmd.arg("doctor").current_dir(&src);
        for (name, value) in env {
            cmd.env(name, value);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (blocked, turns, context) = gated(&repo, false);
    if agent.reads_project_hooks_below_root() {
        assert!(blocked, "{context}");
        assert_eq!(turns, 4, "{context}");
        assert_proven_by(&repo, agent.info());
        return;
    }
    // The gap: no hook ran at all, and the unverified change is not proven.
    assert!(!blocked, "{context}");
    assert_eq!(turns, 2, "{context}");
    assert!(last_answers(&repo).is_empty(), "{context}");
    assert_eq!(
        std::fs::read_to_string(repo.path("answer.txt")).unwrap(),
        "5\n"
    );
    assert_unproven(&repo);
    let (code, report) = doctor_in_src(&repo, &[]);
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains(
            "only in the directory it is started in: started here, in src/, it runs no gate"
        ),
        "{report}"
    );
    // Wired for every folder: the same run from src/ is gated, and doctor says so.
    repo.git(&["checkout", "--", "answer.txt"]);
    let env = agent.wire_for_every_folder(&repo);
    let (code, report) = doctor_in_src(&repo, &env);
    assert!(
        report.contains("so a session started in any subdirectory is gated"),
        "{code:?}: {report}"
    );
    let (blocked, turns, context) = gated(&repo, true);
    assert!(blocked, "{context}");
    assert_eq!(turns, 4, "{context}");
    assert_proven_by(&repo, agent.info());
}

/// Gemini CLI sends no turn id, and a person's next prompt that starts like
/// the previous one (the same prompt, answered with the same first line) was named the same
/// turn: after a yield, the resumed session's next turn went straight to NOT_PROVEN with its
/// budget spent, verify.sh never run. A new prompt is a new turn on every host: the resumed
/// session, asked the same again, is given the whole budget again.
pub fn a_resumed_session_asked_the_same_again_after_a_yield_gets_its_whole_budget(
    agent: &dyn Agent,
) {
    let binary = agent.info().binary();
    let repo = agent.wired_repo(ALWAYS_FAILING, &[]);
    let runs = repo.home().join("verify-runs");
    repo.verify_script(&format!(
        "echo run >> '{}'\n{ALWAYS_FAILING}",
        runs.display()
    ));
    repo.commit_all("verify.sh counts its runs");
    let count = || std::fs::read_to_string(&runs).map_or(0, |text| text.lines().count());
    let prompt = "make a change";
    let server = agent.start(always_claiming());
    let out = agent.run(&binary, &repo, &server, prompt);
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    let first = Run {
        repo,
        server,
        out,
        context,
    };
    let blocks = blocks_seen(agent, &first.server);
    assert_three_blocks(&first, &blocks);
    assert_the_yield_is_told(agent, &first, &blocks);
    let first_turn = count();
    assert!(first_turn >= 4, "{}", first.context);

    let server = agent.start(always_claiming());
    let out = agent
        .run_resumed(&binary, &first.repo, &server, prompt)
        .expect("the host module says how to resume a session");
    let context = describe(&out, &server);
    assert!(out.status.success(), "{context}");
    // The same session, resumed: the model is shown the first run's conversation, blocks
    // included where the host keeps them, and the gate kept one turn state, that session's.
    let turns = server.agent_turns();
    let history = turns
        .first()
        .map(super::super::fake_model::Request::user_text)
        .unwrap_or_default();
    if agent.resumes_with_blocks() {
        assert_eq!(history.matches(BLOCK).count(), 3, "{context}");
    } else {
        assert_eq!(history.matches(prompt).count(), 2, "{context}");
    }
    assert_eq!(last_answers(&first.repo), ["notice"], "{context}");
    // This turn's own blocks: three, then the last block that tells its yield.
    let seen = server.final_user_text();
    let new = |text: &str| seen.matches(text).count() - history.matches(text).count();
    for attempt in 1..=3 {
        assert_eq!(
            new(&format!("{BLOCK}{attempt} of 3 for this turn)")),
            1,
            "{context}"
        );
    }
    assert_eq!(new(BLOCK), 3, "{context}");
    if !agent.shows_notices() {
        assert_eq!(new(QUOTE_THE_NOTICE), 1, "{context}");
    }
    // At each of the new turn's stops, as in the first turn. How many stops a turn gets past
    // its budget varies by a run with the host's timing (4 or 5 runs in either turn), so the
    // new turn is held to the first turn's least, never to its exact count.
    assert!(
        count() - first_turn >= 4,
        "verify.sh ran at each stop of the new turn, as of the first ({first_turn} then {}): {context}",
        count() - first_turn
    );
    assert_final_answer(agent, &out, CLAIM, &context);
    assert_unproven(&first.repo);
}

/// With the real host, a repository proven by the checks of its prove-it.toml, a
/// change in one package. The stop runs that package's check only: its failure blocks with its
/// own line, the fix passes and is recorded on the check's input tree, and the other check,
/// proven before the session, never runs.
pub fn a_monorepos_failing_check_is_blocked_and_its_other_checks_are_not_run(agent: &dyn Agent) {
    let checks = |repo: &TestRepo| {
        repo.write(
            "prove-it.toml",
            "[checks.answer]\nrun = \"answer/verify.sh\"\ninputs = [\"answer\"]\n\n\
             [checks.docs]\nrun = \"docs/verify.sh\"\ninputs = [\"docs\"]\n",
        );
        repo.write("answer/answer.txt", "4\n");
        repo.write("answer/verify.sh", &format!("#!/bin/sh\n{ANSWER_CHECK}\n"));
        repo.chmod("answer/verify.sh", 0o755);
        repo.write("docs/index.md", "docs\n");
        repo.write(
            "docs/verify.sh",
            "#!/bin/sh\necho run >> \"$HOME/docs-runs\"\nexit 0\n",
        );
        repo.chmod("docs/verify.sh", 0o755);
        repo.remove("verify.sh");
        repo.commit_all("checks with inputs");
        repo.prove_it(&["run"]).assert().code(0);
    };
    let script = Script::new(
        vec![
            Reply::Shell("echo 5 > answer/answer.txt"),
            Reply::Text(CLAIM),
            // A state of its own, which the check proves in the session.
            Reply::Shell("echo 4 > answer/answer.txt && echo fixed > answer/fixed.txt"),
        ],
        Reply::Text(FIXED),
    );
    let run = run(agent, "exit 0", &[], checks, script, "fix the answer");
    let Run {
        repo,
        server,
        out,
        context,
    } = &run;
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let feedback = turns[2].last_user_text();
    assert_feedback(agent, &feedback, &format!("{BLOCK}1 of 3"), context);
    assert!(feedback.contains("check answer failed"), "{context}");
    assert!(feedback.contains(ANSWER_WRONG), "{context}");
    assert_final_answer(agent, out, FIXED, context);
    let input_tree = crate::checks::stock_input_tree(repo, &["answer", "prove-it.toml"]);
    let note = repo.git(&["notes", "--ref", "prove-it", "show", &input_tree]);
    assert!(note.contains("check: answer\n"), "{note}");
    assert!(
        note.contains(&format!("host: {}", agent.info().name)),
        "{note}"
    );
    let docs_runs = std::fs::read_to_string(repo.home().join("docs-runs")).unwrap();
    assert_eq!(docs_runs.lines().count(), 1, "docs ran again: {context}");
}

/// The repository was already broken, and `git prove-it run` recorded it, before the
/// session started. The agent's unrelated change is blocked with the failure's lines and told
/// that the failure predates the session; it still has to fix it, and the fix is proven.
pub fn a_failure_from_before_the_session_is_said_to_predate_it_and_the_fix_is_proven(
    agent: &dyn Agent,
) {
    let broken_before = |repo: &TestRepo| {
        repo.write("answer.txt", "5\n");
        repo.commit_all("broken before the session");
        repo.prove_it(&["run"]).assert().code(1);
    };
    let script = Script::new(
        vec![
            Reply::Shell("echo hello > greeting.txt"),
            Reply::Text(CLAIM),
            Reply::Shell("echo 4 > answer.txt"),
        ],
        Reply::Text(FIXED),
    );
    let run = run(
        agent,
        ANSWER_CHECK,
        ANSWER,
        broken_before,
        script,
        "say hello",
    );
    let Run {
        repo,
        server,
        out,
        context,
    } = &run;
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 4, "{context}");
    let feedback = turns[2].last_user_text();
    assert_feedback(agent, &feedback, &format!("{BLOCK}1 of 3"), context);
    assert!(feedback.contains(ANSWER_WRONG), "{context}");
    assert!(
        feedback.contains(
            "This failure predates the session: verify.sh failed with these same last lines"
        ),
        "{context}"
    );
    assert_final_answer(agent, out, FIXED, context);
    assert_proven_by(repo, agent.info());
}

/// A stand-in test runner: every `tests/test_*.sh` is a test that passes when it exits 0, and
/// the run writes them as JUnit XML into `$PROVE_IT_REPORTS`, as pytest or nextest would.
pub const TEST_RUNNER: &str = "failed=0\ncases=''\n\
    for t in tests/test_*.sh; do\n\
      name=$(basename \"$t\" .sh)\n\
      if sh \"$t\"; then\n\
        cases=\"$cases<testcase classname=\\\"tests\\\" name=\\\"$name\\\"/>\"\n\
      else\n\
        cases=\"$cases<testcase classname=\\\"tests\\\" name=\\\"$name\\\"><failure/></testcase>\"\n\
        echo \"FAILED tests::$name\"\n\
        failed=1\n\
      fi\n\
    done\n\
    if [ -n \"${PROVE_IT_REPORTS:-}\" ]; then\n\
      printf '<testsuite name=\"tests\">%s</testsuite>\\n' \"$cases\" > \"$PROVE_IT_REPORTS/junit.xml\"\n\
    fi\n\
    exit $failed";
/// The tests TEST_RUNNER runs: answer.txt must say 4, and one that always passes.
pub const TESTED: &[(&str, &str)] = &[
    ("answer.txt", "4\n"),
    ("tests/test_answer.sh", "test \"$(cat answer.txt)\" = 4\n"),
    ("tests/test_greeting.sh", "true\n"),
];
/// What a model that does as the notice asks answers, once it deleted the failing test.
pub const REPORTED_WEAKENED: &str = "Not done: prove-it says BOUNDED_CLAIM_SURVIVES: verify.sh \
    passes only because I deleted the failing test (passing tests gone: tests::test_answer).";

/// The session's baseline: the proof of the state it starts from, with its tests by name.
fn prove_the_start(repo: &TestRepo) {
    repo.prove_it(&["run"]).assert().code(0);
}

/// The commonest fake green: the agent breaks a test, is sent back, and deletes the failing
/// test instead of fixing the code. verify.sh passes, and the stop's answer, which reaches the
/// model (told as a last block where the host shows no notice), names the test gone; the
/// model's report of it ends the run, and the proof records it.
pub fn deleting_a_failing_test_is_named_to_the_agent(agent: &dyn Agent) {
    let script = Script::new(
        vec![
            Reply::Shell("echo 5 > answer.txt"),
            Reply::Text(CLAIM),
            Reply::Shell("rm tests/test_answer.sh"),
            Reply::Text(CLAIM),
        ],
        Reply::Text(REPORTED_WEAKENED),
    );
    let run = run(
        agent,
        TEST_RUNNER,
        TESTED,
        prove_the_start,
        script,
        "make answer.txt say 5",
    );
    let Run {
        repo,
        server,
        out,
        context,
    } = &run;
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 5, "{context}");
    let block = turns[2].last_user_text();
    assert_feedback(agent, &block, &format!("{BLOCK}1 of 3"), context);
    assert!(block.contains("FAILED tests::test_answer"), "{context}");
    let told = turns[4].last_user_text();
    assert!(told.contains("BOUNDED_CLAIM_SURVIVES"), "{context}");
    assert!(
        told.contains("passing tests gone: tests::test_answer"),
        "{context}"
    );
    assert!(
        told.contains("fewer passing tests: 2 before, 1 now"),
        "{context}"
    );
    if !agent.shows_notices() {
        assert!(told.contains(QUOTE_THE_NOTICE), "{context}");
    }
    assert_final_answer(agent, out, REPORTED_WEAKENED, context);
    assert_proven_by(repo, agent.info());
    let state = repo.stock_state_tree().unwrap();
    let note = repo.note(&state).unwrap();
    assert!(note.contains("outcome: BOUNDED_CLAIM_SURVIVES"), "{note}");
    assert!(
        note.contains("tests-weakened: passing tests gone: tests::test_answer\n"),
        "{note}"
    );
}

/// Writing a new test costs nothing: the honest session's stop is silent, and its proof is
/// plain, with one more test than the start's.
pub fn adding_a_test_is_never_reported(agent: &dyn Agent) {
    let script = Script::new(
        vec![Reply::Shell(
            "echo 'test \"$(cat answer.txt)\" -gt 3' > tests/test_positive.sh",
        )],
        Reply::Text(CLAIM),
    );
    let run = run(
        agent,
        TEST_RUNNER,
        TESTED,
        prove_the_start,
        script,
        "add a test",
    );
    let Run {
        repo,
        server,
        out,
        context,
    } = &run;
    assert_eq!(server.agent_turns().len(), 2, "{context}");
    assert!(!server.final_user_text().contains(GATE), "{context}");
    assert_final_answer(agent, out, CLAIM, context);
    let state = repo.stock_state_tree().unwrap();
    let note = repo.note(&state).expect("the honest state is proven");
    assert!(note.contains("outcome: PROVEN"), "{note}");
    assert!(
        note.contains("tests: passed=3 failed=0 skipped=0 source=junit"),
        "{note}"
    );
    assert!(!note.contains("tests-weakened"), "{note}");
}

/// Under `prove-it.weakening = block`, the deleted test sends the agent back, naming it; the
/// agent restores it and fixes the code, and the turn ends silently on the proven start.
pub fn under_block_a_deleted_test_sends_the_agent_back(agent: &dyn Agent) {
    let script = Script::new(
        vec![
            Reply::Shell("echo 5 > answer.txt"),
            Reply::Text(CLAIM),
            Reply::Shell("rm tests/test_answer.sh"),
            Reply::Text(CLAIM),
            Reply::Shell("git checkout -- tests/test_answer.sh && echo 4 > answer.txt"),
        ],
        Reply::Text(FIXED),
    );
    let blocking = |repo: &TestRepo| {
        repo.git(&["config", "prove-it.weakening", "block"]);
        prove_the_start(repo);
    };
    let run = run(
        agent,
        TEST_RUNNER,
        TESTED,
        blocking,
        script,
        "make answer.txt say 5",
    );
    let Run {
        server,
        out,
        context,
        ..
    } = &run;
    let turns = server.agent_turns();
    assert_eq!(turns.len(), 6, "{context}");
    let block = turns[4].last_user_text();
    assert_feedback(agent, &block, &format!("{BLOCK}2 of 3"), context);
    assert!(block.contains("prove-it.weakening = block"), "{context}");
    assert!(
        block.contains("passing tests gone: tests::test_answer"),
        "{context}"
    );
    assert_final_answer(agent, out, FIXED, context);
}
