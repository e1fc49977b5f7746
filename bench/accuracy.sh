#!/usr/bin/env bash
# How accurate is cclab: its predictions next to published measurements, one row per measurement, with the
# error. The published figures are kept here with their sources; nothing in the model is fitted to them.
#
#   collective rows: busbw of large allreduces on H100 and A100 nodes, α-β model (`cclab plan`), against what
#                    NCCL's maintainers state or users measured with nccl-tests;
#   training rows:   ResNet-50 v1.5 data-parallel scaling on one DGX A100 and one DGX-1V (8 GPUs vs 1),
#                    `cclab predict` with the measured one-GPU step as its compute time (batch / throughput,
#                    backward twice forward) and NCCL's own algorithms (`nccl`: the runs used NCCL), against
#                    NVIDIA DeepLearningExamples' published throughputs;
#   small and mid-size: the time of an allreduce below 64 MiB (`cclab plan`), against users' nccl-tests runs;
#   Horovod rows:    Inception V3 on 128 Pascal GPUs over 25 GbE, TCP against RDMA (the Horovod paper), with
#                    cclab's P100 defaults (TensorFlow's published one-GPU throughput).
#
# It prints the tables and writes them, with a fixed preamble (accuracy_preamble below), as markdown to
# docs/accuracy.md, which is not edited by hand: rerun this after a change that moves the predictions.
#
# Usage: bench/accuracy.sh [BUILD_DIR [OUTPUT_MD]]   (default: build, docs/accuracy.md beside this script)
set -euo pipefail
build=${1:-build}
cclab=$build/cclab
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$(cd "$here/.." && pwd)/docs/accuracy.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
md=$work/tables.md
: >"$md"
# The source of the rows that follow (set before each group; the markdown table's last column).
SOURCE=""
# Starts a table: its header on stdout and in the markdown.
table() {  # title
  printf "%-58s %12s %12s %8s\n" "$1" published cclab error
  printf '\n| %s | cclab input | published | cclab | error | source |\n|---|---|---:|---:|---:|---|\n' "$1" >>"$md"
}
# One row on stdout and in the markdown; unit "%" for the efficiency rows.
line() {  # label published predicted error unit input
  if [[ -n $5 ]]; then
    printf "%-58s %11s%% %11s%% %8s\n" "$1" "$2" "$3" "$4"
  else
    printf "%-58s %12s %12s %8s\n" "$1" "$2" "$3" "$4"
  fi
  printf '| %s | %s | %s%s | %s%s | %s | %s |\n' "$1" "$6" "$2" "$5" "$3" "$5" "$4" "$SOURCE" >>"$md"
}
# A topology as the markdown shows it: presets as they are, the shipped file by its path in the repository.
shown() { case $1 in */topologies/*) echo "topologies/${1##*/topologies/}" ;; *) echo "$1" ;; esac; }

# The fixed text of docs/accuracy.md: what the rows are and how to read them. The tables follow it.
accuracy_preamble() {
  cat <<'EOF'
# Accuracy

<!-- Written by bench/accuracy.sh; do not edit by hand. -->

Each row below puts one published measurement next to cclab's prediction for the same collective or the same
training job, with the error (cclab − published) / published. This file is written by `bench/accuracy.sh`:
after a change that moves the predictions, run

```sh
bench/accuracy.sh build
```

which prints the same tables and rewrites this file. The published figures come from NCCL's maintainers on
NCCL and nccl-tests issues, users' nccl-tests reports, NVIDIA DeepLearningExamples, TensorFlow's DGX-1
benchmarks, the Horovod paper and Horovod's benchmark page; each row names its source, and the script keeps
each figure's quote beside its row. Nothing in the model is fitted to these rows but InfiniBand's payload
efficiency (¹); a larger set of measurements is kept aside for checking.

What the rows are:
- **collective (busbw)**: the bus bandwidth of a large collective, from `cclab plan`'s α-β time (one row from
  `cclab sim --fast`, averaged over sizes as the measurement was), with the algorithm the measurement ran:
  `nccl` where it ran NCCL's default (what NCCL's own tuning model picks), else the NCCL_ALGO value or the cclab
  algorithm it names. A positive error is optimistic.
- **small and mid-size (time)**: the time of an allreduce below 64 MiB, in µs. A positive error is
  pessimistic.
- **training (efficiency)**: `cclab predict` of data-parallel scaling: 8 GPUs against one on NCCL's algorithms
  (`nccl`; the one-GPU step from the published one-GPU throughput, backward twice forward), and Horovod's
  clusters on its ring.

The summary at the end gives each kind's median error, median |error|, its signs and the rows within 5 %.

## Reading the tables

Where cclab parts from a row, and why as far as is known:
- **One NVL72 rack** measures below what NVLS's port bytes give: its 72 GPUs reduce through 18 NVSwitch chips,
  and it reaches the busbw of eight B200 on one board, so the switch side, not the ports, sets its pace. cclab
  has no figure for that and keeps the port model, which the H100 rows at 5 to 8 GPUs follow.
