#!/bin/bash
# Issue #40's MPI target (docs/performance.md "MPI ranks"): a k = 16 fat tree (320 chips, 1,024
# generator hosts, uniform at load 0.5), one process against N MPI ranks, alternating, R times.
#   R=2 D=30 N=2 testbenches/bench/mpi_k16.sh build/fabricsim
# Prints per run: wall (/usr/bin/time), CPU of all processes, and perf.json's MPI figures.
set -euo pipefail
F=$(realpath "${1:?usage: mpi_k16.sh BUILD/fabricsim}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SETS=(--set sim.traffic_thread=false --set sim.warmup=2us --set "sim.duration=${D:-30}us"
      --set stats.occupancy_interval=0ns --set topology.kind=fat_tree --set topology.k=16
      --set traffic.load=0.5)
for rep in $(seq "${R:-2}"); do
  for n in 1 "${N:-2}"; do
    launch=()
    [ "$n" -gt 1 ] && launch=(mpirun --oversubscribe -np "$n")
    /usr/bin/time -f "%e %U %S" -o "$OUT/time" "${launch[@]}" "$F" run \
      "$ROOT/configs/switch_51t2.yaml" --out "$OUT/r$n" "${SETS[@]}" > /dev/null 2>&1
    python3 - "$OUT" "$n" "$rep" <<'PY'
import json, sys
out, n, rep = sys.argv[1:]
p = json.load(open(f"{out}/r{n}/perf.json"))
t = open(f"{out}/time").read().split()
print(f"ranks={n} rep={rep} wall={t[0]} s cpu={float(t[1]) + float(t[2]):.2f} s "
      f"rank0_cpu={p['cpu_s']:.2f} others_cpu={p['mpi_cpu_s']:.2f} wait={p['mpi_wait_s']:.2f} "
      f"busy={p['mpi_busy_s']:.2f} windows={p['worker_windows']} cut={p['cross_side_calls']} "
      f"messages={p['mpi_exchanges']} bytes={p['mpi_bytes']} "
      f"load={open('/proc/loadavg').read().split()[0]}")
PY
  done
done
cmp -s "$OUT/r1/summary.json" "$OUT/r${N:-2}/summary.json" && echo "summary.json: the same"
