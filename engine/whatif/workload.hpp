// Training workloads as the gradient tensors a data-parallel step allreduces, in registration (forward)
// order; backward produces them in reverse. Presets are computed from the architectures layer by layer, so
// their totals are checkable against the published parameter counts (tests/workload_test.cpp):
//   resnet50 25,557,032 · resnet101 44,549,160 · vgg16 138,357,544 · inception_v3 27,161,264 (with aux) ·
//   bert_large 335,141,888 (with pooler) · gpt (GPT-2 style: tied embeddings, pre-LN blocks;
//   gpt:layers=12,hidden=768,vocab=50257,seq=1024 is GPT-2 small, 124,439,808).
// and against the published forward multiply-adds per sample (torchvision's model tables: resnet50 4.09 G,
// resnet101 7.80 G, vgg16 15.47 G, inception_v3 5.71 G at 299x299), since each tensor also carries what
// backward spends to produce it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cclab {

// What backward spends per sample between the previous gradient (in backward order) and this one: a layer's
// input-gradient and weight-gradient products (2 x 2 x its multiply-adds; the first layer has no input
// gradient) and the activation bytes its backward reads and writes (f16, as mixed precision trains), with
// the parameter-free layers that run before it in backward (ReLU, softmax, GELU, dropout, a tied head) folded
// in. A layer's whole cost sits on its weight: a bias or norm shift gradient needs only the output gradient,
// so it is ready when the layer's backward starts. Both zero when unknown (a file without them).
struct BackwardCost {
  double flops = 0;
  double bytes = 0;
};

struct Tensor {
  std::string name;
  std::uint64_t elements = 0;
  BackwardCost backward;
};

struct Workload {
  std::string name;
  std::vector<Tensor> tensors;  // registration order
  std::uint64_t total_elements() const;
  // True when every tensor's backward cost is known (the presets; files that give it), and not all zero.
  bool has_backward_costs() const;
  double total_backward_flops() const;
};

Workload resnet(int depth);  // 50 or 101
Workload vgg16();
Workload inception_v3();
Workload bert_large();
Workload gpt(int layers, int hidden, int vocab, int sequence);

// "resnet50", "resnet101", "vgg16", "inception_v3", "bert_large", "gpt[:layers=L,hidden=H,vocab=V,seq=S]",
// or a workload file (load_workload_file). Throws ConfigError naming the valid names or the bad key.
Workload make_workload(std::string_view spec);

// A gradient list from a file, in registration order:
//   .csv:          one `name,elements` line per tensor (an optional `name,elements` header; # comments),
//                  or `name,elements,backward_flops,backward_bytes` lines
//   .yaml / .json: {name: NAME, tensors: [{name: N, elements: E}, ...]} or just the list; a tensor may give
//                  backward_flops and backward_bytes (per sample)
// Backward costs are given for every tensor or for none. Errors name file, line and field.
Workload load_workload_file(const std::string& path);
inline constexpr std::string_view kWorkloadNames =
    "resnet50, resnet101, vgg16, inception_v3, bert_large, gpt[:layers=,hidden=,vocab=,seq=], or a file "
    "(.yaml, .json, .csv)";

}  // namespace cclab
