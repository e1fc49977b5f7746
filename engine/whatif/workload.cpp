#include "engine/whatif/workload.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/error.hpp"
#include "common/files.hpp"

namespace cclab {
namespace {

constexpr double kActivationBytes = 2;  // f16 activations and their gradients (mixed precision)

// Appends the parameter tensors of common layers with what backward spends on them (Tensor::backward).
// Positions are per sample: a convolution's output pixels (H x W), a transformer's tokens.
class Builder {
 public:
  explicit Builder(std::string name) { w_.name = std::move(name); }

  // A kh x kw convolution from `in` channels on in_side x in_side to `out` channels on out_side x out_side.
  void conv(const std::string& name, std::uint64_t in, std::uint64_t out, std::uint64_t kh, std::uint64_t kw,
            std::uint64_t in_side, std::uint64_t out_side, bool bias = false) {
    const double in_act = static_cast<double>(in * in_side * in_side);
    const double out_act = static_cast<double>(out * out_side * out_side);
    product(name, in * out * kh * kw, static_cast<double>(in * kh * kw) * out_act, in_act, out_act);
    if (bias) add(name + ".bias", out);
  }
  void linear(const std::string& name, std::uint64_t in, std::uint64_t out, std::uint64_t positions,
              bool bias = true) {
    product(name, in * out, static_cast<double>(in * out * positions), static_cast<double>(in * positions),
            static_cast<double>(out * positions));
    if (bias) add(name + ".bias", out);
  }
  // Batch norm or layer norm over `channels` at `positions`: scale and shift. Its backward reads the input
  // and the output gradient and writes the input gradient, a few operations per element.
  void norm(const std::string& name, std::uint64_t channels, std::uint64_t positions) {
    const double act = static_cast<double>(channels * positions);
    add(name + ".weight", channels, {8 * act, 3 * act * kActivationBytes});
    add(name + ".bias", channels);
  }
  // A lookup table: backward adds the output gradient into the rows it read (no input gradient).
  void embedding(const std::string& name, std::uint64_t rows, std::uint64_t width, std::uint64_t positions) {
    const double act = static_cast<double>(width * positions);
    add(name, rows * width, {act, 3 * act * kActivationBytes});
  }
  // A parameter-free layer after the last one added (ReLU, pooling, softmax, dropout, a residual add): its
  // backward runs before that layer's, so it delays the gradients of that layer; `touches` elements read or
  // written per element of its output.
  void elementwise(double elements, double touches = 3) {
    w_.tensors.back().backward.flops += elements;
    w_.tensors.back().backward.bytes += touches * elements * kActivationBytes;
  }
  // Extra products after the last layer added (attention's QK^T and AV, a tied output head): their input
  // gradients and their weight-like gradients, 2 x 2 x the multiply-adds.
  void products(double macs, double activations) {
    w_.tensors.back().backward.flops += 4 * macs;
    w_.tensors.back().backward.bytes += 4 * activations * kActivationBytes;
  }
  void add(const std::string& name, std::uint64_t elements, BackwardCost cost = {}) {
    w_.tensors.push_back({name, elements, cost});
  }
  Workload take() { return std::move(w_); }

 private:
  // A layer that is a product with its weight (convolution, linear): backward computes the weight gradient
  // (the multiply-adds again, 2 FLOPs each) and, unless it is the network's first layer, the input gradient
  // (as many); it reads the output gradient for both and the input for the weight gradient, and writes the
  // input gradient.
  void product(const std::string& name, std::uint64_t weights, double macs, double in_act, double out_act) {
    const bool input_gradient = !w_.tensors.empty();
    const double flops = 2 * macs * (input_gradient ? 2 : 1);
    const double touched = 2 * out_act + in_act + (input_gradient ? in_act : 0);
    add(name + ".weight", weights, {flops, touched * kActivationBytes});
  }

