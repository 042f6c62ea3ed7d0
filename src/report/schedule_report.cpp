#include "report/schedule_report.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "report/html_escape.hpp"
#include "report/table.hpp"
#include "sched/csv_table.hpp"

namespace gf::report {

namespace {

std::string grouped(long v) {
  std::string s = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string dur(double s, long count) { return count == 0 ? "-" : s == 0 ? "0 s" : human_duration(s); }

std::string header(const ScheduleInput& in) {
  std::string out =
      fmt::format("# gpufabric schedule: {} ({}, {} jobs) on {}\n", in.trace, in.format, grouped(in.jobs), in.cluster);
  if (in.offered_load > 0)
    out += fmt::format(
        "#   offered load {:.1f}% of the GPUs (GPU-seconds its jobs run between the first and last arrival, over the "
        "GPUs x that span){}\n",
        100 * in.offered_load, in.time_scale != 1 ? fmt::format(", arrivals compressed {:g}x", in.time_scale) : "");
  for (const auto& n : in.notes) out += "#   note: " + n + "\n";
  if (!in.skipped.empty()) {
    out += fmt::format("#   warning: {} bad rows skipped (--skip-bad):\n", in.skipped.size());
    for (std::size_t i = 0; i < in.skipped.size() && i < 10; ++i) out += "#     " + in.skipped[i] + "\n";
    if (in.skipped.size() > 10) out += fmt::format("#     ... and {} more\n", in.skipped.size() - 10);
  }
  return out;
}

nlohmann::json dist(const sched::Distribution& d) {
  return {{"mean", d.mean}, {"median", d.median}, {"p99", d.p99}, {"max", d.max}, {"count", d.count}};
}

nlohmann::json input_json(const ScheduleInput& in) {
  return {{"trace", in.trace},
          {"format", in.format},
          {"jobs", in.jobs},
          {"cluster", in.cluster},
          {"gpus", in.gpus},
          {"offered_load", in.offered_load},
          {"time_scale", in.time_scale},
          {"skipped_rows", in.skipped},
          {"notes", in.notes}};
}

}  // namespace

std::string describe_nodes(const std::vector<sched::Node>& nodes) {
  std::map<std::string, long> by_model;
  long gpus = 0;
  for (const auto& n : nodes) {
    gpus += static_cast<long>(n.gpus.size());
    if (!n.gpus.empty()) by_model[n.model] += static_cast<long>(n.gpus.size());
  }
  std::string models;
  for (const auto& [m, g] : by_model) models += fmt::format("{}{} {}", models.empty() ? "" : ", ", m, grouped(g));
  return fmt::format("{} nodes, {} GPUs ({})", grouped(static_cast<long>(nodes.size())), grouped(gpus), models);
}

std::string schedule_text(const ScheduleInput& in, const std::vector<sched::ScheduleResult>& results,
                          const std::vector<sched::Job>& jobs) {
  std::string out = header(in);
  TextTable t({"policy", "alloc%", "in use", "frag GPUs", "stranded", "JCT mean", "JCT p50", "JCT p99", "queue mean",
               "queue p50", "queue p99", "done", "cancel", "unsched", "preempt", "slowdown p99"},
              {TextTable::Align::left});
  for (const auto& r : results) {
    const auto& m = r.metrics;
    t.add_row({r.policy, fixed(100 * m.allocation, 1), fixed(m.gpus_in_use, 0), fixed(m.fragmented_gpus, 1),
               fixed(m.stranded_gpus, 1), dur(m.jct_s.mean, m.jct_s.count), dur(m.jct_s.median, m.jct_s.count),
               dur(m.jct_s.p99, m.jct_s.count), dur(m.queue_s.mean, m.queue_s.count),
               dur(m.queue_s.median, m.queue_s.count), dur(m.queue_s.p99, m.queue_s.count), grouped(m.completed),
               grouped(m.cancelled), grouped(m.unschedulable), grouped(m.preemptions),
               m.slowdown.count > 0 ? fixed(m.slowdown.p99, 2) + "x" : "-"});
  }
  out += t.render();
  out +=
      "#   alloc%: time-averaged share of the GPUs allocated; in use: GPUs with anything on them; frag GPUs: FGD's\n"
      "#   expected fragmentation under the trace's task mix; stranded: free GPUs while a job that would fit by count\n"
      "#   waits; JCT = end - submit of completed jobs; queue = first start - submit; slowdown: run time over the\n"
      "#   job's duration at its best placement (placement, shared links, preemption restarts)\n";
  // MIG requests that a reconfiguration would have placed sooner.
  for (const auto& r : results)
    if (r.metrics.mig_recut > 0) {
      std::size_t first = 0;
      while (first < r.jobs.size() && r.jobs[first].reconfigure.empty()) ++first;
      out += fmt::format("# {}: {} MIG requests waited that re-cutting a GPU would have placed (e.g. {}: {})\n",
                         r.policy, r.metrics.mig_recut, printable(jobs[first].name), r.jobs[first].reconfigure);
    }
  // Jobs no node could ever run: named, with the reason (the first few).
  if (!results.empty()) {
    long shown = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const auto& o = results.front().jobs[i];
      if (o.state != sched::JobState::unschedulable) continue;
      if (shown == 0) out += "# unschedulable (no node could ever run them; not queued):\n";
      if (shown < 10) out += fmt::format("#   {} (line {}): {}\n", printable(jobs[i].name), jobs[i].line, o.why);
      ++shown;
    }
    if (shown > 10) out += fmt::format("#   ... and {} more\n", shown - 10);
  }
  return out;
}

nlohmann::json schedule_json(const ScheduleInput& in, const std::vector<sched::ScheduleResult>& results,
                             const std::vector<sched::Job>& jobs) {
  nlohmann::json j;
  j["input"] = input_json(in);
  j["policies"] = nlohmann::json::array();
  for (const auto& r : results) {
    const auto& m = r.metrics;
    nlohmann::json p{{"policy", r.policy},
                     {"allocation", m.allocation},
                     {"gpus_in_use", m.gpus_in_use},
                     {"fragmented_gpus", m.fragmented_gpus},
                     {"stranded_gpus", m.stranded_gpus},
                     {"jct_s", dist(m.jct_s)},
                     {"queue_s", dist(m.queue_s)},
                     {"slowdown", dist(m.slowdown)},
                     {"jobs", m.jobs},
                     {"completed", m.completed},
                     {"cancelled", m.cancelled},
                     {"never_started", m.never_started},
                     {"unschedulable", m.unschedulable},
                     {"preemptions", m.preemptions},
                     {"mig_requests_a_recut_would_place", m.mig_recut},
                     {"makespan_s", m.makespan_s}};
    nlohmann::json unsched = nlohmann::json::array();
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (r.jobs[i].state == sched::JobState::unschedulable)
        unsched.push_back({{"job", jobs[i].name}, {"line", jobs[i].line}, {"why", r.jobs[i].why}});
    p["unschedulable_jobs"] = unsched;
    j["policies"].push_back(p);
  }
  return j;
}

std::string schedule_csv(const std::vector<sched::ScheduleResult>& results, const std::vector<sched::Job>& jobs) {
  std::string out = "job,policy,state,submit_s,start_s,end_s,queue_s,jct_s,ran_s,slowdown,preemptions,nodes\n";
  for (const auto& r : results)
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const auto& o = r.jobs[i];
      std::string nodes;
      for (const auto& p : o.placement) {
        if (!nodes.empty()) nodes += ' ';
        nodes += std::to_string(p.node);
      }
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{}\n", printable(jobs[i].name), r.policy, sched::to_string(o.state),
          o.submit, o.start >= 0 ? fmt::format("{}", o.start) : "", o.end >= 0 ? fmt::format("{}", o.end) : "",
          o.start >= 0 ? fmt::format("{}", o.start - o.submit) : "",
          o.state == sched::JobState::done ? fmt::format("{}", o.end - o.submit) : "", o.ran_s,
          o.ideal_s > 0 && o.state == sched::JobState::done ? fmt::format("{:.4f}", o.ran_s / o.ideal_s) : "",
          o.preemptions, nodes);
    }
  return out;
}

