#include "engine/workload.hpp"

#include <charconv>
#include <map>

#include <fmt/format.h>

#include "common/error.hpp"

namespace cclab {
namespace {

// Appends the parameter tensors of common layers.
class Builder {
 public:
  explicit Builder(std::string name) { w_.name = std::move(name); }
  void conv(const std::string& name, std::uint64_t in, std::uint64_t out, std::uint64_t k,
            bool bias = false) {
    add(name + ".weight", in * out * k * k);
    if (bias) add(name + ".bias", out);
  }
  void norm(const std::string& name, std::uint64_t channels) {  // batch norm or layer norm: scale and shift
    add(name + ".weight", channels);
    add(name + ".bias", channels);
  }
  void linear(const std::string& name, std::uint64_t in, std::uint64_t out, bool bias = true) {
    add(name + ".weight", in * out);
    if (bias) add(name + ".bias", out);
  }
  void add(const std::string& name, std::uint64_t elements) { w_.tensors.push_back({name, elements}); }
  Workload take() { return std::move(w_); }

 private:
  Workload w_;
};

}  // namespace

std::uint64_t Workload::total_elements() const {
  std::uint64_t n = 0;
  for (const Tensor& t : tensors)
    n += t.elements;
  return n;
}

Workload resnet(int depth) {
  // He et al. 2016, bottleneck blocks (torchvision layout: stride on the 3x3, projection on the first block).
  const std::map<int, std::vector<int>> blocks_per_stage{{50, {3, 4, 6, 3}}, {101, {3, 4, 23, 3}}};
  auto it = blocks_per_stage.find(depth);
  if (it == blocks_per_stage.end()) throw ConfigError(fmt::format("resnet depth {} is not 50 or 101", depth));
  Builder b(fmt::format("resnet{}", depth));
  b.conv("conv1", 3, 64, 7);
  b.norm("bn1", 64);
  std::uint64_t in = 64;
  const std::uint64_t widths[4] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    const std::uint64_t width = widths[stage], out = width * 4;
    for (int block = 0; block < it->second[stage]; ++block) {
      const std::string p = fmt::format("layer{}.{}", stage + 1, block);
      b.conv(p + ".conv1", in, width, 1);
      b.norm(p + ".bn1", width);
      b.conv(p + ".conv2", width, width, 3);
      b.norm(p + ".bn2", width);
      b.conv(p + ".conv3", width, out, 1);
      b.norm(p + ".bn3", out);
      if (block == 0) {
        b.conv(p + ".downsample.0", in, out, 1);
        b.norm(p + ".downsample.1", out);
      }
      in = out;
    }
  }
  b.linear("fc", 2048, 1000);
  return b.take();
}

Workload vgg16() {
  // Simonyan & Zisserman 2015, configuration D, 224x224 input (7x7x512 into the first classifier layer).
  Builder b("vgg16");
  const int config[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  std::uint64_t in = 3;
  int index = 0;
  for (int c : config) {
    if (c > 0) {
      b.conv(fmt::format("features.{}", index), in, static_cast<std::uint64_t>(c), 3, true);
      in = static_cast<std::uint64_t>(c);
    }
    index += c > 0 ? 2 : 1;  // conv + relu, or pool
  }
  b.linear("classifier.0", 512 * 7 * 7, 4096);
  b.linear("classifier.3", 4096, 4096);
  b.linear("classifier.6", 4096, 1000);
  return b.take();
}

Workload bert_large() {
  // Devlin et al. 2019: 24 layers, hidden 1024, 16 heads, FFN 4096, WordPiece vocabulary 30522, 512
  // positions.
  Builder b("bert_large");
  const std::uint64_t hidden = 1024, ffn = 4096;
  b.add("embeddings.word_embeddings.weight", 30522 * hidden);
  b.add("embeddings.position_embeddings.weight", 512 * hidden);
  b.add("embeddings.token_type_embeddings.weight", 2 * hidden);
  b.norm("embeddings.LayerNorm", hidden);
  for (int layer = 0; layer < 24; ++layer) {
    const std::string p = fmt::format("encoder.layer.{}", layer);
    for (const char* proj : {"query", "key", "value"})
      b.linear(p + ".attention.self." + proj, hidden, hidden);
    b.linear(p + ".attention.output.dense", hidden, hidden);
    b.norm(p + ".attention.output.LayerNorm", hidden);
    b.linear(p + ".intermediate.dense", hidden, ffn);
    b.linear(p + ".output.dense", ffn, hidden);
    b.norm(p + ".output.LayerNorm", hidden);
  }
  b.linear("pooler.dense", hidden, hidden);
  return b.take();
}

Workload gpt(int layers, int hidden, int vocab, int sequence) {
  if (layers < 1 || hidden < 1 || vocab < 1 || sequence < 1) {
    throw ConfigError(fmt::format("gpt: layers, hidden, vocab and seq must be >= 1"));
  }
  // Radford et al. 2019 (GPT-2): learned positions, pre-LN blocks, 4x MLP, output head tied to the embedding.
  Builder b(fmt::format("gpt:layers={},hidden={},vocab={},seq={}", layers, hidden, vocab, sequence));
  const std::uint64_t h = static_cast<std::uint64_t>(hidden);
  b.add("wte", static_cast<std::uint64_t>(vocab) * h);
  b.add("wpe", static_cast<std::uint64_t>(sequence) * h);
  for (int layer = 0; layer < layers; ++layer) {
    const std::string p = fmt::format("h.{}", layer);
    b.norm(p + ".ln_1", h);
    b.linear(p + ".attn.c_attn", h, 3 * h);
    b.linear(p + ".attn.c_proj", h, h);
    b.norm(p + ".ln_2", h);
    b.linear(p + ".mlp.c_fc", h, 4 * h);
    b.linear(p + ".mlp.c_proj", 4 * h, h);
  }
  b.norm("ln_f", h);
  return b.take();
}

Workload make_workload(std::string_view spec) {
  if (spec == "resnet50") return resnet(50);
  if (spec == "resnet101") return resnet(101);
  if (spec == "vgg16") return vgg16();
  if (spec == "bert_large") return bert_large();
  if (spec == "gpt" || spec.starts_with("gpt:")) {
    std::map<std::string, int> keys{{"layers", 12}, {"hidden", 768}, {"vocab", 50257}, {"seq", 1024}};
    std::string_view rest = spec.size() > 4 ? spec.substr(4) : std::string_view{};
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      const auto eq = item.find('=');
      const std::string key(item.substr(0, eq));
      if (eq == std::string_view::npos || !keys.count(key)) {
        throw ConfigError(
            fmt::format("workload '{}': '{}' is not one of layers=, hidden=, vocab=, seq=", spec, item));
      }
      const std::string_view value = item.substr(eq + 1);
      int parsed = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
      if (ec != std::errc() || end != value.data() + value.size() || parsed < 1) {
        throw ConfigError(
            fmt::format("workload '{}': {} must be a positive integer (got '{}')", spec, key, value));
      }
      keys[key] = parsed;
    }
    return gpt(keys["layers"], keys["hidden"], keys["vocab"], keys["seq"]);
  }
  throw ConfigError(fmt::format("unknown workload '{}' (valid: {})", spec, kWorkloadNames));
}

}  // namespace cclab
