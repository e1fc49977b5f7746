#include "real/train/models.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace cclab::real::train {
namespace {

namespace nn = torch::nn;

struct Mlp : nn::Module {
  Mlp() {
    fc1 = register_module("fc1", nn::Linear(kChannels * kSide * kSide, 768));
    fc2 = register_module("fc2", nn::Linear(768, 384));
    fc3 = register_module("fc3", nn::Linear(384, kClasses));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x.flatten(1)));
    x = torch::relu(fc2->forward(x));
    return fc3->forward(x);
  }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

nn::Conv2d conv3x3(int in, int out, int stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

nn::GroupNorm norm(int channels) {
  return nn::GroupNorm(nn::GroupNormOptions(8, channels));
}

// Two 3x3 convolutions with a residual connection (a 1x1 projection when the shape changes).
struct Block : nn::Module {
  Block(int in, int out, int stride) {
    conv1 = register_module("conv1", conv3x3(in, out, stride));
    norm1 = register_module("norm1", norm(out));
    conv2 = register_module("conv2", conv3x3(out, out, 1));
    norm2 = register_module("norm2", norm(out));
    if (stride != 1 || in != out) {
      project =
          register_module("project", nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(norm1->forward(conv1->forward(x)));
    y = norm2->forward(conv2->forward(y));
    return torch::relu(y + (project ? project->forward(x) : x));
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr}, project{nullptr};
  nn::GroupNorm norm1{nullptr}, norm2{nullptr};
};

struct ResNetTiny : nn::Module {
  ResNetTiny() {
    stem = register_module("stem", conv3x3(kChannels, 32, 1));
    stem_norm = register_module("stem_norm", norm(32));
    const int widths[] = {32, 64, 128, 256};
    int in = 32;
    for (int i = 0; i < 4; ++i) {
      blocks.push_back(register_module(fmt::format("stage{}", i + 1),
                                       std::make_shared<Block>(in, widths[i], i == 0 ? 1 : 2)));
      in = widths[i];
    }
    fc = register_module("fc", nn::Linear(in, kClasses));
  }
  torch::Tensor forward(const torch::Tensor& input) {
    torch::Tensor x = torch::relu(stem_norm->forward(stem->forward(input)));
    for (auto& b : blocks)
      x = b->forward(x);
    return fc->forward(x.mean({2, 3}));
  }
  nn::Conv2d stem{nullptr};
  nn::GroupNorm stem_norm{nullptr};
  std::vector<std::shared_ptr<Block>> blocks;
  nn::Linear fc{nullptr};
};

}  // namespace

std::shared_ptr<torch::nn::Module> make_model(const std::string& name) {
  if (name == "mlp") return std::make_shared<Mlp>();
  if (name == "resnet-tiny") return std::make_shared<ResNetTiny>();
  throw ConfigError(fmt::format("--model '{}' (valid: mlp, resnet-tiny)", name));
}

torch::Tensor forward(const std::shared_ptr<torch::nn::Module>& model, const torch::Tensor& input) {
  if (auto* m = dynamic_cast<Mlp*>(model.get())) return m->forward(input);
  return static_cast<ResNetTiny*>(model.get())->forward(input);
}

Dataset make_dataset(int samples, std::uint64_t seed) {
  torch::manual_seed(seed);
  Dataset d;
  d.inputs = torch::randn({samples, kChannels, kSide, kSide});
  const torch::Tensor teacher = torch::randn({kChannels * kSide * kSide, kClasses}) / 16.0;
  const torch::Tensor logits = d.inputs.flatten(1).matmul(teacher) + 0.1 * torch::randn({samples, kClasses});
  d.labels = logits.argmax(1);
  return d;
}

}  // namespace cclab::real::train
