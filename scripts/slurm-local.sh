#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the scheduler tests
# (cmd/table and cmd/batchsampler TestSlurm*) and for trying the array
# scripts of docs/scale-out.md by hand.
#
#   scripts/slurm-local.sh start    # munged (as user munge), slurmctld, slurmd; prints export SLURM_CONF=...
#                                   # (and BATCHSAMPLER_SLURM_STARTED=1 when it started them)
#   scripts/slurm-local.sh status   # sinfo of the cluster
#   scripts/slurm-local.sh stop     # stops what start started (by the pids it recorded)
#
# Needs Debian's slurm-wlm and munge (apt-get install slurm-wlm munge) and
# root (or sudo -n): the daemons run as root (SlurmUser=root), munged as
# user munge. Everything the cluster writes (slurm.conf, state, spool, logs,
# pids) is under $BATCHSAMPLER_SLURM_DIR (default /tmp/batchsampler-slurm);
# /etc/slurm is not touched. The tests find the cluster through $SLURM_CONF,
# or $BATCHSAMPLER_SLURM_DIR/slurm.conf when it is unset.
#
# The configuration: SlurmUser=root, ProctrackType=proctrack/linuxproc,
# TaskPlugin=task/none, SelectType=select/cons_tres (cores consumable,
# memory not), no accounting, one node with the CPUs and memory `slurmd -C`
# reports, one partition.
set -euo pipefail

dir=${BATCHSAMPLER_SLURM_DIR:-/tmp/batchsampler-slurm}
conf=$dir/slurm.conf
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "slurm-local: needs root or password-less sudo (the daemons run as root)" >&2
    exit 2
  fi
fi

need() {
  local missing=()
  for b in munged slurmctld slurmd sbatch sinfo scontrol; do
    command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || missing+=("$b")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "slurm-local: missing ${missing[*]}: apt-get install slurm-wlm munge" >&2
    exit 2
  fi
}

# sinfo_ok: the controller answers and the node is up (idle, mixed or allocated).
sinfo_ok() {
  SLURM_CONF=$conf timeout 10 sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated|completing)'
}

start_munge() {
  if echo test | timeout 5 munge 2>/dev/null | timeout 5 unmunge >/dev/null 2>&1; then
    echo "slurm-local: munged already answers" >&2
    return
  fi
  if [ ! -s /etc/munge/munge.key ]; then
    if command -v mungekey >/dev/null || [ -x /usr/sbin/mungekey ]; then
      $sudo /usr/sbin/mungekey --create --keyfile /etc/munge/munge.key
    else
      $sudo /usr/sbin/create-munge-key
    fi
  fi
  $sudo chown munge:munge /etc/munge/munge.key
  $sudo chmod 0400 /etc/munge/munge.key
  $sudo mkdir -p /run/munge /var/log/munge /var/lib/munge
  $sudo chown munge:munge /run/munge /var/log/munge /var/lib/munge
  $sudo chmod 0755 /run/munge
  $sudo runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 50); do
    if echo test | munge 2>/dev/null | unmunge >/dev/null 2>&1; then
      $sudo cp /run/munge/munged.pid "$dir/munged.pid" 2>/dev/null || true
      return
    fi
    sleep 0.1
  done
  echo "slurm-local: munged does not answer (see /var/log/munge/munged.log)" >&2
  exit 1
}

write_conf() {
  local node cpus mem
  node=$(hostname -s)
  read -r cpus mem < <(/usr/sbin/slurmd -C | awk '{for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }} /^NodeName/ {print v["CPUs"], v["RealMemory"]}')
  $sudo mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  $sudo tee "$conf" >/dev/null <<EOF
# Written by scripts/slurm-local.sh: a one-node cluster for the tests.
ClusterName=batchsampler
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=${BATCHSAMPLER_SLURMCTLD_PORT:-6817}
SlurmdPort=${BATCHSAMPLER_SLURMD_PORT:-6818}
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

case "${1:-}" in
start)
  need
  $sudo mkdir -p "$dir"
  if [ -f "$conf" ] && sinfo_ok; then
    echo "slurm-local: the cluster of $conf is up" >&2
    echo "export SLURM_CONF=$conf"
    exit 0
  fi
  start_munge
  write_conf
  $sudo env SLURM_CONF="$conf" /usr/sbin/slurmctld -f "$conf"
  $sudo env SLURM_CONF="$conf" /usr/sbin/slurmd -f "$conf"
  for _ in $(seq 150); do
    if sinfo_ok; then
      echo "slurm-local: cluster up ($conf)" >&2
      echo "export SLURM_CONF=$conf BATCHSAMPLER_SLURM_STARTED=1"
      exit 0
    fi
    state=$(SLURM_CONF=$conf sinfo -h -N -o '%T' 2>/dev/null || true)
    case "$state" in
    down* | drain*) SLURM_CONF=$conf $sudo scontrol update nodename="$(hostname -s)" state=resume 2>/dev/null || true ;;
    esac
    sleep 0.2
  done
  echo "slurm-local: the node did not come up in 30 s; logs in $dir/log:" >&2
  tail -n 20 "$dir"/log/*.log >&2 || true
  exit 1
  ;;
status)
  SLURM_CONF=$conf sinfo
  ;;
stop)
  for d in slurmd slurmctld munged; do
    f=$dir/$d.pid
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if [ -n "$pid" ] && $sudo kill -0 "$pid" 2>/dev/null; then
      $sudo kill "$pid"
    fi
    $sudo rm -f "$f"
  done
  echo "slurm-local: stopped" >&2
  ;;
*)
  echo "usage: scripts/slurm-local.sh start|status|stop" >&2
  exit 2
  ;;
esac
