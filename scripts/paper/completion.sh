#!/usr/bin/env bash
# Random matrix completion (paper section 4.2, Fig. cmprs): 250 x 250
# Boolean products of rank L = 5 (expected density 1/2, no noise), of which
# only 0.5%...3.5% of the entries are observed (simulate --missing); the
# rest are predicted from the posterior means and scored against the
# planted matrix (scpipe evaluate's truth_unseen target).
#
#   scripts/paper/completion.sh [-o DIR] [--reps 10] [--fit-flags FLAGS] [--observed LIST] [--force] [--keep] [--tiny]
#
# --observed: comma-separated observed fractions (default
# 0.005,0.01,0.015,0.02,0.025,0.03,0.035). Fits use lib.sh's PAPER_FIT.
#
# Prints the summary TSV (per observed fraction: mean and standard
# deviation over the repetitions of the accuracy on the unobserved entries,
# the AUC of their posterior means, and times) on stdout. DIR/reps.tsv has
# one row per fit; DIR/densities.tsv is Fig. cmprs (bottom): for each
# observed fraction, the density of the posterior means of the unobserved
# entries that were predicted rightly and wrongly (rounded at 1/2), over
# 20 bins of width 0.05, pooled over the repetitions (from evaluate's
# calibration.tsv, which counts entries and ones per bin). Repetition r at
# the f-th observed fraction uses seed 100*f + r. --tiny runs a 40 x 40,
# L = 3 problem at two fractions, to check that the script works.
# --fit-flags "FLAGS": more scpipe fit flags, after the paper's (later flags
# win), e.g. --fit-flags "--starts 4 --start-sweeps 5" for scpipe's pilot
# starts; the summary's rows do not record them, so give each variant its
# own -o DIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

extra=() out="" reps=10 observed="0.005,0.01,0.015,0.02,0.025,0.03,0.035" keep="" tiny=""
while [ $# -gt 0 ]; do
  case $1 in
  --observed) observed=$2; shift 2 ;;
  *) experiment_arg "$@"; shift "$ARG_WORDS" ;;
  esac
done
need_scpipe
workdir "$out"

n=250 l=5 bins=20
if [ -n "$tiny" ]; then
  n=40 l=3 observed="0.1,0.3"
fi
q=$(factor_density 0.5 "$l")

# one OBS REP SEED: simulates, fits and scores one repetition, prints its
# row of reps.tsv and appends its calibration rows to calibration.tsv.
one() {
  local obs=$1 rep=$2 seed=$3 w=$dir/obs$1-r$2 t0 missing
  missing=$(awk -v o="$obs" 'BEGIN { print 1 - o }')
  t0=$(now)
  "$SCPIPE" simulate -q -o "$w/sim" --shards --cells "$n" --genes "$n" -L "$l" \
    --code-density "$q" --usage-density "$q" --flip 0 --missing "$missing" --seed "$seed"
  "$SCPIPE" fit -q "$w/sim/shards" -o "$w/run" -L "$l" --holdout 0 --seed "$seed" "${PAPER_FIT[@]}" "${extra[@]}"
  "$SCPIPE" evaluate -q "$w/run" -o "$w/eval" --truth "$w/sim/truth" --calibration-bins "$bins"
  awk -F'\t' -v OFS='\t' -v obs="$obs" -v rep="$rep" \
    'NR > 1 && $3 == "truth_unseen" { print obs, rep, $4, $5, $6, $7 }' \
    "$w/eval/calibration.tsv" >>"$dir/calibration.tsv"
  # Each value is assigned alone, so that a missing one stops the script
  # (set -e) instead of leaving an empty field.
  local unseen acc auc secs
  unseen=$(score "$w/eval/scores.tsv" truth_unseen n)
  acc=$(score "$w/eval/scores.tsv" truth_unseen accuracy)
  auc=$(score "$w/eval/scores.tsv" truth_unseen auc)
  secs=$(summary_value "$w/run/summary.tsv" seconds)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$obs" "$rep" "$seed" "$unseen" "$acc" "$auc" "$secs" "$(elapsed "$t0")"
  [ -n "$keep" ] || rm -rf "$w"
}

printf 'observed\trep\tseed\tunobserved\taccuracy\tauc\tfit_s\twall_s\n' >"$dir/reps.tsv"
printf 'observed\trep\tbin_lo\tbin_hi\tn\tpositives\n' >"$dir/calibration.tsv"
f=0
for obs in ${observed//,/ }; do
  f=$((f + 1))
  note "observed $obs: $reps repetitions"
  for rep in $(seq 1 "$reps"); do
    one "$obs" "$rep" $((100 * f + rep)) >>"$dir/reps.tsv"
  done
done

# Predictions are 1 from 1/2 up (as evaluate's accuracy counts them), and
# the bins' edges include 1/2, so each bin is wholly right or wrong for
# each truth value.
awk -F'\t' -v OFS='\t' '
  NR == 1 { print "observed", "bin_lo", "bin_hi", "right", "wrong", "right_density", "wrong_density"; next }
  {
    k = $1 OFS $3 OFS $4
    if (!(k in n)) order[++keys] = k
    n[k] += $5
    right = ($3 >= 0.5) ? $6 : $5 - $6
    r[k] += right; w[k] += $5 - right
    tr[$1] += right; tw[$1] += $5 - right
  }
  END {
    for (i = 1; i <= keys; i++) {
      k = order[i]; split(k, p, OFS); width = p[3] - p[2]
      print k, r[k], w[k], sprintf("%.4f", tr[p[1]] ? r[k] / tr[p[1]] / width : 0),
        sprintf("%.4f", tw[p[1]] ? w[k] / tw[p[1]] / width : 0)
    }
  }' "$dir/calibration.tsv" >"$dir/densities.tsv"

mean_sd observed accuracy,auc,fit_s,wall_s <"$dir/reps.tsv" >"$dir/summary.tsv"
cat "$dir/summary.tsv"
