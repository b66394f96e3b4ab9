#include "quantity.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "errors.h"
#include "units.h"

namespace tp {
namespace {

struct Prefix {
  std::string_view text;
  double factor;
};

constexpr std::array<Prefix, 13> kPrefixes{{
    {"Ki", 1024.0}, {"Mi", kMiB}, {"Gi", kGiB}, {"Ti", kTiB}, {"Pi", kTiB * 1024.0},
    {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18},
    {"", 1.0},
}};

struct Unit {
  std::string_view text;
  Dim dim;
  double factor;       // multiplier to the base unit of `dim`
  bool prefixable;     // accepts SI/binary prefixes
};

// Longest spellings first so that "B/s" is not taken for "B".
constexpr std::array<Unit, 35> kUnits{{
    {"FLOP/s", Dim::flop_rate, 1.0, true},
    {"FLOPS", Dim::flop_rate, 1.0, true},
    {"FLOP", Dim::flop, 1.0, true},
    {"bit/s", Dim::byte_rate, 1.0 / 8.0, true},
    {"bps", Dim::byte_rate, 1.0 / 8.0, true},
    {"B/s", Dim::byte_rate, 1.0, true},
    {"USD/kWh", Dim::usd_per_kwh, 1.0 / kJoulesPerKwh, false},
    {"USD/MWh", Dim::usd_per_kwh, 1.0 / (1000.0 * kJoulesPerKwh), false},
    {"USD/h", Dim::usd_per_hour, 1.0 / kHour, false},
    {"USD/hr", Dim::usd_per_hour, 1.0 / kHour, false},
    {"USD", Dim::usd, 1.0, true},
    {"kg/kWh", Dim::kg_per_kwh, 1.0 / kJoulesPerKwh, false},
    {"g/kWh", Dim::kg_per_kwh, 1e-3 / kJoulesPerKwh, false},
    {"bit", Dim::bytes, 1.0 / 8.0, true},
    {"B", Dim::bytes, 1.0, true},
    {"W", Dim::watts, 1.0, true},
    {"Hz", Dim::frequency, 1.0, true},
    {"min", Dim::seconds, 60.0, false},
    {"ms", Dim::seconds, 1e-3, false},
    {"us", Dim::seconds, 1e-6, false},
    {"\xC2\xB5s", Dim::seconds, 1e-6, false},  // µs
    {"ns", Dim::seconds, 1e-9, false},
    {"ps", Dim::seconds, 1e-12, false},
    {"hours", Dim::seconds, kHour, false},
    {"hour", Dim::seconds, kHour, false},
    {"days", Dim::seconds, 86400.0, false},
    {"day", Dim::seconds, 86400.0, false},
    {"h", Dim::seconds, kHour, false},
    {"d", Dim::seconds, 86400.0, false},
    {"s", Dim::seconds, 1.0, false},
    // The counts a scenario gives are of tokens (training.tokens, global_batch_tokens) or of parameters (the
    // zero3_* settings): a word naming another thing (sequences, steps) would be read as that many tokens.
    {"tokens", Dim::count, 1.0, true},
    {"token", Dim::count, 1.0, true},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail(std::string_view text, Dim dim, const std::string& why) {
  throw UnitError(why + " in '" + std::string(text) + "': expected a " + dim_name(dim) +
                  " like '" + dim_example(dim) + "'");
}

// Splits "<prefix><unit>" into a factor and a dimension; returns false when not a known unit.
bool lookup_unit(std::string_view unit, Dim& dim, double& factor) {
  for (const Unit& u : kUnits) {
    if (unit.size() < u.text.size() || unit.substr(unit.size() - u.text.size()) != u.text) continue;
    std::string_view prefix = unit.substr(0, unit.size() - u.text.size());
    if (!u.prefixable && !prefix.empty()) continue;
    for (const Prefix& p : kPrefixes) {
      if (p.text == prefix) {
        dim = u.dim;
        factor = u.factor * p.factor;
        return true;
      }
    }
  }
  return false;
}

// The range a quantity of each dimension may take, in its base unit: far beyond any real machine or job, and
// small enough that products of them (time x power x GPUs x price) stay finite. A value below `least` must be
// 0 (where the field allows 0: an unsupported precision's peak): a clock of 1e-300 Hz would make every time
// infinite. A GHz written for MHz (a clock of 1575 GHz) is caught by the frequency's largest.
struct Range {
  double least, most;
};

Range range_of(Dim d) {
  switch (d) {
    case Dim::count: return {0, 1e24};
    case Dim::bytes: return {0, 1e21};          // a zettabyte
    case Dim::byte_rate: return {kLeastByteRate, 1e18};  // 1 kB/s .. 1 EB/s per link or GPU
    case Dim::flop: return {0, 1e30};
    case Dim::flop_rate: return {1e6, 1e20};    // per GPU; the largest GPUs give ~1e16
    case Dim::seconds: return {0, 1e12};        // ~31,700 years
    case Dim::watts: return {0, 1e9};
    case Dim::usd: return {0, 1e15};
    case Dim::usd_per_hour: return {0, 1e6 / kHour};
    case Dim::usd_per_kwh: return {0, 1e6 / kJoulesPerKwh};
    case Dim::kg_per_kwh: return {0, 1e6 / kJoulesPerKwh};
    case Dim::frequency: return {1e8, 5e9};     // 100 MHz .. 5 GHz (GPU SM clocks are 1-3 GHz)
  }
  return {0, 1e300};
}

// "1e+11 Hz": a bound in the dimension's base unit, for messages.
std::string in_base_unit(double v, Dim d) {
  const std::string unit = dim_base_unit(d);
  return unit.empty() ? shown(v) : shown(v) + " " + unit;
}

// The parsed value checked against range_of(dim).
double in_range(std::string_view raw, Dim dim, double v) {
  const Range r = range_of(dim);
  if (!std::isfinite(v) || std::fabs(v) > r.most) {
    fail(raw, dim, "out of range (at most " + in_base_unit(r.most, dim) + ")");
  }
  // (A negative value is left to the field's own minimum: "must be positive".)
  if (v > 0 && v < r.least) fail(raw, dim, "out of range (0 or at least " + in_base_unit(r.least, dim) + ")");
  return v;
}

}  // namespace

const char* dim_name(Dim d) {
  switch (d) {
    case Dim::count: return "count";
    case Dim::bytes: return "data size";
    case Dim::byte_rate: return "bandwidth";
    case Dim::flop: return "FLOP count";
    case Dim::flop_rate: return "compute rate";
    case Dim::seconds: return "duration";
    case Dim::watts: return "power";
    case Dim::usd: return "price";
    case Dim::usd_per_hour: return "price per hour";
    case Dim::usd_per_kwh: return "energy price";
    case Dim::kg_per_kwh: return "carbon intensity";
    case Dim::frequency: return "clock frequency";
  }
  return "quantity";
}

const char* dim_example(Dim d) {
  switch (d) {
    case Dim::count: return "15 T";
    case Dim::bytes: return "80 GiB";
    case Dim::byte_rate: return "3.35 TB/s";
    case Dim::flop: return "3.1e23 FLOP";
    case Dim::flop_rate: return "989 TFLOP/s";
    case Dim::seconds: return "10 us";
    case Dim::watts: return "700 W";
    case Dim::usd: return "2.50 USD";
    case Dim::usd_per_hour: return "2.50 USD/h";
    case Dim::usd_per_kwh: return "0.10 USD/kWh";
    case Dim::kg_per_kwh: return "0.40 kg/kWh";
    case Dim::frequency: return "1980 MHz";
  }
  return "";
}

const char* dim_base_unit(Dim d) {
  switch (d) {
    case Dim::count: return "";
    case Dim::bytes: return "B";
    case Dim::byte_rate: return "B/s";
    case Dim::flop: return "FLOP";
    case Dim::flop_rate: return "FLOP/s";
    case Dim::seconds: return "s";
    case Dim::watts: return "W";
    case Dim::usd: return "USD";
    case Dim::usd_per_hour: return "USD/s";
    case Dim::usd_per_kwh: return "USD/J";
    case Dim::kg_per_kwh: return "kg/J";
    case Dim::frequency: return "Hz";
  }
  return "";
}

double parse_quantity(std::string_view raw, Dim dim) {
  std::string_view text = trim(raw);
  if (text.empty()) fail(raw, dim, "empty value");

  std::string number_text;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    bool exponent_sign = (c == '+' || c == '-') && i > 0 && (text[i - 1] == 'e' || text[i - 1] == 'E');
    bool exponent = (c == 'e' || c == 'E') && i + 1 < text.size() &&
                    (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '-' ||
                     text[i + 1] == '+');
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || (i == 0 && (c == '-' || c == '+')) ||
        exponent || exponent_sign) {
      number_text += c;
    } else if (c == '_') {
      continue;  // digit separator: 1_000_000 (a comma is refused: "2,5" is ambiguous)
    } else {
      break;
    }
  }
  if (number_text.empty()) fail(raw, dim, "no number");
  char* end = nullptr;
  double value = std::strtod(number_text.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(value)) fail(raw, dim, "malformed number");

  std::string unit_text;
  for (char ch : trim(text.substr(i))) {
    if (ch != ' ') unit_text += ch;  // "15 T tokens" reads as "15 Ttokens"
  }
  std::string_view unit = unit_text;
  if (unit.empty()) {
    if (dim == Dim::count) return in_range(raw, dim, value);
    fail(raw, dim, "missing unit");
  }
  Dim found{};
  double factor = 0.0;
  if (!lookup_unit(unit, found, factor)) {
    // A count may be a bare prefix: "15 T", "4 Mi".
    if (dim == Dim::count) {
      for (const Prefix& p : kPrefixes) {
        if (!p.text.empty() && p.text == unit) return in_range(raw, dim, value * p.factor);
      }
    }
    fail(raw, dim, "unknown unit '" + std::string(unit) + "'");
  }
  if (found != dim) {
    fail(raw, dim, "unit '" + std::string(unit) + "' is a " + dim_name(found));
  }
  return in_range(raw, dim, value * factor);
}

}  // namespace tp
