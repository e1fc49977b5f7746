#!/usr/bin/env bash
# The CLI as users run it: the acceptance flow of plan --dump / verify, and one clear line for bad input.
set -u
cclab=$1
src=$(cd "$(dirname "$0")/.." && pwd)  # the source tree: scenarios/
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/check.sh"

check plan-dump 0 "verify: OK" -- "$cclab" plan --topology dgx_a100:32 --collective allreduce --algo ring --size 1GiB --dump "$dir/p.json"
check verify-good 0 "^OK" -- "$cclab" verify "$dir/p.json"

# One op removed from rank 5, and one peer changed on rank 7: verify names the rank and the op. (On a smaller
# plan, so that editing the file stays quick.)
check plan-small 0 "verify: OK" -- "$cclab" plan --topology dgx_a100:2 --algo ring --size 64MiB --dump-explicit "$dir/small.json"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
doc = json.load(open(f"{d}/small.json"))
removed = json.loads(json.dumps(doc))
del removed["ranks"][5]["ops"][3]
for op in removed["ranks"][5]["ops"]:
    op["deps"] = [x - (x > 3) for x in op.get("deps", []) if x != 3]
json.dump(removed, open(f"{d}/removed.json", "w"))
changed = doc
for op in changed["ranks"][7]["ops"]:
    if op["kind"] == "send":
        op["peer"] = (op["peer"] + 5) % 16
        break
json.dump(changed, open(f"{d}/changed.json", "w"))
PY
check verify-removed 1 "rank [0-9]+ op [0-9]+" -- "$cclab" verify "$dir/removed.json"
# The compact form: dumped, verified (every op, and the compact checks alone), and a ring that is not a
# permutation refused with the field named.
check plan-compact 0 "compact form" -- "$cclab" plan --topology pcie_server:2,gpus=2 --algo hierarchical --size 1MiB --dump "$dir/hier.json"
check verify-compact 0 "^OK: hierarchical" -- "$cclab" verify "$dir/hier.json"
check verify-compact-patterns 0 "preconditions" -- "$cclab" verify --patterns "$dir/hier.json"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
doc = json.load(open(f"{d}/hier.json"))
doc["passes"][0]["rings"][0][1] = doc["passes"][0]["rings"][0][0]
json.dump(doc, open(f"{d}/badring.json", "w"))
PY
check verify-compact-bad 1 "passes\[0\]\.rings\[0\]: member 0 appears twice" -- "$cclab" verify "$dir/badring.json"
check verify-changed 1 "rank 7 op [0-9]+" -- "$cclab" verify "$dir/changed.json"

check default-main-job 0 "256 ranks" -- "$cclab" plan
check plan-unchunked 0 "params: chunk=0 \(unchunked: one chunk per block\)" -- "$cclab" plan --topology dgx_a100:1 --algo ring --chunk 0 --size 1MiB
check algorithms 0 "halving_doubling" -- "$cclab" algorithms
# With a topology: what applies there, on how many channels, and why the rest does not.
check algorithms-here 0 "allreduce +ring +Ring +yes, [0-9]+ channels by default.*allreduce +nvls +NVLS +no: .*Hopper" -- bash -c "\"$cclab\" algorithms --topology dgx_a100:2 | tr '\n' ' '"
# docs/algorithm-table.md is what the descriptors say now.
check algorithms-doc 0 "^$" -- diff <("$cclab" algorithms --markdown) "$src/docs/algorithm-table.md"
check workload-show 0 "resnet50: 161 tensors, 25557032 parameters" -- "$cclab" workload show resnet50
check predict-small 0 "16 auto .*wrote" -- bash -c "\"$cclab\" predict --set topology.nodes=[1,2] --out \"$dir/pred\" --timeline \"$dir/step.json\" | tr '\n' ' '"
if command -v gnuplot >/dev/null; then
  check predict-plots 0 "efficiency.png.*efficiency.svg" -- bash -c "ls \"$dir/pred\" | tr '\n' ' '"
fi
check predict-csv 0 "^scenario,gpus,algorithm,step_ms" -- head -1 "$dir/pred/predict.csv"
check predict-json 0 "rows: 8" -- python3 -c "import json; print('rows:', len(json.load(open('$dir/pred/predict.json'))))"
check predict-timeline 0 "^ranks: 16 rows: 32 buckets: [1-9]" -- python3 -c "
import json; d = json.load(open('$dir/step.json'))
print('ranks:', len({e['pid'] for e in d}), 'rows:', sum(e['name'] == 'thread_name' for e in d),
      'buckets:', sum(e.get('cat') == 'communication' for e in d if e['pid'] == 0))"
