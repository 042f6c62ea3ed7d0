// One name table per enum (core/enum_names.hpp): every value round-trips through its table, an
// alias parses but is never printed or listed, and an unknown name is an InputError listing the
// canonical names.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "comm/collective.hpp"
#include "comm/model.hpp"
#include "comm/nccl_config.hpp"
#include "core/enum_names.hpp"
#include "hw/network.hpp"
#include "plan/plan_spec.hpp"
#include "sched/autoscale.hpp"
#include "topo/cluster_spec.hpp"
#include "work/inference_cost.hpp"
#include "work/moe_overlap.hpp"
#include "work/parallel_layout.hpp"
#include "work/pipeline.hpp"
#include "work/training_memory.hpp"

namespace gf {
namespace {

// Every enumerator from 0 to `count` - 1 has exactly one canonical name, which parses back to
// it; every alias parses to a value that has a canonical name; no spelling is used twice.
template <typename E, std::size_t N>
void expect_round_trip(const EnumNames<E, N>& table, int count, const char* what) {
  std::set<std::string> seen;
  for (const auto& e : table) EXPECT_TRUE(seen.insert(e.name).second) << what << ": '" << e.name << "' twice";
  for (int i = 0; i < count; ++i) {
    const auto v = static_cast<E>(i);
    int canonical = 0;
    for (const auto& e : table) canonical += (e.value == v && !e.alias) ? 1 : 0;
    EXPECT_EQ(canonical, 1) << what << " value " << i;
    const std::string name = name_of(table, v);
    EXPECT_NE(name, "?") << what << " value " << i;
    EXPECT_EQ(parse_name(table, name), v) << what << ": " << name;
  }
  for (const auto& e : table) {
    EXPECT_EQ(parse_name(table, e.name), e.value) << what << ": " << e.name;
    if (e.alias) {
      EXPECT_STRNE(name_of(table, e.value), e.name) << what << ": alias printed";
    }
  }
  EXPECT_EQ(names(table).size(), static_cast<std::size_t>(count)) << what;
}

TEST(EnumNames, EveryValueRoundTripsThroughItsTable) {
  expect_round_trip(topo::kGpuFabricNames, 3, "GpuFabric");
  expect_round_trip(topo::kFabricKindNames, 3, "FabricKind");
  expect_round_trip(work::kPrecisionNames, 4, "Precision");
  expect_round_trip(work::kRecomputeNames, 4, "Recompute");
  expect_round_trip(work::kAttentionNames, 4, "Attention");
  expect_round_trip(work::kKernelsNames, 2, "Kernels");
  expect_round_trip(work::kMoeOverlapNames, 4, "MoeOverlap");
  expect_round_trip(work::kWeightFormatNames, 5, "WeightFormat");
  expect_round_trip(work::kModelKindNames, 3, "ModelKind");
  expect_round_trip(work::kAxisNames, 5, "Axis");
  expect_round_trip(work::kDataSourceNames, 3, "DataSource");
  expect_round_trip(work::kDecodeOnNames, 2, "DecodeOn");
  expect_round_trip(work::kHostBuffersNames, 2, "HostBuffers");
  expect_round_trip(comm::kEngineNames, 3, "Engine");
  expect_round_trip(sched::kHpaMetricNames, 3, "HpaMetric");
  expect_round_trip(hw::kLoadBalancingNames, 2, "LoadBalancing");
  expect_round_trip(comm::kOpNames, 7, "Op");
  expect_round_trip(comm::kProtoNames, comm::kProtoCount, "Proto");
  expect_round_trip(comm::kPathLevelNames, 6, "PathLevel");
  expect_round_trip(plan::kObjectiveNames, 2, "Objective");
}

TEST(EnumNames, NcclNamesParseInAnyCase) {
  // NCCL reads NCCL_PROTO and NCCL_P2P_LEVEL without regard to case; nccl-tests' op names too.
  EXPECT_EQ(comm::parse_proto("ll128"), comm::Proto::ll128);
  EXPECT_EQ(comm::parse_proto("SIMPLE"), comm::Proto::simple);
  EXPECT_EQ(comm::parse_op("All_Reduce"), comm::Op::all_reduce);
  EXPECT_EQ(parse_name_nocase(comm::kPathLevelNames, "pix"), comm::PathLevel::pix);
  EXPECT_FALSE(parse_name_nocase(comm::kPathLevelNames, "pi"));
  EXPECT_FALSE(parse_name_nocase(comm::kPathLevelNames, "PIXX"));
  EXPECT_FALSE(comm::parse_proto("LL64"));
  EXPECT_STREQ(comm::to_string(comm::Proto::ll128), "LL128");
  EXPECT_EQ(comm::op_names(), names(comm::kOpNames));
}

TEST(EnumNames, ToStringReadsTheTable) {
  EXPECT_STREQ(topo::to_string(topo::FabricKind::fat_tree), "fat-tree");
  EXPECT_STREQ(topo::to_string(topo::GpuFabric::nvlink_mesh), "nvlink-mesh");
  EXPECT_STREQ(work::to_string(work::Recompute::selective_op), "selective-op");
  EXPECT_STREQ(work::to_string(work::Precision::bf16), "bf16");
  EXPECT_STREQ(comm::to_string(comm::Engine::automatic), "auto");
  EXPECT_STREQ(work::to_string(work::DataSource::local_nvme), "nvme");
}

TEST(EnumNames, AliasParsesButIsNeitherPrintedNorListed) {
  // tf32 runs (validation rows of fp32 training on tensor cores) are modelled as fp32.
  EXPECT_EQ(parse_name(work::kPrecisionNames, "tf32"), work::Precision::fp32);
  EXPECT_STREQ(work::to_string(work::Precision::fp32), "fp32");
  EXPECT_EQ(names(work::kPrecisionNames), (std::vector<std::string>{"fp32", "fp16", "bf16", "fp8"}));
  EXPECT_EQ(spellings(work::kPrecisionNames), (std::vector<std::string>{"fp32", "tf32", "fp16", "bf16", "fp8"}));
}

TEST(EnumNames, UnknownNameIsAnInputErrorListingTheValidOnes) {
  EXPECT_FALSE(parse_name(topo::kFabricKindNames, "fat_tree"));
  EXPECT_FALSE(parse_name(topo::kFabricKindNames, ""));
  EXPECT_FALSE(parse_name(topo::kFabricKindNames, "Single"));  // exact, as every reader was
  try {
    (void)parse_name_or_throw(topo::kFabricKindNames, "torus", "--fabric");
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--fabric");
    EXPECT_EQ(e.problem(), "got 'torus'");
    EXPECT_EQ(e.valid(), "single, fat-tree, rail");
  }
  try {
    (void)parse_name_or_throw(work::kPrecisionNames, "fp64", "precision", SourceLocation{"plan.yaml", 7, 3});
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "plan.yaml");
    EXPECT_EQ(e.where().line, 7);
    EXPECT_EQ(e.valid(), "fp32, fp16, bf16, fp8");  // the alias is not offered
  }
}

TEST(EnumNames, OutOfRangeValuePrintsQuestionMark) {
  EXPECT_STREQ(topo::to_string(static_cast<topo::FabricKind>(9)), "?");
}

}  // namespace
}  // namespace gf
