#include "cli/import_command.hpp"

#include <memory>

#include "cli/import_cluster.hpp"
#include "cli/import_jobs_command.hpp"
#include "cli/output_files.hpp"
#include "core/error.hpp"

namespace gf::cli {

const std::vector<Importer>& importers() {
  static const std::vector<Importer> table = {
      {"nccl-topo", "NCCL's topology XML (NCCL_TOPO_DUMP_FILE, cloud images' topology files) to a cluster file",
       add_nccl_topo_importer},
      {"topo-m", "`nvidia-smi topo -m` text to a cluster file", add_topo_matrix_importer},
      {"sacct", "Slurm accounting (sacct --parsable2) to a job trace for `schedule --trace`", add_sacct_importer},
      {"k8s-pods", "A Kubernetes pod list (kubectl get pods -A -o json) to a job trace for `schedule --trace`",
       add_k8s_pods_importer},
      {"k8s-nodes", "A Kubernetes node list with NVIDIA GPU labels to a node list for `schedule --nodes-file`",
       add_k8s_nodes_importer},
  };
  return table;
}

SubcommandRun add_import_command(CLI::App& cmd, std::ostream& err) {
  struct State {
    ImportRun run;
    std::string output;
    const char* name = nullptr;
  };
  auto state = std::make_shared<State>();
  std::vector<std::string> names;
  for (const auto& imp : importers()) {
    names.push_back(imp.name);
    auto* sub = cmd.add_subcommand(imp.name, imp.description);
    auto run = imp.add_to(*sub);
    auto output = std::make_shared<std::string>();
    sub->add_option("-o,--output", *output, "Write the result here (default: standard output)");
    sub->callback([state, run, output, name = imp.name] {
      state->run = run;
      state->output = *output;
      state->name = name;
    });
  }
  return [&cmd, state, names, &err] {
    if (!cmd.remaining().empty()) {
      throw InputError({}, "", "stray argument '" + cmd.remaining().front() + "'",
                       "`import KIND FILE [options]`, KIND one of " + join(names));
    }
    if (!state->run) throw InputError({}, "KIND", "`import` needs an importer", join(names));
    if (state->output.empty() && cmd.get_subcommand(state->name)->count("--output") > 0) {
      throw InputError({}, "--output", "given an empty value", "a file path, or leave -o out for standard output");
    }
    if (!state->output.empty()) check_writable(state->output, "--output");
    const ImportOutput out = state->run(state->output);
    for (const auto& w : out.warnings) err << "gpufabric: warning: " << w << "\n";
    if (state->output.empty()) return out.text;
    refuse_same_file(out.inputs, {{"--output", state->output}});
    write_whole(state->output, out.text, "--output");
    return "wrote " + state->output + ": " + out.summary + "\n";
  };
}

}  // namespace gf::cli
