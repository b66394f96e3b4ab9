// Fused attention through cuDNN (built when cudnn.h and libcudnn are found).
//
// NOT DONE YET: building cuDNN's scaled-dot-product-attention graph (matmul, scale, causal mask,
// softmax with stats, matmul; and its backward) through the raw backend API needs a GPU to develop
// against, and none was available when this was written. Until then the fused cases are recorded as
// skipped with this reason (never a crash), and `calibrate fit` keeps the generation defaults for
// attention.forward / attention.backward. docs/calibration.md lists this under "Not measured yet".
#include <cudnn.h>

#include "attention.cuh"

namespace tp::cuda {

namespace {
[[noreturn]] void not_yet() {
  throw Unsupported("cuDNN " + std::to_string(cudnnGetVersion()) +
                    " found, but the fused SDPA graph is not implemented yet in trainplan (docs/calibration.md)");
}
}  // namespace

TimeStats measure_attention_fused(const AttentionShape&, Precision, bool, const RepetitionPolicy&, L2Flusher*, std::string*) {
  not_yet();
}

AttentionOutputs attention_fused(const AttentionShape&, Precision, const std::vector<float>&, const std::vector<float>&,
                                 const std::vector<float>&, const std::vector<float>&) {
  not_yet();
}

}  // namespace tp::cuda
