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
  using namespace tp::cuda;
  int visible = 0;
  TP_CUDA(cudaGetDeviceCount(&visible));
  const int device = ranks.size > 1 ? ranks.local_rank % visible : 0;
  TP_CUDA(cudaSetDevice(device));

  Measurements m;
  m.created = utc_now_iso8601();
  m.device = query_device(device);
  if (!o.gpu_key.empty()) m.device.gpu_key = o.gpu_key;
  m.software = query_software();
  m.settings.suites = o.suites;
  m.settings.scenario = o.scenario;
  m.settings.policy = o.policy;
  m.settings.l2_flush = o.l2_flush;
  m.settings.ranks = ranks.size > 1 ? ranks.size : visible;
  m.settings.nodes = ranks.nodes;
  m.settings.gpus_per_node = ranks.size > 1 ? ranks.local_size : visible;

  cudaStream_t stream = nullptr;
  TP_CUDA(cudaStreamCreate(&stream));
  L2Flusher flusher(static_cast<size_t>(m.device.l2_bytes));
  L2Flusher* flush = o.l2_flush ? &flusher : nullptr;
  std::unique_ptr<LtGemm> gemm;
  std::unique_ptr<NcclGroup> nccl;
  std::string nccl_error;
  bool nccl_tried = false;

  // Clocks and throttling over the whole run.
  PowerSampler watch(device, 100);
  watch.start();
  PowerSampler phase(device, 20);

  const bool multi = ranks.size > 1;
  for (size_t i = 0; i < plan.size(); ++i) {
    Measurement x = plan[i];
    if (o.progress) o.progress(i, plan.size(), x);
    if (multi && !is_collective(x.op)) {
      m.skipped.push_back({x.op, x.label, shape_text(x), "multi-process runs measure collectives only"});
      continue;
    }
    try {
      if (x.op == MeasuredOp::gemm) {
        if (!gemm) gemm = std::make_unique<LtGemm>();
        const GemmResult r = gemm->measure(x.gemm, x.dtype, o.policy, flush);
        x.time = r.time;
        x.algorithm = r.algorithm;
        x.rate = x.gemm.flops() / x.time.median;
      } else if (is_attention(x.op)) {
        const bool bwd = x.op == MeasuredOp::attention_backward;
        if (x.impl == AttentionImpl::fused) {
          std::string engine;
          x.time = measure_attention_fused(x.attention, x.dtype, bwd, o.policy, flush, &engine);
          x.algorithm = engine;
        } else {
          x.time = measure_attention_unfused(x.attention, x.dtype, bwd, o.policy, flush);
          x.algorithm = "cuBLAS strided-batched GEMMs + trainplan softmax";
        }
        x.rate = attention_flops(x) / x.time.median;
      } else if (x.op == MeasuredOp::memory_kernel) {
        x.time = measure_step_kernel(x.kernel, x.dtype, x.rows, x.cols, o.policy, flush, stream);
        x.bytes = kernel_bytes_moved(x.kernel, x.dtype, x.rows, x.cols);
        x.rate = x.bytes / x.time.median;
        x.algorithm = "trainplan fused kernel";
      } else if (is_memory(x.op)) {
        const double array_bytes = x.bytes;
        x.time = measure_memory(x.op, array_bytes, o.policy, flush, stream);
        x.bytes = memory_bytes_moved(x.op, array_bytes);
        x.rate = x.bytes / x.time.median;
      } else if (x.op == MeasuredOp::kernel_launch) {
        x.time = measure_launch(o.policy, stream);
      } else if (is_collective(x.op)) {
        if (!nccl_tried) {
          nccl_tried = true;
          try {
            nccl = make_nccl_group(ranks);
          } catch (const std::exception& e) {
            nccl_error = e.what();
          }
        }
        if (!nccl) throw Unsupported(nccl_error);
        const Collective c = collective_of(x.op);
        if (nccl->ranks() < 2) throw Unsupported("collectives need at least 2 GPUs; this run has 1");
        const double bytes = nccl_test_bytes(c, x.bytes, nccl->ranks(), 4);
        if (bytes <= 0) throw Unsupported("size rounds to 0 bytes on " + std::to_string(nccl->ranks()) + " ranks (nccl-tests rounding)");
        x.bytes = bytes;
        x.ranks = nccl->ranks();
        x.nodes = nccl->nodes();
        x.time = nccl->measure(c, bytes, o.policy);
        const BusRates r = nccl_test_rates(c, bytes, x.ranks, x.time.median);
        x.algbw = r.algbw;
        x.busbw = r.busbw;
        x.rate = r.busbw;
      } else if (x.op == MeasuredOp::power) {
        if (!Nvml::instance().available()) throw Unsupported("NVML (libnvidia-ml.so.1) not available");
        if (x.phase == "idle") {
          TP_CUDA(cudaDeviceSynchronize());
          x.time = sample_phase(device, 2.0, nullptr, phase, x);
        } else if (x.phase == "gemm") {
          if (!gemm) gemm = std::make_unique<LtGemm>();
          RepetitionPolicy busy;
          busy.warmup = 0;
          busy.min_reps = busy.max_reps = 10;
          const GemmShape big{8192, 8192, 8192, 1};
          // Kernel seconds and GEMMs of the phase: the sustained rate under the power cap.
          double kernel_seconds = 0, gemms = 0;
          x.time = sample_phase(device, 3.0, [&] {
            const GemmResult g = gemm->measure(big, Precision::bf16, busy, nullptr);
            kernel_seconds += g.time.mean * g.time.reps;
            gemms += g.time.reps;
          }, phase, x);
          x.rate = kernel_seconds > 0 ? gemms * 2.0 * 8192.0 * 8192.0 * 8192.0 / kernel_seconds : 0.0;
          x.note = "bf16 8192^3 GEMMs back to back; rate = their FLOP/s over the phase";
        } else {
          RepetitionPolicy busy;
          busy.warmup = 0;
          busy.min_reps = busy.max_reps = 20;
          x.time = sample_phase(
              device, 3.0, [&] { (void)measure_memory(MeasuredOp::memory_triad, 1024.0 * 1024 * 1024, busy, nullptr, stream); },
              phase, x);
          x.note = "triad on 1 GiB arrays back to back";
        }
      }
      m.items.push_back(x);
    } catch (const OutOfMemory& e) {
      m.skipped.push_back({x.op, x.label, shape_text(x), e.what()});
    } catch (const Unsupported& e) {
      m.skipped.push_back({x.op, x.label, shape_text(x), e.what()});
    } catch (const CudaError& e) {
      m.skipped.push_back({x.op, x.label, shape_text(x), std::string("CUDA error: ") + e.what()});
      (void)cudaDeviceSynchronize();
      (void)cudaGetLastError();
    }
  }
  if (o.progress && !plan.empty()) o.progress(plan.size(), plan.size(), plan.back());

  const std::vector<NvmlSample> seen = watch.stop();
  std::set<std::string> reasons;
  double lo = 0, hi = 0, temp = 0;
  for (const auto& s : seen) {
    if (s.sm_mhz > 0) {
      lo = lo == 0 ? s.sm_mhz : std::min(lo, s.sm_mhz);
      hi = std::max(hi, s.sm_mhz);
    }
    temp = std::max(temp, s.temperature_c);
    for (const auto& n : Nvml::throttle_names(s.throttle)) {
      if (n != "gpu_idle" && n != "applications_clocks") reasons.insert(n);
    }
  }
  m.clocks.sm_mhz_min = lo;
  m.clocks.sm_mhz_max = hi;
  m.clocks.memory_mhz = m.device.memory_clock_max_mhz;
  m.clocks.temperature_c_max = temp;
  m.clocks.throttle_reasons.assign(reasons.begin(), reasons.end());
  cudaStreamDestroy(stream);
  return m;
}

}  // namespace tp
