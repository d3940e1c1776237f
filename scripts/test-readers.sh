#!/usr/bin/env bash
# Reads a small run's outputs with the readers users have, none of which
# shares code with arrow-go or with scpipe's HDF5 writer:
#
#   * every Parquet table of the run (codes, cells and trace of every fit)
#     with hyparquet (+ hyparquet-compressors; the JavaScript reader behind
#     web dataset viewers) and DuckDB (@duckdb/node-api), which must read
#     them whole and agree on every value;
#   * the AnnData export (scpipe export) with Debian's python3-anndata:
#     shapes, barcodes, gene ids and values equal to cells.parquet and
#     codes.parquet as DuckDB read them, X's ones those of the shards; and
#     scpipe ingest reads the export back to the same matrix;
#   * export --into a user's file that anndata wrote (cells shuffled, its
#     own X, obsm, layers, obs, var and uns): every key and value kept,
#     X_scpipe in the file's order of cells;
#   * the TSV tables (export --cnmf, enrich) of a run whose barcodes, gene
#     symbols and library term hold double quotes, with Debian's
#     python3-pandas as cNMF's loader reads them (check-tsv.py).
#
#   scripts/test-readers.sh           (.ci/run runs it)
#
# It installs python3-anndata and python3-pandas (apt-get, with sudo when not root) and the npm
# packages (pinned, into $SCPIPE_READERS, default ~/.cache/scpipe-readers,
# outside the repository) when they are missing. About half a minute on two
# cores, plus the installs.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
data=${SCPIPE_DATA:-$repo/../shared/data}

say() { printf 'test-readers: %s\n' "$*" >&2; }
fail() {
  say "FAIL: $*"
  exit 1
}

# --- readers ---------------------------------------------------------------------
py=/usr/bin/python3 # Debian's, which python3-anndata installs into
if ! "$py" -c 'import anndata, pandas' 2>/dev/null; then
  say "installing python3-anndata and python3-pandas (Debian)"
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || fail "not root and no sudo: cannot install python3-anndata and python3-pandas"
    as_root=(sudo)
  fi
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq python3-anndata python3-pandas >/dev/null
fi
"$py" -c 'import anndata, pandas' || fail "python3-anndata or python3-pandas is missing after the install"
command -v node >/dev/null && command -v npm >/dev/null || fail "node and npm are needed (Debian: apt-get install nodejs npm)"
readers=${SCPIPE_READERS:-${XDG_CACHE_HOME:-$HOME/.cache}/scpipe-readers}
packages=(hyparquet@1.33.0 hyparquet-compressors@1.1.2 @duckdb/node-api@1.5.6-r.1)
if ! [ -f "$readers/installed" ] || [ "$(cat "$readers/installed")" != "${packages[*]}" ]; then
  say "installing ${packages[*]} (npm) into $readers"
  mkdir -p "$readers"
  (cd "$readers" && [ -f package.json ] || echo '{"private": true}' >"$readers/package.json")
  npm install --prefix "$readers" --no-audit --no-fund --silent "${packages[@]}" >/dev/null
  echo "${packages[*]}" >"$readers/installed"
fi
cp scripts/readers/check-parquet.mjs "$readers/" # node resolves imports beside the script

# --- two small runs ---------------------------------------------------------------
state=$(mktemp -d /tmp/scpipe-readers.XXXXXXXX)
trap 'rm -rf "$state"' EXIT
go build -o "$state/scpipe" ./cmd/scpipe
sc() { "$state/scpipe" "$1" -q "${@:2}"; }
input=$data/pbmc3k-600
[ -d "$input" ] || fail "$input is missing (the real data beside the repository)"

# check RUN L: every table of RUN read by both readers; the export of fit
# L (chain 1) read by anndata and by scpipe ingest.
check() {
  local run=$1 L=$2 fit tables ones back
  fit=$(printf '%s/L%02d/chain1' "$run" "$L")
  mapfile -t tables < <(find "$run" -name '*.parquet' ! -path "$fit/cells.parquet" ! -path "$fit/codes.parquet" | sort)
  say "$(basename "$run"): reading $((${#tables[@]} + 2)) Parquet tables with hyparquet and DuckDB"
  node "$readers/check-parquet.mjs" "$run.json" "$fit/cells.parquet" "$fit/codes.parquet" "${tables[@]}" ||
    fail "a reader disagrees (above)"
  sc export "$run" -o "$run.h5ad" --L "$L" --chain 1 # chain 1, whose tables the JSON holds (export defaults to the consensus)
  ones=$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['ones'])" "$run/shards.json")
  "$py" scripts/readers/check-h5ad.py "$run.h5ad" "$run.json" "$ones" || fail "anndata disagrees with the tables (above)"
  sc ingest "$run.h5ad" -o "$run-back" --min-cell-frac 0
  back=$(sc info "$run-back" | awk '$1 == "nnz" {print $2}')
  [ "$back" = "$ones" ] || fail "scpipe ingest read $back ones back from the export, the shards hold $ones"
}

