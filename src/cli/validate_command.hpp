#pragma once
// `gpufabric validate`: predict every cited public measurement of a suite and compare, with each
// suite's in-sample and leave-one-source-out error; `--bands` prints the error-band table the
// other commands print their bands from (data/validation/error_bands.yaml).
#include <CLI/CLI.hpp>

#include <string>

namespace gf::cli {

struct ValidateOptions {
  std::string format = "table";
  std::string suite = "all";
  std::string file;
  std::string catalog;
  bool bands = false;

  void add_to(CLI::App& app);
  [[nodiscard]] std::string run() const;
};

}  // namespace gf::cli
