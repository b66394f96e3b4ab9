#include "cuda_runner.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <set>
#include <thread>

#include "attention.cuh"
#include "collectives_nccl.cuh"
#include "device_info.cuh"
#include "gemm_cublaslt.cuh"
#include "kernel_traffic.h"
#include "memory_kernels.cuh"
#include "power_nvml.h"
#include "step_kernels.cuh"
#include "timing.cuh"

#ifdef TRAINPLAN_HAS_MPI
#include <mpi.h>
#endif

namespace tp {

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : 0;
}

TimeStats sample_phase(int device, double seconds, const std::function<void()>& work, cuda::PowerSampler& sampler,
                       Measurement& out) {
  sampler.start();
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    if (work) work();
    else std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  TP_CUDA(cudaDeviceSynchronize());
  const std::vector<cuda::NvmlSample> s = sampler.stop();
  (void)device;
  std::vector<double> w;
  for (const auto& x : s) w.push_back(x.watts);
  out.samples = static_cast<int>(w.size());
  TimeStats t = summarize(w);  // statistics of the watts
  out.watts = t.median;
  TimeStats span;
  span.median = span.mean = span.min = span.max = span.p10 = span.p90 = seconds;
  span.reps = 1;
  span.stable = true;
  return span;
}

// What the measurements file records about the run: the device, the software and the settings.
Measurements run_record(int device, int visible, const CudaRunOptions& o, const RankInfo& ranks) {
  Measurements m;
  m.created = utc_now_iso8601();
  m.device = cuda::query_device(device);
  if (!o.gpu_key.empty()) m.device.gpu_key = o.gpu_key;
  m.software = cuda::query_software();
  m.settings.suites = o.suites;
  m.settings.scenario = o.scenario;
  m.settings.policy = o.policy;
  m.settings.l2_flush = o.l2_flush;
  m.settings.ranks = ranks.size > 1 ? ranks.size : visible;
  m.settings.nodes = ranks.nodes;
  m.settings.gpus_per_node = ranks.size > 1 ? ranks.local_size : visible;
  return m;
}

// What the cases of one run share: the device and stream, the L2 flusher, the libraries opened on first
// use (cuBLASLt, the NCCL group) and the power sampler of the power phases.
struct CaseContext {
  CaseContext(int cuda_device, cudaStream_t cuda_stream, cuda::L2Flusher* l2_flush, const RepetitionPolicy& repetitions,
              const RankInfo& rank_info)
      : device(cuda_device), stream(cuda_stream), flush(l2_flush), policy(repetitions), ranks(rank_info),
        phase(cuda_device, 20) {}

  int device = 0;
  cudaStream_t stream = nullptr;
  cuda::L2Flusher* flush = nullptr;
  RepetitionPolicy policy;
  RankInfo ranks;
  cuda::PowerSampler phase;
  std::unique_ptr<cuda::LtGemm> gemm;
  std::unique_ptr<cuda::NcclGroup> nccl;
  std::string nccl_error;
  bool nccl_tried = false;

  cuda::LtGemm& lt_gemm() {
    if (!gemm) gemm = std::make_unique<cuda::LtGemm>();
    return *gemm;
  }
  // The NCCL group, created on the first collective; throws Unsupported when it cannot be.
  cuda::NcclGroup& nccl_group() {
    if (!nccl_tried) {
      nccl_tried = true;
      try {
        nccl = cuda::make_nccl_group(ranks);
      } catch (const std::exception& e) {
        nccl_error = e.what();
      }
    }
    if (!nccl) throw cuda::Unsupported(nccl_error);
    return *nccl;
  }
};

void measure_gemm_case(Measurement& x, CaseContext& c) {
  const cuda::GemmResult r = c.lt_gemm().measure(x.gemm, x.dtype, c.policy, c.flush);
  x.time = r.time;
  x.algorithm = r.algorithm;
  x.rate = x.gemm.flops() / x.time.median;
}

void measure_attention_case(Measurement& x, CaseContext& c) {
  const bool bwd = x.op == MeasuredOp::attention_backward;
  if (x.impl == AttentionImpl::fused) {
    std::string engine;
    x.time = cuda::measure_attention_fused(x.attention, x.dtype, bwd, c.policy, c.flush, &engine);
    x.algorithm = engine;
  } else {
    x.time = cuda::measure_attention_unfused(x.attention, x.dtype, bwd, c.policy, c.flush);
    x.algorithm = "cuBLAS strided-batched GEMMs + trainplan softmax";
  }
  x.rate = attention_flops(x) / x.time.median;
}

