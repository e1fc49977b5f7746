#!/usr/bin/env bash
# `cclab train` under mpirun, as users run it: the validation verdicts on 2 and 4 ranks for every allreduce
# algorithm, a resume that continues bitwise, a corrupted and a truncated checkpoint refused, the output
# files, and bad input refused with one line.
set -u
source "$(dirname "$0")/check.sh"
mpi_test_setup "$@"

verdicts="bitwise identical on all [0-9]+ ranks after every step: PASS.*single-process step .*: PASS"
for algo in ring tree hierarchical leader halving_doubling auto; do
  check "validate-np4-$algo" 0 "$verdicts" -- bash -c \
    "${run[*]} -np 4 \"$cclab\" train --model mlp --steps 4 --reference-steps 4 --validate --algo $algo | tr '\n' ' '"
done
check validate-np4-hierarchical-2x2 0 "$verdicts" -- bash -c \
  "${run[*]} -np 4 \"$cclab\" train --model mlp --steps 3 --validate --algo hierarchical --topology pcie_server:2,gpus=2 --quiet | tr '\n' ' '"
check validate-np2-resnet 0 "$verdicts.*prediction error for buckets >= 1 MiB: median" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" train --model resnet-tiny --steps 5 --validate --quiet | tr '\n' ' '"
check validate-np2-fp16 0 "fp16 compression.*PASS" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" train --model mlp --steps 3 --fp16 --validate --quiet | tr '\n' ' '"

# Resume: 4 steps, checkpoint, then on to 8, must end bitwise where an uninterrupted 8-step run ends.
full=$("${run[@]}" -np 2 "$cclab" train --model mlp --steps 8 --quiet | grep -o "hash: [0-9a-f]*")
check resume-checkpoint 0 "checkpoint .*ckpt-000000004.cclab" -- "${run[@]}" -np 2 "$cclab" train --model mlp \
  --steps 4 --checkpoint-dir ck --checkpoint-every 2 --keep 1 --quiet
check resume-bitwise 0 "resumed from ck/ckpt-000000004.cclab at step 4.*$full" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" train --model mlp --steps 8 --resume ck --quiet | tr '\n' ' '"
check resume-kept-one 0 "^1$" -- bash -c "ls ck | grep -c cclab"

# A damaged checkpoint is refused, naming the file and the damage; nothing is trained from it.
cp ck/ckpt-000000004.cclab bad.cclab
printf '\xff' | dd of=bad.cclab bs=1 seek=2000 conv=notrunc status=none
check resume-corrupted 1 "^cclab: error: checkpoint bad.cclab: checksum mismatch" -- \
  "${run[@]}" -np 2 "$cclab" train --model mlp --steps 8 --resume bad.cclab
head -c 3000 ck/ckpt-000000004.cclab >short.cclab
check resume-truncated 1 "^cclab: error: checkpoint short.cclab: truncated" -- \
  "${run[@]}" -np 2 "$cclab" train --model mlp --steps 8 --resume short.cclab
check resume-other-model 1 "written with model = \"mlp\", this run has \"resnet-tiny\"" -- \
  "${run[@]}" -np 2 "$cclab" train --model resnet-tiny --steps 8 --resume ck

# Outputs: a CSV row per step, a Chrome trace, an MLflow run with metrics.
check outputs 0 "wrote steps.csv.*wrote trace.json" -- bash -c \
  "${run[*]} -np 2 \"$cclab\" train --model mlp --steps 3 --csv steps.csv --timeline trace.json --mlflow mlruns --quiet | tr '\n' ' '"
check csv-rows 0 "^4$" -- bash -c "wc -l <steps.csv"
check trace-json 0 "allreduce bucket" -- python3 -c "import json; print(json.load(open('trace.json')))"
check mlflow-run 0 "status: 3" -- bash -c "cat mlruns/*/*/meta.yaml"
check mlflow-metrics 0 "^[0-9]+ [0-9.e+-]+ 3$" -- bash -c "tail -1 mlruns/*/*/metrics/loss"

check bad-model 1 "^cclab: error: --model 'vit' \\(valid: mlp, resnet-tiny\\)" -- \
  "${run[@]}" -np 2 "$cclab" train --model vit
check bad-algo 1 "^cclab: error: --algo 'fastest'" -- "${run[@]}" -np 2 "$cclab" train --algo fastest
exit $fail
