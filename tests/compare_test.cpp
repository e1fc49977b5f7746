// nccl-tests logs read back (text of 2019 and current versions, -J JSON) and compared with the model: a log
// written from the model's own predictions, in nccl-tests' format, compares at rounding error; what cannot be
// compared is refused with the file and the reason; the link model fitted to a log written with another one
// recovers it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/measure/compare.hpp"
#include "engine/measure/log_calibration.hpp"
#include "engine/plan/selection.hpp"
#include "topology/presets.hpp"

namespace cclab {
namespace {

std::string data(const char* name) {
  return fmt::format("{}/tests/data/nccl_tests/{}", CCLAB_SOURCE_DIR, name);
}

TEST(NcclTestsLog, CurrentTextFormat) {
  const NcclTestsLog log = read_nccl_tests_log(data("all_reduce_current.txt"));
  EXPECT_EQ(log.collective, Collective::AllReduce);
  EXPECT_EQ(log.program, "all_reduce_perf");
  EXPECT_EQ(log.ranks, 8);
  ASSERT_EQ(log.rows.size(), 5u);  // the NCCL INFO line in between is not a row
  EXPECT_EQ(log.rows[3].bytes, 134217728u);
  EXPECT_EQ(log.rows[3].count, 33554432u);
  EXPECT_EQ(log.rows[3].type, "float");
  EXPECT_EQ(log.rows[3].redop, "sum");
  EXPECT_DOUBLE_EQ(log.rows[3].time_us, 1012.3);
  EXPECT_DOUBLE_EQ(log.rows[3].busbw_GBps, 232.03);
  EXPECT_DOUBLE_EQ(*log.rows[3].in_place_time_us, 1009.8);
  EXPECT_EQ(log.nccl_algo, "Ring");   // NCCL's INFO line: what the run forced
  EXPECT_EQ(log.nccl_proto, "");      // not forced
  EXPECT_EQ(log.gpus_per_thread, 1);  // "# nThread 1 nGpus 1": one process per GPU
}

// A published two-node sweep as its author posted it (nccl-tests 2.18.3, NCCL 2.30.4, one process per node
// driving eight GPUs), behind the comment lines bench/ keeps its source in: bench/logs/.
TEST(NcclTestsLog, PublishedTwoNodeSweep) {
  const NcclTestsLog log =
      read_nccl_tests_log(fmt::format("{}/bench/logs/all_reduce_2x8_h200_roce.txt", CCLAB_SOURCE_DIR));
  EXPECT_EQ(log.collective, Collective::AllReduce);
  EXPECT_EQ(log.ranks, 16);
  EXPECT_EQ(log.gpus_per_thread, 8);  // "# nThread 1 nGpus 8"
  ASSERT_EQ(log.rows.size(), 25u);    // 1 KiB to 16 GiB by 2
  EXPECT_EQ(log.rows.front().bytes, 1024u);
  EXPECT_EQ(log.rows.back().bytes, 17179869184u);
  EXPECT_DOUBLE_EQ(log.rows[14].time_us, 304.32);  // 16 MiB: out of place and in place differ by half
  EXPECT_DOUBLE_EQ(*log.rows[14].in_place_time_us, 207.61);
  EXPECT_EQ(preset_for_log(log), "dgx_h200:2");  // two hosts of eight H200 (the fabric is not in the log)
  // Its small collectives are flat at the host's eight launches an iteration: the note gives the floor (the
  // 4 KiB row's 43.51 us) per GPU, and how many rows the model puts below it.
  const Comparison c =
      compare_with_model(log, topo::make_preset("dgx_h200:2,net=roce"), std::nullopt, "nccl", {}, {});
  const auto below = std::count_if(c.rows.begin(), c.rows.end(),
                                   [](const ComparedRow& r) { return r.predicted_s * 1e6 < 43.51; });
  EXPECT_GT(below, 0);
  const std::string floor =
      fmt::format("less than 43.5 us, 5.4 us a GPU, and the model puts {} of its 25", below);
  EXPECT_TRUE(std::any_of(c.notes.begin(), c.notes.end(), [&](const std::string& n) {
    return n.find(floor) != std::string::npos;
  })) << floor;
}

TEST(NcclTestsLog, ForcedAlgorithmAndProtocolFromNcclsInfoLines) {
  const NcclTestsLog log = parse_nccl_tests_text(
      "# Collective test starting: reduce_scatter_perf\n"
      "host:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL128\n"
      "host:1:1 [0] NCCL INFO NCCL_ALGO set by environment to ^NVLS,Tree\n"
      "host:2:2 [1] NCCL INFO NCCL_ALGO set by environment to Ring\n"
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "1024 256 float sum -1 10.0 0.1 0.1 0 10.0 0.1 0.1 0\n",
      "inline");
  EXPECT_EQ(log.collective, Collective::ReduceScatter);
  EXPECT_EQ(log.nccl_proto, "LL128");
  EXPECT_EQ(log.nccl_algo, "^NVLS,Tree");  // as given, the first rank's
  ASSERT_EQ(log.rows.size(), 1u);

  // What compare and calibrate cost the log with: NCCL_ALGO as NCCL reads it (here: NCCL's set without NVLS
  // and Tree); the forced protocol is taken; what the user gives wins.
  LogChoice c = choice_for_log(log, std::nullopt, std::nullopt, std::nullopt, "nccl", Protocol::Auto);
  EXPECT_EQ(c.algorithm, "^NVLS,Tree");
  EXPECT_EQ(c.protocol, Protocol::LL128);
  EXPECT_NE(c.note.find("NCCL_ALGO=^NVLS,Tree from the log"), std::string::npos) << c.note;
  NcclTestsLog typo = log;
  typo.nccl_algo = "Rnig";
  c = choice_for_log(typo, std::nullopt, std::nullopt, std::nullopt, "nccl", Protocol::Auto);
  EXPECT_EQ(c.algorithm, "nccl");
  EXPECT_NE(c.note.find("NCCL_ALGO=Rnig is not one of NCCL's reduce_scatter algorithms"), std::string::npos)
      << c.note;
  EXPECT_NE(c.note.find("NCCL_PROTO=LL128 from the log"), std::string::npos) << c.note;
  // NCCL_PROTO as NCCL reads it: a list or '^' leaves Auto choosing among the rest.
  EXPECT_EQ(nccl_protocol_set("^LL128"), protocol_bit(Protocol::LL) | protocol_bit(Protocol::Simple));
  EXPECT_EQ(nccl_protocol_set("LL,simple"), protocol_bit(Protocol::LL) | protocol_bit(Protocol::Simple));
  EXPECT_EQ(nccl_protocol_set("Simple"), protocol_bit(Protocol::Simple));
  EXPECT_FALSE(nccl_protocol_set("^LL,LL128,Simple"));  // nothing left
  EXPECT_FALSE(nccl_protocol_set("LL256"));
  NcclTestsLog no_ll128 = log;
  no_ll128.nccl_proto = "^LL128";
  c = choice_for_log(no_ll128, std::nullopt, std::nullopt, std::nullopt, "nccl", Protocol::Auto);
  EXPECT_EQ(c.protocol, Protocol::Auto);
  EXPECT_EQ(c.auto_protocols, protocol_bit(Protocol::LL) | protocol_bit(Protocol::Simple));
  // NCCL before 2.5 had no LL128: Auto leaves it out there too.
  NcclTestsLog old_nccl = log;
  old_nccl.nccl_proto.clear();
  old_nccl.nccl_version_code = 20408;
  c = choice_for_log(old_nccl, std::nullopt, std::nullopt, std::nullopt, "nccl", Protocol::Auto);
  EXPECT_EQ(c.auto_protocols, protocol_bit(Protocol::LL) | protocol_bit(Protocol::Simple));
  EXPECT_NE(c.note.find("no LL128 before NCCL 2.5"), std::string::npos) << c.note;
  NcclTestsLog pat = log;
  pat.nccl_algo = "pat";
  c = choice_for_log(pat, std::nullopt, std::nullopt, std::nullopt, "nccl", Protocol::Auto);
  EXPECT_EQ(c.algorithm, "PAT");  // NCCL's name, any case
  c = choice_for_log(pat, std::nullopt, std::string("ring"), Protocol::Simple, "nccl", Protocol::Auto);
  EXPECT_EQ(c.algorithm, "ring");
  EXPECT_EQ(c.protocol, Protocol::Simple);
  EXPECT_EQ(c.note, "");
}

TEST(NcclTestsLog, TextOf2019WithoutRootOrRedop) {
  const NcclTestsLog log = read_nccl_tests_log(data("all_gather_2019.txt"));
  EXPECT_FALSE(log.collective.has_value());  // those logs do not name the test
  EXPECT_EQ(log.ranks, 8);
  ASSERT_EQ(log.rows.size(), 3u);
  EXPECT_EQ(log.rows[2].bytes, 268435456u);
  EXPECT_EQ(log.rows[2].redop, "none");
  EXPECT_DOUBLE_EQ(log.rows[2].time_us, 2431.0);
  EXPECT_DOUBLE_EQ(log.rows[2].algbw_GBps, 110.42);
}

// An alltoall_perf table of 2021 (nccl-tests#78): a blank redop cell under a header that names it, and a
// count of one peer's block. The row reads by its size; compare plans it as the alltoall the user names, and
// its busbw is nccl-tests' algbw · (P-1)/P.
TEST(NcclTestsLog, AlltoallOf2021WithABlankRedop) {
  const NcclTestsLog log = read_nccl_tests_log(data("alltoall_2021.txt"));
  EXPECT_FALSE(log.collective.has_value());
  ASSERT_EQ(log.rows.size(), 2u);
  EXPECT_EQ(log.rows[0].bytes, 268435456u);
  EXPECT_EQ(log.rows[0].count, 1048576u);
  EXPECT_EQ(log.rows[0].redop, "none");
  EXPECT_DOUBLE_EQ(log.rows[0].time_us, 520935);
  EXPECT_DOUBLE_EQ(log.rows[0].algbw_GBps, 0.52);
  EXPECT_DOUBLE_EQ(log.rows[0].busbw_GBps, 0.51);
  EXPECT_DOUBLE_EQ(log.rows[1].in_place_time_us.value(), 1041299);
  const topo::Topology t = topo::make_preset("dgx1_v100:8,nics=1");
  const Comparison c = compare_with_model(log, t, Collective::AllToAll, "nccl", {}, {});
  ASSERT_EQ(c.rows.size(), 2u);
  for (const ComparedRow& r : c.rows) {
    EXPECT_EQ(r.algorithm, "pairwise");
    EXPECT_NEAR(r.predicted_busbw_GBps, r.measured.bytes / r.predicted_s / 1e9 * 63 / 64, 1e-9);
    EXPECT_LT(r.error, 0);  // that fabric was broken: the model is far faster
  }
}

// hypercube_perf: nccl-tests' allgather by recursive doubling (ncclSend/ncclRecv, a group per step). Its rows
// have a blank redop and count one rank's block, as all_gather_perf's; compare reads them as allgather and
// plans every row with `hypercube`, whatever the default algorithm, unless the user names one.
// tests/data/nccl_tests/hypercube.txt is a format fixture we wrote (nccl-tests 2.17's layout), not a
// measurement.
TEST(NcclTestsLog, HypercubePerfIsAnAllgatherByHypercube) {
  const NcclTestsLog log = read_nccl_tests_log(data("hypercube.txt"));
  EXPECT_EQ(log.collective, Collective::AllGather);
  EXPECT_EQ(log.program, "hypercube_perf");
  ASSERT_EQ(log.rows.size(), 3u);
  EXPECT_EQ(log.rows[1].bytes, 1048576u);
  EXPECT_EQ(log.rows[1].count, 32768u);
  EXPECT_EQ(log.rows[1].redop, "none");
  EXPECT_EQ(log.rows[1].root, -1);
  EXPECT_DOUBLE_EQ(log.rows[1].time_us, 40.50);
  const LogChoice choice =
      choice_for_log(log, std::nullopt, std::nullopt, std::nullopt, "nccl", Protocol::Auto);
  EXPECT_EQ(choice.algorithm, "hypercube");
  EXPECT_NE(choice.note.find("hypercube_perf runs the hypercube algorithm"), std::string::npos)
      << choice.note;
  EXPECT_EQ(
      choice_for_log(log, std::nullopt, std::string("ring"), std::nullopt, "nccl", Protocol::Auto).algorithm,
      "ring");
  const topo::Topology t = topo::make_preset("dgx_a100:1");
  const Comparison c = compare_with_model(log, t, std::nullopt, choice.algorithm, {}, {});
  ASSERT_EQ(c.rows.size(), 3u);
  for (const ComparedRow& r : c.rows) {
    EXPECT_EQ(r.algorithm, "hypercube");
    // nccl-tests' busbw of hypercube_perf is a block's bytes · (P−1) / time, all_gather_perf's.
    EXPECT_NEAR(r.predicted_busbw_GBps, r.measured.count * 4.0 * 7 / r.predicted_s / 1e9,
                1e-9 * r.predicted_busbw_GBps);
  }
  // Its -J file names the program in "args" and no redop (an empty string).
  const NcclTestsLog json = parse_nccl_tests_json(
      R"({"args": ["./build/hypercube_perf", "-J", "h.json"], "results": [{"size": 1048576, "count": 32768,
          "type": "float", "redop": "", "root": "    -1", "out_of_place": {"time": 40.5, "alg_bw": 22.65,
          "bus_bw": 22.65, "nwrong": 0}}]})",
      "h.json");
  EXPECT_EQ(json.collective, Collective::AllGather);
  ASSERT_EQ(json.rows.size(), 1u);
  EXPECT_EQ(json.rows[0].redop, "none");
  EXPECT_EQ(compare_with_model(json, t, std::nullopt, "hypercube", {}, {}).rows.size(), 1u);
  // Programs by their names, wherever they were built and with or without MPI.
  EXPECT_EQ(collective_of_program("/opt/nccl-tests/build/hypercube_perf_mpi"), Collective::AllGather);
  EXPECT_EQ(algorithm_of_program("/opt/nccl-tests/build/hypercube_perf_mpi"), "hypercube");
  EXPECT_EQ(collective_of_program("all_reduce_perf_mpi"), Collective::AllReduce);
  EXPECT_EQ(algorithm_of_program("all_gather_perf"), "");
  EXPECT_EQ(nccl_tests_program(Collective::AllGather), "all_gather_perf");
  EXPECT_EQ(nccl_tests_program(Collective::AllGather, "hypercube"), "hypercube_perf");  // sim and bench -J
  EXPECT_EQ(nccl_tests_program(Collective::AllGather, "ring"), "all_gather_perf");
  // Six ranks: no hypercube (nccl-tests skips them too), said as the planner's reason.
  const topo::Topology six = topo::make_preset("dgx_a100:1,gpus=6");
  NcclTestsLog on_six = log;
  on_six.ranks = 6;
  EXPECT_THROW(
      {
        try {
          compare_with_model(on_six, six, std::nullopt, "hypercube", {}, {});
        } catch (const ConfigError& e) {
          EXPECT_NE(std::string(e.what()).find("power-of-two"), std::string::npos) << e.what();
          throw;
        }
      },
      ConfigError);
}