# Fault events on the timeline: a straggler computes slower and the others wait for its gradients; degraded
# links span the step on a "faults" row; a lost node puts the whole job (loss, restart, redo, checkpoint
# writes) on a "job" row.
# (No compute slowdown under overlapping collectives and no variation between GPUs here: the ratio is the
# straggler factor's alone.)
"$cclab" predict "$src/scenarios/fault_stragglers.yaml" --set faults.stragglers.factor=2.0 \
  --set communication.algorithm=ring --set compute.overlap_slowdown=0 --set compute.jitter=0 \
  --timeline "$dir/straggler.json" >/dev/null 2>&1
check timeline-straggler 0 "^straggler: rank 0 .* waits 2x$" -- python3 -c "
import json; d = json.load(open('$dir/straggler.json'))
names = {e['pid']: e['args']['name'] for e in d if e['name'] == 'process_name'}
end = lambda pid: max(e['ts'] + e['dur'] for e in d if e['pid'] == pid and e['name'] == 'backward')
wait = [e for e in d if e['pid'] == 1 and e['name'].startswith('wait for the stragglers')][0]
ok = abs(wait['ts'] - end(1)) < 1e-3 and abs(wait['ts'] + wait['dur'] - end(0)) < 1e-3
print('straggler:', names[0], 'waits', '%gx' % round(end(0) / end(1), 3) if ok else 'wrong')"
"$cclab" predict "$src/scenarios/fault_degraded_links.yaml" --set faults.degrade.bandwidth=0.5 \
  --set communication.algorithm=ring --timeline "$dir/degraded.json" >/dev/null 2>&1
check timeline-degraded 0 "^faults: [1-9][0-9]* link\(s\) degraded: bandwidth x0.5" -- python3 -c "
import json; d = json.load(open('$dir/degraded.json'))
pid = [e['pid'] for e in d if e['name'] == 'process_name' and e['args']['name'] == 'faults'][0]
print('faults:', [e['name'] for e in d if e['pid'] == pid and e['ph'] == 'X'][0])"
"$cclab" predict "$src/scenarios/neighbour_job.yaml" --set topology.nodes=4 --set topology.neighbour=16 \
  --set communication.algorithm=ring --set backend=ab --timeline "$dir/neighbour.json" >/dev/null 2>&1
check timeline-neighbour 0 "^neighbour job: [1-9][0-9]* flows, [1-9][0-9]* streams on the shared fabric; beside [1-9][0-9]* buckets$" -- python3 -c "
import json; d = json.load(open('$dir/neighbour.json'))
pid = [e['pid'] for e in d if e['name'] == 'process_name' and e['args']['name'] == 'neighbour job'][0]
spans = [e for e in d if e['pid'] == pid and e['ph'] == 'X']
print('neighbour job: %s; beside %d buckets' % (spans[0]['name'], len(spans) - 1))"
"$cclab" predict "$src/scenarios/fault_lost_nodes.yaml" --set faults.lost_nodes.checkpoint_every=1000 \
  --set faults.lost_nodes.restart=30s --timeline "$dir/lost.json" >/dev/null 2>&1
check timeline-lost-node 0 "^job: lost at [0-9.]+ s, restart 30 s, checkpoints 10 of 2 s, ends [0-9.]+ s$" -- python3 -c "
import json; d = json.load(open('$dir/lost.json'))
pid = [e['pid'] for e in d if e['name'] == 'process_name' and e['args']['name'] == 'job'][0]
job = [e for e in d if e['pid'] == pid and e['ph'] in 'Xi']
lost = [e for e in job if e['ph'] == 'i'][0]
restart = [e for e in job if e['name'] == 'restart'][0]
writes = [e for e in job if e.get('cat') == 'checkpoint']
print('job: lost at %.1f s, restart %g s, checkpoints %d of %g s, ends %.1f s' % (lost['ts'] / 1e6,
      restart['dur'] / 1e6, len(writes), writes[0]['dur'] / 1e6, max(e['ts'] + e.get('dur', 0) for e in job) / 1e6))"
