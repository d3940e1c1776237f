#!/usr/bin/env bash
# The hierarchy of calculator-digit codes (paper section 5.2, Fig.
# calc_hier): independent fits of L = 3 ... 7 to the 50 noise-free digits
# (simulate --kind digits, every pixel observed), then the hierarchy across
# L as the paper infers it, by an OrMachine whose data are the codes of L
# and whose fixed codes are those of L+1 (scpipe enrich --hierarchy
# fixed-codes), and by overlap (--hierarchy overlap) beside it. Paper:
# "denser patterns dividing up consecutively until only the seven
# constituent bars remain".
#
#   scripts/paper/hierarchy.sh [-o DIR] [--reps 10] [--fit-flags FLAGS] [--force] [--keep] [--tiny]
#
# Settings: the digits' of section 3.4 (digits.sh): 200 sweeps of burn-in,
# 200 samples, code prior p(u) = 0.01, usage prior by empirical Bayes, one
# dispersion lambda, a random start, one chain; each L fitted on its own
# (scpipe fit --L 3..7). Each program is described by the planted bars
# (seven segments, simulate's truth/programs.tsv written as a GMT library,
# DIR/segments.gmt) of which it holds at least half the pixels (scpipe
# enrich --gmt, the overlap column): a "bar" is a program holding exactly
# one segment, with at least half of its pixels in it.
#
# Prints the summary TSV (per method and L: mean and standard deviation
# over the repetitions of the programs, the bars among them, and the
# programs that split from, merge, are new to or continue the previous L)
# on stdout; DIR/reps.tsv has one row per (repetition, method, L). Repetition 1's hierarchy is kept whole:
# DIR/hierarchy.tsv (per program of each L: its segments, event, parent and
# the posterior mean of that link, by the fixed-codes method),
# DIR/hierarchy-overlap.tsv (the same by overlap), DIR/figures/calc_hier.png
# and .svg (the paper's figure: each L's programs as digit images in a row,
# arrows to the programs of the next L that make each up; evaluate
# --images), DIR/figures/hierarchy.svg and hierarchy-overlap.svg (the
# report's diagram of each method) and DIR/images/ (each fit's codes and
# digits, evaluate --images). Repetition r uses seed r
# for the fits. --tiny fits 10 digits with 20 + 20 sweeps, L = 3..4.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

extra=() out="" reps=10 keep="" tiny=""
while [ $# -gt 0 ]; do
  case $1 in
  *) experiment_arg "$@"; shift "$ARG_WORDS" ;;
  esac
done
need_scpipe

cells=50 Ls=3..7 sweeps=(--burn-in 200 --samples 200)
if [ -n "$tiny" ]; then
  cells=10 Ls=3..4 sweeps=(--burn-in 20 --samples 20)
fi
digit_fit=("${PAPER_FIT[@]}" "${sweeps[@]}" --prior-u 0.01 --prior-z empirical)
workdir "$out"

# The digits and their seven segments, as a gene-set library: one line per
# planted program of truth/programs.tsv, its pixels as genes.
"$SCPIPE" simulate -q -o "$dir/sim" --kind digits --shards --cells "$cells" --missing 0 --seed 1
awk -F'\t' '
  NR == 1 { for (i = 3; i <= NF; i++) name[i] = $i; n = NF; next }
  { for (i = 3; i <= n; i++) if ($i == 1) genes[i] = genes[i] "\t" $2 }
  END { for (i = 3; i <= n; i++) { s = name[i]; sub(/^program_/, "segment", s); print s "\tplanted bar" genes[i] } }
' "$dir/sim/truth/programs.tsv" >"$dir/segments.gmt"

