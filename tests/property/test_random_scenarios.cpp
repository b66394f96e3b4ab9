// Property test (issue 11, "What to build" 1): thousands of random in-range scenarios, seeded, through
// evaluate (JSON and table), the step simulator and a few small sweeps. Every input is either a clear
// InputError or an output whose every number is finite, non-negative where it must be, counts are
// integers and JSON is valid. The oracle is the property itself (no expected values): a number that is
// inf/NaN, a negative duration/cost, a float count or a 20-digit printed number fails it.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "errors.h"
#include "fixes.h"
#include "hardware_profile.h"
#include "plan.h"
#include "report.h"
#include "simulate.h"
#include "test_support.h"

namespace tp {
namespace {

constexpr std::uint64_t kSeed = 20261123;
constexpr int kScenarios = 2500;

class RandomScenarios {
 public:
  explicit RandomScenarios(std::uint64_t seed) : rng_(seed) {}

  std::string next() {
    static const char* const models[] = {"gpt2-124m", "gpt3-5b", "llama2-7b", "llama3.1-8b", "llama2-13b",
                                         "llama3.1-70b", "mixtral-8x7b", "gpt3-175b", "llama3.1-405b"};
    static const char* const clusters[] = {"dgx-a100", "dgx-h100", "hgx-h200", "workstation-4x4090"};
    static const char* const schedules[] = {"1f1b", "gpipe", "zb-h1"};
    static const char* const recompute[] = {"none", "selective", "full"};
    const int gpn = pick_index(4) == 3 ? 4 : 8;  // the workstation preset has 4 GPUs per node
    const std::string cluster = gpn == 4 ? clusters[3] : clusters[pick_index(3)];
    // Nodes from 1 to 2^17 (10^6 GPUs): the large end meets failure regimes without progress.
    const long nodes = cluster == clusters[3] ? 1 : 1L << pick_index(18);
    const int tp = 1 << pick_index(4), pp = 1 << pick_index(4);
    const long gpus = nodes * gpn;
    const long dp = gpus % (tp * pp) == 0 ? gpus / (tp * pp) : 1;
    const long mb = 1L << pick_index(3);
    const long batch = mb * dp * (1L << pick_index(6));
    std::ostringstream y;
    y << "model: " << models[pick_index(9)] << "\n"
      << "cluster: {preset: " << cluster << ", nodes: " << nodes << "}\n"
      << "training: {sequence_length: " << (1024 << pick_index(4)) << ", micro_batch: " << mb
      << ", global_batch: " << batch << ", tokens: " << number(6, 15) << "}\n"
      << "parallel: {tp: " << tp << ", pp: " << pp << ", zero: " << pick_index(pp > 1 ? 3 : 4)
      << ", schedule: " << schedules[pick_index(3)] << ", recompute: " << recompute[pick_index(3)] << "}\n"
      << "costs: {gpu_hour: " << uniform(0.1, 12.0) << " USD, spot_gpu_hour: " << uniform(0.0, 4.0)
      << " USD, preemptions_per_day: " << uniform(0.0, 200.0) << ", failures: {gpu_mtbf: " << number(1, 6)
      << " h, checkpoint_bandwidth: " << number(-1, 3) << " GB/s, restart: " << uniform(0.0, 7200.0) << " s}}\n";
    return y.str();
  }

