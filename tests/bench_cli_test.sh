#!/usr/bin/env bash
# `cclab bench` under mpirun as users run it: the nccl-tests-shaped table with every result checked, the
# prediction column, one line for bad input, and a stopped or killed rank that must not hang the others.
set -u
cclab=$1
mpirun=${2:-mpirun}
run=("$mpirun" --oversubscribe --allow-run-as-root)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/check.sh"

check bench-all 0 "(Out of bounds values : 0 OK.*){6}# Summary.*engine/mpi" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" bench -b 1K -e 256K -f 16 -n 3 -w 1 --algo all | tr '\n' ' '"
# What does not apply is named once, with why, and gets no table of n/a rows.
check bench-all-skips 0 "^# --algo all: [0-9]+ do not apply here: .*nvls \(.* rows n/a: 0$" -- bash -c \
  "out=\$(${run[*]} -np 2 \"$cclab\" bench -b 1K -e 1K -n 1 -w 0 --algo all);
   echo \"\$(grep '^# --algo all' <<<\"\$out\") rows n/a: \$(grep -c 'n/a: ' <<<\"\$out\")\""
check bench-half-avg 0 "(Out of bounds values : 0 OK.*){2}" -- bash -c \
  "${run[*]} -np 3 \"$cclab\" bench -b 7 -e 70K -f 10 -n 2 -w 0 -d half -o avg --algo ring,mpi | tr '\n' ' '"
check bench-bf16-rs 0 "(Out of bounds values : 0 OK.*){2}" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" bench -b 1K -e 64K -f 8 -n 2 -d bfloat16 --collective reduce_scatter --algo ring,mpi | tr '\n' ' '"
# Alltoall: the engine's pairwise plan, MPI_Alltoall and Gloo's, every result checked; no in-place form (n/a),
# sizes rounded down to whole blocks, redop none, as nccl-tests prints them.
check bench-alltoall 0 "(Out of bounds values : 0 OK.*){3}" -- bash -c \
  "${run[*]} -np 3 \"$cclab\" bench -b 1K -e 96K -f 8 -n 2 --collective alltoall --algo pairwise,mpi,gloo | tr '\n' ' '"
check bench-alltoall-row 0 "^ +1020 +255 +float +none +-1 .* n/a +n/a +n/a +n/a" -- "${run[@]}" -np 3 "$cclab" \
  bench -b 1K -e 1K -n 1 --collective alltoall --algo pairwise
# Gather, scatter (root 1, uneven blocks) and sendrecv against MPI_Gatherv, MPI_Scatterv and MPI_Sendrecv.
for c in gather scatter sendrecv; do
  check "bench-$c" 0 "(Out of bounds values : 0 OK.*){2}" -- bash -c \
    "${run[*]} -np 3 \"$cclab\" bench -b 10 -e 10K -f 32 -n 2 --collective $c --root 1 --algo all | tr '\n' ' '"
done
check bench-predict 0 "predicted.*error" -- "${run[@]}" -np 2 "$cclab" bench -b 1M -e 1M -n 2 --algo ring \
  --predict "pcie_server:1,gpus=2"
# -J and --csv: nccl-tests' JSON schema (compare reads it back) and CSV, each point with its runs' min <= p50 <=
# p99 (the slowest rank's time per run).
check bench-json-csv 0 "JSON written.*CSV written" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" bench -b 1K -e 64K -f 8 -n 5 --algo ring -J \"$dir/bench.json\" --csv \"$dir/bench.csv\" | tr '\n' ' '"
check bench-json-percentiles 0 "^rows: 3 ordered: True$" -- python3 -c "
import json; d = json.load(open('$dir/bench.json'))
its = [r['out_of_place']['iterations'] for r in d['results']]
print('rows:', len(its), 'ordered:', all(0 < i['min'] <= i['p50'] <= i['p99'] for i in its))"
check bench-csv-columns 0 "^size,count,type,redop,time_us,algbw_GBps,busbw_GBps,time_min_us,time_p50_us,time_p99_us$" -- \
  head -1 "$dir/bench.csv"
check bench-json-compare 0 "median \|error\|" -- "$cclab" compare "$dir/bench.json" --topology "pcie_server:1,gpus=2"
check bench-json-two-algos 1 "^cclab: error: -J and --csv write one algorithm's rows" -- "${run[@]}" -np 2 "$cclab" \
  bench --algo ring,mpi -J "$dir/x.json"
