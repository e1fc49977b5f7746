// Measurements as nccl-tests reports them, read back: the text table it prints and the JSON file it writes
// with `-J`. Text: any version since 2019 (a `root` column or none, `error` or `#wrong`, per-iteration,
// bitwise and timestamp columns after the in-place ones, or no in-place group), as launchers pass it on
// (Open MPI's --tag-output, srun --label, "[rank]" labels): columns are found by the header line's names, the
// collective by "# Collective test starting: X_perf" (older logs do not say it: give it), the ranks by the
// "#  Rank N Group ..." device lines, NCCL_ALGO and NCCL_PROTO from NCCL's INFO lines when it logged them.
// JSON (nccl-tests 2.17 and later): "args"[0] names the program, "devices" the ranks, "results" the rows with
// out_of_place/in_place {time, alg_bw, bus_bw, nwrong}. Times are microseconds, bandwidths GB/s (1e9 B/s), as
// nccl-tests prints them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/collective.hpp"
#include "topology/topology.hpp"

namespace cclab {

// The spread of one point's timed runs (each run's time is its slowest rank's), which nccl-tests does not
// report: cclab bench measures every run, and its -J file carries them under out_of_place.iterations.
struct IterationTimes {
  double min_us = 0, p50_us = 0, p99_us = 0;
};

struct NcclTestsRow {
  std::uint64_t bytes = 0;  // "size": the buffer nccl-tests reports algbw for
  std::uint64_t count = 0;  // "count", elements
  std::string type;         // "float", "half", "bfloat16", ...
  std::string redop;        // "sum", ...; "none" where the collective has none
  double time_us = 0;       // out of place
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::optional<double> in_place_time_us;
  std::optional<IterationTimes> iterations;  // out of place; cclab bench only
  int root = -1;  // "root": the root of broadcast, reduce, gather and scatter (nccl-tests -r); -1 for none
};

// What NCCL's tuner chose for one collective, from its INFO line (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING,
// or COLL). Since about NCCL 2.19:
//   AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15}
// before it, indices (Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT; LL, LL128, Simple):
//   1048576 Bytes -> Algo 1 proto 2 time 12.3
// Names here in NCCL_ALGO / NCCL_PROTO spelling.
struct NcclTuned {
  std::string algorithm;  // Ring, Tree, NVLS, NVLSTree, CollNetDirect, CollNetChain, PAT
  std::string protocol;   // LL, LL128, Simple
  int channels = 0;       // "channel{Lo..Hi}={0..15}": 16; 0 where the line does not say (older NCCL)
};

struct NcclTestsLog {
  std::string source;                    // the file, for messages
  std::optional<Collective> collective;  // from the log, when it says
  std::string program;                   // "all_reduce_perf", when it says
  int ranks = 0;                         // device lines; 0 when the log has none
  // Per rank, from the device lines ("#  Rank 3 Group 0 Pid 42 on dgx-07 device 3 [0x4d] NVIDIA
  // A100-SXM4-40GB") or -J's "devices": the host it ran on and the GPU's name; empty strings where the log
  // does not say.
  std::vector<std::string> hosts, gpus;
  // What the run forced, when NCCL_DEBUG=INFO printed it ("NCCL INFO NCCL_ALGO set by environment to Ring"):
  // the values as given (a name, a list, or ^excluded names); empty when the log does not say.
  std::string nccl_algo, nccl_proto;
  // Every NCCL_* variable NCCL said the run set, by name (NCCL_NVLS_ENABLE: "0", ...).
  std::map<std::string, std::string> nccl_env;
  // The network NCCL ran over, when NCCL_DEBUG=INFO printed it: "Using network X" (src/init.cc: "IB",
  // "Socket", or a plugin's name such as "AWS Libfabric"), the link layers of the devices NCCL's IB transport
  // listed ("NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ...": "IB", "RoCE"), and the libfabric provider
  // the OFI plugin chose ("NET/OFI Selected provider is efa"). Empty where the log does not say.
  std::string network, ib_link_layer, ofi_provider;
  // The NCCL the run used, as NCCL_VERSION_CODE (major·10000 + minor·100 + patch): from NCCL's own line
  // ("NCCL version 2.18.3+cuda12.2") or nccl-tests' header ("nccl-library=21803"); 0 where the log does not
  // say.
  int nccl_version_code = 0;
  // How many GPUs each of nccl-tests' threads drove ("# nThread 1 nGpus 8 ...", -J's config.ngpus: the -g
  // option): above one, a thread launches its GPUs' kernels one after another every iteration. 0 where the
  // log does not say.
  int gpus_per_thread = 0;
  // nccl-tests -G N ("graph: N" in the same header line, -J's config.graph): the timed iterations were
  // captured N at a time in a CUDA graph and launched as one. 0 where they were not or the log does not say.
  int graph_iterations = 0;
  // The tuner's choice by the bytes NCCL printed (the first line of each size), when it logged them.
  std::map<std::uint64_t, NcclTuned> tuned;
  std::vector<NcclTestsRow> rows;
  // What reading assumed or passed over (rows that NCCL's INFO output broke into, a collective taken from
  // the rows), one sentence each; callers warn.
  std::vector<std::string> notes;
};

// The kind of network link the log's NCCL ran over (InfiniBand, Ethernet for RoCE, Tcp for NCCL's socket
// transport, Efa for the OFI plugin on EFA), from the lines above; nullopt where the log does not say or
// names something else (another plugin or provider).
std::optional<topo::LinkKind> network_kind_of_log(const NcclTestsLog& log);

// By content: a JSON object is the -J file, anything else the text table. ConfigError naming the file and
// line for what cannot be read; a log without rows is an error too.
NcclTestsLog read_nccl_tests_log(const std::string& path);
NcclTestsLog parse_nccl_tests_text(std::string_view text, const std::string& source);
NcclTestsLog parse_nccl_tests_json(std::string_view text, const std::string& source);

// Writes a log in nccl-tests' own -J JSON schema (what parse_nccl_tests_json reads, and what nccl-tests 2.17+
// writes: version, args, config, devices, results with out_of_place/in_place, average_bus_bandwidth), so that
// predictions go where measurements go. `args` is the command line to record; the program is
// log.program. In-place figures are the out-of-place ones where the log has none.
std::string format_nccl_tests_json(const NcclTestsLog& log, const std::vector<std::string>& args);
// The same rows as CSV: size,count,type,redop,time_us,algbw_GBps,busbw_GBps (a header line first), and
// time_min_us,time_p50_us,time_p99_us where the rows have iteration times.
std::string format_nccl_tests_csv(const NcclTestsLog& log);
// AllReduce -> "all_reduce_perf": the nccl-tests program that measures the collective; with the algorithm
// that ran, the program that runs that algorithm where one does (AllGather by "hypercube" ->
// "hypercube_perf"), so that compare plans a written log's rows as they ran. (cclab's algbw column stays
// bytes / time; nccl-tests prints hypercube_perf's busbw there.)
std::string nccl_tests_program(Collective collective, std::string_view algorithm = {});
// F32 -> "float", F16 -> "half", BF16 -> "bfloat16", ... as nccl-tests names its types.
std::string nccl_tests_type(DType dtype);

// "all_reduce_perf" (or a path ending in it, "all_reduce_perf_mpi", or "all_reduce") -> AllReduce;
// "hypercube_perf" -> AllGather; nullopt for a program cclab does not know.
std::optional<Collective> collective_of_program(std::string_view program);
// The algorithm a program runs whatever NCCL would choose: "hypercube" for hypercube_perf (its own recursive
// doubling from ncclSend/ncclRecv); empty for the programs that call NCCL's collectives.
std::string_view algorithm_of_program(std::string_view program);
// "float" -> F32, "half" -> F16, "bfloat16" -> BF16; nullopt for the others.
std::optional<DType> dtype_of_nccl_type(std::string_view type);

}  // namespace cclab
