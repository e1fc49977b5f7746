#include "engine/exec/transport.hpp"

#include <cstring>
#include <new>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"

namespace cclab {
namespace {

[[noreturn]] void host_only(const char* call) {
  throw std::logic_error(std::string("Transport::") + call +
                         " is for device transports; the executor does host work itself");
}

}  // namespace

void Transport::idle() {
  std::this_thread::yield();
}

void* Transport::allocate(std::size_t bytes) {
  return ::operator new(bytes == 0 ? 1 : bytes);
}
void Transport::deallocate(void* data) {
  ::operator delete(data);
}
void Transport::upload(void* dst, const void* host_src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, host_src, bytes);
}
void Transport::download(void* host_dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(host_dst, src, bytes);
}

Transport::Request Transport::copy(int, void*, const void*, std::size_t) {
  host_only("copy");
}
Transport::Request Transport::reduce(int, DType, ReduceOp, void*, const void*, const void*, std::uint64_t) {
  host_only("reduce");
}
Transport::Request Transport::recv_reduce(int, int, DType, ReduceOp, void*, const void*, std::uint64_t) {
  host_only("recv_reduce");
}
Transport::Request Transport::scale(int, DType, void*, double, std::uint64_t) {
  host_only("scale");
}

Transport::Request Transport::switch_op(OpId, const Op& op, DType, ReduceOp, Locate) {
  throw BackendError(fmt::format("the {} transport cannot run {}: it moves data point to point only", name(),
                                 to_string(op.kind)));
}

}  // namespace cclab
