#include "plan/recommend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "core/csv.hpp"
#include "core/error.hpp"

namespace gf::plan {
namespace {

double num(const nlohmann::json& j, const char* key, double fallback = NAN) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}
std::string str(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string money(double usd) {
  if (!std::isfinite(usd)) return "—";
  if (std::abs(usd) >= 1e9) return fmt::format("${:.2f}B", usd / 1e9);
  if (std::abs(usd) >= 1e6) return fmt::format("${:.2f}M", usd / 1e6);
  if (std::abs(usd) >= 1e3) return fmt::format("${:.1f}k", usd / 1e3);
  return fmt::format("${:.2f}", usd);
}
std::string days(double d) { return d >= 100 ? fmt::format("{:.0f} days", d) : fmt::format("{:.1f} days", d); }
std::string percent_change(double a, double b) {  // b relative to a
  const double p = 100 * (b / a - 1);
  return fmt::format("{}{:.0f}%", p >= 0 ? "+" : "", p);
}
std::string energy_text(double mwh) { return mwh >= 100 ? fmt::format("{:.0f}", mwh) : fmt::format("{:.3g}", mwh); }
std::string tokens_text(double t) {
  if (t >= 1e12) return fmt::format("{:g}T", t / 1e12);
  if (t >= 1e9) return fmt::format("{:g}B", t / 1e9);
  return fmt::format("{:g}", t);
}

struct Ranking {
  bool serving = false;
  bool by_time = false;
  [[nodiscard]] double score(const nlohmann::json& c) const {
    if (serving) return num(c, "usd_per_mtok", INFINITY);
    return by_time ? num(c, "time_days", INFINITY) : num(c, "cost_usd", INFINITY);
  }
  [[nodiscard]] double tiebreak(const nlohmann::json& c) const {
    if (serving) return num(c, "ttft_ms_p", INFINITY);
    return by_time ? num(c, "cost_usd", INFINITY) : num(c, "time_days", INFINITY);
  }
  [[nodiscard]] bool better(const nlohmann::json& a, const nlohmann::json& b) const {
    const double sa = score(a), sb = score(b);
    if (sa != sb) return sa < sb;
    const double ta = tiebreak(a), tb = tiebreak(b);
    if (ta != tb) return ta < tb;
    return str(a, "key") < str(b, "key");
  }
};

// Indices of the Pareto-optimal points (minimising both x and y).
std::vector<std::size_t> pareto(const std::vector<const nlohmann::json*>& c, const char* x, const char* y) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < c.size(); ++i)
    if (std::isfinite(num(*c[i], x)) && std::isfinite(num(*c[i], y))) idx.push_back(i);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    const double xa = num(*c[a], x), xb = num(*c[b], x);
    if (xa != xb) return xa < xb;
    return num(*c[a], y) < num(*c[b], y);
  });
  std::vector<std::size_t> out;
  double best_y = INFINITY;
  for (std::size_t i : idx) {
    const double yv = num(*c[i], y);
    if (yv < best_y) {
      out.push_back(i);
      best_y = yv;
    }
  }
  return out;
}

