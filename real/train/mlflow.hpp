// A run in an MLflow file store (the mlruns/ layout `mlflow ui --backend-store-uri DIR` reads): experiment
// "cclab" (created once, found by name afterwards), one run per `cclab train` with its parameters as params/,
// per-step metrics as metrics/ files of "timestamp value step" lines, and a FINISHED or FAILED status.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>

namespace cclab::real::train {

class MlflowRun {
 public:
  // Creates the experiment (if needed) and the run directory under `store` (e.g. "mlruns").
  MlflowRun(const std::string& store, const std::string& run_name);
  ~MlflowRun();  // a run never finished is marked FAILED
  MlflowRun(const MlflowRun&) = delete;
  MlflowRun& operator=(const MlflowRun&) = delete;

  void param(const std::string& key, const std::string& value);
  void metric(const std::string& key, double value, std::int64_t step);
  void finish(bool ok);
  const std::string& run_dir() const { return run_dir_; }

 private:
  void write_meta(int status, std::int64_t end_ms);
  std::string experiment_dir_, experiment_id_, run_id_, run_dir_, run_name_;
  std::int64_t start_ms_ = 0;
  bool finished_ = false;
  std::map<std::string, std::unique_ptr<std::ofstream>> metrics_;
};

}  // namespace cclab::real::train
