#pragma once
// A timeline as the Chrome trace-event JSON that chrome://tracing and ui.perfetto.dev open: one
// process, one named thread per track, complete ("X") events in microseconds.
#include <string>
#include <vector>

#include "work/ddp_step.hpp"

namespace gf::report {

// `process` names the one process (e.g. "GPU 0, stage 0 of gpt3-175b on dgx-a100 x 128");
// `metadata` lines go into the trace's "otherData" (assumptions, layout).
std::string chrome_trace(const std::vector<work::StepEvent>& events, const std::string& process,
                         const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace gf::report