// A rooted collective's rows name their root (nccl-tests -r): it is read, kept through -J, and compare plans
// with it; a root the topology does not have is refused, saying so.
TEST(NcclTestsLog, RootedRowsKeepTheirRoot) {
  auto log_with_root = [](int root) {
    return fmt::format(
        "# Collective test starting: broadcast_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
        "algbw   "
        "busbw #wrong\n"
        "     1048576        262144     float    none    {:>4}    20.00   52.43   52.43      0    20.00   "
        "52.43   "
        "52.43      0\n",
        root);
  };
  const NcclTestsLog log = parse_nccl_tests_text(log_with_root(3), "b.txt");
  ASSERT_EQ(log.rows.size(), 1u);
  EXPECT_EQ(log.collective, Collective::Broadcast);
  EXPECT_EQ(log.rows[0].root, 3);
  EXPECT_EQ(parse_nccl_tests_json(format_nccl_tests_json(log, {}), "b.json").rows[0].root, 3);
  EXPECT_EQ(read_nccl_tests_log(data("all_reduce_current.txt")).rows[0].root, -1);
  const topo::Topology t = topo::make_preset("dgx_h100:2");
  EXPECT_EQ(compare_with_model(log, t, std::nullopt, "nccl", {}, {}).rows.size(), 1u);
  try {
    compare_with_model(parse_nccl_tests_text(log_with_root(20), "far.txt"), t, std::nullopt, "nccl", {}, {});
    ADD_FAILURE() << "accepted a root outside the topology";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("root 20 is not a rank of the 16 the topology has"),
              std::string::npos)
        << e.what();
  }
}

