#include "work/parallel_layout.hpp"

#include <algorithm>
#include <array>

#include "core/error.hpp"

namespace gf::work {

const char* to_string(Axis a) { return name_of(kAxisNames, a); }

RankOrder parse_rank_order(const std::string& text, const std::string& flag) {
  RankOrder out;
  out.inner_to_outer.clear();
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t dash = std::min(text.find('-', start), text.size());
    const std::string name = text.substr(start, dash - start);
    const auto parsed = parse_name(kAxisNames, name);
    if (!parsed)
      throw InputError({}, flag, "unknown axis '" + name + "' in '" + text + "'",
                       join(names(kAxisNames)) + " joined by '-'");
    const Axis a = *parsed;
    if (std::find(out.inner_to_outer.begin(), out.inner_to_outer.end(), a) != out.inner_to_outer.end())
      throw InputError({}, flag, "axis '" + name + "' given twice in '" + text + "'", "each axis once");
    out.inner_to_outer.push_back(a);
    start = dash + 1;
  }
  for (const Axis a : {Axis::tp, Axis::cp, Axis::dp, Axis::pp}) {
    if (std::find(out.inner_to_outer.begin(), out.inner_to_outer.end(), a) == out.inner_to_outer.end())
      throw InputError({}, flag, std::string("'") + text + "' leaves out " + to_string(a),
                       "every one of tp, cp, dp, pp (ep optional), e.g. tp-cp-ep-dp-pp");
  }
  // EP is carved out of DP: it sits next to DP, inside it, wherever the user leaves it out.
  if (std::find(out.inner_to_outer.begin(), out.inner_to_outer.end(), Axis::ep) == out.inner_to_outer.end()) {
    const auto dp = std::find(out.inner_to_outer.begin(), out.inner_to_outer.end(), Axis::dp);
    out.inner_to_outer.insert(dp, Axis::ep);
  }
  return out;
}

namespace {

// Sizes of the five axes on one of Megatron's two grids: the attention grid (TP, CP, DP, PP;
// EP 1) or the expert grid (ETP, EP, expert-DP, PP; CP 1), numbered in the same order.
struct Coordinates {
  std::array<long, 5> size{};  // by Axis
};

Coordinates sizes(const ParallelLayout& l) {
  Coordinates c;
  c.size[static_cast<int>(Axis::tp)] = l.tp;
  c.size[static_cast<int>(Axis::cp)] = l.cp;
  c.size[static_cast<int>(Axis::ep)] = 1;
  c.size[static_cast<int>(Axis::dp)] = l.dp;
  c.size[static_cast<int>(Axis::pp)] = l.pp;
  return c;
}

Coordinates expert_sizes(const ParallelLayout& l) {
  Coordinates c;
  const long ep = std::max<long>(1, l.ep);
  c.size[static_cast<int>(Axis::tp)] = l.expert_tp();
  c.size[static_cast<int>(Axis::cp)] = 1;
  c.size[static_cast<int>(Axis::ep)] = ep;
  c.size[static_cast<int>(Axis::dp)] = l.gpus() / (l.expert_tp() * ep * l.pp);
  c.size[static_cast<int>(Axis::pp)] = l.pp;
  return c;
}

// The rank with these per-axis indices.
long rank_of(const Coordinates& c, const RankOrder& o, const std::array<long, 5>& index) {
  long rank = 0;
  long stride = 1;
  for (const Axis a : o.inner_to_outer) {
    rank += index[static_cast<int>(a)] * stride;
    stride *= c.size[static_cast<int>(a)];
  }
  return rank;
}

std::array<long, 5> index_of(const Coordinates& c, const RankOrder& o, long rank) {
  std::array<long, 5> index{};
  for (const Axis a : o.inner_to_outer) {
    const long n = c.size[static_cast<int>(a)];
    index[static_cast<int>(a)] = rank % n;
    rank /= n;
  }
  return index;
}

}  // namespace

std::vector<long> group_of(const ParallelLayout& l, const RankOrder& order, Axis axis, long gpu) {
  const Coordinates c = axis == Axis::ep ? expert_sizes(l) : sizes(l);
  auto index = index_of(c, order, gpu);
  std::vector<long> out;
  for (long i = 0; i < c.size[static_cast<int>(axis)]; ++i) {
    index[static_cast<int>(axis)] = i;
    out.push_back(rank_of(c, order, index));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_expert_grid(const ParallelLayout& l, long experts) {
  if (l.ep <= 1 && l.etp <= 0) return;
  const long grid = l.expert_tp() * std::max<long>(1, l.ep) * l.pp;
  if (l.gpus() % grid != 0) {
    std::vector<long> fits;
    for (long e = 2; e <= l.gpus() / (l.expert_tp() * l.pp) && fits.size() < 10; ++e)
      if ((l.gpus() / l.pp) % (e * l.expert_tp()) == 0 && (experts <= 0 || experts % e == 0)) fits.push_back(e);
    std::string list;
    for (long e : fits) list += (list.empty() ? "" : ", ") + std::to_string(e);
    throw InputError({}, "--ep",
                     "ETP " + std::to_string(l.expert_tp()) + " x EP " + std::to_string(l.ep) + " x PP " +
                         std::to_string(l.pp) + " = " + std::to_string(grid) + " does not divide the " +
                         std::to_string(l.gpus()) + " GPUs",
                     "an EP with ETP x EP dividing TP x CP x DP = " + std::to_string(l.gpus() / l.pp) +
                         " (Megatron's MoE parallel folding)" + (list.empty() ? std::string() : ": " + list) +
                         (l.expert_tp() > 1 ? "; or a smaller --etp (ETP 1 leaves the experts whole)" : ""));
  }
  // Megatron: "When not using pp-last rank ordering, the data parallel size of the attention and
  // moe layers must be the same" - checked by the caller that knows the order.
}

std::vector<std::vector<long>> groups(const ParallelLayout& l, const RankOrder& order, Axis axis) {
  std::vector<std::vector<long>> out;
  std::vector<bool> seen(static_cast<std::size_t>(l.gpus()), false);
  for (long g = 0; g < l.gpus(); ++g) {
    if (seen[static_cast<std::size_t>(g)]) continue;
    auto members = group_of(l, order, axis, g);
    for (const long m : members) seen[static_cast<std::size_t>(m)] = true;
    out.push_back(std::move(members));
  }
  return out;
}

}  // namespace gf::work