std::vector<std::string> training_reasons(const nlohmann::json& chosen,
                                          const std::vector<const nlohmann::json*>& feasible,
                                          const std::vector<const nlohmann::json*>& all, const Ranking& obj,
                                          const TrainingWorkload& w) {
  std::vector<std::string> r;
  const double t = num(chosen, "time_days"), cost = num(chosen, "cost_usd");
  const long gpus = chosen.value("gpus", 0L);
  // Goodput.
  r.push_back(fmt::format(
      "Interruptions: {:.1f} a day expected on {} GPUs at Llama 3's rate (419 in 54 days on 16,384 H100s); a {:.0f} GB "
      "checkpoint written in {:.0f} s every {:.0f} min (Young's interval) leaves {:.1f}% goodput, {} more than the "
      "step time alone ({}).",
      num(chosen, "interruptions_per_day"), gpus, num(chosen, "checkpoint_gb"), num(chosen, "checkpoint_write_s"),
      num(chosen, "checkpoint_interval_s") / 60, 100 * num(chosen, "goodput"), days(t - num(chosen, "time_days_ideal")),
      days(num(chosen, "time_days_ideal"))));
  // Where a step's time goes.
  if (chosen.contains("breakdown")) {
    const auto& b = chosen["breakdown"];
    std::vector<std::pair<double, std::string>> parts;
    const std::pair<const char*, const char*> names[] = {
        {"tp_s", "tensor-parallel collectives"}, {"dp_exposed_s", "exposed gradient reduction"},
        {"pp_bubble_s", "pipeline bubble"},      {"pp_p2p_s", "pipeline sends"},
        {"cp_s", "context-parallel exchange"},   {"ep_s", "expert all-to-alls"},
        {"optimizer_s", "optimizer step"}};
    for (const auto& [k, label] : names) {
      const double v = num(b, k, 0);
      if (v > 0) parts.emplace_back(v, label);
    }
    std::sort(parts.rbegin(), parts.rend());
    const double step = num(chosen, "step_s");
    std::string s = fmt::format("Per step of {:.3g} s: compute {:.3g} s ({:.0f}%)", step, num(b, "compute_s", 0),
                                100 * num(b, "compute_s", 0) / step);
    for (std::size_t i = 0; i < std::min<std::size_t>(3, parts.size()); ++i) {
      s += fmt::format(", {} {:.3g} s ({:.0f}%)", parts[i].second, parts[i].first, 100 * parts[i].first / step);
    }
    s += fmt::format("; MFU {:.1f}%", 100 * num(chosen, "mfu"));
    if (std::isfinite(num(chosen, "dp_busbw_GBps"))) {
      s += fmt::format("; the gradient all-reduce over {} GPUs runs at {:.3g} GB/s bus bandwidth (a 25 MiB bucket, {})",
                       chosen.value("dp_group_gpus", 0L), num(chosen, "dp_busbw_GBps"), str(chosen, "dp_algo"));
    }
    s += ".";
    r.push_back(s);
  }
  // The fastest (or the cheapest) other choice.
  const nlohmann::json* fastest = nullptr;
  const nlohmann::json* cheapest = nullptr;
  for (const auto* c : feasible) {
    if (!fastest || num(*c, "time_days") < num(*fastest, "time_days")) fastest = c;
    if (!cheapest || num(*c, "cost_usd") < num(*cheapest, "cost_usd")) cheapest = c;
  }
  const nlohmann::json* other = obj.by_time ? cheapest : fastest;
  if (other && str(*other, "key") != str(chosen, "key")) {
    r.push_back(fmt::format("The {} feasible design, {} ({}), takes {} ({}) for {} ({}).",
                            obj.by_time ? "cheapest" : "fastest", str(*other, "design"), str(*other, "layout"),
                            days(num(*other, "time_days")), percent_change(t, num(*other, "time_days")),
                            money(num(*other, "cost_usd")), percent_change(cost, num(*other, "cost_usd"))));
  }
  // The best of each other GPU, intra-node fabric and network, at any size (each alternative
  // once), the six that come closest to the choice.
  std::set<std::string> told{str(chosen, "key")};
  if (other) told.insert(str(*other, "key"));
  const std::pair<const char*, const char*> axes[] = {
      {"gpu", "GPU"}, {"intra_node", "intra-node fabric"}, {"network", "network"}};
  std::vector<std::pair<const nlohmann::json*, std::string>> alternatives;
  for (const auto& [axis, axis_label] : axes) {
    std::map<std::string, const nlohmann::json*> best;
    for (const auto* c : all) {
      if (!c->contains("time_days")) continue;
      auto& b = best[str(*c, axis)];
      const bool cf = c->value("feasible", false);
      if (!b || (cf && !b->value("feasible", false)) || (cf == b->value("feasible", false) && obj.better(*c, *b))) {
        b = c;
      }
    }
    if (best.size() < 2) continue;
    for (const auto& [v, c] : best) {
      if (v == str(chosen, axis) || told.count(str(*c, "key"))) continue;
      told.insert(str(*c, "key"));
      alternatives.emplace_back(c, fmt::format("{} {}", axis_label, v));
    }
  }
  std::stable_sort(alternatives.begin(), alternatives.end(), [&](const auto& a, const auto& b) {
    const bool fa = a.first->value("feasible", false), fb = b.first->value("feasible", false);
    return fa != fb ? fa : obj.better(*a.first, *b.first);
  });
  constexpr std::size_t kAlternatives = 6;
  for (std::size_t i = 0; i < std::min(kAlternatives, alternatives.size()); ++i) {
    const auto* c = alternatives[i].first;
    std::string s =
        fmt::format("Best with {}: {} ({}) takes {} ({}) for {} ({})", alternatives[i].second, str(*c, "design"),
                    str(*c, "layout"), days(num(*c, "time_days")), percent_change(t, num(*c, "time_days")),
                    money(num(*c, "cost_usd")), percent_change(cost, num(*c, "cost_usd")));
    if (c->contains("breakdown")) {
      const double step = num(*c, "step_s");
      const auto& cb = (*c)["breakdown"];
      const double comm = num(cb, "dp_exposed_s", 0) + num(cb, "tp_s", 0) + num(cb, "pp_p2p_s", 0) +
                          num(cb, "cp_s", 0) + num(cb, "ep_s", 0);
      s += fmt::format("; communication {:.0f}% of its step (MFU {:.0f}%)", 100 * comm / step, 100 * num(*c, "mfu"));
      if (std::isfinite(num(*c, "dp_busbw_GBps"))) {
        s += fmt::format(", gradient all-reduce at {:.3g} GB/s bus bandwidth", num(*c, "dp_busbw_GBps"));
      }
    }
    if (!c->value("feasible", false) && !str(*c, "why_not").empty()) s += "; excluded: " + str(*c, "why_not");
    r.push_back(s + ".");
  }
  if (alternatives.size() > kAlternatives) {
    r.push_back(fmt::format("{} more alternatives on other GPUs, fabrics and networks are in the table.",
                            alternatives.size() - kAlternatives));
  }
  // The servers the team owns, alone: the status quo the recommendation is measured against.
  {
    const nlohmann::json* own = nullptr;
    for (const auto* c : all) {
      if (c->value("owned_nodes", 0L) == 0 || c->value("owned_nodes", 0L) != c->value("nodes", -1L) ||
          !c->contains("time_days")) {
        continue;
      }
      if (!own || obj.better(*c, *own)) own = c;
    }
    if (own && str(*own, "key") != str(chosen, "key")) {
      std::string s = fmt::format(
          "The servers already owned, alone ({}, {}), take {} ({}) for {} in energy and checkpoint "
          "storage",
          str(*own, "design"), str(*own, "layout"), days(num(*own, "time_days")),
          percent_change(t, num(*own, "time_days")), money(num(*own, "cost_usd")));
      if (!own->value("feasible", false)) s += "; excluded: " + str(*own, "why_not");
      r.push_back(s + ".");
    }
  }
  // Scale-up against scale-out: the same GPU model and count in fewer, bigger servers against
  // more, smaller ones (the chosen GPU first, else any GPU the plan has both for).
  const nlohmann::json* up = nullptr;
  const nlohmann::json* out_ = nullptr;
  for (int pass = 0; pass < 2 && !up; ++pass) {
    for (const auto* a : all) {
      if (!a->contains("time_days") || (pass == 0 && str(*a, "gpu") != str(chosen, "gpu"))) continue;
      for (const auto* b : all) {
        if (!b->contains("time_days") || str(*b, "gpu") != str(*a, "gpu") ||
            b->value("gpus", 0L) != a->value("gpus", 0L) ||
            b->value("gpus_per_node", 0L) >= a->value("gpus_per_node", 0L)) {
          continue;
        }
        if (!up || a->value("gpus", 0L) == gpus || (obj.better(*a, *up) && up->value("gpus", 0L) != gpus)) {
          up = a;
          out_ = b;
        }
      }
    }
  }
  if (up) {
    const double tu = num(*up, "time_days"), cu = num(*up, "cost_usd");
    auto servers = [](long n) { return fmt::format("{} server{}", n, n == 1 ? "" : "s"); };
    r.push_back(fmt::format(
        "Scale-up against scale-out, {} {} GPUs: {} of {} ({}) take {} for {}; {} of {} ({}) take {} ({}) for {} "
        "({}).",
        up->value("gpus", 0L), str(*up, "gpu"), servers(up->value("nodes", 0L)), up->value("gpus_per_node", 0L),
        str(*up, "intra_node"), days(tu), money(cu), servers(out_->value("nodes", 0L)),
        out_->value("gpus_per_node", 0L), str(*out_, "intra_node"), days(num(*out_, "time_days")),
        percent_change(tu, num(*out_, "time_days")), money(num(*out_, "cost_usd")),
        percent_change(cu, num(*out_, "cost_usd"))));
  } else {
    r.push_back(
        "Scale-up against scale-out: the design space holds no two server sizes with the same GPU model and "
        "count (add a node type with fewer GPUs per server to compare).");
  }
  // Scaling out the chosen design.
  {
    const nlohmann::json* twice = nullptr;
    for (const auto* c : feasible) {
      if (str(*c, "design_key") == str(chosen, "design_key") && c->value("gpus", 0L) == 2 * gpus) twice = c;
    }
    if (twice) {
      r.push_back(
          fmt::format("Scaling out to {} GPUs on the same design takes {} ({}) for {} ({}): {:.0f}% scaling "
                      "efficiency.",
                      2 * gpus, days(num(*twice, "time_days")), percent_change(t, num(*twice, "time_days")),
                      money(num(*twice, "cost_usd")), percent_change(cost, num(*twice, "cost_usd")),
                      100 * num(chosen, "time_days_ideal") / (2 * num(*twice, "time_days_ideal"))));
    }
  }
  // The cost of inefficiency (the brief's case 5).
  const double mfu = num(chosen, "mfu");
  if (mfu > 0.12) {
    const double stretch = mfu / (mfu - 0.10);
    r.push_back(fmt::format(
        "A 10-point efficiency loss (MFU {:.0f}% to {:.0f}%) on this cluster would add {} and {} "
        "over the run of {} tokens.",
        100 * mfu, 100 * mfu - 10, days(t * (stretch - 1)), money(cost * (stretch - 1)), tokens_text(w.tokens)));
  }
  return r;
}