  Workload w_;
};

}  // namespace

std::uint64_t Workload::total_elements() const {
  std::uint64_t n = 0;
  for (const Tensor& t : tensors)
    n += t.elements;
  return n;
}

bool Workload::has_backward_costs() const {
  bool any = false;
  for (const Tensor& t : tensors) {
    if (t.backward.flops < 0 || t.backward.bytes < 0) return false;
    any = any || t.backward.flops > 0 || t.backward.bytes > 0;
  }
  return any;
}

double Workload::total_backward_flops() const {
  double f = 0;
  for (const Tensor& t : tensors)
    f += t.backward.flops;
  return f;
}

Workload resnet(int depth) {
  // He et al. 2016, bottleneck blocks (torchvision layout: stride on the 3x3, projection on the first block),
  // 224x224 input.
  const std::map<int, std::vector<int>> blocks_per_stage{{50, {3, 4, 6, 3}}, {101, {3, 4, 23, 3}}};
  auto it = blocks_per_stage.find(depth);
  if (it == blocks_per_stage.end()) throw ConfigError(fmt::format("resnet depth {} is not 50 or 101", depth));
  Builder b(fmt::format("resnet{}", depth));
  b.conv("conv1", 3, 64, 7, 7, 224, 112);
  b.norm("bn1", 64, 112 * 112);
  b.elementwise(64.0 * 112 * 112);       // ReLU
  b.elementwise(64.0 * 56 * 56, 2 + 4);  // 3x3 max pool: the gradient scattered back to 112x112
  std::uint64_t in = 64, side = 56;
  const std::uint64_t widths[4] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    const std::uint64_t width = widths[stage], out = width * 4;
    const std::uint64_t out_side = stage == 0 ? 56 : side / 2;
    for (int block = 0; block < it->second[stage]; ++block) {
      const std::string p = fmt::format("layer{}.{}", stage + 1, block);
      const std::uint64_t pos = out_side * out_side;
      b.conv(p + ".conv1", in, width, 1, 1, side, side);
      b.norm(p + ".bn1", width, side * side);
      b.elementwise(static_cast<double>(width * side * side));
      b.conv(p + ".conv2", width, width, 3, 3, side, out_side);
      b.norm(p + ".bn2", width, pos);
      b.elementwise(static_cast<double>(width * pos));
      b.conv(p + ".conv3", width, out, 1, 1, out_side, out_side);
      b.norm(p + ".bn3", out, pos);
      if (block == 0) {
        b.conv(p + ".downsample.0", in, out, 1, 1, side, out_side);
        b.norm(p + ".downsample.1", out, pos);
      }
      b.elementwise(static_cast<double>(out * pos), 5);  // residual add and ReLU
      in = out;
      side = out_side;
    }
  }
  b.elementwise(2048.0 * 7 * 7, 2);  // global average pool
  b.linear("fc", 2048, 1000, 1);
  return b.take();
}

