#include "calib/copy_measurements.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "comm/collective.hpp"
#include "core/error.hpp"

namespace gf::calib {

namespace {

struct Known {
  const char* name;
  CopyPath path;
  bool row_is_source;  // d2d: data moves from the row's GPU to the column's
};

// nvbandwidth v0.8 testcases_ce.cpp: host_to_device copies host -> column GPU with the CPU
// affine to that GPU (setOptimalCpuAffinity), device_to_host the reverse; read_ce copies from the
// column's GPU into the row's ("copy from the peer device to the target using the target's
// context"), write_ce from the row's GPU to the column's. The printed arrows do not say this
// reliably (they changed between versions), so the testcase's name decides.
constexpr Known kKnown[] = {
    {"host_to_device_memcpy_ce", CopyPath::h2d, true},
    {"device_to_host_memcpy_ce", CopyPath::d2h, true},
    {"device_to_device_memcpy_read_ce", CopyPath::d2d, false},
    {"device_to_device_memcpy_write_ce", CopyPath::d2d, true},
};

std::string why_skipped(const std::string& name) {
  if (name.find("multinode") != std::string::npos) return "a multi-node NVLink testcase (not modelled)";
  if (name.find("latency") != std::string::npos) return "a latency testcase";
  if (name.find("bidirectional") != std::string::npos)
    return "bidirectional: the model has no duplex penalty to fit against it";
  if (name.ends_with("_sm")) return "an SM-kernel copy: the model's copy paths are copy-engine DMA";
  if (name.find("all") != std::string::npos) return "concurrent copies from or to several GPUs";
  if (name == "device_local_copy") return "a copy inside one GPU's memory";
  return "not a testcase gpufabric knows";
}

}  // namespace

void add_nvbandwidth(const NvbandwidthOutput& out, CalibrationInputs& in) {
  for (const auto& note : out.notes) in.notes.push_back(out.file + ":" + note);
  for (const auto& m : out.matrices) {
    const Known* k = nullptr;
    for (const auto& candidate : kKnown)
      if (m.testcase == candidate.name) k = &candidate;
    if (k == nullptr) {
      in.notes.push_back(
          fmt::format("{}:{}: skipped {}: {}", out.file, m.line,
                      m.testcase.empty() ? "a matrix without a testcase name" : m.testcase,
                      m.testcase.empty() ? "no 'Running X.' or 'SUM X' line names it" : why_skipped(m.testcase)));
      continue;
    }
    CopyLog log{out.file, m.testcase, {}};
    for (const auto& row : m.rows) {
      for (std::size_t c = 0; c < row.cells.size(); ++c) {
        const auto& cell = row.cells[c];
        const int col = m.columns[c];
        // N/A: no peer access; 0.00 on the diagonal in older versions: not measured.
        if (!cell || *cell <= 0) continue;
        if (k->path == CopyPath::d2d && row.label == col) continue;
        CopyRow r;
        r.path = k->path;
        r.line = row.line;
        r.where = fmt::format("row {} column {}", row.label, col);
        r.measured_GBps = *cell;
        if (k->path == CopyPath::d2d) {
          r.src = k->row_is_source ? row.label : col;
          r.dst = k->row_is_source ? col : row.label;
        } else {
          r.src = r.dst = col;  // the host row is the GPU's own socket (nvbandwidth binds it there)
        }
        log.rows.push_back(r);
      }
    }
    if (log.rows.empty()) {
      in.notes.push_back(fmt::format("{}:{}: {} has no measured cell (all N/A)", out.file, m.line, m.testcase));
      continue;
    }
    in.copies.push_back(std::move(log));
  }
}

void add_profile(const probe::Profile& p, const std::string& file, CalibrationInputs& in) {
  const std::size_t copies_before = in.copies.size();
  const std::size_t nccl_before = in.nccl.size();
  if (p.gpu) {
    const auto& g = *p.gpu;
    std::vector<CopyLog> by_kind;
    auto log_for = [&](const std::string& label) -> CopyLog& {
      for (auto& l : by_kind)
        if (l.label == label) return l;
      by_kind.push_back({file, label, {}});
      return by_kind.back();
    };
    for (std::size_t i = 0; i < g.copies.size(); ++i) {
      const auto& c = g.copies[i];
      if (c.direction != "h2d" && c.direction != "d2h") continue;  // d2d is a copy inside one GPU
      if (c.points.empty()) continue;
      // The largest size: the copy's steady rate, as nvbandwidth's 512 MiB copies measure it.
      const auto& best =
          *std::max_element(c.points.begin(), c.points.end(),
                            [](const probe::CopyPoint& a, const probe::CopyPoint& b) { return a.size < b.size; });
      if (!(best.bandwidth.value() > 0)) continue;
      CopyRow r;
      r.path = c.direction == "h2d" ? CopyPath::h2d : CopyPath::d2h;
      r.src = r.dst = c.gpu;
      r.pageable = c.memory == "pageable";
      r.measured_GBps = best.bandwidth.value() / 1e9;
      r.where = fmt::format("gpu.copies[{}]", i);
      log_for(c.direction + " " + (r.pageable ? "pageable" : "pinned")).rows.push_back(r);
    }
    for (std::size_t i = 0; i < g.peers.size(); ++i) {
      const auto& pc = g.peers[i];
      if (pc.src == pc.dst || !(pc.bandwidth.value() > 0)) continue;
      CopyRow r;
      r.path = CopyPath::d2d;
      r.src = pc.src;
      r.dst = pc.dst;
      r.staged = !pc.peer_access;
      r.measured_GBps = pc.bandwidth.value() / 1e9;
      r.where = fmt::format("gpu.peers[{}]", i);
      log_for(r.staged ? "p2p staged" : "p2p").rows.push_back(r);
    }
    for (auto& l : by_kind) in.copies.push_back(std::move(l));
  }
  // gpu.nccl: one process drives every GPU (ncclCommInitAll), as nccl-tests -g N does;
  // mpi.nccl: one GPU per rank.
  auto add_collective = [&](const std::optional<probe::CollectiveResult>& c, const std::string& where,
                            bool one_process) {
    if (!c) return;
    if (c->library != "nccl" || !comm::parse_op(c->op) || c->ranks < 2 || !(c->time.value() > 0) ||
        !(c->size.value() > 0)) {
      in.notes.push_back(fmt::format("{}: {} skipped ({} {} over {} ranks)", file, where, c->library, c->op, c->ranks));
      return;
    }
    NcclTestsLog log;
    log.file = file;
    log.op = c->op;
    log.ranks = c->ranks;
    log.label = c->op + " (" + where + ")";
    log.gpus_per_process = one_process ? static_cast<int>(std::min(c->ranks, 72)) : 1;
    log.rows.push_back({c->size.value(), c->time.value() * 1e6, c->busbw.value() / 1e9, 0});
    in.nccl.push_back(std::move(log));
  };
  if (p.gpu) add_collective(p.gpu->nccl, "gpu.nccl", true);
  if (p.mpi) add_collective(p.mpi->nccl, "mpi.nccl", false);
  if (in.copies.size() == copies_before && in.nccl.size() == nccl_before) {
    throw InputError({file, 0, 0}, "gpu",
                     "the profile has no GPU copy or NCCL measurement to calibrate with (was it saved on a "
                     "machine without CUDA?)",
                     "a profile saved by 'gpufabric probe --save' on a machine with GPUs");
  }
}

}  // namespace gf::calib
