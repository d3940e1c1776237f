#!/usr/bin/env bash
# A careless and unlucky user, as a script (issue 30): builds a small run
# (simulate -> ingest -> fit with entries held out) and an MTX folder,
# then turns the commands against their own inputs, damages the MTX
# folder in the ways the hostile test run found, and changes one random
# byte at a time in the run directory and the MTX folder before running
# the commands that read them. Every command must end with an exit code
# below 128 (130 for SIGTERM), print no panic and no fatal error, and
# leave every input byte for byte as it was. Issue 44 added names no reader
# can hold, run files copied from another run, outputs checked before any
# is written, and ingest onto a full 30 MB tmpfs (mounted only where the
# script may: root; skipped with a message otherwise).
#
#   scripts/hostile.sh            # the cases and RANDOM_CASES (200) random byte changes
#   RANDOM_CASES=2000 SEED=7 scripts/hostile.sh
#   KEEP=DIR scripts/hostile.sh   # keep the work folder (and the failing case's output) in DIR
#
# Run by .ci/run: about 2 minutes of CPU (5 minutes of wall time with 250
# changes on a 2-core machine loaded 8 to 15 deep).
set -euo pipefail
cd "$(dirname "$0")/.."

random_cases=${RANDOM_CASES:-200}
RANDOM=${SEED:-30}
if [ -n "${KEEP:-}" ]; then
  work="$KEEP"
  rm -rf "$work"
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'umount "$work/w/full" 2>/dev/null || true; rm -rf "$work"' EXIT
fi
scpipe="$work/scpipe"
go build -o "$scpipe" ./cmd/scpipe
w="$work/w"
mkdir -p "$w"
cd "$w"

"$scpipe" simulate -q -o sim --kind singlecell --cells 300 --genes 120 --L 3 --seed 5 -j 2
"$scpipe" ingest -q sim -o shards --min-cell-frac 0 -j 2
fitargs=(--L 2 --chains 1 --starts 1 --burn-in 6 --samples 6 --holdout 0.2 -j 2 -q)
"$scpipe" fit shards -o run "${fitargs[@]}"
# A plain MTX folder, so that changed bytes reach the parser, not gzip's CRC.
mkdir mtx
gzip -dc sim/matrix.mtx.gz > mtx/matrix.mtx
gzip -dc sim/features.tsv.gz > mtx/features.tsv
gzip -dc sim/barcodes.tsv.gz > mtx/barcodes.tsv
ln -s run run-link
ln -s shards shards-link

failures=0
fail() {
  echo "hostile: FAIL: $*" >&2
  failures=$((failures + 1))
}

# digest prints the SHA-256 of every file under the given paths but those
# an allowed output (SKIP, a regular expression of paths) may change.
digest() {
  find "$@" -type f | LC_ALL=C sort | { grep -Ev "${SKIP:-^$}" || true; } | xargs -r sha256sum
}

# try WANT_RC 'MESSAGE' INPUTS... -- ARGS...: runs scpipe ARGS (60 s at most)
# and checks its exit code (WANT_RC: a number, or "any" for any code below
# 128), that MESSAGE (a grep -E pattern, or "") is in what it printed, that
# it printed no panic or fatal error, and that INPUTS are unchanged.
try() {
  local want=$1 msg=$2
  shift 2
  local inputs=()
  while [ "$1" != "--" ]; do inputs+=("$1"); shift; done
  shift
  local before after rc=0
  before=$(digest "${inputs[@]}")
  timeout -s KILL 60 "$scpipe" "$@" >out.txt 2>err.txt || rc=$?
  after=$(digest "${inputs[@]}")
  local what="scpipe $*"
  if grep -Eq '^panic:|^fatal error:|^goroutine [0-9]+ \[' err.txt; then
    fail "$what: panicked (exit $rc)"; head -20 err.txt >&2
  elif [ "$rc" -ge 128 ]; then
    fail "$what: exit $rc"; tail -5 err.txt >&2
  elif [ "$want" != any ] && [ "$rc" -ne "$want" ]; then
    fail "$what: exit $rc, want $want"; tail -5 err.txt >&2
  elif [ -n "$msg" ] && ! grep -Eq -- "$msg" err.txt; then
    fail "$what: stderr does not say /$msg/"; tail -5 err.txt >&2
  fi
  if [ "$before" != "$after" ]; then
    fail "$what: changed its inputs"; diff <(echo "$before") <(echo "$after") >&2 || true
  fi
}