std::vector<std::string> serving_reasons(const nlohmann::json& chosen,
                                         const std::vector<const nlohmann::json*>& feasible, const Ranking& obj,
                                         const ServingWorkload& w) {
  std::vector<std::string> r;
  const long replicas = chosen.value("replicas", 0L), avg = chosen.value("replicas_at_average", 0L);
  if (w.peak_factor > 1) {
    r.push_back(fmt::format(
        "At the average {:.4g} req/s {} replica{} of {} suffice; the {:g}x peak ({:.4g} req/s) "
        "needs {}: scaling out {:.1f}x carries it, {} GPUs in all.",
        w.rate, avg, avg == 1 ? "" : "s", str(chosen, "replica_layout"), w.peak_factor, w.rate * w.peak_factor,
        replicas, static_cast<double>(replicas) / static_cast<double>(std::max(1L, avg)), chosen.value("gpus", 0L)));
  }
  r.push_back(
      fmt::format("One replica serves {:.3g} req/s within the goals; the fleet's p90 TTFT is {:.0f} ms and p90 "
                  "TPOT {:.1f} ms at the peak.",
                  num(chosen, "replica_rate"), num(chosen, "ttft_ms_p"), num(chosen, "tpot_ms_p")));
  std::map<std::string, const nlohmann::json*> best;
  for (const auto* c : feasible) {
    auto& b = best[str(*c, "gpu") + " " + str(*c, "intra_node")];
    if (!b || obj.better(*c, *b)) b = c;
  }
  for (const auto& [k, c] : best) {
    if (str(*c, "key") == str(chosen, "key")) continue;
    r.push_back(fmt::format("Best on {}: {} ({}) at ${:.3g} per million output tokens ({}), {} GPUs.", k,
                            str(*c, "design"), str(*c, "layout"), num(*c, "usd_per_mtok"),
                            percent_change(num(chosen, "usd_per_mtok"), num(*c, "usd_per_mtok")),
                            c->value("gpus", 0L)));
  }
  return r;
}

