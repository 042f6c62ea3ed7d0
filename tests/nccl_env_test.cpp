// NCCL_ALGO / NCCL_PROTO as the lists NCCL reads, and the NCCL environment a network's vendor
// setup exports for every job (GCP's TCPX and TCPXO profiles).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "comm/model.hpp"
#include "test_support.hpp"

using gf::test::preset;

namespace gf::comm {
namespace {

topo::ClusterOverrides on(long nodes, const std::string& network = {}) {
  topo::ClusterOverrides o;
  o.nodes = nodes;
  if (!network.empty()) o.network = network;
  return o;
}

NcclConfig env(std::initializer_list<const char*> assignments) {
  NcclConfig cfg;
  for (const char* a : assignments) apply_nccl_assignment(cfg, a, nullptr);
  return cfg;
}

CollectiveResult all_reduce(const Communicator& c, double size) {
  CollectiveRequest r;
  r.size = size;
  r.engine = Engine::analytic;
  return predict(c, r);
}

TEST(NcclAlgoList, ReadsNamesAndExclusionsAsNcclDoes) {
  EXPECT_EQ(parse_algo_list("Ring,Tree"), (std::vector<Algo>{Algo::ring, Algo::tree}));
  EXPECT_EQ(parse_algo_list("tree, ring"), (std::vector<Algo>{Algo::ring, Algo::tree}));
  const auto most = parse_algo_list("^NVLS,NVLSTree");
  ASSERT_TRUE(most);
  EXPECT_EQ(std::count(most->begin(), most->end(), Algo::nvls), 0);
  EXPECT_EQ(std::count(most->begin(), most->end(), Algo::nvls_tree), 0);
  EXPECT_EQ(std::count(most->begin(), most->end(), Algo::ring), 1);
  EXPECT_FALSE(parse_algo_list("Ring,Butterfly"));
  EXPECT_FALSE(parse_algo_list(""));
  EXPECT_FALSE(parse_algo_list("^Ring,Tree,NVLS,NVLSTree,CollNetDirect,CollNetChain,PAT,Hierarchical"));
  EXPECT_EQ(parse_proto_list("^LL"), (std::vector<Proto>{Proto::ll128, Proto::simple}));
  EXPECT_FALSE(parse_proto_list("LL256"));
}

TEST(NcclAlgoList, AListNarrowsTheTunersChoice) {
  const auto t = preset("dgx-h100", on(2));
  const Communicator free(t, 0);
  EXPECT_EQ(all_reduce(free, 1 << 30).algo, Algo::nvls_tree);  // what NCCL picks by default here
  const Communicator no_nvls(t, 0, env({"NCCL_ALGO=Ring,Tree"}));
  for (const double s : {8.0, 65536.0, 16777216.0, 1073741824.0}) {
    const auto r = all_reduce(no_nvls, s);
    EXPECT_TRUE(r.algo == Algo::ring || r.algo == Algo::tree) << s;
  }
  const Communicator no_ll(t, 0, env({"NCCL_PROTO=^LL,LL128"}));
  EXPECT_EQ(all_reduce(no_ll, 1024).proto, Proto::simple);
  const Communicator off(t, 0, env({"NCCL_NVLS_ENABLE=0"}));
  EXPECT_FALSE(off.nvls_capable());
  EXPECT_NE(all_reduce(off, 1 << 30).algo, Algo::nvls_tree);
}

TEST(NcclAlgoList, BadListsAreErrorsWhereTheyAreGiven) {
  NcclConfig cfg;
  EXPECT_THROW(apply_nccl_assignment(cfg, "NCCL_ALGO=Ring,Butterfly", nullptr), InputError);
  EXPECT_THROW(apply_nccl_assignment(cfg, "NCCL_PROTO=^LL,LL128,Simple", nullptr), InputError);
  EXPECT_THROW(apply_nccl_assignment(cfg, "NCCL_P2P_PXN_LEVEL=3", nullptr), InputError);
}

TEST(NetworkProfile, TcpxoJobsRunUnderGooglesVariables) {
  const auto t = preset("dgx-h100", on(2, "gcp-tcpxo"));
  const Communicator c(t, 0);
  ASSERT_TRUE(c.env().algo);
  EXPECT_EQ(*c.env().algo, "Ring,Tree");
  EXPECT_EQ(c.env().min_channels, 4);
  EXPECT_TRUE(c.env().nvls_disable);
  EXPECT_FALSE(c.nvls_capable());
  EXPECT_TRUE(std::any_of(c.notes().begin(), c.notes().end(),
                          [](const std::string& n) { return n.find("gcp-tcpxo") != std::string::npos; }));
  const auto r = all_reduce(c, 1 << 20);
  EXPECT_TRUE(r.algo == Algo::ring || r.algo == Algo::tree);
  EXPECT_EQ(r.proto, Proto::simple);
}

TEST(NetworkProfile, TheUsersOwnSettingWinsAndOneNodeNeedsNone) {
  const auto t = preset("dgx-h100", on(2, "gcp-tcpxo"));
  const Communicator mine(t, 0, env({"NCCL_ALGO=Ring"}));
  EXPECT_EQ(*mine.env().algo, "Ring");
  EXPECT_EQ(all_reduce(mine, 1 << 20).algo, Algo::ring);
  const auto one = preset("dgx-h100", on(1, "gcp-tcpxo"));
  const Communicator alone(one, 0);
  EXPECT_FALSE(alone.env().algo);
  EXPECT_TRUE(alone.nvls_capable());
}

TEST(NetworkProfile, TcpxTurnsPxnOff) {
  const auto t = preset("dgx-h100", on(2, "gcp-tcpx"));
  const Communicator c(t, 0);
  EXPECT_TRUE(c.env().pxn_disable);
  EXPECT_EQ(all_reduce(c, 1 << 20).algo, Algo::ring);
}

}  // namespace
}  // namespace gf::comm
