#pragma once
// nccl-tests-style output of predicted collectives: the familiar table, or JSON/CSV rows.
#include <string>
#include <vector>

#include "band/error_band.hpp"
#include "comm/model.hpp"
#include "core/messages.hpp"
#include "report/communicator_summary.hpp"

namespace gf::report {

struct CollectiveRow {
  double size_bytes = 0;
  long count = 0;
  std::string type;
  std::string redop;
  int root = -1;
  comm::CollectiveResult result;
  band::Band band;  // of the time: how measured times of held-out rows like this one fell from the model's
};

struct CollectiveHeader {
  std::string op;
  std::string cluster;
  std::string communicator;
  std::string engine;
  // The NCCL environment, overrides and what they changed; a warning starts with "warning: ".
  std::vector<std::string> notes;
  std::vector<std::string> transports;  // per class of edge, as NCCL_DEBUG=INFO names them
  CommunicatorSummary comm;
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
