#!/usr/bin/env bash
# Calculator digits (paper section 3.4, Fig. deep_calc): 50 seven-segment
# digits on the 10 x 17 pixel grid, noise-free, 70% of the pixels
# unobserved (simulate --kind digits --missing 0.7); the unobserved pixels
# are reconstructed and scored against the noise-free digits (evaluate's
# truth_unseen target). Paper: reconstruction error 1.4% for one layer of
# L = 7, 0.4% for three layers of 7, 4 and 2 codes, lambda = [1.0, 0.93, 0.8].
#
#   scripts/paper/digits.sh [-o DIR] [--reps 10] [--fit-flags FLAGS] [--models LIST] [--force] [--keep] [--tiny]
#
# --models: comma-separated, of
#   L6, L7   one layer of 6 or 7 codes (default: L6,L7)
#   7-4-2    three layers (scpipe fit --layers 7,4,2). Its code priors are
#            the paper's p(u) = 0.01, 0.05, 0.2 per layer, passed as
#            --layer-prior-u 0.01,0.05,0.2 (override with ML_PRIOR_U); the
#            top layer's Z takes the uniform prior (a multi-layer fit has
#            no empirical prior for it).
# Settings as the paper's (section 3.4): 200 sweeps of burn-in, 200
# samples, code prior p(u) = 0.01 (sparse codes, "to enforce distributed
# representations"), usage prior by empirical Bayes, one dispersion lambda,
# a random start, one chain, every observed pixel fitted (--holdout 0).
#
# Prints the summary TSV (per model: mean and standard deviation over the
# repetitions of the error on the unobserved pixels and on all pixels,
# lambda, the accuracy on the observed pixels, which is sigma(lambda) at
# the maximum-likelihood lambda and what the paper's lambda values look
# like, and times) on stdout; DIR/reps.tsv has one row per fit.
# Repetition r uses seed r for the missing pixels and the fit, so every
# model sees the same data. DIR/images/ holds repetition 1's codes and
# reconstructions as images (evaluate --images, the paper's Fig. calc).
# --tiny runs 10 digits, 50% missing, 20 + 20 sweeps, to check the script.
# --fit-flags "FLAGS": more scpipe fit flags, after the paper's (later flags
# win), e.g. --fit-flags "--starts 4 --start-sweeps 5" for scpipe's pilot
# starts; the summary's rows do not record them, so give each variant its
# own -o DIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

extra=() out="" reps=10 models="L6,L7" keep="" tiny=""
while [ $# -gt 0 ]; do
  case $1 in
  --models) models=$2; shift 2 ;;
  *) experiment_arg "$@"; shift "$ARG_WORDS" ;;
  esac
done
need_scpipe

cells=50 missing=0.7 sweeps=(--burn-in 200 --samples 200)
if [ -n "$tiny" ]; then
  cells=10 missing=0.5 sweeps=(--burn-in 20 --samples 20)
fi
# The paper's digit settings on top of PAPER_FIT (later flags win).
digit_fit=("${PAPER_FIT[@]}" "${sweeps[@]}" --prior-u 0.01 --prior-z empirical)

# model_flags MODEL prints the fit flags of MODEL, one per line.
model_flags() {
  case $1 in
  L[0-9]*) printf '%s\n' -L "${1#L}" ;;
  7-4-2) printf '%s\n' --layers 7,4,2 --layer-prior-u "${ML_PRIOR_U:-0.01,0.05,0.2}" --prior-z uniform ;;
  *) die "unknown model $1 (want L6, L7 or 7-4-2)" ;;
  esac
}

for m in ${models//,/ }; do
  model_flags "$m" >/dev/null
done
workdir "$out"

# one MODEL REP: fits MODEL to repetition REP's digits (simulated once per
# repetition) and prints its row of reps.tsv.
one() {
  local m=$1 rep=$2 w=$dir/r$2 t0 flags
  t0=$(now)
  [ -d "$w/sim" ] || "$SCPIPE" simulate -q -o "$w/sim" --kind digits --shards \
    --cells "$cells" --missing "$missing" --seed "$rep"
  mapfile -t flags < <(model_flags "$m")
  "$SCPIPE" fit -q "$w/sim/shards" -o "$w/$m" --holdout 0 --seed "$rep" "${digit_fit[@]}" "${flags[@]}" "${extra[@]}"
  local images=()
  [ "$rep" -ne 1 ] || images=(--images)
  "$SCPIPE" evaluate -q "$w/$m" -o "$w/$m-eval" --truth "$w/sim/truth" "${images[@]}"
  if [ "$rep" -eq 1 ] && [ -d "$w/$m-eval/images" ]; then
    mkdir -p "$dir/images" && cp "$w/$m-eval/images/"* "$dir/images/"
  fi
  # Each value is assigned alone, so that a missing one stops the script
  # (set -e) instead of leaving an empty field.
  local unseen all lambda obs secs
  unseen=$(score "$w/$m-eval/scores.tsv" truth_unseen accuracy)
  all=$(score "$w/$m-eval/scores.tsv" truth accuracy)
  lambda=$(summary_value "$w/$m/summary.tsv" lambda)
  obs=$(summary_value "$w/$m/summary.tsv" train_accuracy)
  secs=$(summary_value "$w/$m/summary.tsv" seconds)
  printf '%s\t%s\t%s\t%.6f\t%.6f\t%.4f\t%.6f\t%.3f\t%s\n' "$m" "$rep" "$rep" \
    "$(awk -v a="$unseen" 'BEGIN { print 1 - a }')" "$(awk -v a="$all" 'BEGIN { print 1 - a }')" \
    "$lambda" "$obs" "$secs" "$(elapsed "$t0")"
}

printf 'model\trep\tseed\terror_unseen\terror_all\tlambda\tobserved_accuracy\tfit_s\twall_s\n' >"$dir/reps.tsv"
for rep in $(seq 1 "$reps"); do
  note "repetition $rep: $models"
  for m in ${models//,/ }; do
    one "$m" "$rep" >>"$dir/reps.tsv"
  done
  [ -n "$keep" ] || rm -rf "${dir:?}/r$rep"
done

mean_sd model error_unseen,error_all,lambda,observed_accuracy,fit_s,wall_s <"$dir/reps.tsv" >"$dir/summary.tsv"
cat "$dir/summary.tsv"
