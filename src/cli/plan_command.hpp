#pragma once
// `gpufabric plan`: a plan file (or a built-in example) searched over designs and layouts, the
// answer printed with its reasons, optionally stored (--db, resumable), exported (--show,
// --format) and drawn (--report FILE.html); split over MPI ranks with --mpi.
#include <CLI/CLI.hpp>

#include <string>

namespace gf::cli {

struct PlanOptions {
  std::string plan;
  std::string db;
  bool show = false;
  bool list = false;
  bool mpi = false;
  bool quiet = false;
  std::string format = "table";
  std::string report, timeline;
  std::string threads;  // empty: every core
  std::string rows = "12";
  std::string catalog_dir;

  void add_to(CLI::App& app);
  [[nodiscard]] std::string run() const;
};

// The plan run when none is named (`make run`, `gpufabric plan`).
inline constexpr const char* kDefaultPlan = "pretrain-70b";

}  // namespace gf::cli
