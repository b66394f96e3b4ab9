// A cuDNN operation graph built through the backend API (cudnn_graph.h: cudnnBackend* descriptors;
// no frontend header is packaged with the toolkit): tensors, matmul / pointwise / reduction / reshape
// operations, the heuristics' first engine that finalizes, and execution with a variant pack.
// Reference: cuDNN 9 Backend API (docs.nvidia.com/deeplearning/cudnn, "Graph API" and "Backend
// Descriptor Types"). Failures throw cuda::Unsupported naming the call and the cuDNN status.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tp::cuda {

using Dims = std::vector<std::int64_t>;

// Row-major strides of `dims`.
Dims packed_strides(const Dims& dims);

class CudnnGraph {
 public:
  CudnnGraph() = default;
  CudnnGraph(const CudnnGraph&) = delete;
  CudnnGraph& operator=(const CudnnGraph&) = delete;
  ~CudnnGraph();

  // A tensor the caller binds to memory (uid returned for the variant pack).
  cudnnBackendDescriptor_t tensor(std::int64_t uid, cudnnDataType_t type, const Dims& dims, const Dims& strides);
  // A graph-internal tensor (packed unless strides are given).
  cudnnBackendDescriptor_t virtual_tensor(cudnnDataType_t type, const Dims& dims, const Dims& strides = {});
  // A fp32 scalar passed by value (its variant-pack pointer is host memory).
  cudnnBackendDescriptor_t scalar(std::int64_t uid);

  void matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c);
  // y = mode(x[, b[, t]]); `math` is the compute type; `axis` >= 0 for GEN_INDEX.
  void pointwise(cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                 cudnnBackendDescriptor_t y, cudnnDataType_t math = CUDNN_DATA_FLOAT, std::int64_t axis = -1);
  // y = reduce(x) over the dimensions where y has extent 1 (or fewer heads: GQA sums).
  void reduction(cudnnReduceTensorOp_t op, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y);
  // y = x viewed with y's dimensions and strides (a transpose of a virtual tensor).
  void reshape(cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y);

  // Finalizes the graph and the first engine configuration of heuristics mode A (then fallback) whose
  // execution plan finalizes. Returns "cudnn engine N" (the engine's global index).
  std::string build(cudnnHandle_t handle);
  std::int64_t workspace_bytes() const { return workspace_; }
  void execute(cudnnHandle_t handle, const std::vector<std::int64_t>& uids, const std::vector<void*>& pointers, void* workspace);

 private:
  cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type);
  cudnnBackendDescriptor_t make_tensor(std::int64_t uid, cudnnDataType_t type, const Dims& dims, const Dims& strides, bool is_virtual,
                                       bool by_value);
  bool try_plan(cudnnHandle_t handle, cudnnBackendDescriptor_t config);

  std::vector<cudnnBackendDescriptor_t> owned_;  // destroyed in reverse order
  std::vector<cudnnBackendDescriptor_t> ops_;
  cudnnBackendDescriptor_t plan_ = nullptr;
  std::int64_t workspace_ = 0;
  std::int64_t next_virtual_uid_ = 1'000'000;
};

// Throws Unsupported("what: cuDNN status") unless s is CUDNN_STATUS_SUCCESS.
void check_cudnn(cudnnStatus_t s, const char* what);

}  // namespace tp::cuda
