#pragma once
// The cluster options every cluster-taking subcommand accepts (--preset/--cluster and the
// overrides), parsed strictly so a typo is an error, not a silent default.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "comm/nccl_params.hpp"
#include "hw/catalog.hpp"
#include "topo/cluster_spec.hpp"

namespace gf::cli {

struct ClusterOptions {
  std::string preset;
  std::string cluster_file;
  std::string positional;  // CLUSTER: a preset name or a cluster file, as the README's synopsis has it
  std::string catalog_dir;
  std::string nodes, network, gpu, nic, nics_per_node, fabric, tiers, oversubscription, gpudirect, p2p;
  std::string calibration;  // an overlay written by `gpufabric calibrate`

  void add_to(CLI::App& app);
  // The catalog, with --catalog's files and --calibration's link efficiencies applied.
  [[nodiscard]] hw::Catalog load_catalog() const;
  // NCCL's built-in parameters, with --calibration's applied.
  [[nodiscard]] comm::NcclParams nccl_params() const;
  [[nodiscard]] topo::ClusterSpec load_spec(const hw::Catalog& catalog) const;
  [[nodiscard]] topo::ClusterOverrides overrides() const;
};

// The notes and warnings of a topology (Topology::notes()) as header lines, "  note: ..." and
// "  warning: ...", for every command that prints a cluster; empty when there are none.
std::string notes_text(const std::vector<std::string>& notes);

// The items of a list option ("1,2,4" -> "1", "2", "4"; empty items kept), separated by commas
// or by `separator` ("diurnal:20:3").
std::vector<std::string> split_list(const std::string& s, char separator = ',');

// A whole number from `min` to `max`, or an InputError naming `flag`.
long parse_whole(const std::string& flag, const std::string& text, long min, long max);

// Adds `--catalog DIR` only (for subcommands that need the catalog but no cluster).
void add_catalog_option(CLI::App& app, std::string& dir);
hw::Catalog load_catalog(const std::string& dir);

}  // namespace gf::cli
