#include "cli/subcommand.hpp"

#include "cli/calibrate_command.hpp"
#include "cli/collective_command.hpp"
#include "cli/import_command.hpp"
#include "cli/inventory_commands.hpp"
#include "cli/pipeline_command.hpp"
#include "cli/plan_command.hpp"
#include "cli/probe_command.hpp"
#include "cli/schedule_command.hpp"
#include "cli/serve_command.hpp"
#include "cli/train_command.hpp"
#include "cli/validate_command.hpp"

namespace gf::cli {

const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> table = {
      {"presets", "List the built-in cluster presets", add_presets_command},
      {"catalog", "List the hardware catalog with each entry's source", add_catalog_command},
      {"topo", "Show a cluster's topology: connection matrix, paths, bandwidth", add_topo_command},
      {"collective", "Predict an NCCL collective across sizes, as nccl-tests prints it",
       add_options<CollectiveOptions>},
      {"pipeline", "Model a node's input pipeline (storage, CPU decode, H2D, GPU) and find its bottleneck",
       add_options<PipelineOptions>},
      {"train", "Model one training step: time, throughput, MFU, where the time goes, memory, scaling",
       add_options<TrainOptions>},
      {"serve", "Model LLM inference serving: throughput, TTFT/TPOT percentiles, the bound; size a fleet for SLOs",
       add_options<ServeOptions>},
      {"plan",
       "Choose the architecture: search designs and layouts for a plan's workloads and limits, and recommend one",
       add_options<PlanOptions>},
      {"schedule",
       "Place jobs on a shared cluster: replay a trace under placement policies (MIG, sharing, gangs, topology, "
       "FGD, Tiresias), FGD's fill experiment, MIG packing, elastic serving",
       add_options<ScheduleOptions>},
      {"probe", "Measure this machine: memory, storage, CPU decode, GPU copies, NCCL; across nodes with --mpi",
       add_options<ProbeOptions>},
      {"calibrate",
       "Fit link and transport efficiencies to your own nccl-tests, nvbandwidth and probe measurements; write a "
       "calibration overlay",
       add_options<CalibrateOptions>},
      {"import", "Turn a file you already have into a gpufabric input (see --help)", add_import_command},
      {"validate", "Compare predictions with the cited public measurements", add_options<ValidateOptions>},
  };
  return table;
}

}  // namespace gf::cli
