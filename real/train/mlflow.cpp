#include "real/train/mlflow.hpp"

#include <chrono>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "common/error.hpp"

namespace cclab::real::train {
namespace {

namespace fs = std::filesystem;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The experiment named "cclab" in `store`, or a new one with the next free numeric id.
std::string find_or_create_experiment(const fs::path& store) {
  int next_id = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(store, ec)) {
    if (!entry.is_directory()) continue;
    const std::string id = entry.path().filename().string();
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) continue;
    next_id = std::max(next_id, std::stoi(id) + 1);
    std::ifstream meta(entry.path() / "meta.yaml");
    for (std::string line; std::getline(meta, line);)
      if (line == "name: cclab") return id;
  }
  const std::string id = std::to_string(next_id);
  fs::create_directories(store / id);
  const std::int64_t t = now_ms();
  std::ofstream meta(store / id / "meta.yaml");
  meta << fmt::format(
      "artifact_location: file://{}\ncreation_time: {}\nexperiment_id: '{}'\nlast_update_time: {}\n"
      "lifecycle_stage: active\nname: cclab\n",
      fs::absolute(store / id).string(), t, id, t);
  if (!meta) throw BackendError(fmt::format("{}: cannot write the MLflow experiment", (store / id).string()));
  return id;
}

}  // namespace

MlflowRun::MlflowRun(const std::string& store, const std::string& run_name) : run_name_(run_name) {
  std::error_code ec;
  fs::create_directories(store, ec);
  if (ec) throw ConfigError(fmt::format("--mlflow {}: cannot create: {}", store, ec.message()));
  experiment_id_ = find_or_create_experiment(store);
  experiment_dir_ = (fs::path(store) / experiment_id_).string();
  std::random_device device;
  std::mt19937_64 rng((static_cast<std::uint64_t>(device()) << 32) ^ static_cast<std::uint64_t>(now_ms()));
  run_id_ = fmt::format("{:016x}{:016x}", rng(), rng());
  run_dir_ = (fs::path(experiment_dir_) / run_id_).string();
  for (const char* sub : {"params", "metrics", "tags", "artifacts"})
    fs::create_directories(fs::path(run_dir_) / sub);
  start_ms_ = now_ms();
  std::ofstream(fs::path(run_dir_) / "tags" / "mlflow.runName") << run_name_;
  std::ofstream(fs::path(run_dir_) / "tags" / "mlflow.source.name") << "cclab train";
  write_meta(1, 0);  // RUNNING
}

MlflowRun::~MlflowRun() {
  if (!finished_) {
    try {
      finish(false);
    } catch (...) {  // never throw from a destructor; the run stays RUNNING
    }
  }
}

void MlflowRun::write_meta(int status, std::int64_t end_ms) {
  std::ofstream meta(fs::path(run_dir_) / "meta.yaml");
  meta << fmt::format(
      "artifact_uri: file://{}/artifacts\nend_time: {}\nentry_point_name: ''\nexperiment_id: '{}'\n"
      "lifecycle_stage: active\nrun_id: {}\nrun_name: {}\nrun_uuid: {}\nsource_name: ''\nsource_type: 4\n"
      "source_version: ''\nstart_time: {}\nstatus: {}\ntags: []\nuser_id: cclab\n",
      fs::absolute(run_dir_).string(), end_ms == 0 ? std::string("null") : std::to_string(end_ms),
      experiment_id_, run_id_, run_name_, run_id_, start_ms_, status);
  if (!meta) throw BackendError(fmt::format("{}: cannot write the MLflow run", run_dir_));
}

void MlflowRun::param(const std::string& key, const std::string& value) {
  std::ofstream(fs::path(run_dir_) / "params" / key) << value;
}

void MlflowRun::metric(const std::string& key, double value, std::int64_t step) {
  auto& file = metrics_[key];
  if (!file) file = std::make_unique<std::ofstream>(fs::path(run_dir_) / "metrics" / key, std::ios::app);
  *file << fmt::format("{} {} {}\n", now_ms(), value, step);
}

void MlflowRun::finish(bool ok) {
  for (auto& [key, file] : metrics_)
    file->flush();
  finished_ = true;
  write_meta(ok ? 3 : 4, now_ms());  // FINISHED / FAILED
}

}  // namespace cclab::real::train
