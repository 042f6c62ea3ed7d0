#pragma once
// nccl-tests-style output of predicted collectives: the familiar table, or JSON/CSV rows.
#include <string>
#include <vector>

#include "band/error_band.hpp"
#include "comm/model.hpp"

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
  std::vector<std::string> notes;       // the NCCL environment, overrides and what they changed
  std::vector<std::string> transports;  // per class of edge, as NCCL_DEBUG=INFO names them
};

std::string collective_table(const CollectiveHeader& h, const std::vector<CollectiveRow>& rows);
std::string collective_json(const CollectiveHeader& h, const std::vector<CollectiveRow>& rows);
std::string collective_csv(const std::vector<CollectiveRow>& rows);

}  // namespace gf::report