Workload inception_v3() {
  // Szegedy et al. 2016 "Rethinking the Inception Architecture", in torchvision's layout with the auxiliary
  // classifier (it trains, so its gradients are allreduced too): 27,161,264 parameters; 299x299 input.
  Builder b("inception_v3");
  // BasicConv2d: a bias-free kh x kw convolution, batch norm, ReLU.
  auto cv = [&b](const std::string& name, std::uint64_t in, std::uint64_t out, std::uint64_t kh,
                 std::uint64_t kw, std::uint64_t in_side, std::uint64_t out_side) {
    b.conv(name + ".conv", in, out, kh, kw, in_side, out_side);
    b.norm(name + ".bn", out, out_side * out_side);
    b.elementwise(static_cast<double>(out * out_side * out_side));
  };
  auto block_a = [&](const std::string& p, std::uint64_t in, std::uint64_t pool) {  // 35x35
    cv(p + ".branch1x1", in, 64, 1, 1, 35, 35);
    cv(p + ".branch5x5_1", in, 48, 1, 1, 35, 35);
    cv(p + ".branch5x5_2", 48, 64, 5, 5, 35, 35);
    cv(p + ".branch3x3dbl_1", in, 64, 1, 1, 35, 35);
    cv(p + ".branch3x3dbl_2", 64, 96, 3, 3, 35, 35);
    cv(p + ".branch3x3dbl_3", 96, 96, 3, 3, 35, 35);
    cv(p + ".branch_pool", in, pool, 1, 1, 35, 35);
  };
  auto block_c = [&](const std::string& p, std::uint64_t c7) {  // factorized 7x7, 768 channels, 17x17
    cv(p + ".branch1x1", 768, 192, 1, 1, 17, 17);
    cv(p + ".branch7x7_1", 768, c7, 1, 1, 17, 17);
    cv(p + ".branch7x7_2", c7, c7, 1, 7, 17, 17);
    cv(p + ".branch7x7_3", c7, 192, 7, 1, 17, 17);
    cv(p + ".branch7x7dbl_1", 768, c7, 1, 1, 17, 17);
    cv(p + ".branch7x7dbl_2", c7, c7, 7, 1, 17, 17);
    cv(p + ".branch7x7dbl_3", c7, c7, 1, 7, 17, 17);
    cv(p + ".branch7x7dbl_4", c7, c7, 7, 1, 17, 17);
    cv(p + ".branch7x7dbl_5", c7, 192, 1, 7, 17, 17);
    cv(p + ".branch_pool", 768, 192, 1, 1, 17, 17);
  };
  auto block_e = [&](const std::string& p, std::uint64_t in) {  // expanded filter bank, 2048 out, 8x8
    cv(p + ".branch1x1", in, 320, 1, 1, 8, 8);
    cv(p + ".branch3x3_1", in, 384, 1, 1, 8, 8);
    cv(p + ".branch3x3_2a", 384, 384, 1, 3, 8, 8);
    cv(p + ".branch3x3_2b", 384, 384, 3, 1, 8, 8);
    cv(p + ".branch3x3dbl_1", in, 448, 1, 1, 8, 8);
    cv(p + ".branch3x3dbl_2", 448, 384, 3, 3, 8, 8);
    cv(p + ".branch3x3dbl_3a", 384, 384, 1, 3, 8, 8);
    cv(p + ".branch3x3dbl_3b", 384, 384, 3, 1, 8, 8);
    cv(p + ".branch_pool", in, 192, 1, 1, 8, 8);
  };
  cv("Conv2d_1a_3x3", 3, 32, 3, 3, 299, 149);
  cv("Conv2d_2a_3x3", 32, 32, 3, 3, 149, 147);
  cv("Conv2d_2b_3x3", 32, 64, 3, 3, 147, 147);  // then a 3x3/2 max pool to 73x73
  cv("Conv2d_3b_1x1", 64, 80, 1, 1, 73, 73);
  cv("Conv2d_4a_3x3", 80, 192, 3, 3, 73, 71);  // then a 3x3/2 max pool to 35x35
  block_a("Mixed_5b", 192, 32);
  block_a("Mixed_5c", 256, 64);
  block_a("Mixed_5d", 288, 64);
  cv("Mixed_6a.branch3x3", 288, 384, 3, 3, 35, 17);  // grid reduction 35 -> 17
  cv("Mixed_6a.branch3x3dbl_1", 288, 64, 1, 1, 35, 35);
  cv("Mixed_6a.branch3x3dbl_2", 64, 96, 3, 3, 35, 35);
  cv("Mixed_6a.branch3x3dbl_3", 96, 96, 3, 3, 35, 17);
  block_c("Mixed_6b", 128);
  block_c("Mixed_6c", 160);
  block_c("Mixed_6d", 160);
  block_c("Mixed_6e", 192);
  cv("AuxLogits.conv0", 768, 128, 1, 1, 5, 5);  // after a 5x5/3 average pool
  cv("AuxLogits.conv1", 128, 768, 5, 5, 5, 1);
  b.linear("AuxLogits.fc", 768, 1000, 1);
  cv("Mixed_7a.branch3x3_1", 768, 192, 1, 1, 17, 17);  // grid reduction 17 -> 8
  cv("Mixed_7a.branch3x3_2", 192, 320, 3, 3, 17, 8);
  cv("Mixed_7a.branch7x7x3_1", 768, 192, 1, 1, 17, 17);
  cv("Mixed_7a.branch7x7x3_2", 192, 192, 1, 7, 17, 17);
  cv("Mixed_7a.branch7x7x3_3", 192, 192, 7, 1, 17, 17);
  cv("Mixed_7a.branch7x7x3_4", 192, 192, 3, 3, 17, 8);
  block_e("Mixed_7b", 1280);
  block_e("Mixed_7c", 2048);
  b.linear("fc", 2048, 1000, 1);
  return b.take();
}

