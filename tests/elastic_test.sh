#!/usr/bin/env bash
# Elastic resume of `cclab train`: a checkpoint written by N ranks resumed by M (4 -> 3 and 2 -> 4). The
# training continues — the first resumed step's loss stays near where the checkpoint left off, far below a
# fresh model's — and the replicas stay bitwise identical and in lockstep with a single-process step.
# Then rank 0 is killed repeatedly while it writes checkpoints: every checkpoint left under its final name
# must validate (atomic write: temporary file, fsync, rename).
set -u
source "$(dirname "$0")/check.sh"
mpi_test_setup "$@"
train=(train --model mlp --batch 32 --lr 0.1 --quiet)

# loss of the step in CSV column 3, by step number
loss_at() { awk -F, -v s="$2" '$1 == s { print $3 }' "$1"; }

elastic() {
  local from=$1 to=$2 name="elastic-$1-to-$2"
  rm -rf "ck$from"
  "${run[@]}" -np "$from" "$cclab" "${train[@]}" --steps 30 --checkpoint-dir "ck$from" --checkpoint-every 30 \
    --csv "before$from.csv" >/dev/null 2>&1
  check "$name" 0 "elastic resume: checkpoint written by $from ranks, now $to.*bitwise identical on all $to ranks after every step: PASS.*single-process step .*: PASS" -- bash -c \
    "${run[*]} -np $to \"$cclab\" ${train[*]} --steps 34 --resume ck$from --validate --csv after$from.csv 2>&1 | tr '\n' ' '"
  local first last resumed
  first=$(loss_at "before$from.csv" 1)
  last=$(loss_at "before$from.csv" 30)
  resumed=$(loss_at "after$from.csv" 31)
  # Continued: the resumed loss is closer to the checkpoint's than to a fresh model's.
  check "$name-loss-continues" 0 "continues" -- python3 -c "
first, last, resumed = $first, $last, $resumed
print(f'fresh {first:.4f}, at checkpoint {last:.4f}, first resumed step {resumed:.4f}')
assert first - last > 0.1, 'the run did not learn enough to tell a reset apart'
assert abs(resumed - last) < abs(resumed - first), 'the loss went back towards a fresh model'
print('continues')"
}
elastic 4 3
elastic 2 4

# Kill rank 0 in the middle of writing a checkpoint (the moment its temporary file appears); whatever is
# left under a final name must be whole, and resuming from the directory must work.
for round in 1 2 3; do
  rm -rf kill
  "${run[@]}" -np 2 "$cclab" train --model mlp --steps 100000 --checkpoint-dir kill --checkpoint-every 2 --keep 1000 \
    --quiet >/dev/null 2>&1 &
  job=$!
  caught=0
  for _ in $(seq 20000); do
    if [[ $(ls kill/ 2>/dev/null | grep -c 'cclab$') -ge $round ]] && compgen -G "kill/*.tmp" >/dev/null; then
      pkill -9 -f -- "^$cclab train --model mlp --steps 100000" 2>/dev/null
      caught=1
      break
    fi
    sleep 0.002
  done
  [[ $caught == 1 ]] || pkill -9 -f -- "^$cclab train --model mlp --steps 100000" 2>/dev/null
  wait "$job" 2>/dev/null
  partial=$(compgen -G "kill/*.tmp" | wc -l)
  echo "     round $round: killed while writing: $caught, partial temporary files left: $partial"
  check "killed-writer-$round" 0 "OK" -- bash -c "[[ $caught == 1 ]] && \"$cclab\" checkpoint show kill/ckpt-*.cclab"
  newest=$(ls kill/ckpt-*.cclab 2>/dev/null | tail -1)
  step=$((10#$(basename "${newest:-ckpt-0.cclab}" .cclab | cut -d- -f2)))
  check "killed-writer-$round-resume" 0 "resumed from kill/ckpt-0*$step.cclab at step $step" -- "${run[@]}" -np 2 \
    "$cclab" train --model mlp --resume kill --steps "$((step + 2))" --quiet
done
exit $fail
