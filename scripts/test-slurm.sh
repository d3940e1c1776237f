#!/usr/bin/env bash
# Runs scripts/slurm/ on a real SLURM: a controller and a node on this
# machine, set up from nothing under a temporary folder, and checks that
# the job chain ingest.sbatch -> fit-array.sbatch -> summarize.sbatch gives
# what a direct `scpipe fit` of the same settings gives.
#
#   scripts/test-slurm.sh           (as root; .ci/run runs it)
#
# It installs Debian's slurm-wlm and munge when they are missing, starts
# munged, slurmctld and slurmd on localhost with a generated slurm.conf
# (every file, socket and port its own), simulates a small single-cell
# dataset, submits ingest (which also prepares the run), a job array of one
# task per (L, chain) and a dependent summarize, and pre-empts one task of
# the array the way SLURM does before a time limit (SIGTERM to the batch
# shell): the task checkpoints, requeues itself and resumes. Then it checks
# that every job and task completed, that the pre-empted task resumed from
# its checkpoint, and that codes.parquet and cells.parquet of every fit,
# selection.svg and summary.tsv (all but its seconds column) equal those of
# a direct `scpipe fit`. It stops every daemon it started, by pid, and
# removes its folder, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

say() { printf 'test-slurm: %s\n' "$*" >&2; }
fail() {
  say "FAIL: $*"
  exit 1
}

# --- SLURM and MUNGE ---------------------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
  fail "run as root: it installs slurm-wlm and munge when missing, and slurmd runs jobs as root here"
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  say "installing slurm-wlm and munge (Debian packages)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

state=$(mktemp -d /tmp/scpipe-slurm.XXXXXXXX)
chmod 755 "$state" # munged refuses a socket in a folder others cannot enter
pids=()            # daemons started here, in order
stop_all() {
  local status=$?
  set +e
  if [ -n "${SLURM_CONF:-}" ] && [ -S "$state/run/munge.socket" ]; then
    scancel --quiet --full --user=root 2>/dev/null # jobs left by a failure: let slurmd end their steps
    for _ in $(seq 50); do
      [ -z "$(squeue -h 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  local i pid
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$state"
  exit $status
}
trap stop_all EXIT
trap 'exit 130' INT TERM

mkdir -m 700 "$state/etc" "$state/log" "$state/lib" "$state/ctld" "$state/spool"
mkdir -m 755 "$state/run" "$state/bin" "$state/work"
go build -o "$state/bin/scpipe" ./cmd/scpipe
export PATH=$state/bin:$PATH

dd if=/dev/urandom of="$state/etc/munge.key" bs=1024 count=1 status=none
chmod 400 "$state/etc/munge.key"
munged -F --key-file="$state/etc/munge.key" --socket="$state/run/munge.socket" \
  --pid-file="$state/run/munged.pid" --log-file="$state/log/munged.log" \
  --seed-file="$state/lib/munged.seed" >"$state/log/munged.out" 2>&1 &
pids+=($!)

# Two free ports for slurmctld and slurmd (nothing answers on them).
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
}
ctld_port=$(free_port)
slurmd_port=$(free_port)
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done

# One node of 4 CPUs (config_overrides lets it claim more than the machine
# has), so that several array tasks run at once. A requeued job waits
# cred_expire seconds (120 by default) before it may start again.
export SLURM_CONF=$state/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=scpipetest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/run/munge.socket,cred_expire=5
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/run/slurmctld.pid
SlurmdPidFile=$state/run/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1,kill_invalid_depend
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
InactiveLimit=0
KillWait=10
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=4 RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
for _ in $(seq 50); do [ -S "$state/run/munge.socket" ] && break; sleep 0.1; done
[ -S "$state/run/munge.socket" ] || fail "munged did not start: $(cat "$state/log/munged.out")"
slurmctld -D -i -f "$SLURM_CONF" >"$state/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$state/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  [ "$(sinfo -h -N -o %t 2>/dev/null)" = idle ] && break
  sleep 0.2
done
[ "$(sinfo -h -N -o %t 2>/dev/null)" = idle ] || fail "the node is not idle: $(sinfo -N 2>&1); $(tail -20 "$state/log/slurmctld.log" "$state/log/slurmd.log")"
say "SLURM $(sinfo -V | cut -d' ' -f2) up: slurmctld on port $ctld_port, slurmd on $slurmd_port"