// Logs as launchers pass them on: Open MPI's --tag-output and srun --label in front of every line, MPICH's
// "[rank]" label in front of every write (so also inside rows printed in pieces), NCCL's INFO output written
// into a row, and rows without the in-place group. The same four rows read back from each.
TEST(NcclTestsLog, WhatLaunchersPutAroundTheTable) {
  const std::string table =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#  Rank  0 Group  0 Pid  11 on pt01 device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid  12 on pt02 device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
      "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n"
      "           8         2  float  sum  -1    12.90   0.00   0.00  0    12.87   0.00   0.00  0\n"
      "        4096      1024  float  sum  -1    13.40   0.31   0.31  0    13.35   0.31   0.31  0\n"
      "     1048576    262144  float  sum  -1    60.10  17.45  17.45  0    59.80  17.53  17.53  0\n"
      "   134217728  33554432  float  sum  -1   1652.2  81.24  81.24  0   1636.7  82.01  82.01  0\n";
  auto prefixed = [&](const std::string& prefix) {
    std::string out;
    std::size_t start = 0;
    while (start < table.size()) {
      const std::size_t end = table.find('\n', start);
      out += prefix + table.substr(start, end - start + 1);
      start = end + 1;
    }
    return out;
  };
  auto expect_rows = [](const NcclTestsLog& log, const std::string& how) {
    SCOPED_TRACE(how);
    ASSERT_EQ(log.rows.size(), 4u);
    EXPECT_EQ(log.rows[2].bytes, 1048576u);
    EXPECT_DOUBLE_EQ(log.rows[2].time_us, 60.10);
    EXPECT_DOUBLE_EQ(log.rows[3].busbw_GBps, 81.24);
    EXPECT_EQ(log.ranks, 2);
    EXPECT_EQ(log.hosts[1], "pt02");
    EXPECT_EQ(log.gpus[0], "NVIDIA H100 80GB HBM3");
    // No "Collective test starting" line: the rows say allreduce, and the reader says it took them so.
    EXPECT_EQ(log.collective, Collective::AllReduce);
    ASSERT_FALSE(log.notes.empty());
    EXPECT_NE(log.notes.back().find("taken as allreduce"), std::string::npos);
  };
  expect_rows(parse_nccl_tests_text(table, "plain"), "plain");
  expect_rows(parse_nccl_tests_text(prefixed("[1,0]<stdout>:"), "tagged"), "Open MPI --tag-output");
  expect_rows(parse_nccl_tests_text(prefixed("0: "), "labelled"), "srun --label");
  expect_rows(parse_nccl_tests_text(prefixed("[0] "), "mpich"), "MPICH -l");
  // A label per write: the row's pieces carry it too; and an INFO line written into a row voids that row.
  const NcclTestsLog pieces = parse_nccl_tests_text(
      "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n"
      "[0]   1048576   262144  float  sum  -1[0]  1626.5  0.64  1.24  0[0]  2302.3  0.46  0.87  0\n"
      "[0]      4096     1024  float  sum  -1[0] h1:4978:4978 [0] NCCL INFO 4096 Bytes -> Algo 0 proto 0\n"
      "[0]     75.38    0.05    0.10      0\n",
      "pieces");
  ASSERT_EQ(pieces.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(pieces.rows[0].time_us, 1626.5);
  EXPECT_DOUBLE_EQ(*pieces.rows[0].in_place_time_us, 2302.3);
  ASSERT_EQ(pieces.notes.size(), 2u);
  EXPECT_EQ(pieces.notes[0], "line 3: a result row with NCCL's log output inside it, not read");
  EXPECT_EQ(pieces.tuned.at(4096).algorithm, "Tree");  // the INFO line itself is still read
  // Out-of-place columns only (no in-place group), and the 2019 header without a root column: no root, so
  // reduce cannot be told from allreduce and nothing is assumed.
  const NcclTestsLog half = parse_nccl_tests_text(
      "#  size  count  type  redop  time  algbw  busbw  error  time  algbw  busbw  error\n"
      "      262144    65536  float  sum  122.3  2.14  3.22  N/A\n"
      "     1048576   262144  float  sum  349.1  3.00  4.51  N/A\n",
      "half");
  ASSERT_EQ(half.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(half.rows[1].time_us, 349.1);
  EXPECT_FALSE(half.rows[1].in_place_time_us.has_value());
  EXPECT_FALSE(half.collective.has_value());
  EXPECT_TRUE(half.notes.empty());
  // reduce_scatter counts a rank's block: never taken as allreduce.
  const NcclTestsLog scatter = parse_nccl_tests_text(
      "#  size  count  type  redop  root  time  algbw  busbw #wrong\n"
      "     1048576    32768  float  sum  -1  60.10  17.45  15.27  0\n",
      "scatter");
  EXPECT_FALSE(scatter.collective.has_value());
}

// NCCL's INFO lines name the network (src/init.cc "Using network X", the IB transport's device list with each
// device's link layer, aws-ofi-nccl's provider): --topology auto takes it, and a topology of another kind is
// warned about.
TEST(NcclTestsLog, TheNetworkNcclSaysItUsed) {
  const std::string rows =
      "#  Rank  0 Group  0 Pid  11 on h1 device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid  12 on h2 device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
      "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n"
      "     1048576    262144  float  sum  -1    60.10  17.45  17.45  0    59.80  17.53  17.53  0\n";
  auto log_with = [&](const std::string& info) {
    return parse_nccl_tests_text("# Collective test starting: all_reduce_perf\n" + info + rows, "net");
  };
  const NcclTestsLog roce = log_with(
      "h1:11:11 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
      "h1:11:11 [0] NCCL INFO Using network IB\n");
  EXPECT_EQ(roce.network, "IB");
  EXPECT_EQ(roce.ib_link_layer, "RoCE");
  EXPECT_EQ(network_kind_of_log(roce), topo::LinkKind::Ethernet);
  EXPECT_EQ(preset_for_log(roce), "dgx_h100:2,gpus=1,net=roce");
  const NcclTestsLog ib = log_with(
      "h1:11:11 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB "
      "ib0:10.0.0.1<0>\nh1:11:11 [0] NCCL INFO Using network IB\n");
  EXPECT_EQ(network_kind_of_log(ib), topo::LinkKind::InfiniBand);
  EXPECT_EQ(preset_for_log(ib), "dgx_h100:2,gpus=1");  // the presets' own network
  const NcclTestsLog tcp = log_with(
      "h1:11:11 [0] NCCL INFO NET/Socket : Using [0]ens5:172.31.0.112<0>\nh1:11:11 [0] NCCL INFO Using "
      "network "
      "Socket\n");
  EXPECT_EQ(network_kind_of_log(tcp), topo::LinkKind::Tcp);
  EXPECT_EQ(preset_for_log(tcp), "dgx_h100:2,gpus=1,net=tcp");
  const NcclTestsLog efa = log_with(
      "h1:11:11 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found 4 nics)\n"
      "h1:11:11 [0] NCCL INFO Using network Libfabric\n");
  EXPECT_EQ(efa.ofi_provider, "efa");
  EXPECT_EQ(network_kind_of_log(efa), topo::LinkKind::Efa);
  // Another plugin or provider (Slingshot's cxi), or nothing said: no kind, and the preset stays as it is.
  EXPECT_FALSE(
      network_kind_of_log(log_with("h1:11:11 [0] NCCL INFO NET/OFI Selected provider is cxi\n"
                                   "h1:11:11 [0] NCCL INFO Using network Libfabric\n")));
  EXPECT_FALSE(network_kind_of_log(log_with("")));
  // Priced on InfiniBand, a socket run is warned about, with what the log said.
  const auto mismatches = machine_mismatches(tcp, topo::make_preset("dgx_h100:2,gpus=1"));
  ASSERT_EQ(mismatches.size(), 1u);
  EXPECT_EQ(mismatches[0],
            "NCCL ran over tcp (its INFO lines: \"Using network Socket\"), but topology 'dgx_h100:2,gpus=1' "
            "has infiniband network links");
  EXPECT_TRUE(machine_mismatches(tcp, topo::make_preset("dgx_h100:2,gpus=1,net=tcp")).empty());
}

// The NCCL a log ran: its version from NCCL's line or nccl-tests' header, and `nccl` chooses among the
// algorithms that version had (NVLS came with 2.17: a 2.16 run on an H100 node was a ring at 8 GiB).
TEST(NcclTestsLog, TheNcclVersionALogRan) {
  auto version = [](const std::string& line) {
    return parse_nccl_tests_text(line +
                                     "\n#  size  count  type  redop  root  time  algbw  busbw #wrong\n"
                                     " 1024  256  float  sum  -1  10.0  0.1  0.1  0\n",
                                 "v")
        .nccl_version_code;
  };
  EXPECT_EQ(version("node:1:1 [0] NCCL INFO NCCL version 2.18.3+cuda12.2"), 21803);
  EXPECT_EQ(version("NCCL version 2.4.8+cuda10.1"), 20408);
  EXPECT_EQ(version("# nccl-tests version 2.17.6 nccl-headers=22703 nccl-library=22703"), 22703);
  EXPECT_EQ(version("# nccl-tests version 2.10.0 nccl-headers=2708 nccl-library=2708"),
            20708);  // pre-2.9 code
  EXPECT_EQ(version("# nThread 1 nGpus 1"), 0);
  std::string log_text =
      "# Collective test starting: all_reduce_perf\nnode:1:1 [0] NCCL INFO NCCL version "
      "2.16.5+cuda12.0\n#  size  count  type  redop  root  time  algbw  busbw #wrong\n";
  log_text += " 8589934592  2147483648  float  sum  -1  41000.0  209.5  366.6  0\n";
  const NcclTestsLog old = parse_nccl_tests_text(log_text, "old");
  const LogChoice choice =
      choice_for_log(old, std::nullopt, std::nullopt, std::nullopt, "nccl", Protocol::Auto);
  EXPECT_EQ(choice.algorithm, "^NVLS,NVLSTree,PAT");
  EXPECT_NE(choice.note.find("NCCL 2.16.5 from the log: without NVLS, NVLSTree, PAT"), std::string::npos);
  const topo::Topology h100 = topo::make_preset("dgx_h100:1");
  CostParams nccl_protocols;
  nccl_protocols.protocol = Protocol::Auto;  // as compare prices rows
  const Comparison c = compare_with_model(old, h100, std::nullopt, choice.algorithm, {}, nccl_protocols);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].algorithm, "ring");
  // The same log from NCCL 2.18 may run NVLS, and an algorithm given or forced is left as it is.
  const NcclTestsLog newer =
      parse_nccl_tests_text(log_text.replace(log_text.find("2.16.5"), 6, "2.18.3"), "newer");
  EXPECT_EQ(choice_for_log(newer, std::nullopt, std::nullopt, std::nullopt, "nccl", Protocol::Auto).algorithm,
            "^PAT");
  EXPECT_EQ(compare_with_model(newer, h100, std::nullopt, "^PAT", {}, nccl_protocols).rows[0].algorithm,
            "nvls");
  EXPECT_EQ(
      choice_for_log(old, std::nullopt, std::string("ring"), std::nullopt, "nccl", Protocol::Auto).algorithm,
      "ring");
  // A run that turned NVLS off: NCCL's own numeric line ("... to 0." with NCCL's period).
  NcclTestsLog off = parse_nccl_tests_text(
      "node:1:1 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.\n" + log_text, "off");
  EXPECT_EQ(off.nccl_env.at("NCCL_NVLS_ENABLE"), "0");
  off.nccl_version_code = 0;  // the switch alone
  const LogChoice no_nvls =
      choice_for_log(off, std::nullopt, std::nullopt, std::nullopt, "nccl", Protocol::Auto);
  EXPECT_EQ(no_nvls.algorithm, "^NVLS,NVLSTree");
  EXPECT_NE(no_nvls.note.find("NCCL_NVLS_ENABLE=0 from the log"), std::string::npos) << no_nvls.note;
}

