// Issue 34, the planner's slice: caps the planner meets in seconds, an incomplete or tampered
// results store said as such, a read-only store read, outputs that would replace inputs refused,
// outputs written whole (no 0-byte file, no planted symlink followed), and price overrides and
// validation rows refused at their line.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/output_files.hpp"
#include "core/error.hpp"
#include "plan/plan_spec.hpp"
#include "plan/price_catalog.hpp"
#include "scratch_dir.hpp"
#include "test_support.hpp"
#include "validate/serving_validation.hpp"
#include "validate/training_validation.hpp"

namespace {

using gf::test::run_cli;
using gf::test::ScratchDir;

const std::string kPlan = gf::test::tiny_training_plan("[1, 2, 4]");

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs one SQL statement on a results database, as a user editing it by hand would.
void sql(const std::string& db, const std::string& statement) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(h, statement.c_str(), nullptr, nullptr, &err);
  const std::string why = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(h);
  ASSERT_EQ(rc, SQLITE_OK) << why;
}

// A plan run into a fresh database in `dir`; returns the database's path.
std::string stored_plan(const ScratchDir& dir) {
  const std::string plan = dir.write("tiny.yaml", kPlan);
  const std::string db = dir.file("tiny.db");
  const auto r = run_cli({"plan", plan, "--db", db, "--quiet"});
  EXPECT_EQ(r.code, 0) << r.err;
  return db;
}

// --- 1. Caps the planner meets in seconds ------------------------------------------------------

TEST(PlanBadInput, GlobalBatchAboveTheCapIsRefusedAtItsLine) {
  ScratchDir dir;
  std::string text = kPlan;
  text.replace(text.find("global_batch: 64"), 16, "global_batch: 16000000");
  const auto r = run_cli({"plan", dir.write("big.yaml", text), "--quiet"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "big.yaml:7")) << r.err;
  EXPECT_TRUE(has(r.err, "global_batch")) << r.err;
  EXPECT_TRUE(has(r.err, "16384")) << r.err;
  // The cap itself is a valid plan.
  text.replace(text.find("16000000"), 8, std::to_string(gf::plan::kMaxGlobalBatch));
  EXPECT_NO_THROW((void)gf::plan::parse_plan(text, "cap.yaml"));
}

TEST(PlanBadInput, TimeToTrainRowWithAHugeGlobalBatchIsRefusedAtItsLine) {
  ScratchDir dir;
  const std::string rows = dir.write("ttt.yaml", R"(rows:
  - id: huge
    model: llama3.1-8b
    tokens: 1e12
    global_batch_tokens: 1e15
    seq: 8192
    preset: dgx-h100
    gpus: 64
    measured_days: 10
    source: test
)");
  const auto r = run_cli({"validate", "--suite", "time-to-train", "--file", rows});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "ttt.yaml:5")) << r.err;
  EXPECT_TRUE(has(r.err, "global_batch_tokens")) << r.err;
}

// --- 2. An incomplete store is never shown as final ----------------------------------------------