# Real counts, the single-cell model (dropout noise with levels, a
# housekeeping code), two L and an L recommended from held-out entries.
sc ingest "$input" -o "$state/shards"
sc fit "$state/shards" -o "$state/run" --L 2..3 --chains 1 --burn-in 8 --samples 8 --holdout 0.02
L=$("$py" -c "import csv,sys; print(next(r['L'] for r in csv.DictReader(open(sys.argv[1]), delimiter='\t') if r['recommended'] == 'yes'))" "$state/run/summary.tsv")
check "$state/run" "$L"
sc export "$state/run" --cnmf "$state/cnmf"
# Binary planted data, the paper's model (symmetric noise, no housekeeping
# code), two layers: the layers' tables too.
sc simulate -o "$state/sim" --cells 300 --genes 200 --L 4
sc ingest "$state/sim" -o "$state/simshards" --min-cell-frac 0
sc fit "$state/simshards" -o "$state/layers" --layers 4,2 --burn-in 5 --samples 5 --chains 1 --holdout 0
check "$state/layers" 4
# Several samples (scpipe simulate --samples, ingested through its samples
# file): cells.parquet's sample column, obs["sample"] in the export.
sc simulate -o "$state/samples-sim" --kind singlecell --cells 600 --genes 300 --L 3 --samples 3 --sample-programs 1
sc ingest --samples "$state/samples-sim/samples.tsv" -o "$state/samples-shards"
sc fit "$state/samples-shards" -o "$state/samples" --L 3 --burn-in 5 --samples 5 --chains 1 --holdout 0
check "$state/samples" 3
cp "$state/run.json" "$state/tables.json"

# --- --into: a user's own file, written by anndata, keeps everything -------------------
"$py" scripts/readers/into.py make "$state/user.h5ad" "$state/tables.json"
sc export "$state/run" -o "$state/user-programs.h5ad" --into "$state/user.h5ad" --L "$L" --chain 1
"$py" scripts/readers/into.py check "$state/user.h5ad" "$state/user-programs.h5ad" "$state/tables.json" ||
  fail "export --into lost or changed something of the user's file (above)"
# --- names that need quoting: the TSV tables read by pandas ------------------------
# Barcodes 10 and 20 and two symbols begin with a double quote, and a
# library's term holds two: read_csv(sep="\t"), as cNMF's loader calls it,
# once merged ten cells into one row of the usages without an error.
q=$state/quoted
mkdir -p "$q/mtx"
cp "$input/matrix.mtx.gz" "$q/mtx/"
gzip -dc "$input/barcodes.tsv.gz" | awk 'NR == 10 || NR == 20 { $0 = "\"" $0 } { print }' >"$q/mtx/barcodes.tsv"
gzip -dc "$input/genes.tsv.gz" | awk -F '\t' 'BEGIN { OFS = "\t" } $NF == "S100A9" || $NF == "LYZ" { $NF = "\"" $NF "\"" } { print }' >"$q/mtx/genes.tsv"
term='Myeloid "quoted" markers'
{ cat "$data/genesets/celltype-markers.gmt"; printf '%s\t\t"S100A9"\t"LYZ"\tS100A8\tCD14\tFCN1\n' "$term"; } >"$q/lib.gmt"
sc ingest "$q/mtx" -o "$q/shards"
sc fit "$q/shards" -o "$q/run" --L 2..3 --chains 1 --burn-in 8 --samples 8
sc export "$q/run" --cnmf "$q/cnmf"
sc enrich "$q/run" -o "$q/enrich" --gmt "$q/lib.gmt"
"$py" scripts/readers/check-tsv.py "$q/cnmf" "$q/enrich" "$q/mtx/barcodes.tsv" "$q/mtx/genes.tsv" "$term" ||
  fail "pandas read the TSV tables otherwise than they were written (above)"

say "ok: every table of the three runs read by hyparquet and DuckDB alike; their exports read by anndata and by scpipe ingest; --into kept the user's file; the TSV tables of quoted names read by pandas"
