// Hypercube allgather (recursive doubling), as nccl-tests' hypercube_perf runs it on NCCL: after its own
// block is in place, rank r exchanges with rank r XOR 2^k at step k, sending the 2^k blocks it holds (those
// of the sub-cube r & ~(2^k − 1) .. + 2^k − 1) and receiving the partner's 2^k, one ncclSend and one ncclRecv
// in a group per step, log2 P groups one after another on the stream. Powers of two only (hypercube_perf
// skips other rank counts). A step's transfer runs on every channel (its one peer takes them all, as
// sendrecv's), each part in pipeline chunks.
//
// A step is a kernel of its own: its first op on each channel waits for the previous step's last send and
// last receive on every channel (stream order), and a send also waits for the ops that wrote what it
// carries (the race check's proof). The model charges one launch for the whole: the host enqueues the
// log2 P groups back to back, so at sizes where the GPUs are busy the later launches hide behind the earlier
// steps, and where they are not (a few KiB) the measured time carries log2 P launches (docs/algorithms.md).
//   Steps:          log2 P; K chunks per channel and step.
//   Bytes per rank: (P-1)/P · S sent and received, S the whole output (as the ring), in log2 P messages.
//   α-β cost:       launch + log2 P · α + (P-1)/P · S / B, B the bandwidth to the farthest partner at each
//                   step (across nodes, the last log2 N steps cross the network with half the data, then a
//                   quarter, ...).
#pragma once

#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

// `channels` IR channels, every one used by each step; blocks in chunks of `chunk_elems` (0: whole). Refused
// up front (common/memory.hpp) where the explicit plan would not fit the memory budget.
Schedule hypercube_allgather(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems);
// About how many ops that plan has, known without building it (for `auto`, which leaves out plans above
// kAutoMaxExplicitOps, and for the memory guard): 4.3 M on 2,048 GPUs at 1 GiB, 44 M on 16,384.
std::uint64_t hypercube_allgather_ops(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm hypercube_allgather_algorithm();

}  // namespace cclab::planners
