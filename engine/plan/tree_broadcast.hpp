// Pipelined binary-tree broadcast: the in-order binary tree of tree_allreduce, rooted at the root; each rank
// receives chunk k from its parent and forwards it to its (at most two) children.
//   Steps:          D per chunk, D ≤ ⌈log2 P⌉ the tree depth; D + K - 1 pipelined over K chunks.
//   Bytes per rank: S per child (0, 1 or 2 children).
//   α-β cost:       (D+K-1)·(α + 2·S/(K·B)) for interior ranks sending to two children over one link.
#pragma once

#include <span>

#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

Schedule tree_broadcast(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems);

// One rank's part of a pipelined broadcast on `channel`: its output's `slice` in `rounds` chunks, copied
// from its input at the root (parent < 0) or received from `parent`, each passed on to the children as it
// lands. The tree and the chain broadcasts (chain_broadcast.hpp) are this on every rank.
void broadcast_down(Program& program, int parent, std::span<const int> children, int channel, ElemRange slice,
                    int rounds);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm tree_broadcast_algorithm();

}  // namespace cclab::planners
