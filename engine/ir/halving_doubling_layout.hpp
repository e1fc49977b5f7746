// Who takes part in a halving-doubling exchange over P ranks: virtual ranks v < pow2 = 2^⌊log2 P⌋ run the
// halving and doubling; the first 2·extra ranks (extra = P − pow2) pair up, the odd one of each pair standing
// for both. The planner (engine/plan/halving_doubling_allreduce.hpp) builds the schedule on it and the
// model's lower bound (engine/model/lower_bound.hpp) walks the same steps, so it lives in the room both see.
#pragma once

namespace cclab {

struct HalvingDoublingLayout {
  int pow2 = 1;   // 2^⌊log2 P⌋
  int extra = 0;  // P − pow2

  explicit constexpr HalvingDoublingLayout(int world) {
    while (pow2 * 2 <= world)
      pow2 *= 2;
    extra = world - pow2;
  }
  constexpr int rank_of(int v) const { return v < extra ? 2 * v + 1 : v + extra; }
  // Halving steps: log2(pow2).
  constexpr int log2() const {
    int steps = 0;
    for (int m = pow2 / 2; m >= 1; m /= 2)
      ++steps;
    return steps;
  }
};

}  // namespace cclab