# --- the job chain ------------------------------------------------------------
cd "$state/work"
scpipe simulate --quiet -o sim --kind singlecell --cells 2000 --genes 600 --L 4 --seed 11
cat >fit.toml <<'EOF'
L = "2..4"
chains = 2
burn_in = 100
samples = 200
starts = 2
start_sweeps = 3
holdout = 0.02
checkpoint_every = 2
# The consensus stage runs in a whole-run fit only (after a job array,
# scpipe fit --resume builds it): the array and the direct fit compared
# here build none.
consensus_chains = 0
EOF
Ls=(2 3 4)
chains=2
fits=$((${#Ls[@]} * chains))
# Each job: 1 CPU (so SCPIPE_THREADS=1), little memory, a short limit;
# these flags override the scripts' #SBATCH lines, as a user's would.
small=(--cpus-per-task=1 --mem=300M --time=10)
slurm=$repo/scripts/slurm
ingest=$(sbatch --parsable "${small[@]}" "$slurm/ingest.sbatch" sim shards --quiet -- run --config fit.toml --quiet)
array=$(sbatch --parsable "${small[@]}" --dependency="afterok:$ingest" --array="0-$((fits - 1))" "$slurm/fit-array.sbatch" shards run)
summarize=$(sbatch --parsable "${small[@]}" --dependency="afterany:$array" "$slurm/summarize.sbatch" run)
say "submitted ingest $ingest, array $array (tasks 0-$((fits - 1))), summarize $summarize"

# Pre-empt task 3 (L=3, chain 2) once its fit has checkpointed: SIGTERM to
# the batch shell alone, as --signal=B:TERM@120 sends before a time limit.
# The checkpoint is watched closely (the fit lasts a second or two); the
# queue only now and then, and a squeue that fails (a busy controller)
# counts as jobs still queued.
preempt=3
preempt_dir=run/L03/chain2
show() { scontrol show job "$1" 2>/dev/null; }
queued() { squeue -h -j "$ingest,$array,$summarize" 2>/dev/null || echo "squeue failed"; }
deadline=$((SECONDS + 240))
signalled=
polls=0
while :; do
  if [ -z "$signalled" ] && [ -f "$preempt_dir/state.ckpt" ]; then
    # scancel may report the signalled job as already completing (status
    # 229) although the shell got the signal: the task's log tells.
    scancel --signal=TERM --batch "${array}_$preempt" || true
    signalled=1
    say "pre-empted task ${array}_$preempt at $(date +%T)"
  fi
  if [ $((polls++ % 20)) -eq 0 ] || [ -n "$signalled" ]; then
    [ -n "$(queued)" ] || break
    [ $SECONDS -lt $deadline ] || fail "the jobs did not finish in 240 s: $(squeue)"
  fi
  if [ -n "$signalled" ]; then sleep 0.5; else sleep 0.02; fi
done

# --- checks -------------------------------------------------------------------
logs() { tail -n 30 -- *.log "$state/log/slurmctld.log" >&2 || true; }
state_of() { show "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
exit_of() { show "$1" | sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p'; }
for job in "$ingest" "$summarize"; do
  if [ "$(state_of "$job")" != COMPLETED ] || [ "$(exit_of "$job")" != 0:0 ]; then
    logs
    fail "job $job: $(state_of "$job"), exit $(exit_of "$job")"
  fi
done
for ((task = 0; task < fits; task++)); do
  info=$(show "${array}_$task")
  st=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
  ex=$(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"$info")
  restarts[task]=$(sed -n 's/.* Restarts=\([0-9]*\).*/\1/p' <<<"$info")
  if [ "$st" != COMPLETED ] || [ "$ex" != 0:0 ]; then
    logs
    fail "task ${array}_$task: $st, exit $ex"
  fi
done
[ -n "$signalled" ] || fail "task $preempt never wrote a checkpoint to pre-empt"
for ((task = 0; task < fits; task++)); do
  want=0
  [ $task -eq $preempt ] && want=1
  [ "${restarts[task]}" = $want ] || fail "task ${array}_$task restarted ${restarts[task]} times, want $want"
done
log=scpipe-fit-${array}_$preempt.log
grep -q "requeueing task ${array}_$preempt" "$log" || fail "task $preempt did not requeue itself: $(cat "$log")"
from=$(grep 'msg=fitting' "$log" | tail -1 | sed -n 's/.*from_sweep=\([0-9]*\).*/\1/p')
[ "${from:-0}" -gt 0 ] || fail "the requeued task $preempt did not resume from its checkpoint: $(cat "$log")"
say "every job and task completed; task $preempt resumed from sweep $from"

# The same settings in one process, on the same shards.
scpipe fit shards -o direct --config fit.toml -j 2 2>direct.log || fail "the direct fit failed: $(cat direct.log)"
for L in "${Ls[@]}"; do
  for ((chain = 1; chain <= chains; chain++)); do
    dir=$(printf 'L%02d/chain%d' "$L" "$chain")
    for f in codes.parquet cells.parquet; do
      cmp -s "direct/$dir/$f" "run/$dir/$f" || fail "$dir/$f differs from the direct fit's"
    done
  done
done
cmp -s direct/selection.svg run/selection.svg || fail "selection.svg differs from the direct fit's"
# summary.tsv but for its seconds column (clock time).
timeless() { awk -F'\t' -v OFS='\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "seconds") s = i } { if (s) $s = ""; print }' "$1"; }
if ! diff <(timeless direct/summary.tsv) <(timeless run/summary.tsv) >&2; then
  fail "summary.tsv differs from the direct fit's"
fi
[ "$(wc -l <run/summary.tsv)" -eq $((fits + 1)) ] || fail "summary.tsv has $(wc -l <run/summary.tsv) lines, want $((fits + 1))"
say "PASS: $fits fits through ingest -> array -> summarize equal a direct scpipe fit (in ${SECONDS} s)"
