// Pipelined binary-tree broadcast: the in-order binary tree of tree_allreduce, rooted at the root; each rank
// receives chunk k from its parent and forwards it to its (at most two) children.
//   Steps:          D per chunk, D ≤ ⌈log2 P⌉ the tree depth; D + K - 1 pipelined over K chunks.
//   Bytes per rank: S per child (0, 1 or 2 children).
//   α-β cost:       (D+K-1)·(α + 2·S/(K·B)) for interior ranks sending to two children over one link.
#pragma once

#include "engine/ir/schedule.hpp"

namespace cclab::planners {

Schedule tree_broadcast(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems);

}  // namespace cclab::planners
