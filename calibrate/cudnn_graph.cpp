#include "cudnn_graph.h"

#include "timing.cuh"

namespace tp::cuda {

void check_cudnn(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw Unsupported(std::string("cuDNN ") + what + ": " + cudnnGetErrorString(s));
}

Dims packed_strides(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

namespace {

void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
         const void* values, const char* what) {
  check_cudnn(cudnnBackendSetAttribute(d, name, type, count, values), what);
}
void set_desc(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t v, const char* what) {
  set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v, what);
}

}  // namespace

CudnnGraph::~CudnnGraph() {
  for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) cudnnBackendDestroyDescriptor(*it);
}

cudnnBackendDescriptor_t CudnnGraph::make(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t d = nullptr;
  check_cudnn(cudnnBackendCreateDescriptor(type, &d), "create descriptor");
  owned_.push_back(d);
  return d;
}

cudnnBackendDescriptor_t CudnnGraph::make_tensor(std::int64_t uid, cudnnDataType_t type, const Dims& dims, const Dims& strides,
                                                 bool is_virtual, bool by_value) {
  cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const std::int64_t alignment = 16;
  const auto rank = static_cast<std::int64_t>(dims.size());
  set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, "tensor data type");
  set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, dims.data(), "tensor dimensions");
  set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, strides.data(), "tensor strides");
  set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "tensor unique id");
  set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, "tensor alignment");
  set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, "tensor is_virtual");
  if (by_value) set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, "tensor is_by_value");
  check_cudnn(cudnnBackendFinalize(t), "tensor finalize");
  return t;
}

cudnnBackendDescriptor_t CudnnGraph::tensor(std::int64_t uid, cudnnDataType_t type, const Dims& dims, const Dims& strides) {
  return make_tensor(uid, type, dims, strides, false, false);
}

cudnnBackendDescriptor_t CudnnGraph::virtual_tensor(cudnnDataType_t type, const Dims& dims, const Dims& strides) {
  return make_tensor(next_virtual_uid_++, type, dims, strides.empty() ? packed_strides(dims) : strides, true, false);
}

cudnnBackendDescriptor_t CudnnGraph::scalar(std::int64_t uid) {
  return make_tensor(uid, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
}

void CudnnGraph::matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c) {
  cudnnBackendDescriptor_t mm = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
  set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, "matmul compute type");
  check_cudnn(cudnnBackendFinalize(mm), "matmul descriptor finalize");
  cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a, "matmul A");
  set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b, "matmul B");
  set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c, "matmul C");
  set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm, "matmul descriptor");
  check_cudnn(cudnnBackendFinalize(op), "matmul operation finalize");
  ops_.push_back(op);
}

void CudnnGraph::pointwise(cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
                           cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y, cudnnDataType_t math, std::int64_t axis) {
  cudnnBackendDescriptor_t pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "pointwise mode");
  set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math, "pointwise math precision");
  if (axis >= 0) set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, "pointwise axis");
  check_cudnn(cudnnBackendFinalize(pw), "pointwise descriptor finalize");
  cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw, "pointwise descriptor");
  set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x, "pointwise X");
  if (b != nullptr) set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b, "pointwise B");
  if (t != nullptr) set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t, "pointwise T");
  set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y, "pointwise Y");
  check_cudnn(cudnnBackendFinalize(op), "pointwise operation finalize");
  ops_.push_back(op);
}

void CudnnGraph::reduction(cudnnReduceTensorOp_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
  cudnnBackendDescriptor_t red = make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
  set(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode, "reduction operator");
  set(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, "reduction compute type");
  check_cudnn(cudnnBackendFinalize(red), "reduction descriptor finalize");
  cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x, "reduction X");
  set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y, "reduction Y");
  set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, red, "reduction descriptor");
  check_cudnn(cudnnBackendFinalize(op), "reduction operation finalize");
  ops_.push_back(op);
}

void CudnnGraph::reshape(cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
  cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  set_desc(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x, "reshape X");
  set_desc(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y, "reshape Y");
  check_cudnn(cudnnBackendFinalize(op), "reshape operation finalize");
  ops_.push_back(op);
}

bool CudnnGraph::try_plan(cudnnHandle_t handle, cudnnBackendDescriptor_t config) {
  cudnnBackendDescriptor_t plan = nullptr;
  if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) != CUDNN_STATUS_SUCCESS) return false;
  owned_.push_back(plan);
  set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "plan handle");
  set_desc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config, "plan engine config");
  if (cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS) return false;
  std::int64_t n = 0;
  check_cudnn(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &workspace_),
              "plan workspace size");
  plan_ = plan;
  return true;
}

std::string CudnnGraph::build(cudnnHandle_t handle) {
  cudnnBackendDescriptor_t graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "graph handle");
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(ops_.size()), ops_.data(),
      "graph operations");
  check_cudnn(cudnnBackendFinalize(graph), "operation graph finalize");
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    cudnnBackendDescriptor_t heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    set_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, "heuristics graph");
    set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristics mode");
    if (cudnnBackendFinalize(heur) != CUDNN_STATUS_SUCCESS) continue;
    std::int64_t count = 0;
    if (cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr) !=
            CUDNN_STATUS_SUCCESS ||
        count <= 0) {
      continue;
    }
    std::vector<cudnnBackendDescriptor_t> configs;
    for (std::int64_t i = 0; i < count; ++i) configs.push_back(make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    std::int64_t got = 0;
    check_cudnn(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, configs.data()),
                "heuristics results");
    for (std::int64_t i = 0; i < got; ++i) {
      const cudnnBackendDescriptor_t config = configs[static_cast<size_t>(i)];
      if (!try_plan(handle, config)) continue;
      cudnnBackendDescriptor_t engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      std::int64_t n = 0, index = -1;
      if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine) ==
          CUDNN_STATUS_SUCCESS) {
        (void)cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index);
      }
      return "cudnn engine " + std::to_string(index);
    }
  }
  throw Unsupported("cuDNN " + std::to_string(cudnnGetVersion()) + " has no engine for this attention graph on this GPU");
}

void CudnnGraph::execute(cudnnHandle_t handle, const std::vector<std::int64_t>& uids, const std::vector<void*>& pointers,
                         void* workspace) {
  if (plan_ == nullptr) throw Unsupported("cuDNN graph executed before build()");
  cudnnBackendDescriptor_t pack = nullptr;
  check_cudnn(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack), "variant pack");
  struct Guard {
    cudnnBackendDescriptor_t d;
    ~Guard() { cudnnBackendDestroyDescriptor(d); }
  } guard{pack};
  set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(uids.size()), uids.data(), "variant pack ids");
  set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(pointers.size()), pointers.data(),
      "variant pack pointers");
  set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, "variant pack workspace");
  check_cudnn(cudnnBackendFinalize(pack), "variant pack finalize");
  check_cudnn(cudnnBackendExecute(handle, plan_, pack), "execute");
}

}  // namespace tp::cuda
