// tp::parse_quantity: quantity strings with units, stored in base SI units (DESIGN.md, "Conventions":
// GiB = 2^30 and GB = 10^9 are never mixed up). Oracles: the SI and IEC prefix definitions and the
// E5 erratum of ../shared/reference/formulas-seed001.md ("33 GB fits in a 32 GB V100" holds only for
// 32 GiB = 34.36e9 bytes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "quantity.h"
#include "units.h"

namespace tp {
namespace {

using ::testing::HasSubstr;

// Relative comparison: parsed values go through strtod and one multiplication.
void expect_close(double actual, double expected) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * 1e-12) << "expected " << expected;
}

// The UnitError message of parsing `text` as `dim`, or "" when it parses.
std::string error_of(const std::string& text, Dim dim) {
  try {
    (void)parse_quantity(text, dim);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "";
}

TEST(ParseQuantity, BinaryAndDecimalBytesDiffer) {
  EXPECT_EQ(parse_quantity("80 GiB", Dim::bytes), 80.0 * 1073741824.0);  // 2^30
  EXPECT_EQ(parse_quantity("80 GB", Dim::bytes), 80e9);
  EXPECT_NE(parse_quantity("80 GiB", Dim::bytes), parse_quantity("80 GB", Dim::bytes));
  EXPECT_EQ(parse_quantity("2 TiB", Dim::bytes), 2.0 * 1099511627776.0);  // 2^40
  EXPECT_EQ(parse_quantity("512 MiB", Dim::bytes), 512.0 * 1048576.0);
}

TEST(ParseQuantity, ByteRates) {
  expect_close(parse_quantity("3.35 TB/s", Dim::byte_rate), 3.35e12);
  expect_close(parse_quantity("450 GB/s", Dim::byte_rate), 450e9);
  // Network rates are in bits: 400 Gbit/s = 50 GB/s.
  expect_close(parse_quantity("400 Gbit/s", Dim::byte_rate), 50e9);
  expect_close(parse_quantity("200 Gbps", Dim::byte_rate), 25e9);
}

TEST(ParseQuantity, FlopRates) {
  expect_close(parse_quantity("989 TFLOP/s", Dim::flop_rate), 989e12);
  expect_close(parse_quantity("989.4 TFLOPS", Dim::flop_rate), 989.4e12);
  expect_close(parse_quantity("1.979 PFLOP/s", Dim::flop_rate), 1.979e15);
  expect_close(parse_quantity("3.1e23 FLOP", Dim::flop), 3.1e23);
}

TEST(ParseQuantity, CountsWithBarePrefixes) {
  EXPECT_EQ(parse_quantity("15 T", Dim::count), 15e12);
  EXPECT_EQ(parse_quantity("4 Mi", Dim::count), 4.0 * 1048576.0);
  EXPECT_EQ(parse_quantity("512", Dim::count), 512.0);
  EXPECT_EQ(parse_quantity("2 k", Dim::count), 2000.0);
  EXPECT_EQ(parse_quantity("2 Ktokens", Dim::count), 2000.0);
}

// A count is of tokens or parameters: a word naming another thing is refused, not read as that many tokens
// (until 2026-12 `tokens: 1000 steps` planned a run of 1,000 tokens).
TEST(ParseQuantity, CountsOfOtherThingsAreRefused) {
  for (const char* text : {"1000 steps", "5 sequences", "3 samples"}) {
    EXPECT_THROW((void)parse_quantity(text, Dim::count), UnitError) << text;
  }
}

TEST(ParseQuantity, Money) {
  EXPECT_EQ(parse_quantity("2.5 USD", Dim::usd), 2.5);
  expect_close(parse_quantity("2.50 USD/h", Dim::usd_per_hour), 2.5 / 3600.0);
  // Energy price per kWh, stored per joule: 1 kWh = 3.6e6 J.
  expect_close(parse_quantity("0.10 USD/kWh", Dim::usd_per_kwh), 0.10 / 3.6e6);
  expect_close(parse_quantity("0.40 kg/kWh", Dim::kg_per_kwh), 0.40 / 3.6e6);
  expect_close(parse_quantity("400 g/kWh", Dim::kg_per_kwh), 0.40 / 3.6e6);
}

// Clock frequencies (GPU catalog clocks, cluster.sustained_clock): SI prefixes on Hz.
TEST(ParseQuantity, Frequencies) {
  EXPECT_EQ(parse_quantity("1980 MHz", Dim::frequency), 1980e6);
  EXPECT_EQ(parse_quantity("1.83 GHz", Dim::frequency), 1.83e9);
  EXPECT_THROW(parse_quantity("1980 W", Dim::frequency), UnitError);
  EXPECT_THROW(parse_quantity("1980", Dim::frequency), UnitError);
}

TEST(ParseQuantity, Durations) {
  expect_close(parse_quantity("10 us", Dim::seconds), 1e-5);
  expect_close(parse_quantity("3.4 us", Dim::seconds), 3.4e-6);
  EXPECT_EQ(parse_quantity("10 min", Dim::seconds), 600.0);
  EXPECT_EQ(parse_quantity("50000 h", Dim::seconds), 50000.0 * 3600.0);
  EXPECT_EQ(parse_quantity("2 days", Dim::seconds), 2.0 * 86400.0);
  expect_close(parse_quantity("5 ms", Dim::seconds), 5e-3);
  EXPECT_EQ(parse_quantity("30 s", Dim::seconds), 30.0);
}

TEST(ParseQuantity, Power) {
  EXPECT_EQ(parse_quantity("700 W", Dim::watts), 700.0);
  EXPECT_EQ(parse_quantity("1.5 kW", Dim::watts), 1500.0);
  EXPECT_EQ(parse_quantity("10.2 kW", Dim::watts), 10200.0);
}

TEST(ParseQuantity, NumberSpellings) {
  EXPECT_EQ(parse_quantity("1e3 B", Dim::bytes), 1000.0);
  EXPECT_EQ(parse_quantity("1_000 B", Dim::bytes), 1000.0);
  EXPECT_EQ(parse_quantity("1.5e-3 kB", Dim::bytes), 1.5);
  EXPECT_EQ(parse_quantity("  80 GiB  ", Dim::bytes), 80.0 * kGiB);
  EXPECT_EQ(parse_quantity("80GiB", Dim::bytes), 80.0 * kGiB);
}

TEST(ParseQuantity, MissingUnitIsRejectedExceptForCounts) {
  EXPECT_THROW((void)parse_quantity("80", Dim::bytes), UnitError);
  EXPECT_THAT(error_of("80", Dim::bytes), HasSubstr("missing unit"));
  // The message shows what was expected.
  EXPECT_THAT(error_of("80", Dim::bytes), HasSubstr("80 GiB"));
  EXPECT_THAT(error_of("700", Dim::watts), HasSubstr("missing unit"));
}

TEST(ParseQuantity, WrongDimensionNamesTheDimensionFound) {
  EXPECT_THAT(error_of("3.35 TB/s", Dim::bytes), HasSubstr("is a bandwidth"));
  EXPECT_THAT(error_of("80 GiB", Dim::byte_rate), HasSubstr("is a data size"));
  EXPECT_THAT(error_of("700 W", Dim::seconds), HasSubstr("is a power"));
  EXPECT_THAT(error_of("989 TFLOP/s", Dim::flop), HasSubstr("is a compute rate"));
}

TEST(ParseQuantity, UnknownUnit) {
  EXPECT_THAT(error_of("5 parsecs", Dim::seconds), HasSubstr("unknown unit 'parsecs'"));
  EXPECT_THAT(error_of("5 furlongs", Dim::bytes), HasSubstr("unknown unit"));
}

TEST(ParseQuantity, NoNumber) {
  EXPECT_THAT(error_of("GiB", Dim::bytes), HasSubstr("no number"));
  EXPECT_THAT(error_of("", Dim::bytes), HasSubstr("empty value"));
}

TEST(ParseQuantity, LowercaseBitsAbbreviationIsAmbiguousAndRejected) {
  // "Gb/s" could be gigabits or gigabytes; only Gbit/s and GB/s are accepted.
  EXPECT_THROW((void)parse_quantity("400 Gb/s", Dim::byte_rate), UnitError);
  EXPECT_THAT(error_of("400 Gb/s", Dim::byte_rate), HasSubstr("unknown unit 'Gb/s'"));
  EXPECT_THROW((void)parse_quantity("80 Gb", Dim::bytes), UnitError);
}

// Erratum E5 (formulas-seed001.md): "~33 GB fits in a 32 GB V100" only holds when the V100's
// 32 "GB" are 32 GiB = 34.36e9 bytes.
TEST(ParseQuantity, ErratumE5ThirtyThreeGigabytesFitOnlyInGibibytes) {
  const double need = 33.0e9;
  const double v100_gib = parse_quantity("32 GiB", Dim::bytes);
  const double v100_gb = parse_quantity("32 GB", Dim::bytes);
  EXPECT_NEAR(v100_gib, 34.36e9, 0.01e9);
  EXPECT_LE(need, v100_gib);
  EXPECT_GT(need, v100_gb);
  EXPECT_EQ(parse_quantity("33 GB", Dim::bytes), need);
}

}  // namespace
}  // namespace tp
