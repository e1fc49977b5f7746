#include <gtest/gtest.h>

#include "common/error.hpp"
#include "engine/workload.hpp"

namespace cclab {
namespace {

// Published parameter counts: torchvision resnet50/resnet101/vgg16, Hugging Face bert-large-uncased
// (BertModel), GPT-2 small (124M, tied head).
TEST(Workload, PresetTotalsMatchPublishedCounts) {
  EXPECT_EQ(make_workload("resnet50").total_elements(), 25'557'032u);
  EXPECT_EQ(make_workload("resnet101").total_elements(), 44'549'160u);
  EXPECT_EQ(make_workload("vgg16").total_elements(), 138'357'544u);
  EXPECT_EQ(make_workload("bert_large").total_elements(), 335'141'888u);
  EXPECT_EQ(make_workload("gpt:layers=12,hidden=768,vocab=50257,seq=1024").total_elements(), 124'439'808u);
}

TEST(Workload, TensorsInRegistrationOrder) {
  const Workload w = make_workload("resnet50");
  EXPECT_EQ(w.tensors.front().name, "conv1.weight");
  EXPECT_EQ(w.tensors.back().name, "fc.bias");
  EXPECT_EQ(w.tensors.size(), 161u);  // 53 convs + 53 batch norms x 2 + fc x 2
}

TEST(Workload, BadSpecsSayWhatIsValid) {
  EXPECT_THROW(make_workload("alexnet"), ConfigError);
  EXPECT_THROW(make_workload("gpt:layers=0"), ConfigError);
  EXPECT_THROW(make_workload("gpt:depth=3"), ConfigError);
  try {
    make_workload("alexnet");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("resnet50"), std::string::npos);
  }
}

}  // namespace
}  // namespace cclab

#include "engine/step_model.hpp"

namespace cclab {
namespace {

TEST(StepModel, BucketsFollowDdpRules) {
  const Workload w = make_workload("resnet50");
  const auto buckets = make_buckets(w, FusionPolicy{}, DType::F32);
  ASSERT_GE(buckets.size(), 2u);
  std::uint64_t total = 0;
  for (const Bucket& b : buckets)
    total += b.elements;
  EXPECT_EQ(total, w.total_elements());
  EXPECT_EQ(buckets.front().first_tensor, w.tensors.size() - 1);  // backward starts at the last tensor
  EXPECT_EQ(buckets.back().last_tensor, 0u);
  EXPECT_GE(buckets.front().elements * 4, 1u << 20);  // the small first bucket closes at 1 MiB
  EXPECT_LT(buckets.front().elements * 4, 8u << 20);
  for (std::size_t i = 1; i + 1 < buckets.size(); ++i)
    EXPECT_GE(buckets[i].elements * 4, 25u << 20);
  // fp16 compression halves the bytes, so the same threshold holds twice the elements.
  EXPECT_LT(make_buckets(w, FusionPolicy{.fp16_compression = true}, DType::F16).size(), buckets.size() + 1);
}

TEST(StepModel, FreeCommunicationScalesPerfectly) {
  const Workload w = make_workload("resnet50");
  ComputeProfile compute{0.03, 0.06, 0.005, 256};
  const StepPrediction p =
      predict_step(w, compute, FusionPolicy{}, 64, [](const CollectiveSpec&, std::string& used) {
        used = "none";
        return 0.0;
      });
  EXPECT_DOUBLE_EQ(p.step_s, 0.095);
  EXPECT_DOUBLE_EQ(p.efficiency, 1.0);
  EXPECT_DOUBLE_EQ(p.samples_per_s, 64 * 256 / 0.095);
}

TEST(StepModel, CommunicationHidesBehindBackwardUntilItCannot) {
  const Workload w = make_workload("resnet50");
  ComputeProfile compute{0.03, 0.06, 0.0, 256};
  auto constant = [](double seconds) {
    return [seconds](const CollectiveSpec&, std::string& used) {
      used = "fixed";
      return seconds;
    };
  };
  const StepPrediction hidden = predict_step(w, compute, FusionPolicy{}, 8, constant(1e-4));
  EXPECT_LT(hidden.exposed_s, 1.5e-4);  // only the last bucket, after backward ends, is exposed
  const StepPrediction slow = predict_step(w, compute, FusionPolicy{}, 8, constant(0.05));
  // One stream: the buckets queue up, and everything past the end of backward is exposed.
  const double last_end = slow.buckets.back().end_s;
  EXPECT_DOUBLE_EQ(slow.step_s, last_end);
  EXPECT_NEAR(slow.exposed_s, last_end - 0.09, 1e-12);
  EXPECT_LT(slow.efficiency, hidden.efficiency);
  for (std::size_t i = 1; i < slow.buckets.size(); ++i)
    EXPECT_GE(slow.buckets[i].start_s, slow.buckets[i - 1].end_s);
}

}  // namespace
}  // namespace cclab
