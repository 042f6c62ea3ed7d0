#include "comm/collective.hpp"

#include <algorithm>
#include <cctype>

#include "comm/algorithm.hpp"

namespace gf::comm {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
}  // namespace

const char* to_string(Op o) { return name_of(kOpNames, o); }

const char* to_string(Algo a) { return static_cast<std::size_t>(a) < kAlgoCount ? algorithm(a).name() : "?"; }

const char* to_string(Proto p) { return name_of(kProtoNames, p); }

std::vector<std::string> op_names() { return names(kOpNames); }

std::optional<Op> parse_op(const std::string& s) { return parse_name_nocase(kOpNames, s); }

std::optional<Algo> parse_algo(const std::string& s) {
  // NCCL_ALGO's spellings (CollNetChain, NVLSTree), also with '_' or '-' between the words.
  std::string l = lower(s);
  std::erase_if(l, [](char ch) { return ch == '_' || ch == '-'; });
  for (const auto* a : all_algorithms()) {
    if (!a->traits().forceable) continue;
    if (l == lower(a->name()) || (a->traits().alias != nullptr && l == lower(a->traits().alias))) return a->id();
  }
  return std::nullopt;
}

std::optional<Proto> parse_proto(const std::string& s) { return parse_name_nocase(kProtoNames, s); }

namespace {

// NCCL's list syntax over a set of `count` values named by `parse`.
template <typename T, typename Parse>
std::optional<std::vector<T>> parse_list(const std::string& text, int count, Parse parse) {
  std::string body = text;
  const bool exclude = !body.empty() && body.front() == '^';
  if (exclude) body.erase(0, 1);
  std::vector<bool> named(static_cast<std::size_t>(count), false);
  std::size_t start = 0;
  while (start <= body.size()) {
    const std::size_t comma = std::min(body.find(',', start), body.size());
    std::string item = body.substr(start, comma - start);
    std::erase_if(item, [](char ch) { return ch == ' '; });
    const auto v = parse(item);
    if (!v) return std::nullopt;
    named[static_cast<std::size_t>(*v)] = true;
    start = comma + 1;
  }
  std::vector<T> out;
  for (int i = 0; i < count; ++i)
    if (named[static_cast<std::size_t>(i)] != exclude) out.push_back(static_cast<T>(i));
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::optional<std::vector<Algo>> parse_algo_list(const std::string& s) {
  // Every algorithm NCCL_ALGO can name ('^' leaves out of those, never adding point-to-point).
  auto out = parse_list<Algo>(s, static_cast<int>(kAlgoCount), parse_algo);
  if (out) std::erase_if(*out, [](Algo a) { return !algorithm(a).traits().forceable; });
  if (out && out->empty()) return std::nullopt;
  return out;
}

std::optional<std::vector<Proto>> parse_proto_list(const std::string& s) {
  return parse_list<Proto>(s, kProtoCount, parse_proto);
}

double busbw_factor(Op op, long n) {
  const double r = static_cast<double>(n);
  switch (op) {
    case Op::all_reduce: return 2.0 * (r - 1) / r;
    case Op::all_gather:
    case Op::reduce_scatter:
    case Op::alltoall: return (r - 1) / r;
    case Op::broadcast:
    case Op::reduce:
    case Op::sendrecv: return 1.0;
  }
  return 1.0;
}

bool splits_by_rank(Op op) { return op == Op::all_gather || op == Op::reduce_scatter || op == Op::alltoall; }

bool is_reduction(Op op) { return op == Op::all_reduce || op == Op::reduce_scatter || op == Op::reduce; }

bool is_point_to_point(Op op) { return op == Op::alltoall || op == Op::sendrecv; }

std::optional<DataType> parse_dtype(const std::string& s) {
  static const std::vector<DataType> types = {{"int8", 1},   {"uint8", 1},    {"int32", 4},  {"uint32", 4},
                                              {"int64", 8},  {"uint64", 8},   {"half", 2},   {"float", 4},
                                              {"double", 8}, {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1}};
  const std::string l = lower(s);
  for (const auto& t : types) {
    if (t.name == l) return t;
  }
  if (l == "char") return DataType{"int8", 1};
  if (l == "int") return DataType{"int32", 4};
  if (l == "float16" || l == "fp16") return DataType{"half", 2};
  if (l == "float32" || l == "fp32") return DataType{"float", 4};
  if (l == "float64" || l == "fp64") return DataType{"double", 8};
  if (l == "bf16") return DataType{"bfloat16", 2};
  return std::nullopt;
}

std::vector<std::string> dtype_names() {
  return {"int8", "uint8", "int32",  "uint32",   "int64",  "uint64",
          "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
}

std::vector<std::string> redop_names() { return {"sum", "prod", "max", "min", "avg"}; }

}  // namespace gf::comm
