// comm::sweep_collective: the typed request behind `gpufabric collective` and the Python module,
// checked in the library with the request's own field names.
#include <gtest/gtest.h>

#include "comm/collective_sweep.hpp"
#include "core/error.hpp"
#include "test_support.hpp"
#include "topo/cluster_loader.hpp"

namespace gf::comm {
namespace {

const topo::Topology& dgx_h100_2() {
  static const topo::Topology t = test::preset("dgx-h100", [] {
    topo::ClusterOverrides o;
    o.nodes = 2;
    return o;
  }());
  return t;
}

std::string field_of(const CollectiveSweepRequest& r) {
  try {
    (void)sweep_collective(dgx_h100_2(), nccl_params(), r);
  } catch (const InputError& e) {
    return e.field();
  }
  return "(accepted)";
}

TEST(CollectiveSweep, OneRowPerSizeRoundedToWholeElementsPerRank) {
  CollectiveSweepRequest r;
  r.op = "all_gather";
  r.sizes = {1000, 1 << 20, 1 << 30};
  const CollectiveSweep s = sweep_collective(dgx_h100_2(), nccl_params(), r);
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.rows[0].size_bytes, 960);  // 16 ranks x 4-byte floats: 64-byte units
  EXPECT_EQ(s.rows[1].count, (1 << 20) / 4);
  EXPECT_GT(s.rows[2].result.busbw_GBps, s.rows[1].result.busbw_GBps);
  EXPECT_EQ(s.comm.ranks, 16);
  EXPECT_EQ(s.comm.nodes, 2);
  EXPECT_EQ(s.op, "all_gather");
  for (const auto& row : s.rows) EXPECT_EQ(row.redop, "none");
}

TEST(CollectiveSweep, BadRequestsNameTheRequestsField) {
  CollectiveSweepRequest r;
  r.sizes = {1 << 20};
  auto with = [&](auto change) {
    CollectiveSweepRequest c = r;
    change(c);
    return field_of(c);
  };
  EXPECT_EQ(with([](auto& c) { c.op = "allreduce"; }), sweep_field::op);
  EXPECT_EQ(with([](auto& c) { c.dtype = "flaot"; }), sweep_field::dtype);
  EXPECT_EQ(with([](auto& c) { c.redop = "summ"; }), sweep_field::redop);
  EXPECT_EQ(with([](auto& c) { c.algo = "Rnig"; }), sweep_field::algo);
  EXPECT_EQ(with([](auto& c) { c.proto = "LL12"; }), sweep_field::proto);
  EXPECT_EQ(with([](auto& c) { c.engine = "fast"; }), sweep_field::engine);
  EXPECT_EQ(with([](auto& c) { c.ranks = 1; }), sweep_field::ranks);
  EXPECT_EQ(with([](auto& c) { c.root = 16; }), sweep_field::root);
  EXPECT_EQ(with([](auto& c) { c.gpus_per_process = 9; }), sweep_field::gpus_per_process);
  EXPECT_EQ(with([](auto& c) { c.sizes = {1}; }), sweep_field::sizes);
  EXPECT_EQ(with([](auto& c) { c.env = {"NCCL_ALGO=Rnig"}; }), sweep_field::env);
  EXPECT_EQ(with([](auto& c) { c.env = {"NCCL_ALGO"}; }), sweep_field::env);
  EXPECT_EQ(with([](auto&) {}), "(accepted)");
}

TEST(CollectiveSweep, SizeStepsAreNcclTestsSweep) {
  EXPECT_EQ(size_steps(8, 64, 2, 0), (std::vector<double>{8, 16, 32, 64}));
  EXPECT_EQ(size_steps(1024, 4096, 2, 1024), (std::vector<double>{1024, 2048, 3072, 4096}));
  EXPECT_EQ(size_steps(64, 64, 2, 0), (std::vector<double>{64}));
  EXPECT_THROW((void)size_steps(1, 1e9, 2, 1), InputError);
}

}  // namespace
}  // namespace gf::comm
