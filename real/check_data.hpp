// Inputs and expected outputs for checking a collective's result on every rank without communication, as
// nccl-tests does: every input element is a small integer known from (rank, global index), so sums, minima
// and maxima are exact in f32, f16 and bf16 (up to 32 ranks), and every rank can compute any rank's expected
// result locally. Shared by `cclab bench` and the MPI tests.
#pragma once

#include <cstdint>

#include "engine/ir/collective.hpp"

namespace cclab::real {

// The input value of element `global_index` on `rank` (0..8).
double input_value(int rank, std::uint64_t global_index);

// Writes rank's input: into `input`, or, in place, into `output` where the IR's in-place convention puts it.
void fill_input(const CollectiveSpec& spec, int rank, void* input, void* output, bool in_place);

// Elements of rank's result that differ from the expected values (exact for sum/min/max; avg within the
// dtype's rounding). Non-root ranks of reduce have no result.
std::uint64_t count_wrong(const CollectiveSpec& spec, int rank, const void* output, bool in_place);

}  // namespace cclab::real