// Auto chooses among the protocols it is allowed: on one H100 node a 4 MiB ring is LL128's (NCCL's pick
// there, nccl-tests#309), and with LL128 left out it is LL's or Simple's, never faster.
TEST(NcclTestsLog, AutoAmongTheProtocolsARunAllowed) {
  const topo::Topology h100 = topo::make_preset("dgx_h100:1");
  const CollectiveSpec spec =
      spec_for(h100, Collective::AllReduce, (4u << 20) / 4, DType::F32, ReduceOp::Sum, 0);
  CostParams all;
  all.protocol = Protocol::Auto;
  CostParams without = all;
  without.auto_protocols = kAllNcclProtocolBits & ~protocol_bit(Protocol::LL128);
  const Candidate a = Selector(all).choose(spec, h100, "ring");
  const Candidate b = Selector(without).choose(spec, h100, "ring");
  EXPECT_EQ(a.protocol, Protocol::LL128);
  EXPECT_NE(b.protocol, Protocol::LL128);
  EXPECT_GT(b.time_s, a.time_s);
}

// The device lines say where each rank ran and on which GPU; compare and calibrate warn where the topology
// differs (a two-host log priced on one node, an H100 log on an A100 preset), and say nothing where it
// agrees.
TEST(NcclTestsLog, HostsAndGpusAgainstTheTopology) {
  const NcclTestsLog two = parse_nccl_tests_text(
      "# nccl-tests version 2.20.0 (b4d5bee) nccl-headers=23102 nccl-library=23102\n"
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  0 Group  0 Pid 1666603 on spark-d708 device  0 [000f:01:00] NVIDIA GB10\n"
      "#  Rank  1 Group  0 Pid 1669515 on spark-dbf4 device  0 [000f:01:00] NVIDIA GB10\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   "
      "algbw "
      "  busbw  #wrong\n"
      "        8192          2048     float     sum      -1    35.15    0.23    0.23       0    30.33    "
      "0.27 "
      "   0.27       0\n",
      "spark.txt");
  ASSERT_EQ(two.hosts, (std::vector<std::string>{"spark-d708", "spark-dbf4"}));
  ASSERT_EQ(two.gpus, (std::vector<std::string>{"NVIDIA GB10", "NVIDIA GB10"}));
  const auto one_node = topo::make_preset("dgx_b200:1,gpus=2");
  std::vector<std::string> m = machine_mismatches(two, one_node);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0],
            "measured on 2 hosts (1 rank each), but topology 'dgx_b200:1,gpus=2' has its GPUs on 1 node (2 "
            "ranks)");
  EXPECT_TRUE(machine_mismatches(two, topo::make_preset("dgx_b200:2,gpus=1")).empty());
  m = machine_mismatches(two, topo::make_preset("dgx_h100:2,gpus=1"));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("NVIDIA GB10 (blackwell), but topology 'dgx_h100:2,gpus=1' models hopper GPUs"),
            std::string::npos)
      << m[0];

  const NcclTestsLog old = read_nccl_tests_log(data("all_gather_2019.txt"));  // "Rank 0 Pid 1 on HOST ..."
  ASSERT_EQ(old.hosts.size(), 8u);
  EXPECT_EQ(old.hosts[0], "dgx1v-01");
  EXPECT_EQ(old.gpus[7], "Tesla V100-SXM2-32GB");
  EXPECT_TRUE(machine_mismatches(old, topo::make_preset("dgx1_v100:1")).empty());
  EXPECT_EQ(machine_mismatches(old, topo::make_preset("dgx_h100:2,gpus=4")).size(), 2u);  // hosts and GPUs
  const NcclTestsLog json = read_nccl_tests_log(data("reduce_scatter.json"));
  EXPECT_EQ(json.gpus.at(0), "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(machine_mismatches(json, topo::make_preset("dgx_h100:1")).empty());
  EXPECT_EQ(machine_mismatches(json, topo::make_preset("dgx_a100:1")).size(), 1u);

  EXPECT_EQ(gpu_arch_of_name("NVIDIA A100-SXM4-80GB"), topo::GpuArch::Ampere);
  EXPECT_EQ(gpu_arch_of_name("NVIDIA H200"), topo::GpuArch::Hopper);
  EXPECT_EQ(gpu_arch_of_name("Tesla P100-SXM2-16GB"), topo::GpuArch::Volta);  // NCCL's pre-sm_80 row
  EXPECT_FALSE(gpu_arch_of_name("cclab: a simulation").has_value());
}

