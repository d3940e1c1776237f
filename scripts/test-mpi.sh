#!/usr/bin/env bash
# Runs `scpipe fit --mpi` under a real MPI (Debian's Open MPI) on this
# machine and checks that 1, 2 and 3 ranks give, byte for byte, what a
# plain `scpipe fit` of the same settings gives.
#
#   scripts/test-mpi.sh           (.ci/run runs it)
#
# It installs libopenmpi-dev and openmpi-bin when they are missing (with
# sudo when not root), builds scpipe with -tags mpi, runs the tests of the
# binding (package internal/mpi) under mpirun, simulates a small dataset,
# fits it once without MPI and then with `mpirun -np N --oversubscribe` for
# N = 1, 2, 3, and compares codes.parquet, cells.parquet, selection.svg and
# summary.tsv (all but its seconds column) byte for byte; then resumes a
# 2-rank run's last fit from its checkpoint without MPI, stops a 2-rank fit
# with SIGTERM and resumes it on 3 ranks from the ranks' checkpoints, and
# checks that 4 ranks over 3 cell blocks are refused. Shards of three
# samples fitted with the samples model on 2 ranks match one process too.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

say() { printf 'test-mpi: %s\n' "$*" >&2; }
fail() {
  say "FAIL: $*"
  exit 1
}

# --- Open MPI ------------------------------------------------------------------
if ! command -v mpirun >/dev/null || ! [ -f /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] && ! pkg-config --exists ompi-c 2>/dev/null; then
  say "installing libopenmpi-dev and openmpi-bin (Debian packages)"
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || fail "not root and no sudo: cannot install libopenmpi-dev and openmpi-bin"
    as_root=(sudo)
  fi
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends \
    libopenmpi-dev openmpi-bin pkg-config >/dev/null
fi
command -v mpirun >/dev/null || fail "mpirun is missing after the install"

state=$(mktemp -d /tmp/scpipe-mpi.XXXXXXXX)
trap 'rm -rf "$state"' EXIT
# mpirun refuses root unless told; CI runs as root.
run_mpi=(mpirun --oversubscribe --bind-to none)
if [ "$(id -u)" -eq 0 ]; then
  run_mpi+=(--allow-run-as-root)
fi

# --- the binding -----------------------------------------------------------------
say "building with -tags mpi"
go vet -tags mpi ./internal/mpi/ ./pipeline/ ./cmd/scpipe/
go build -tags mpi -o "$state/scpipe" ./cmd/scpipe
go test -c -tags mpi -o "$state/mpi.test" ./internal/mpi/
for np in 1 2 3; do
  "${run_mpi[@]}" -np "$np" "$state/mpi.test" -test.run TestWorld -test.count 1 >"$state/mpi-test.log" 2>&1 ||
    fail "the binding's test under mpirun -np $np: $(cat "$state/mpi-test.log")"
done
say "binding: collectives correct on 1, 2 and 3 ranks"

# --- fits: 1, 2 and 3 ranks against one process -------------------------------
cd "$state"
# 8192 genes make cell blocks of 4096 cells (4 MiB each): 9000 cells are 3.
./scpipe simulate --quiet -o sim --shards --cells 9000 --genes 8192 --L 4 --seed 5
# The fit's model for counts (dropout noise, 8 cell levels, a housekeeping
# code, held-out entries; given, since simulated binary shards would get the
# paper's model), shorter, from codes seeded from cells: the cluster
# start reads its cells the same way (summed from their ranks) but takes
# 15 s a fit at this size; pipeline's TestFitMPIMatchesFit runs it. The
# consensus stage runs in a fit in one process only (after fit --mpi,
# scpipe fit --resume builds it): neither fit compared here builds one.
fit=(--L 3..4 --chains 1 --burn-in 6 --samples 4 --starts 2 --start-sweeps 2 --init data --checkpoint-every 3 -j 1 --quiet
  --noise dropout --housekeeping on --consensus-chains 0)
./scpipe fit sim/shards -o direct "${fit[@]}" 2>direct.log || fail "the direct fit failed: $(cat direct.log)"
timeless() { awk -F'\t' -v OFS='\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "seconds") s = i } { if (s) $s = ""; print }' "$1"; }
for np in 1 2 3; do
  start=$(date +%s.%N)
  "${run_mpi[@]}" -np "$np" ./scpipe fit --mpi sim/shards -o "mpi$np" "${fit[@]}" >"mpi$np.log" 2>&1 ||
    fail "fit --mpi on $np ranks failed: $(cat "mpi$np.log")"
  end=$(date +%s.%N)
  for dir in L03/chain1 L04/chain1; do
    for f in codes.parquet cells.parquet; do
      cmp -s "direct/$dir/$f" "mpi$np/$dir/$f" || fail "$np ranks: $dir/$f differs from the single process's"
    done
  done
  cmp -s direct/selection.svg "mpi$np/selection.svg" || fail "$np ranks: selection.svg differs from the single process's"
  diff <(timeless direct/summary.tsv) <(timeless "mpi$np/summary.tsv") >&2 ||
    fail "$np ranks: summary.tsv differs from the single process's"
  say "$np ranks: codes, cells, selection and summary identical to one process ($(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s)"
