#pragma once
// Training step, placement: which of the cluster's GPUs the job runs on (the first ones, node
// by node, or a scheduler's placement), and which ones another job sharing the cluster runs on.
#include <string>
#include <vector>

#include "topo/topology.hpp"
#include "work/train_step.hpp"
#include "work/training_context.hpp"

namespace gf::work {

// The job's GPU count: the placement's, else TrainOptions::gpus, else the cluster's. Refuses
// more GPUs than the cluster has, a placement naming a GPU twice or outside the cluster, and
// (without a placement) a count that does not fill whole nodes.
long job_gpus(const topo::Topology& t, const TrainOptions& o);

struct BackgroundRequest {
  const topo::Topology& topology;
  const TrainOptions& options;  // background_op and background_bytes; placement, when given
  long gpus = 0;                // the job's GPUs (job_gpus)
};

struct PlacedBackground {
  BackgroundJob job;  // no GPUs: no other job
  std::vector<std::string> assumptions;
};

// Another job on the GPUs this one leaves free (TrainOptions::background_bytes > 0): the GPUs
// the placement leaves, wherever they are, or the cluster's last GPUs after the job's. Refused
// when fewer than two GPUs are left, or (without a placement) when they do not fill whole nodes.
PlacedBackground background_job(const BackgroundRequest& r);

}  // namespace gf::work