- **RoCE.** cclab's RoCE efficiency (0.90: an allowance for congestion control below framing's 0.98,
  [topology-format.md](topology-format.md)) is optimistic against the NCCL 2.19 RoCE runs (40 GB/s per NIC
  under the ring where it gives 45, and NCCL's team states 46-48 for NDR InfiniBand); what that run lost is in
  its fabric or its congestion control, not in the headers, and one user's run does not set a constant. Its
  two-node NVLSTree row is optimistic too, as cclab's two-node NVLSTree is held by the NVLS side alone; a later
  run on the same kind of fabric (2 × H200, NCCL 2.30) is within a few percent at every size, and above the
  462 GB/s that NCCL 2.30's own per-head ceiling (`perChMaxNVLSTreeBws`) allows two Hopper nodes, so cclab does
  not apply that ceiling per head ([algorithms.md](algorithms.md#protocols-enginemodelprotocolhpp)). The
  five-node RoCE run's NICs carried more under the ring than cclab's RoCE efficiency allows: the RoCE rows are
  not one fabric constant's error.
- **EFA.** A network step over EFA costs AWS's own figure (aws-ofi-nccl's tuner: 20 µs on P5); the payload
  efficiency, 0.9, is an assumption, and the p5 NVLSTree row is optimistic at 4 GiB.
- **TCP sockets**: framing (0.85) times the pace of the slowest of NCCL's flows (kernel TCP shares a link
  unevenly), 0.60 in all ([topology-format.md](topology-format.md)); NCCL 2.4.8 opened 16 sockets per
  connection on AWS, where cclab takes eight flows' evenness.
- **One thread driving several GPUs** (nccl-tests `-g N`): each iteration that thread launches the GPUs'
  kernels one after another, a few µs per GPU that neither NCCL's tuning model nor a published constant gives,
  so cclab, which prices one launch per rank, is fast on such runs' small sizes (the `-g 4` row; `cclab compare`
  warns about such logs). The same launches make an older DGX A100 small-message series (nccl-tests#123) no
  measure of the NVSwitch latency; a one-process-per-GPU A100 series would check cclab's 7.8, 10.2 and 15.1 µs
  for 8 B on 2, 4 and 8 GPUs.
- **Small messages on NVSwitch**: a GPU-to-GPU route through NVSwitch costs NCCL's LL step over NVLink, 0.6 µs,
  on every NVSwitch preset; NCCL's formula (6.6 µs of launch, 14 steps, the bytes at the LL ceiling) gives the
  4 B and the 256 KiB-1 MiB rows. NVLS is slow at mid sizes (the 16 MiB H20 row): NCCL halves its NVLS chunk
  for smaller collectives, cclab does not.
- **4 × H100, allgather and reduce-scatter**: that run's allgather and reduce-scatter reach 5-8 % less bus
  bandwidth than its allreduce at 1 GiB, where cclab, as NCCL's own tuning table for the run, gives all three
  the same; at 64 MiB the measured ring still climbs to its peak.
- **Two A100s on an NVLink bridge**: what keeps the pair below its 6 channels at 40 GB/s is not known (the
  thread does not say whether they are PCIe A100s, whose clocks are lower).
- **Trees across nodes** (GB200): what is left is NCCL's 0.92 tree factor, which cclab takes from NCCL's tuning
  model and which these NIC-bound runs do not show (they reach 0.97 of the NICs' bound); the two-HDR A100 tree
  row, with the same factor, is within 3 %, so the factor stays.
- **Two nodes: what NCCL runs is what its estimate favours.** A two-node tree can beat the NICs, and cclab's
  does (161 GB/s on two A100 nodes with four HDR NICs, its ring 96), but NCCL's tuning model prices the tree
  lower and runs the ring: `nccl` follows NCCL's model, and the row compares a ring with a ring's number
  ([algorithms.md, "What NCCL runs"](algorithms.md#what-nccl-runs-enginemodelnccl_tuninghpp)). Where NCCL
  switches algorithm is checked too: on one H100 node cclab's `nccl` switches from the ring under LL to NVLS at
  the size a user's NCCL log shows (nccl-tests#309); on 64 hosts of 8 × H200 over Ethernet NCCL's tuner ran the
  tree up to 16 MiB and NVLSTree from 32 MiB (NVIDIA/nccl#1752), where cclab's `nccl` takes NVLSTree from
  64 MiB (`cclab plan --topology dgx_h200:64,net=roce --algo nccl --size 32MiB`: NCCL's estimates for the two
  are 1 % apart there, with NCCL 2.30's constants where the log's were an older release's).
- **Single-node training is optimistic**, most where compute is fastest (AMP): at ~100 ms steps something the
  model lacks costs 15-20 ms a step. The network explains little of it (the ResNet-50 gradients take under 1 ms
  on NVSwitch). The input pipeline is the likely one: those runs decode ImageNet JPEGs on the CPU (DALI's CPU
  decoder), and NVIDIA's TensorFlow ResNet-50 tables show the same gap between precisions on the same machines.
  `compute.input_floor` takes a measured floor; cclab does not derive one. GPUs of one SKU are not equally fast
  (Sinha et al., SC'22: 8 % average variation within a cluster), and a synchronous step waits for the slowest:
  `compute.jitter`, default 0.015, is in every training row.
- **VGG-16 on one DGX-1 P100** (TensorFlow's `replicated` mode with the NCCL of 2017) is optimistic: cclab's
  ring allreduce of its 528 MB hides behind backward, where the measured 8-GPU step is longer than the whole
  allreduce at that speed. The framework's all-reduce path of the time is the likely difference; cclab does
  not model it.
- **Horovod rows** fuse as Horovod did then (a 5 ms cycle up to 64 MiB; 1 ms and 128 MiB today, cclab's
  `fusion: horovod` default). With today's fusion the 512-GPU VGG-16 point falls to 72 %, its 2·511 ring steps
  paid on each of 156 small buffers.

Not in the tables:
- **Alltoall, gather, scatter, sendrecv**: the published alltoall runs we found are threads about broken
  fabrics (nccl-tests#78: `cclab compare tests/data/nccl_tests/alltoall_2021.txt --topology dgx1_v100:8,nics=1
  --collective alltoall`) or their tables are images. NCCL's maintainers give the rule instead (nccl-tests#130,
  #267): alltoall cannot combine NICs, so across N nodes with a NIC per GPU its busbw is about N/(N−1) times
  one NIC's bandwidth. cclab's plan gives that bound: DGX H100 nodes at 1 GiB, 89.8 / 61.9 / 53.9 GB/s on
  2 / 4 / 8 nodes (the rule: 96 / 64 / 55).
- **CollNet and NVLS with SHARP**: no measurement; the only published CollNet figures are NCCL's maintainer's
  rule of thumb for DGX A100 nodes (NVIDIA/nccl#320: about 80 GB/s of algbw with four HDR NICs, 110 with eight),
  which cclab exceeds (95.9 and 137.1 GB/s of algbw at 4 GiB): it moves 24 GB/s per HDR NIC, as NCCL's team measured a ring
  over them, where the rule takes 20.
- **CPU runs** (`cclab train --validate`, `cclab bench --predict` on MPI ranks): [performance.md](performance.md).
- **The backends against each other**: SimGrid and the α-β model agree within 3 % where nothing contends, under
  every protocol (`tests/sim_test.cpp`); SimGrid and SMPI within 0.004 % ([performance.md](performance.md)); the
  pattern-level simulation within 0.4 % of op by op on all the shipped scenarios; where the simulations part
  from the α-β model (trees with both sides on one NIC, a tree on one NVSwitch node):
  [simulation.md](simulation.md#pattern-level-mode).

## The rows
EOF
}
accuracy_footnotes() {
  cat <<'EOF'

¹ These two measurements, with a user's `ib_write_bw` of 24 GB/s on one HDR port, set InfiniBand's payload
efficiency: 0.96, 24 of an HDR port's 25 GB/s, which is already past line coding. They check the rest of the
path (NVLink to the NIC, the ring's pipeline), not that constant.
EOF
}

err() { awk -v p="$1" -v m="$2" 'BEGIN { printf "%+.1f%%", 100 * (p - m) / m }'; }
# Keeps a row's relative error for the summary of its kind (collective, efficiency) at the end.
record() { awk -v p="$2" -v m="$3" 'BEGIN { printf "%.6f\n", 100 * (p - m) / m }' >>"$work/$1"; }
# The median error of a kind, the median of its size (|error|: rows of both signs cancel in the first), how
# many rows are optimistic and pessimistic, and how many are within 5 %. A third argument "time" says the rows
# are times, where a positive error is pessimistic.
summary() {
  local abs
  abs=$(awk '{ print ($1 < 0 ? -$1 : $1) }' "$work/$1" | sort -g |
    awk '{ e[NR] = $1 } END { printf "%.1f", NR % 2 ? e[(NR + 1) / 2] : (e[NR / 2] + e[NR / 2 + 1]) / 2 }')
  sort -g "$work/$1" | awk -v label="$2" -v times="${3:-}" -v abs="$abs" '{ e[NR] = $1; pos += $1 > 0; neg += $1 < 0; near += ($1 < 5 && $1 > -5) }
    END { m = NR % 2 ? e[(NR + 1) / 2] : (e[NR / 2] + e[NR / 2 + 1]) / 2
          if (times == "time") { t = pos; pos = neg; neg = t }
          printf "%s: median error %+.1f%% (median |error| %s%%) over %d rows (%d optimistic, %d pessimistic), %d within 5%%\n",
                 label, m, abs, NR, pos, neg, near }'
}

table "collective (busbw, GB/s)"
# "With the protocol overhead (~20%) NCCL can get an effective NVLink bandwidth of 370GB/s [...] when running
# with NCCL_ALGO=RING"; NVLS "on 8 GPUs [...] a peak busBw of ~480GB/s": NCCL maintainer S. Jeaugey,
# github.com/NVIDIA/nccl-tests/issues/212 (2024).
busbw_at() {  # topology algorithm size [collective]
  "$cclab" plan --topology "$1" --algo "$2" --size "$3" --collective "${4:-allreduce}" |
    sed -n 's/.*busbw \([0-9.]*\) GB\/s.*/\1/p'
}
# One row: label, published busbw, and what cclab's plan gives for topology, algorithm, size [and collective].
collective_row() {
  local predicted
  predicted=$(busbw_at "$3" "$4" "$5" "${6:-allreduce}")
  line "$1" "$2" "$predicted" "$(err "$predicted" "$2")" "" "\`$(shown "$3")\` $4 $5${6:+ $6}"
  record collective "$predicted" "$2"
}
SOURCE="NCCL's maintainer, NVIDIA/nccl-tests#212"
collective_row "allreduce 8 GiB, 8 x H100 (NVSwitch), ring" 370 dgx_h100:1 ring 8GiB
collective_row "allreduce 8 GiB, 8 x H100, NCCL default (NVLS; cclab: nccl)" 480 dgx_h100:1 nccl 8GiB
# The same answer: the 370 GB/s is what "you can observe as BusBw when running non-allreduce operations".
collective_row "allgather 8 GiB, 8 x H100, NCCL default (cclab: nccl, picks ring)" 370 dgx_h100:1 nccl 8GiB allgather
# NVLS on fewer GPUs of one H100 SXM node: "Busbw increase from 370 to 420, 440, 460, and 480 GBps when gpus
# increase from 4 to 5, 6, 7, and 8" (NCCL_ALGO=NVLS all_reduce_perf -b 2G -e 4G, github.com/NVIDIA/nccl/issues/1455,
# 2024). With fewer members each GPU's port carries S(1+1/P) for a smaller reduction, so busbw grows with P.
SOURCE="a user's NCCL_ALGO=NVLS runs, NVIDIA/nccl#1455"
for gpus_busbw in 5:420 6:440 7:460; do
  g=${gpus_busbw%%:*}
  collective_row "allreduce 4 GiB, $g x H100 (one NVSwitch node), NVLS" "${gpus_busbw##*:}" "dgx_h100:1,gpus=$g" nvls \
    4GiB
done
# Users' nccl-tests reports: 8 x A100-SXM4-80GB on NVSwitch (HPE Apollo 6500), all_reduce_perf up to 1 GiB,
# "a busbw of ~200 GB/s" (github.com/NVIDIA/nccl-tests/issues/149, NCCL 2.17/2.18); 3 servers of 8 x A100-SXM4-40GB
# with 4 x HDR 200 Gb/s each, all_reduce_perf up to 128 MiB on 24 ranks, "peak performance reaches about 96GB/s"
# (github.com/NVIDIA/nccl-tests/issues/119). NCCL runs rings at these sizes.
SOURCE="a user's run, NVIDIA/nccl-tests#149"
collective_row "allreduce 1 GiB, 8 x A100 (NVSwitch), ring" 200 dgx_a100:1 ring 1GiB
# The maintainer's answer in the same thread (S. Jeaugey, nccl-tests#149, 2023-07-05): 12 NVLinks at ~20 GB/s
# effective (25 GB/s line rate, 128-byte payloads from the SMs) make 240 GB/s, "some other bottlenecks on the
# GPUs limits it to ~230GB/s"; at 512M-1G the user's bandwidth was still rising, 8G "should reach 230 GB/s".
SOURCE="NCCL's maintainer, NVIDIA/nccl-tests#149"
collective_row "allreduce 8 GiB, 8 x A100 (NVSwitch), ring" 230 dgx_a100:1 ring 8GiB
# nccl-tests#212: a user's 8 x H100 allreduce up to 256 MiB, NCCL's default (NVLS), "the algbw is about
# 250GB/S" (busbw 2·7/8 of it, 437.5); the maintainer: "256M is too small to reach peak bandwidth".
SOURCE="a user's run, NVIDIA/nccl-tests#212"
collective_row "allreduce 256 MiB, 8 x H100, NCCL default (NVLS)" 437.5 dgx_h100:1 nccl 256MiB
# A user's sweep on 4 x H100 80GB HBM3 of one NVSwitch node, all_reduce_perf -b 8 -e 8G -f 2 -g 4 (one thread
# driving the four GPUs), nccl-tests 2.18.3 and NCCL 2.29.2, NCCL's default (ring by its tuning table; NVLS on 4
# GPUs is no faster, nccl#1455): github.com/waynehacking8/nccl-collectives-bench, results/quiet/all_reduce.txt
# (2026). Its small sizes are a row below. The same run's all_gather_perf and reduce_scatter_perf
# (results/quiet/all_gather.txt, reduce_scatter.txt), rings by NCCL's tuning table.
SOURCE="a user's sweep (-g 4, NCCL 2.29.2), waynehacking8/nccl-collectives-bench"
for size_busbw in 64MiB:305.61 1GiB:355.35 8GiB:366.18; do
  collective_row "allreduce ${size_busbw%%:*}, 4 x H100 (one NVSwitch node), NCCL default" "${size_busbw##*:}" \
    "dgx_h100:1,gpus=4" nccl "${size_busbw%%:*}"
done
for c_size_busbw in allgather:1GiB:327.47 allgather:8GiB:343.53 reduce_scatter:1GiB:329.22 \
  reduce_scatter:8GiB:350.89; do
  IFS=: read -r c size busbw <<<"$c_size_busbw"
  collective_row "$c $size, 4 x H100 (one NVSwitch node), NCCL default" "$busbw" "dgx_h100:1,gpus=4" nccl "$size" "$c"
done
# nccl-tests#272: 8 x H200 on one node, all_reduce_perf -b 64k -e 4G, NCCL 2.20.3 (its default, NVLS), "peak
# bandwidth of 475 GB/s".
SOURCE="NVIDIA/nccl-tests#272"
collective_row "allreduce 4 GiB, 8 x H200, NCCL default (NVLS)" 475 dgx_h200:1 nccl 4GiB
# NVIDIA/nccl#1374 (2024): "a test on H800 * 8 node, and the reported allreduce busBW is 215 GB/s" (NCCL's
# default, NVLS; size not given, the peak taken). An H800 is an H100 whose NVLink is cut to 400 GB/s both ways
# (NVIDIA's H800 datasheet): dgx_h100 with nvlink=200GB/s per direction.
SOURCE="NVIDIA/nccl#1374"
collective_row "allreduce 4 GiB, 8 x H800 (NVLink 200 GB/s), NCCL default (NVLS)" 215 dgx_h100:1,nvlink=200GB/s \
  nccl 4GiB
# NVIDIA/nccl#1048 (2023): A100 x 8 per node with 4 x 200 Gb/s InfiniBand, all_reduce_perf -b 8 -e 4G, NCCL's
# default algorithm: one node "232.54GB/s", two nodes "only 86GB/s" (the user's 96 being 4 x 24 GB/s: a ring's
# number). cclab's `nccl` is what NCCL's tuning model picks, the ring at 4 GiB on two nodes (its estimate holds
# the tree to 23.6 GB/s a channel and half the buffer per rank, the ring to 16/30 of 4 x 24 GB/s), although a
# tree, which sends each node's data across the network once, would be faster (cclab's tree: 161 GB/s).
SOURCE="a user's runs, NVIDIA/nccl#1048"
collective_row "allreduce 4 GiB, 8 x A100, NCCL default" 232.54 dgx_a100:1 nccl 4GiB
collective_row "allreduce 4 GiB, 2 x (8 x A100, 4 x HDR), NCCL default" 86 dgx_a100:2,nics=4 nccl 4GiB
# NCCL's team on DGX A100 nodes with 8 x 200 Gb/s InfiniBand: "we measure 192GB/s AllReduce BusBW"
# (NVIDIA/nccl#812, 2023; node count not given: cclab's ring busbw is the same from 2 to 16 nodes, 4 here).
SOURCE="NCCL's team, NVIDIA/nccl#812 ¹"
collective_row "allreduce 8 GiB, DGX A100 nodes (8 x HDR), ring" 192 dgx_a100:4 ring 8GiB
# NCCL's team on H100 nodes with 8 x NDR 400 Gb/s: "For NDR @ 400Gbps you should see 46-48GB/s per NIC"
# (nccl-tests#290, 2025, about NCCL_ALGO=RING across nodes): 368-384 GB/s of ring busbw, 376 in the middle.
SOURCE="NCCL's team (46-48 GB/s per NIC), NVIDIA/nccl-tests#290"
collective_row "allreduce 8 GiB, DGX H100 nodes (8 x NDR), ring" 376 dgx_h100:4 ring 8GiB
# NVLSTree across DGX H100 nodes: NVIDIA's GTC 2024 talk, as NCCL's maintainer discusses it (NVIDIA/nccl#1649,
# 2025): "the Allreduce busBW for NVLS + Tree is approximately 370GB/s~380GB/s" at scale; 375 taken. cclab: 4
# nodes (372; 378 on 8, 381 on 16, its busbw rising with the rank count at a constant algbw).
SOURCE="NVIDIA's GTC 2024 figure, NVIDIA/nccl#1649"
collective_row "allreduce 8 GiB, DGX H100 nodes (8 x NDR), NVLSTree" 375 dgx_h100:4 nvls_tree 8GiB
# NVLSTree on 8 AWS p5 instances (8 x H100, 3200 Gb/s of EFA each: cclab `net=efa`, 8 x 400G NICs), 4 GiB,
# nccl-tests as posted in NVIDIA/nccl PR #1112 (2023): 280.0 GB/s busbw with NCCL 2.19.1 (279.8 with the PR;
# 2.19.3's 64 KiB chunk at 4+ nodes took it to 104, a regression the PR reverts, not modelled). cclab is EFA-bound
# there (its 0.9 EFA efficiency is an assumption).
SOURCE="NCCL 2.19.1, NVIDIA/nccl PR #1112"
collective_row "allreduce 4 GiB, 8 x AWS p5 (8 x H100, EFA), NVLSTree" 280 dgx_h100:8,net=efa nvls_tree 4GiB
SOURCE="a user's peak, NVIDIA/nccl-tests#119 ¹"
collective_row "allreduce 128 MiB, 3 x (8 x A100, 4 x HDR), ring" 96 dgx_a100:3,nics=4 ring 128MiB
# NVIDIA/nccl#1221 (2024, NCCL 2.19.3): 8 x H100 per node with 8 x 400 Gb/s RoCE, all_reduce_perf -b 4G -e 8G:
# on 2 nodes "the bus BW will upgraded from 330GB to 430GB" from NCCL_NVLS_ENABLE=0 to 1 (NVLSTree), on more
# than 2 nodes "same busbw 320GB" either way. cclab: RoCE links (`net=roce`), 8 GiB; `nccl` picks nvls_tree on
# two nodes and the ring on four; with NVLS off on two nodes the ring (cclab's tree is 1.4 % slower there).
SOURCE="NCCL 2.19, NVIDIA/nccl#1221"
collective_row "allreduce 8 GiB, 2 x (8 x H100, 8 x 400G RoCE), NCCL default (NVLSTree)" 430 dgx_h100:2,net=roce nccl 8GiB
collective_row "allreduce 8 GiB, 2 x (8 x H100, 8 x 400G RoCE), NVLS off (ring)" 330 dgx_h100:2,net=roce ring 8GiB
collective_row "allreduce 8 GiB, 4 x (8 x H100, 8 x 400G RoCE), NCCL default" 320 dgx_h100:4,net=roce nccl 8GiB
# NVIDIA/nccl#1368 (2024): 5 servers of 8 x H100 with 4 x 400 Gb/s RoCE NICs each, all_reduce_perf -b 1M -e 1G
# on 40 ranks, "tree bus bandwidth(150GB/s) is slower than ring bandwidth (190GB/s)" under NCCL_ALGO=Tree and
# =Ring (the user's figures for the sweep; cclab at its largest size). Added 2026-12-07, no change made.
SOURCE="a user's sweep to 1 GiB, NVIDIA/nccl#1368"
collective_row "allreduce 1 GiB, 5 x (8 x H100, 4 x 400G RoCE), Ring" 190 dgx_h100:5,nics=4,net=roce Ring 1GiB
collective_row "allreduce 1 GiB, 5 x (8 x H100, 4 x 400G RoCE), Tree" 150 dgx_h100:5,nics=4,net=roce Tree 1GiB
# The same fabric five NCCL releases later: 2 x (8 x H200, 8 x 400 Gb/s RoCE on BlueField-3), nccl-tests 2.18.3,
# NCCL 2.30.4, all_reduce_perf -b 1K -e 16G -g 8 (one process per node), NCCL_MIN_NCHANNELS=32 (ring and tree
# channels; NVLS keeps its own, src/graph/connect.cc): github.com/schmaustech/nvidia-tools-image, README.md (2026),
# the table kept in bench/logs/all_reduce_2x8_h200_roce.txt. NVLSTree from 256 MiB in cclab's `nccl`.
SOURCE="NCCL 2.30.4, -g 8, schmaustech/nvidia-tools-image (bench/logs/all_reduce_2x8_h200_roce.txt)"
for size_busbw in 256MiB:394.69 1GiB:458.75 8GiB:485.57; do
  collective_row "allreduce ${size_busbw%%:*}, 2 x (8 x H200, 8 x 400G RoCE), NCCL 2.30 default" "${size_busbw##*:}" \
    dgx_h200:2,net=roce nccl "${size_busbw%%:*}"
done
# NVIDIA/nccl#837 (2023): two servers of 8 x A100 80GB with 2 x 200 Gb/s InfiniBand each, all_reduce_perf -b 4M
# -e 1024M -f 2 on 16 ranks, NCCL's default: "v2.10.3-1: 57.06" GB/s average bus bandwidth (NCCL's maintainer:
# above the NICs' 50 because on two nodes the tree puts more of the traffic on NVLink). cclab: the average of the
# same nine sizes under NCCL_ALGO=Tree, the algorithm the maintainer says ran (NCCL 2.10.3's tuner; 2.30's, which
# cclab's `nccl` follows, caps the tree at 23.6 GB/s a channel and picks the ring at every size here).
avg_busbw() {
  "$cclab" sim --topology "$1" --algo "$2" -b "$3" -e "$4" -f 2 --fast | sed -n 's/# Avg bus bandwidth *: *//p'
}
SOURCE="NCCL 2.10's tree, by its maintainer, NVIDIA/nccl#837"
predicted=$(avg_busbw dgx_a100:2,nics=2 Tree 4MiB 1GiB)
line "allreduce 4 MiB-1 GiB (average), 2 x (8 x A100, 2 x HDR), NCCL default" 57.06 "$predicted" \
  "$(err "$predicted" 57.06)" "" "\`dgx_a100:2,nics=2\` Tree 4MiB-1GiB (sim --fast, average)"
record collective "$predicted" 57.06
# GB200: NVIDIA/nccl#1801 (2025, NCCL 2.27.3): three NVLink partitions in different racks (4 or 8 GPUs each, a
# 400 Gb/s NIC per GPU), joined by InfiniBand only, NCCL_NVLS_ENABLE=0, 16 GiB: ring (NCCL's choice) 196.72 and
# 393.66 GB/s, tree 234.43 and 485.68 GB/s busbw. On three nodes NCCL's binary tree is a chain of nodes, and a
# tree channel per NIC (its parent's side on one NIC, its children's on the next) spreads the middle node's
# traffic over all of them, which is why the tree wins there.
SOURCE="NCCL 2.27.3, NVLS off, NVIDIA/nccl#1801"
collective_row "allreduce 16 GiB, 3 x (4 x GB200, 4 x NDR), ring" 196.72 gb200_nvl72:3,gpus=4,nics=4 ring 16GiB
collective_row "allreduce 16 GiB, 3 x (4 x GB200, 4 x NDR), tree" 234.43 gb200_nvl72:3,gpus=4,nics=4 tree 16GiB
collective_row "allreduce 16 GiB, 3 x (8 x GB200, 8 x NDR), ring" 393.66 gb200_nvl72:3,gpus=8,nics=8 ring 16GiB
collective_row "allreduce 16 GiB, 3 x (8 x GB200, 8 x NDR), tree" 485.68 gb200_nvl72:3,gpus=8,nics=8 tree 16GiB
# One NVL72 rack, 72 GPUs on one NVLink domain, NCCL's default (NVLS): 834.57 GB/s busbw at 8 GiB (CoreWeave's
# nccl-tests, pull request #43, "Example output for a full nvl72 rack run", 2025). Eight B200 on one HGX board:
# "Ours is 830+" (NVIDIA/nccl#1807, 2025, NCCL 2.27; size not given, 8 GiB taken).
SOURCE="CoreWeave's nccl-tests PR #43"
collective_row "allreduce 8 GiB, 72 x GB200 (one NVL72 rack), NCCL default (NVLS)" 834.57 gb200_nvl72:1 nccl 8GiB
SOURCE="NVIDIA/nccl#1807"
collective_row "allreduce 8 GiB, 8 x B200 (HGX), NCCL default (NVLS)" 830 dgx_b200:1 nccl 8GiB
# DGX-1 nodes (the V100 hybrid cube-mesh, 4 x EDR 100 Gb/s InfiniBand each): "DGX-1 can get 48 GB/s because we
# have 4 IB adapters" (NCCL's maintainer, nccl-tests#29, 2019, against the user's 12.2 GB/s with one adapter, "as
# good as you can get"). NCCL's rings across nodes; 512 MiB, the user's largest size.
SOURCE="NCCL's maintainer, NVIDIA/nccl-tests#29"
collective_row "allreduce 512 MiB, DGX-1 V100 nodes (4 x EDR), ring" 48 dgx1_v100:4 ring 512MiB
# The user's own servers in that thread: 4 x (8 x V100 16GB on NVLink, one EDR adapter), 32 ranks, all_reduce_perf
# -b 8 -e 512M, NCCL 2.4.7, "12.2 GB/s" once GPUDirect was set up (the maintainer: "as good as you can get").
# cclab: the DGX-1 board with one NIC (its NVLink wiring is not given; the NIC bounds the ring).
SOURCE="the user's servers, NVIDIA/nccl-tests#29"
collective_row "allreduce 512 MiB, 4 x (8 x V100, 1 x EDR), ring" 12.2 dgx1_v100:4,nics=1 ring 512MiB
# TCP: two AWS p3dn.24xlarge (8 x V100 SXM2 on the DGX-1 mesh, one 100 Gb/s ENA), NCCL 2.4.8 over sockets, the
# tree off, all_reduce_perf up to 512M on 16 ranks: "the bus can sustain around 6GB/s" (NVIDIA/nccl#398, 2020).
SOURCE="NCCL 2.4.8 over sockets, NVIDIA/nccl#398"
collective_row "allreduce 512 MiB, 2 x AWS p3dn (8 x V100, 100G TCP), ring" 6 dgx1_v100:2,nics=1,net=tcp,nic=100Gbps \
  ring 512MiB
# Two A100s on an NVLink bridge of 12 links ("NV12" in nvidia-smi topo -m) and nothing else between them:
# all_reduce_perf -b 8 -e 12G -f 2 -g 1 -t 2, "Bus_BW: 208 GBps" (a user's run, nccl-tests#178, 2023). The
# topology is the pair and its bridge (300 GB/s a direction), Ampere: topologies/a100_nvlink_pair.yaml.
# Until 2026-12-05 cclab gave it one channel, 40 GB/s: channels now fill the GPUs' NVLink at NCCL's per-channel
# speed, as its search does.
SOURCE="a user's run, NVIDIA/nccl-tests#178"
collective_row "allreduce 12 GiB, 2 x A100 on an NVLink bridge (NV12), ring" 208 \
  "$(dirname "$0")/../topologies/a100_nvlink_pair.yaml" ring 12GiB

echo
# Small messages: the time of a tiny allreduce, where latencies are everything. cclab's latencies are NCCL's
# tuning constants (base and per-step, engine/model/protocol.cpp), a route's own latency where it is longer,
# and for EFA AWS's own 20 us a network step (aws-ofi-nccl's tuner, docs/topology-format.md; it was an assumed
# 4 us per end until 2026-12-06). A GPU-to-GPU route through NVSwitch takes NCCL's 0.6 us LL step since
# 2026-12-06 (topology/presets.cpp); it was 1 us, and 2 us on DGX A100, set from a one-channel ring series
# (nccl-tests#123) that one thread launched for all GPUs and so measured the host's launches.
table "small and mid-size messages (time, us)"
time_at() {  # topology algorithm size -> microseconds
  "$cclab" plan --topology "$1" --algo "$2" --size "$3" |
    sed -n 's/^α-β time: \([0-9.]*\)\(us\|ms\|s\) .*/\1 \2/p' |
    awk '{ f = $2 == "us" ? 1 : $2 == "ms" ? 1e3 : 1e6; printf "%.2f", $1 * f }'
}
latency_row() {  # label published_us topology algorithm size
  local predicted
  predicted=$(time_at "$3" "$4" "$5")
  line "$1" "$2" "$predicted" "$(err "$predicted" "$2")" "" "\`$3\` $4 $5"
  record latency "$predicted" "$2"
}
# 8 x H20 (Hopper, NVLink 900 GB/s through NVSwitch, as the H100 board), NCCL's default, 4 bytes: 12.5 us
# (deepseek-ai/DeepEP#303, 2025).
SOURCE="deepseek-ai/DeepEP#303"
latency_row "allreduce 4 B, 8 x H20 (NVSwitch), NCCL default" 12.5 dgx_h100:1 nccl 4
# Two AWS p5.48xlarge (8 x H100, EFA), NCCL's default over aws-ofi-nccl: 69.29 us at 16 B, 68.4-69.3 us from 16
# to 128 B (aws/aws-k8s-tester PR #585, 2025). Two AWS p6-b200 (8 x B200, EFA): 54.55 us at 16 B (dstackai/dstack
# PR #3961, 2026).
SOURCE="aws/aws-k8s-tester PR #585"
latency_row "allreduce 16 B, 2 x AWS p5 (8 x H100, EFA), NCCL default" 69.29 dgx_h100:2,net=efa nccl 16
SOURCE="dstackai/dstack PR #3961"
latency_row "allreduce 16 B, 2 x AWS p6-b200 (8 x B200, EFA), NCCL default" 54.55 dgx_b200:2,net=efa nccl 16
# The 4 x H100 sweep above (-g 4: one thread launches the four GPUs' kernels one after another each iteration,
# which cclab does not model; `cclab compare` says so for such logs): 23.30 us at 8 B, flat to 4 KiB.
SOURCE="waynehacking8/nccl-collectives-bench"
latency_row "allreduce 8 B, 4 x H100, one thread drives all four (-g 4)" 23.30 dgx_h100:1,gpus=4 nccl 8
# Mid sizes, one process per GPU: 8 x H20 (the H100's NVLink, fewer SMs), nccl-tests 2.19.7, NCCL 2.30,
# NCCL's default (kvcache-ai/Mooncake PR #3484, 2026, its NCCL baseline). Ring under LL up to 1 MiB, NVLS from
# 2 MiB in cclab's `nccl`, as NCCL chose on H100 (nccl-tests#309). These rows, with the 4 B one above, are what
# moved the NVSwitch route to NCCL's LL step (they were +13 to +33 % at 32 KiB-1 MiB with 1 us).
SOURCE="one process per GPU, kvcache-ai/Mooncake PR #3484"
for size_us in 32KiB:18.66 256KiB:19.54 1MiB:27.76 4MiB:53.24 16MiB:121.33; do
  latency_row "allreduce ${size_us%%:*}, 8 x H20, NCCL 2.30 default" "${size_us##*:}" dgx_h100:1 nccl "${size_us%%:*}"
done

echo
# NVIDIA DeepLearningExamples, PyTorch/Classification/ConvNets/resnet50v1.5/README.md, "Training performance"
# (pytorch-21.03 container): img/s on 1 and 8 GPUs.
table "training: ResNet-50 v1.5, 8 GPUs vs 1 (efficiency)"
row() {  # label preset batch one_gpu_img_s eight_gpu_img_s
  local label=$1 preset=$2 batch=$3 one=$4 eight=$5
  local step_ms
  step_ms=$(awk -v b="$batch" -v t="$one" 'BEGIN { printf "%.4f", 1000 * b / t }')
  cat >"$work/s.yaml" <<EOF
name: accuracy
topology: {preset: $preset, nodes: 1}
workload: resnet50
compute: {forward: $(awk -v s="$step_ms" 'BEGIN { printf "%.4f", s / 3 }')ms, backward: $(awk -v s="$step_ms" 'BEGIN { printf "%.4f", 2 * s / 3 }')ms, batch: $batch}
communication: {algorithm: nccl}
EOF
  local predicted published
  predicted=$("$cclab" predict "$work/s.yaml" --format csv 2>/dev/null | awk -F, 'NR == 2 { printf "%.1f", 100 * $9 }')
  published=$(awk -v o="$one" -v e="$eight" 'BEGIN { printf "%.1f", 100 * e / (8 * o) }')
  line "$label" "$published" "$predicted" "$(err "$predicted" "$published")" % \
    "\`$preset:1\` nccl, $(printf %.1f "$step_ms") ms a step of $batch samples on one GPU"
  record efficiency "$predicted" "$published"
}
SOURCE="NVIDIA DeepLearningExamples, PyTorch ResNet-50 v1.5"
row "DGX A100 80GB, AMP (batch 256: 2470 -> 16621 img/s)" dgx_a100 256 2470 16621
row "DGX A100 80GB, TF32 (batch 256: 938 -> 7248 img/s)" dgx_a100 256 938 7248
row "DGX-1 V100 16GB, AMP (batch 256: 1200 -> 8322 img/s)" dgx1_v100 256 1200 8322
row "DGX-1 V100 16GB, FP32 (batch 128: 367 -> 2855 img/s)" dgx1_v100 128 367 2855

echo
# TensorFlow's benchmarks (tensorflow.org/performance/benchmarks, "Training with NVIDIA DGX-1 (NVIDIA Tesla
# P100)"; the TensorFlow team's blog post of 2017-05-10 "TensorFlow Benchmarks and a New High-Performance
# Guide"): tf_cnn_benchmarks, synthetic data, batch 64 per GPU, 8 P100s against one: "a speedup of 7.99x (99%
# efficiency) for InceptionV3 and 7.91x (98% efficiency) for ResNet-50". cclab: its P100 defaults (the same
# page's one-GPU throughputs) on dgx1_p100, NCCL's algorithms. The page's table (benchmarks.md, May 2017) also has
# VGG16: 154 img/s on one P100, 1081 on eight (7.02x). Its runs kept InceptionV3's and ResNet-50's variables on
# a parameter server in host memory and reduced VGG16's with NCCL (`replicated`); cclab runs all three on NCCL.
table "training: TensorFlow, 8 x P100 (DGX-1) vs 1 (efficiency)"
SOURCE="TensorFlow's benchmarks (tf_cnn_benchmarks, batch 64)"
for model_speedup in inception_v3:7.99 resnet50:7.91 vgg16:7.02; do
  model=${model_speedup%%:*} speedup=${model_speedup##*:}
  cat >"$work/tf.yaml" <<EOF
name: tf
topology: {preset: dgx1_p100, nodes: 1}
workload: $model
compute: {gpu: p100}
communication: {algorithm: nccl}
EOF
  predicted=$("$cclab" predict "$work/tf.yaml" --format csv 2>/dev/null | awk -F, 'NR == 2 { printf "%.1f", 100 * $9 }')
  published=$(awk -v s="$speedup" 'BEGIN { printf "%.1f", 100 * s / 8 }')
  line "$model (speedup $speedup)" "$published" "$predicted" "$(err "$predicted" "$published")" % \
    "\`dgx1_p100:1\` nccl, \`gpu: p100\`"
  record efficiency "$predicted" "$published"
done

echo
# Sergeev and Del Balso, "Horovod: fast and easy distributed deep learning in TensorFlow", arXiv 1802.05799
# (2018): up to 128 Pascal GPUs, 4 per server, 25 GbE. Fig. 6: Horovod over TCP scales Inception V3 at 88 %
# on 128 GPUs; Fig. 7: RDMA (RoCE) adds 3-4 % to its throughput there (we compare with the middle, 3.5 %).
# Horovod's docs/benchmarks.rst: 128 servers of 4 Pascal GPUs (512) on 25 Gb/s RoCE scale Inception V3 at 90 %.
# Horovod of that time fused every 5 ms up to 64 MiB (HOROVOD_CYCLE_TIME and HOROVOD_FUSION_THRESHOLD until
# horovod#2468, 2020; now 1 ms and 128 MiB, cclab's `fusion: horovod` defaults), so the scenario sets them.
# The value of column $1 in the row whose net is $2.
value_of() {
  awk -F, -v name="$1" -v net="$2" 'NR == 1 { for (i = 1; i <= NF; ++i) { if ($i == name) c = i; if ($i == "net") n = i }; next }
    $n == net { print $c }' "$work/h.csv"
}
# One model's rows: 32 servers over TCP and RoCE (the TCP efficiency where $2 gives the published one, and the
# gain of RDMA, published $3), then 128 over RoCE (published efficiency $4).
horovod_rows() {
  local model=$1 tcp_published=$2 gain_published=$3 roce_published=$4 tcp_eff gain eff512
  cat >"$work/h.yaml" <<EOF
name: horovod
topology: {preset: pcie_server, nodes: 32, gpus: 4, nic: 25Gbps, net: [tcp, roce]}
workload: $model
compute: {gpu: p100}
communication: {algorithm: ring, fusion: horovod, cycle: 5ms, bucket: 64MiB}
EOF
  "$cclab" predict "$work/h.yaml" --format csv >"$work/h.csv" 2>/dev/null
  if [[ -n $tcp_published ]]; then
    tcp_eff=$(awk -v e="$(value_of efficiency tcp)" 'BEGIN { printf "%.1f", 100 * e }')
    line "scaling efficiency over TCP, 128 GPUs" "$tcp_published" "$tcp_eff" "$(err "$tcp_eff" "$tcp_published")" \
      % "\`pcie_server:32,gpus=4,nic=25Gbps,net=tcp\` ring, Horovod fusion 5 ms / 64 MiB"
    record efficiency "$tcp_eff" "$tcp_published"
  fi
  gain=$(awk -v r="$(value_of samples_per_s roce)" -v t="$(value_of samples_per_s tcp)" 'BEGIN { printf "%.1f", 100 * (r / t - 1) }')
  line "throughput gain of RDMA over TCP, 128 GPUs" "$gain_published" "$gain" "$(err "$gain" "$gain_published")" \
    % "\`pcie_server:32,gpus=4,nic=25Gbps\` roce against tcp, ring, the same fusion"
  sed -i 's/nodes: 32/nodes: 128/; s/net: \[tcp, roce\]/net: roce/' "$work/h.yaml"
  "$cclab" predict "$work/h.yaml" --format csv >"$work/h.csv" 2>/dev/null
  eff512=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "efficiency") c = i; next }
    NR == 2 { printf "%.1f", 100 * $c }' "$work/h.csv")
  line "scaling efficiency over RoCE, 512 GPUs" "$roce_published" "$eff512" "$(err "$eff512" "$roce_published")" \
    % "\`pcie_server:128,gpus=4,nic=25Gbps,net=roce\` ring, the same fusion"
  record efficiency "$eff512" "$roce_published"
}
table "training: Horovod, Inception V3, P100s, 25 GbE"
SOURCE="Horovod paper (arXiv 1802.05799, Figs. 6-7); Horovod docs/benchmarks.rst"
horovod_rows inception_v3 88 3.5 90

echo
# The same setups with VGG-16 (138 M parameters, 90 % of them in its classifier): Fig. 7 of the paper, RDMA adds
# about 30 % to its throughput on 128 GPUs; docs/benchmarks.rst, 68 % scaling efficiency on 512 GPUs over RoCE.
# Compute: TensorFlow's P100 figure above (154 img/s at batch 64).
table "training: Horovod, VGG-16, P100s, 25 GbE"
SOURCE="Horovod paper (arXiv 1802.05799, Fig. 7); Horovod docs/benchmarks.rst"
horovod_rows vgg16 "" 30 68

echo
printf '\n## Summary\n\n' >>"$md"
for kind_label in "collective:collective rows (busbw)" "latency:small and mid-size rows (time):time" \
  "efficiency:training efficiency rows"; do
  IFS=: read -r kind label times <<<"$kind_label"
  s=$(summary "$kind" "$label" "$times")
  echo "$s"
  echo "- $s" >>"$md"
done

{
  accuracy_preamble
  cat "$md"
  accuracy_footnotes
} >"$work/accuracy.md"
mv "$work/accuracy.md" "$out"
echo "# wrote $out" >&2
