// Under mpirun: every algorithm of every collective, run by the real executor over MPI, against MPI's own
// collective on the same inputs — sizes 0, 1, 7, not divisible by the world, and over a megabyte; f32, f16,
// bf16; sum, avg, min, max; out of place and in place. Results must be bitwise equal to MPI's, and both right
// by the nccl-tests-style check. Rank 0 prints one line per failure and a summary; the exit status is the
// verdict of all ranks.
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/registry.hpp"
#include "engine/verifier.hpp"
#include "real/check_data.hpp"
#include "real/executor.hpp"
#include "real/mpi_transport.hpp"
#include "topology/presets.hpp"

using namespace cclab;

int main(int argc, char** argv) {
  real::MpiWorld world(&argc, &argv);
  real::MpiTransport transport;
  const int P = world.size(), rank = world.rank();
  const topo::Topology topology = topo::make_preset(world.derived_topology());
  long cases = 0, failures = 0, unsupported = 0;
  const std::uint64_t counts[] = {0, 1, 7, 13ULL * P + 5, (1ULL << 18) + 3};
  for (const Collective c : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather,
                             Collective::Broadcast, Collective::Reduce}) {
    const bool reduces = c != Collective::AllGather && c != Collective::Broadcast;
    for (const Algorithm* algorithm : algorithms_for(c)) {
      for (const std::uint64_t count : counts) {
        for (const DType dtype : {DType::F32, DType::F16, DType::BF16}) {
          for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Min, ReduceOp::Max}) {
            if (!reduces && op != ReduceOp::Sum) continue;
            const CollectiveSpec spec =
                spec_for(topology, c, count, dtype, op,
                         c == Collective::Broadcast || c == Collective::Reduce ? P - 1 : 0);
            PlanOptions options;
            options.chunk_bytes = 64 << 10;  // several chunks per block at the larger sizes
            const Planned planned = plan_collective(spec, topology, algorithm->name, options);
            if (!planned.schedule) {
              ++unsupported;
              continue;
            }
            verify_or_throw(*planned.schedule);
            for (const bool in_place : {false, true}) {
              ++cases;
              const std::size_t elem = dtype_size_bytes(dtype);
              const std::uint64_t out_elems =
                  in_place ? std::max(input_count(spec, rank), output_count(spec, rank))
                           : output_count(spec, rank);
              std::vector<std::byte> input(input_count(spec, rank) * elem), engine(out_elems * elem),
                  native(out_elems * elem);
              real::fill_input(spec, rank, input.data(), engine.data(), in_place);
              real::fill_input(spec, rank, input.data(), native.data(), in_place);
              real::run_rank(*planned.schedule, transport, input.data(), engine.data(), {in_place, 30});
              real::mpi_native_collective(spec, transport.comm(), input.data(), native.data(), in_place);
              const ElemRange result = result_range(spec, rank);
              const std::uint64_t base =
                  in_place && c == Collective::ReduceScatter ? in_place_offset(spec, rank) : 0;
              int bad = 0;
              if (std::memcmp(engine.data() + (base + result.offset) * elem,
                              native.data() + (base + result.offset) * elem, result.count * elem) != 0) {
                bad = 1;
              }
              if (real::count_wrong(spec, rank, engine.data(), in_place) != 0) bad |= 2;
              if (real::count_wrong(spec, rank, native.data(), in_place) != 0) bad |= 4;
              MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
              if (bad) {
                ++failures;
                if (rank == 0) {
                  fmt::print("FAIL {} {} {}{}:{}{}{}\n", algorithm->name, describe(spec),
                             in_place ? "in place" : "out of place", "", bad & 1 ? " differs from MPI" : "",
                             bad & 2 ? ", engine result wrong" : "", bad & 4 ? ", MPI result wrong" : "");
                }
              }
            }
          }
        }
      }
    }
  }
  if (rank == 0) {
    fmt::print("mpi_collectives_test: {} ranks on {}: {} cases, {} failures ({} plans not applicable)\n", P,
               topology.name(), cases, failures, unsupported);
  }
  return failures == 0 ? 0 : 1;
}