std::string fill_text(const ScheduleInput& in, const std::vector<sched::FillCurve>& curves, int repeats,
                      bool with_header) {
  std::string out = with_header ? header(in) : "";
  out += fmt::format(
      "# fill experiment (FGD, ATC '23): pods arrive in random order (then random copies) on an empty cluster, never "
      "leave;\n#   a pod that fits nowhere is dropped. Unallocated GPUs, % of {} (median of {} seeds) as demand "
      "arrives:\n",
      grouped(in.gpus), repeats);
  if (curves.empty()) return out;
  std::vector<std::string> head{"policy"};
  std::vector<TextTable::Align> align{TextTable::Align::left};
  for (const auto& p : curves.front().points) {
    head.push_back(fmt::format("{:g}%", 100 * p.arrived));
    align.push_back(TextTable::Align::right);
  }
  head.insert(head.end(), {"frag% @end", "failed @end"});
  TextTable t(head, align);
  for (const auto& c : curves) {
    std::vector<std::string> row{c.policy};
    for (const auto& p : c.points) row.push_back(fixed(p.unallocated_median, 2));
    row.push_back(fixed(c.points.back().fragmented_median, 2));
    row.push_back(fixed(c.points.back().failed_pods_median, 0));
    t.add_row(row);
  }
  out += t.render();
  // Against the best baseline at the end.
  const sched::FillCurve* fgd = nullptr;
  const sched::FillCurve* best_other = nullptr;
  for (const auto& c : curves) {
    if (c.policy == "fgd")
      fgd = &c;
    else if (!best_other || c.points.back().unallocated_median < best_other->points.back().unallocated_median)
      best_other = &c;
  }
  if (fgd && best_other) {
    const double a = fgd->points.back().unallocated_median, b = best_other->points.back().unallocated_median;
    out += fmt::format("#   at {:g}% arrived fgd leaves {:.2f}% unallocated, {} {:.2f}%: {:.0f}% fewer ({:.0f} GPUs)\n",
                       100 * fgd->points.back().arrived, a, best_other->policy, b, b > 0 ? 100 * (b - a) / b : 0,
                       (b - a) / 100 * static_cast<double>(in.gpus));
  }
  return out;
}

