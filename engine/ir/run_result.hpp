// The result shape every backend returns for one run of a schedule: the reference run (ranks as threads,
// measured wall time), the α-β cost model and SimGrid (modelled time).
#pragma once

#include <cstdint>
#include <vector>

namespace cclab {

struct OpTiming {
  double start_s = 0;
  double end_s = 0;
};

struct RunResult {
  std::vector<std::vector<OpTiming>> op_times;  // [rank][op], seconds from the start of the run
  std::vector<double> rank_end_s;               // when each rank finished its last op
  double total_s = 0;                           // max over ranks
  std::vector<std::uint64_t> bytes_sent;        // per rank
};

}  // namespace cclab
