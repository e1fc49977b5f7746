// `cclab workload show NAME`: the gradient tensors of a training workload, in registration order, and totals.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "engine/whatif/workload.hpp"

namespace cclab::cli {

void add_workload_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("workload", "Inspect training workloads (gradient tensors)");
  cmd->require_subcommand(1);
  auto name = std::make_shared<std::string>("resnet50");
  auto* show = cmd->add_subcommand("show", "Print every gradient tensor and the totals");
  show->add_option("name", *name, std::string("workload: ") + std::string(kWorkloadNames))
      ->capture_default_str();
  show->callback([name] {
    const Workload w = make_workload(*name);
    // Backward cost per sample: what backward spends before this gradient is ready (see workload.hpp).
    fmt::print("{:>5}  {:<48} {:>14} {:>14} {:>14}\n", "#", "tensor", "elements", "bwd MFLOP", "bwd MB");
    for (std::size_t i = 0; i < w.tensors.size(); ++i) {
      const Tensor& t = w.tensors[i];
      fmt::print("{:>5}  {:<48} {:>14} {:>14.3f} {:>14.3f}\n", i, t.name, t.elements, t.backward.flops / 1e6,
                 t.backward.bytes / 1e6);
    }
    const std::uint64_t total = w.total_elements();
    fmt::print("{}: {} tensors, {} parameters; gradients {:.1f} MiB in f32, {:.1f} MiB in f16\n", w.name,
               w.tensors.size(), total, total * 4.0 / (1 << 20), total * 2.0 / (1 << 20));
    if (w.has_backward_costs()) {
      double bytes = 0;
      for (const Tensor& t : w.tensors)
        bytes += t.backward.bytes;
      fmt::print("backward per sample: {:.2f} GFLOP, {:.1f} MB of activation traffic (f16)\n",
                 w.total_backward_flops() / 1e9, bytes / 1e6);
    } else {
      fmt::print("backward costs not given: gradients become ready in proportion to parameter counts\n");
    }
  });
}

}  // namespace cclab::cli