nlohmann::json fill_json(const ScheduleInput& in, const std::vector<sched::FillCurve>& curves, int repeats) {
  nlohmann::json j;
  j["input"] = input_json(in);
  j["repeats"] = repeats;
  j["curves"] = nlohmann::json::array();
  for (const auto& c : curves) {
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& p : c.points)
      pts.push_back({{"arrived", p.arrived},
                     {"unallocated_percent_median", p.unallocated_median},
                     {"unallocated_percent_p25", p.unallocated_p25},
                     {"unallocated_percent_p75", p.unallocated_p75},
                     {"fragmented_percent_median", p.fragmented_median},
                     {"failed_gpu_pods_median", p.failed_pods_median}});
    j["curves"].push_back({{"policy", c.policy}, {"points", pts}});
  }
  return j;
}

std::string fill_csv(const std::vector<sched::FillCurve>& curves) {
  std::string out =
      "policy,arrived,unallocated_percent_median,unallocated_percent_p25,unallocated_percent_p75,"
      "fragmented_percent_median,failed_gpu_pods_median\n";
  for (const auto& c : curves)
    for (const auto& p : c.points)
      out += fmt::format("{},{},{},{},{},{},{}\n", c.policy, p.arrived, p.unallocated_median, p.unallocated_p25,
                         p.unallocated_p75, p.fragmented_median, p.failed_pods_median);
  return out;
}