// `--topology auto`: the board of the log's GPUs, a node per host, gpus= where a host runs fewer, the export
// parts' NVLink; refused, with the reason, where the device lines do not tell.
TEST(NcclTestsLog, ThePresetTheDeviceLinesDescribe) {
  EXPECT_EQ(preset_for_log(read_nccl_tests_log(data("all_reduce_current.txt"))), "dgx_a100:1");
  EXPECT_EQ(preset_for_log(read_nccl_tests_log(data("reduce_scatter.json"))), "dgx_h100:1");
  EXPECT_EQ(preset_for_log(read_nccl_tests_log(data("all_gather_2019.txt"))), "dgx1_v100:1");
  NcclTestsLog log;
  log.source = "x";
  for (int r = 0; r < 16; ++r) {
    log.hosts.push_back(r < 8 ? "a" : "b");
    log.gpus.push_back("NVIDIA H800");
  }
  log.ranks = 16;
  EXPECT_EQ(preset_for_log(log), "dgx_h100:2,nvlink=200GB/s");
  log.hosts = {"a", "a", "b", "b"};
  log.gpus.assign(4, "NVIDIA A100-SXM4-40GB");
  log.ranks = 4;
  EXPECT_EQ(preset_for_log(log), "dgx_a100:2,gpus=2");
  EXPECT_NO_THROW(topo::make_preset(preset_for_log(log)));
  auto refused = [](const NcclTestsLog& l) {
    try {
      preset_for_log(l);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  NcclTestsLog uneven = log;
  uneven.hosts = {"a", "a", "a", "b"};
  EXPECT_NE(refused(uneven).find("hosts run 3 and 1 ranks"), std::string::npos) << refused(uneven);
  NcclTestsLog pcie = log;
  pcie.gpus.assign(4, "NVIDIA H100 PCIe");
  EXPECT_NE(refused(pcie).find("no preset for 'NVIDIA H100 PCIe'"), std::string::npos) << refused(pcie);
  // Not boards either: H100 NVL (PCIe cards bridged in pairs) and the Grace Hopper superchip, whose name
  // holds "H200"'s letters.
  for (const char* name : {"NVIDIA H100 NVL", "NVIDIA GH200 480GB"}) {
    NcclTestsLog other = log;
    other.gpus.assign(4, name);
    EXPECT_NE(refused(other).find(fmt::format("no preset for '{}'", name)), std::string::npos) << name;
  }
  EXPECT_NE(refused(NcclTestsLog{}).find("no device lines"), std::string::npos);
}

// A log pasted with one device line of many (as in issues: "#  Rank 71 ... device 3"): the highest rank
// counts the ranks, said in a note, and the table is still read as allreduce; `auto` refuses such a log, as
// the lines it has cannot tell the machine.
TEST(NcclTestsLog, ACutLogCountsItsRanksByTheHighestDeviceLine) {
  const std::string rows =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  "
      "busbw #wrong\n"
      "   536870912     134217728     float     sum      -1   1806.7  297.16  586.06      0   1835.9  292.43 "
      " "
      "576.74      0\n";
  const NcclTestsLog cut = parse_nccl_tests_text(
      "#  Rank 71 Group  0 Pid  14840 on node-171 device  3 [0x01] NVIDIA GB200\n#\n" + rows, "cut");
  EXPECT_EQ(cut.ranks, 72);
  ASSERT_EQ(cut.gpus.size(), 1u);
  ASSERT_EQ(cut.notes.size(), 2u);
  EXPECT_EQ(cut.notes[0], "the log lists 1 device line up to rank 71: taken as 72 ranks");
  EXPECT_EQ(cut.collective, Collective::AllReduce);  // one rank would not have told allreduce from the rest
  try {
    preset_for_log(cut);
    ADD_FAILURE() << "a log with one device line of 72 gave a preset";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("device lines of 1 of its 72 ranks"), std::string::npos) << e.what();
  }
  // Every line there: counted as before, no note.
  std::string all;
  for (int r = 0; r < 4; ++r)
    all += fmt::format("#  Rank {:>2} Group  0 Pid  {} on h1 device  {} [0x01] NVIDIA H100 80GB HBM3\n", r,
                       10 + r, r);
  const NcclTestsLog whole = parse_nccl_tests_text(all + rows, "whole");
  EXPECT_EQ(whole.ranks, 4);
  ASSERT_EQ(whole.notes.size(), 1u);
  EXPECT_NE(whole.notes[0].find("taken as allreduce"), std::string::npos);
  EXPECT_EQ(preset_for_log(whole), "dgx_h100:1,gpus=4");
}

TEST(NcclTestsLog, JsonFile) {
  const NcclTestsLog log = read_nccl_tests_log(data("reduce_scatter.json"));
  EXPECT_EQ(log.collective, Collective::ReduceScatter);
  EXPECT_EQ(log.ranks, 8);
  ASSERT_EQ(log.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(log.rows[1].time_us, 61.20);
  EXPECT_DOUBLE_EQ(log.rows[1].busbw_GBps, 119.94);
  EXPECT_FALSE(log.rows[2].in_place_time_us.has_value());
  EXPECT_EQ(log.gpus_per_thread, 1);  // config.ngpus
}

// What cclab writes in nccl-tests' schema reads back as it was written, JSON and CSV alike.
TEST(NcclTestsLog, WrittenJsonReadsBack) {
  NcclTestsLog log;
  log.program = nccl_tests_program(Collective::AllGather);
  log.ranks = 4;
  log.source = "dgx_h100:1";
  log.rows.push_back(NcclTestsRow{1024, 64, nccl_tests_type(DType::BF16), "none", 12.5, 0.08, 0.06, {}, {}});
  log.rows.push_back(NcclTestsRow{1 << 20, 1 << 16, nccl_tests_type(DType::BF16), "none", 40.25, 26.1, 19.6,
                                  38.0, IterationTimes{39, 40, 47.5}});
  const NcclTestsLog back = parse_nccl_tests_json(format_nccl_tests_json(log, {"-b", "1K"}), "written");
  EXPECT_EQ(back.collective, Collective::AllGather);
  EXPECT_EQ(back.program, "all_gather_perf");
  EXPECT_EQ(back.ranks, 4);
  ASSERT_EQ(back.rows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.rows[i].bytes, log.rows[i].bytes);
    EXPECT_EQ(back.rows[i].count, log.rows[i].count);
    EXPECT_EQ(back.rows[i].type, "bfloat16");
    EXPECT_EQ(dtype_of_nccl_type(back.rows[i].type), DType::BF16);
    EXPECT_DOUBLE_EQ(back.rows[i].time_us, log.rows[i].time_us);
    EXPECT_DOUBLE_EQ(back.rows[i].busbw_GBps, log.rows[i].busbw_GBps);
  }
  EXPECT_DOUBLE_EQ(back.rows[0].in_place_time_us.value(), 12.5);  // none given: the out-of-place time
  EXPECT_DOUBLE_EQ(back.rows[1].in_place_time_us.value(), 38.0);
  // cclab bench's run times travel with the row; a row without them (the simulator's) has none.
  EXPECT_FALSE(back.rows[0].iterations.has_value());
  ASSERT_TRUE(back.rows[1].iterations.has_value());
  EXPECT_DOUBLE_EQ(back.rows[1].iterations->p99_us, 47.5);
  EXPECT_EQ(format_nccl_tests_csv(log),
            "size,count,type,redop,time_us,algbw_GBps,busbw_GBps,time_min_us,time_p50_us,time_p99_us\n"
            "1024,64,bfloat16,none,12.500,0.080,0.060,,,\n"
            "1048576,65536,bfloat16,none,40.250,26.100,19.600,39.000,40.000,47.500\n");
  log.rows.pop_back();
  EXPECT_EQ(format_nccl_tests_csv(log),
            "size,count,type,redop,time_us,algbw_GBps,busbw_GBps\n"
            "1024,64,bfloat16,none,12.500,0.080,0.060\n");
  for (Collective c : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather,
                       Collective::Broadcast, Collective::Reduce, Collective::AllToAll, Collective::Gather,
                       Collective::Scatter, Collective::SendRecv})
    EXPECT_EQ(collective_of_program(nccl_tests_program(c)), c);
}

