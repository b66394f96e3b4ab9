// The fast sweep axes: each grid value of a scenario key becomes a setter that writes it into a Scenario
// in place (no YAML per point). Values are parsed once, with the scenario's own spellings.
#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "errors.h"
#include "section_limits.h"
#include "sweep.h"

namespace tp {
namespace {

using section_limits::kBig;
using section_limits::kMaxDataParallel;
using section_limits::kMaxDegree;
using section_limits::kMaxNodes;
using section_limits::kMaxRecomputeSpan;
using section_limits::kMaxVpp;

// An integer in [min, max], the bounds the scenario's reader puts on the same key (section_limits.h); `what`
// names it in the message.
std::int64_t parse_int(const Axis& a, const std::string& v, std::int64_t min, std::int64_t max,
                       const char* what = "an integer") {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || end == nullptr || *end != '\0' || errno == ERANGE || x < min || x > max) {
    throw InputError(a.where, a.key,
                     "'" + v + "' is not " + what + " in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return x;
}

bool parse_bool(const Axis& a, const std::string& v) {
  if (v == "true") return true;
  if (v == "false") return false;
  throw InputError(a.where, a.key, "'" + v + "' is not true or false");
}

// The first `count` values of an enum, named by their to_string() spelling (the scenario's words).
template <class E>
E parse_named(const Axis& a, const std::string& v, int count) {
  std::string list;
  for (int i = 0; i < count; ++i) {
    const E e = static_cast<E>(i);
    if (v == to_string(e)) return e;
    list += (list.empty() ? "" : " | ") + std::string(to_string(e));
  }
  throw InputError(a.where, a.key, "'" + v + "' is not one of " + list);
}

using Setter = std::function<void(Scenario&)>;

// The integer keys: their least and largest values and how a value is written into a scenario.
struct IntKey {
  const char* key;
  std::int64_t min, max;
  void (*write)(Scenario&, std::int64_t);
  const char* what = "an integer";
};

const IntKey kIntKeys[] = {
    {"parallel.tp", 1, kMaxDegree, [](Scenario& s, std::int64_t x) { s.parallel.tp = static_cast<int>(x); }},
    {"parallel.pp", 1, kMaxDegree,
     [](Scenario& s, std::int64_t x) {
       s.parallel.pp = static_cast<int>(x);
       s.parallel.layers_auto = true;
     }},
    {"parallel.dp", 1, kMaxDataParallel,
     [](Scenario& s, std::int64_t x) {
       s.parallel.dp = static_cast<int>(x);
       s.parallel.dp_auto = false;
     }},
    {"parallel.cp", 1, kMaxDegree, [](Scenario& s, std::int64_t x) { s.parallel.cp = static_cast<int>(x); }},
    {"parallel.ep", 1, kMaxDegree, [](Scenario& s, std::int64_t x) { s.parallel.ep = static_cast<int>(x); }},
    {"parallel.vpp", 1, kMaxVpp,
     [](Scenario& s, std::int64_t x) {
       s.parallel.vpp = static_cast<int>(x);
       s.parallel.layers_auto = true;
     }},
    {"parallel.dp_shard", 1, kMaxDataParallel, [](Scenario& s, std::int64_t x) { s.parallel.dp_shard = static_cast<int>(x); }},
    {"parallel.zero", 0, 3,
     [](Scenario& s, std::int64_t x) {
       s.parallel.zero = static_cast<int>(x);
       s.parallel.zero_given = true;
     },
     "a ZeRO stage"},
    {"training.micro_batch", 1, kBig, [](Scenario& s, std::int64_t x) { s.training.micro_batch = x; }},
    {"training.global_batch", 1, kBig, [](Scenario& s, std::int64_t x) { s.training.global_batch = x; }},
    {"training.sequence_length", 1, kBig, [](Scenario& s, std::int64_t x) { s.training.sequence_length = x; }},
    {"cluster.nodes", 1, kMaxNodes, [](Scenario& s, std::int64_t x) { s.cluster.nodes = static_cast<int>(x); }},
};

Setter recompute_setter(const Axis& a, const std::string& v) {
  Recompute rc;
  if (v.rfind("{", 0) == 0) {
    const size_t colon = v.find(':');
    const size_t close = v.find('}');
    const bool one_in = v.find("one_in") != std::string::npos;
    if ((!one_in && v.find("every") == std::string::npos) || colon == std::string::npos || close == std::string::npos) {
      throw InputError(a.where, a.key, "'" + v + "' is not none | selective | full | selective_op | {every: k} | {one_in: k}");
    }
    std::string k = v.substr(colon + 1, close - colon - 1);
    k.erase(std::remove(k.begin(), k.end(), ' '), k.end());
    rc = {one_in ? RecomputeMode::one_in : RecomputeMode::every, static_cast<int>(parse_int(a, k, 1, kMaxRecomputeSpan))};
  } else {
    rc.mode = parse_named<RecomputeMode>(a, v, 4);  // none | selective | full | selective_op ({every: k}, {one_in: k} above)
  }
  return [rc](Scenario& s) { s.parallel.recompute = rc; };
}

// The integer key `key` names, or nullptr.
const IntKey* int_key_of(const std::string& key) {
  for (const IntKey& ik : kIntKeys) {
    if (key == ik.key) return &ik;
  }
  return nullptr;
}

Setter make_setter(const Axis& a, const std::string& v) {
  const std::string& k = a.key;
  if (const IntKey* ik = int_key_of(k)) {
    const std::int64_t x = parse_int(a, v, ik->min, ik->max, ik->what);
    return [x, write = ik->write](Scenario& s) { write(s, x); };
  }
  if (k == "parallel.schedule") {
    const Schedule sc = parse_named<Schedule>(a, v, 4);
    return [sc](Scenario& s) { s.parallel.schedule = sc; };
  }
  if (k == "parallel.sequence_parallel") {
    const bool b = parse_bool(a, v);
    return [b](Scenario& s) {
      s.parallel.sequence_parallel = b;
      s.parallel.sequence_parallel_given = true;
    };
  }
  if (k == "parallel.recompute") return recompute_setter(a, v);
  if (k == "training.flash_attention") {
    const bool b = parse_bool(a, v);
    return [b](Scenario& s) { s.training.flash_attention = b; };
  }
  if (k == "training.precision") {
    const Precision p = parse_named<Precision>(a, v, kPrecisionCount);
    return [p](Scenario& s) { s.training.precision = p; };
  }
  throw InputError(a.where, a.key, "not a fast sweep key");
}

}  // namespace

bool is_fast_key(const std::string& key) {
  static const char* keys[] = {"parallel.tp", "parallel.pp", "parallel.dp", "parallel.cp", "parallel.ep",
                               "parallel.vpp", "parallel.dp_shard", "parallel.zero", "parallel.schedule", "parallel.sequence_parallel",
                               "parallel.recompute", "training.micro_batch", "training.global_batch",
                               "training.sequence_length", "training.flash_attention", "training.precision",
                               "cluster.nodes"};
  for (const char* k : keys) {
    if (key == k) return true;
  }
  return false;
}

FastAxis make_fast_axis(const Axis& a) {
  FastAxis f;
  f.key = a.key;
  std::vector<std::int64_t> integers;  // an integer key's values, compared by value ("4" and "04" are one)
  const IntKey* ik = int_key_of(a.key);
  for (const auto& v : a.values) {
    f.labels.push_back(v);
    f.setters.push_back(make_setter(a, v));
    if (ik == nullptr) continue;
    const std::int64_t x = parse_int(a, v, ik->min, ik->max, ik->what);
    if (std::find(integers.begin(), integers.end(), x) != integers.end()) {
      throw InputError(a.where, "grid." + a.key, "value '" + v + "' is given twice (as " + std::to_string(x) + ")");
    }
    integers.push_back(x);
  }
  return f;
}

}  // namespace tp
