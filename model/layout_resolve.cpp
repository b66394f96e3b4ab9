// Derived layout values of a scenario (model/checks.h): the data-parallel degree, the global batch and the
// layers of each pipeline stage.
#include <algorithm>

#include "checks.h"
#include "problem_collector.h"
#include "section_limits.h"

namespace tp {

// The fewest layers stage `stage` of `stages` may hold when each stage is split into `vpp` chunks of
// floor(L / vpp) or ceil(L / vpp) layers: vpp, or vpp - 1 on the first and last stage, whose one empty
// chunk holds only the embedding or only the output layer and loss (Llama 3 405B: 126 layers on 16
// stages, one layer fewer on the first and the last, Dubey et al. 2024, section 3.3.2; Megatron-Core's
// `pipeline_model_parallel_layout` places chunks the same way).
int fewest_stage_layers(int stage, int stages, int vpp) {
  const bool end = stage == 0 || stage == stages - 1;
  return std::max(1, end ? vpp - 1 : vpp);
}

void auto_layers_per_stage(int layers, int stages, std::vector<int>& out) {
  out.assign(static_cast<size_t>(std::max(stages, 0)), stages > 0 ? layers / stages : 0);
  if (stages <= 0 || layers % stages == 0) return;
  // stages - extra stages stay light; they go to the ends: first, last, second, second-to-last ...
  // so the first ceil(lights / 2) and the last floor(lights / 2) stages are light.
  const int lights = stages - layers % stages;
  const int head = (lights + 1) / 2, tail = lights / 2;
  for (int i = head; i < stages - tail; ++i) out[static_cast<size_t>(i)] += 1;
}

std::vector<int> auto_layers_per_stage(int layers, int stages) {
  std::vector<int> out;
  auto_layers_per_stage(layers, stages, out);
  return out;
}

std::vector<Problem> resolve_layout(Scenario& s) {
  Collector c{true, {}};
  ParallelSpec& p = s.parallel;
  // The defaults of the layout as it now is (a sweep point or a suggested fix may have changed pp or tp).
  if (!p.zero_given) p.zero = default_zero(s.training.framework, p.pp);
  if (!p.sequence_parallel_given) p.sequence_parallel = p.tp > 1;
  const long long gpus = s.gpus();
  const long long tpc = static_cast<long long>(p.tp) * p.pp * p.cp;
  if (p.dp_auto) {
    if (tpc <= 0 || gpus % tpc != 0) {
      c.add("parallel.tp", "cluster.nodes",
            "tp × pp × cp = " + num(p.tp) + " × " + num(p.pp) + " × " + num(p.cp) + " = " + num(tpc) +
                " does not divide the cluster's " + num(gpus) +
                " GPUs (cluster.nodes × cluster.gpus_per_node)");
      return c.out;
    }
    p.dp = static_cast<int>(gpus / tpc);
  } else if (tpc * p.dp != gpus) {
    c.add("parallel.dp", "cluster.nodes",
          "tp × pp × dp × cp = " + num(p.tp) + " × " + num(p.pp) + " × " + num(p.dp) + " × " + num(p.cp) +
              " = " + num(tpc * p.dp) + " but the cluster has " + num(gpus) +
              " GPUs (cluster.nodes × cluster.gpus_per_node); use dp: auto");
    return c.out;
  }
  if (s.training.global_batch == 0) {  // one micro-batch per replica
    if (static_cast<double>(s.training.micro_batch) * p.dp > static_cast<double>(section_limits::kBig)) {
      c.add("training.micro_batch", "parallel.dp",
            "micro_batch × dp = " + num(s.training.micro_batch) + " × " + num(p.dp) +
                " sequences a step (training.global_batch unsaid) is more than 2^52");
      return c.out;
    }
    s.training.global_batch = static_cast<std::int64_t>(s.training.micro_batch) * p.dp;
  }
  if (p.pp > s.model.layers) {
    c.add("parallel.pp", "model.layers",
          "pp = " + num(p.pp) + " stages but the model has only " + num(s.model.layers) + " layers");
    return c.out;
  }
  if (p.layers_auto) {
    auto_layers_per_stage(s.model.layers, p.pp, p.layers_per_stage);
    for (int i = 0; i < p.pp; ++i) {
      const int l = p.layers_per_stage[static_cast<size_t>(i)], fewest = fewest_stage_layers(i, p.pp, p.vpp);
      if (l >= fewest) continue;
      c.add("parallel.vpp", "model.layers",
            "the interleaved schedule splits each stage's layers into vpp = " + num(p.vpp) + " chunks, and " +
                num(s.model.layers) + " layers on pp = " + num(p.pp) + " stages leave stage " + num(i) + " with " +
                num(l) + " (it needs at least " + num(fewest) + "); lower vpp or give parallel.layers_per_stage");
      return c.out;
    }
  }
  return c.out;
}

}  // namespace tp