check predict-bad-gpu 1 "^cclab: error: <built-in default>: --set compute.gpu: no default compute profile" -- "$cclab" predict --set compute.gpu=k80
check predict-bad-set 1 "expected FIELD=VALUE" -- "$cclab" predict --set nodes
# A sweep's points on several threads give the same output as one thread, byte for byte (sim points included).
for scenario in leaf_spine_oversub fault_lost_nodes fault_failed_links; do
  "$cclab" predict "$src/scenarios/$scenario.yaml" --format json -j 1 > "$dir/serial-$scenario.json"
  check "predict-parallel-$scenario" 0 "^same$" -- bash -c "\"$cclab\" predict \"$src/scenarios/$scenario.yaml\" --format json -j 3 | cmp -s - \"$dir/serial-$scenario.json\" && echo same"
done
check predict-csv-format 0 "^scenario,gpus,algorithm,fp16" -- bash -c "\"$cclab\" predict \"$src/scenarios/pcie_roce.yaml\" --set topology.nodes=1 --format csv | head -1"

# The regression gate: a baseline from one scenario, an unchanged rerun passes, halving the NIC bandwidth
# fails it, doubling it is reported as an improvement, and --junit reports the failures.
cp "$src/scenarios/pcie_roce.yaml" "$dir/gate.yaml"
sed -i 's/nodes: \[1, 2, 4, 8, 16\]/nodes: [1, 2, 4]/' "$dir/gate.yaml"
check regress-no-baseline 1 "no baseline to compare with" -- "$cclab" regress "$dir/gate.yaml" --baseline "$dir/base.json"
check regress-update 0 "updated .*base.json \(24 points\)" -- "$cclab" regress "$dir/gate.yaml" --baseline "$dir/base.json" --update
check regress-same 0 "24 points: 24 within 1.0%, 0 improved, 0 regressed" -- "$cclab" regress "$dir/gate.yaml" --baseline "$dir/base.json"
sed -E 's/"gpus": *[0-9]+/"gpus":1e30/' "$dir/base.json" > "$dir/bad-base.json"
check regress-bad-baseline 1 "bad-base.json: a point's gpus is not a GPU count: 1e\+?30" -- "$cclab" regress "$dir/gate.yaml" --baseline "$dir/bad-base.json"
sed 's/nic: 25Gbps/nic: 12.5Gbps/' "$dir/gate.yaml" > "$dir/slow.yaml"
check regress-halved-nic 1 "REGRESSED  pcie_roce \| nodes=2 algorithm=ring fp16=false: efficiency" -- "$cclab" regress "$dir/slow.yaml" --baseline "$dir/base.json" --junit "$dir/junit.xml"
check regress-junit 0 "^failures: [1-9][0-9]* of 24" -- python3 -c "
import xml.etree.ElementTree as ET; root = ET.parse('$dir/junit.xml').getroot()
print('failures:', root.get('failures'), 'of', root.get('tests'))"
sed 's/nic: 25Gbps/nic: 50Gbps/' "$dir/gate.yaml" > "$dir/fast.yaml"
check regress-improved 0 "improved  pcie_roce \| nodes=2 algorithm=ring" -- "$cclab" regress "$dir/fast.yaml" --baseline "$dir/base.json"
sed 's/nodes: \[1, 2, 4\]/nodes: [1, 2, 8]/' "$dir/gate.yaml" > "$dir/moved.yaml"
check regress-new-missing 1 "8 new, 8 missing" -- "$cclab" regress "$dir/moved.yaml" --baseline "$dir/base.json"
check workload-bad 1 "^cclab: error: unknown workload 'alexnet'" -- "$cclab" workload show alexnet
check topology-show 0 "16 GPUs" -- "$cclab" topology show dgx_a100:2
# NCCL's view of a node: NVLS's AllReduce entry is its 25 us and 8 x 59.5 GB/s x 8/14 (tuning.cc by hand).
check topology-nccl 0 "AllReduce \|.* 25\.0/ 272\.0 \|" -- "$cclab" topology nccl dgx_h100:1
check topology-nccl-graphs 0 "NVLS +8 channels, bwIntra  40\.0 GB/s, bwInter  60\.0 GB/s" -- "$cclab" topology nccl dgx_h100:1
check topology-nccl-unknown 1 "cannot reproduce NCCL's graphs: .*gpu_arch" -- "$cclab" topology nccl pcie_server:1
check topology-dot 0 "digraph" -- "$cclab" topology dot pcie_server:2
"$cclab" topology dump "pcie_server:2,gpus=2,fabric=leaf_spine" -o "$dir/t.yaml"
check topology-file 0 "4 GPUs" -- "$cclab" topology show "$dir/t.yaml"
check auto-table 0 "hierarchical" -- "$cclab" plan --topology dgx_h100:4 --size 256MiB
if "$cclab" sim --help >/dev/null 2>&1; then
  check sim-1-node 0 "halving_doubling +16777216 .*Avg bus bandwidth" -- bash -c "\"$cclab\" sim --topology dgx_a100:1 -b 1KiB -e 16MiB -f 4 | tr '\n' ' '"
  check sim-4-nodes 0 "ring +1048576 .* tree +1048576 .* hierarchical +1048576" -- bash -c "\"$cclab\" sim --topology dgx_a100:4 -b 1MiB -e 4MiB -f 4 | tr '\n' ' '"
  check sim-platform 0 "platform written" -- "$cclab" sim --topology dgx_a100:1 -b 1MiB -e 1MiB --algo ring --dump-platform "$dir/p.xml"
  check sim-bad-factor 1 "^cclab: error: -f 1" -- "$cclab" sim -f 1
  check sim-timeline 0 "timeline of the last point" -- "$cclab" sim --topology dgx_a100:2 -b 4MiB -e 4MiB --algo hierarchical --timeline "$dir/trace.json"
  check sim-timeline-json 0 "^X events: [1-9]" -- python3 -c "import json,sys; d=json.load(open('$dir/trace.json')); print('X events:', sum(e['ph']=='X' for e in d))"
  # Simulated rows in nccl-tests' -J schema: compare reads them back, and without contention (one channel) the
  # α-β model predicts what the simulator measured.
  check sim-json 0 "nccl-tests JSON written" -- "$cclab" sim --topology dgx_h100:2 --algo ring --channels 1 -b 1KiB -e 64MiB -f 64 -J "$dir/sim.json" --csv "$dir/sim.csv"
  check sim-json-compare 0 "median \|error\|: 0\.[0-9]% over 3 sizes" -- "$cclab" compare "$dir/sim.json" --topology dgx_h100:2 --algo ring --channels 1
  check sim-csv 0 "^size,count,type,redop,time_us" -- head -1 "$dir/sim.csv"
  # calibrate's header names what the rows were planned with where the selection became another planner.
  check sim-alltoall-json 0 "nccl-tests JSON written" -- "$cclab" sim --topology dgx_h100:1 --collective alltoall --algo pairwise -b 1MiB -e 64MiB -f 8 -J "$dir/a2a.json"
  check calibrate-alltoall 0 "with algorithm ring \(rows planned with pairwise\)" -- "$cclab" calibrate --from-nccl-tests "$dir/a2a.json" --topology dgx_h100:1 --out "$dir/a2a.yaml"
  # The hypercube's rows are written as hypercube_perf's, which compare plans with the hypercube unasked.
  check sim-hypercube-json 0 "nccl-tests JSON written" -- "$cclab" sim --topology dgx_h100:1 --collective allgather --algo hypercube --channels 1 -b 1KiB -e 64MiB -f 64 -J "$dir/cube.json"
  check sim-hypercube-compare 0 "hypercube_perf runs the hypercube algorithm.*median \|error\|: 0\.[0-9]% over 3 sizes" -- bash -c "'$cclab' compare '$dir/cube.json' --topology dgx_h100:1 --channels 1 | tr '\n' ' '"
  check sim-json-all 1 "one algorithm's rows" -- "$cclab" sim --topology dgx_h100:1 -b 1KiB -e 1KiB -J "$dir/x.json"
