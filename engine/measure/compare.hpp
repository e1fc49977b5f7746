// Measured against predicted: every row of an nccl-tests log next to the α-β model's time for the same
// collective, size, type and ranks on a topology, with the algorithm the user names, the one the log says
// NCCL ran (NCCL_ALGO, or its tuner's line per size), or the one a selection (`nccl`, `auto`) picks.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/cost.hpp"
#include "engine/plan/registry.hpp"
#include "engine/measure/nccl_tests_log.hpp"
#include "topology/topology.hpp"

namespace cclab {

struct ComparedRow {
  NcclTestsRow measured;
  std::string algorithm;  // the one that was costed
  double predicted_s = 0;
  double predicted_busbw_GBps = 0;
  double error = 0;  // (predicted - measured) / measured time: > 0 is a prediction too slow
};

// The algorithm and protocol to cost a row with.
struct RowChoice {
  std::string algorithm;
  Protocol protocol = Protocol::Auto;
  int channels = 0;  // 0: the options' (NCCL's tuner line says how many it ran on)
};

struct Comparison {
  Collective collective = Collective::AllReduce;
  int ranks = 0;
  std::vector<ComparedRow> rows;
  // Rows not compared, a sentence per type or reduction cclab does not model (a `-d all` or `-o all` log).
  std::vector<std::string> notes;
};

// ConfigError when the log's collective is unknown and not given, no row has a type and reduction cclab
// models (rows that do not are passed over and said in `notes`), or its ranks differ from the topology's
// GPUs. `by_size`: per row size (the row's bytes, or for allgather and reduce-scatter its bytes per rank),
// the algorithm and protocol that replace `algorithm` and cost.protocol there (LogChoice::by_size).
Comparison compare_with_model(const NcclTestsLog& log, const topo::Topology& topology,
                              std::optional<Collective> collective, const std::string& algorithm,
                              const PlanOptions& options, const CostParams& cost,
                              const std::map<std::uint64_t, RowChoice>& by_size = {});

// The algorithm and protocol to cost a log with: the ones given, else what the log says NCCL was forced to
// (NCCL_ALGO / NCCL_PROTO from its INFO lines, where each is one value: a selection for the collective, a
// concrete protocol), else the fallbacks. Where the log has NCCL's tuner lines, `by_size` holds the tuner's
// own choice per size (what was not given), which the rows of that size are costed with. `note` says where a
// value came from (", NCCL_ALGO=Ring from the log"), or why the log's was not taken; empty when nothing came
// from the log.
struct LogChoice {
  std::string algorithm;
  Protocol protocol = Protocol::Auto;
  unsigned auto_protocols = kAllNcclProtocolBits;  // what Auto chooses among (CostParams::auto_protocols)
  std::map<std::uint64_t, RowChoice> by_size;      // by the bytes NCCL's tuner printed
  std::string note;
};
LogChoice choice_for_log(const NcclTestsLog& log, std::optional<Collective> collective,
                         std::optional<std::string> algorithm, std::optional<Protocol> protocol,
                         const std::string& fallback_algorithm, Protocol fallback_protocol);

// Where the log has NCCL's tuner lines: at how many of their sizes NCCL's tuning model as cclab reproduces it
// (the `nccl` selection, engine/model/nccl_tuning.hpp) picks the algorithm and protocol the log says NCCL ran
// — a check of cclab's graphs and table against the machine's own. For allreduce, broadcast and reduce (whose
// printed bytes are the whole buffer), with the protocols the run allowed; nullopt for a log without tuner
// lines, another collective, or a topology where cclab cannot reproduce NCCL's graphs.
struct TunerAgreement {
  int sizes = 0;
  int agree = 0;
  std::vector<std::string> differences;  // "33554432 B: the log NVLSTree/Simple, cclab Tree/LL128"
};
std::optional<TunerAgreement> tuner_agreement(const NcclTestsLog& log, const topo::Topology& topology,
                                              Collective collective, const PlanOptions& options,
                                              unsigned auto_protocols);

// The NCCL row of constants (topo::GpuArch: NCCL's compCapIndex) that a GPU's marketing name, as nccl-tests
// prints it ("NVIDIA A100-SXM4-40GB", "Tesla V100-SXM2-32GB"), belongs to; nullopt for a name not known here.
std::optional<topo::GpuArch> gpu_arch_of_name(std::string_view name);

// The preset a log's device lines describe (`cclab compare --topology auto`): the DGX/HGX board of its GPUs'
// model (A100, A800, H100, H800, H20, H200, B200; V100 and P100 DGX-1 with eight per host), one node per
// host, `gpus=` where a host runs fewer than the board holds, and the board's NVLink cut where the model is
// an export part (A800, H800: 200 GB/s a direction). The NICs are the preset's. ConfigError saying why where
// the log does not tell (no device lines, unnamed hosts, unequal hosts, a GPU without a preset here).
std::string preset_for_log(const NcclTestsLog& log);

// What in the log's machine differs from the topology it is compared with, one sentence each: the hosts its
// ranks ran on against the topology's nodes (a two-host log priced on one node prices NVLink for what crossed
// the network), and its GPUs' architecture against the topology's. Empty when the log does not say or both
// agree.
std::vector<std::string> machine_mismatches(const NcclTestsLog& log, const topo::Topology& topology);

// Median of |error| over the rows whose size is in [min_bytes, max_bytes]; nullopt when none is.
std::optional<double> median_abs_error(const Comparison& c, std::uint64_t min_bytes, std::uint64_t max_bytes);

}  // namespace cclab
