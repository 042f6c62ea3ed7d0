#include "cli/commands.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "cli/subcommand.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"

namespace gf::cli {

namespace {

// How messages name an option: its long name ("--db"), or a positional's in capitals ("CLUSTER").
std::string option_name(const CLI::Option& opt) {
  if (!opt.get_lnames().empty() || !opt.get_snames().empty()) return opt.get_name();
  std::string name = opt.get_name();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  return name;
}

bool is_positional(const CLI::Option& opt) { return opt.get_lnames().empty() && opt.get_snames().empty(); }

// What `sub` takes besides options, for messages: "`train` takes CLUSTER (...) and options".
std::string accepted_arguments(const CLI::App& sub) {
  std::vector<std::string> positionals;
  for (const CLI::Option* opt : sub.get_options()) {
    if (!is_positional(*opt)) continue;
    const std::string name = option_name(*opt);
    std::string what = opt->get_description();  // "CLUSTER: a preset name ..." or "all_reduce | ..."
    if (what.starts_with(name + ": ")) what = what.substr(name.size() + 2);
    positionals.push_back(name + " (" + what + ")");
  }
  const std::string name = "`" + sub.get_name() + "`";
  if (positionals.empty()) return name + " takes options only, no positional arguments";
  return name + " takes " + join(positionals, " and ") + ", then options (see `gpufabric " + sub.get_name() +
         " --help`)";
}

// Arguments CLI11 could not place (the subcommands allow extras so that they reach here): a word
// beyond the command's positionals, or an option it does not have. And a CLUSTER beside
// --preset/--cluster, which CLI11 would report as "cluster excludes --preset", as if the
// user had meant to give CLUSTER.
void refuse_extra_arguments(const CLI::App& sub) {
  const std::vector<std::string> extras = sub.remaining();
  if (!extras.empty()) {
    const std::string& first = extras.front();
    if (first.size() > 1 && first.front() == '-') {
      std::vector<std::string> names;
      for (const CLI::Option* opt : sub.get_options())
        if (!opt->get_lnames().empty()) names.push_back("--" + opt->get_lnames().front());
      const std::string hint = suggest(first, names);
      throw InputError(
          {}, first,
          "not an option of `" + sub.get_name() + "`" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
          "see `gpufabric " + sub.get_name() + " --help`");
    }
    throw InputError({}, "", "stray argument '" + first + "'", accepted_arguments(sub));
  }
  const CLI::Option* cluster = sub.get_option_no_throw("cluster");
  if (cluster == nullptr || cluster->count() == 0) return;
  for (const char* flag : {"--preset", "--cluster"}) {
    const CLI::Option* named = sub.get_option_no_throw(flag);
    if (named != nullptr && named->count() > 0) {
      throw InputError({}, "",
                       "stray argument '" + cluster->results().front() + "': " + flag + " " + named->results().front() +
                           " already names the cluster",
                       "one cluster: CLUSTER, --preset NAME or --cluster FILE");
    }
  }
}

// An option given an empty value ("--db ''", "--nodes ''") would read as its default, since every
// command takes "empty" to mean "not given": --db '' even made a throwaway database. Refused here,
// once, for every option of every subcommand; leaving the option out is how to get its default.
void refuse_empty_values(const CLI::App& sub) {
  for (const CLI::Option* opt : sub.get_options()) {
    // Not given, a flag, or an option whose value may be left out (serve --offline [N]).
    if (opt->count() == 0 || opt->get_expected_min() == 0) continue;
    for (const auto& value : opt->results()) {
      if (!value.empty()) continue;
      throw InputError({}, option_name(*opt), "given an empty value",
                       is_positional(*opt) ? "a non-empty " + option_name(*opt)
                                           : "a value, or leave " + option_name(*opt) + " out for its default");
    }
  }
}

}  // namespace

std::string execute(const std::vector<std::string>& args, std::ostream& err) {
  std::vector<const char*> argv_storage{"gpufabric"};
  for (const auto& a : args) argv_storage.push_back(a.c_str());
  const int argc = static_cast<int>(argv_storage.size());
  const char* const* argv = argv_storage.data();
  CLI::App app{"gpufabric: model, measure and plan GPU servers and clusters along the whole data path"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, SubcommandRun>> runs;
  for (const Subcommand& s : subcommands()) {
    CLI::App* sub = app.add_subcommand(s.name, s.description);
    runs.emplace_back(sub, s.add_to(*sub, err));
  }

  if (argc > 1 && argv[1][0] != '-') {
    const std::string sub = argv[1];
    std::vector<std::string> names;
    for (const auto* s : app.get_subcommands({})) names.push_back(s->get_name());
    if (std::find(names.begin(), names.end(), sub) == names.end()) {
      const std::string hint = suggest(sub, names);
      throw InputError({}, "",
                       "unknown subcommand '" + sub + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                       join(names));
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) sub->allow_extras();  // refused after parsing, saying what each takes
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return app.help();
  } catch (const CLI::CallForAllHelp&) {
    return app.help("", CLI::AppFormatMode::All);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.help();
    throw;
  }
  for (const CLI::App* sub : app.get_subcommands()) {
    refuse_extra_arguments(*sub);
    refuse_empty_values(*sub);
  }
  for (const auto& [sub, run] : runs)
    if (sub->parsed()) return run();
  return {};  // unreachable: require_subcommand(1) refused a command line without one
}

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
    // Names from users' files (jobs, nodes, clusters, models) reach the tables; the reports escape
    // them where they print them, and this escapes whatever they missed, so no raw ESC or invalid
    // UTF-8 from an input file reaches the terminal (JSON is escaped already and passes unchanged).
    out << printable(execute(args, err), true);
    out.flush();
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "gpufabric: error: " << e.what() << "\n";
    err << "Run 'gpufabric --help' for usage.\n";
    return kExitBadInput;
  } catch (const InputError& e) {
    err << "gpufabric: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    err << "gpufabric: error: out of memory building the model; try fewer nodes\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "gpufabric: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gf::cli