[[noreturn]] void no_feasible(const PlanSpec& plan, const std::string& workload,
                              const std::vector<const nlohmann::json*>& all, const Ranking& obj) {
  std::map<std::string, long> by_limit;
  const nlohmann::json* closest = nullptr;
  long other = 0;
  for (const auto* c : all) {
    const auto v = c->find("limit_violations");
    if (v == c->end() || v->empty()) {
      ++other;
      continue;
    }
    for (const auto& s : *v) by_limit[s.get<std::string>().substr(0, s.get<std::string>().find(':'))]++;
    // The closest: the smallest overshoot of its worst limit (then the objective).
    const double excess = num(*c, "limit_excess", INFINITY);
    if (!closest || excess < num(*closest, "limit_excess", INFINITY) ||
        (excess == num(*closest, "limit_excess", INFINITY) && obj.better(*c, *closest))) {
      closest = c;
    }
  }
  std::string problem = fmt::format("no candidate for workload '{}' is feasible", workload);
  if (!by_limit.empty()) {
    const auto worst = std::max_element(by_limit.begin(), by_limit.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
    problem += fmt::format(": limits.{} excludes {} of {} candidates", worst->first, worst->second, all.size());
    if (closest) {
      problem += fmt::format("; the closest is {} ({}): {}", str(*closest, "design"), str(*closest, "layout"),
                             str(*closest, "why_not"));
    }
    throw InputError(plan.limits.where.file.empty() ? SourceLocation{plan.file, 0, 0} : plan.limits.where, "limits",
                     problem, "looser limits, or a design space with larger or faster clusters");
  }
  std::string why;
  for (const auto* c : all) {
    if (!str(*c, "why_not").empty()) {
      why = str(*c, "design") + ": " + str(*c, "why_not");
      break;
    }
  }
  problem += fmt::format(" ({} candidates; e.g. {})", all.size(), why.empty() ? "none evaluated" : why);
  throw InputError(plan.design.where.file.empty() ? SourceLocation{plan.file, 0, 0} : plan.design.where, "design",
                   problem, "more GPUs or GPUs with more memory, more node counts, or a smaller model");
}

// The words that mark an answer from an incomplete search, wherever it is printed: "2 of 40
// candidates missing (1 of them a stored row that failed its checksum ...)".
std::string missing_text(const SearchState& state) {
  std::string s = fmt::format("{} of {} candidates missing", state.missing, state.units);
  if (state.rejected > 0) {
    const bool one = state.rejected == 1;
    s += fmt::format(" ({} of them {} that failed {} checksum: edited after {} written)", state.rejected,
                     one ? "a stored row" : "stored rows", one ? "its" : "their", one ? "it was" : "they were");
  }
  return s;
}

nlohmann::json search_json(const SearchState& state, std::size_t candidates) {
  const std::size_t units = state.units > 0 ? state.units : candidates;
  nlohmann::json j{{"complete", state.missing == 0},
                   {"candidates_expected", units},
                   {"candidates_missing", state.missing},
                   {"rows_failed_checksum", state.rejected},
                   {"rows_replaced", state.replaced}};
  if (state.missing > 0) {
    j["note"] = "The search is incomplete: " + missing_text(state) +
                ". The recommendation is provisional: run the plan again with the same --db to finish the search "
                "(it resumes).";
  }
  return j;
}

nlohmann::json analyse_complete(const PlanSpec& plan, const std::vector<nlohmann::json>& candidates,
                                const std::vector<std::string>& skipped, std::size_t designs,
                                const std::string& model_version, const SearchState& state);

}  // namespace