TEST(NcclTestsLog, Errors) {
  auto message = [](auto&& parse) {
    try {
      parse();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { parse_nccl_tests_text("1024 256 float sum -1 1.0 1.0 1.0 0\n", "a.txt"); }),
            "a.txt:1: a result row before the column header (# size count type ...)");
  EXPECT_EQ(message([] {
              parse_nccl_tests_text(
                  "# size count type redop root time algbw busbw #wrong\n1024 256 float sum -1 "
                  "fast 1.0 1.0 0\n",
                  "b.txt");
            }),
            "b.txt:2: time 'fast' is not a number >= 0");
  EXPECT_EQ(message([] { parse_nccl_tests_text("# nThread 1\n", "c.txt"); }),
            "c.txt: no nccl-tests result rows");
  EXPECT_NE(message([] {
              parse_nccl_tests_json("{\"version\": 1}", "d.json");
            }).find("d.json: no \"results\" list"),
            std::string::npos);
  // A size too large for an integer (or negative, or fractional) is refused, not cast (the fuzzer found
  // 1e30 here, which UBSan reports as an overflowing float-to-integer conversion).
  for (const char* size : {"1e30", "-5", "2.5"}) {
    EXPECT_NE(message([&] {
                parse_nccl_tests_json(fmt::format("{{\"results\": [{{\"size\": {}, \"count\": 1, \"type\": "
                                                  "\"float\", \"out_of_place\": null}}]}}",
                                                  size),
                                      "e.json");
              }).find("e.json: results[0]: \"size\" is not a whole number >= 0"),
              std::string::npos)
        << size;
  }
  EXPECT_NO_THROW(parse_nccl_tests_json(
      "{\"results\": [{\"size\": 1024.0, \"count\": 256, \"type\": \"float\", \"out_of_place\": "
      "{\"time\": 10, \"alg_bw\": 0.1, \"bus_bw\": 0.1}}]}",
      "f.json"));
  const topo::Topology t = topo::make_preset("dgx_a100:2");
  const NcclTestsLog eight = read_nccl_tests_log(data("all_reduce_current.txt"));
  EXPECT_NE(message([&] {
              compare_with_model(eight, t, std::nullopt, "ring", {}, {});
            }).find("measured on 8 ranks, topology 'dgx_a100:2' has 16 GPUs"),
            std::string::npos);
  const NcclTestsLog mute = read_nccl_tests_log(data("all_gather_2019.txt"));
  EXPECT_NE(message([&] {
              compare_with_model(mute, topo::make_preset("dgx1_v100:1"), std::nullopt, "ring", {}, {});
            }).find("give --collective"),
            std::string::npos);
  // A row of a type cclab does not model (nccl-tests -d all) is passed over and said; a log of nothing else
  // is refused.
  NcclTestsLog doubles = eight;
  doubles.rows[0].type = "double";
  doubles.rows[1].redop = "prod";
  const Comparison some =
      compare_with_model(doubles, topo::make_preset("dgx_a100:1"), std::nullopt, "ring", {}, {});
  EXPECT_EQ(some.rows.size(), eight.rows.size() - 2);
  ASSERT_EQ(some.notes.size(), 2u);
  EXPECT_EQ(some.notes[0],
            "1 row not compared: reduction 'prod' is not one cclab models (sum, avg, min, max)");
  for (NcclTestsRow& row : doubles.rows)
    row.type = "double";
  EXPECT_NE(message([&] {
              compare_with_model(doubles, topo::make_preset("dgx_a100:1"), std::nullopt, "ring", {}, {});
            }).find("type 'double' is not one cclab models"),
            std::string::npos);
}

