#include "power_nvml.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>

namespace tp::cuda {

// NVML's C ABI (nvml.h): nvmlReturn_t is an int (0 = success), nvmlDevice_t an opaque pointer.
struct Nvml::Fns {
  using Init = int (*)();
  using ByPci = int (*)(const char*, void**);
  using ByIndex = int (*)(unsigned, void**);
  using Power = int (*)(void*, unsigned*);
  using Clock = int (*)(void*, int, unsigned*);
  using Temp = int (*)(void*, int, unsigned*);
  using Reasons = int (*)(void*, unsigned long long*);
  using Driver = int (*)(char*, unsigned);
  Init init = nullptr;
  ByPci by_pci = nullptr;
  ByIndex by_index = nullptr;
  Power power = nullptr;
  Clock clock = nullptr;
  Clock max_clock = nullptr;
  Temp temp = nullptr;
  Reasons reasons = nullptr;
  Driver driver = nullptr;
};

namespace {
constexpr int kClockSm = 1;    // NVML_CLOCK_SM
constexpr int kClockMem = 2;   // NVML_CLOCK_MEM
constexpr int kTempGpu = 0;    // NVML_TEMPERATURE_GPU
}  // namespace

const Nvml& Nvml::instance() {
  static const Nvml n;
  return n;
}

Nvml::Nvml() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) return;
  f_ = new Fns;
  auto sym = [this](const char* name) { return dlsym(lib_, name); };
  f_->init = reinterpret_cast<Fns::Init>(sym("nvmlInit_v2"));
  f_->by_pci = reinterpret_cast<Fns::ByPci>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  f_->by_index = reinterpret_cast<Fns::ByIndex>(sym("nvmlDeviceGetHandleByIndex_v2"));
  f_->power = reinterpret_cast<Fns::Power>(sym("nvmlDeviceGetPowerUsage"));
  f_->clock = reinterpret_cast<Fns::Clock>(sym("nvmlDeviceGetClockInfo"));
  f_->max_clock = reinterpret_cast<Fns::Clock>(sym("nvmlDeviceGetMaxClockInfo"));
  f_->temp = reinterpret_cast<Fns::Temp>(sym("nvmlDeviceGetTemperature"));
  f_->reasons = reinterpret_cast<Fns::Reasons>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
  if (f_->reasons == nullptr) f_->reasons = reinterpret_cast<Fns::Reasons>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
  f_->driver = reinterpret_cast<Fns::Driver>(sym("nvmlSystemGetDriverVersion"));
  ok_ = f_->init != nullptr && f_->power != nullptr && (f_->by_pci != nullptr || f_->by_index != nullptr) && f_->init() == 0;
}

void* Nvml::device(int cuda_device) const {
  if (!ok_) return nullptr;
  void* h = nullptr;
  char bus[64] = {0};
  if (f_->by_pci != nullptr && cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) == cudaSuccess && f_->by_pci(bus, &h) == 0) {
    return h;
  }
  (void)cudaGetLastError();
  if (f_->by_index != nullptr && f_->by_index(static_cast<unsigned>(cuda_device), &h) == 0) return h;
  return nullptr;
}

std::string Nvml::driver_version() const {
  if (!ok_ || f_->driver == nullptr) return "";
  char buf[96] = {0};
  return f_->driver(buf, sizeof buf) == 0 ? std::string(buf) : std::string();
}

NvmlClocks Nvml::max_clocks(int cuda_device) const {
  NvmlClocks c;
  void* h = device(cuda_device);
  if (h == nullptr || f_->max_clock == nullptr) return c;
  unsigned v = 0;
  if (f_->max_clock(h, kClockSm, &v) == 0) c.sm_mhz = v;
  if (f_->max_clock(h, kClockMem, &v) == 0) c.memory_mhz = v;
  return c;
}

NvmlSample Nvml::sample(int cuda_device) const {
  NvmlSample s;
  void* h = device(cuda_device);
  if (h == nullptr) return s;
  unsigned v = 0;
  if (f_->power(h, &v) == 0) s.watts = v / 1000.0;  // milliwatts
  if (f_->clock != nullptr && f_->clock(h, kClockSm, &v) == 0) s.sm_mhz = v;
  if (f_->temp != nullptr && f_->temp(h, kTempGpu, &v) == 0) s.temperature_c = v;
  unsigned long long r = 0;
  if (f_->reasons != nullptr && f_->reasons(h, &r) == 0) s.throttle = r;
  return s;
}

std::vector<std::string> Nvml::throttle_names(unsigned long long mask) {
  // nvml.h nvmlClocksEventReason* bits.
  static const std::pair<unsigned long long, const char*> kBits[] = {
      {0x1ULL, "gpu_idle"},          {0x2ULL, "applications_clocks"}, {0x4ULL, "sw_power_cap"},
      {0x8ULL, "hw_slowdown"},       {0x10ULL, "sync_boost"},          {0x20ULL, "sw_thermal"},
      {0x40ULL, "hw_thermal"},       {0x80ULL, "hw_power_brake"},      {0x100ULL, "display_clocks"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : kBits) {
    if ((mask & bit) != 0) out.emplace_back(name);
  }
  return out;
}

PowerSampler::PowerSampler(int cuda_device, int period_ms) : device_(cuda_device), period_ms_(period_ms) {}

PowerSampler::~PowerSampler() {
  if (running_) (void)stop();
}

void PowerSampler::start() {
  samples_.clear();
  if (!Nvml::instance().available()) return;
  running_ = true;
  thread_ = std::thread([this] {
    while (running_) {
      samples_.push_back(Nvml::instance().sample(device_));
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
    }
  });
}

std::vector<NvmlSample> PowerSampler::stop() {
  if (running_) {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  return samples_;
}

}  // namespace tp::cuda