nlohmann::json analyse(const PlanSpec& plan, const std::vector<nlohmann::json>& candidates,
                       const std::vector<std::string>& skipped, std::size_t designs, const std::string& model_version,
                       const SearchState& state) {
  try {
    return analyse_complete(plan, candidates, skipped, designs, model_version, state);
  } catch (const InputError& e) {
    // "No feasible candidate" from part of the search is not the search's answer.
    if (state.missing == 0) throw;
    throw InputError(e.where(), e.field(),
                     e.problem() + "; but the search is incomplete (" + missing_text(state) +
                         "), so this is not final: run the plan again with the same --db to finish the search",
                     e.valid());
  }
}

namespace {

nlohmann::json analyse_complete(const PlanSpec& plan, const std::vector<nlohmann::json>& candidates,
                                const std::vector<std::string>& skipped, std::size_t designs,
                                const std::string& model_version, const SearchState& state) {
  const bool provisional = state.missing > 0;
  const std::string mark = provisional ? "PROVISIONAL (search incomplete: " + missing_text(state) + "): " : "";
  nlohmann::json out;
  out["plan"] = {{"name", plan.name},
                 {"file", plan.file},
                 {"hash", fnv1a_hex(plan.text)},
                 {"objective", name_of(kObjectiveNames, plan.objective)},
                 {"description", plan.description},
                 {"notes", skipped}};
  out["model_version"] = model_version;
  long layouts = 0, pruned = 0, excluded = 0, infeasible = 0;
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    nlohmann::json c = candidates[i];
    if (c.is_null()) continue;
    c["id"] = fmt::format("c{}", i);
    c["pareto"] = false;
    c["chosen"] = false;
    layouts += c.value("layouts_evaluated", 0L);
    pruned += c.value("pruned_memory", 0L);
    if (!c.value("feasible", false)) {
      const auto v = c.find("limit_violations");
      if (v != c.end() && !v->empty()) {
        ++excluded;
      } else {
        ++infeasible;
      }
    }
    list.push_back(std::move(c));
  }
  out["counts"] = {{"designs", designs},      {"candidates", list.size()},      {"layouts_evaluated", layouts},
                   {"pruned_memory", pruned}, {"excluded_by_limits", excluded}, {"infeasible", infeasible}};
  nlohmann::json workloads = nlohmann::json::array();
  nlohmann::json scaling = nlohmann::json::array();
  nlohmann::json top;
  std::vector<std::string> all_reasons;
  auto handle = [&](const std::string& name, bool serving, const std::string& summary, const auto& reasons_of) {
    const Ranking obj{serving, plan.objective == Objective::time};
    std::vector<const nlohmann::json*> all, feasible;
    std::vector<std::size_t> feasible_index;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (str(list[i], "workload") != name) continue;
      all.push_back(&list[i]);
      if (list[i].value("feasible", false)) {
        feasible.push_back(&list[i]);
        feasible_index.push_back(i);
      }
    }
    if (feasible.empty()) no_feasible(plan, name, all, obj);
    std::size_t best = 0;
    for (std::size_t k = 1; k < feasible.size(); ++k)
      if (obj.better(*feasible[k], *feasible[best])) best = k;
    const char* x = serving ? "usd_per_mtok" : "cost_usd";
    const char* y = serving ? "ttft_ms_p" : "time_days";
    for (std::size_t k : pareto(feasible, x, y)) list[feasible_index[k]]["pareto"] = true;
    // With power as a third objective: no other candidate is at least as good on all three and
    // better on one (a design that draws less power for a little more time or money stays).
    for (std::size_t a = 0; a < feasible.size(); ++a) {
      const double xa = num(*feasible[a], x), ya = num(*feasible[a], y), pa = num(*feasible[a], "power_kw_max");
      bool dominated = false;
      for (std::size_t b = 0; b < feasible.size() && !dominated; ++b) {
        const double xb = num(*feasible[b], x), yb = num(*feasible[b], y), pb = num(*feasible[b], "power_kw_max");
        dominated = b != a && xb <= xa && yb <= ya && pb <= pa && (xb < xa || yb < ya || pb < pa);
      }
      list[feasible_index[a]]["pareto_power"] = !dominated;
    }
    nlohmann::json& chosen = list[feasible_index[best]];
    chosen["chosen"] = true;
    const auto reasons = reasons_of(chosen, feasible, all, obj);
    std::string headline;
    if (serving) {
      headline = fmt::format(
          "{}: {} on {} serves the {:.4g} req/s peak (up to {:.4g}) at ${:.3g} per million output tokens ({} GPUs, "
          "{} capital).",
          name, str(chosen, "layout"), str(chosen, "design"), num(chosen, "peak_rate"), num(chosen, "capacity_rate"),
          num(chosen, "usd_per_mtok"), chosen.value("gpus", 0L), money(num(chosen, "capex_usd")));
    } else {
      headline = fmt::format("{}: {} with {} trains in {}{} for {} ({} GPUs; {} capital, {} MWh).", name,
                             str(chosen, "design"), str(chosen, "layout"), days(num(chosen, "time_days")),
                             chosen.contains("time_days_band") ? " " + str(chosen["time_days_band"], "text") : "",
                             money(num(chosen, "cost_usd")), chosen.value("gpus", 0L), money(num(chosen, "capex_usd")),
                             energy_text(num(chosen, "energy_mwh")));
    }
    nlohmann::json wj{{"name", name},
                      {"kind", serving ? "serving" : "training"},
                      {"summary", summary},
                      {"axes", serving ? nlohmann::json{{"x", "usd_per_mtok"},
                                                        {"x_label", "USD per million output tokens"},
                                                        {"y", "ttft_ms_p"},
                                                        {"y_label", "p90 time to first token at the peak (ms)"}}
                                       : nlohmann::json{{"x", "cost_usd"},
                                                        {"x_label", "Cost to train (USD)"},
                                                        {"y", "time_days"},
                                                        {"y_label", "Time to train (days)"}}},
                      {"recommendation",
                       {{"candidate", chosen["id"]},
                        {"headline", mark + headline},
                        {"provisional", provisional},
                        {"reasons", reasons}}}};
    workloads.push_back(wj);
    if (top.is_null()) {
      top = {{"candidate", chosen["id"]}, {"headline", mark + headline}, {"provisional", provisional}};
    } else {
      top["headline"] = top["headline"].get<std::string>() + " " + headline;
    }
    for (const auto& s : reasons) all_reasons.push_back(s);
    if (!serving) {
      // Scaling: per design, tokens per second per GPU against its smallest size.
      std::map<std::string, std::vector<const nlohmann::json*>> series;
      for (const auto* c : all)
        if (c->contains("tokens_per_s")) series[str(*c, "design_key")].push_back(c);
      for (auto& [key, points] : series) {
        if (points.size() < 2) continue;
        std::sort(points.begin(), points.end(),
                  [](const auto* a, const auto* b) { return a->value("gpus", 0L) < b->value("gpus", 0L); });
        const double base =
            num(*points.front(), "tokens_per_s") / static_cast<double>(points.front()->value("gpus", 1L));
        nlohmann::json pts = nlohmann::json::array();
        for (const auto* p : points) {
          pts.push_back({{"gpus", p->value("gpus", 0L)},
                         {"efficiency", num(*p, "tokens_per_s") / static_cast<double>(p->value("gpus", 1L)) / base}});
        }
        std::string label = str(*points.front(), "design");
        label = label.substr(label.find(" x ") == std::string::npos ? 0 : label.find(" x ") + 3);
        scaling.push_back({{"series", name + ": " + label}, {"points", pts}});
      }
    }
  };
  for (const auto& w : plan.training) {
    handle(w.name, false,
           fmt::format("{}: {} tokens, global batch {} x {} tokens, {}", w.model_name, tokens_text(w.tokens),
                       w.global_batch, w.model.seq, work::to_string(w.precision)),
           [&](const nlohmann::json& c, const auto& f, const auto& a, const Ranking& o) {
             return training_reasons(c, f, a, o, w);
           });
  }
  for (const auto& w : plan.serving) {
    handle(w.name, true,
           fmt::format("{}: {:g} req/s (peak x{:g}), {} in / {} out tokens, TTFT {:.0f} ms / TPOT {:.0f} ms at p{:g}",
                       w.model_name, w.rate, w.peak_factor, w.isl, w.osl, 1e3 * w.slo.ttft_s, 1e3 * w.slo.tpot_s,
                       w.slo.percentile),
           [&](const nlohmann::json& c, const auto& f, const auto&, const Ranking& o) {
             return serving_reasons(c, f, o, w);
           });
  }
  // Several workloads: the limits hold for the cluster as a whole, so the chosen designs are
  // added up and checked together (each workload was planned on its own).
  if (workloads.size() > 1) {
    double capex = 0, power = 0;
    long gpus = 0, racks = 0;
    for (const auto& c : list) {
      if (!c.value("chosen", false)) continue;
      capex += num(c, "capex_usd", 0);
      power += num(c, "power_kw_max", 0);
      gpus += c.value("gpus", 0L);
      racks += c.value("racks", 0L);
    }
    std::string s = fmt::format(
        "Together the {} workloads' choices need {} GPUs, {} capital, {:.0f} kW at full load "
        "and {} racks",
        workloads.size(), gpus, money(capex), power, racks);
    std::vector<std::string> over;
    const auto& l = plan.limits;
    if (l.max_gpus > 0 && gpus > l.max_gpus) over.push_back(fmt::format("max_gpus {}", l.max_gpus));
    if (l.budget_usd > 0 && l.budget == BudgetKind::capex && capex > l.budget_usd)
      over.push_back("budget " + money(l.budget_usd));
    if (l.power_kw > 0 && power > l.power_kw) over.push_back(fmt::format("power {:.0f} kW", l.power_kw));
    if (l.racks > 0 && racks > l.racks) over.push_back(fmt::format("racks {}", l.racks));
    s += over.empty() ? ", within the plan's limits." : "; warning: over the plan's " + join(over) + " taken together.";
    all_reasons.push_back(s);
  }
  top["reasons"] = all_reasons;
  out["recommendation"] = top;
  out["workloads"] = workloads;
  out["scaling"] = scaling;
  // The chosen cluster of the first workload, for the drawing.
  for (const auto& c : list) {
    if (!c.value("chosen", false)) continue;
    out["topology"] = {{"label", str(c, "design")},
                       {"nodes", c.value("nodes", 1L)},
                       {"gpus_per_node", c.value("gpus_per_node", 0L)},
                       {"intra_node", str(c, "intra_node")},
                       {"nics_per_node", c.value("nics_per_node", 0L)},
                       {"network", str(c, "network")},
                       {"fabric", str(c, "fabric")},
                       {"tiers", c.value("tiers", 0L)},
                       {"leaf_switches", c.value("leaf_switches", 0L)},
                       {"spine_switches", c.value("spine_switches", 0L)},
                       {"oversubscription", num(c, "oversubscription", 1)}};
    break;
  }
  out["candidates"] = std::move(list);
  out["search"] = search_json(state, out["candidates"].size());
  return out;
}