echo "hostile: outputs against their inputs"
try 1 'is the input' sim -- ingest sim -o sim --force -q
try 1 'lies inside the input' sim -- ingest sim -o sim/shards --force -q
try 1 'is the input' shards -- fit shards -o shards --force "${fitargs[@]}"
try 1 'is the input' shards -- fit shards -o shards-link --force "${fitargs[@]}"
try 1 'holds the input' shards run -- fit shards -o . --force "${fitargs[@]}"
try 1 'lies inside the input' run -- enrich run -o run/L02 --force -q
try 1 'lies inside the input' run -- enrich run -o run-link/L02 --force -q
try 1 'lies inside the input' run -- evaluate run -o run/L02 --force -q
try 1 'is the input' run -- evaluate run -o run-link --force -q
try 1 'lies inside the input' run -- report run -o run/L02/chain1/page.html --force -q

echo "hostile: the run's lock through a symbolic link"
# This shell holds the lock as a running fit would: fd 9, flock(2).
exec 9>.run.lock
flock -n 9
try 1 'being written' shards run -- fit shards -o run-link --resume "${fitargs[@]}"
exec 9>&-

echo "hostile: -j beyond any use"
try 1 'threads = 100000 outside 1\.\.[0-9]+' shards -- fit shards -o run-j "${fitargs[@]}" -j 100000
try 1 'threads = 100000 outside 1\.\.[0-9]+' sim -- ingest sim -o shards-j -j 100000 -q

echo "hostile: pipes and devices where files are read or written"
mkfifo fifo
try 1 'fifo is a named pipe, not a folder' shards -- info fifo
try 1 'fifo is a named pipe, not a regular file' shards -- fit shards -o run-fifo --config fifo "${fitargs[@]}"
try 1 'fifo is a named pipe, not a regular file' run -- enrich run -o e-fifo --gmt fifo -q
try 1 'fifo is a named pipe, not a folder' run -- evaluate run -o v-fifo --truth fifo -q
try 1 'fifo is a named pipe, not a file or a folder' run -- enrich run -o fifo --force -q
bad() { rm -rf "$1"; cp -r mtx "$1"; }
bad mtx-fifo
rm mtx-fifo/matrix.mtx
mkfifo mtx-fifo/matrix.mtx
try 1 'matrix.mtx is a named pipe' mtx-fifo/features.tsv mtx-fifo/barcodes.tsv -- ingest mtx-fifo -o s-fifo -q
[ -p fifo ] || fail "the named pipe given as an output was replaced"

echo "hostile: sizes and settings beyond any use"
try 1 'at most 2147483647' sim -- simulate -o sim-huge --cells 1000000000000 -q
try 1 'not enough free space' sim -- simulate -o sim-huge --cells 2000000000 --genes 60000000 --shards -q
try 1 'at most 64' sim -- simulate -o sim-huge --activity-programs 9223372036854775807 -q
try 1 'chains = 1000000000 outside 1..1000' shards -- fit shards -o run-chains "${fitargs[@]}" --chains 1000000000
try 1 'starts = 100000 outside 1..64' shards -- fit shards -o run-starts "${fitargs[@]}" --starts 100000 --burn-in 10000 --start-sweeps 10
try 1 'burn_in = 9223372036854775000 outside' shards -- fit shards -o run-sweeps "${fitargs[@]}" --burn-in 9223372036854775000

echo "hostile: damaged MTX folders"
bad() { rm -rf "$1"; cp -r mtx "$1"; }
bad mtx-huge
{ head -n 2 mtx/matrix.mtx | grep '^%'; echo "2000000000 2000000000 5"; } > mtx-huge/m
# One awk, not grep | tail | head: head leaving early kills tail with SIGPIPE,
# which pipefail turned into the script's exit (141) now and then.
awk '!/^%/ && ++n >= 2 && n <= 6' mtx/matrix.mtx >> mtx-huge/m
mv mtx-huge/m mtx-huge/matrix.mtx
try 1 'mtx-huge/features.tsv' mtx-huge -- ingest mtx-huge -o s-huge -q
bad mtx-1e20
awk 'BEGIN { done = 0 } /^%/ || NR == 1 { print; next } !size { size = 1; print; next } !done { $3 = "100000000000000000000"; done = 1 } { print }' mtx/matrix.mtx > mtx-1e20/matrix.mtx
try 1 'matrix.mtx line [0-9]+: value 1e\+?20|matrix.mtx line [0-9]+: value 100000000000000000000' mtx-1e20 -- ingest mtx-1e20 -o s-1e20 -q
bad mtx-dup
awk 'NR == 2 { print prev; next } { prev = $0; print }' mtx/barcodes.tsv > mtx-dup/barcodes.tsv
try 1 'barcodes.tsv: barcode .* names two cells' mtx-dup -- ingest mtx-dup -o s-dup -q
bad mtx-both
gzip -c mtx/matrix.mtx > mtx-both/matrix.mtx.gz
try 1 'both matrix.mtx.gz and matrix.mtx' mtx-both -- ingest mtx-both -o s-both -q

