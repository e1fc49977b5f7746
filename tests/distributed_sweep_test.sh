#!/usr/bin/env bash
# `cclab predict` and `cclab regress` under mpirun, as users split a sweep over processes: the points are
# shared out and gathered on rank 0, whose output is byte for byte the serial run's; the other ranks print
# nothing.
# Usage: distributed_sweep_test.sh CCLAB SOURCE_DIR [MPIRUN]
src=$(realpath "$2")
source "$(dirname "$0")/check.sh"
mpi_test_setup "$1" "${3:-mpirun}"

# Sim points included (fault_failed_links): each rank forks its own SimGrid processes.
for scenario in leaf_spine_oversub fault_lost_nodes fault_failed_links; do
  "$cclab" predict "$src/scenarios/$scenario.yaml" --format json > "serial-$scenario.json"
  for np in 2 3; do
    check "predict-np$np-$scenario" 0 "^same$" -- bash -c "${run[*]} -np $np \"$cclab\" predict \
      \"$src/scenarios/$scenario.yaml\" --format json | cmp - serial-$scenario.json && echo same"
  done
done
# The table once (rank 0's), and the files written once.
check predict-table-once 0 "^1$" -- bash -c "${run[*]} -np 2 \"$cclab\" predict \
  \"$src/scenarios/leaf_spine_oversub.yaml\" --out out | grep -c '^# wrote'"
check predict-files 0 "^same$" -- bash -c "\"$cclab\" predict \"$src/scenarios/leaf_spine_oversub.yaml\" \
  --out serial-out >/dev/null && cmp out/predict.json serial-out/predict.json && echo same"

# regress: a baseline recorded serially passes when checked over three processes, with one report.
scenarios=("$src/scenarios/leaf_spine_oversub.yaml" "$src/scenarios/fault_lost_nodes.yaml")
"$cclab" regress "${scenarios[@]}" --baseline baseline.json --update >/dev/null
check regress-np3 0 "33 within 1.0%, 0 improved, 0 regressed, 0 new, 0 missing" -- "${run[@]}" -np 3 "$cclab" regress "${scenarios[@]}" \
  --baseline baseline.json
check regress-np3-once 0 "^1$" -- bash -c "${run[*]} -np 3 \"$cclab\" regress ${scenarios[*]} \
  --baseline baseline.json | grep -c 'leaf_spine_oversub (' "
# A baseline point 10 points more efficient fails the gate on rank 0, and mpirun exits with its status.
python3 -c "
import json; b = json.load(open('baseline.json')); b['points'][0]['efficiency'] += 0.1
json.dump(b, open('higher.json', 'w'))"
check regress-np2-fails 1 "1 regressed" -- "${run[@]}" -np 2 "$cclab" regress "${scenarios[@]}" \
  --baseline higher.json
exit $fail
