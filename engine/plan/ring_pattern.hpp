// The ring reduce-scatter and allgather passes that ring allreduce, ring reduce_scatter, ring allgather and
// the hierarchical phases share.
//
// With P ranks in ring order, position i sends to i+1 and receives from i-1. The buffer is cut into C channel
// slices of every rank's block, each slice into K pipeline chunks. Reduce-scatter: at step s (0..P-2)
// position i sends block (i-s) and reduces block (i-s-1) into its partial sums; after P-1 steps it holds
// block (i+1) reduced over all ranks. Allgather: at step s it forwards block (i+1-s) and receives block
// (i-s). Block j belongs to rank ring[j-1], so that rank r ends with its own block, as reduce_scatter
// requires. Program order is step-major, chunk-minor, so chunk k of step s+1 leaves as soon as chunk k of
// step s arrived. The pass is data (engine/ir/compact.hpp, RingPass); engine/ir/ring_pass.cpp expands it.
#pragma once

#include <vector>

#include "engine/ir/compact.hpp"

namespace cclab::planners {

// A ring pass over `count` elements with rings[c] the member order of channel c; roles are the pass's
// defaults (allreduce: partial sums, reduced blocks and the gathered result all in the output).
RingPass ring_pass(const std::vector<std::vector<int>>& rings, bool reduce_scatter, bool allgather,
                   std::uint64_t count, std::uint64_t chunk_elems);

// The three ring collectives as passes over `members` ranks.
RingPass ring_allreduce_pass(const std::vector<std::vector<int>>& rings, std::uint64_t count,
                             std::uint64_t chunk_elems);
RingPass ring_reduce_scatter_pass(const std::vector<std::vector<int>>& rings, std::uint64_t count,
                                  std::uint64_t chunk_elems);
RingPass ring_allgather_pass(const std::vector<std::vector<int>>& rings, std::uint64_t count,
                             std::uint64_t chunk_elems);

}  // namespace cclab::planners
