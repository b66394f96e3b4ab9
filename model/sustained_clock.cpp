#include "sustained_clock.h"

#include "errors.h"

namespace tp {

double profile_rates_clock_hz(const HardwareProfile& hw, const GpuSpec& gpu) {
  return hw.clock_hz > 0 ? hw.clock_hz : gpu.sustained_clock_hz;
}

double cluster_sustained_clock_hz(const ClusterSpec& c, const HardwareProfile& hw) {
  if (c.sustained_clock_hz > 0) return c.sustained_clock_hz;
  if (hw.sustained_clock_hz > 0) return hw.sustained_clock_hz;
  return c.gpus_per_node > 1 ? c.gpu.sustained_clock_hz : 0.0;
}

std::string sustained_clock_problem(double sustained_clock_hz, const GpuSpec& gpu) {
  const double boost = gpu.boost_clock_hz;
  if (boost <= 0 || sustained_clock_hz <= 1.05 * boost) return "";
  return shown(sustained_clock_hz / 1e6) + " MHz is above what the GPU reaches: its maximum boost clock is " +
         shown(boost / 1e6) + " MHz";
}

double tensor_time_scale(const ClusterSpec& c, const HardwareProfile& hw) {
  const double rates = profile_rates_clock_hz(hw, c.gpu);
  const double sustained = cluster_sustained_clock_hz(c, hw);
  return rates > 0 && sustained > 0 ? rates / sustained : 1.0;
}

}  // namespace tp
