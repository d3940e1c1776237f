#!/usr/bin/env bash
# MovieLens collaborative filtering (paper section 5.1, Table movie_lense
# and Fig. recon_roc): the ratings binarised at the global mean rating,
# unrated entries missing; a fraction of the available ratings is observed
# by the fit and the rest predicted (plug-in posterior means) and scored:
# accuracy on the remaining ratings, mean and standard deviation over the
# repetitions.
#
#   scripts/paper/movielens.sh RATINGS [-o DIR] [--reps 10] [--fit-flags FLAGS] [--observed LIST]
#       [--models LIST] [--force] [--keep] [--tiny]
#
# RATINGS: MovieLens 100k u.data, 1M ratings.dat or a latest-style
# ratings.csv (scpipe ingest --format ratings detects which). On the real
# files (https://grouplens.org/datasets/movielens/):
#   scripts/paper/movielens.sh ml-100k/u.data -o ml100k
#   scripts/paper/movielens.sh ml-1m/ratings.dat -o ml1m
# --observed: comma-separated fractions of the available ratings that the
#   fit sees (default 0.01,0.05,0.1,0.2,0.5,0.95, the paper's), given to
#   scpipe fit as --holdout 1 - fraction, so the held-out ratings are the
#   ones scored (evaluate's heldout target).
# --models: comma-separated, of L2 (one layer of 2 codes, the default; any
#   Lk works) and 4-2 (two layers of 4 and 2 codes, scpipe fit --layers 4,2,
#   with lib.sh's PAPER_FIT but the uniform prior on the top layer's Z,
#   which has no empirical prior in a multi-layer fit).
# Fits use lib.sh's PAPER_FIT (section 5.1 follows section 4.2's procedure:
# empirical Bayes priors, random start, 100 + 100 sweeps). Repetition r at
# the f-th fraction uses seed 100*f + r for the held-out ratings and the fit.
#
# Prints the summary TSV (per model and observed fraction: mean and
# standard deviation of the accuracy, AUC and times) on stdout; DIR/reps.tsv
# has one row per fit, DIR/shards the ingested ratings, and DIR/roc/ the
# ROC curve of repetition 1 at 10% observed (Fig. recon_roc: roc.tsv,
# roc_heldout.svg, thresholds.tsv). --tiny runs 20 + 20 sweeps at two
# fractions, to check the script on a small generated file.
# --fit-flags "FLAGS": more scpipe fit flags, after the paper's (later flags
# win), e.g. --fit-flags "--starts 4 --start-sweeps 5" for scpipe's pilot
# starts; the summary's rows do not record them, so give each variant its
# own -o DIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

extra=() ratings="" out="" reps=10 observed="0.01,0.05,0.1,0.2,0.5,0.95" models="L2" keep="" tiny=""
while [ $# -gt 0 ]; do
  case $1 in
  --observed) observed=$2; shift 2 ;;
  --models) models=$2; shift 2 ;;
  -*) experiment_arg "$@"; shift "$ARG_WORDS" ;;
  *)
    [ -z "$ratings" ] || die "one ratings file, not $ratings and $1"
    ratings=$1; shift ;;
  esac
done
[ -n "$ratings" ] || die "no ratings file (see --help)"
[ -f "$ratings" ] || die "$ratings: no such file"
need_scpipe

fit_flags=("${PAPER_FIT[@]}")
if [ -n "$tiny" ]; then
  observed="0.1,0.5" fit_flags+=(--burn-in 20 --samples 20)
fi

# model_flags MODEL prints the fit flags of MODEL, one per line.
model_flags() {
  case $1 in
  L[0-9]*) printf '%s\n' -L "${1#L}" ;;
  4-2) printf '%s\n' --layers 4,2 --prior-z uniform ;;
  *) die "unknown model $1 (want Lk or 4-2)" ;;
  esac
}

for m in ${models//,/ }; do
  model_flags "$m" >/dev/null
done
workdir "$out"

t0=$(now)
"$SCPIPE" ingest -q --format ratings "$ratings" -o "$dir/shards"
note "ingested $ratings in $(elapsed "$t0") s"

# one MODEL OBS REP SEED: fits and scores one repetition and prints its row
# of reps.tsv.
one() {
  local m=$1 obs=$2 rep=$3 seed=$4 w=$dir/$1-obs$2-r$3 t0 holdout flags
  holdout=$(awk -v o="$obs" 'BEGIN { print 1 - o }')
  mapfile -t flags < <(model_flags "$m")
  t0=$(now)
  "$SCPIPE" fit -q "$dir/shards" -o "$w/run" --holdout "$holdout" --seed "$seed" "${fit_flags[@]}" "${flags[@]}" "${extra[@]}"
  "$SCPIPE" evaluate -q "$w/run" -o "$w/eval"
  if [ "$rep" -eq 1 ] && awk -v o="$obs" 'BEGIN { exit !(o == 0.1) }'; then
    mkdir -p "$dir/roc/$m"
    cp "$w/eval/roc.tsv" "$w/eval/roc_heldout.svg" "$w/eval/thresholds.tsv" "$dir/roc/$m/"
  fi
  # Each value is assigned alone, so that a missing one stops the script
  # (set -e) instead of leaving an empty field.
  local n acc auc secs
  n=$(score "$w/eval/scores.tsv" heldout n)
  acc=$(score "$w/eval/scores.tsv" heldout accuracy)
  auc=$(score "$w/eval/scores.tsv" heldout auc)
  secs=$(summary_value "$w/run/summary.tsv" seconds)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%s\n' "$m" "$obs" "$rep" "$seed" "$n" "$acc" "$auc" "$secs" "$(elapsed "$t0")"
  [ -n "$keep" ] || rm -rf "$w"
}

printf 'model\tobserved\trep\tseed\theldout\taccuracy\tauc\tfit_s\twall_s\n' >"$dir/reps.tsv"
for m in ${models//,/ }; do
  f=0
  for obs in ${observed//,/ }; do
    f=$((f + 1))
    note "$m, observed $obs: $reps repetitions"
    for rep in $(seq 1 "$reps"); do
      one "$m" "$obs" "$rep" $((100 * f + rep)) >>"$dir/reps.tsv"
    done
  done
done

mean_sd model,observed accuracy,auc,fit_s,wall_s <"$dir/reps.tsv" >"$dir/summary.tsv"
cat "$dir/summary.tsv"
