// Where Megatron puts each rank: TP innermost (inside a node), then CP, EP, DP, PP outermost.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "work/parallel_layout.hpp"

namespace gf::work {
namespace {

ParallelLayout layout(long tp, long pp, long dp, long cp = 1, long ep = 1) {
  ParallelLayout l;
  l.tp = tp;
  l.pp = pp;
  l.dp = dp;
  l.cp = cp;
  l.ep = ep;
  return l;
}

TEST(ParallelLayout, MegatronOrderPutsTensorParallelInsideANode) {
  // 4 nodes of 8 GPUs, TP 8, PP 2, DP 2.
  const auto l = layout(8, 2, 2);
  const RankOrder o;
  const auto tp = groups(l, o, Axis::tp);
  ASSERT_EQ(tp.size(), 4u);
  EXPECT_EQ(tp[0], (std::vector<long>{0, 1, 2, 3, 4, 5, 6, 7}));
  // DP pairs GPU r of node 0 with GPU r of node 1: one rail.
  EXPECT_EQ(group_of(l, o, Axis::dp, 3), (std::vector<long>{3, 11}));
  // Pipeline stages are outermost: nodes 0-1 hold stage 0, nodes 2-3 stage 1.
  EXPECT_EQ(group_of(l, o, Axis::pp, 3), (std::vector<long>{3, 19}));
  EXPECT_EQ(groups(l, o, Axis::pp).size(), 16u);
}

TEST(ParallelLayout, ExpertParallelIsCarvedOutOfDataParallel) {
  const auto l = layout(2, 1, 8, 1, 4);
  const RankOrder o;
  // EP groups: consecutive data-parallel ranks, inside the DP group.
  EXPECT_EQ(group_of(l, o, Axis::ep, 0), (std::vector<long>{0, 2, 4, 6}));
  EXPECT_EQ(group_of(l, o, Axis::dp, 0), (std::vector<long>{0, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(groups(l, o, Axis::ep).size(), 4u);
}

TEST(ParallelLayout, AnotherOrderMovesTheGroups) {
  const auto l = layout(8, 1, 4);
  const RankOrder o = parse_rank_order("dp-tp-pp-cp", "--order");
  // DP innermost: a DP group is four consecutive GPUs; TP strides over them (across nodes).
  EXPECT_EQ(group_of(l, o, Axis::dp, 0), (std::vector<long>{0, 1, 2, 3}));
  EXPECT_EQ(group_of(l, o, Axis::tp, 0), (std::vector<long>{0, 4, 8, 12, 16, 20, 24, 28}));
}

TEST(ParallelLayout, BadOrdersAreInputErrors) {
  EXPECT_THROW(parse_rank_order("tp-dp-pp", "--order"), InputError);        // no cp
  EXPECT_THROW(parse_rank_order("tp-cp-dp-pp-tp", "--order"), InputError);  // twice
  EXPECT_THROW(parse_rank_order("tp-cp-xp-dp-pp", "--order"), InputError);  // unknown
  EXPECT_NO_THROW(parse_rank_order("tp-cp-ep-dp-pp", "--order"));
}

}  // namespace
}  // namespace gf::work
