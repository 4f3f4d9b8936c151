#!/usr/bin/env bash
# The mutation check: applies each small bug of a fixed list (tools/mutants/
# *.mutant) to a scratch git worktree of a commit, builds, runs the Bazel test
# targets the mutant names, and reports whether the suite noticed:
#   KILLED    a listed target failed (or timed out): the suite caught the bug
#   SURVIVED  every listed target passed with the bug in place
#   INVALID   the mutant could not be tried: its original text no longer occurs
#             exactly once (the list has rotted), or the mutated code does not
#             build (a mutant must compile to test anything)
# Exits 0 only when every mutant tried was KILLED. docs/contributing.md says how
# to add a mutant; the last full run's table is tools/mutants/last-run.txt.
#
# Usage: tools/mutants.sh [options] [mutant names...]   (default: all)
#   -c, --commit REV   mutate REV instead of HEAD (uncommitted changes are
#                      never part of the scratch tree)
#   -o, --out FILE     also write the table to FILE
#   --no-baseline      skip the unmutated run of the targets (by default they
#                      must all pass before any mutant is tried)
#   --check            only check that every mutant's original text matches
#                      REV (no build): a quick way to see the list has not rotted
#   --list             print the mutants' names and targets
#   --keep-server      leave the scratch tree's Bazel server running
# The scratch tree and its Bazel output base live under
# ${PTO_MUTANTS_SCRATCH:-${TMPDIR:-/tmp}/pto-mutants-$USER} and are kept between
# runs, so each mutant rebuilds incrementally; ~/.bazelrc's --disk_cache is
# shared as usual (action keys include every source's contents, so a mutated
# build cannot stand in for a clean one) and test results are never cached
# (--nocache_test_results). Logs: <scratch>/logs/<mutant>.log.
set -euo pipefail

ROOT="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
MUTANTS="$ROOT/tools/mutants"
HELPER=(python3 "$MUTANTS/mutant.py")
SCRATCH="${PTO_MUTANTS_SCRATCH:-${TMPDIR:-/tmp}/pto-mutants-${USER:-$(id -u)}}"
TREE="$SCRATCH/tree"
OUTPUT_BASE="$SCRATCH/output_base"
LOGS="$SCRATCH/logs"

rev=HEAD out="" baseline=1 mode=run keep_server=0 names=()
while [ $# -gt 0 ]; do
  case "$1" in
    -c|--commit) rev="$2"; shift 2 ;;
    -o|--out) out="$2"; shift 2 ;;
    --no-baseline) baseline=0; shift ;;
    --check) mode=check; shift ;;
    --list) mode=list; shift ;;
    --keep-server) keep_server=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "mutants: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done

