#include "device_info.cuh"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <unistd.h>

#ifdef TRAINPLAN_HAS_CUDNN
#include <cudnn.h>
#endif
#ifdef TRAINPLAN_HAS_NCCL
#include <nccl.h>
#endif

#include "cuda_runner.h"
#include "power_nvml.h"
#include "timing.cuh"

namespace tp {

DeviceProbe probe_cuda_devices() {
  DeviceProbe p;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    p.error = cudaGetErrorString(e);
    (void)cudaGetLastError();
    return p;
  }
  p.count = n;
  if (n == 0) p.error = "cudaGetDeviceCount returned 0";
  return p;
}

namespace cuda {

namespace {
std::string version_text(int v, int major_div, int minor_div, int minor_mod) {
  return std::to_string(v / major_div) + "." + std::to_string((v / minor_div) % minor_mod);
}
}  // namespace

int compute_capability(int device) {
  cudaDeviceProp p{};
  TP_CUDA(cudaGetDeviceProperties(&p, device));
  return p.major * 10 + p.minor;
}

DeviceInfo query_device(int device) {
  cudaDeviceProp p{};
  TP_CUDA(cudaGetDeviceProperties(&p, device));
  DeviceInfo d;
  d.name = p.name;
  d.compute_capability = std::to_string(p.major) + "." + std::to_string(p.minor);
  TP_CUDA(cudaGetDeviceCount(&d.count));
  d.sm_count = p.multiProcessorCount;
  d.memory_bytes = static_cast<double>(p.totalGlobalMem);
  d.l2_bytes = static_cast<double>(p.l2CacheSize);
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess) d.sm_clock_max_mhz = khz / 1000.0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess) d.memory_clock_max_mhz = khz / 1000.0;
  (void)cudaGetLastError();
  const Nvml& nvml = Nvml::instance();
  if (nvml.available()) {
    const NvmlClocks c = nvml.max_clocks(device);
    if (c.sm_mhz > 0) d.sm_clock_max_mhz = c.sm_mhz;
    if (c.memory_mhz > 0) d.memory_clock_max_mhz = c.memory_mhz;
  }
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) d.hostname = host;
  d.gpu_key = guess_gpu_key(d.name, d.memory_bytes);
  return d;
}

SoftwareInfo query_software() {
  SoftwareInfo s;
  s.trainplan = "0.1.0";
  int v = 0;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) s.cuda_runtime = version_text(v, 1000, 10, 100);
  if (cudaDriverGetVersion(&v) == cudaSuccess) s.cuda_driver = version_text(v, 1000, 10, 100);
  const size_t lt = cublasLtGetVersion();
  s.cublas = std::to_string(lt / 10000) + "." + std::to_string((lt / 100) % 100) + "." + std::to_string(lt % 100);
#ifdef TRAINPLAN_HAS_CUDNN
  const size_t dn = cudnnGetVersion();
  s.cudnn = std::to_string(dn / 10000) + "." + std::to_string((dn / 100) % 100) + "." + std::to_string(dn % 100);
#endif
#ifdef TRAINPLAN_HAS_NCCL
  int nv = 0;
  if (ncclGetVersion(&nv) == ncclSuccess) {
    s.nccl = std::to_string(nv / 10000) + "." + std::to_string((nv / 100) % 100) + "." + std::to_string(nv % 100);
  }
#endif
  s.driver = Nvml::instance().driver_version();
  (void)cudaGetLastError();
  return s;
}

}  // namespace cuda
}  // namespace tp
