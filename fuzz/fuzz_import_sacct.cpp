// `gpufabric import sacct`: the same bytes read as sacct --parsable2 output. What imports must be
// a trace `schedule --trace` reads back whole (an InputError there is a bug of the importer, so
// it aborts), with every job's GPUs within the reader's bounds.
#include "fuzz_support.hpp"
#include "sched/csv_table.hpp"
#include "sched/import/sacct_trace.hpp"
#include "sched/import/trace_writer.hpp"
#include "sched/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = gf::fuzz::text_of(data, size);
  std::vector<gf::sched::Job> jobs;
  gf::fuzz::expect_clean([&] { jobs = gf::sched::import_sacct(text, "fuzz.txt").jobs; });
  if (jobs.empty()) return 0;
  try {
    const auto back = gf::sched::parse_trace(gf::sched::parse_csv(gf::sched::trace_csv(jobs), "out.csv"), false);
    if (back.jobs.size() != jobs.size()) std::abort();
  } catch (const gf::InputError&) {
    std::abort();
  }
  return 0;
}