void measure_step_kernel_case(Measurement& x, CaseContext& c) {
  x.time = cuda::measure_step_kernel(x.kernel, x.dtype, x.rows, x.cols, c.policy, c.flush, c.stream);
  x.bytes = kernel_bytes_moved(x.kernel, x.dtype, x.rows, x.cols);
  x.rate = x.bytes / x.time.median;
  x.algorithm = "trainplan fused kernel";
}

void measure_memory_case(Measurement& x, CaseContext& c) {
  const double array_bytes = x.bytes;
  x.time = cuda::measure_memory(x.op, array_bytes, c.policy, c.flush, c.stream);
  x.bytes = cuda::memory_bytes_moved(x.op, array_bytes);
  x.rate = x.bytes / x.time.median;
}

void measure_collective_case(Measurement& x, CaseContext& c) {
  cuda::NcclGroup& nccl = c.nccl_group();
  const Collective op = collective_of(x.op);
  if (nccl.ranks() < 2) throw cuda::Unsupported("collectives need at least 2 GPUs; this run has 1");
  const double bytes = nccl_test_bytes(op, x.bytes, nccl.ranks(), 4);
  if (bytes <= 0) throw cuda::Unsupported("size rounds to 0 bytes on " + std::to_string(nccl.ranks()) + " ranks (nccl-tests rounding)");
  x.bytes = bytes;
  x.ranks = nccl.ranks();
  x.nodes = nccl.nodes();
  x.time = nccl.measure(op, bytes, c.policy);
  const BusRates r = nccl_test_rates(op, bytes, x.ranks, x.time.median);
  x.algbw = r.algbw;
  x.busbw = r.busbw;
  x.rate = r.busbw;
}

// Power under back-to-back bf16 8192^3 GEMMs; rate: the sustained GEMM rate under the power cap.
void measure_gemm_power_phase(Measurement& x, CaseContext& c) {
  cuda::LtGemm& gemm = c.lt_gemm();
  RepetitionPolicy busy;
  busy.warmup = 0;
  busy.min_reps = busy.max_reps = 10;
  const GemmShape big{8192, 8192, 8192, 1};
  // Kernel seconds and GEMMs of the phase: the sustained rate under the power cap.
  double kernel_seconds = 0, gemms = 0;
  x.time = sample_phase(c.device, 3.0, [&] {
    const cuda::GemmResult g = gemm.measure(big, Precision::bf16, busy, nullptr);
    kernel_seconds += g.time.mean * g.time.reps;
    gemms += g.time.reps;
  }, c.phase, x);
  x.rate = kernel_seconds > 0 ? gemms * 2.0 * 8192.0 * 8192.0 * 8192.0 / kernel_seconds : 0.0;
  x.note = "bf16 8192^3 GEMMs back to back; rate = their FLOP/s over the phase";
}

void measure_power_case(Measurement& x, CaseContext& c) {
  if (!cuda::Nvml::instance().available()) throw cuda::Unsupported("NVML (libnvidia-ml.so.1) not available");
  if (x.phase == "idle") {
    TP_CUDA(cudaDeviceSynchronize());
    x.time = sample_phase(c.device, 2.0, nullptr, c.phase, x);
  } else if (x.phase == "gemm") {
    measure_gemm_power_phase(x, c);
  } else {
    RepetitionPolicy busy;
    busy.warmup = 0;
    busy.min_reps = busy.max_reps = 20;
    x.time = sample_phase(
        c.device, 3.0,
        [&] { (void)cuda::measure_memory(MeasuredOp::memory_triad, 1024.0 * 1024 * 1024, busy, nullptr, c.stream); },
        c.phase, x);
    x.note = "triad on 1 GiB arrays back to back";
  }
}

// Measures one case with the kernels of its suite.
void measure_case(Measurement& x, CaseContext& c) {
  if (x.op == MeasuredOp::gemm) {
    measure_gemm_case(x, c);
  } else if (is_attention(x.op)) {
    measure_attention_case(x, c);
  } else if (x.op == MeasuredOp::memory_kernel) {
    measure_step_kernel_case(x, c);
  } else if (is_memory(x.op)) {
    measure_memory_case(x, c);
  } else if (x.op == MeasuredOp::kernel_launch) {
    x.time = cuda::measure_launch(c.policy, c.stream);
  } else if (is_collective(x.op)) {
    measure_collective_case(x, c);
  } else if (x.op == MeasuredOp::power) {
    measure_power_case(x, c);
  }
}

