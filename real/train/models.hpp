// The models `cclab train` trains, and the synthetic data set they learn. GroupNorm rather than BatchNorm:
// its statistics are per sample, so a data-parallel step is mathematically the step of one process on the
// global batch — what `--validate` checks against — and there are no buffers to keep in sync.
#pragma once

#include <torch/torch.h>

#include <string>

namespace cclab::real::train {

// Input: [N, 3, 16, 16] images; output: logits over kClasses.
inline constexpr int kClasses = 10;
inline constexpr int kChannels = 3, kSide = 16;

// "mlp" (three layers, ~0.9 M parameters) or "resnet-tiny" (a stem and four residual stages of 32-256
// channels, ~1.2 M parameters). ConfigError for other names.
std::shared_ptr<torch::nn::Module> make_model(const std::string& name);
torch::Tensor forward(const std::shared_ptr<torch::nn::Module>& model, const torch::Tensor& input);

// A seeded synthetic classification set: inputs ~ N(0, 1), labels = argmax of a fixed random linear teacher
// of the input plus a little noise, so the task is learnable and every rank generates the same data.
struct Dataset {
  torch::Tensor inputs;  // [N, 3, 16, 16] f32
  torch::Tensor labels;  // [N] int64
};
Dataset make_dataset(int samples, std::uint64_t seed);

}  // namespace cclab::real::train
