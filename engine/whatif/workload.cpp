#include "engine/whatif/workload.hpp"

#include <charconv>
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

// Appends the parameter tensors of common layers.
class Builder {
 public:
  explicit Builder(std::string name) { w_.name = std::move(name); }
  void conv(const std::string& name, std::uint64_t in, std::uint64_t out, std::uint64_t k,
            bool bias = false) {
    add(name + ".weight", in * out * k * k);
    if (bias) add(name + ".bias", out);
  }
  // Inception's BasicConv2d: a bias-free kh x kw convolution followed by batch norm.
  void conv_bn(const std::string& name, std::uint64_t in, std::uint64_t out, std::uint64_t kh,
               std::uint64_t kw) {
    add(name + ".conv.weight", in * out * kh * kw);
    norm(name + ".bn", out);
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

Workload inception_v3() {
  // Szegedy et al. 2016 "Rethinking the Inception Architecture", in torchvision's layout with the auxiliary
  // classifier (it trains, so its gradients are allreduced too): 27,161,264 parameters.
  Builder b("inception_v3");
  auto cv = [&b](const std::string& name, std::uint64_t in, std::uint64_t out, std::uint64_t kh,
                 std::uint64_t kw) { b.conv_bn(name, in, out, kh, kw); };
  auto block_a = [&](const std::string& p, std::uint64_t in, std::uint64_t pool) {
    cv(p + ".branch1x1", in, 64, 1, 1);
    cv(p + ".branch5x5_1", in, 48, 1, 1);
    cv(p + ".branch5x5_2", 48, 64, 5, 5);
    cv(p + ".branch3x3dbl_1", in, 64, 1, 1);
    cv(p + ".branch3x3dbl_2", 64, 96, 3, 3);
    cv(p + ".branch3x3dbl_3", 96, 96, 3, 3);
    cv(p + ".branch_pool", in, pool, 1, 1);
  };
  auto block_c = [&](const std::string& p, std::uint64_t c7) {  // factorized 7x7, 768 channels in and out
    cv(p + ".branch1x1", 768, 192, 1, 1);
    cv(p + ".branch7x7_1", 768, c7, 1, 1);
    cv(p + ".branch7x7_2", c7, c7, 1, 7);
    cv(p + ".branch7x7_3", c7, 192, 7, 1);
    cv(p + ".branch7x7dbl_1", 768, c7, 1, 1);
    cv(p + ".branch7x7dbl_2", c7, c7, 7, 1);
    cv(p + ".branch7x7dbl_3", c7, c7, 1, 7);
    cv(p + ".branch7x7dbl_4", c7, c7, 7, 1);
    cv(p + ".branch7x7dbl_5", c7, 192, 1, 7);
    cv(p + ".branch_pool", 768, 192, 1, 1);
  };
  auto block_e = [&](const std::string& p, std::uint64_t in) {  // expanded filter bank, 2048 channels out
    cv(p + ".branch1x1", in, 320, 1, 1);
    cv(p + ".branch3x3_1", in, 384, 1, 1);
    cv(p + ".branch3x3_2a", 384, 384, 1, 3);
    cv(p + ".branch3x3_2b", 384, 384, 3, 1);
    cv(p + ".branch3x3dbl_1", in, 448, 1, 1);
    cv(p + ".branch3x3dbl_2", 448, 384, 3, 3);
    cv(p + ".branch3x3dbl_3a", 384, 384, 1, 3);
    cv(p + ".branch3x3dbl_3b", 384, 384, 3, 1);
    cv(p + ".branch_pool", in, 192, 1, 1);
  };
  cv("Conv2d_1a_3x3", 3, 32, 3, 3);
  cv("Conv2d_2a_3x3", 32, 32, 3, 3);
  cv("Conv2d_2b_3x3", 32, 64, 3, 3);
  cv("Conv2d_3b_1x1", 64, 80, 1, 1);
  cv("Conv2d_4a_3x3", 80, 192, 3, 3);
  block_a("Mixed_5b", 192, 32);
  block_a("Mixed_5c", 256, 64);
  block_a("Mixed_5d", 288, 64);
  cv("Mixed_6a.branch3x3", 288, 384, 3, 3);  // grid reduction 35 -> 17
  cv("Mixed_6a.branch3x3dbl_1", 288, 64, 1, 1);
  cv("Mixed_6a.branch3x3dbl_2", 64, 96, 3, 3);
  cv("Mixed_6a.branch3x3dbl_3", 96, 96, 3, 3);
  block_c("Mixed_6b", 128);
  block_c("Mixed_6c", 160);
  block_c("Mixed_6d", 160);
  block_c("Mixed_6e", 192);
  cv("AuxLogits.conv0", 768, 128, 1, 1);
  cv("AuxLogits.conv1", 128, 768, 5, 5);
  b.linear("AuxLogits.fc", 768, 1000);
  cv("Mixed_7a.branch3x3_1", 768, 192, 1, 1);  // grid reduction 17 -> 8
  cv("Mixed_7a.branch3x3_2", 192, 320, 3, 3);
  cv("Mixed_7a.branch7x7x3_1", 768, 192, 1, 1);
  cv("Mixed_7a.branch7x7x3_2", 192, 192, 1, 7);
  cv("Mixed_7a.branch7x7x3_3", 192, 192, 7, 1);
  cv("Mixed_7a.branch7x7x3_4", 192, 192, 3, 3);
  block_e("Mixed_7b", 1280);
  block_e("Mixed_7c", 2048);
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

namespace {

std::uint64_t parse_elements(const std::string& text, const std::string& where) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0)
    throw ConfigError(fmt::format("{}: must be a positive integer (got '{}')", where, text));
  return value;
}

Workload load_workload_csv(const std::string& path, std::istream& in) {
  Workload w;
  w.name = std::filesystem::path(path).stem().string();
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    const auto comma = line.find(',');
    if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos)
      throw ConfigError(fmt::format("{}:{}: expected 'name,elements' (got '{}')", path, number, line));
    const std::string name = line.substr(0, comma), elements = line.substr(comma + 1);
    if (w.tensors.empty() && name == "name" && elements == "elements") continue;  // header
    if (name.empty()) throw ConfigError(fmt::format("{}:{}: name: must not be empty", path, number));
    w.tensors.push_back({name, parse_elements(elements, fmt::format("{}:{}: elements", path, number))});
  }
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
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node t = list[i];
    const std::string field = fmt::format("tensors[{}]", i);
    if (!t.IsMap()) fail(t, field, "expected {name: ..., elements: ...}");
    for (const auto& kv : t) {
      if (!kv.first.IsScalar()) fail(kv.first, field, "a key must be a plain name");
      const std::string key = kv.first.Scalar();
      if (key != "name" && key != "elements")
        fail(kv.first, field + "." + clip(key), "unknown field (valid: name, elements)");
    }
    for (const char* key : {"name", "elements"})
      if (!t[key] || !t[key].IsScalar()) fail(t, field + "." + key, "missing or not a scalar");
    if (t["name"].Scalar().empty()) fail(t["name"], field + ".name", "must not be empty");
    const std::string where = fmt::format("{}:{}: {}.elements", path, t["elements"].Mark().line + 1, field);
    w.tensors.push_back({t["name"].Scalar(), parse_elements(t["elements"].Scalar(), where)});
  }
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
