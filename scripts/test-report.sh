#!/usr/bin/env bash
# Looks at a report as a person does: builds a small run with the scpipe
# binary (simulate -> ingest -> fit -> enrich -> report), opens the report in
# headless Chromium (Debian's chromium, installed when missing), takes a
# screenshot, and fails on a console message (the page has no script, so
# any is an error) or a blank page (report's TestScreenshot decodes the
# PNG). Run by .ci/run; KEEP=DIR keeps the run and the screenshot in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "test-report: installing chromium (apt-get)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

if [ -n "${KEEP:-}" ]; then
  work="$KEEP"
  rm -rf "$work"
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
scpipe="$work/scpipe"
go build -o "$scpipe" ./cmd/scpipe

"$scpipe" simulate -q -o "$work/sim" --cells 1500 --genes 400 --L 4 --code-density 0.08 --usage-density 0.3 --seed 3
"$scpipe" ingest -q "$work/sim" -o "$work/shards"
"$scpipe" fit -q "$work/shards" -o "$work/run" --L 2..5 --chains 2 --burn-in 20 --samples 20 -j 2
# A library of the planted programs (truth/programs.tsv: gene_id, gene_name,
# then one 0/1 column per program) for enrich to find.
awk -F'\t' 'NR > 1 { for (j = 3; j <= NF; j++) if ($j == 1) set[j] = set[j] "\t" $2 }
  END { for (j in set) print "planted_program_" (j - 2) "\tplanted by scpipe simulate" set[j] }' \
  "$work/sim/truth/programs.tsv" > "$work/planted.gmt"
"$scpipe" enrich -q "$work/run" -o "$work/run-enrich" --gmt "$work/planted.gmt"
html=$("$scpipe" report -q "$work/run")

profile="$work/chromium-profile"
shot="$work/report.png"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --enable-logging=stderr --v=0 \
  --window-size=1280,3000 --screenshot="$shot" "file://$html" 2> "$work/chromium.log" || {
  cat "$work/chromium.log"
  echo "test-report: chromium failed on $html"
  exit 1
}
if grep -E 'Uncaught|:CONSOLE' "$work/chromium.log"; then
  echo "test-report: the page logged to the console (above): $html"
  exit 1
fi
if [ ! -s "$shot" ]; then
  cat "$work/chromium.log"
  echo "test-report: no screenshot of $html"
  exit 1
fi
SCPIPE_REPORT_SCREENSHOT="$shot" go test -count=1 -run '^TestScreenshot$' ./report/
echo "test-report: $html renders (screenshot $shot)"