Workload vgg16() {
  // Simonyan & Zisserman 2015, configuration D, 224x224 input (7x7x512 into the first classifier layer).
  Builder b("vgg16");
  const int config[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  std::uint64_t in = 3, side = 224;
  int index = 0;
  for (int c : config) {
    const auto out = static_cast<std::uint64_t>(c);
    if (c > 0) {
      b.conv(fmt::format("features.{}", index), in, out, 3, 3, side, side, true);
      b.elementwise(static_cast<double>(out * side * side));  // ReLU
      in = out;
    } else {
      side /= 2;
      b.elementwise(static_cast<double>(in * side * side), 6);  // 2x2 max pool
    }
    index += c > 0 ? 2 : 1;  // conv + relu, or pool
  }
  b.linear("classifier.0", 512 * 7 * 7, 4096, 1);
  b.linear("classifier.3", 4096, 4096, 1);
  b.linear("classifier.6", 4096, 1000, 1);
  return b.take();
}

namespace {

// One transformer encoder/decoder block's attention core after the value projection: QK^T and AV (2 x seq^2
// x hidden multiply-adds), softmax and dropout on heads x seq^2 scores.
void attention_core(Builder& b, std::uint64_t hidden, std::uint64_t heads, std::uint64_t seq) {
  const double scores = static_cast<double>(heads * seq * seq);
  b.products(2.0 * static_cast<double>(seq * seq * hidden), 4.0 * static_cast<double>(seq * hidden));
  b.elementwise(scores, 6);
}

}  // namespace

Workload bert_large() {
  // Devlin et al. 2019: 24 layers, hidden 1024, 16 heads, FFN 4096, WordPiece vocabulary 30522, 512
  // positions. Backward costs at sequence length 128, the pretraining phase the default compute profile
  // measures (no masked-LM head: the list ends at the pooler, on the [CLS] token).
  Builder b("bert_large");
  const std::uint64_t hidden = 1024, ffn = 4096, heads = 16, seq = 128;
  b.embedding("embeddings.word_embeddings.weight", 30522, hidden, seq);
  b.embedding("embeddings.position_embeddings.weight", 512, hidden, seq);
  b.embedding("embeddings.token_type_embeddings.weight", 2, hidden, seq);
  b.norm("embeddings.LayerNorm", hidden, seq);
  for (int layer = 0; layer < 24; ++layer) {
    const std::string p = fmt::format("encoder.layer.{}", layer);
    for (const char* proj : {"query", "key", "value"})
      b.linear(p + ".attention.self." + proj, hidden, hidden, seq);
    attention_core(b, hidden, heads, seq);
    b.linear(p + ".attention.output.dense", hidden, hidden, seq);
    b.norm(p + ".attention.output.LayerNorm", hidden, seq);
    b.elementwise(static_cast<double>(hidden * seq), 5);  // dropout and residual add
    b.linear(p + ".intermediate.dense", hidden, ffn, seq);
    b.elementwise(static_cast<double>(ffn * seq));  // GELU
    b.linear(p + ".output.dense", ffn, hidden, seq);
    b.norm(p + ".output.LayerNorm", hidden, seq);
    b.elementwise(static_cast<double>(hidden * seq), 5);
  }
  b.linear("pooler.dense", hidden, hidden, 1);
  return b.take();
}

Workload gpt(int layers, int hidden, int vocab, int sequence) {
  // Far above any published model (GPT-3: 96 layers, hidden 12,288; PaLM: 118 layers, hidden 18,432,
  // vocabulary 256 k) and low enough that a typo cannot make the model millions of tensors
  // (gpt:layers=9540228 ran for minutes: found by the scenario fuzzer).
  const auto check = [](const char* key, int value, int max) {
    if (value < 1 || value > max)
      throw ConfigError(fmt::format("gpt: {} must be in [1, {}] (got {})", key, max, value));
  };
  check("layers", layers, 1000);
  check("hidden", hidden, 1 << 17);
  check("vocab", vocab, 1 << 22);
  check("seq", sequence, 1 << 22);
  // Radford et al. 2019 (GPT-2): learned positions, pre-LN blocks, 4x MLP, 64-wide heads, output head tied to
  // the embedding (its products run first in backward, before ln_f's gradients). Costs per sequence.
  Builder b(fmt::format("gpt:layers={},hidden={},vocab={},seq={}", layers, hidden, vocab, sequence));
  const std::uint64_t h = static_cast<std::uint64_t>(hidden), v = static_cast<std::uint64_t>(vocab),
                      s = static_cast<std::uint64_t>(sequence);
  b.embedding("wte", v, h, s);
  b.embedding("wpe", s, h, s);
  for (int layer = 0; layer < layers; ++layer) {
    const std::string p = fmt::format("h.{}", layer);
    b.norm(p + ".ln_1", h, s);
    b.linear(p + ".attn.c_attn", h, 3 * h, s);
    attention_core(b, h, std::max<std::uint64_t>(1, h / 64), s);
    b.linear(p + ".attn.c_proj", h, h, s);
    b.elementwise(static_cast<double>(h * s), 3);  // residual add
    b.norm(p + ".ln_2", h, s);
    b.linear(p + ".mlp.c_fc", h, 4 * h, s);
    b.elementwise(static_cast<double>(4 * h * s));  // GELU
    b.linear(p + ".mlp.c_proj", 4 * h, h, s);
    b.elementwise(static_cast<double>(h * s), 3);
  }
  b.norm("ln_f", h, s);
  b.products(static_cast<double>(h * v * s), static_cast<double>((h + v) * s));  // the tied head
  b.elementwise(static_cast<double>(v * s), 3);                                  // softmax cross-entropy
  return b.take();
}

namespace {

std::uint64_t parse_elements(const std::string& text, const std::string& where) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0)
    throw ConfigError(fmt::format("{}: must be a positive integer (got '{}')", where, text));
  return value;
}

