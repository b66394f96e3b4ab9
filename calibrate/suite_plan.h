// What `trainplan calibrate run` measures: the layer GEMMs of a scenario (forward, input-gradient and
// weight-gradient GEMM of every GEMM op of the planner's op graph, per TP degree), its attention shape,
// plus generic grids (GEMM sizes per dtype, attention shapes, memory sizes, collective sizes from 8 B
// doubling to >= 1 GiB as nccl-tests -b 8 -e 1G -f 2). Pure CPU: the plan is a list of Measurement
// templates (op, shape, dtype, label) that the CUDA runner fills in.
#pragma once

#include <string>
#include <vector>

#include "measurements.h"
#include "scenario.h"

namespace tp {

// kernels: the memory-bound kernel classes of a training step (model/kernel_class.h) on realistic sizes.
enum class Suite { gemm, attention, memory, collectives, power, kernels };
inline constexpr int kSuiteCount = 6;
const char* to_string(Suite s);

// "gemm,attention" -> {gemm, attention}; "all" -> every suite. Unknown names are an InputError
// naming `field` with the closest suite.
std::vector<Suite> parse_suites(const std::string& list, const std::string& field = "--suite");

struct SuiteOptions {
  std::vector<Suite> suites{Suite::gemm, Suite::attention, Suite::memory, Suite::collectives, Suite::power, Suite::kernels};
  std::vector<Precision> gemm_dtypes{Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8};
  std::vector<int> tp_degrees;  // empty = 1, 2, 4, 8 up to gpus_per_node, dividing the heads
  bool quick = false;           // a small grid (smoke runs, tests)
  double collective_min_bytes = 8;
  double collective_max_bytes = 1024.0 * 1024.0 * 1024.0;  // 1 GiB
  double memory_max_bytes = 4.0 * 1024 * 1024 * 1024;     // per array
};

// The layer GEMMs of scenario `s` for TP degree `tp`: forward (M = tokens, N = out, K = in),
// input gradient (M = tokens, N = in, K = out) and weight gradient (M = in, N = out, K = tokens), with
// column-parallel ops (qkv, fc1, output, expert_fc1) splitting `out` and row-parallel ones
// (attention_out, fc2, expert_fc2) splitting `in`; replicated ops (router) are not split. tokens =
// micro_batch x sequence / cp (per expert for MoE experts). Labels: "qkv fwd tp=8".
std::vector<Measurement> scenario_gemms(const Scenario& s, int tp, Precision dtype);

// The TP degrees worth measuring for `s`: powers of two up to gpus_per_node that divide the heads
// (and always the scenario's own tp).
std::vector<int> default_tp_degrees(const Scenario& s);

// The label of the attention cases at the scenario's own shape ("scenario tp=8": micro-batch x heads / tp,
// the grid the step runs), which `calibrate check` reports apart from the wide generic grids.
inline constexpr const char* kScenarioAttentionLabel = "scenario tp=";
bool is_scenario_attention_case(const Measurement& m);

// The kernels suite: every KernelClass on the sizes of fused_ref.py (tokens x hidden 8192 x 2048,
// 8192 x 4096, 16384 x 8192; ffn = 4 hidden; vocabularies 50257 and 128256; AdamW on 250 M and 1 G
// parameters in fp32 and bf16), smaller with `quick`. Each case is a memory_kernel template with
// kernel, dtype, rows and cols; the runner records the bytes moved (kernel_traffic.h).
std::vector<Measurement> kernel_cases(bool quick);

// The whole plan; `s` may be null (generic grids only). Identical GEMM cases are merged (labels joined).
std::vector<Measurement> plan_suite(const SuiteOptions& o, const Scenario* s);

// Collective sizes from min to max bytes, doubling (max included when it is not a power-of-two step).
std::vector<double> collective_sizes(double min_bytes, double max_bytes);

}  // namespace tp