done
# Shards of three samples, fitted with each sample's gene levels (the
# samples model, on by default): 2 ranks give what one process gives.
./scpipe simulate --quiet -o simS --shards --kind singlecell --samples 3 --cells 9000 --genes 8192 --seed 6
./scpipe fit simS/shards -o directS "${fit[@]}" 2>directS.log || fail "the direct fit of three samples failed: $(cat directS.log)"
grep -q '^samples_model = true' directS/config.toml || fail "the fit of three samples does not use the samples model"
"${run_mpi[@]}" -np 2 ./scpipe fit --mpi simS/shards -o mpiS "${fit[@]}" >mpiS.log 2>&1 ||
  fail "fit --mpi of three samples on 2 ranks failed: $(cat mpiS.log)"
for dir in L03/chain1 L04/chain1; do
  for f in codes.parquet cells.parquet; do
    cmp -s "directS/$dir/$f" "mpiS/$dir/$f" || fail "three samples, 2 ranks: $dir/$f differs from the single process's"
  done
done
say "three samples with the samples model, 2 ranks: codes and cells identical to one process"
# A run the MPI fit checkpointed resumes without MPI to the same result:
# the checkpoints hold the whole fit.
rm -f mpi2/L04/chain1/{codes,cells,trace}.parquet mpi2/summary.tsv
./scpipe fit sim/shards -o mpi2 "${fit[@]}" --resume 2>resume.log || fail "resuming the 2-rank run without MPI failed: $(cat resume.log)"
for f in codes.parquet cells.parquet; do
  cmp -s "direct/L04/chain1/$f" "mpi2/L04/chain1/$f" || fail "L04/chain1/$f of the 2-rank run resumed by one process differs"
done
say "a 2-rank run resumed by one process: identical"
# SIGTERM to mpirun (which passes it to every rank, as a scheduler's
# pre-emption does): the ranks checkpoint their cells and stop; 3 ranks
# resume and finish as one process does.
long=(--L 3 --chains 1 --burn-in 1500 --samples 20 --starts 2 --start-sweeps 2 --init data --checkpoint-every 1000 -j 1
  --noise dropout --housekeeping on)
./scpipe fit sim/shards -o direct-long "${long[@]}" --quiet 2>direct-long.log || fail "the direct fit failed: $(cat direct-long.log)"
"${run_mpi[@]}" -np 2 ./scpipe fit --mpi sim/shards -o stopped "${long[@]}" >stopped.log 2>&1 &
mpirun_pid=$!
for _ in $(seq 300); do
  grep -q 'msg=fitting' stopped.log && break
  sleep 0.1
done
sleep 1
kill -TERM "$mpirun_pid" 2>/dev/null ||
  fail "the 2-rank fit ended before SIGTERM could stop it (too short for this machine?): $(tail -3 stopped.log)"
if wait "$mpirun_pid"; then
  fail "the fit signalled with SIGTERM finished instead of stopping (a slow machine? see stopped.log)"
fi
parts=$(ls stopped/L03/chain1/ | grep -c '^state\.part-' || true)
[ "$parts" -eq 2 ] || fail "the stopped 2-rank fit left $parts part checkpoints, want 2: $(tail -5 stopped.log)"
"${run_mpi[@]}" -np 3 ./scpipe fit --mpi sim/shards -o stopped "${long[@]}" --resume >resumed.log 2>&1 ||
  fail "resuming the stopped run on 3 ranks failed: $(cat resumed.log)"
for f in codes.parquet cells.parquet; do
  cmp -s "direct-long/L03/chain1/$f" "stopped/L03/chain1/$f" || fail "L03/chain1/$f of the run stopped on 2 ranks and resumed on 3 differs"
done
say "a run stopped by SIGTERM on 2 ranks (per-rank checkpoints) and resumed on 3: identical"
# More ranks than cell blocks are refused with a clear message.
if "${run_mpi[@]}" -np 4 ./scpipe fit --mpi sim/shards -o mpi4 "${fit[@]}" >mpi4.log 2>&1; then
  fail "4 ranks over 3 cell blocks were not refused"
fi
grep -q "run at most 3 ranks" mpi4.log || fail "4 ranks over 3 cell blocks: no clear message: $(cat mpi4.log)"
say "ok"
