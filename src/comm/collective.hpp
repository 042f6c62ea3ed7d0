#pragma once
// The vocabulary of collectives, as NCCL and nccl-tests name it.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.hpp"

namespace gf::comm {

enum class Op { all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv };
inline constexpr EnumNames<Op, 7> kOpNames{{{Op::all_reduce, "all_reduce"},
                                            {Op::all_gather, "all_gather"},
                                            {Op::reduce_scatter, "reduce_scatter"},
                                            {Op::broadcast, "broadcast"},
                                            {Op::reduce, "reduce"},
                                            {Op::alltoall, "alltoall"},
                                            {Op::sendrecv, "sendrecv"}}};
// hierarchical is gpufabric's own (reduce-scatter in each node, all-reduce across nodes per
// rail, all-gather in each node): NCCL has no such algorithm, so it runs only when forced.
// Each algorithm's knowledge lives in its own object (comm/algorithm.hpp); the enum is its id in
// code, output and validation files. p2p stays last.
enum class Algo { ring, tree, nvls, nvls_tree, collnet_direct, collnet_chain, pat, hierarchical, p2p };
inline constexpr std::size_t kAlgoCount = static_cast<std::size_t>(Algo::p2p) + 1;
enum class Proto { ll, ll128, simple };
inline constexpr int kProtoCount = static_cast<int>(Proto::simple) + 1;
inline constexpr EnumNames<Proto, 3> kProtoNames{
    {{Proto::ll, "LL"}, {Proto::ll128, "LL128"}, {Proto::simple, "Simple"}}};

const char* to_string(Op o);
const char* to_string(Algo a);                     // NCCL's spelling: Ring, Tree, NVLS, NVLSTree, CollNetDirect, ...
const char* to_string(Proto p);                    // LL, LL128, Simple
std::optional<Op> parse_op(const std::string& s);  // case-insensitive
std::optional<Algo> parse_algo(const std::string& s);    // case-insensitive, as NCCL_ALGO
std::optional<Proto> parse_proto(const std::string& s);  // case-insensitive, as NCCL_PROTO
// NCCL_ALGO / NCCL_PROTO as lists, the way NCCL reads them: names separated by commas, or '^'
// and names to leave out ("Ring,Tree", "^NVLS,NVLSTree"). The result is the set allowed, in the
// enum's order; nothing when a name is unknown or nothing would be left.
std::optional<std::vector<Algo>> parse_algo_list(const std::string& s);
std::optional<std::vector<Proto>> parse_proto_list(const std::string& s);
std::vector<std::string> op_names();

// nccl-tests' bus-bandwidth factor: busbw = algbw * factor (PERFORMANCE.md of nccl-tests).
double busbw_factor(Op op, long ranks);
// Bytes each rank's buffer must be a multiple of: the data type, times ranks for ops whose
// buffer is split evenly among ranks (nccl-tests rounds sizes down to this).
bool splits_by_rank(Op op);

struct DataType {
  std::string name;
  int bytes = 4;
};
std::optional<DataType> parse_dtype(const std::string& s);
std::vector<std::string> dtype_names();
std::vector<std::string> redop_names();
bool is_reduction(Op op);
// alltoall and sendrecv: NCCL's point-to-point transfers, whatever algorithm is asked for.
bool is_point_to_point(Op op);

}  // namespace gf::comm
