#include "work/pipeline_split.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "core/error.hpp"

namespace gf::work {

namespace {

[[noreturn]] void refuse(const std::string& flag, const std::string& what, const std::string& valid) {
  throw InputError({}, flag, what, valid);
}

// Expands Megatron's layout grammar: a symbol or a parenthesised group, each optionally
// followed by *n.
struct LayoutParser {
  const std::string& text;
  std::size_t at = 0;

  [[noreturn]] void fail(const std::string& why) const {
    refuse("--pipeline-layout", fmt::format("'{}' at character {}: {}", text, at + 1, why),
           "Megatron's layout: E (embedding), t (a transformer layer), m (MTP), L (loss), | between virtual "
           "stages, (...)*n or t*n to repeat, e.g. Et|(tt|)*30mL");
  }
  long count() {
    if (at >= text.size() || text[at] != '*') return 1;
    ++at;
    long n = 0;
    const std::size_t start = at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) && n < 1000000)
      n = n * 10 + (text[at++] - '0');
    if (at == start || n < 1) fail("a repeat count of 1 or more after '*'");
    return n;
  }
  std::string sequence(bool nested) {
    std::string out;
    while (at < text.size()) {
      const char c = text[at];
      if (c == ')') {
        if (!nested) fail("')' without '('");
        return out;
      }
      std::string item;
      if (c == '(') {
        ++at;
        item = sequence(true);
        if (at >= text.size() || text[at] != ')') fail("'(' without ')'");
        ++at;
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++at;
      } else if (!std::isspace(static_cast<unsigned char>(c))) {
        fail(fmt::format("unknown symbol '{}'", c));
      } else {
        ++at;
        continue;
      }
      const long n = count();
      if (static_cast<double>(item.size()) * static_cast<double>(n) + static_cast<double>(out.size()) > 1e6)
        fail("too long once expanded");
      for (long i = 0; i < n; ++i) out += item;
    }
    if (nested) fail("'(' without ')'");
    return out;
  }
};

PipelineSplit from_layout(const PipelineSplitRequest& r) {
  LayoutParser p{r.layout};
  const std::string expanded = p.sequence(false);
  std::vector<std::string> stages{""};
  for (const char c : expanded) {
    if (c == '|')
      stages.emplace_back();
    else
      stages.back() += c;
  }
  const long want = r.pp * r.vpp;
  if (static_cast<long>(stages.size()) != want)
    refuse(
        "--pipeline-layout",
        fmt::format("'{}' names {} virtual stages; PP {} x VPP {} has {}", r.layout, stages.size(), r.pp, r.vpp, want),
        fmt::format("{} stages separated by '|'", want));
  PipelineSplit out;
  out.pp = r.pp;
  out.vpp = r.vpp;
  long total = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const auto& s = stages[i];
    const bool first = i == 0, last = i + 1 == stages.size();
    if (s.find('E') != std::string::npos && (!first || s.front() != 'E'))
      refuse("--pipeline-layout",
             fmt::format("'{}': the embedding (E) is not the first thing of the first stage", r.layout),
             "E at the start of the first virtual stage");
    if (s.find('L') != std::string::npos && (!last || s.back() != 'L'))
      refuse("--pipeline-layout", fmt::format("'{}': the loss (L) is not the last thing of the last stage", r.layout),
             "L at the end of the last virtual stage");
    const long t = static_cast<long>(std::count(s.begin(), s.end(), 't'));
    out.virtual_layers.push_back(t);
    total += t;
  }
  if (total != r.layers)
    refuse("--pipeline-layout",
           fmt::format("'{}' places {} transformer layers; the model has {}", r.layout, total, r.layers),
           fmt::format("{} t's in all", r.layers));
  return out;
}