fi

# Bad input: one line on stderr, non-zero exit, no crash.
check bad-preset 1 "^cclab: error: .*unknown preset" -- "$cclab" plan --topology dgx_b300:4
check bad-size 1 "^cclab: error: --size" -- "$cclab" plan --topology dgx_a100:1 --size 12XB
check bad-algo 1 "valid: ring, tree" -- "$cclab" plan --topology dgx_a100:1 --algo fastest
check bad-collective 1 "valid: allreduce" -- "$cclab" plan --collective hypercube
check missing-file 1 "nope.json: cannot read the schedule file: no such file" -- "$cclab" verify "$dir/nope.json"
check directory-file 1 "cannot read the topology file: it is a directory" -- "$cclab" topology show "$dir/"
# A device that never ends would hang a reader that trusts it.
check device-file 1 "cannot read the scenario file: it is not a regular file" -- "$cclab" predict /dev/zero
echo '{"collective": "allreduce"' > "$dir/broken.json"
check broken-json 1 "not valid JSON" -- "$cclab" verify "$dir/broken.json"
printf 'vertices:\n  - {name: g, kind: gpu, node: 0, local_rank: 0}\nlinks:\n  - {from: g, to: h, kind: pcie, bandwidth: 1GB/s}\n' > "$dir/bad.yaml"
check bad-yaml 1 "bad.yaml:4: links\[0\].to" -- "$cclab" topology show "$dir/bad.yaml"
check no-subcommand 106 "" -- "$cclab"