if [ ${#names[@]} -eq 0 ]; then
  for f in "$MUTANTS"/*.mutant; do names+=("$(basename "$f" .mutant)"); done
fi
for n in "${names[@]}"; do
  if [ ! -f "$MUTANTS/$n.mutant" ]; then
    echo "mutants: no mutant '$n' (tools/mutants/$n.mutant)" >&2
    exit 2
  fi
  # Parses it: a malformed file stops the run before anything is built.
  "${HELPER[@]}" targets "$MUTANTS/$n.mutant" >/dev/null
done

if [ "$mode" = list ]; then
  for n in "${names[@]}"; do
    printf '%-34s %s\n' "$n" "$("${HELPER[@]}" targets "$MUTANTS/$n.mutant" | cut -f1 | tr '\n' ' ')"
  done
  exit 0
fi

commit="$(git -C "$ROOT" rev-parse --verify "$rev^{commit}")"
mkdir -p "$SCRATCH" "$LOGS"
# One run at a time per scratch directory (they share its tree).
exec 9>"$SCRATCH/lock"
if ! flock -n 9; then
  echo "mutants: another run is using $SCRATCH (set PTO_MUTANTS_SCRATCH for a second one)" >&2
  exit 2
fi
if ! git -C "$TREE" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$ROOT" worktree prune
  git -C "$ROOT" worktree add -q --detach "$TREE" "$commit"
fi
git -C "$TREE" checkout -q -f --detach "$commit"
git -C "$TREE" reset -q --hard

revert() { git -C "$TREE" checkout -q -f -- . ; }
bazel_scratch() { (cd "$TREE" && bazel --output_base="$OUTPUT_BASE" "$@"); }
finish() {
  revert || true
  if [ "$keep_server" = 0 ] && [ "$mode" = run ]; then
    bazel_scratch shutdown >/dev/null 2>&1 || true
  fi
}
trap finish EXIT

if [ "$mode" = check ]; then
  bad=0
  for n in "${names[@]}"; do
    if "${HELPER[@]}" check "$MUTANTS/$n.mutant" "$TREE"; then
      printf '%-34s matches %s\n' "$n" "${commit:0:12}"
    else
      bad=$((bad + 1))
    fi
  done
  [ "$bad" = 0 ]
  exit
fi

TEST_FLAGS=(--nocache_test_results --test_output=errors --keep_going)

# Runs the targets (lines TARGET<TAB>FILTER on stdin) and appends Bazel's
# output to $1. Sets run_rc (0 passed, 3 a test failed, else Bazel's code of
# the first other failure), failed_targets and passed_targets.
run_targets() {
  local log="$1" plain=() line target filter rc
  run_rc=0 failed_targets="" passed_targets=""
  local -a filtered=()
  while IFS=$'\t' read -r target filter; do
    if [ -z "$filter" ]; then plain+=("$target"); else filtered+=("$target"$'\t'"$filter"); fi
  done
  local -a runs=()
  [ ${#plain[@]} -gt 0 ] && runs+=("${plain[*]}"$'\t')
  for line in "${filtered[@]+"${filtered[@]}"}"; do runs+=("$line"); done
  for line in "${runs[@]}"; do
    IFS=$'\t' read -r target filter <<<"$line"
    local -a extra=()
    [ -n "$filter" ] && extra=("--test_filter=$filter")
    set +e
    # shellcheck disable=SC2086  # target is a space-separated list here
    bazel_scratch test "${TEST_FLAGS[@]}" "${extra[@]+"${extra[@]}"}" $target >>"$log" 2>&1
    rc=$?
    set -e
    if [ "$rc" = 3 ]; then
      [ "$run_rc" = 0 ] && run_rc=3
    elif [ "$rc" != 0 ] && { [ "$run_rc" = 0 ] || [ "$run_rc" = 3 ]; }; then
      run_rc=$rc
    fi
  done
  failed_targets="$(grep -E '^//[^ ]+ +(FAILED|TIMEOUT|INCOMPLETE)' "$log" |
                    awk '{print $1}' | sort -u | tr '\n' ' ' || true)"
  passed_targets="$(grep -E '^//[^ ]+ +PASSED' "$log" |
                    awk '{print $1}' | sort -u | tr '\n' ' ' || true)"
}

targets_of() { "${HELPER[@]}" targets "$MUTANTS/$1.mutant"; }

if [ "$baseline" = 1 ]; then
  log="$LOGS/baseline.log"
  : >"$log"
  all="$(for n in "${names[@]}"; do targets_of "$n"; done | sort -u)"
  echo "mutants: baseline run of $(echo "$all" | wc -l) targets at ${commit:0:12} (log: $log)" >&2
  start=$SECONDS
  run_targets "$log" <<<"$all"
  if [ "$run_rc" != 0 ]; then
    echo "mutants: the unmutated targets do not all pass (bazel exit $run_rc; failed: ${failed_targets:-none listed}); see $log" >&2
    exit 2
  fi
  echo "mutants: baseline passed in $((SECONDS - start)) s" >&2
fi

rows=() survived=0 invalid=0 killed=0 total_start=$SECONDS
for n in "${names[@]}"; do
  log="$LOGS/$n.log"
  : >"$log"
  start=$SECONDS
  revert
  echo "mutants: $n ..." >&2
  if ! "${HELPER[@]}" apply "$MUTANTS/$n.mutant" "$TREE" >>"$log" 2>&1; then
    status=INVALID detail="stale: $(tail -n 1 "$log")"
    echo "mutants: $n: the original text no longer matches (fix the mutant): $(tail -n 1 "$log")" >&2
  else
    targets="$(targets_of "$n")"
    set +e
    # shellcheck disable=SC2046
    bazel_scratch build --keep_going $(cut -f1 <<<"$targets") >>"$log" 2>&1
    rc=$?
    set -e
    if [ "$rc" != 0 ]; then
      status=INVALID detail="does not build (bazel exit $rc)"
    else
      run_targets "$log" <<<"$targets"
      if [ "$run_rc" = 0 ]; then
        status=SURVIVED detail="all passed: $(cut -f1 <<<"$targets" | tr '\n' ' ')"
      elif [ "$run_rc" = 3 ]; then
        status=KILLED detail="failed: ${failed_targets}${passed_targets:+; passed: $passed_targets}"
      else
        status=INVALID detail="bazel test exit $run_rc (see the log)"
      fi
    fi
  fi
  revert
  case "$status" in
    KILLED) killed=$((killed + 1)) ;;
    SURVIVED) survived=$((survived + 1)) ;;
    *) invalid=$((invalid + 1)) ;;
  esac
  secs=$((SECONDS - start))
  echo "mutants: $n: $status in $secs s ($detail)" >&2
  rows+=("$(printf '%-34s %-9s %6s  %s' "$n" "$status" "$secs" "$detail")")
done

{
  echo "tools/mutants.sh at ${commit:0:12}: ${#names[@]} mutants in $((SECONDS - total_start)) s"
  echo "CPU: $(grep -q avx512f /proc/cpuinfo 2>/dev/null && echo "AVX-512F (the _v4 targets run their cases)" || echo "no AVX-512F (the _v4 targets skip their cases)")"
  echo
  printf '%-34s %-9s %6s  %s\n' mutant status secs detail
  for r in "${rows[@]}"; do echo "$r"; done
  echo
  echo "killed $killed, survived $survived, invalid $invalid"
} | if [ -n "$out" ]; then tee "$out"; else cat; fi

[ "$survived" = 0 ] && [ "$invalid" = 0 ]
