#!/bin/sh
# Check that the commits CI is asked about were proven: fetch the proofs, pick the commits, run
# `git prove-it check`. POSIX sh, git and git-prove-it only (no jq, no python: minimal runners and
# CI images lack them). The GitHub Action (action.yml) runs it; any other CI can too:
#
#   sh ci/prove-it-check.sh [CHECK-OPTION...]     # e.g. --strict, --format junit
#
# Which commits, from the environment:
#   PROVE_IT_RANGE    empty: the default below; `all`: every commit of the default range (or of
#                     HEAD's history when there is none); anything else: revisions or ranges,
#                     separated by spaces, every commit of which is checked.
#   PROVE_IT_HEAD     the commit under review; on a pull request its head commit, never the merge
#                     commit CI builds, whose tree nobody proved [default: HEAD].
#   PROVE_IT_BASE     where the commits under review start (a pull request's base, a push's
#                     previous tip): with it, the default is every commit of BASE..HEAD.
#   PROVE_IT_REMOTE   where the proofs are fetched from [default: origin].
# Exit status: check's own (0 proven, 1 not, 2 usage or repository error).
set -eu

remote=${PROVE_IT_REMOTE:-origin}
head=${PROVE_IT_HEAD:-}
base=${PROVE_IT_BASE:-}
# A push that creates a branch has no previous tip: git says so with an all-zero id.
case $base in *[!0]*) ;; *) base= ;; esac
[ -n "$head" ] || head=$(git rev-parse HEAD)

# A shallow checkout (the default of actions/checkout) may lack the commit under review: a pull
# request's head is a parent of the merge commit checked out. Fetch what is missing by id.
have() { git cat-file -e "$1^{commit}" 2>/dev/null; }
if ! have "$head"; then
  git fetch --quiet --no-tags "$remote" "$head"
fi

if [ "${PROVE_IT_RANGE:-}" = all ] || [ -n "$base" ]; then
  if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    git fetch --quiet --no-tags --unshallow "$remote" "$head" ${base:+"$base"}
  elif [ -n "$base" ] && ! have "$base"; then
    git fetch --quiet --no-tags "$remote" "$base"
  fi
fi

# Proofs are notes, which clones do not fetch. A remote with no proofs at all has no such ref:
# that is no error here, check then lists every commit as unproven.
# (ls-remote --exit-code exits 2 for a missing ref; anything else is an unreachable remote.)
if git ls-remote --exit-code "$remote" refs/notes/prove-it >/dev/null; then
  git fetch --quiet --no-tags "$remote" '+refs/notes/prove-it:refs/notes/prove-it'
elif [ $? -ne 2 ]; then
  echo "prove-it: could not read the proofs of $remote" >&2
  exit 2
else
  echo "prove-it: $remote has no proofs (refs/notes/prove-it) yet" >&2
  echo "hint: prove a commit with 'git prove-it run' and push its proof with 'git prove-it sync'" >&2
fi

case ${PROVE_IT_RANGE:-} in
  '')
    if [ -n "$base" ]; then set -- "$@" --all "$base..$head"; else set -- "$@" "$head"; fi
    ;;
  all)
    if [ -n "$base" ]; then set -- "$@" --all "$base..$head"; else set -- "$@" --all "$head"; fi
    ;;
  *)
    # Word splitting is wanted: the input is a list of revisions.
    # shellcheck disable=SC2086
    set -- "$@" --all $PROVE_IT_RANGE
    ;;
esac
exec git prove-it check "$@"
