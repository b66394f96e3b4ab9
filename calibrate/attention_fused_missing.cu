// Builds without cuDNN: fused attention is reported as skipped.
#include "attention.cuh"

namespace tp::cuda {

TimeStats measure_attention_fused(const AttentionShape&, Precision, bool, const RepetitionPolicy&, L2Flusher*, std::string*) {
  throw Unsupported("this build has no cuDNN: fused attention not measured");
}

AttentionOutputs attention_fused(const AttentionShape&, Precision, const std::vector<float>&, const std::vector<float>&,
                                 const std::vector<float>&, const std::vector<float>&) {
  throw Unsupported("this build has no cuDNN: fused attention not measured");
}

}  // namespace tp::cuda