// A log in nccl-tests' text format of the model's own times on `t` (printed to 2 decimals of a microsecond,
// as nccl-tests prints them), sizes 4 KiB..256 MiB by 16 (or 8 B..1 GiB by 8 with `wide`).
std::string model_log(const topo::Topology& t, const char* program, const std::string& algorithm,
                      bool wide = false) {
  const Collective collective = *collective_of_program(program);
  Selector selector;
  std::string text = fmt::format("# Collective test starting: {}\n", program);
  text +=
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
      "algbw   busbw #wrong\n";
  const std::uint64_t first = wide ? 8 : 1 << 12, last = wide ? 1ULL << 30 : 1ULL << 28, step = wide ? 8 : 16;
  for (std::uint64_t bytes = first; bytes <= last; bytes *= step) {
    const CollectiveSpec spec = spec_for(t, collective, bytes / 4, DType::F32, ReduceOp::Sum, 0);
    const double us = selector.choose(spec, t, algorithm).time_s * 1e6;
    text += fmt::format(
        "{:>12} {:>13} {:>9} {:>7} {:>7} {:>8.2f} {:>7.2f} {:>7.2f} {:>6} {:>8.2f} {:>7.2f} "
        "{:>7.2f} {:>6}\n",
        bytes, bytes / 4, "float", "sum", -1, us, 0.0, 0.0, 0, us, 0.0, 0.0, 0);
  }
  return text;
}

// The model's own times compare at rounding error, for every collective cclab plans.
TEST(Compare, TheModelsOwnTimesCompareAtRoundingError) {
  const topo::Topology t = topo::make_preset("dgx_h100:2");
  for (const char* program :
       {"all_reduce_perf", "reduce_scatter_perf", "all_gather_perf", "broadcast_perf", "reduce_perf",
        "alltoall_perf", "gather_perf", "scatter_perf", "sendrecv_perf"}) {
    const NcclTestsLog log = parse_nccl_tests_text(model_log(t, program, "auto"), program);
    const Comparison c = compare_with_model(log, t, std::nullopt, "auto", {}, {});
    ASSERT_EQ(c.rows.size(), 5u) << program;
    for (const ComparedRow& r : c.rows)
      EXPECT_LT(std::abs(r.error), 0.005 / r.measured.time_us + 1e-12) << program << " " << r.measured.bytes;
    EXPECT_LT(*median_abs_error(c, 0, UINT64_MAX), 1e-3) << program;
  }
}

// A run where one thread drove several GPUs (nccl-tests -g 8: the 2019 log's header) is said to carry host
// work the model leaves out; a run with one process per GPU is not, and neither is a log that does not say.
TEST(Compare, SaysWhenOneThreadDroveSeveralGpus) {
  const NcclTestsLog threaded = read_nccl_tests_log(data("all_gather_2019.txt"));
  EXPECT_EQ(threaded.gpus_per_thread, 8);
  const topo::Topology t = topo::make_preset("dgx1_v100:1");
  auto says_threads = [](const Comparison& c) {
    return std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) {
      return n.find("drove 8 GPUs (nccl-tests -g 8)") != std::string::npos;
    });
  };
  EXPECT_TRUE(says_threads(compare_with_model(threaded, t, Collective::AllGather, "ring", {}, {})));
  const topo::Topology h = topo::make_preset("dgx_h100:2");
  const std::string rows = model_log(h, "all_reduce_perf", "auto");
  for (const char* header :
       {"", "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5\n"}) {
    const NcclTestsLog log = parse_nccl_tests_text(header + rows, "log");
    EXPECT_EQ(log.gpus_per_thread, *header ? 1 : 0);
    EXPECT_FALSE(says_threads(compare_with_model(log, h, std::nullopt, "auto", {}, {}))) << header;
  }
  const NcclTestsLog eight = parse_nccl_tests_text(
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5\n" + rows, "log");
  EXPECT_TRUE(says_threads(compare_with_model(eight, h, std::nullopt, "auto", {}, {})));
}

// A run that launched its iterations as CUDA graphs (nccl-tests -G N) is said to carry less launch cost than
// the model's; "graph: 0", or a log that does not say, is not.
TEST(Compare, SaysWhenARunLaunchedCudaGraphs) {
  const topo::Topology h = topo::make_preset("dgx_h100:2");
  const std::string rows = model_log(h, "all_reduce_perf", "auto");
  auto says_graphs = [](const Comparison& c) {
    return std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) {
      return n.find("10 at a time as one CUDA graph (nccl-tests -G 10)") != std::string::npos;
    });
  };
  const std::string header =
      "# nThread 1 nGpus 1 minBytes 128 maxBytes 65536 step: 2(factor) warmup iters: 5 iters: 100 agg iters: "
      "1 "
      "validation: 1 graph: ";
  const NcclTestsLog graphs = parse_nccl_tests_text(header + "10\n" + rows, "log");
  EXPECT_EQ(graphs.graph_iterations, 10);
  EXPECT_TRUE(says_graphs(compare_with_model(graphs, h, std::nullopt, "auto", {}, {})));
  for (const std::string& text : {header + "0\n" + rows, rows}) {
    const NcclTestsLog log = parse_nccl_tests_text(text, "log");
    EXPECT_EQ(log.graph_iterations, 0);
    EXPECT_FALSE(says_graphs(compare_with_model(log, h, std::nullopt, "auto", {}, {})));
  }
  EXPECT_EQ(read_nccl_tests_log(data("reduce_scatter.json")).graph_iterations, 0);  // config.graph 0
}

// A log's tuner lines against NCCL's tuning model as cclab reproduces it: on one H100 node NCCL ran its ring
// under LL from 8 B to 1 MiB and NVLS from 2 MiB (the switch of nccl-tests#309); one line here says the tree
// at 16 MiB, which cclab's table does not pick, and is reported.
TEST(Compare, TunerLinesAgainstNcclsModelAsReproduced) {
  const topo::Topology t = topo::make_preset("dgx_h100:1");
  std::string text = "# Collective test starting: all_reduce_perf\n";
  int lines = 0;
  for (std::uint64_t bytes = 8; bytes <= (std::uint64_t{1} << 30); bytes *= 8, ++lines) {
    const char* algo = bytes <= (1u << 20) ? "RING" : bytes == (std::uint64_t{16} << 20) ? "TREE" : "NVLS";
    const char* proto = bytes <= (1u << 20) ? "LL" : "SIMPLE";
    text += fmt::format(
        "host:1:1 [0] NCCL INFO AllReduce: {} Bytes -> Algo {} proto {} channel{{Lo..Hi}}={{0..0}}\n", bytes,
        algo, proto);
  }
  text += "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
  for (std::uint64_t bytes = 8; bytes <= (std::uint64_t{1} << 30); bytes *= 8)
    text += fmt::format("{} {} float sum -1 10.0 0 0 0 10.0 0 0 0\n", bytes, bytes / 4);
  const NcclTestsLog log = parse_nccl_tests_text(text, "tuned");
  ASSERT_EQ(static_cast<int>(log.tuned.size()), lines);
  const auto agreement = tuner_agreement(log, t, Collective::AllReduce, {}, kAllNcclProtocolBits);
  ASSERT_TRUE(agreement);
  EXPECT_EQ(agreement->sizes, lines);
  EXPECT_EQ(agreement->agree, lines - 1);
  ASSERT_EQ(agreement->differences.size(), 1u);
  EXPECT_EQ(agreement->differences[0], "16777216 B: the log Tree/Simple, cclab NVLS/Simple");
  // Not for collectives whose printed bytes are per rank, nor where cclab cannot reproduce NCCL's graphs.
  EXPECT_FALSE(tuner_agreement(log, t, Collective::AllGather, {}, kAllNcclProtocolBits));
  EXPECT_FALSE(tuner_agreement(log, topo::make_preset("pcie_server:1,gpus=8"), Collective::AllReduce, {},
                               kAllNcclProtocolBits));
}

