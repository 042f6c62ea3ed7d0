#pragma once
// `gpufabric probe`: measures this machine (host memory, storage, CPU decode, GPU copies, NCCL,
// and across nodes with --mpi), saves or loads the profile, and compares it with what the
// catalog says the detected hardware should do.
#include <CLI/CLI.hpp>

#include <string>

namespace gf::cli {

struct ProbeOptions {
  bool quick = false;
  bool compare = false;
  bool mpi = false;
  std::string format = "table";
  std::string save;
  std::string load;
  std::string dir;
  std::string threads;  // empty: one per core
  std::string parts;
  std::string catalog_dir;
  // Set by add_to: tell `--load ''` or `--save ''` (refused) from no --load or --save.
  CLI::Option* load_option = nullptr;
  CLI::Option* save_option = nullptr;

  void add_to(CLI::App& app);
  // The text to print; empty on the MPI ranks other than 0.
  [[nodiscard]] std::string run() const;
};

}  // namespace gf::cli
