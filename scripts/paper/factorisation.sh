#!/usr/bin/env bash
# Random matrix factorisation (paper section 4.1, Fig. recon_cmprs): square
# Boolean products of two random rank-L factor matrices, bits flipped with
# probability 5%...50%, fitted at the true L; the reconstruction (posterior
# means rounded) is scored against the noise-free matrix, and against the
# noisy data the fit saw (Fig. recon_cmprs middle, "observed").
#
#   scripts/paper/factorisation.sh [-o DIR] [--reps 10] [--fit-flags FLAGS] [--prior empirical|planted] [--only NAMES] [--force] [--keep] [--tiny]
#
# Experiments (NAME: size, L, expected density of the product):
#   square1000   1000 x 1000, L = 5, 0.5   (Fig. recon_cmprs top)
#   square100    100 x 100,   L = 7, 0.5   (middle)
#   biased1000   1000 x 1000, L = 5, 0.7   (bottom; the paper does not say
#   biased100    100 x 100,   L = 7, 0.7    which size, so both are run)
# Factor densities q solve 1 - (1 - q^2)^L = density (section 4.1).
# Fits use lib.sh's PAPER_FIT and see every entry (--holdout 0).
# --prior planted sets p(u) and p(z) to q itself, from the planted density
# of the noise-free product, instead of empirical Bayes from the density of
# the noisy data the fit sees (the default): the two differ for biased data
# with noise (0.7 becomes 0.7 - 0.4 * flip), and only the planted one can
# lean on the bias when the noise is total (flip 0.5).
#
# Prints the summary TSV (per experiment and flip: mean and standard
# deviation over the repetitions) on stdout; DIR/reps.tsv has one row per
# fit and DIR/summary.tsv the summary. Repetition r of experiment e (in the
# order above) at flip level f uses seed 10000*e + 100*f + r for both
# simulate and fit, whatever --only selects. --tiny runs a 30 x 30, L = 3
# problem at two flip levels, to check that the script works.
# --fit-flags "FLAGS": more scpipe fit flags, after the paper's (later flags
# win), e.g. --fit-flags "--starts 4 --start-sweeps 5" for scpipe's pilot
# starts; the summary's rows do not record them, so give each variant its
# own -o DIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

extra=() prior=empirical out="" reps=10 only="" keep="" tiny=""
while [ $# -gt 0 ]; do
  case $1 in
  --only) only=$2; shift 2 ;;
  --prior) prior=$2; shift 2 ;;
  *) experiment_arg "$@"; shift "$ARG_WORDS" ;;
  esac
done
case $prior in empirical | planted) ;; *) die "--prior $prior: want empirical or planted" ;; esac
need_scpipe
workdir "$out"

# name size L density
experiments="square1000 1000 5 0.5
square100 100 7 0.5
biased1000 1000 5 0.7
biased100 100 7 0.7"
flips="0.05 0.10 0.15 0.20 0.25 0.30 0.35 0.40 0.45 0.50"
if [ -n "$tiny" ]; then
  experiments="tiny 30 3 0.5"
  flips="0.10 0.30"
fi

# one NAME N L DENSITY FLIP REP SEED: simulates, fits and scores one
# repetition and prints its row of reps.tsv.
one() {
  local name=$1 n=$2 l=$3 density=$4 flip=$5 rep=$6 seed=$7
  local q w=$dir/$name-f$5-r$6 t0
  q=$(factor_density "$density" "$l")
  local priors=()
  [ "$prior" = empirical ] || priors=(--prior-u "$q" --prior-z "$q")
  t0=$(now)
  "$SCPIPE" simulate -q -o "$w/sim" --shards --cells "$n" --genes "$n" -L "$l" \
    --code-density "$q" --usage-density "$q" --flip "$flip" --seed "$seed"
  "$SCPIPE" fit -q "$w/sim/shards" -o "$w/run" -L "$l" --holdout 0 --seed "$seed" "${PAPER_FIT[@]}" "${priors[@]}" "${extra[@]}"
  "$SCPIPE" evaluate -q "$w/run" -o "$w/eval" --truth "$w/sim/truth"
  local acc lambda obs secs
  acc=$(score "$w/eval/scores.tsv" truth accuracy)
  obs=$(summary_value "$w/run/summary.tsv" train_accuracy)
  lambda=$(summary_value "$w/run/summary.tsv" lambda)
  secs=$(summary_value "$w/run/summary.tsv" seconds)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.6f\t%.6f\t%.6f\t%.4f\t%.3f\t%s\n' \
    "$name" "$n" "$l" "$density" "$flip" "$rep" "$seed" "$q" \
    "$(awk -v a="$acc" 'BEGIN { print 1 - a }')" "$(awk -v a="$obs" 'BEGIN { print 1 - a }')" \
    "$acc" "$lambda" "$secs" "$(elapsed "$t0")"
  [ -n "$keep" ] || rm -rf "$w"
}

printf 'experiment\tN\tL\tdensity\tflip\trep\tseed\tfactor_density\terror\tobserved_error\taccuracy\tlambda\tfit_s\twall_s\n' >"$dir/reps.tsv"
e=0
while read -r name n l density; do
  e=$((e + 1))
  case ",${only:-$name}," in *",$name,"*) ;; *) continue ;; esac
  f=0
  for flip in $flips; do
    f=$((f + 1))
    note "$name flip $flip: $reps repetitions"
    for rep in $(seq 1 "$reps"); do
      one "$name" "$n" "$l" "$density" "$flip" "$rep" $((10000 * e + 100 * f + rep)) >>"$dir/reps.tsv"
    done
  done
done <<<"$experiments"

mean_sd experiment,N,L,density,flip error,observed_error,lambda,fit_s,wall_s <"$dir/reps.tsv" >"$dir/summary.tsv"
cat "$dir/summary.tsv"
