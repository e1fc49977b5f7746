// The α-β fit recovers known parameters, and the calibrated topology's routes carry exactly the fitted
// latency and bandwidth, so the models predict what was measured.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"
#include "engine/model/cost.hpp"
#include "engine/plan/selection.hpp"
#include "real/calibration.hpp"

namespace cclab::real {
namespace {

std::vector<Sample> synthetic(double alpha, double beta, double noise) {
  std::vector<Sample> s;
  int k = 0;
  for (std::uint64_t b = 8; b <= (64u << 20); b *= 4, ++k)
    s.push_back({b, (alpha + b / beta) * (1 + noise * ((k % 3) - 1))});  // ±noise, deterministic
  return s;
}

TEST(Calibration, FitRecoversAlphaAndBeta) {
  const LinearFit exact = fit_alpha_beta(synthetic(2e-6, 12e9, 0));
  EXPECT_NEAR(exact.alpha_s, 2e-6, 1e-12);
  EXPECT_NEAR(exact.beta_Bps / 12e9, 1.0, 1e-9);
  EXPECT_LT(exact.max_rel_residual, 1e-9);
  // With ±5% noise both stay within the noise, because the fit weighs relative error.
  const LinearFit noisy = fit_alpha_beta(synthetic(2e-6, 12e9, 0.05));
  EXPECT_NEAR(noisy.alpha_s / 2e-6, 1.0, 0.1);
  EXPECT_NEAR(noisy.beta_Bps / 12e9, 1.0, 0.1);
  EXPECT_GT(noisy.rms_rel_residual, 0.01);
  EXPECT_LT(noisy.max_rel_residual, 0.1);
}

TEST(Calibration, FitNeedsTwoSizes) {
  EXPECT_THROW(fit_alpha_beta({{64, 1e-6}, {64, 1.1e-6}}), ConfigError);
  EXPECT_THROW(fit_alpha_beta({{64, 0}, {128, 1e-6}}), ConfigError);
}

TEST(Calibration, RoutesCarryTheFittedValues) {
  const LinearFit intra{1.5e-6, 10e9, 0, 0, 0}, inter{8e-6, 3e9, 0, 0, 0};
  const topo::Topology t = calibrated_topology(3, 2, intra, inter);
  ASSERT_EQ(t.gpus().size(), 6u);
  const topo::Route same = t.route_between_ranks(0, 1), across = t.route_between_ranks(1, 4);
  EXPECT_NEAR(same.latency_s, 1.5e-6, 1e-15);
  EXPECT_NEAR(across.latency_s, 8e-6, 1e-15);
  EXPECT_DOUBLE_EQ(same.bottleneck_bandwidth_Bps, 10e9);
  EXPECT_DOUBLE_EQ(across.bottleneck_bandwidth_Bps, 3e9);
  // The α-β time of one 1 MiB send between nodes is the fitted line at 1 MiB.
  PlanOptions one_chunk;
  one_chunk.chunk_bytes = 0;
  const topo::Topology pair = calibrated_topology(2, 1, intra, inter);
  const CollectiveSpec spec = spec_for(pair, Collective::Broadcast, (1u << 20) / 4, DType::F32);
  const Planned planned = plan_collective(spec, pair, "chain", one_chunk);
  ASSERT_TRUE(planned.schedule);
  const CostParams free_local{0, 0};  // the root's local input -> output copy costs nothing here
  EXPECT_NEAR(estimate_cost(*planned.schedule, pair, free_local).total_s, 8e-6 + (1u << 20) / 3e9, 1e-9);
}

}  // namespace
}  // namespace cclab::real
