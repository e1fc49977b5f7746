// Program order for chunk-pipelined patterns (chains and trees). Ops of one channel start in program order,
// so a rank that wrote "receive chunk k, forward chunk k, receive chunk k+1, ..." could not post the receive
// of chunk k+1 before chunk k had arrived, and every chunk would pay the latency again. NCCL avoids that with
// NCCL_STEPS = 8 buffer slots per connection: a sender runs up to 8 slices ahead. The same here: the receives
// of chunk k+8 are posted before the rest of chunk k's work.
#pragma once

namespace cclab {

// NCCL's NCCL_STEPS (src/include/device.h): the buffer slots of a connection. The simulator keeps as many
// messages of a connection in flight (sim/simulator.cpp).
inline constexpr int kNcclSteps = 8;
inline constexpr int kPostAhead = kNcclSteps;

// Calls post(k) for every chunk and finish(k) once post(k + kPostAhead) has been called (or at the end).
template <typename Post, typename Finish>
void pipeline(int rounds, Post&& post, Finish&& finish) {
  for (int t = 0; t < rounds + kPostAhead; ++t) {
    if (t < rounds) post(t);
    if (t >= kPostAhead && t - kPostAhead < rounds) finish(t - kPostAhead);
  }
}

}  // namespace cclab