# nccl-tests logs against the model: the text table and the -J JSON; a log that does not name its test needs
# --collective; the ring search says why on a DGX-1 mesh.
check compare-text 0 "median \|error\|" -- "$cclab" compare "$src/tests/data/nccl_tests/all_reduce_current.txt" --topology dgx_a100:1 --algo ring
check compare-log-algo 0 "algorithm Ring, NCCL_ALGO=Ring from the log" -- "$cclab" compare "$src/tests/data/nccl_tests/all_reduce_current.txt" --topology dgx_a100:1
check compare-json 0 "reduce_scatter on 8 ranks" -- "$cclab" compare "$src/tests/data/nccl_tests/reduce_scatter.json" --topology dgx_h100:1
check compare-auto 0 "vs dgx_h100:1, from the log's device lines" -- "$cclab" compare "$src/tests/data/nccl_tests/reduce_scatter.json" --topology auto
check compare-auto-default 0 "vs dgx_h100:1, from the log's device lines" -- "$cclab" compare "$src/tests/data/nccl_tests/reduce_scatter.json"
check calibrate-auto 0 "fitting dgx_h100:1, the machine of the logs' device lines" -- "$cclab" calibrate --from-nccl-tests "$src/tests/data/nccl_tests/reduce_scatter.json" --out "$dir/auto_fit.yaml"
check calibrate-auto-two-machines 1 "ran on dgx_h100:1, .* on dgx_a100:1; fit one machine at a time" -- "$cclab" calibrate --from-nccl-tests "$src/tests/data/nccl_tests/reduce_scatter.json" "$src/tests/data/nccl_tests/all_reduce_current.txt" --out "$dir/x.yaml"
check compare-other-gpu 0 "warning: .*NVIDIA H100 80GB HBM3 \(hopper\), but topology 'dgx_a100:1' models ampere" -- "$cclab" compare "$src/tests/data/nccl_tests/reduce_scatter.json" --topology dgx_a100:1
check compare-mute 1 "give --collective" -- "$cclab" compare "$src/tests/data/nccl_tests/all_gather_2019.txt" --topology dgx1_v100:1
check compare-given 0 "allgather on 8 ranks" -- "$cclab" compare "$src/tests/data/nccl_tests/all_gather_2019.txt" --topology dgx1_v100:1 --collective allgather
# NCCL's own algorithms: "nccl" leaves out cclab's (halving-doubling wins auto at 8 B on one A100 node);
# NCCL_ALGO names select what NCCL runs under them.
check algorithms-nccl-names 0 "nvls_tree +NVLSTree" -- "$cclab" algorithms
check plan-nccl 0 "^plan: (ring|tree) allreduce" -- "$cclab" plan --topology dgx_a100:1 --size 8 --algo nccl
check plan-nccl-alias 0 "^plan: nvls_tree allreduce" -- "$cclab" plan --topology dgx_h100:2 --size 1GiB --algo NVLSTree
# NVLSTree is a compact pass: 16,384 GPUs plan and check at once (its expansion would be 117 M ops).
check plan-nvls-tree-scale 0 "NVLS in each of 2048 nodes of 8 GPUs" -- "$cclab" plan --topology dgx_h100:2048 \
  --size 1GiB --algo nvls_tree --cost never
# CollNet over SHARP at 16,384 GPUs: planned as its compact pass and costed on one node of one channel.
check plan-collnet-scale 0 "busbw 41[0-9]\.[0-9]+ GB/s" -- "$cclab" plan --topology dgx_h100:2048,sharp=1 \
  --size 1GiB --algo collnet
