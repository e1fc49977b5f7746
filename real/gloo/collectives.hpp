// torch c10d's ProcessGroupGloo as a native baseline for `cclab bench`: the collective a PyTorch user gets
// for CPU tensors (DDP's default CPU backend), run on the benchmark's own buffers. Torch headers stay inside
// the .cpp so that nothing else pays for them.
//
// Bootstrap: rank 0 serves a c10d TCPStore on an ephemeral port and broadcasts host:port over MPI, so the
// same `mpirun`/`srun` launch that starts the MPI world brings up Gloo too. Gloo's sockets bind to the
// interface named by GLOO_SOCKET_IFNAME when set (as in PyTorch), else to the address of the host name.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/ir/collective.hpp"

namespace cclab::real {

class MpiWorld;

class GlooCollectives {
 public:
  explicit GlooCollectives(const MpiWorld& world, double timeout_s = 60);
  ~GlooCollectives();
  GlooCollectives(const GlooCollectives&) = delete;
  GlooCollectives& operator=(const GlooCollectives&) = delete;

  // Why Gloo cannot run `spec`, or nothing when it can. ProcessGroupGloo has no reduce_scatter and gathers
  // equal blocks only; it has no avg either (done as sum, then scaled, as the engine does).
  static std::optional<std::string> unsupported(const CollectiveSpec& spec);

  // Same buffer conventions as run_rank. Gloo works in place, so an out-of-place allreduce, reduce or
  // broadcast first copies the input into the output (what a PyTorch user does too).
  void run(const CollectiveSpec& spec, const void* input, void* output, bool in_place);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cclab::real