 private:
  int pick_index(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  double number(double lo_exp, double hi_exp) { return std::pow(10.0, uniform(lo_exp, hi_exp)); }
  std::mt19937_64 rng_;
};

// Keys whose value may be negative: a relative difference.
bool may_be_negative(const std::string& path) { return path.find("difference") != std::string::npos; }

void check_numbers(const nlohmann::json& j, const std::string& path, int& checked) {
  if (j.is_number()) {
    ++checked;
    const double v = j.get<double>();
    ASSERT_TRUE(std::isfinite(v)) << path;
    if (!may_be_negative(path)) {
      ASSERT_GE(v, 0.0) << path;
    }
  } else if (j.is_null()) {
    // nlohmann writes inf/NaN as null: no number field may be null.
    ASSERT_TRUE(path.size() >= 6 && path.substr(path.size() - 6) == ".trace") << "null at " << path;
  } else if (j.is_object()) {
    // A sweep point whose job cannot finish has no run time, cost or energy: null, and `finishes` says so.
    const bool unfinished = j.contains("finishes") && j.at("finishes") == false;
    for (auto it = j.begin(); it != j.end(); ++it) {
      const bool run_total = it.key() == "run_seconds" || it.key() == "cost_usd" || it.key() == "energy_kwh";
      if (unfinished && run_total && it.value().is_null()) continue;
      check_numbers(it.value(), path + "." + it.key(), checked);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) check_numbers(j[i], path + "[" + std::to_string(i) + "]", checked);
  }
}

// A printed table: no inf/nan and no run of 19+ digits (a number that did not scale to a unit).
void check_text(const std::string& text) {
  static const std::regex non_finite(R"((^|[^A-Za-z])-?(inf|nan)([^A-Za-z]|$))", std::regex::icase);
  ASSERT_FALSE(std::regex_search(text, non_finite)) << text;
  int run = 0;
  for (char c : text) {
    run = std::isdigit(static_cast<unsigned char>(c)) ? run + 1 : 0;
    ASSERT_LT(run, 19) << text;
  }
}

void check_plan_output(const Scenario& s, const Plan& p, const HardwareProfile& hw, int& checked) {
  const nlohmann::json j = plan_json(s, p, hw);
  const nlohmann::json parsed = nlohmann::json::parse(j.dump(2));  // valid JSON, round trip
  check_numbers(parsed, "$", checked);
  for (const char* key : {"total", "per_gpu", "active"}) {
    ASSERT_TRUE(parsed.at("parameters").at(key).is_number_integer()) << key;
  }
  ASSERT_TRUE(parsed.at("run").at("steps").is_number_integer());
  ASSERT_TRUE(parsed.at("scenario").at("tokens_per_step").is_number_integer());
  std::ostringstream table;
  print_plan_table(table, s, p, hw);
  check_text(table.str());
}

void check_simulation(const Scenario& s, const Plan& p) {
  const SimResult r = simulate_step(s, p, SimOptions{});
  for (double v : {r.step_seconds.value, r.analytic_step_seconds.value, r.lower_bound.value, r.stats.mean.value,
                   r.stats.p99.value}) {
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_GE(v, 0.0);
  }
  ASSERT_GT(r.step_seconds.value, 0.0);
  for (const SimStage& st : r.stages) {
    for (double v : {st.busy.value, st.bubble.value, st.exposed_comm.value, st.activations.value}) {
      ASSERT_TRUE(std::isfinite(v));
      ASSERT_GE(v, 0.0);
    }
  }
}

TEST(RandomScenarios, EveryOutputNumberIsFinite) {
  RandomScenarios gen(kSeed);
  int evaluated = 0, rejected = 0, simulated = 0, no_progress = 0, numbers = 0;
  for (int i = 0; i < kScenarios; ++i) {
    const std::string yaml = gen.next();
    SCOPED_TRACE(yaml);
    Scenario s;
    try {
      s = test::scenario(yaml);
    } catch (const InputError&) {
      ++rejected;  // a clear error naming the field is a valid outcome
      continue;
    }
    const HardwareProfile hw = profile_for(s);
    Plan p = make_plan(s, hw);
    attach_fixes(s, p.estimate);
    ASSERT_NO_FATAL_FAILURE(check_plan_output(s, p, hw, numbers));
    ++evaluated;
    if (p.run.failures.regime == Regime::no_progress) ++no_progress;
    // The simulator on the smaller steps (its cost grows with pp x micro-batches).
    if (simulated < 400 && p.estimate.micro_batches * s.parallel.pp <= 256) {
      ASSERT_NO_FATAL_FAILURE(check_simulation(s, p));
      ++simulated;
    }
  }
  std::printf("random scenarios: %d evaluated (%d without progress), %d rejected with an error, %d simulated, "
              "%d numbers checked\n", evaluated, no_progress, rejected, simulated, numbers);
  // The generator must exercise the model, not only its errors, and reach the degenerate regime.
  EXPECT_GT(evaluated, kScenarios / 4) << "rejected " << rejected;
  EXPECT_GT(simulated, 100);
  EXPECT_GT(no_progress, 10);
  EXPECT_GT(numbers, evaluated * 50);
}

// A small sweep through the binary (JSON and --csv-all) on random bases, some with a million GPUs.
TEST(RandomScenarios, SmallSweepsHoldOnlyFiniteNumbers) {
  const std::string csv = (std::filesystem::path(::testing::TempDir()) / "trainplan-property.csv").string();
  for (const char* nodes : {"1", "8", "125000"}) {
    const std::string args = "sweep --set model=llama3.1-8b --set cluster.nodes=" + std::string(nodes) +
                             " --set training.global_batch=1000000 --grid parallel.tp=1,2,8 --grid parallel.pp=1,2"
                             " --grid parallel.zero=1,3 --format json --csv '" + csv + "' --csv-all";
    const test::RunResult r = test::run_trainplan(args);
    SCOPED_TRACE(args);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.output;
    const size_t brace = r.output.find('{');
    ASSERT_NE(brace, std::string::npos) << r.output;
    const size_t end = r.output.rfind('}');
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(r.output.substr(brace, end - brace + 1))) << r.output;
    int checked = 0;
    check_numbers(j, "$", checked);
    std::ifstream in(csv);
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_FALSE(text.str().empty());
    check_text(text.str());
  }
  std::filesystem::remove(csv);
}

}  // namespace
}  // namespace tp