// Megatron-Core's rules for the split it builds itself.
PipelineSplit from_counts(const PipelineSplitRequest& r) {
  PipelineSplit out;
  out.pp = r.pp;
  out.vpp = r.vpp;
  const long v = r.vpp;
  const bool edges = r.first_stage_layers > 0 || r.last_stage_layers > 0;
  const bool accounted = r.account_for_embedding || r.account_for_loss;
  if (edges && accounted)
    refuse("--first-stage-layers", "given with --account-for-embedding/loss-in-pipeline-split",
           "one of the two ways to unbalance the edge stages (Megatron refuses both at once)");
  std::vector<long> per_stage(static_cast<std::size_t>(r.pp), 0);
  if (edges) {
    long rest = r.layers, middle = r.pp;
    for (const auto& [flag, n] : {std::pair{"--first-stage-layers", r.first_stage_layers},
                                  std::pair{"--last-stage-layers", r.last_stage_layers}}) {
      if (n <= 0) continue;
      if (n % v != 0)
        refuse(flag, fmt::format("{} layers do not split into VPP {} equal chunks", n, v),
               fmt::format("a multiple of {} (Megatron: 'must be divisible by virtual pipeline parallel degree')", v));
      rest -= n;
      --middle;
    }
    // What to suggest, worked out only when refusing (a search checks thousands of splits).
    auto suggestion = [&] {
      const auto [bf, bl] = balanced_edges(r.layers, r.pp, v);
      return bf > 0    ? fmt::format("e.g. --first-stage-layers {} --last-stage-layers {}", bf, bl)
             : bf == 0 ? std::string("or neither flag: the even split is valid")
                       : std::string("or every virtual stage's layers with --pipeline-layout");
    };
    if (rest < 0 || (rest > 0) != (middle > 0))
      refuse("--first-stage-layers", fmt::format("{} layers left for {} middle stages of {}", rest, middle, r.layers),
             "middle layers exactly when there are middle stages; " + suggestion());
    if (middle > 0 && (rest % middle != 0 || (rest / middle) % v != 0))
      refuse("--first-stage-layers",
             fmt::format("the {} middle layers do not split over {} middle stages in multiples of VPP {}", rest, middle,
                         v),
             "middle layers a multiple of middle stages x VPP (Megatron's 'Uneven PP' check); " + suggestion());
    std::fill(per_stage.begin(), per_stage.end(), middle > 0 ? rest / middle : 0);
    if (r.first_stage_layers > 0) per_stage.front() = r.first_stage_layers;
    if (r.last_stage_layers > 0) per_stage.back() = r.last_stage_layers;
  } else {
    const long counted = r.layers + (r.account_for_embedding ? 1 : 0) + (r.account_for_loss ? 1 : 0);
    if (counted % r.pp != 0) {
      const auto [bf, bl] = balanced_edges(r.layers, r.pp, v);
      std::vector<long> divisors;
      for (long p = 2; p <= counted && divisors.size() < 8; ++p)
        if (counted % p == 0) divisors.push_back(p);
      refuse(
          "--pp",
          fmt::format("{} layers{} do not split evenly over {} stages", counted,
                      accounted ? " (with the embedding/loss)" : "", r.pp),
          fmt::format("a PP dividing {} ({}){}", counted, fmt::join(divisors, ", "),
                      bf > 0 ? fmt::format(", or uneven edges: --first-stage-layers {} --last-stage-layers {}", bf, bl)
                             : std::string(", or every virtual stage's layers with --pipeline-layout")));
    }
    const long each = counted / r.pp;
    if (each % v != 0) {
      std::vector<long> fits;
      for (long x = 2; x <= each; ++x)
        if (each % x == 0) fits.push_back(x);
      refuse("--vpp", fmt::format("a stage's {} layers do not split into {} virtual stages", each, v),
             fits.empty() ? std::string("--vpp 1 (one layer per stage)")
                          : fmt::format("a VPP dividing {}: {}", each, fmt::join(fits, ", ")));
    }
    std::fill(per_stage.begin(), per_stage.end(), each);
  }
  // Virtual stage c * PP + s is chunk c of stage s; the embedding and the loss take their
  // layer's place in the first and last chunk when accounted.
  for (long c = 0; c < v; ++c)
    for (long s = 0; s < r.pp; ++s) out.virtual_layers.push_back(per_stage[static_cast<std::size_t>(s)] / v);
  if (r.account_for_embedding) --out.virtual_layers.front();
  if (r.account_for_loss) --out.virtual_layers.back();
  if (std::any_of(out.virtual_layers.begin(), out.virtual_layers.end(), [](long n) { return n < 0; }))
    refuse("--vpp", "the embedding or the loss leaves a virtual stage with fewer than no layers",
           "fewer virtual stages");
  return out;
}

}  // namespace

std::vector<long> PipelineSplit::stage_layers(long s) const {
  std::vector<long> out;
  long next = 0;
  for (std::size_t i = 0; i < virtual_layers.size(); ++i) {
    for (long k = 0; k < virtual_layers[i]; ++k, ++next)
      if (static_cast<long>(i) % pp == s) out.push_back(next);
  }
  return out;
}

