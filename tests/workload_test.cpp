#include <gtest/gtest.h>

#include "common/error.hpp"
#include "engine/workload.hpp"

namespace cclab {
namespace {

// Published parameter counts: torchvision resnet50/resnet101/vgg16, Hugging Face bert-large-uncased (BertModel),
// GPT-2 small (124M, tied head).
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
