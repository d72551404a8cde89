//! The first failing commit of a line of history, by binary search over what is known of each
//! commit (proven, failed, untestable, unknown): which commit to run next, or the answer. Pure:
//! `cli/bisect.rs` reads the records, runs the commits and says what was found.

/// What is known of one commit of the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    Unknown,
    Good,
    Bad,
    Untestable,
}

/// What the search does next.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Run this commit.
    Probe(usize),
    /// Nothing: it has its answer.
    Done(Answer),
}

/// Where the search ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// At the first failing commit: the one before it passes (or is GOOD).
    Found(usize),
    /// At one of these: the failing commit last, the untestable ones before it first.
    Ambiguous(Vec<usize>),
}

/// The search's bounds in `known` (oldest first): the first failing commit, and the last
/// passing one before it (`None`: GOOD). There must be a failing one.
pub fn bounds(known: &[Known]) -> (Option<usize>, usize) {
    let hi = known
        .iter()
        .position(|k| *k == Known::Bad)
        .expect("BAD is known to fail before the search");
    let lo = known[..hi].iter().rposition(|k| *k == Known::Good);
    (lo, hi)
}

/// The next step of the binary search over `known`: the commit left to run nearest the middle
/// of those that may be the first failing one, or the answer when none is left.
pub fn next(known: &[Known]) -> Next {
    let (lo, hi) = bounds(known);
    let start = lo.map_or(0, |lo| lo + 1);
    // Probing the middle of start..=hi leaves at most half of them, whichever way it goes.
    let middle = (start + hi) / 2;
    let probe = (start..hi)
        .filter(|&at| known[at] == Known::Unknown)
        .min_by_key(|&at| (at.abs_diff(middle), at));
    match probe {
        Some(at) => Next::Probe(at),
        None if start == hi => Next::Done(Answer::Found(hi)),
        None => Next::Done(Answer::Ambiguous((start..=hi).collect())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Known::{Bad, Good, Unknown, Untestable};

    /// `n` unknown commits and BAD, failing.
    fn line(n: usize) -> Vec<Known> {
        let mut known = vec![Unknown; n];
        known.push(Bad);
        known
    }

    #[test]
    fn the_first_probe_is_the_middle() {
        assert_eq!(next(&line(198)), Next::Probe(99));
        assert_eq!(next(&line(1)), Next::Probe(0));
    }

    #[test]
    fn a_failing_commit_after_a_passing_one_is_the_answer() {
        assert_eq!(next(&[Bad]), Next::Done(Answer::Found(0)));
        assert_eq!(next(&[Good, Bad]), Next::Done(Answer::Found(1)));
        assert_eq!(
            next(&[Good, Good, Bad, Unknown, Bad]),
            Next::Done(Answer::Found(2))
        );
    }

    #[test]
    fn records_narrow_the_search_before_anything_runs() {
        let mut known = line(20);
        known[10] = Good;
        known[15] = Bad;
        // A pass on record after the first failure on record says nothing of the first one.
        known[17] = Good;
        assert_eq!(bounds(&known), (Some(10), 15));
        assert_eq!(next(&known), Next::Probe(13));
    }

    #[test]
    fn an_untestable_middle_is_skipped_for_a_neighbour() {
        let mut known = line(9);
        known[4] = Untestable;
        assert_eq!(next(&known), Next::Probe(3));
        known[3] = Untestable;
        assert_eq!(next(&known), Next::Probe(5));
    }

    #[test]
    fn untestable_commits_before_the_failing_one_leave_candidates() {
        assert_eq!(
            next(&[Good, Untestable, Untestable, Bad]),
            Next::Done(Answer::Ambiguous(vec![1, 2, 3]))
        );
        assert_eq!(
            next(&[Untestable, Bad]),
            Next::Done(Answer::Ambiguous(vec![0, 1]))
        );
        // Untestable commits before the last pass do not matter.
        assert_eq!(next(&[Untestable, Good, Bad]), Next::Done(Answer::Found(2)));
    }

    /// Run the search on a line whose commits fail from `first` on, where those in `skipped`
    /// cannot be tested.
    fn search_with_skips(n: usize, first: usize, skipped: &[usize]) -> Answer {
        let mut known = line(n);
        loop {
            match next(&known) {
                Next::Probe(at) if skipped.contains(&at) => known[at] = Untestable,
                Next::Probe(at) => known[at] = if at >= first { Bad } else { Good },
                Next::Done(answer) => return answer,
            }
        }
    }

    #[test]
    fn skipped_commits_hide_the_first_failure_only_when_they_sit_just_before_it() {
        for n in 1..12_usize {
            for first in 0..=n {
                for skip_from in 0..n {
                    for skip_len in 1..=3 {
                        let skipped: Vec<usize> = (skip_from..(skip_from + skip_len).min(n))
                            .filter(|&at| at != n)
                            .collect();
                        let answer = search_with_skips(n, first, &skipped);
                        // What git bisect answers: the first failing commit, unless the commits
                        // just before it cannot be tested; then any of those, or it.
                        let mut start = first;
                        while start > 0 && skipped.contains(&(start - 1)) {
                            start -= 1;
                        }
                        let expected = if skipped.contains(&first) || start < first {
                            let end = (first..=n).find(|at| !skipped.contains(at)).unwrap();
                            Answer::Ambiguous((start..=end).collect())
                        } else {
                            Answer::Found(first)
                        };
                        assert_eq!(answer, expected, "n {n} first {first} skipped {skipped:?}");
                    }
                }
            }
        }
    }

    /// Run the search on a line whose commits fail from `first` on.
    fn probes(n: usize, first: usize) -> (usize, usize) {
        let mut known = line(n);
        let mut count = 0;
        loop {
            match next(&known) {
                Next::Probe(at) => {
                    count += 1;
                    known[at] = if at >= first { Bad } else { Good };
                }
                Next::Done(Answer::Found(at)) => return (at, count),
                Next::Done(Answer::Ambiguous(candidates)) => panic!("{candidates:?}"),
            }
        }
    }

    #[test]
    fn every_first_failure_is_found_in_at_most_log2_probes() {
        for n in 0..70_usize {
            let bound = (n + 1).next_power_of_two().trailing_zeros() as usize;
            for first in 0..=n {
                let (found, count) = probes(n, first);
                assert_eq!(found, first, "n {n}");
                assert!(count <= bound, "n {n} first {first}: {count} > {bound}");
            }
        }
        assert_eq!(probes(198, 135), (135, 8));
    }
}