namespace {

std::string escape(const std::string& s) { return html_escape(s); }

// The frame both charts share: a titled SVG of kChartW x kChartH plus the x-axis labels below,
// with y grid lines labelled at quarters of `ymax` (`digits` significant, then `unit`), and a
// legend of names in the series' colours after it.
constexpr int kChartW = 900, kChartH = 260, kChartLeft = 60, kChartBottom = 30;
const char* series_colour(std::size_t i) {
  // Ten colours: the nine policies of --compare each get their own.
  static const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                  "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
  return colours[i % 10];
}
std::string chart_open(const std::string& title, double ymax, int digits, const std::string& unit) {
  std::string svg =
      fmt::format(R"(<h2>{}</h2><svg viewBox="0 -12 {} {}" width="{}" height="{}" role="img">)", escape(title), kChartW,
                  kChartH + kChartBottom + 12, kChartW, kChartH + kChartBottom + 12);
  for (int i = 0; i <= 4; ++i) {
    const double y = kChartH - kChartH * i / 4.0;
    svg += fmt::format(
        R"(<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" class="grid"/><text x="{}" y="{:.1f}" class="axis">{}</text>)",
        kChartLeft, kChartW, y, y, kChartLeft - 4, y + 4, fmt::format("{:.{}g}{}", ymax * i / 4.0, digits, unit));
  }
  return svg;
}
std::string chart_close(const std::vector<std::string>& names) {
  std::string svg = "</svg><p class=\"legend\">";
  for (std::size_t i = 0; i < names.size(); ++i)
    svg += fmt::format(R"(<span style="color:{}">&#9632; {}</span> )", series_colour(i), escape(names[i]));
  return svg + "</p>\n";
}

// One chart: a value of the timeline per policy, at most `width` points each (the mean of each
// time bucket, weighted by how long each value held).
std::string chart(const std::vector<sched::ScheduleResult>& results, const std::string& title, double ymax,
                  const std::string& unit, const std::function<double(const sched::TimelinePoint&)>& value) {
  constexpr int kW = kChartW, kH = kChartH, kLeft = kChartLeft, kBuckets = 450;
  double t0 = 1e300, t1 = -1e300;
  for (const auto& r : results)
    if (!r.timeline.empty()) t0 = std::min(t0, r.timeline.front().t), t1 = std::max(t1, r.timeline.back().t);
  if (!(t1 > t0) || !(ymax > 0)) return {};
  std::string svg = chart_open(title, ymax, 4, unit);
  for (int i = 0; i <= 5; ++i) {
    const double x = kLeft + (kW - kLeft - 40) * i / 5.0;
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" class="axis mid">{}</text>)", x, kH + 18,
                       i == 0 ? std::string("0") : human_duration((t1 - t0) * i / 5.0));
  }
  for (std::size_t p = 0; p < results.size(); ++p) {
    const auto& tl = results[p].timeline;
    std::vector<double> sum(kBuckets, 0), span(kBuckets, 0);
    for (std::size_t i = 0; i + 1 < tl.size(); ++i) {
      // Spread each held value over the buckets it covers.
      double a = tl[i].t;
      const double b = tl[i + 1].t;
      const double v = value(tl[i]);
      // Walk the buckets by index (recomputing one from a time can land on the same bucket
      // again through rounding).
      int k = std::clamp(static_cast<int>((a - t0) / (t1 - t0) * kBuckets), 0, kBuckets - 1);
      while (a < b && k < kBuckets) {
        const double edge = k == kBuckets - 1 ? b : t0 + (t1 - t0) * (k + 1) / kBuckets;
        const double e = std::min(b, edge);
        if (e > a) {
          sum[static_cast<std::size_t>(k)] += v * (e - a);
          span[static_cast<std::size_t>(k)] += e - a;
          a = e;
        }
        ++k;
      }
    }
    std::string pts;
    for (int k = 0; k < kBuckets; ++k) {
      if (span[static_cast<std::size_t>(k)] <= 0) continue;
      const double v = sum[static_cast<std::size_t>(k)] / span[static_cast<std::size_t>(k)];
      pts += fmt::format("{:.1f},{:.1f} ", kLeft + (kW - kLeft - 40) * (k + 0.5) / kBuckets,
                         kH - kH * std::min(1.0, v / ymax));
    }
    svg += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"/>)", pts, series_colour(p));
  }
  std::vector<std::string> names;
  for (const auto& r : results) names.push_back(r.policy);
  return svg + chart_close(names);
}

