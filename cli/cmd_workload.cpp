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
    fmt::print("{:>5}  {:<48} {:>14}\n", "#", "tensor", "elements");
    for (std::size_t i = 0; i < w.tensors.size(); ++i)
      fmt::print("{:>5}  {:<48} {:>14}\n", i, w.tensors[i].name, w.tensors[i].elements);
    const std::uint64_t total = w.total_elements();
    fmt::print("{}: {} tensors, {} parameters; gradients {:.1f} MiB in f32, {:.1f} MiB in f16\n", w.name,
               w.tensors.size(), total, total * 4.0 / (1 << 20), total * 2.0 / (1 << 20));
  });
}

}  // namespace cclab::cli
