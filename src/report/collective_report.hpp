#pragma once
// nccl-tests-style output of predicted collectives: the familiar table, or JSON/CSV rows.
#include <string>
#include <vector>

#include "band/error_band.hpp"
#include "comm/collective_sweep.hpp"
#include "comm/communicator_summary.hpp"
#include "comm/model.hpp"
#include "core/messages.hpp"

namespace gf::report {

using CollectiveRow = comm::CollectiveSweepRow;

struct CollectiveHeader {
  std::string op;
  std::string cluster;
  std::string communicator;
  std::string engine;
  // The NCCL environment, overrides and what they changed; a warning starts with "warning: ".
  std::vector<std::string> notes;
  std::vector<std::string> transports;  // per class of edge, as NCCL_DEBUG=INFO names them
  comm::CommunicatorSummary comm;
};

// nccl-tests' "Avg bus bandwidth": the mean busbw over the rows (0 without rows).
double average_busbw_GBps(const std::vector<CollectiveRow>& rows);
// The header's warnings (its "warning: " lines) and then the rows' own, each once, apart from
// the notes: what JSON and CSV give as two lists.
Messages collective_messages(const CollectiveHeader& h, const std::vector<CollectiveRow>& rows);

std::string collective_table(const CollectiveHeader& h, const std::vector<CollectiveRow>& rows);
std::string collective_json(const CollectiveHeader& h, const std::vector<CollectiveRow>& rows);
std::string collective_csv(const CollectiveHeader& h, const std::vector<CollectiveRow>& rows);

}  // namespace gf::report