std::string rows_replaced_text(long n) {
  return fmt::format("{} stored candidate{} failed {} checksum (edited after written): evaluated again and replaced", n,
                     n == 1 ? "" : "s", n == 1 ? "its" : "their");
}

// What the text's header says beside the table, for the CSV's comment lines: an incomplete
// search and replaced rows are warnings, the designs the plan skipped are notes.
Messages plan_messages(const nlohmann::json& a) {
  Messages m;
  const auto search = a.find("search");
  if (search != a.end() && !search->value("complete", true)) m.add_warning("INCOMPLETE: " + str(*search, "note"));
  if (search != a.end() && search->value("rows_replaced", 0L) > 0)
    m.add_warning(rows_replaced_text(search->value("rows_replaced", 0L)));
  for (const auto& note : a["plan"].value("notes", std::vector<std::string>{})) m.notes.push_back("skipped " + note);
  return m;
}

}  // namespace

std::string plan_text(const nlohmann::json& a, std::size_t rows) {
  std::string out;
  const auto& p = a["plan"];
  out += fmt::format("# plan {} ({}), hash {}, {}\n", str(p, "name"), str(p, "file"), str(p, "hash"),
                     str(a, "model_version"));
  const auto& n = a["counts"];
  out += fmt::format(
      "# {} designs, {} candidates, {} layouts evaluated ({} pruned for memory), {} excluded by limits, "
      "{} infeasible\n",
      n.value("designs", 0L), n.value("candidates", 0L), n.value("layouts_evaluated", 0L), n.value("pruned_memory", 0L),
      n.value("excluded_by_limits", 0L), n.value("infeasible", 0L));
  for (const auto& note : p.value("notes", std::vector<std::string>{})) out += "#   skipped " + note + "\n";
  const auto search = a.find("search");
  const bool incomplete = search != a.end() && !search->value("complete", true);
  if (incomplete) out += "# INCOMPLETE: " + str(*search, "note") + "\n";
  if (search != a.end() && search->value("rows_replaced", 0L) > 0)
    out += "# " + rows_replaced_text(search->value("rows_replaced", 0L)) + "\n";
  for (const auto& w : a["workloads"]) {
    const bool serving = str(w, "kind") == "serving";
    out += fmt::format("\n== {} ({}) — {}\n", str(w, "name"), str(w, "kind"), str(w, "summary"));
    const auto& rec = w["recommendation"];
    out += "Recommendation: " + str(rec, "headline") + "\n";
    for (const auto& r : rec["reasons"]) out += "  - " + r.get<std::string>() + "\n";
    std::vector<const nlohmann::json*> ranked;
    for (const auto& c : a["candidates"])
      if (str(c, "workload") == str(w, "name") && c.value("feasible", false)) ranked.push_back(&c);
    const Ranking obj{serving, str(p, "objective") == "time"};
    std::sort(ranked.begin(), ranked.end(), [&](const auto* x, const auto* y) { return obj.better(*x, *y); });
    // The layout column as wide as its longest entry, so the numbers line up.
    std::size_t layout_width = 6;
    for (std::size_t i = 0; i < std::min(rows, ranked.size()); ++i)
      layout_width = std::max(layout_width, str(*ranked[i], "layout").size());
    out += fmt::format("\n{:>4}  {:<52} {:<{}} {:>6} ", "rank", "design", "layout", layout_width, "GPUs");
    out += serving ? fmt::format("{:>10} {:>9} {:>11} {:>8}\n", "$/Mtok", "TTFT p90", "capital", "kW")
                   : fmt::format("{:>9} {:<20} {:>10} {:>11} {:>6} {:>8}  {}\n", "days", "band (rows)", "cost",
                                 "capital", "MFU", "goodput", "pareto");
    for (std::size_t i = 0; i < std::min(rows, ranked.size()); ++i) {
      const auto& c = *ranked[i];
      std::string design = str(c, "design");
      if (design.size() > 52) design = design.substr(0, 49) + "...";
      out += fmt::format("{:>4}  {:<52} {:<{}} {:>6} ", i + 1, design, str(c, "layout"), layout_width,
                         c.value("gpus", 0L));
      if (serving) {
        out += fmt::format("{:>10.3g} {:>9.0f} {:>11} {:>8.0f}\n", num(c, "usd_per_mtok"), num(c, "ttft_ms_p"),
                           money(num(c, "capex_usd")), num(c, "power_kw"));
      } else {
        out += fmt::format("{:>9.1f} {:<20} {:>10} {:>11} {:>5.1f}% {:>7.1f}%  {}\n", num(c, "time_days"),
                           c.contains("time_days_band") ? str(c["time_days_band"], "short") : "-",
                           money(num(c, "cost_usd")), money(num(c, "capex_usd")), 100 * num(c, "mfu"),
                           100 * num(c, "goodput"), c.value("pareto", false) ? "*" : "");
      }
    }
    if (ranked.size() > rows)
      out += fmt::format("  ... {} more feasible candidates (--format csv lists all)\n", ranked.size() - rows);
  }
  // Said again at the end, where a reader of a long table (or of its tail) looks last.
  if (incomplete) out += "\nINCOMPLETE: " + str(*search, "note") + "\n";
  return out;
}

