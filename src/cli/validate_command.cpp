#include "cli/validate_command.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/cluster_options.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "report/generalisation_report.hpp"
#include "report/serving_validation_report.hpp"
#include "report/time_to_train_report.hpp"
#include "report/training_validation_report.hpp"
#include "report/validation_report.hpp"
#include "validate/collective_validation.hpp"
#include "validate/generalisation.hpp"
#include "validate/path_validation.hpp"
#include "validate/serving_validation.hpp"
#include "validate/time_to_train_validation.hpp"
#include "validate/training_validation.hpp"

namespace gf::cli {

namespace {

// One suite's output in the chosen format, with its generalisation section.
struct SuiteOutput {
  std::string body;
  validate::Generalisation general;
  std::vector<band::Band> bands;
};

template <class Checks>
SuiteOutput with_generalisation(const std::string& suite, const Checks& checks, std::string body,
                                const std::string& format) {
  SuiteOutput o;
  const auto rows = validate::scored(checks);
  o.general = validate::generalise(suite, rows);
  o.bands = validate::compute_bands(suite, rows);
  if (format == "json") {
    auto j = nlohmann::json::parse(body);
    j["generalisation"] = report::generalisation_json(o.general, o.bands);
    o.body = j.dump(2) + "\n";
  } else if (format == "table") {
    o.body = std::move(body) + report::generalisation_text(o.general, o.bands);
  } else {
    o.body = std::move(body);  // CSV stays one table of rows
  }
  return o;
}

}  // namespace

void ValidateOptions::add_to(CLI::App& app) {
  app.add_option("--format", format, "table | json | csv");
  app.add_option("--suite", suite, "all | paths | collectives | training | serving | time-to-train");
  app.add_option("--file", file, "A validation YAML file of the --suite's format instead of the built-in set");
  app.add_flag("--bands", bands,
               "Print the error-band table computed from the built-in suites (what data/validation/error_bands.yaml "
               "holds; `make bands` writes it)");
  add_catalog_option(app, catalog);
}

std::string ValidateOptions::run() const {
  const std::vector<std::string> formats = {"table", "json", "csv"};
  if (std::find(formats.begin(), formats.end(), format) == formats.end())
    throw InputError({}, "--format", "got '" + format + "'", "table, json, csv");
  const std::vector<std::string> suites = {"all", "paths", "collectives", "training", "serving", "time-to-train"};
  if (std::find(suites.begin(), suites.end(), suite) == suites.end())
    throw InputError({}, "--suite", "got '" + suite + "'", "all, paths, collectives, training, serving, time-to-train");
  if (!file.empty() && suite == "all")
    throw InputError({}, "--file", "say which suite the file holds", "--suite paths or --suite collectives");
  const hw::Catalog cat = load_catalog(catalog);
  if (bands) {
    if (!file.empty()) throw InputError({}, "--file", "the bands come from the built-in suites only", "no --file");
    if (suite != "all") throw InputError({}, "--suite", "the bands cover every suite", "no --suite with --bands");
    if (format != "table") throw InputError({}, "--format", "the band table is YAML", "no --format with --bands");
    auto b = validate::compute_bands("training", validate::scored(validate::check_training(cat)));
    auto s = validate::compute_bands("serving", validate::scored(validate::check_serving(cat)));
    auto c = validate::compute_bands(
        "collectives", validate::scored(validate::check_collectives(validate::builtin_collective_rows(), cat)));
    b.insert(b.end(), s.begin(), s.end());
    b.insert(b.end(), c.begin(), c.end());
    return validate::bands_yaml(b);
  }
  if (suite == "time-to-train") {
    if (format == "csv") throw InputError({}, "--format", "csv is not offered for time-to-train", "table, json");
    const auto rows = file.empty() ? validate::builtin_time_to_train_rows()
                                   : validate::parse_time_to_train_rows(read_text_file(file, "--file"), file);
    const auto checks = validate::check_time_to_train(rows, cat);
    return format == "json" ? report::time_to_train_json(checks) : report::time_to_train_text(checks);
  }
  if ((suite == "serving" || suite == "training") && !file.empty())
    throw InputError({}, "--file", "the " + suite + " suite reads its built-in set only", "--suite paths|collectives");
  if ((suite == "serving" || suite == "training") && format == "csv")
    throw InputError({}, "--format", "csv is not offered for " + suite, "table, json");
  // `all` in CSV is the two suites that have a CSV form, one table after the other, as before.
  const bool all = suite == "all";
  const std::string text = file.empty() ? std::string() : read_text_file(file, "--file");
  std::vector<std::pair<std::string, SuiteOutput>> outs;
  if (all || suite == "paths") {
    const auto rows = file.empty() ? validate::builtin_path_rows() : validate::parse_path_rows(text, file);
    const auto results = validate::predict(rows, cat);
    outs.emplace_back("paths", with_generalisation("paths", results,
                                                   format == "json"  ? report::validation_json(results)
                                                   : format == "csv" ? report::validation_csv(results)
                                                                     : report::validation_text(results),
                                                   format));
  }
  if (all || suite == "collectives") {
    const auto rows = file.empty() ? validate::builtin_collective_rows() : validate::parse_collective_rows(text, file);
    const auto checks = validate::check_collectives(rows, cat);
    outs.emplace_back("collectives", with_generalisation("collectives", checks,
                                                         format == "json"  ? report::collectives_json(checks)
                                                         : format == "csv" ? report::collectives_csv(checks)
                                                                           : report::collectives_text(checks),
                                                         format));
  }
  if ((all && format != "csv") || suite == "training") {
    const auto checks = validate::check_training(cat);
    outs.emplace_back("training", with_generalisation("training", checks,
                                                      format == "json" ? report::training_validation_json(checks)
                                                                       : report::training_validation_text(checks),
                                                      format));
  }
  if ((all && format != "csv") || suite == "serving") {
    const auto checks = validate::check_serving(cat);
    outs.emplace_back("serving", with_generalisation("serving", checks,
                                                     format == "json" ? report::serving_validation_json(checks)
                                                                      : report::serving_validation_text(checks),
                                                     format));
  }
  if (outs.size() == 1) return outs.front().second.body;
  if (format == "json") {
    nlohmann::json j;
    auto& summary = j["generalisation"] = nlohmann::json::array();
    for (const auto& [name, o] : outs) {
      j[name] = nlohmann::json::parse(o.body);
      summary.push_back({{"suite", name},
                         {"rows", o.general.rows},
                         {"mape", o.general.mape},
                         {"held_out_rows", o.general.held_out_rows},
                         {"held_out_mape", o.general.held_out_mape}});
    }
    return j.dump(2) + "\n";
  }
  std::string result;
  std::vector<validate::Generalisation> general;
  for (const auto& [name, o] : outs) {
    result += (result.empty() ? "" : "\n") + o.body;
    general.push_back(o.general);
  }
  if (format == "table") result += report::generalisation_summary_text(general);
  return result;
}

}  // namespace gf::cli
