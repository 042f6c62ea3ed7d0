#include "work/parallel_layout.hpp"

#include <algorithm>
#include <array>

#include "core/error.hpp"

namespace gf::work {

const char* to_string(Axis a) {
  switch (a) {
    case Axis::tp: return "tp";
    case Axis::cp: return "cp";
    case Axis::ep: return "ep";
    case Axis::dp: return "dp";
    case Axis::pp: return "pp";
  }
  return "?";
}

RankOrder parse_rank_order(const std::string& text, const std::string& flag) {
  RankOrder out;
  out.inner_to_outer.clear();
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t dash = std::min(text.find('-', start), text.size());
    const std::string name = text.substr(start, dash - start);
    Axis a{};
    if (name == "tp")
      a = Axis::tp;
    else if (name == "cp")
      a = Axis::cp;
    else if (name == "ep")
      a = Axis::ep;
    else if (name == "dp")
      a = Axis::dp;
    else if (name == "pp")
      a = Axis::pp;
    else
      throw InputError({}, flag, "unknown axis '" + name + "' in '" + text + "'", "tp, cp, ep, dp, pp joined by '-'");
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

// Sizes of the five axes, with EP splitting DP into ep x (dp / ep).
struct Coordinates {
  std::array<long, 5> size{};  // by Axis, with dp meaning dp / ep (the expert-data part)
};

Coordinates sizes(const ParallelLayout& l) {
  Coordinates c;
  const long ep = std::max<long>(1, l.ep);
  c.size[static_cast<int>(Axis::tp)] = l.tp;
  c.size[static_cast<int>(Axis::cp)] = l.cp;
  c.size[static_cast<int>(Axis::ep)] = ep;
  c.size[static_cast<int>(Axis::dp)] = l.dp / ep;
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
  const Coordinates c = sizes(l);
  auto index = index_of(c, order, gpu);
  std::vector<long> out;
  if (axis == Axis::dp) {
    // The whole data-parallel group: every (ep, dp/ep) pair.
    for (long e = 0; e < c.size[static_cast<int>(Axis::ep)]; ++e) {
      for (long d = 0; d < c.size[static_cast<int>(Axis::dp)]; ++d) {
        index[static_cast<int>(Axis::ep)] = e;
        index[static_cast<int>(Axis::dp)] = d;
        out.push_back(rank_of(c, order, index));
      }
    }
  } else {
    for (long i = 0; i < c.size[static_cast<int>(axis)]; ++i) {
      index[static_cast<int>(axis)] = i;
      out.push_back(rank_of(c, order, index));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
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
