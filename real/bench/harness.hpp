// The benchmark harness of `cclab bench` (under mpirun or srun): nccl-tests-style runs of the engine's
// schedules through the one executor, side by side with the native collectives of the transport (Open
// MPI's and torch c10d's Gloo on host buffers, NCCL's on GPU buffers), on the same buffers in the same run.
#pragma once

#include <string>
#include <vector>

#include "engine/model/schedule_timer.hpp"
#include "real/mpi/transport.hpp"

namespace cclab::real {

struct BenchOptions {
  std::string min_bytes = "8";
  std::string max_bytes = "64MiB";
  int factor = 2;
  int iters = 20;
  int warmup = 5;
  int check = 1;
  std::string dtype = "float";
  std::string op = "sum";
  int root = 0;
  std::string collective = "allreduce";
  std::vector<std::string> algorithms = {"all"};
  std::string topology;  // empty: derived from the hosts
  std::string predict;   // topology to predict on
  std::string chunk = "1MiB";
  int channels = 0;
  double timeout_s = 60;
  std::string transport = "mpi";  // mpi: host buffers; nccl: one GPU per rank
  std::string json;               // -J: the out-of-place rows in nccl-tests' JSON schema (one algorithm)
  std::string csv;                // the same rows as CSV
  ScheduleTimer simulate;         // predicts for --predict (SimGrid, from cli/); empty: the α-β model
};

// Runs the benchmark on every rank of `world` and prints on rank 0; returns the exit status (1 when a
// result was wrong).
int run_bench(const BenchOptions& options, MpiWorld& world);

}  // namespace cclab::real
