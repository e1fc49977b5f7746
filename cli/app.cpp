#include "cli/app.hpp"

#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "common/error.hpp"

namespace cclab::cli {

std::unique_ptr<CLI::App> make_app() {
  auto app = std::make_unique<CLI::App>(
      "cclab: a collective communication lab. One engine plans collective schedules over a topology "
      "graph; the same schedules are verified, costed, simulated and run.",
      "cclab");
  app->require_subcommand(1);
  app->set_version_flag("--version", "cclab 0.1.0");
  return app;
}

int run_app(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ExitStatus& e) {
    return e.code;
  } catch (const Error& e) {
    fmt::print(stderr, "cclab: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "cclab: unexpected error: {}\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace cclab::cli
