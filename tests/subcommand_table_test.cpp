// The command line is a table of subcommands (cli/subcommands.cpp) run through cli::execute, the
// function the executable and the Python module share.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <set>
#include <sstream>
#include <string>

#include "cli/commands.hpp"
#include "cli/subcommand.hpp"
#include "core/error.hpp"
#include "scratch_dir.hpp"
#include "test_support.hpp"

namespace gf::cli {
namespace {

TEST(SubcommandTable, EveryEntryIsListedInOrderAndAnswersHelp) {
  std::set<std::string> seen;
  std::ostringstream err;
  const std::string help = execute({"--help"}, err);
  std::size_t at = 0;
  for (const Subcommand& s : subcommands()) {
    EXPECT_TRUE(seen.insert(s.name).second) << "twice in the table: " << s.name;
    const std::size_t here = help.find(std::string("  ") + s.name + " ");
    ASSERT_NE(here, std::string::npos) << s.name << " is not in --help";
    EXPECT_GT(here, at) << s.name << " is out of the table's order in --help";
    at = here;
    const auto r = test::run_cli({s.name, "--help"});
    EXPECT_EQ(r.code, 0) << s.name << ": " << r.err;
    EXPECT_NE(r.out.find(s.name), std::string::npos) << s.name;
  }
  EXPECT_TRUE(err.str().empty());
}

TEST(SubcommandTable, ExecuteReturnsWhatTheExecutablePrints) {
  std::ostringstream err;
  const std::string out =
      execute({"collective", "all_reduce", "dgx-h100", "-b", "1M", "-e", "4M", "--format", "json"}, err);
  const auto cli = test::run_cli({"collective", "all_reduce", "dgx-h100", "-b", "1M", "-e", "4M", "--format", "json"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  EXPECT_EQ(out, cli.out);
}

TEST(SubcommandTable, ExecuteThrowsWhatRunPrintsAsExitTwo) {
  std::ostringstream err;
  try {
    (void)execute({"train", "dgx-h100", "--model", "llama3.1-8b", "--tp", "3"}, err);
    FAIL() << "TP 3 on 8 GPUs was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--tp");
    EXPECT_FALSE(e.valid().empty());
  }
  EXPECT_THROW((void)execute({"train", "--tpp", "2"}, err), InputError);
  EXPECT_THROW((void)execute({"collective", "all_reduce", "dgx-h100", "-b"}, err), CLI::ParseError);
}

TEST(SubcommandTable, WarningsGoToTheStreamGiven) {
  const test::ScratchDir dir;
  std::ostringstream err;
  const std::string out =
      execute({"import", "nccl-topo", std::string(GPUFABRIC_TEST_DATA) + "/import/azure-ndv4-topo.xml", "--gpu",
               "a100-sxm4-80gb", "-o", dir.file("c.yaml")},
              err);
  EXPECT_NE(out.find("wrote "), std::string::npos) << out;
  EXPECT_NE(err.str().find("gpufabric: warning: "), std::string::npos) << err.str();
}

}  // namespace
}  // namespace gf::cli
