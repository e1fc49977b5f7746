// What the `cclab` front and its heavy sibling `cclab-real` share: the app's banner and the one place where a
// command's outcome (a value, ExitStatus, a cclab::Error, anything else) becomes an exit status and a line.
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

namespace cclab::cli {

// The commands that need MPI, NCCL or LibTorch. They live in the executable `cclab-real` beside `cclab`, so
// that every other command starts without loading those libraries (0.7 s and ~190 MB of start-up that
// `cclab algorithms` or `cclab plan` would otherwise pay); `cclab` hands them over with exec, as git does.
struct HeavyCommand {
  const char* name;
  const char* summary;
};
inline constexpr HeavyCommand kHeavyCommands[] = {
    {"bench", "Run a collective on real ranks (MPI or NCCL) and compare it with the native one"},
    {"calibrate", "Measure link latency and bandwidth on real ranks and write a calibrated topology"},
    {"train", "Data-parallel LibTorch training whose gradients are allreduced by the engine"},
};
inline constexpr const char* kHeavyExecutable = "cclab-real";

// The app every cclab executable starts from (the same banner and --version).
std::unique_ptr<CLI::App> make_app();

// Parses argv into `app` and runs the chosen command; returns the process exit status.
int run_app(CLI::App& app, int argc, char** argv);

}  // namespace cclab::cli
