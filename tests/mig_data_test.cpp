// mig.yaml is read once (hw::mig_data) and the scheduler's slots and the step models' profiles
// are views of that one table.
#include <gtest/gtest.h>

#include "hw/catalog.hpp"
#include "hw/mig_data.hpp"
#include "sched/mig_layout.hpp"
#include "work/mig_profile.hpp"

namespace gf {
namespace {

TEST(MigData, LoadedOnceAndSharedBySchedAndWork) {
  const auto& all = hw::mig_data();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(&all, &hw::mig_data());  // the same table on every call
  EXPECT_EQ(hw::mig_data_of("no-such-gpu"), nullptr);
  const hw::Catalog catalog = hw::Catalog::builtin();
  std::vector<std::string> gpus;
  for (const auto& g : all) {
    gpus.push_back(g.gpu);
    EXPECT_EQ(hw::mig_data_of(g.gpu), &g);
    ASSERT_FALSE(g.profiles.empty()) << g.gpu;
    const sched::MigTable* table = sched::mig_table(g.gpu);
    ASSERT_NE(table, nullptr) << g.gpu;
    ASSERT_EQ(table->profiles.size(), g.profiles.size()) << g.gpu;
    const hw::GpuSpec& spec = catalog.gpu(g.gpu);
    EXPECT_EQ(work::mig_profile_names(spec), table->names()) << g.gpu;
    for (std::size_t i = 0; i < g.profiles.size(); ++i) {
      const auto& p = g.profiles[i];
      const auto& slots = table->profiles[i];
      EXPECT_EQ(slots.name, p.name);
      EXPECT_EQ(slots.compute_slices, p.compute_slices);
      EXPECT_EQ(slots.memory_slices, p.memory_slices);
      EXPECT_EQ(slots.max_instances, p.max_instances);
      EXPECT_EQ(slots.starts, p.starts);
      const work::MigProfile m = work::mig_profile(spec, p.name);
      EXPECT_EQ(m.sms, p.sm_count) << p.name;
      EXPECT_DOUBLE_EQ(m.compute_fraction, p.compute_fraction) << p.name;
      EXPECT_DOUBLE_EQ(m.memory_fraction, p.memory_slices / 8.0) << p.name;
      EXPECT_DOUBLE_EQ(m.memory_bytes, p.lgip_mem_GiB * 1024 * 1024 * 1024) << p.name;
      EXPECT_EQ(m.estimated, p.lgip_estimate) << p.name;
      EXPECT_EQ(m.max_instances, p.max_instances) << p.name;
    }
  }
  EXPECT_EQ(sched::mig_gpus(), gpus);
}

TEST(MigData, H100SxmThreeG40GbIsTheLgipRow) {
  // data/compute/mig.yaml, h100-sxm5: 3g.40gb has 60 of 132 SMs and 39.5 GiB, starts {0, 4}.
  const hw::GpuMigData* h100 = hw::mig_data_of("h100-sxm5");
  ASSERT_NE(h100, nullptr);
  const hw::MigProfileData* p = nullptr;
  for (const auto& q : h100->profiles)
    if (q.name == "3g.40gb") p = &q;
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->sm_count, 60);
  EXPECT_DOUBLE_EQ(p->lgip_mem_GiB, 39.5);
  EXPECT_EQ(p->starts, (std::vector<int>{0, 4}));
  EXPECT_EQ(p->compute_slices, 3);
  EXPECT_EQ(p->memory_slices, 4);
  EXPECT_FALSE(p->lgip_estimate);
}

}  // namespace
}  // namespace gf