std::string plan_csv(const nlohmann::json& a) {
  const char* cols[] = {"id",
                        "workload",
                        "design",
                        "layout",
                        "gpus",
                        "nodes",
                        "gpu",
                        "gpus_per_node",
                        "intra_node",
                        "network",
                        "fabric",
                        "oversubscription",
                        "feasible",
                        "why_not",
                        "pareto",
                        "pareto_power",
                        "chosen",
                        "time_days",
                        "time_days_ideal",
                        "goodput",
                        "step_s",
                        "mfu",
                        "cost_usd",
                        "capex_usd",
                        "energy_mwh",
                        "power_kw",
                        "usd_per_mtok",
                        "ttft_ms_p",
                        "replicas"};
  std::string out = csv_comment_lines(plan_messages(a));
  for (std::size_t i = 0; i < std::size(cols); ++i) {
    if (i) out += ',';
    out += cols[i];
  }
  out += "\n";
  // From an incomplete search the choice is not final: its `chosen` cell says "provisional".
  const auto search = a.find("search");
  const bool incomplete = search != a.end() && !search->value("complete", true);
  for (const auto& c : a["candidates"]) {
    for (std::size_t i = 0; i < std::size(cols); ++i) {
      if (i) out += ",";
      const auto it = c.find(cols[i]);
      if (it == c.end() || it->is_null()) continue;
      if (incomplete && std::string_view(cols[i]) == "chosen" && it->is_boolean() && it->get<bool>()) {
        out += "provisional";
      } else if (it->is_string()) {
        out += csv_field(it->get<std::string>());
      } else if (it->is_boolean()) {
        out += it->get<bool>() ? "true" : "false";
      } else if (it->is_number_integer()) {
        out += std::to_string(it->get<long>());
      } else if (it->is_number()) {
        out += fmt::format("{:.6g}", it->get<double>());
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace gf::plan
