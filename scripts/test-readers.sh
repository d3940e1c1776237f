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
#     X_scpipe in the file's order of cells.
#
#   scripts/test-readers.sh           (.ci/run runs it)
#
# It installs python3-anndata (apt-get, with sudo when not root) and the npm
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
if ! "$py" -c 'import anndata' 2>/dev/null; then
  say "installing python3-anndata (Debian)"
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || fail "not root and no sudo: cannot install python3-anndata"
    as_root=(sudo)
  fi
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq python3-anndata >/dev/null
fi
"$py" -c 'import anndata' || fail "python3-anndata is missing after the install"
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

# --- a small run -------------------------------------------------------------------
state=$(mktemp -d /tmp/scpipe-readers.XXXXXXXX)
trap 'rm -rf "$state"' EXIT
go build -o "$state/scpipe" ./cmd/scpipe
sc() { "$state/scpipe" "$1" -q "${@:2}"; }
input=$data/pbmc3k-600
[ -d "$input" ] || fail "$input is missing (the real data beside the repository)"
sc ingest "$input" -o "$state/shards"
sc fit "$state/shards" -o "$state/run" --L 2..3 --chains 1 --burn-in 8 --samples 8 --holdout 0.02
sc export "$state/run" -o "$state/run.h5ad" --cnmf "$state/cnmf"
L=$("$py" -c "import csv,sys; print(next(r['L'] for r in csv.DictReader(open(sys.argv[1]), delimiter='\t') if r['recommended'] == 'yes'))" "$state/run/summary.tsv")
fit=$(printf '%s/run/L%02d/chain1' "$state" "$L")
mapfile -t tables < <(find "$state/run" -name '*.parquet' ! -path "$fit/cells.parquet" ! -path "$fit/codes.parquet" | sort)
say "reading $((${#tables[@]} + 2)) Parquet tables with hyparquet and DuckDB"
node "$readers/check-parquet.mjs" "$state/tables.json" "$fit/cells.parquet" "$fit/codes.parquet" "${tables[@]}" ||
  fail "a reader disagrees (above)"

# --- the AnnData export --------------------------------------------------------------
ones=$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['ones'])" "$state/run/shards.json")
"$py" scripts/readers/check-h5ad.py "$state/run.h5ad" "$state/tables.json" "$ones" || fail "anndata disagrees with the tables (above)"
sc ingest "$state/run.h5ad" -o "$state/back" --min-cell-frac 0
back=$(sc info "$state/back" | awk '$1 == "nnz" {print $2}')
[ "$back" = "$ones" ] || fail "scpipe ingest read $back ones back from the export, the shards hold $ones"

# --- --into: a user's own file, written by anndata, keeps everything -------------------
"$py" scripts/readers/into.py make "$state/user.h5ad" "$state/tables.json"
sc export "$state/run" -o "$state/user-programs.h5ad" --into "$state/user.h5ad" --L "$L"
"$py" scripts/readers/into.py check "$state/user.h5ad" "$state/user-programs.h5ad" "$state/tables.json" ||
  fail "export --into lost or changed something of the user's file (above)"
say "ok: every table read by hyparquet and DuckDB alike; the export (L = $L) read by anndata and by scpipe ingest; --into kept the user's file"
