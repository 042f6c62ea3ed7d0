#pragma once
// Slurm accounting as `sacct --parsable2` prints it ('|'-separated, a header line first) turned
// into jobs for `gpufabric schedule --trace`: each job allocation that held GPUs and ran becomes
// one job (its nodes a gang of pods), submitted at its Submit time less the first job's. Job
// steps (JobID "123.batch", "123.0") are folded into their job; jobs that never started, are
// still running or used no GPUs are counted and left out.
#include <string>

#include "sched/import/import_report.hpp"

namespace gf::sched {

// The sacct command line that prints every column the importer reads.
inline constexpr const char* kSacctCommand =
    "sacct -a -X --parsable2 --format=JobID,JobName,Submit,Start,End,Elapsed,State,AllocTRES,ReqTRES,NNodes,"
    "Partition,QOS,Timelimit";

// Throws InputError (file, line, column name, what would be valid) on a missing column, a bad
// time or duration, a malformed TRES list, or a file with no GPU job that ran.
ImportedTrace import_sacct(const std::string& text, const std::string& file);

}  // namespace gf::sched
