#pragma once
// Copy measurements as calibration input: host<->GPU and GPU<->GPU copy bandwidths from
// nvbandwidth's output and from `gpufabric probe --save` profiles, each tied to the path the
// model routes (host memory of the GPU's own socket, or a GPU pair), and a profile's NCCL
// all_reduce as one nccl-tests row.
#include <string>
#include <vector>

#include "calib/nccl_tests_log.hpp"
#include "calib/nvbandwidth_output.hpp"
#include "probe/profile.hpp"

namespace gf::calib {

enum class CopyPath {
  h2d,  // host memory (the GPU's own socket) -> GPU, copy engine
  d2h,  // GPU -> host memory, copy engine
  d2d,  // GPU -> GPU, copy engine, peer-to-peer
};

struct CopyRow {
  CopyPath path = CopyPath::h2d;
  int src = 0;            // GPU index (h2d: the destination GPU)
  int dst = 0;            // GPU index (d2h: the source GPU)
  bool pageable = false;  // h2d/d2h from pageable (not pinned) host memory
  bool staged = false;    // d2d without peer access: the driver staged it through host memory
  double measured_GBps = 0;
  int line = 0;       // where in the file (0: no line, e.g. a JSON profile)
  std::string where;  // what to call the row in an error (row 2 column 5, gpu.peers[3])
};

// One group of rows whose error is reported together: an nvbandwidth testcase, or one kind of
// copy in a profile.
struct CopyLog {
  std::string file;
  std::string label;  // host_to_device_memcpy_ce, h2d pinned, p2p, ...
  std::vector<CopyRow> rows;
};

struct CalibrationInputs {
  std::vector<NcclTestsLog> nccl;
  std::vector<CopyLog> copies;
  std::vector<std::string> notes;  // what was skipped, and why
};

// The nvbandwidth testcases the model predicts (unidirectional copy-engine copies); the others
// (bidirectional, SM kernels, all-to-one, latency, multinode) are skipped with a note.
void add_nvbandwidth(const NvbandwidthOutput& out, CalibrationInputs& in);

// A profile's pinned and pageable H2D/D2H curves (their largest size), its GPU-to-GPU matrix
// (peer or staged) and its NCCL all_reduce results (single node, and across nodes from --mpi).
// A profile with none of them is an InputError naming the file.
void add_profile(const probe::Profile& p, const std::string& file, CalibrationInputs& in);

}  // namespace gf::calib
