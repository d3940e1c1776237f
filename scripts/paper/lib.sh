# Sourced by the scripts of scripts/paper/: the scpipe binary, the paper's
# fit settings, option parsing, timing, and reading scpipe's TSV outputs.
# Nothing here computes a result: every number comes from scpipe.

set -euo pipefail

# SCPIPE is the scpipe binary the experiments run (run-all.sh builds one).
SCPIPE=${SCPIPE:-scpipe}

# The paper's settings for every OrMachine fit of sections 4-5 (section 4,
# first paragraph): one chain from a uniformly random start, 100 sweeps of
# burn-in and 100 samples, the single dispersion lambda, and Bernoulli
# priors set by empirical Bayes from the observed density. They are spelled
# out, rather than left to scpipe fit's defaults (which serve single-cell
# data and may change), so that the numbers do not move with the defaults.
# --starts 1: no short pilot chains; --housekeeping off: no extra code.
PAPER_FIT=(--chains 1 --burn-in 100 --samples 100 --thin 1
  --prior-u empirical --prior-z empirical --noise symmetric --cell-levels 1
  --init random --housekeeping off --starts 1)

# die prints its arguments as an error and exits.
die() {
  echo "${0##*/}: $*" >&2
  exit 2
}

# note logs a line on stderr (stdout is the results' TSV).
note() {
  [ -n "${QUIET:-}" ] || echo "${0##*/}: $*" >&2
}

# experiment_arg reads the option at "$@" that every experiment script
# takes (-o, --reps, --fit-flags, --force, --keep, --tiny, --help) into
# out, reps, extra, FORCE, keep and tiny, and sets ARG_WORDS to the words it
# used; anything else is an error. A script's own options come first in
# its case: *) experiment_arg "$@"; shift "$ARG_WORDS" ;;
experiment_arg() {
  ARG_WORDS=1
  case $1 in
  -o) out=$2 ARG_WORDS=2 ;;
  --reps) reps=$2 ARG_WORDS=2 ;;
  --fit-flags) read -ra extra <<<"$2"; ARG_WORDS=2 ;;
  --force) FORCE=1 ;;
  --keep) keep=1 ;;
  --tiny) tiny=1 ;;
  -h | --help) usage; exit 0 ;;
  *) die "unknown argument $1 (see --help)" ;;
  esac
}

# need_scpipe fails early, with what to do, when the binary is missing.
need_scpipe() {
  command -v "$SCPIPE" >/dev/null 2>&1 ||
    die "no scpipe binary '$SCPIPE': build one (go build -o scpipe ./cmd/scpipe) and set SCPIPE=./scpipe"
}

# workdir DIR sets dir to DIR, created (a non-empty DIR is refused unless
# FORCE is set), or, when DIR is "", to a temporary folder removed at exit.
# It sets a global rather than printing the path because a trap set in a
# command substitution's subshell would fire as soon as that subshell ends.
workdir() {
  dir=$1
  if [ -z "$dir" ]; then
    dir=$(mktemp -d)
    # shellcheck disable=SC2064 # expand now: the path is fixed
    trap "rm -rf '$dir'" EXIT
  elif [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
    [ -n "${FORCE:-}" ] || die "$dir exists and is not empty (--force replaces it)"
    rm -rf "$dir"
  fi
  mkdir -p "$dir"
}

# now prints the time in seconds with a fraction.
now() { date +%s.%N; }

# elapsed START prints the seconds since START, to 0.1 s.
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# factor_density D L prints the density q of i.i.d. Bernoulli factors whose
# Boolean product of rank L has expected density D: 1 - (1 - q^2)^L = D
# (section 4.1).
factor_density() {
  awk -v d="$1" -v l="$2" 'BEGIN { printf "%.6f", sqrt(1 - (1 - d) ^ (1 / l)) }'
}

# score FILE TARGET COLUMN prints COLUMN of the first row of scpipe
# evaluate's scores.tsv (FILE) whose target is TARGET.
score() {
  awk -F'\t' -v t="$2" -v c="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["target"] == t { print $col[c]; found = 1; exit }
    END { if (!found) exit 1 }' "$1" || die "$1: no $3 for target $2"
}

# summary_value FILE COLUMN prints COLUMN of the first row of a run's
# summary.tsv.
summary_value() {
  awk -F'\t' -v c="$2" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    NR == 2 { print $col[c]; found = 1 }
    END { if (!found) exit 1 }' "$1" || die "$1: no $2"
}

# mean_sd KEYS VALUES: reads a TSV with a header on stdin and prints, per
# distinct combination of the KEYS columns (comma-separated names, in order
# of first appearance), the number of rows and the mean and sample standard
# deviation of each of the VALUES columns.
mean_sd() {
  awk -F'\t' -v OFS='\t' -v keys="$1" -v vals="$2" '
    NR == 1 {
      for (i = 1; i <= NF; i++) col[$i] = i
      nk = split(keys, k, ","); nv = split(vals, v, ",")
      head = ""
      for (i = 1; i <= nk; i++) head = head k[i] OFS
      head = head "reps"
      for (j = 1; j <= nv; j++) head = head OFS v[j] "_mean" OFS v[j] "_sd"
      print head
      next
    }
    {
      key = ""
      for (i = 1; i <= nk; i++) key = key (i > 1 ? OFS : "") $col[k[i]]
      if (!(key in n)) order[++groups] = key
      n[key]++
      for (j = 1; j <= nv; j++) { x = $col[v[j]]; s[key, j] += x; ss[key, j] += x * x }
    }
    END {
      for (g = 1; g <= groups; g++) {
        key = order[g]; line = key OFS n[key]
        for (j = 1; j <= nv; j++) {
          m = s[key, j] / n[key]
          var = n[key] > 1 ? (ss[key, j] - n[key] * m * m) / (n[key] - 1) : 0
          line = line OFS sprintf("%.4f", m) OFS sprintf("%.4f", var > 0 ? sqrt(var) : 0)
        }
        print line
      }
    }'
}
