// Parsing of quantity strings with units: "80 GiB", "3.35 TB/s", "989 TFLOP/s", "400 Gbit/s",
// "15 T" (a count), "2.5 USD/h". SI prefixes (k M G T P E) are powers of 1000, binary prefixes
// (Ki Mi Gi Ti Pi) powers of 1024. Results are in base SI units.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace tp {

enum class Dim {
  count,         // plain number, optional prefix: "15 T", "4 Mi", "512"
  bytes,         // "80 GiB"
  byte_rate,     // "3.35 TB/s", "400 Gbit/s"
  flop,          // "3.1e23 FLOP"
  flop_rate,     // "989 TFLOP/s"
  seconds,       // "10 us", "10 min", "50000 h"
  watts,         // "700 W", "1.5 kW"
  usd,           // "2.5 USD"
  usd_per_hour,  // "2.50 USD/h"
  usd_per_kwh,   // "0.10 USD/kWh"
  kg_per_kwh,    // "0.40 kg/kWh"
  frequency,     // "1980 MHz"
};

// The slowest link or memory any field may give, 1 kB/s: the byte rate's least (quantity.cpp, range_of),
// and the floor of the bandwidth fields that take no 0 (model/spec_reader.cpp), so 0 B/s and 1 B/s are refused
// with the same bound.
constexpr double kLeastByteRate = 1e3;

// A short name of the dimension and an example, for messages: {"data size", "80 GiB"}.
const char* dim_name(Dim d);
const char* dim_example(Dim d);
// The base unit parse_quantity returns values in: "B", "B/s", "s", "Hz", ...; "" for a count.
const char* dim_base_unit(Dim d);

class UnitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses `text` as a quantity of dimension `dim`; returns the value in base SI units
// (bytes, B/s, FLOP, FLOP/s, s, W, USD, USD/s, USD/J, kg/J, Hz). Throws UnitError with a
// message that says what was expected.
double parse_quantity(std::string_view text, Dim dim);

}  // namespace tp
