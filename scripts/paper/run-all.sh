#!/usr/bin/env bash
# Every experiment of the paper's sections 4-5 that scpipe can run, with the
# paper's settings: builds scpipe (unless SCPIPE names a binary), then runs
# factorisation.sh, completion.sh, digits.sh, hierarchy.sh and movielens.sh, each into its
# own folder of OUT, and writes OUT/times.tsv (wall seconds per script).
#
#   scripts/paper/run-all.sh [-o OUT] [--reps 10] [--force] [--tiny]
#
# MovieLens: with ML100K=path/to/u.data and/or ML1M=path/to/ratings.dat in
# the environment the real files are used; otherwise the protocol runs on a
# generated file of the 100k layout and size (gen-ratings.sh), whose
# numbers say only that the protocol works; the multi-layer models (digits
# 7-4-2, MovieLens 4-2) run beside the single-layer ones. --tiny runs every script on tiny
# problems with one repetition (the scripts' test; seconds).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
given=${SCPIPE:-}
. "$here/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

out=paper-results reps=10 tiny=() force=()
while [ $# -gt 0 ]; do
  case $1 in
  -o) out=$2; shift 2 ;;
  --reps) reps=$2; shift 2 ;;
  --force) FORCE=1 force=(--force); shift ;;
  --tiny) tiny=(--tiny) reps=1; shift ;;
  -h | --help) usage; exit 0 ;;
  *) die "unknown argument $1 (see --help)" ;;
  esac
done
workdir "$out"
# A scpipe on PATH may be another version: build this repository's.
if [ -z "$given" ]; then
  (cd "$here/../.." && go build -o "$dir/scpipe" ./cmd/scpipe)
  SCPIPE=$dir/scpipe
fi
export SCPIPE
need_scpipe

printf 'experiment\tstatus\twall_s\n' >"$dir/times.tsv"

# step NAME SCRIPT ARGS...: runs one script, its summary to OUT/NAME.tsv,
# and records its time.
step() {
  local name=$1 t0 rc=0
  shift
  t0=$(now)
  "$@" >"$dir/$name.tsv" || rc=$?
  case $rc in
  0) printf '%s\tdone\t%s\n' "$name" "$(elapsed "$t0")" >>"$dir/times.tsv" ;;
  *) exit "$rc" ;;
  esac
}

step factorisation "$here/factorisation.sh" -o "$dir/factorisation" --reps "$reps" "${tiny[@]}"
step completion "$here/completion.sh" -o "$dir/completion" --reps "$reps" "${tiny[@]}"
step digits "$here/digits.sh" -o "$dir/digits" --reps "$reps" "${tiny[@]}"
step digits-7-4-2 "$here/digits.sh" -o "$dir/digits-7-4-2" --models 7-4-2 --reps "$reps" "${tiny[@]}"
step hierarchy "$here/hierarchy.sh" -o "$dir/hierarchy" --reps "$reps" "${tiny[@]}"

ml=()
[ -z "${ML100K:-}" ] || ml+=("ml100k=$ML100K")
[ -z "${ML1M:-}" ] || ml+=("ml1m=$ML1M")
if [ ${#ml[@]} -eq 0 ]; then
  gen=(--users 943 --items 1682)
  [ ${#tiny[@]} -eq 0 ] || gen=(--users 60 --items 80 --rated 0.3)
  "$here/gen-ratings.sh" -o "$dir/generated-u.data" "${gen[@]}" "${force[@]}"
  ml=("generated=$dir/generated-u.data")
fi
for entry in "${ml[@]}"; do
  name=movielens-${entry%%=*} file=${entry#*=}
  step "$name" "$here/movielens.sh" "$file" -o "$dir/$name" --reps "$reps" "${tiny[@]}"
  step "$name-4-2" "$here/movielens.sh" "$file" -o "$dir/$name-4-2" --models 4-2 --reps "$reps" "${tiny[@]}"
done
cat "$dir/times.tsv"
