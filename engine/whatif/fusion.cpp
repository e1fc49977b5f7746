#include "engine/whatif/fusion.hpp"

namespace cclab {

std::vector<BucketSpan> assign_buckets(std::span<const std::uint64_t> bytes, const FusionRule& rule,
                                       std::span<const double> cycle) {
  std::vector<BucketSpan> buckets;
  std::uint64_t cap = rule.first_cap_bytes;
  bool open = false;
  auto close = [&] {
    open = false;
    cap = rule.cap_bytes;
  };
  for (std::size_t k = 0; k < bytes.size(); ++k) {
    if (open) {
      const BucketSpan& b = buckets.back();
      const bool new_tick = !cycle.empty() && cycle[k] != cycle[b.begin];
      const bool would_exceed = rule.never_exceed && b.bytes > 0 && b.bytes + bytes[k] > cap;
      if (new_tick || would_exceed) close();
    }
    if (!open) {
      buckets.push_back({k, k, 0});
      open = true;
    }
    BucketSpan& b = buckets.back();
    b.end = k + 1;
    b.bytes += bytes[k];
    if (!rule.never_exceed && b.bytes >= cap) close();
  }
  return buckets;
}

}  // namespace cclab
