// Test helpers: integer-valued inputs (so sums are exact in f32, f16 and bf16), the expected result of each
// collective computed directly, and a run of a schedule through the reference executor compared exactly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/exec/thread_transport.hpp"
#include "engine/ir/schedule.hpp"
#include "topology/topology.hpp"

namespace cclab::testing {

// Value of element i of rank r's input: small integers, so that a sum over up to 64 ranks stays exact in
// bf16.
double input_value(int rank, std::uint64_t i);

// Runs `schedule` on the reference executor with input_value() inputs and compares every result element with
// the directly computed expectation. Returns nullopt on success, else the first mismatch.
std::optional<std::string> run_and_check(const Schedule& schedule, bool in_place,
                                         double stall_timeout_s = 60);

// P single-GPU servers on one switch: a world of any size.
topo::Topology flat_topology(int world_size);
// One NVSwitch node of P Hopper GPUs (one NVLink domain, where NVLS applies).
topo::Topology nvlink_domain_topology(int world_size);

}  // namespace cclab::testing