# CollNetChain the same way (a chain per channel, walked channel by channel on node 0), and where Direct cannot
# run (a DGX-1 mesh: no NVSwitch) the error says which CollNet does; the chain there, by its NCCL name.
check plan-collnet-chain-scale 0 "busbw 39[0-9]\.[0-9]+ GB/s" -- "$cclab" plan --topology dgx_h100:2048,sharp=1 \
  --size 1GiB --algo collnet_chain
check plan-collnet-no-nvswitch 1 "collnet_chain runs here" -- "$cclab" plan --topology dgx1_v100:2,sharp=1 \
  --size 1GiB --algo collnet
check plan-collnet-chain-mesh 0 "chain 0: head [0-7] \(its NIC to SHARP\)" -- "$cclab" plan \
  --topology dgx1_v100:2,sharp=1 --size 1GiB --algo CollNetChain
check sim-nccl-label 0 "nccl:(ring|tree) +8 " -- "$cclab" sim --topology dgx_a100:1 -b 8 -e 8 --algo nccl
# Alltoall: NCCL's grouped send/receive as the pairwise plan (the only one, and every NCCL selection's); a
# count that the ranks do not divide is refused, saying why; sim rounds its sizes down to whole blocks.
check plan-alltoall 0 "busbw 35[0-9]\.[0-9]+ GB/s" -- "$cclab" plan --topology dgx_h100:1 --collective alltoall \
  --size 1GiB --algo nccl
check plan-alltoall-uneven 1 "must be a multiple of its 8 ranks" -- "$cclab" plan --topology dgx_h100:1 \
  --collective alltoall --size 1000B
check sim-alltoall 0 "nccl:pairwise +960 +240 +f32 +none" -- "$cclab" sim --topology dgx_h100:2 \
  --collective alltoall -b 1000 -e 1MiB -f 1024 --algo nccl
# Gather, scatter and sendrecv: planned as nccl-tests runs them on NCCL, a sendrecv over the ring's channels
# at NVLink speed (busbw = algbw: a whole buffer over every link of the ring).
check plan-sendrecv 0 "busbw 3[0-9][0-9]\.[0-9]+ GB/s" -- "$cclab" plan --topology dgx_h100:1 --collective sendrecv \
  --size 1GiB --algo nccl
check plan-gather 0 "plan: direct gather" -- "$cclab" plan --topology dgx_a100:2 --collective gather --root 3 \
  --size 64MiB
check plan-scatter-root 1 "root 16 is not a rank" -- "$cclab" plan --topology dgx_a100:2 --collective scatter --root 16
check plan-mesh 0 "NVLink mesh: 3 Hamiltonian cycles" -- "$cclab" plan --topology dgx1_v100:1 --algo ring --size 64MiB
# Every shipped topology file loads, plans and verifies.
for file in "$src"/topologies/*.yaml; do
  check "topology-file-$(basename "$file" .yaml)" 0 "verify: OK" -- "$cclab" plan --topology "$file" --algo nccl --size 64MiB
done
check plan-dgx1-one-nic 0 "busbw 12\.[0-9]+ GB/s" -- "$cclab" plan --topology dgx1_v100:2,nics=1 --algo ring --size 1GiB
# NCCL_ALGO and NCCL_PROTO as NCCL reads them: leave NVLS out of one H100 node and it is the ring; leave LL128
# out at 4 MiB and the ring runs another protocol; a name NCCL does not have is refused with the syntax.
check plan-nccl-algo-excluded 0 "plan: ring allreduce" -- "$cclab" plan --topology dgx_h100:1 --algo '^NVLS' --size 8GiB
check plan-nccl-proto-excluded 0 "protocol (ll|simple) " -- "$cclab" plan --topology dgx_h100:1 --algo ring --protocol '^ll128' --size 4MiB
# `nccl` runs what NCCL's tuning model picks: the ring on two A100 nodes with four NICs, not the faster tree.
check plan-nccl-tuner 0 "ring +simple +[0-9.]+ us +<- NCCL's pick" -- "$cclab" plan --topology dgx_a100:2,nics=4 --algo nccl --size 4GiB --cost never
check plan-nccl-per-transfer 0 "NCCL's pick: NCCL picks a send/receive's protocol per transfer" -- "$cclab" plan --topology dgx_h100:1 --collective alltoall --algo nccl --size 1MiB --cost never
check plan-nccl-proto-bad 1 "or \^ and the ones to leave out" -- "$cclab" plan --topology dgx_h100:1 --protocol 'll,ll256' --size 4MiB

exit $fail
