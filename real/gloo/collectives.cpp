#include "real/gloo/collectives.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "common/error.hpp"
#include "engine/exec/reduce_kernels.hpp"
#include "real/mpi/transport.hpp"

namespace cclab::real {
namespace {

at::ScalarType torch_type(DType t) {
  switch (t) {
    case DType::F32:
      return at::kFloat;
    case DType::F16:
      return at::kHalf;
    case DType::BF16:
      return at::kBFloat16;
  }
  return at::kFloat;
}

c10d::ReduceOp torch_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:  // Gloo has no avg: sum, then scale
      return c10d::ReduceOp::SUM;
    case ReduceOp::Min:
      return c10d::ReduceOp::MIN;
    case ReduceOp::Max:
      return c10d::ReduceOp::MAX;
  }
  return c10d::ReduceOp::SUM;
}

at::Tensor wrap(const void* data, std::uint64_t count, DType t) {
  return torch::from_blob(const_cast<void*>(data), {static_cast<std::int64_t>(count)},
                          torch::TensorOptions().dtype(torch_type(t)));
}

// Waits for a c10d work item; Gloo's failures (a dead peer, a timeout) arrive as c10::Error.
void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* call) {
  try {
    work->wait();
  } catch (const c10::Error& e) {
    throw BackendError(fmt::format("gloo {} failed: {}", call, e.what_without_backtrace()));
  }
}

}  // namespace

struct GlooCollectives::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  int rank = 0;
};

GlooCollectives::GlooCollectives(const MpiWorld& world, double timeout_s) : impl_(std::make_unique<Impl>()) {
  impl_->rank = world.rank();
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  // Rank 0 serves the rendezvous store on a port the OS picks; everyone learns host:port over MPI.
  c10d::TCPStoreOptions options;
  options.numWorkers = world.size();
  options.timeout = timeout;
  std::vector<char> host(256, '\0');
  int port = 0;
  try {
    if (world.rank() == 0) {
      options.isServer = true;
      options.port = 0;
      options.waitWorkers = false;  // the others connect after the broadcast below
      auto server = c10::make_intrusive<c10d::TCPStore>(world.host(), options);
      port = server->getPort();
      impl_->store = server;
      std::strncpy(host.data(), world.host().c_str(), host.size() - 1);
    }
    check_mpi(MPI_Bcast(host.data(), static_cast<int>(host.size()), MPI_CHAR, 0, MPI_COMM_WORLD),
              "MPI_Bcast");
    check_mpi(MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    if (world.rank() != 0) {
      options.isServer = false;
      options.port = static_cast<std::uint16_t>(port);
      impl_->store = c10::make_intrusive<c10d::TCPStore>(std::string(host.data()), options);
    }
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(timeout);
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME")) {
      gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    } else {
      gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    impl_->group =
        c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, world.rank(), world.size(), gloo_options);
  } catch (const c10::Error& e) {
    throw BackendError(
        fmt::format("gloo set-up (store {}:{}) failed: {}", host.data(), port, e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw BackendError(fmt::format("gloo set-up (store {}:{}) failed: {}", host.data(), port, e.what()));
  }
}

GlooCollectives::~GlooCollectives() = default;

std::optional<std::string> GlooCollectives::unsupported(const CollectiveSpec& spec) {
  if (spec.collective == Collective::ReduceScatter) return "ProcessGroupGloo has no reduce_scatter";
  if (spec.collective == Collective::Gather || spec.collective == Collective::Scatter ||
      spec.collective == Collective::SendRecv)
    return "cclab runs Gloo's allreduce, allgather, broadcast, reduce and alltoall only";
  if (spec.dtype == DType::BF16) return "this LibTorch's Gloo has no bfloat16 reductions";
  if (spec.collective == Collective::AllGather && spec.count % static_cast<std::uint64_t>(spec.world_size))
    return "Gloo gathers equal blocks only";
  if (spec.collective == Collective::AllToAll && spec.count % static_cast<std::uint64_t>(spec.world_size))
    return "an alltoall exchanges equal blocks";
  return std::nullopt;
}

void GlooCollectives::run(const CollectiveSpec& spec, const void* input, void* output, bool in_place) {
  if (auto why = unsupported(spec)) throw ConfigError(fmt::format("gloo: {}", *why));
  const std::size_t elem = dtype_size_bytes(spec.dtype);
  const int rank = impl_->rank;
  auto& group = *impl_->group;
  switch (spec.collective) {
    case Collective::AllReduce:
    case Collective::Reduce:
    case Collective::Broadcast: {
      if (!in_place && spec.count > 0) std::memcpy(output, input, spec.count * elem);
      std::vector<at::Tensor> tensors{wrap(output, spec.count, spec.dtype)};
      if (spec.collective == Collective::AllReduce) {
        c10d::AllreduceOptions o;
        o.reduceOp = torch_op(spec.op);
        wait(group.allreduce(tensors, o), "allreduce");
      } else if (spec.collective == Collective::Reduce) {
        c10d::ReduceOptions o;
        o.reduceOp = torch_op(spec.op);
        o.rootRank = spec.root;
        wait(group.reduce(tensors, o), "reduce");
      } else {
        c10d::BroadcastOptions o;
        o.rootRank = spec.root;
        wait(group.broadcast(tensors, o), "broadcast");
      }
      break;
    }
    case Collective::AllGather: {
      const std::uint64_t block = spec.count / spec.world_size;
      std::byte* out = static_cast<std::byte*>(output);
      const void* mine = in_place ? out + block * rank * elem : input;
      std::vector<at::Tensor> inputs{wrap(mine, block, spec.dtype)};
      std::vector<std::vector<at::Tensor>> outputs(1);
      for (int r = 0; r < spec.world_size; ++r)
        outputs[0].push_back(wrap(out + block * r * elem, block, spec.dtype));
      wait(group.allgather(outputs, inputs), "allgather");
      break;
    }
    case Collective::AllToAll: {
      if (in_place) throw ConfigError("gloo: an alltoall has no in-place form");
      // Equal splits: empty split lists.
      at::Tensor in = wrap(input, spec.count, spec.dtype), out = wrap(output, spec.count, spec.dtype);
      std::vector<int64_t> equal;
      wait(group.alltoall_base(out, in, equal, equal), "alltoall");
      break;
    }
    case Collective::ReduceScatter:
    case Collective::Gather:
    case Collective::Scatter:
    case Collective::SendRecv:
      break;  // refused above
  }
  if (spec.op == ReduceOp::Avg && reduces(spec.collective)) {
    const ElemRange result = result_range(spec, rank);
    scale(spec.dtype, static_cast<std::byte*>(output) + result.offset * elem, 1.0 / spec.world_size,
          result.count);
  }
}

}  // namespace cclab::real
