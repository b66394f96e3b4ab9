// Held-out check of the attention-kernel rule (docs/model.md §20, "Attention kernels") on llm-foundry's own
// benchmark sweep: MPT 125M-70B, sequence 512-65,536, on 8-64 H100 and A100 80 GB, all runs of one software
// image (tests/data/llmfoundry-h100new.md, its provenance in the file's first lines). The oracle is each
// row's measured throughput: step seconds = GlobalBatchSize (T) / Throughput (T/s). The rows ran MPT's
// Triton FlashAttention (the sweep's default attn_impl). Nothing in the planner was set from these rows; the
// Triton kernel's rates are the FlashAttention-2 paper's. Eight H100 rows are also in the sharded set (the
// README's 2023 H100 table was copied from this sweep); the A100 rows and the other lengths are nowhere else. The test prints each row under both kernels and
// checks the claim the rule makes: naming the kernel the runs used predicts them better than taking
// FlashAttention-2 for it, over the whole sweep.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hardware_profile.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

struct SweepRow {
  std::string model, gpu;
  int seq = 0, gpus = 0, micro_batch = 0, global_batch = 0;
  double tokens_per_s = 0, batch_tokens = 0;
  bool checkpointing = false;
  double measured() const { return batch_tokens / tokens_per_s; }
};

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string c;
  while (std::getline(ss, c, '|')) {
    const auto b = c.find_first_not_of(' '), e = c.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : c.substr(b, e - b + 1));
  }
  return out;
}

// The 80 GB rows with a positive micro-batch (the file also lists a few A100 40 GB placeholders).
std::vector<SweepRow> read_sweep() {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/tests/data/llmfoundry-h100new.md");
  std::vector<SweepRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> c = cells(line);
    // Leading empty cell before the first '|': Model is c[1], SeqLen c[2], ... as the header names them.
    if (c.size() < 18 || c[2].empty() || !std::isdigit(static_cast<unsigned char>(c[2][0]))) continue;
    SweepRow r{c[1], c[4], std::stoi(c[2]), std::stoi(c[3]), std::stoi(c[7]), std::stoi(c[9]),
               std::stod(c[11]), std::stod(c[13]), c[17] == "True"};
    if ((r.gpu == "h100_80gb" || r.gpu == "a100_80gb") && r.micro_batch > 0) rows.push_back(r);
  }
  return rows;
}

// MPT shapes: llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml (n_layers, d_model, n_heads; expansion 4).
struct MptShape {
  int layers, hidden, heads;
};
const std::map<std::string, MptShape> kShapes = {
    {"125m", {12, 768, 12}}, {"350m", {24, 1024, 16}}, {"760m", {24, 1536, 12}}, {"1b", {24, 2048, 16}},
    {"3b", {32, 2560, 20}},  {"7b", {32, 4096, 32}},   {"13b", {40, 5120, 40}},  {"30b", {48, 7168, 56}},
    {"70b", {80, 8192, 64}}};

// The same settings as the sharded set's llm-foundry scenarios (scripts/sharded_scenarios.py).
Scenario sweep_scenario(const SweepRow& r, const char* kernel) {
  const MptShape m = kShapes.at(r.model);
  std::ostringstream y;
  y << "name: mpt-" << r.model << "\nmodel: {name: MPT, layers: " << m.layers << ", hidden: " << m.hidden
    << ", heads: " << m.heads << ", ffn_hidden: " << 4 * m.hidden
    << ", vocab: 50368, activation: gelu, norm: layernorm, position: learned, max_positions: " << r.seq
    << ", tied_embeddings: true, bias: false, dropout: false}\n"
    << "cluster: {preset: " << (r.gpu == "h100_80gb" ? "dgx-h100" : "dgx-a100") << ", nodes: " << std::max(1, r.gpus / 8)
    << "}\ntraining: {framework: fsdp, precision: bf16, sequence_length: " << r.seq << ", global_batch: " << r.global_batch
    << ", micro_batch: " << r.micro_batch
    << ", optimizer: adamw, flash_attention: true, optimizer_kernel: for_loop, fused_loss: true, attention_kernel: " << kernel
    << "}\nparallel: {tp: 1, pp: 1, cp: 1, dp: " << r.gpus << ", recompute: " << (r.checkpointing ? "full" : "none")
    << ", zero: 3}\nmemory: {fsdp_version: 1}\n";  // Composer wraps with FSDP1 (scripts/sharded_frameworks.py)
  return test::scenario(y.str());
}

// The length bands of docs/model.md §20's signed table.
const char* length_band(int seq) { return seq <= 2048 ? "s <= 2048" : seq >= 16384 ? "s >= 16384" : "2048 < s < 16384"; }

double predicted_step(const SweepRow& r, const char* kernel) {
  const Scenario s = sweep_scenario(r, kernel);
  return make_plan(s, profile_for(s)).time.step.value;
}

TEST(SeqSweepValidation, NamingTheTritonKernelPredictsTheHeldOutSweepBetter) {
  const std::vector<SweepRow> rows = read_sweep();
  ASSERT_EQ(rows.size(), 128u);  // 68 H100 and 60 A100 rows
  std::map<std::string, double> sum_triton, sum_flash, count;
  std::map<std::string, double> signed_triton, signed_flash, band_count;  // by GPU and length band
  for (const SweepRow& r : rows) {
    const double triton = predicted_step(r, "triton"), flash = predicted_step(r, "flash");
    ASSERT_TRUE(std::isfinite(triton) && triton > 0 && std::isfinite(flash) && flash > 0) << r.model << " s" << r.seq;
    const double et = triton / r.measured() - 1, ef = flash / r.measured() - 1;
    std::printf("mpt-%-5s s %6d  %3d x %-9s  measured %8.3f s  triton %+6.1f%%  flash-2 %+6.1f%%\n", r.model.c_str(), r.seq,
                r.gpus, r.gpu.c_str(), r.measured(), 100 * et, 100 * ef);
    for (const std::string& k : {r.gpu, std::string("all")}) {
      sum_triton[k] += std::fabs(et);
      sum_flash[k] += std::fabs(ef);
      count[k] += 1;
    }
    const std::string band = r.gpu + "  " + length_band(r.seq);
    signed_triton[band] += et;
    signed_flash[band] += ef;
    band_count[band] += 1;
  }
  for (const auto& [k, n] : band_count) {
    std::printf("%-28s %3.0f rows: signed mean with the Triton kernel %+.1f %%, with FlashAttention-2 %+.1f %%\n", k.c_str(),
                n, 100 * signed_triton[k] / n, 100 * signed_flash[k] / n);
  }
  for (const auto& [k, n] : count) {
    std::printf("%-10s %3.0f rows: mean |error| with the Triton kernel %.1f %%, with FlashAttention-2 %.1f %%\n", k.c_str(), n,
                100 * sum_triton[k] / n, 100 * sum_flash[k] / n);
  }
  // The rule's claim over the sweep (2026-11-24, with the fused loss timed as its Triton kernel: 10.2 %
  // against 17.5 %; A100 9.3 against 21.2 %, H100 11.0 against 14.2 %, docs/model.md §20; since the sweep's
  // checkpointed rows stop their recompute early, as its torch 2.1 nightly image does (fsdp's default
  // training.checkpoint_early_stop, docs/model.md §6): 9.4 against 18.1 %, A100 8.2 / 21.9 %, H100 10.4 / 14.9 %).
  EXPECT_LT(sum_triton["all"], sum_flash["all"]);
  // Regression guard at today's level, not a goal.
  EXPECT_LE(sum_triton["all"] / count["all"], 0.10);
}

}  // namespace
}  // namespace tp
