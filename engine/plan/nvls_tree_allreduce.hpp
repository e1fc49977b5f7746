// NCCL's NVLSTree allreduce (2.19+, Hopper and later across nodes), as one pipelined program: inside each
// node the GPUs reduce through the NVSwitch and multicast through it (engine/plan/switch_pattern.hpp), and
// across nodes local rank m's GPUs form a tree per channel (NCCL's double binary tree over the nodes: tree c
// mod 2) that carries block m of the vector, each node's GPU m over its own NIC. Per round of a channel
// (about round_elems / g elements of the member's block), on four IR channels that make one network channel:
//   reduce (4c):   SwitchReduce of the member's range (the node's sum, in the output), once the tree has
//                  taken round k - kPostAhead - 1 up (NCCL's buffer slots between its reduce and tree warps);
//   up (4c+1):     add the children nodes' sums, send the total to the parent node;
//   down (4c+2):   receive the vector's sum from the parent (into scratch; the root has it), send it on to
//                  the children;
//   store (4c+3):  once the vector's sum is back, SwitchStore of it into every GPU of the node.
// Rounds pipeline through all stages at once, as in NCCL's kernel: receives are posted kPostAhead rounds
// ahead (engine/ir/pipeline.hpp), and reduce and multicast are streams of their own (NCCL's separate warps)
// that share the GPU's NVSwitch port as one channel, so both directions of the port work while rounds climb
// and descend the tree, and the reduces are not held by the rounds' way back down.
// Where this differs from NCCL: every local rank carries its block over its own NIC (NCCL sends through one
// head GPU per channel, whose NVLS buffers gather the node's data), which spreads the same network bytes over
// all of a node's NICs.
//   Steps:          per round 2 switch instances in the node and 2·depth tree messages; pipelined over
//                   K rounds per channel: about K + 2·depth.
//   Bytes per rank: through its NVSwitch port, S/g + S/g² up and down for its own block plus what the
//                   others' reduces read and their multicasts write: S + S/g each way in all (as nvls); on
//                   the network, its block S/g up to the parent and down to each child: S/g·(1 + children).
//   α-β cost:       launch + max(port bytes / (B_port·nvlsEff), tree bytes / B_nic) + K·α + 2·depth·α_net.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

// groups: the ranks of each node in local order, all the same size; `channels` trees (and switch channels)
// per local rank; rounds of about `round_elems` elements of the vector (round_elems / g per member; 0: one
// round per channel). One NVLSTree pass (engine/ir/compact.hpp) over the nodes' ranks in that order, O(C·N)
// data; engine/ir/nvls_tree_pass.cpp expands it.
CompactSchedule nvls_tree_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                                    int channels, std::uint64_t round_elems);

// About how many ops the cost walk expands, from the plan's shape alone: per round and channel a rank runs
// two switch ops and at most eight transfers and adds (two children in a binary tree; about seven on
// average), and the walk takes one channel of each tree at a time.
std::uint64_t nvls_tree_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                     std::uint64_t round_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm nvls_tree_allreduce_algorithm();

}  // namespace cclab::planners