echo "hostile: issue 44: every output checked before any is written"
echo precious > precious.h5ad
try 1 'is the input' run precious.h5ad -- export run -o precious.h5ad --cnmf run --force -q
try 1 'is the input' run -- export run -o fresh.h5ad --cnmf run -q
[ ! -e fresh.h5ad ] || fail "export -o fresh.h5ad --cnmf run left fresh.h5ad behind"
ln -s nowhere dangling
try 1 'symbolic link to .*nowhere, which does not exist' run -- enrich run -o dangling/out -q
try 1 '--top 0: want at least 1' run -- export run -o top0.h5ad --top 0 -q
try 1 '--chain 0: want at least 1' run -- export run -o chain0.h5ad --chain 0 -q
try 1 'holdout = 0.9999999 hides every observed entry' shards -- fit shards -o run-allheld --L 2 --chains 1 --starts 1 --burn-in 3 --samples 3 --holdout 0.9999999 -j 2 -q

echo "hostile: issue 44: names no reader can hold"
# name FILE LINE TEXT: the MTX folder mtx-name with line LINE of FILE replaced.
name() {
  bad mtx-name
  awk -v n="$2" -v t="$3" 'NR == n { print t; next } { print }' "mtx/$1" >"mtx-name/$1"
}
name barcodes.tsv 6 "$(printf 'BC\351X')"
try 1 'mtx-name/barcodes.tsv line 6: barcode .*not valid UTF-8' mtx-name -- ingest mtx-name -o s-name -q
name barcodes.tsv 6 "$(printf 'BC\rX')"
try 1 'mtx-name/barcodes.tsv line 6: barcode .*control character U\+000D' mtx-name -- ingest mtx-name -o s-name -q
name barcodes.tsv 3 "$(printf 'BC\342\200\256X')"
try 1 'mtx-name/barcodes.tsv line 3: barcode .*bidirectional control U\+202E' mtx-name -- ingest mtx-name -o s-name -q
name barcodes.tsv 4 '=HYPERLINK("x")'
try 1 'mtx-name/barcodes.tsv line 4: barcode .*formula' mtx-name -- ingest mtx-name -o s-name -q
name features.tsv 2 "$(printf 'G2\tgene\033[2\tGene Expression')"
try 1 'mtx-name/features.tsv line 2: gene name .*control character U\+001B' mtx-name -- ingest mtx-name -o s-name -q
name features.tsv 5 "$(printf 'G5\t%s\tGene Expression' "$(head -c 5000 /dev/zero | tr '\0' A)")"
try 1 'mtx-name/features.tsv line 5: gene name .*5000 bytes long: names are at most 4096 bytes' mtx-name -- ingest mtx-name -o s-name -q
name features.tsv 7 "$(printf 'G7\tgene,7\tGene Expression')"
try 1 'mtx-name/features.tsv line 7: gene name .*separates the genes' mtx-name -- ingest mtx-name -o s-name -q

echo "hostile: issue 44: run files from another run"
"$scpipe" fit shards -o run-other --L 2 --chains 1 --starts 1 --burn-in 3 --samples 3 --holdout 0.3 -j 2 -q
rm -rf run-swapped && cp -r run run-swapped && rm -rf run-swapped/fitmask && cp -r run-other/fitmask run-swapped/fitmask
try 1 'run-swapped/fitmask: written by another run' run-swapped -- summarize run-swapped -q
try 1 'run-swapped/fitmask: written by another run' run-swapped -- evaluate run-swapped -o ev-swapped -q
# config.toml is written again by --resume before the mask is read (issue 42's).
SKIP='run-swapped/config\.toml$' try 1 'run-swapped/fitmask: written by another run' run-swapped -- fit shards -o run-swapped --resume "${fitargs[@]}"
# enrich reads an L's consensus of chains where the run has one: these two
# runs have none, so that it reads the chain swapped in.
"$scpipe" fit shards -o run-nc "${fitargs[@]}" --consensus-chains 0
"$scpipe" fit shards -o run-other-nc --L 2 --chains 1 --starts 1 --burn-in 3 --samples 3 --holdout 0.3 -j 2 -q --consensus-chains 0
rm -rf run-swapped && cp -r run-nc run-swapped && rm -rf run-swapped/L02/chain1 && cp -r run-other-nc/L02/chain1 run-swapped/L02/chain1
try 1 "a table copied from another run's fit" run-swapped -- enrich run-swapped -o en-swapped -q

