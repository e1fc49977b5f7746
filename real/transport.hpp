// What the real executor needs from a network: nonblocking point-to-point between ranks, one ordered stream
// per (peer, channel) so that the k-th send on a channel meets the k-th receive (the IR's matching rule).
// Implemented over MPI (real/mpi_transport.hpp) and NCCL (real/nccl_transport.hpp, GPUs).
#pragma once

#include <cstddef>
#include <string>

namespace cclab::real {

class Transport {
 public:
  using Request = int;  // a handle from isend/irecv, valid until test() reports it complete

  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string name() const = 0;

  // Messages on one (peer, channel) are delivered in the order they were posted.
  virtual Request isend(int peer, int channel, const void* data, std::size_t bytes) = 0;
  virtual Request irecv(int peer, int channel, void* data, std::size_t bytes) = 0;
  // True once the request has completed (the handle is then released). Throws BackendError on a failure,
  // naming the call and the peer.
  virtual bool test(Request request) = 0;
};

}  // namespace cclab::real