# An argument error comes before any output: the error is the first line, without the table's header.
check bench-json-all-first 0 "^cclab: error: -J and --csv" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" bench --algo all -J \"$dir/x.json\" 2>&1 | head -1"
check calibrate 0 "intra-node: alpha .* beta .*wrote" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" calibrate --out \"$dir/t.yaml\" -e 1M -n 3 | tr '\n' ' '"
check calibrated-topology 0 "2 GPUs" -- "$cclab" topology show "$dir/t.yaml"
# Under load: every rank sending to its neighbour at once, said in the file's header.
check calibrate-loaded 0 "every rank sending to its neighbour at once.*intra-node: alpha .* beta" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" calibrate --load all --out \"$dir/loaded.yaml\" -e 1M -n 3 >/dev/null && tr '\n' ' ' < \"$dir/loaded.yaml\""
check calibrate-bad-load 105 "--load: loaded not in" -- "$cclab" calibrate --load loaded
check bench-predict-calibrated 0 "1048576 .* [-+][0-9]+\.[0-9]%" -- "${run[@]}" -np 2 "$cclab" bench -b 1M -e 1M -n 2 \
  --algo ring --predict "$dir/t.yaml"
# calibrate from nccl-tests logs (no MPI): a fitted topology, which compare then reads.
check calibrate-from-logs 0 "nvswitch link model fitted to them" -- "$cclab" calibrate --from-nccl-tests \
  "$(dirname "$0")/data/nccl_tests/all_reduce_current.txt" --topology dgx_a100:1 --out "$dir/fitted.yaml"
check compare-fitted 0 "median \|error\|" -- "$cclab" compare "$(dirname "$0")/data/nccl_tests/all_reduce_current.txt" \
  --topology "$dir/fitted.yaml" --algo ring
check calibrate-one-rank 1 "^cclab: error: calibrate needs at least 2 ranks" -- "${run[@]}" -np 1 "$cclab" calibrate \
  --out "$dir/x.yaml"
check bench-bad-algo 1 "^cclab: error: --algo 'fastest'" -- "${run[@]}" -np 2 "$cclab" bench --algo fastest
check bench-bad-predict 1 "^cclab: error: --predict dgx_a100:1 has 8 GPUs, the MPI world 2 ranks" -- \
  "${run[@]}" -np 2 "$cclab" bench --predict dgx_a100:1
check bench-bad-transport 1 "^cclab: error: --transport 'ucx' \(valid: mpi, nccl\)" -- \
  "${run[@]}" -np 2 "$cclab" bench --transport ucx
if ! nvidia-smi -L >/dev/null 2>&1; then
  # No GPU here: one clear line, from rank 0, for the NCCL transport (on GPU machines scripts/gpu-check.sh runs it).
  check bench-nccl-without-gpu 1 \
    "^cclab: error: --transport nccl: (no usable CUDA device|this cclab was built without CUDA)" -- \
    "${run[@]}" -np 2 "$cclab" bench --transport nccl -e 1K
fi

# Faults mid-run: one rank of a long ring benchmark gets SIGNAL; the job must end within the --timeout (plus
# launcher slack) with a non-zero status and the expected line, instead of hanging.
fault() {
  local name=$1 signal=$2 pattern=$3 log="$dir/$1.log"
  # stdbuf: rank 0's table reaches the log as it is printed, so the fault lands inside the timed loop
  # (a rank stopped during start-up would hang MPI_Init, not the executor this checks).
  "${run[@]}" -np 3 stdbuf -oL "$cclab" bench -b 16M -e 16M -n 100000 -w 0 -c 0 --algo ring --timeout 3 \
    >"$log" 2>&1 &
  local job=$! pids=""
  for _ in $(seq 150); do
    pids=$(pgrep -f -- "^$cclab bench -b 16M" | sort -n)
    [[ $(wc -w <<<"$pids") -ge 3 ]] && grep -q "(elements)" "$log" && break
    sleep 0.2
  done
  sleep 1
  local victim
  victim=$(tail -1 <<<"$pids")
  kill "-$signal" "$victim" 2>/dev/null
  local start=$SECONDS
  ( sleep 60; kill -9 "$job" 2>/dev/null ) &
  local guard=$!
  wait "$job"
  local status=$? elapsed=$((SECONDS - start))
  kill -9 "$victim" 2>/dev/null
  kill "$guard" 2>/dev/null
  if [[ $status -ne 0 && $elapsed -lt 30 ]] && grep -qE "$pattern" "$log"; then
    echo "ok   $name (ended after ${elapsed} s)"
  else
    echo "FAIL $name: status $status after ${elapsed} s, output:"
    tail -20 "$log"
    fail=1
  fi
}

# Stopped (SIGSTOP: alive, silent): a neighbour's executor gives up after --timeout, naming the op and peer.
fault bench-stalled-rank STOP \
  "rank [0-2]: mpi executor: rank [0-2] made no progress for 3 s, waiting on op [0-9]+ \((send to|recv_reduce from|recv from) rank [0-2]"
# Killed (SIGKILL): the launcher sees the death and ends the job, or a survivor's MPI call fails first.
fault bench-killed-rank KILL "exited on signal 9|rank [0-2]: .*(failed|made no progress)"
exit $fail