// Runs one case of the plan into `m`: its measurement, or a skipped case with the reason (a run of
// several processes measures collectives only; out of memory, unsupported, CUDA errors).
void run_case(Measurement x, CaseContext& c, Measurements& m) {
  if (c.ranks.size > 1 && !is_collective(x.op)) {
    m.skipped.push_back({x.op, x.label, shape_text(x), "multi-process runs measure collectives only"});
    return;
  }
  try {
    measure_case(x, c);
    // The clock as the timed calls end: a power-capped GPU settles lower during a long case than its
    // burst clock, which the fit scales out of the GEMM and attention times (docs/calibration.md).
    x.sm_mhz = cuda::Nvml::instance().sample(c.device).sm_mhz;
    m.items.push_back(x);
  } catch (const cuda::OutOfMemory& e) {
    m.skipped.push_back({x.op, x.label, shape_text(x), e.what()});
  } catch (const cuda::Unsupported& e) {
    m.skipped.push_back({x.op, x.label, shape_text(x), e.what()});
  } catch (const cuda::CudaError& e) {
    m.skipped.push_back({x.op, x.label, shape_text(x), std::string("CUDA error: ") + e.what()});
    (void)cudaDeviceSynchronize();
    (void)cudaGetLastError();
  }
}

// SM clock range, hottest temperature and throttle reasons seen over the run.
void record_clocks(const std::vector<cuda::NvmlSample>& seen, Measurements& m) {
  std::set<std::string> reasons;
  double lo = 0, hi = 0, temp = 0;
  for (const auto& s : seen) {
    if (s.sm_mhz > 0) {
      lo = lo == 0 ? s.sm_mhz : std::min(lo, s.sm_mhz);
      hi = std::max(hi, s.sm_mhz);
    }
    temp = std::max(temp, s.temperature_c);
    for (const auto& n : cuda::Nvml::throttle_names(s.throttle)) {
      if (n != "gpu_idle" && n != "applications_clocks") reasons.insert(n);
    }
  }
  m.clocks.sm_mhz_min = lo;
  m.clocks.sm_mhz_max = hi;
  m.clocks.memory_mhz = m.device.memory_clock_max_mhz;
  m.clocks.temperature_c_max = temp;
  m.clocks.throttle_reasons.assign(reasons.begin(), reasons.end());
}

}  // namespace

RankInfo init_ranks() {
  RankInfo r;
  const int launched = std::max({env_int("OMPI_COMM_WORLD_SIZE"), env_int("PMI_SIZE"), env_int("SLURM_NTASKS"), env_int("PMIX_SIZE")});
#ifdef TRAINPLAN_HAS_MPI
  if (launched > 1) {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r.rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &r.local_rank);
    MPI_Comm_size(local, &r.local_size);
    MPI_Comm_free(&local);
    int leader = r.local_rank == 0 ? 1 : 0;
    MPI_Allreduce(&leader, &r.nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    r.mpi = true;
  }
#else
  (void)launched;
#endif
  return r;
}

void finalize_ranks() {
#ifdef TRAINPLAN_HAS_MPI
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (inited && !finalized) MPI_Finalize();
#endif
}

Measurements run_calibration(const std::vector<Measurement>& plan, const CudaRunOptions& o, const RankInfo& ranks) {
  int visible = 0;
  TP_CUDA(cudaGetDeviceCount(&visible));
  const int device = ranks.size > 1 ? ranks.local_rank % visible : 0;
  TP_CUDA(cudaSetDevice(device));
  Measurements m = run_record(device, visible, o, ranks);

  cudaStream_t stream = nullptr;
  TP_CUDA(cudaStreamCreate(&stream));
  cuda::L2Flusher flusher(static_cast<size_t>(m.device.l2_bytes));
  // Clocks and throttling over the whole run.
  cuda::PowerSampler watch(device, 100);
  watch.start();
  CaseContext c(device, stream, o.l2_flush ? &flusher : nullptr, o.policy, ranks);
  for (size_t i = 0; i < plan.size(); ++i) {
    if (o.progress) o.progress(i, plan.size(), plan[i]);
    run_case(plan[i], c, m);
  }
  if (o.progress && !plan.empty()) o.progress(plan.size(), plan.size(), plan.back());
  record_clocks(watch.stop(), m);
  cudaStreamDestroy(stream);
  return m;
}

}  // namespace tp
