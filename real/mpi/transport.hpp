// The MPI world of a `cclab bench` or test run, and the MPI transport of the real executor: CPU buffers,
// MPI_Isend/MPI_Irecv on a private duplicate of MPI_COMM_WORLD with the channel as the tag (MPI delivers the
// messages of one (source, tag, communicator) in order, which is exactly the IR's k-th-matches-k-th rule).
// Errors return codes (MPI_ERRORS_RETURN) and become BackendError naming the call and the peer.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "engine/exec/transport.hpp"
#include "engine/ir/collective.hpp"

namespace cclab::real {

// MPI_Init_thread / MPI_Finalize, and where this rank runs. Local rank and node come from the launcher's
// shared-memory split (works under mpirun and srun alike).
class MpiWorld {
 public:
  MpiWorld(int* argc, char*** argv);
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  int node() const { return node_; }
  int nodes() const { return nodes_; }
  // The CPUs this node's ranks may run on (the union of their affinity masks): where ranks outnumber them,
  // each rank gets local_cores() / local_size() of a core while they all work.
  int local_cores() const { return local_cores_; }
  const std::string& host() const { return host_; }
  // The topology this world implies when none is given: one node per host, its ranks as the node's devices
  // ("pcie_server:NODES,gpus=RANKS_PER_NODE"). ConfigError when hosts run different numbers of ranks.
  std::string derived_topology() const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, node_ = 0, nodes_ = 1, local_cores_ = 1;
  std::string host_;
};

class MpiTransport final : public Transport {
 public:
  MpiTransport();  // duplicates MPI_COMM_WORLD
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override { return rank_; }
  int world_size() const override { return size_; }
  std::string name() const override { return "mpi"; }
  Request isend(int peer, int channel, const void* data, std::size_t bytes) override;
  Request irecv(int peer, int channel, void* data, std::size_t bytes) override;
  bool test(Request request) override;

  MPI_Comm comm() const { return comm_; }

 private:
  Request slot();
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::vector<MPI_Request> requests_;
  std::vector<int> peers_;  // per slot, for error messages
  std::vector<Request> free_;
};

// Throws BackendError("CALL failed (peer P): MPI's message") when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* call, int peer = -1);

// MPI's own collective for `spec` on `comm` (MPI_Allreduce, MPI_Reduce_scatter, MPI_Allgatherv, MPI_Bcast,
// MPI_Reduce), with user-defined types and ops for f16/bf16 and avg finished by scaling, as the engine does.
void mpi_native_collective(const CollectiveSpec& spec, MPI_Comm comm, const void* input, void* output,
                           bool in_place);

}  // namespace cclab::real