TEST(PlanBadInput, ShowOfAnIncompleteStoreSaysSoInTextJsonCsvAndHtml) {
  ScratchDir dir;
  const std::string db = stored_plan(dir);
  const auto complete = run_cli({"plan", "--db", db, "--show", "--format", "json"});
  ASSERT_EQ(complete.code, 0) << complete.err;
  const auto full = nlohmann::json::parse(complete.out);
  EXPECT_TRUE(full["search"]["complete"].get<bool>());
  const long units = full["search"]["candidates_expected"].get<long>();
  ASSERT_GE(units, 2);
  // A search killed part way: one candidate never stored.
  sql(db, "DELETE FROM results WHERE rowid = (SELECT max(rowid) FROM results)");
  const std::string missing = "1 of " + std::to_string(units) + " candidates missing";

  const auto text = run_cli({"plan", "--db", db, "--show"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(has(text.out, "INCOMPLETE")) << text.out;
  EXPECT_TRUE(has(text.out, missing)) << text.out;
  EXPECT_TRUE(has(text.out, "Recommendation: PROVISIONAL")) << text.out;

  const auto json = run_cli({"plan", "--db", db, "--show", "--format", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto a = nlohmann::json::parse(json.out);
  EXPECT_FALSE(a["search"]["complete"].get<bool>());
  EXPECT_EQ(a["search"]["candidates_missing"], 1);
  EXPECT_TRUE(a["recommendation"]["provisional"].get<bool>());
  EXPECT_TRUE(has(a["recommendation"]["headline"].get<std::string>(), "PROVISIONAL"));
  EXPECT_TRUE(a["workloads"][0]["recommendation"]["provisional"].get<bool>());

  const auto csv = run_cli({"plan", "--db", db, "--show", "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_TRUE(has(csv.out, ",provisional,")) << csv.out;
  // Said before the header too, as a comment line a CSV reader skips (comment='#').
  EXPECT_TRUE(csv.out.starts_with("# warning: INCOMPLETE: ")) << csv.out;
  EXPECT_TRUE(has(csv.out, missing)) << csv.out;

  const std::string html = dir.file("report.html");
  ASSERT_EQ(run_cli({"plan", "--db", db, "--show", "--report", html}).code, 0);
  const std::string page = slurp(html);
  EXPECT_TRUE(has(page, "Incomplete search")) << page.substr(0, 2000);
  EXPECT_TRUE(has(page, "Provisional recommendation"));

  // Rerunning the plan finishes the search; the answer is final again.
  ASSERT_EQ(run_cli({"plan", dir.file("tiny.yaml"), "--db", db, "--quiet"}).code, 0);
  const auto done = run_cli({"plan", "--db", db, "--show"});
  EXPECT_FALSE(has(done.out, "INCOMPLETE")) << done.out;
  EXPECT_FALSE(has(done.out, "PROVISIONAL")) << done.out;
}

// --- 3. A read-only store is read -----------------------------------------------------------------

// Runs the CLI as a user without write permission: as root (who may write anything), in a child
// that drops to `nobody`; otherwise in-process.
gf::test::CliResult run_cli_unprivileged(const std::vector<std::string>& args) {
  if (geteuid() != 0) return run_cli(args);
  int fds[2];
  if (pipe(fds) != 0) return {1, "", "pipe failed"};
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(99);
    const auto r = run_cli(args);
    const std::string msg = std::to_string(r.code) + "\n" + r.err + "\n\x1f" + r.out;
    std::size_t at = 0;
    while (at < msg.size()) {
      const ssize_t n = write(fds[1], msg.data() + at, msg.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (msg.empty()) return {1, "", "the unprivileged child failed"};
  gf::test::CliResult r;
  r.code = std::stoi(msg.substr(0, msg.find('\n')));
  const auto sep = msg.find("\n\x1f");
  r.err = msg.substr(msg.find('\n') + 1, sep - msg.find('\n') - 1);
  r.out = msg.substr(sep + 2);
  return r;
}

// Whether another user can reach `dir`: every directory above it searchable by others. A checkout
// inside a 0700 directory (`mktemp -d`) keeps the unprivileged child out of the test's files.
bool reachable_by_others(const std::filesystem::path& dir) {
  for (auto p = dir.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    struct stat st {};
    if (stat(p.c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) return false;
  }
  return true;
}

TEST(PlanBadInput, ShowReadsAReadOnlyStoreInAReadOnlyDirectory) {
  ScratchDir dir;
  if (geteuid() == 0 && !reachable_by_others(dir.path()))
    GTEST_SKIP() << dir.path() << " sits in a directory other users cannot enter, so the unprivileged child "
                 << "(root ignores file modes) cannot open the store";
  const std::string sub = dir.file("ro");
  std::filesystem::create_directory(sub);
  const std::string plan = dir.write("tiny.yaml", kPlan);
  const std::string db = sub + "/tiny.db";
  ASSERT_EQ(run_cli({"plan", plan, "--db", db, "--quiet"}).code, 0);
  const auto expected = run_cli({"plan", "--db", db, "--show", "--format", "csv"});
  ASSERT_EQ(expected.code, 0) << expected.err;
  for (const char* leftover : {"-wal", "-shm"}) std::filesystem::remove(db + leftover);
  chmod(db.c_str(), 0444);
  chmod(sub.c_str(), 0555);
  chmod(dir.path().c_str(), 0755);  // mkdtemp's 0700 would keep the unprivileged reader out
  const auto r = run_cli_unprivileged({"plan", "--db", db, "--show", "--format", "csv"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has(r.err, "not a gpufabric results database")) << r.err;
  EXPECT_EQ(r.out, expected.out);
  // Writing to it (a plan run) says it is read-only, not that it is not a database.
  const auto write = run_cli_unprivileged({"plan", plan, "--db", db, "--quiet"});
  EXPECT_EQ(write.code, 2);
  EXPECT_TRUE(has(write.err, "read-only")) << write.err;
  EXPECT_FALSE(has(write.err, "not a gpufabric results database")) << write.err;
  chmod(sub.c_str(), 0755);
}

TEST(PlanBadInput, ShowSaysWhatIsWrongWithAStoreItCannotRead) {
  ScratchDir dir;
  const auto directory = run_cli({"plan", "--db", dir.path().string(), "--show"});
  EXPECT_EQ(directory.code, 2);
  EXPECT_TRUE(has(directory.err, "not a regular file")) << directory.err;
  const auto text = run_cli({"plan", "--db", dir.write("notes.txt", "just some text, not SQLite\n"), "--show"});
  EXPECT_EQ(text.code, 2);
  EXPECT_TRUE(has(text.err, "not a gpufabric results database")) << text.err;
}

// --- 4. A tampered row is detected and replaced --------------------------------------------------

TEST(PlanBadInput, ATamperedRowIsDetectedReportedAndReplaced) {
  ScratchDir dir;
  const std::string db = stored_plan(dir);
  const auto before = run_cli({"plan", "--db", db, "--show", "--format", "csv"});
  ASSERT_EQ(before.code, 0);
  // One row edited so that it still parses but is not what was computed, one so it does not parse.
  sql(db,
      "UPDATE results SET result = json_set(result, '$.cost_usd', 1) WHERE rowid = (SELECT min(rowid) FROM results)");
  sql(db, "UPDATE results SET result = substr(result, 1, 20) WHERE rowid = (SELECT max(rowid) FROM results)");
  const auto show = run_cli({"plan", "--db", db, "--show", "--format", "json"});
  ASSERT_EQ(show.code, 0) << show.err;
  const auto a = nlohmann::json::parse(show.out);
  EXPECT_FALSE(a["search"]["complete"].get<bool>());
  EXPECT_EQ(a["search"]["rows_failed_checksum"], 2);
  EXPECT_EQ(a["search"]["candidates_missing"], 2);
  // A rerun evaluates them again, says so, and the store holds the computed answer again.
  const auto rerun = run_cli({"plan", dir.file("tiny.yaml"), "--db", db, "--quiet"});
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  EXPECT_TRUE(has(rerun.out, "2 stored candidates failed their checksum")) << rerun.out;
  EXPECT_TRUE(has(rerun.out, "replaced")) << rerun.out;
  EXPECT_EQ(run_cli({"plan", "--db", db, "--show", "--format", "csv"}).out, before.out);
}

// --- 5. An output that is an input is refused ---------------------------------------------------

void expect_refused(const gf::test::CliResult& r, const std::string& out_flag, const std::string& in_flag) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, out_flag)) << r.err;
  EXPECT_TRUE(has(r.err, in_flag)) << r.err;
}

TEST(PlanBadInput, PlanOutputsThatAreInputsAreRefused) {
  ScratchDir dir;
  const std::string plan = dir.write("my.yaml", kPlan);
  const std::string same = dir.file("sub/../my.yaml");
  std::filesystem::create_directory(dir.file("sub"));
  expect_refused(run_cli({"plan", plan, "--report", same, "--quiet"}), "--report", "PLAN");
  expect_refused(run_cli({"plan", plan, "--db", dir.file("./my.yaml"), "--quiet"}), "--db", "PLAN");
  EXPECT_EQ(slurp(plan), kPlan);  // the plan is untouched
  const std::string both = dir.file("x.out");
  expect_refused(run_cli({"plan", plan, "--db", both, "--report", both, "--quiet"}), "--db", "--report");
  EXPECT_FALSE(std::filesystem::exists(both));
  const std::string timeline = dir.write("t.csv", "time_s,policy,gpus_used\n");
  expect_refused(run_cli({"plan", plan, "--report", timeline, "--timeline", timeline, "--quiet"}), "--report",
                 "--timeline");
  // A hard link is the same file too.
  std::filesystem::create_hard_link(plan, dir.file("link.yaml"));
  expect_refused(run_cli({"plan", plan, "--report", dir.file("link.yaml"), "--quiet"}), "--report", "PLAN");
}

TEST(PlanBadInput, OtherCommandsOutputsThatAreInputsAreRefused) {
  ScratchDir dir;
  const std::string log = dir.write("nccl.log", "# nccl-tests\n");
  expect_refused(run_cli({"calibrate", "dgx-a100", "--log", log + ":all_gather", "-o", log}), "-o", "--log");
  EXPECT_EQ(slurp(log), "# nccl-tests\n");
  const std::string jobs = dir.write("jobs.csv", "name,submit_s,duration_s,gpus\n");
  const std::string nodes = dir.write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\n");
  for (const char* out : {"--report", "--timeline", "--jobs-csv"}) {
    expect_refused(run_cli({"schedule", "--trace", jobs, "--nodes-file", nodes, out, jobs}), out, "--trace");
    expect_refused(run_cli({"schedule", "--trace", jobs, "--nodes-file", nodes, out, nodes}), out, "--nodes-file");
  }
  const std::string model = dir.write("m.yaml", "name: m\n");
  expect_refused(run_cli({"train", "dgx-h100", "--model-file", model, "--trace", model}), "--trace", "--model-file");
  const std::string arrivals = dir.write("arrivals.csv", "0,100,10\n");
  expect_refused(
      run_cli({"serve", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--arrivals", arrivals, "--trace", arrivals}),
      "--trace", "--arrivals");
  const std::string profile = dir.write("p.json", "{}");
  expect_refused(run_cli({"probe", "--load", profile, "--save", profile}), "--save", "--load");
  for (const auto& f : {jobs, nodes, model, arrivals, profile}) EXPECT_GT(std::filesystem::file_size(f), 0u) << f;
}

// --- 6. Outputs are written whole -----------------------------------------------------------------

TEST(PlanBadInput, AFailedRunLeavesNoOutputFile) {
  ScratchDir dir;
  const std::string trace = dir.file("trace.json");
  auto r = run_cli({"train", "dgx-h100", "--model", "no-such-model", "--trace", trace});
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(std::filesystem::exists(trace));
  r = run_cli({"serve", "--preset", "dgx-h100", "--model", "no-such-model", "--trace", trace});
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(std::filesystem::exists(trace));
  const std::string overlay = dir.file("overlay.yaml");
  r = run_cli({"calibrate", "dgx-a100", "--log", dir.write("bad.log", "not nccl-tests output\n"), "-o", overlay});
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(std::filesystem::exists(overlay));
  // Nothing but the inputs is left in the directory: no temporary file either.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.path().filename() != "bad.log";
  EXPECT_EQ(files, 0u);
}

TEST(PlanBadInput, OutputsAreWrittenThroughAUniqueTemporaryAndNeverFollowAPlantedSymlink) {
  ScratchDir dir;
  const std::string victim = dir.write("victim.txt", "keep me\n");
  const std::string out = dir.file("out.txt");
  // The old fixed temporary name, planted as a symlink to another file.
  std::filesystem::create_symlink(victim, out + ".tmp");
  gf::cli::write_whole(out, "report\n", "--report");
  gf::cli::check_writable(out, "--report");
  EXPECT_EQ(slurp(victim), "keep me\n");
  EXPECT_EQ(slurp(out), "report\n");
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) entries += !e.path().empty();
  EXPECT_EQ(entries, 3u);  // victim, out and the planted link: no temporary left
  // A directory cannot be replaced by an output.
  try {
    gf::cli::write_whole(dir.path().string(), "x", "--report");
    ADD_FAILURE() << "a directory was accepted as an output";
  } catch (const gf::InputError& e) {
    EXPECT_EQ(e.field(), "--report");
  }
}

// --- 7. Prices and validation rows refused at their line ------------------------------------------

void expect_price_refused(const std::string& prices, const std::string& field, int line) {
  const YAML::Node n = YAML::Load(prices);
  gf::plan::PriceCatalog c = gf::plan::builtin_prices();
  try {
    gf::plan::apply_price_overrides(c, n["prices"], "plan.yaml");
    ADD_FAILURE() << prices << " was accepted";
  } catch (const gf::InputError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_EQ(e.where().line, line) << e.what();
  }
}

TEST(PlanBadInput, PriceOverridesAreReadWholeAndTheirKeysChecked) {
  expect_price_refused("prices:\n  gpus:\n    h100-sxm5: \"30000usd\"\n", "prices.gpus.h100-sxm5", 3);
  expect_price_refused("prices:\n  optics:\n    400G: 900\n", "prices.optics.400G", 3);
  expect_price_refused("prices:\n  optics:\n    -400: 900\n", "prices.optics.-400", 3);
  expect_price_refused("prices:\n  servers:\n    nvswtich: 60000\n", "prices.servers.nvswtich", 3);
  // Through the CLI: exit 2, naming the field and the file's line.
  ScratchDir dir;
  const auto r =
      run_cli({"plan", dir.write("p.yaml", std::string(kPlan) + "prices:\n  gpus:\n    a100-sxm4-80gb: 30000usd\n"),
               "--quiet"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "p.yaml:13")) << r.err;
  EXPECT_TRUE(has(r.err, "prices.gpus.a100-sxm4-80gb")) << r.err;
  // Valid overrides still apply.
  gf::plan::PriceCatalog c = gf::plan::builtin_prices();
  gf::plan::apply_price_overrides(c, YAML::Load("optics: {400: 900}\ngpus: {h100-sxm5: 25000}"), "plan.yaml");
  EXPECT_EQ(c.optic(400).usd, 900);
  EXPECT_EQ(c.gpu("h100-sxm5").usd, 25000);
}

constexpr const char* kTrainingRow = R"(rows:
  - id: row
    model: llama3.1-8b
    gpu: h100-sxm5
    gpus: 8
    tp: 1
    precision: bf16
    recompute: none
    measured_mfu: 0.4
)";

void expect_row_refused(const std::string& field, const std::string& value, bool serving) {
  std::string text = kTrainingRow;
  const std::string was = field == "precision" ? "precision: bf16" : "recompute: none";
  text.replace(text.find(was), was.size(), field + ": " + value);
  try {
    if (serving) {
      (void)gf::validate::check_serving(text, "rows.yaml", gf::test::catalog());
    } else {
      (void)gf::validate::check_training(text, "rows.yaml", gf::test::catalog());
    }
    ADD_FAILURE() << field << ": " << value << " was accepted";
  } catch (const gf::InputError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_EQ(e.where().file, "rows.yaml") << e.what();
    EXPECT_GT(e.where().line, 1) << e.what();
    EXPECT_FALSE(e.valid().empty()) << e.what();
  }
}

TEST(PlanBadInput, ValidationRowsRefuseAnUnknownPrecisionOrRecompute) {
  expect_row_refused("precision", "bf61", false);
  expect_row_refused("recompute", "partial", false);
  expect_row_refused("precision", "fp9", true);
  expect_row_refused("kv_dtype", "fp9", true);
  expect_row_refused("scenario", "batch", true);
  // The built-in rows are all known values.
  EXPECT_FALSE(gf::validate::check_training(gf::test::catalog()).empty());
}

}  // namespace
