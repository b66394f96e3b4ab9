// NVML through dlopen("libnvidia-ml.so.1"): power, clocks, throttle reasons and the driver version.
// No nvml.h is needed to build (the few entry points are declared here, as NVML's stable C ABI), and a
// machine without the driver library simply reports "unavailable".
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace tp::cuda {

struct NvmlClocks {
  double sm_mhz = 0;
  double memory_mhz = 0;
};

struct NvmlSample {
  double watts = 0;
  double sm_mhz = 0;
  double temperature_c = 0;
  unsigned long long throttle = 0;  // nvmlClocksEventReasons bit mask
};

class Nvml {
 public:
  static const Nvml& instance();
  bool available() const { return ok_; }
  std::string driver_version() const;
  NvmlClocks max_clocks(int cuda_device) const;
  NvmlSample sample(int cuda_device) const;
  // Names of the bits set in an nvmlClocksEventReasons mask ("sw_power_cap", "hw_slowdown", ...).
  static std::vector<std::string> throttle_names(unsigned long long mask);

 private:
  Nvml();
  void* device(int cuda_device) const;
  bool ok_ = false;
  void* lib_ = nullptr;
  struct Fns;
  Fns* f_ = nullptr;
};

// Samples power every `period_ms` on a thread between start() and stop().
class PowerSampler {
 public:
  PowerSampler(int cuda_device, int period_ms = 20);
  ~PowerSampler();
  void start();
  std::vector<NvmlSample> stop();

 private:
  int device_;
  int period_ms_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::vector<NvmlSample> samples_;
};

}  // namespace tp::cuda
