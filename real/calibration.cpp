#include "real/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "common/error.hpp"

namespace cclab::real {

LinearFit fit_alpha_beta(const std::vector<Sample>& samples) {
  std::set<std::uint64_t> sizes;
  for (const Sample& s : samples) {
    if (!(s.seconds > 0)) throw ConfigError("calibration: a sample has a non-positive time");
    sizes.insert(s.bytes);
  }
  if (sizes.size() < 2) throw ConfigError("calibration: the fit needs at least two message sizes");
  // Minimize Σ w (t − α − γ n)² with w = 1/t², γ = 1/β: the 2x2 normal equations.
  double sw = 0, sn = 0, snn = 0, st = 0, snt = 0;
  for (const Sample& s : samples) {
    const double w = 1.0 / (s.seconds * s.seconds), n = static_cast<double>(s.bytes);
    sw += w, sn += w * n, snn += w * n * n, st += w * s.seconds, snt += w * n * s.seconds;
  }
  const double det = sw * snn - sn * sn;
  double gamma = (sw * snt - sn * st) / det;
  double alpha = (st - gamma * sn) / sw;
  // A measured network has positive latency and finite bandwidth; noise can push a fit past either.
  if (gamma <= 0) gamma = 1e-15;
  if (alpha < 0) alpha = 0;
  LinearFit fit{alpha, 1.0 / gamma, 0, 0, samples.size()};
  double sum = 0;
  for (const Sample& s : samples) {
    const double r = (alpha + gamma * s.bytes - s.seconds) / s.seconds;
    sum += r * r;
    fit.max_rel_residual = std::max(fit.max_rel_residual, std::abs(r));
  }
  fit.rms_rel_residual = std::sqrt(sum / samples.size());
  return fit;
}

topo::Topology calibrated_topology(int nodes, int ranks_per_node, const LinearFit& intra,
                                   const std::optional<LinearFit>& inter) {
  if (nodes < 1 || ranks_per_node < 1) throw ConfigError("calibration: needs at least one node and one rank");
  if (nodes > 1 && !inter) throw ConfigError("calibration: several nodes need an inter-node fit");
  topo::Topology t(fmt::format("calibrated:{}x{}", nodes, ranks_per_node));
  for (const topo::LinkKind kind : {topo::LinkKind::Pcie, topo::LinkKind::Ethernet})
    t.set_link_model(kind, topo::LinkModel{1.0, 0.0});
  // rank -> switch -> rank: two hops of half the intra latency each.
  const double hop_intra = intra.alpha_s / 2;
  // rank -> switch -> NIC -> fabric -> NIC -> switch -> rank: the four NIC/fabric hops carry what the inter
  // latency adds to the intra one.
  const double hop_inter = inter ? std::max(0.0, (inter->alpha_s - intra.alpha_s) / 4) : 0.0;
  topo::VertexId fabric = 0;
  if (nodes > 1) fabric = t.add_vertex({"fabric", topo::VertexKind::Switch, -1, -1});
  for (int n = 0; n < nodes; ++n) {
    const auto sw = t.add_vertex({fmt::format("n{}.switch", n), topo::VertexKind::PcieSwitch, n, -1});
    for (int r = 0; r < ranks_per_node; ++r) {
      const auto rank = t.add_vertex({fmt::format("n{}.rank{}", n, r), topo::VertexKind::Gpu, n, r});
      t.add_link(rank, sw, topo::LinkKind::Pcie, intra.beta_Bps, hop_intra);
    }
    if (nodes > 1) {
      const auto nic = t.add_vertex({fmt::format("n{}.nic", n), topo::VertexKind::Nic, n, -1});
      t.add_link(sw, nic, topo::LinkKind::Ethernet, inter->beta_Bps, hop_inter);
      t.add_link(nic, fabric, topo::LinkKind::Ethernet, inter->beta_Bps, hop_inter);
    }
  }
  return t;
}

}  // namespace cclab::real