// The fill experiment: unallocated GPUs (%) against arrived demand (% of the GPUs), per policy.
std::string fill_chart(const std::vector<sched::FillCurve>& curves) {
  constexpr int kW = kChartW, kH = kChartH, kLeft = kChartLeft;
  // From the first mark at or above 80% arrived, where the policies part.
  double x0 = 1e300, x1 = 0, ymax = 0;
  for (const auto& c : curves)
    for (const auto& p : c.points)
      if (p.arrived >= 0.8)
        x0 = std::min(x0, p.arrived), x1 = std::max(x1, p.arrived), ymax = std::max(ymax, p.unallocated_median);
  if (!(x1 > x0) || !(ymax > 0)) return {};
  ymax *= 1.1;
  std::string svg =
      chart_open("Unallocated GPUs as the cluster fills (FGD's experiment; median of the seeds)", ymax, 3, "%");
  // The last label ("130% arrived") is centred on its mark: keep room for its right half.
  auto x_of = [&](double a) { return kLeft + (kW - kLeft - 50) * (a - x0) / (x1 - x0); };
  for (const auto& p : curves.front().points)
    if (p.arrived >= x0)
      svg += fmt::format(R"(<text x="{:.1f}" y="{}" class="axis mid">{:g}% arrived</text>)", x_of(p.arrived), kH + 18,
                         100 * p.arrived);
  for (std::size_t c = 0; c < curves.size(); ++c) {
    std::string pts;
    for (const auto& p : curves[c].points)
      if (p.arrived >= x0) pts += fmt::format("{:.1f},{:.1f} ", x_of(p.arrived), kH - kH * p.unallocated_median / ymax);
    svg += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>)", pts, series_colour(c));
  }
  std::vector<std::string> names;
  for (const auto& c : curves) names.push_back(c.policy);
  return svg + chart_close(names);
}

}  // namespace

std::string schedule_html(const ScheduleInput& in, const std::vector<sched::ScheduleResult>& results,
                          const std::vector<sched::Job>& jobs, const std::vector<sched::FillCurve>& curves,
                          int repeats) {
  std::string out =
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      R"(<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">)"
      "\n<title>gpufabric schedule</title>\n<style>"
      "body{font:14px system-ui,sans-serif;margin:2em;color:#222}pre{font:12px "
      "ui-monospace,monospace;background:#f6f6f6;"
      "padding:1em;overflow-x:auto}.grid{stroke:#ddd}.axis{font-size:11px;fill:#555;text-anchor:end}.mid{text-anchor:"
      "middle}.legend span{margin-right:1.2em;font-weight:600}</style>\n</head>\n<body>\n";
  out += fmt::format("<h1>Scheduling: {} on {}</h1>\n", escape(in.trace), escape(in.cluster));
  std::string text = results.empty() ? "" : schedule_text(in, results, jobs);
  if (!curves.empty()) text += fill_text(in, curves, repeats, results.empty());
  out += "<pre>" + escape(text) + "</pre>\n";
  if (!curves.empty()) out += fill_chart(curves);
  const double gpus = static_cast<double>(in.gpus);
  if (!results.empty()) out += timeline_charts_html(results, gpus);
  out +=
      "<p>gpufabric schedule. Alibaba PAI 2023 trace: github.com/alibaba/clusterdata (cluster-trace-gpu-v2023); Weng "
      "et al., &ldquo;Beware of Fragmentation&rdquo;, USENIX ATC '23.</p>\n</body>\n</html>\n";
  return out;
}