echo "hostile: issue 44: a full disk under ingest"
# The shards of 50 000 cells (most empty) × 10 000 genes need 120 MB of
# data files; a tmpfs of 30 MB of our own holds them not. Root only.
full=$w/full
mkdir -p "$full"
if mount -t tmpfs -o size=30m tmpfs "$full" 2>/dev/null; then
  mkdir mtx-wide
  awk 'BEGIN { print "%%MatrixMarket matrix coordinate integer general"; print "10000 50000 10000"; for (g = 1; g <= 10000; g++) print g, g, 1 }' >mtx-wide/matrix.mtx
  awk 'BEGIN { for (g = 1; g <= 10000; g++) printf "G%d\tgene%d\tGene Expression\n", g, g }' >mtx-wide/features.tsv
  awk 'BEGIN { for (c = 1; c <= 50000; c++) printf "BC%d-1\n", c }' >mtx-wide/barcodes.tsv
  try 1 'not enough free space' mtx-wide -- ingest mtx-wide -o "$full/shards" --min-cell-frac 0 --min-cells 1 -q -j 2
  left=$(ls -A "$full")
  [ -z "$left" ] || fail "ingest onto a full disk left $left"
  umount "$full"
else
  echo "hostile: skipped the full disk: cannot mount a tmpfs (needs root)"
fi

echo "hostile: SIGTERM while fitting"
"$scpipe" fit shards -o run-term --L 2 --chains 1 --starts 1 --burn-in 100000 --samples 10 -j 2 -q >/dev/null 2>term.txt &
fitter=$!
sleep 2
kill -TERM "$fitter"
rc=0
wait "$fitter" || rc=$?
if [ "$rc" -ne 130 ] || ! grep -q -- '--resume' term.txt; then
  fail "fit after SIGTERM: exit $rc, want 130 and a word of --resume"; cat term.txt >&2
fi

echo "hostile: $random_cases random byte changes"
cp -r run run.orig
cp -r mtx mtx.orig
files=()
while IFS= read -r f; do files+=("$f"); done < <(find run mtx -type f | LC_ALL=C sort)
commands=(summarize enrich evaluate report resume)
for ((i = 0; i < random_cases; i++)); do
  f=${files[RANDOM % ${#files[@]}]}
  size=$(stat -c %s "$f")
  [ "$size" -gt 0 ] || continue
  off=$(( (RANDOM * 32768 + RANDOM) % size ))
  old=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
  new=$(( old ^ (1 + RANDOM % 255) ))
  printf "\\$(printf '%03o' "$new")" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
  case "$f" in
  mtx/*)
    try any '' mtx -- ingest mtx -o s-random --force -q -j 2 ;;
  *)
    c=${commands[RANDOM % ${#commands[@]}]}
    case "$c" in
    summarize) SKIP='run/(summary\.tsv|selection\.svg)$' try any '' run shards -- summarize run -q -j 2 ;;
    enrich) try any '' run shards -- enrich run -o e-random --force -q ;;
    evaluate) try any '' run shards -- evaluate run -o v-random --force -q -j 2 ;;
    report) try any '' run shards -- report run -o r-random.html --force -q ;;
    resume) try any '' shards -- fit shards -o run --resume "${fitargs[@]}" ;;
    esac ;;
  esac
  if [ "$failures" -gt 0 ]; then
    echo "hostile: after changing byte $off of $f from $old to $new" >&2
    break
  fi
  case "$f" in
  mtx/*) cp "mtx.orig/${f#mtx/}" "$f" ;;
  *)
    if [ "$c" = summarize ] || [ "$c" = resume ]; then # they write in the run
      rm -rf run
      cp -r run.orig run
    else
      cp "run.orig/${f#run/}" "$f"
    fi ;;
  esac
done

if [ "$failures" -gt 0 ]; then
  echo "hostile: $failures failures" >&2
  exit 1
fi
echo "hostile: ok"
