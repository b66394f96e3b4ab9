// Strong types for physical quantities. Every value is stored in base SI units
// (bytes, seconds, FLOP, FLOP/s, B/s, W, J, USD); scaling happens only when printing.
#pragma once

#include <compare>

namespace tp {

template <class Tag>
struct Quantity {
  double value = 0.0;

  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : value(v) {}

  constexpr Quantity operator+(Quantity o) const { return Quantity(value + o.value); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value - o.value); }
  constexpr Quantity operator*(double k) const { return Quantity(value * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value / k); }
  constexpr double operator/(Quantity o) const { return value / o.value; }
  constexpr Quantity& operator+=(Quantity o) { value += o.value; return *this; }
  constexpr Quantity& operator-=(Quantity o) { value -= o.value; return *this; }
  constexpr Quantity& operator*=(double k) { value *= k; return *this; }
  constexpr auto operator<=>(const Quantity&) const = default;
};

template <class Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q) { return q * k; }

struct BytesTag {};
struct SecondsTag {};
struct FlopTag {};
struct FlopRateTag {};
struct ByteRateTag {};
struct WattsTag {};
struct JoulesTag {};
struct UsdTag {};

using Bytes = Quantity<BytesTag>;        // B
using Seconds = Quantity<SecondsTag>;    // s
using Flop = Quantity<FlopTag>;          // FLOP (a count of floating-point operations)
using FlopRate = Quantity<FlopRateTag>;  // FLOP/s
using ByteRate = Quantity<ByteRateTag>;  // B/s
using Watts = Quantity<WattsTag>;        // W
using Joules = Quantity<JoulesTag>;      // J
using Usd = Quantity<UsdTag>;            // USD

constexpr Seconds operator/(Flop f, FlopRate r) { return Seconds(f.value / r.value); }
constexpr Seconds operator/(Bytes b, ByteRate r) { return Seconds(b.value / r.value); }
constexpr Flop operator*(FlopRate r, Seconds s) { return Flop(r.value * s.value); }
constexpr Bytes operator*(ByteRate r, Seconds s) { return Bytes(r.value * s.value); }
constexpr Joules operator*(Watts w, Seconds s) { return Joules(w.value * s.value); }

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kTiB = kGiB * 1024.0;
inline constexpr double kGB = 1e9;
inline constexpr double kHour = 3600.0;
inline constexpr double kJoulesPerKwh = 3.6e6;

}  // namespace tp