std::string timeline_charts_html(const std::vector<sched::ScheduleResult>& results, double gpus) {
  double frag_max = 0, alloc_max = 0;
  for (const auto& r : results)
    for (const auto& p : r.timeline) {
      frag_max = std::max(frag_max, p.fragmented_gpus);
      alloc_max = std::max(alloc_max, p.allocated_gpus);
    }
  const std::string alloc = gpus > 0
                                ? chart(results, "GPUs allocated over time (% of the cluster)", 100, "%",
                                        [&](const sched::TimelinePoint& p) { return 100 * p.allocated_gpus / gpus; })
                                : chart(results, "GPUs allocated over time", alloc_max * 1.1, "",
                                        [](const sched::TimelinePoint& p) { return p.allocated_gpus; });
  std::string out = alloc.empty() ? "<p>No timeline to draw (everything happened at one instant).</p>\n" : alloc;
  if (frag_max > 0)
    out += chart(results, "Fragmented GPUs over time (FGD's measure under the trace's task mix)", frag_max * 1.1, "",
                 [](const sched::TimelinePoint& p) { return p.fragmented_gpus; });
  return out;
}

std::vector<sched::ScheduleResult> read_timeline_csv(const std::string& path) {
  const sched::CsvTable t = sched::read_csv(path);
  const std::vector<std::string> want{"policy",  "t_s",     "allocated_gpus", "gpus_in_use",
                                      "running", "waiting", "fragmented_gpus"};
  if (t.header != want)
    throw InputError({path, 1, 0}, "header", "not a timeline written by `gpufabric schedule --timeline`",
                     join(want, ","));
  std::vector<sched::ScheduleResult> out;
  for (const auto& r : t.rows) {
    if (r.fields.size() != want.size())
      throw InputError({path, r.line, 0}, "row", fmt::format("{} fields", r.fields.size()), "7 fields");
    auto number = [&](std::size_t i) {
      double v = 0;
      const auto& f = r.fields[i];
      const auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      if (ec != std::errc() || p != f.data() + f.size() || !std::isfinite(v))
        throw InputError({path, r.line, 0}, want[i], "'" + f + "' is not a number", "a number");
      return v;
    };
    if (out.empty() || out.back().policy != r.fields[0]) {
      out.emplace_back();
      out.back().policy = r.fields[0];
    }
    sched::TimelinePoint p;
    p.t = number(1);
    p.allocated_gpus = number(2);
    p.gpus_in_use = static_cast<long>(number(3));
    p.running = static_cast<long>(number(4));
    p.waiting = static_cast<long>(number(5));
    p.fragmented_gpus = number(6);
    if (!out.back().timeline.empty() && p.t < out.back().timeline.back().t)
      throw InputError({path, r.line, 0}, "t_s", "time goes backwards", "non-decreasing times per policy");
    out.back().timeline.push_back(p);
  }
  if (out.empty()) throw InputError({path, 0, 0}, "rows", "the timeline is empty", "rows under the header");
  return out;
}

std::string timeline_csv(const std::vector<sched::ScheduleResult>& results) {
  std::string out = "policy,t_s,allocated_gpus,gpus_in_use,running,waiting,fragmented_gpus\n";
  for (const auto& r : results)
    for (const auto& p : r.timeline)
      out += fmt::format("{},{},{:.3f},{},{},{},{:.3f}\n", r.policy, p.t, p.allocated_gpus, p.gpus_in_use, p.running,
                         p.waiting, p.fragmented_gpus);
  return out;
}

}  // namespace gf::report
