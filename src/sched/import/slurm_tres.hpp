#pragma once
// Slurm's trackable resources as sacct prints them: a TRES list (AllocTRES, ReqTRES:
// "billing=12,cpu=8,gres/gpu=1,gres/gpu:a100=1,mem=64G,node=1"; slurm.schedmd.com/tres.html) or,
// in the older AllocGRES/ReqGRES columns, a GRES list ("gpu:4", "gpu:tesla:2", "gpu:2(IDX:0-1)").
#include <string>

#include "core/error.hpp"

namespace gf::sched {

struct SlurmResources {
  long gpus = 0;         // GPUs of the whole job, over all its nodes
  std::string gpu_type;  // "a100" from gres/gpu:a100=N; empty when untyped or of several types
  long cpus = 0;
  long memory_mib = 0;
};

// Throws InputError at `where` naming `field` for an entry that is not name=count, or a GPU, CPU
// or memory count that is not a number.
SlurmResources parse_tres(const std::string& text, const SourceLocation& where, const std::string& field);
SlurmResources parse_gres(const std::string& text, const SourceLocation& where, const std::string& field);

}  // namespace gf::sched
