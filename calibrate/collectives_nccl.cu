#include <nccl.h>

#include <chrono>
#include <cmath>

#include "collectives_nccl.cuh"
#include "timing.cuh"

#ifdef TRAINPLAN_HAS_MPI
#include <mpi.h>
#endif

namespace tp::cuda {

namespace {

void check_nccl(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return;
  const std::string msg = std::string(what) + ": " + ncclGetErrorString(r);
  if (r == ncclInvalidUsage || r == ncclInvalidArgument) throw Unsupported(msg);
  throw CudaError(msg);
}

class Group : public NcclGroup {
 public:
  explicit Group(const RankInfo& info) : info_(info) {
    int visible = 0;
    TP_CUDA(cudaGetDeviceCount(&visible));
    if (info.size > 1) {
#ifdef TRAINPLAN_HAS_MPI
      // One GPU per rank (the local rank's), communicator through MPI as nccl-tests does.
      devices_ = {info.local_rank % visible};
      ncclUniqueId id;
      if (info.rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
      TP_CUDA(cudaSetDevice(devices_[0]));
      comms_.resize(1);
      check_nccl(ncclCommInitRank(&comms_[0], info.size, id, info.rank), "ncclCommInitRank");
      total_ranks_ = info.size;
      nodes_ = info.nodes;
#else
      throw Unsupported("several processes but this build has no MPI");
#endif
    } else {
      for (int d = 0; d < visible; ++d) devices_.push_back(d);
      comms_.resize(devices_.size());
      check_nccl(ncclCommInitAll(comms_.data(), static_cast<int>(devices_.size()), devices_.data()), "ncclCommInitAll");
      total_ranks_ = static_cast<int>(devices_.size());
      nodes_ = 1;
    }
    for (int d : devices_) {
      TP_CUDA(cudaSetDevice(d));
      cudaStream_t s = nullptr;
      TP_CUDA(cudaStreamCreate(&s));
      streams_.push_back(s);
    }
    TP_CUDA(cudaSetDevice(devices_[0]));
  }

  ~Group() override {
    for (auto c : comms_) ncclCommDestroy(c);
    for (auto s : streams_) cudaStreamDestroy(s);
  }

  int ranks() const override { return total_ranks_; }
  int nodes() const override { return nodes_; }

  // Global rank of local device i.
  int rank_of(size_t i) const { return info_.size > 1 ? info_.rank : static_cast<int>(i); }

  void ensure(size_t send_bytes, size_t recv_bytes) {
    if (send_bytes <= send_cap_ && recv_bytes <= recv_cap_) return;
    send_.clear();
    recv_.clear();
    send_cap_ = std::max(send_bytes, send_cap_);
    recv_cap_ = std::max(recv_bytes, recv_cap_);
    for (size_t i = 0; i < devices_.size(); ++i) {
      TP_CUDA(cudaSetDevice(devices_[i]));
      send_.emplace_back(send_cap_);
      recv_.emplace_back(recv_cap_);
      fill_random(send_.back().get(), send_cap_ / 4, 0, 31 + static_cast<unsigned>(i), 1.0f, streams_[i]);
    }
    TP_CUDA(cudaSetDevice(devices_[0]));
  }

  void launch(Collective c, size_t count) {
    const int n = total_ranks_;
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (size_t i = 0; i < devices_.size(); ++i) {
      const void* sb = send_[i].get();
      void* rb = recv_[i].get();
      ncclComm_t comm = comms_[i];
      cudaStream_t s = streams_[i];
      const int r = rank_of(i);
      switch (c) {
        case Collective::all_reduce: check_nccl(ncclAllReduce(sb, rb, count, ncclFloat, ncclSum, comm, s), "ncclAllReduce"); break;
        case Collective::broadcast: check_nccl(ncclBroadcast(sb, rb, count, ncclFloat, 0, comm, s), "ncclBroadcast"); break;
        case Collective::all_gather:
          check_nccl(ncclAllGather(sb, rb, count / static_cast<size_t>(n), ncclFloat, comm, s), "ncclAllGather");
          break;
        case Collective::reduce_scatter:
          check_nccl(ncclReduceScatter(sb, rb, count / static_cast<size_t>(n), ncclFloat, ncclSum, comm, s), "ncclReduceScatter");
          break;
        case Collective::all_to_all: {
          const size_t chunk = count / static_cast<size_t>(n);
          for (int peer = 0; peer < n; ++peer) {
            check_nccl(ncclSend(static_cast<const float*>(sb) + chunk * peer, chunk, ncclFloat, peer, comm, s), "ncclSend");
            check_nccl(ncclRecv(static_cast<float*>(rb) + chunk * peer, chunk, ncclFloat, peer, comm, s), "ncclRecv");
          }
          break;
        }
        case Collective::send_recv:
          check_nccl(ncclSend(sb, count, ncclFloat, (r + 1) % n, comm, s), "ncclSend");
          check_nccl(ncclRecv(rb, count, ncclFloat, (r - 1 + n) % n, comm, s), "ncclRecv");
          break;
      }
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  }

  void sync() {
    for (size_t i = 0; i < devices_.size(); ++i) {
      TP_CUDA(cudaSetDevice(devices_[i]));
      TP_CUDA(cudaStreamSynchronize(streams_[i]));
    }
    TP_CUDA(cudaSetDevice(devices_[0]));
  }

  void barrier() {
#ifdef TRAINPLAN_HAS_MPI
    if (info_.size > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
  }

  double slowest(double t) {
#ifdef TRAINPLAN_HAS_MPI
    if (info_.size > 1) {
      double m = t;
      MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      return m;
    }
#endif
    return t;
  }

  TimeStats measure(Collective c, double bytes, const RepetitionPolicy& policy) override {
    const size_t count = static_cast<size_t>(bytes / 4);
    if (count == 0) throw Unsupported("size rounds to 0 elements");
    const size_t total = count * 4;
    // Buffers: all_gather receives the whole array, reduce_scatter sends it.
    ensure(total, total);
    const int iters = bytes < (1 << 20) ? 20 : 5;
    for (int w = 0; w < std::max(1, policy.warmup); ++w) launch(c, count);
    sync();
    std::vector<double> samples;
    do {
      barrier();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) launch(c, count);
      sync();
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
      samples.push_back(slowest(dt));
      // Every rank must take the same number of samples: the decision is rank 0's.
      int more = enough_repetitions(samples, policy) ? 0 : 1;
#ifdef TRAINPLAN_HAS_MPI
      if (info_.size > 1) MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
      if (more == 0) break;
    } while (true);
    TimeStats t = summarize(samples);
    t.stable = t.relative_spread() <= policy.target_spread;
    return t;
  }

  std::vector<std::vector<float>> all_reduce_values(size_t count) override {
    ensure(count * 4, count * 4);
    for (size_t i = 0; i < devices_.size(); ++i) {
      TP_CUDA(cudaSetDevice(devices_[i]));
      std::vector<float> v(count, static_cast<float>(rank_of(i) + 1));
      TP_CUDA(cudaMemcpy(send_[i].get(), v.data(), count * 4, cudaMemcpyHostToDevice));
    }
    launch(Collective::all_reduce, count);
    sync();
    std::vector<std::vector<float>> out;
    for (size_t i = 0; i < devices_.size(); ++i) {
      TP_CUDA(cudaSetDevice(devices_[i]));
      std::vector<float> v(count);
      TP_CUDA(cudaMemcpy(v.data(), recv_[i].get(), count * 4, cudaMemcpyDeviceToHost));
      out.push_back(std::move(v));
    }
    TP_CUDA(cudaSetDevice(devices_[0]));
    return out;
  }

 private:
  RankInfo info_;
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<DeviceBuffer> send_, recv_;
  size_t send_cap_ = 0, recv_cap_ = 0;
  int total_ranks_ = 1;
  int nodes_ = 1;
};

}  // namespace

std::unique_ptr<NcclGroup> make_nccl_group(const RankInfo& ranks) { return std::make_unique<Group>(ranks); }

}  // namespace tp::cuda
