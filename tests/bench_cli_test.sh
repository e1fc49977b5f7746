#!/usr/bin/env bash
# `cclab bench` under mpirun as users run it: the nccl-tests-shaped table with every result checked, the
# prediction column, one line for bad input, and a stalled rank that must not hang the others.
set -u
cclab=$1
mpirun=${2:-mpirun}
run=("$mpirun" --oversubscribe --allow-run-as-root)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/check.sh"

check bench-all 0 "(Out of bounds values : 0 OK.*){6}# Summary.*engine/native" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" bench -b 1K -e 256K -f 16 -n 3 -w 1 --algo all | tr '\n' ' '"
check bench-half-avg 0 "(Out of bounds values : 0 OK.*){2}" -- bash -c \
  "${run[*]} -np 3 \"$cclab\" bench -b 7 -e 70K -f 10 -n 2 -w 0 -d half -o avg --algo ring,mpi | tr '\n' ' '"
check bench-bf16-rs 0 "(Out of bounds values : 0 OK.*){2}" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" bench -b 1K -e 64K -f 8 -n 2 -d bfloat16 --collective reduce_scatter --algo ring,mpi | tr '\n' ' '"
check bench-predict 0 "predicted.*error" -- "${run[@]}" -np 2 "$cclab" bench -b 1M -e 1M -n 2 --algo ring \
  --predict "pcie_server:1,gpus=2"
check calibrate 0 "intra-node: alpha .* beta .*wrote" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" calibrate --out \"$dir/t.yaml\" -e 1M -n 3 | tr '\n' ' '"
check calibrated-topology 0 "2 GPUs" -- "$cclab" topology show "$dir/t.yaml"
check bench-predict-calibrated 0 "1048576 .* [-+][0-9]+\.[0-9]%" -- "${run[@]}" -np 2 "$cclab" bench -b 1M -e 1M -n 2 \
  --algo ring --predict "$dir/t.yaml"
check calibrate-one-rank 1 "^cclab: error: calibrate needs at least 2 ranks" -- "${run[@]}" -np 1 "$cclab" calibrate \
  --out "$dir/x.yaml"
check bench-bad-algo 1 "^cclab: error: --algo 'fastest'" -- "${run[@]}" -np 2 "$cclab" bench --algo fastest
check bench-bad-predict 1 "^cclab: error: --predict dgx_a100:1 has 8 GPUs, the MPI world 2 ranks" -- \
  "${run[@]}" -np 2 "$cclab" bench --predict dgx_a100:1

# A rank that stops (SIGSTOP: alive, silent) mid-run: the other ends within its --timeout with one line that
# names the op and the peer it waits on, and the job ends instead of hanging.
"${run[@]}" -np 2 "$cclab" bench -b 16M -e 16M -n 100000 -w 0 -c 0 --algo ring --timeout 3 >"$dir/stall.log" 2>&1 &
job=$!
for _ in $(seq 50); do
  pids=$(pgrep -f -- "$cclab bench -b 16M" | sort -n)
  [[ $(wc -w <<<"$pids") -ge 2 ]] && break
  sleep 0.2
done
sleep 2
victim=$(tail -1 <<<"$pids")
kill -STOP "$victim" 2>/dev/null
start=$SECONDS
( sleep 60; kill -9 "$job" 2>/dev/null ) &
guard=$!
wait "$job"
status=$?
elapsed=$((SECONDS - start))
kill -9 "$victim" 2>/dev/null
kill "$guard" 2>/dev/null
if [[ $status -ne 0 && $elapsed -lt 30 ]] && grep -qE "rank [01]: mpi executor: rank [01] made no progress for 3 s, waiting on op [0-9]+ \((send to|recv_reduce from|recv from) rank [01]" "$dir/stall.log"; then
  echo "ok   bench-stalled-rank (ended after ${elapsed} s)"
else
  echo "FAIL bench-stalled-rank: status $status after ${elapsed} s, output:"
  tail -20 "$dir/stall.log"
  fail=1
fi
exit $fail
