// Under mpirun: every algorithm of every collective, run by the real executor over MPI, against MPI's own
// collective on the same inputs — sizes 0, 1, 7, not divisible by the world, and over a megabyte; f32, f16,
// bf16; sum, avg, min, max; out of place and in place. Results must be bitwise equal to MPI's, and both right
// by the nccl-tests-style check. Rank 0 prints one line per failure and a summary; the exit status is the
// verdict of all ranks.
//
// With --nccl (on a GPU machine; exit status 77, skipped, elsewhere) the engine runs over the NCCL transport
// on device buffers, still against MPI's own result. --topology PRESET plans for another layout of the same
// ranks (e.g. two nodes, to run the hierarchical algorithms' inter-node phases). With --stream-emulation the
// engine runs through StreamEmulationTransport instead: the executor's device path with NCCL's stream and
// group semantics, emulated on the CPU (tests/stream_emulation_transport.hpp).
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/check/verifier.hpp"
#include "engine/exec/executor.hpp"
#include "engine/plan/selection.hpp"
#include "real/check_data.hpp"
#include "real/mpi/transport.hpp"
#include "stream_emulation_transport.hpp"
#include "topology/presets.hpp"
#if CCLAB_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "real/nccl/transport.hpp"
#endif

using namespace cclab;

namespace {

// Copies of the host buffers in the transport's memory, freed on every path.
struct EngineBuffers {
  EngineBuffers(Transport& t, const std::vector<std::byte>& host_input,
                const std::vector<std::byte>& host_output)
      : transport(t), input(t.allocate(host_input.size())), output(t.allocate(host_output.size())) {
    t.upload(input, host_input.data(), host_input.size());
    t.upload(output, host_output.data(), host_output.size());
  }
  ~EngineBuffers() {
    transport.deallocate(input);
    transport.deallocate(output);
  }
  void download(std::vector<std::byte>& host_output) {
    transport.download(host_output.data(), output, host_output.size());
  }
  Transport& transport;
  void* input;
  void* output;
};

}  // namespace

int main(int argc, char** argv) {
  real::MpiWorld world(&argc, &argv);
  real::MpiTransport transport;
  testing::StreamEmulationTransport emulation(transport);
  bool emulate = false, nccl = false;
  std::string topology_spec = world.derived_topology();
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--stream-emulation") == 0) emulate = true;
    if (std::strcmp(argv[a], "--nccl") == 0) nccl = true;
    if (std::strcmp(argv[a], "--topology") == 0 && a + 1 < argc) topology_spec = argv[++a];
  }
  Transport* engine_transport_ptr = emulate ? static_cast<Transport*>(&emulation) : &transport;
#if CCLAB_HAVE_NCCL
  std::unique_ptr<real::NcclTransport> gpu;
  if (nccl) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      if (world.rank() == 0) fmt::print("mpi_collectives_test --nccl: SKIPPED, no usable CUDA device\n");
      return 77;
    }
    gpu = std::make_unique<real::NcclTransport>(world);
    engine_transport_ptr = gpu.get();
  }
#else
  if (nccl) {
    if (world.rank() == 0) fmt::print("mpi_collectives_test --nccl: SKIPPED, built without CUDA and NCCL\n");
    return 77;
  }
#endif
  Transport& engine_transport = *engine_transport_ptr;
  const int P = world.size(), rank = world.rank();
  const topo::Topology topology = topo::make_preset(topology_spec);
  long cases = 0, failures = 0, unsupported = 0;
  const std::uint64_t counts[] = {0, 1, 7, 13ULL * P + 5, (1ULL << 18) + 3};
  for (const Collective c : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather,
                             Collective::Broadcast, Collective::Reduce, Collective::AllToAll,
                             Collective::Gather, Collective::Scatter, Collective::SendRecv}) {
    const bool combines = reduces(c);
    for (const Algorithm* algorithm : algorithms_for(c)) {
      for (const std::uint64_t count : counts) {
        for (const DType dtype : {DType::F32, DType::F16, DType::BF16}) {
          for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Min, ReduceOp::Max}) {
            if (!combines && op != ReduceOp::Sum) continue;
            // An alltoall's count is P equal blocks: `count` blocks' worth.
            const CollectiveSpec spec = spec_for(topology, c, c == Collective::AllToAll ? count * P : count,
                                                 dtype, op, is_rooted(c) ? P - 1 : 0);
            PlanOptions options;
            options.chunk_bytes = 64 << 10;  // several chunks per block at the larger sizes
            const Planned planned = plan_collective(spec, topology, algorithm->name, options);
            if (!planned.schedule) {
              ++unsupported;
              continue;
            }
            verify_or_throw(*planned.schedule);
            for (const bool in_place : {false, true}) {
              if (in_place && !has_in_place_form(c)) continue;
              ++cases;
              const std::size_t elem = dtype_size_bytes(dtype);
              const std::uint64_t out_elems =
                  in_place ? std::max(input_count(spec, rank), output_count(spec, rank))
                           : output_count(spec, rank);
              std::vector<std::byte> input(input_count(spec, rank) * elem), engine(out_elems * elem),
                  native(out_elems * elem);
              real::fill_input(spec, rank, input.data(), engine.data(), in_place);
              real::fill_input(spec, rank, input.data(), native.data(), in_place);
              try {
                // The engine's buffers live where its transport keeps them (the GPU under --nccl).
                EngineBuffers buffers(engine_transport, input, engine);
                run_rank(*planned.schedule, engine_transport, buffers.input, buffers.output, {in_place, 30});
                buffers.download(engine);
              } catch (const Error& e) {
                fmt::print(stderr, "rank {}: {} {} {}: {}\n", rank, algorithm->name, describe(spec),
                           in_place ? "in place" : "out of place", e.what());
                MPI_Abort(MPI_COMM_WORLD, 1);
              }
              real::mpi_native_collective(spec, transport.comm(), input.data(), native.data(), in_place);
              const ElemRange result = result_range(spec, rank);
              const std::uint64_t base = in_place && output_is_block(c) ? in_place_offset(spec, rank) : 0;
              int bad = 0;
              // (count 0: empty buffers have no data pointer, and memcmp must not see a null one: UBSan)
              if (result.count > 0 &&
                  std::memcmp(engine.data() + (base + result.offset) * elem,
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
    fmt::print(
        "mpi_collectives_test: {} ranks on {}, engine over {}: {} cases, {} failures ({} plans not "
        "applicable)\n",
        P, topology.name(), engine_transport.name(), cases, failures, unsupported);
  }
  return failures == 0 ? 0 : 1;
}