// A backward cost field: a finite number >= 0 (FLOPs or bytes per sample, exponents allowed).
double parse_cost(const std::string& text, const std::string& where) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0)
    throw ConfigError(fmt::format("{}: must be a number >= 0 (got '{}')", where, text));
  return value;
}

// Backward costs come for every tensor or for none (`given` per tensor, in order).
void check_costs_all_or_none(const std::string& path, const std::vector<bool>& given) {
  for (std::size_t i = 1; i < given.size(); ++i) {
    if (given[i] != given[0]) {
      throw ConfigError(
          fmt::format("{}: tensor {} {} backward_flops/backward_bytes but tensor 0 {}: give them for every "
                      "tensor or none",
                      path, i, given[i] ? "gives" : "lacks", given[0] ? "gives them" : "does not"));
    }
  }
}

Workload load_workload_csv(const std::string& path, std::istream& in) {
  Workload w;
  w.name = std::filesystem::path(path).stem().string();
  std::vector<bool> given;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> fields;
    for (std::size_t from = 0;;) {
      const auto comma = line.find(',', from);
      fields.push_back(line.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    if (fields.size() != 2 && fields.size() != 4) {
      throw ConfigError(fmt::format(
          "{}:{}: expected 'name,elements' or 'name,elements,backward_flops,backward_bytes' (got '{}')", path,
          number, line));
    }
    if (w.tensors.empty() && given.empty() && fields[0] == "name" && fields[1] == "elements") continue;
    const std::string& name = fields[0];
    if (name.empty()) throw ConfigError(fmt::format("{}:{}: name: must not be empty", path, number));
    Tensor t{name, parse_elements(fields[1], fmt::format("{}:{}: elements", path, number)), {}};
    if (fields.size() == 4) {
      t.backward.flops = parse_cost(fields[2], fmt::format("{}:{}: backward_flops", path, number));
      t.backward.bytes = parse_cost(fields[3], fmt::format("{}:{}: backward_bytes", path, number));
    }
    given.push_back(fields.size() == 4);
    w.tensors.push_back(std::move(t));
  }
  check_costs_all_or_none(path, given);
  return w;
}

// YAML, and JSON through the same parser (JSON is a subset of YAML 1.2 for these documents).
Workload load_workload_yaml(const std::string& path, const std::string& text) {
  auto fail = [&](const YAML::Node& node, const std::string& field, const std::string& message) {
    throw_input_error(path, node.Mark().line + 1, field, message);
  };
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}:{}: not valid YAML/JSON: {}", path, e.mark.line + 1, e.msg));
  }
  Workload w;
  w.name = std::filesystem::path(path).stem().string();
  if (root.IsMap()) {
    for (const auto& kv : root) {
      if (!kv.first.IsScalar()) fail(kv.first, "", "a key must be a plain name");
      const std::string key = kv.first.Scalar();
      if (key != "name" && key != "tensors")
        fail(kv.first, clip(key), "unknown field (valid: name, tensors)");
    }
    if (root["name"]) {
      if (!root["name"].IsScalar()) fail(root["name"], "name", "expected a string");
      w.name = root["name"].Scalar();
    }
    if (!root["tensors"]) fail(root, "tensors", "missing the list of tensors");
  }
  // Initialized once, never assigned: assigning a yaml-cpp handle would rewrite the document.
  const YAML::Node list = root.IsMap() ? root["tensors"] : root;
  if (!list.IsSequence()) fail(list, "tensors", "expected a list of {name, elements}");
  std::vector<bool> given;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node t = list[i];
    const std::string field = fmt::format("tensors[{}]", i);
    if (!t.IsMap()) fail(t, field, "expected {name: ..., elements: ...}");
    for (const auto& kv : t) {
      if (!kv.first.IsScalar()) fail(kv.first, field, "a key must be a plain name");
      const std::string key = kv.first.Scalar();
      if (key != "name" && key != "elements" && key != "backward_flops" && key != "backward_bytes") {
        fail(kv.first, field + "." + clip(key),
             "unknown field (valid: name, elements, backward_flops, backward_bytes)");
      }
    }
    for (const char* key : {"name", "elements"})
      if (!t[key] || !t[key].IsScalar()) fail(t, field + "." + key, "missing or not a scalar");
    if (t["name"].Scalar().empty()) fail(t["name"], field + ".name", "must not be empty");
    const std::string where = fmt::format("{}:{}: {}.elements", path, t["elements"].Mark().line + 1, field);
    Tensor tensor{t["name"].Scalar(), parse_elements(t["elements"].Scalar(), where), {}};
    int costs = 0;
    for (const char* key : {"backward_flops", "backward_bytes"}) {
      if (!t[key]) continue;
      if (!t[key].IsScalar()) fail(t[key], field + "." + key, "expected a number");
      const double value =
          parse_cost(t[key].Scalar(), fmt::format("{}:{}: {}.{}", path, t[key].Mark().line + 1, field, key));
      (std::string_view(key) == "backward_flops" ? tensor.backward.flops : tensor.backward.bytes) = value;
      ++costs;
    }
    if (costs == 1) fail(t, field, "give backward_flops and backward_bytes together");
    given.push_back(costs == 2);
    w.tensors.push_back(std::move(tensor));
  }
  check_costs_all_or_none(path, given);
  return w;
}

}  // namespace

Workload load_workload_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".csv" && ext != ".yaml" && ext != ".yml" && ext != ".json")
    throw ConfigError(fmt::format("{}: workload files end in .csv, .yaml, .yml or .json", path));
  const std::string text = read_input_file(path, "workload");
  Workload w;
  if (ext == ".csv") {
    std::istringstream in(text);
    w = load_workload_csv(path, in);
  } else {
    w = load_workload_yaml(path, text);
  }
  if (w.tensors.empty()) throw ConfigError(fmt::format("{}: the workload lists no tensors", path));
  return w;
}

Workload make_workload(std::string_view spec) {
  for (const char* ext : {".csv", ".yaml", ".yml", ".json"})
    if (spec.ends_with(ext)) return load_workload_file(std::string(spec));
  if (spec == "resnet50") return resnet(50);
  if (spec == "resnet101") return resnet(101);
  if (spec == "vgg16") return vgg16();
  if (spec == "inception_v3") return inception_v3();
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
