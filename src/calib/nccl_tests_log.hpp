#pragma once
// nccl-tests output as a user already has it: the table all_reduce_perf & co. print, with the
// header lines that say how it ran (nGpus, graph).
#include <string>
#include <vector>

namespace gf::calib {

struct LogRow {
  double size_bytes = 0;
  double time_us = 0;  // out-of-place
  double busbw_GBps = 0;
  int line = 0;
};

struct NcclTestsLog {
  std::string file;
  std::string op;            // all_reduce, all_gather, ... (from the header or given)
  int gpus_per_process = 1;  // "nGpus N" (nccl-tests -g)
  bool cuda_graph = false;   // "graph: 1" (nccl-tests -G)
  long ranks = 0;            // ranks of the run; 0: as the calibration's --gpus (a probe profile says)
  std::string label;         // how the residuals name it when not by op (a profile's "all_reduce (gpu.nccl)")
  std::vector<LogRow> rows;
};

// Parses the text nccl-tests printed. `op` may be empty: it is then read from the
// "Collective test starting: X_perf" line or the file's name (all_reduce_perf.log). A file
// with no table rows, or whose op cannot be told, is an InputError naming the file (and line).
NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& file, const std::string& op);

}  // namespace gf::calib