# describe ENRICH prints, per program of an enrich output: program, L,
# order, n_genes, segments (held: at least half of the segment's pixels,
# "+"-joined, "-" for none), bar (1 when it is one segment, holding at
# least half of the program's pixels), event, parent, link.
describe() {
  awk -F'\t' -v OFS='\t' '
    FNR == 1 { file++; for (i = 1; i <= NF; i++) col[file, $i] = i; next }
    file == 1 {
      if ($col[1, "Query"] != "all") next
      split($col[1, "Overlap"], k, "/")
      p = $col[1, "Program"]
      if (k[1] * 2 >= k[2]) { held[p] = held[p] (held[p] == "" ? "" : "+") $col[1, "Term"]; nheld[p]++; most[p] = k[1] }
      next
    }
    file == 2 {
      p = $col[2, "program"]
      if (FNR == 2) print "program", "L", "order", "n_genes", "segments", "bar", "event", "parent", "link"
      n = $col[2, "n_genes"]
      bar = nheld[p] == 1 && most[p] * 2 >= n ? 1 : 0
      print p, $col[2, "L"], $col[2, "order"], n, (held[p] == "" ? "-" : held[p]), bar, $col[2, "event"], $col[2, "parent"], $col[2, "link"]
    }' "$1/enrichment/segments.tsv" "$1/hierarchy.tsv"
}

# per_level DESCRIBED METHOD REP prints the rows of reps.tsv of one
# hierarchy (describe's output): per L, its programs, bars, and the
# programs of each event.
per_level() {
  awk -F'\t' -v OFS='\t' -v m="$2" -v r="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    {
      L = $col["L"]; if (!(L in n)) order[++k] = L
      n[L]++; bars[L] += $col["bar"]; ev[L, $col["event"]]++
    }
    END {
      for (j = 1; j <= k; j++) {
        L = order[j]
        print m, r, L, n[L], bars[L], ev[L, "split"] + 0, ev[L, "merge"] + 0, ev[L, "new"] + 0, ev[L, "continues"] + 0
      }
    }' "$1"
}

printf 'method\trep\tL\tprograms\tbars\tsplits\tmerges\tnew\tcontinues\n' >"$dir/reps.tsv"
for rep in $(seq 1 "$reps"); do
  note "repetition $rep: L = $Ls"
  w=$dir/r$rep
  mkdir -p "$w"
  "$SCPIPE" fit -q "$dir/sim/shards" -o "$w/run" --L "$Ls" --holdout 0 --seed "$rep" "${digit_fit[@]}" "${extra[@]}"
  for m in fixed-codes overlap; do
    "$SCPIPE" enrich -q "$w/run" -o "$w/enrich-$m" --hierarchy "$m" --gmt "$dir/segments.gmt"
    describe "$w/enrich-$m" >"$w/hierarchy-$m.tsv"
    per_level "$w/hierarchy-$m.tsv" "$m" "$rep" >>"$dir/reps.tsv"
  done
  if [ "$rep" -eq 1 ]; then
    cp "$w/hierarchy-fixed-codes.tsv" "$dir/hierarchy.tsv"
    cp "$w/hierarchy-overlap.tsv" "$dir/hierarchy-overlap.tsv"
    mkdir -p "$dir/figures"
    for m in fixed-codes overlap; do
      "$SCPIPE" report -q "$w/run" -o "$w/report-$m.html" --enrich "$w/enrich-$m" >/dev/null
      name=hierarchy.svg
      [ "$m" = fixed-codes ] || name=hierarchy-overlap.svg
      cp "$w/report-$m-figures/hierarchy.svg" "$dir/figures/$name"
    done
    "$SCPIPE" evaluate -q "$w/run" -o "$w/eval" --truth "$dir/sim/truth" --images --image-cells 10
    mkdir -p "$dir/images" && cp "$w/eval/images/L"* "$dir/images/"
    cp "$w/eval/images/hierarchy.png" "$dir/figures/calc_hier.png"
    cp "$w/eval/images/hierarchy.svg" "$dir/figures/calc_hier.svg"
  fi
  [ -n "$keep" ] || rm -rf "${w:?}"
done

mean_sd method,L programs,bars,splits,merges,new,continues <"$dir/reps.tsv" >"$dir/summary.tsv"
cat "$dir/summary.tsv"
