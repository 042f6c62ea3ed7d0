#include "plan/goodput.hpp"

#include <algorithm>
#include <cmath>

namespace gf::plan {

Goodput goodput(const GoodputInputs& in) {
  Goodput g;
  const double rate = in.interruptions_per_gpu_hour * static_cast<double>(in.gpus) / 3600;  // per second
  g.interruptions_per_day = rate * 86400;
  g.checkpoint_write = in.write.value() > 0 ? Seconds(in.checkpoint.value() / in.write.value()) : Seconds(0);
  g.checkpoint_read = in.read.value() > 0 ? Seconds(in.checkpoint.value() / in.read.value()) : Seconds(0);
  if (rate <= 0) {
    g.mtbi = Seconds(INFINITY);
    g.interval = Seconds(INFINITY);
    return g;
  }
  const double m = 1 / rate;
  g.mtbi = Seconds(m);
  const double w = g.checkpoint_write.value();
  // Young's optimum; never shorter than the write itself.
  const double tau = std::max(std::sqrt(2 * w * m), w);
  g.interval = Seconds(tau);
  // Per interval of tau useful seconds: w spent writing; per interruption (tau + w) / 2 lost
  // on average, plus the restart and the read.
  const double lost_per_interruption = (tau + w) / 2 + in.restart.value() + g.checkpoint_read.value();
  const double overhead = w / tau + lost_per_interruption / m;
  g.fraction = std::clamp(1 / (1 + overhead), 0.0, 1.0);
  return g;
}

}  // namespace gf::plan