// NCCL's tuner lines (NCCL_DEBUG_SUBSYS=TUNING), in both formats, choose each size's algorithm and protocol:
// a log whose sizes ran different algorithms under forced protocols, written from the model's own times for
// them, compares at rounding error only when each row is costed with its own (CollNetChain too, on SHARP
// switches); an algorithm cclab does not plan for the collective (PAT, for an allreduce) leaves its size to
// the fallback, and the user's --algo wins.
TEST(Compare, NcclsTunerLinesChooseEachSizesAlgorithmAndProtocol) {
  const topo::Topology t = topo::make_preset("dgx_h100:2,sharp=1");
  struct Size {
    std::uint64_t bytes;
    const char* line;  // what NCCL printed for it
    const char* algorithm;
    Protocol protocol;
    int channels;  // what the line says it ran on (0: not said, the default)
  };
  const std::vector<Size> sizes = {
      {65536, "[0] NCCL INFO AllReduce: 65536 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}", "tree",
       Protocol::LL, 2},
      {1 << 20, "[0] NCCL INFO 1048576 Bytes -> Algo 1 proto 1 time 31.500000", "ring", Protocol::LL128, 0},
      {64 << 20,
       "[0] NCCL INFO AllReduce: 67108864 Bytes -> Algo NVLS_TREE proto SIMPLE channel{Lo..Hi}={0..15}",
       "nvls_tree", Protocol::Simple, 16},
      {256 << 20, "[0] NCCL INFO AllReduce: 268435456 Bytes -> Algo COLLNET_CHAIN proto SIMPLE",
       "collnet_chain", Protocol::Simple, 0},
      {512 << 20, "[0] NCCL INFO AllReduce: 536870912 Bytes -> Algo PAT proto SIMPLE", "", {}, 0},
  };
  std::string text = "# Collective test starting: all_reduce_perf\n";
  for (const Size& s : sizes)
    text += std::string("host:1:1 ") + s.line + "\n";
  text += "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
  for (const Size& s : sizes) {
    CostParams cost;
    cost.protocol = *s.algorithm ? s.protocol : Protocol::Auto;
    const CollectiveSpec spec = spec_for(t, Collective::AllReduce, s.bytes / 4, DType::F32);
    PlanOptions ran_on;
    ran_on.channels = s.channels;
    const double us =
        Selector(cost).choose(spec, t, *s.algorithm ? s.algorithm : "nccl", ran_on).time_s * 1e6;
    text += fmt::format("{} {} float sum -1 {:.3f} 0 0 0 {:.3f} 0 0 0\n", s.bytes, s.bytes / 4, us, us);
  }
  const NcclTestsLog log = parse_nccl_tests_text(text, "tuned");
  ASSERT_EQ(log.tuned.size(), 5u);
  EXPECT_EQ(log.tuned.at(65536).algorithm, "Tree");
  EXPECT_EQ(log.tuned.at(1 << 20).algorithm, "Ring");  // index 1
  EXPECT_EQ(log.tuned.at(1 << 20).protocol, "LL128");
  EXPECT_EQ(log.tuned.at(64 << 20).algorithm, "NVLSTree");
  EXPECT_EQ(log.tuned.at(65536).channels, 2);
  EXPECT_EQ(log.tuned.at(1 << 20).channels, 0);  // the older line does not say
  {  // the channel counts matter here: the tree on its default channels takes another time (at 64 KiB NCCL's
     // tree LL runs up to 16 thread blocks, so the 2 of the line bind; at 4 KiB it runs one on any count)
    CostParams ll;
    ll.protocol = Protocol::LL;
    const CollectiveSpec spec = spec_for(t, Collective::AllReduce, 65536 / 4, DType::F32);
    PlanOptions two;
    two.channels = 2;
    const double on_two = Selector(ll).choose(spec, t, "tree", two).time_s;
    EXPECT_GT(std::abs(Selector(ll).choose(spec, t, "tree").time_s - on_two), 1e-3 * on_two);
  }
  EXPECT_EQ(log.tuned.at(256 << 20).algorithm, "CollNetChain");
  EXPECT_EQ(log.tuned.at(512 << 20).algorithm, "PAT");

  const LogChoice choice =
      choice_for_log(log, std::nullopt, std::nullopt, std::nullopt, "nccl", Protocol::Auto);
  EXPECT_EQ(choice.by_size.size(), 4u);
  EXPECT_NE(choice.note.find("1 sizes with algorithms cclab does not plan"), std::string::npos)
      << choice.note;
  CostParams auto_protocol;
  auto_protocol.protocol = Protocol::Auto;  // as `cclab compare` prices by default
  const Comparison c =
      compare_with_model(log, t, std::nullopt, choice.algorithm, {}, auto_protocol, choice.by_size);
  ASSERT_EQ(c.rows.size(), 5u);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (*sizes[i].algorithm) {
      EXPECT_EQ(c.rows[i].algorithm, sizes[i].algorithm);
    }
    EXPECT_LT(std::abs(c.rows[i].error), 1e-4) << sizes[i].bytes;
  }
  // Without the per-size choice the forced protocols are lost: the small sizes differ.
  const Comparison plain = compare_with_model(log, t, std::nullopt, "nccl", {}, auto_protocol);
  EXPECT_GT(*median_abs_error(plain, 0, 2 << 20), 0.01);
  // The user's --algo wins over the tuner's algorithm (its protocol stays the tuner's).
  const LogChoice ring =
      choice_for_log(log, std::nullopt, std::string("ring"), std::nullopt, "nccl", Protocol::Auto);
  EXPECT_EQ(ring.by_size.size(), 5u);
  EXPECT_EQ(ring.by_size.at(65536).algorithm, "ring");
  EXPECT_EQ(ring.by_size.at(65536).protocol, Protocol::LL);
}

// calibrate --from-nccl-tests, round trip: logs written from a topology whose bounding link has another
// efficiency and overhead (NVSwitch on one node, InfiniBand on two) are fitted back from the preset's
// defaults, and the fitted topology compares with them at well under the 5 % the fit promises.
TEST(LogCalibration, RecoversTheLinkModelALogWasWrittenWith) {
  struct Case {
    const char* preset;
    topo::LinkKind kind;
    topo::LinkModel truth;
  };
  for (const Case& k : {Case{"dgx_a100:1", topo::LinkKind::NvSwitch, {0.7, 3e-6}},
                        Case{"dgx_a100:2", topo::LinkKind::InfiniBand, {0.85, 2e-6}}}) {
    auto truth = topo::load_topology_mutable(k.preset);
    truth->set_link_model(k.kind, k.truth);
    const NcclTestsLog log =
        parse_nccl_tests_text(model_log(*truth, "all_reduce_perf", "ring", true), "truth");
    auto fitted = topo::load_topology_mutable(k.preset);
    const LogFit fit = fit_link_model({log}, *fitted, std::nullopt, "ring", {}, {});
    EXPECT_EQ(fit.kind, k.kind) << k.preset;
    EXPECT_NEAR(fit.after.efficiency, k.truth.efficiency, 0.01 * k.truth.efficiency) << k.preset;
    EXPECT_NEAR(fit.after.overhead_s, k.truth.overhead_s, 0.05 * k.truth.overhead_s) << k.preset;
    EXPECT_GT(fit.median_error_before, 0.05) << k.preset;  // the defaults were off
    EXPECT_LT(fit.median_error_after, 0.01) << k.preset;
    const Comparison again = compare_with_model(log, *fitted, std::nullopt, "ring", {}, {});
    EXPECT_LT(*median_abs_error(again, 0, UINT64_MAX), 0.05) << k.preset;
  }
}

}  // namespace
}  // namespace cclab