std::vector<std::vector<long>> PipelineSplit::layers_by_stage() const {
  std::vector<std::vector<long>> out(static_cast<std::size_t>(std::max<long>(1, pp)));
  long next = 0;
  for (std::size_t i = 0; i < virtual_layers.size(); ++i) {
    auto& stage = out[i % out.size()];
    for (long k = 0; k < virtual_layers[i]; ++k, ++next) stage.push_back(next);
  }
  return out;
}

long PipelineSplit::most_layers() const {
  std::vector<long> count(static_cast<std::size_t>(std::max<long>(1, pp)), 0);
  for (std::size_t i = 0; i < virtual_layers.size(); ++i) count[i % count.size()] += virtual_layers[i];
  return *std::max_element(count.begin(), count.end());
}

std::pair<long, long> balanced_edges(long layers, long pp, long vpp) {
  if (pp < 2) return {-1, -1};
  if (layers % pp == 0 && (layers / pp) % vpp == 0) return {0, 0};
  const long middle = pp - 2;
  std::pair<long, long> best{-1, -1};
  auto key = [&](long m, long f, long l) { return std::tuple{std::max({m, f, l}), std::max(f, l), l}; };
  auto best_key = std::tuple{std::numeric_limits<long>::max(), 0L, 0L};
  long best_m = 0;
  for (long m = middle > 0 ? vpp : 0; m <= layers; m += vpp) {
    const long edges = layers - middle * m;
    if (edges < 2 * vpp) break;
    for (long f = vpp; f < edges; f += vpp) {
      const long l = edges - f;
      if (l <= 0 || l % vpp != 0) continue;
      if (key(m, f, l) < best_key) {
        best_key = key(m, f, l);
        best = {f, l};
        best_m = m;
      }
    }
    if (middle == 0) break;
  }
  (void)best_m;
  return best;
}

PipelineSplit pipeline_split(const PipelineSplitRequest& r) {
  if (r.pp <= 1) {
    if (r.first_stage_layers > 0 || r.last_stage_layers > 0)
      refuse("--first-stage-layers", "edge stages of a pipeline, and --pp is 1", "--pp 2 or more");
    PipelineSplit out;
    out.virtual_layers = {r.layers};
    return out;
  }
  if (r.vpp > 1 && !r.overlap_p2p && r.pp <= 2 && !r.balanced)
    refuse("--vpp",
           fmt::format("the interleaved schedule with PP {} and blocking sends: Megatron needs PP > 2 unless sends "
                       "overlap compute",
                       r.pp),
           "--overlap-p2p-comm with --vpp, or --pp 3 or more");
  if (!r.layout.empty()) {
    if (r.first_stage_layers > 0 || r.last_stage_layers > 0 || r.account_for_embedding || r.account_for_loss)
      refuse("--pipeline-layout", "given with another way to split the layers",
             "the layout alone (it places every layer itself)");
    return from_layout(r);
  }
  if (r.balanced) {
    PipelineSplit out;
    out.pp = r.pp;
    out.vpp = r.vpp;
    const long stages = r.pp * r.vpp;
    if (r.layers < stages)
      refuse("--vpp", fmt::format("{} virtual stages for {} layers", stages, r.layers), "at most one stage per layer");
    for (long i = 0; i < stages; ++i) out.virtual_layers.push_back(r.layers / stages + (i < r.layers % stages ? 1 : 0));
    return out;
  }
  return from_counts(r);
}

PipelineSplitRequest split_request(long layers, const ParallelLayout& l) {
  PipelineSplitRequest r;
  r.layers = layers;
  r.pp = l.pp;
  r.vpp = std::max<long>(1, l.vpp);
  r.overlap_p2p = l.overlap_p2p_comm;
  r.first_stage_layers = l.split.first_stage_layers;
  r.last_stage_layers = l.split.last_stage_layers;
  r.account_for_embedding = l.split.account_for_embedding;
  r.account_for_loss = l.split.account_for_loss;
  r.layout = l.split.layout;
  r.balanced = l.split.balanced;
  return r;
}

std::string stage_summary(const PipelineSplit& s) {
  std::string out;
  long run = 0, value = -1;
  auto flush = [&] {
    if (run == 0) return;
    out += (out.empty() ? "" : ", ") + (run > 1 ? fmt::format("{} x {}", value, run) : std::to_string(value));
  };
  for (long st = 0; st < s.pp; ++st) {
    const long n = static_cast<long>(s.stage_layers(st).size());
    if (n != value) {
      flush();
      value = n;
      run = 0;
    }
    ++run;
  }
  flush();
  return out;
}

bool pipeline_split_valid(const PipelineSplitRequest& r) {
  try {
    (void)pipeline_split(r);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace gf::work
