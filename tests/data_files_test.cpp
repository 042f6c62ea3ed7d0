// The one lookup of the embedded data files (src/data/files.hpp) agrees with the list it indexes.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "data/embedded.hpp"
#include "data/files.hpp"

namespace gf {
namespace {

TEST(DataFiles, FindAndFileReturnEveryEmbeddedText) {
  ASSERT_FALSE(data::embedded_files().empty());
  for (const auto& f : data::embedded_files()) {
    const auto found = data::find(f.path);
    ASSERT_TRUE(found) << f.path;
    EXPECT_EQ(found->data(), f.text.data()) << f.path;  // the same literal, not a copy
    EXPECT_EQ(data::file(f.path), f.text) << f.path;
  }
}

TEST(DataFiles, AbsentPathIsNulloptOrAnInternalErrorNamingIt) {
  EXPECT_FALSE(data::find("data/comm/no-such-file.yaml"));
  EXPECT_FALSE(data::find("data/comm"));  // a directory is not a file
  try {
    (void)data::file("data/comm/no-such-file.yaml");
    FAIL() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("data/comm/no-such-file.yaml"), std::string::npos) << e.what();
  }
}

TEST(DataFiles, FilesUnderKeepsPathOrderAndFiltersByPrefixAndSuffix) {
  std::vector<std::string> want;
  for (const auto& f : data::embedded_files())
    if (f.path.starts_with("data/presets/") && f.path.ends_with(".yaml")) want.emplace_back(f.path);
  ASSERT_GT(want.size(), 3u);
  std::vector<std::string> got;
  for (const auto& f : data::files_under("data/presets/", ".yaml")) got.emplace_back(f.path);
  EXPECT_EQ(got, want);
  // A prefix that is not a directory matches file names too (data/validation/serving*.yaml).
  for (const auto& f : data::files_under("data/validation/serving")) EXPECT_TRUE(f.path.ends_with(".yaml")) << f.path;
  EXPECT_FALSE(data::files_under("data/validation/serving").empty());
  EXPECT_TRUE(data::files_under("data/presets/", ".json").empty());
  EXPECT_EQ(data::files_under("").size(), data::embedded_files().size());
}

}  // namespace
}  // namespace gf
