// Human formatting of quantities with their unit ("13.2 GiB", "3.35 TB/s", "4.2 days").
// Any size prints in a few characters: values scale to the largest prefix (or unit) that keeps them
// under 1000 (1024 for bytes), and past the largest one switch to scientific notation
// ("3.70e+10 years", "1.20e+06 YiB"). A non-finite value prints as "n/a" (the model never
// produces one; this keeps a bug from printing 60 digits or "inf").
#pragma once

#include <string>

namespace tp {

std::string format_bytes(double bytes);            // binary units up to YiB: "80.00 GiB"
std::string format_fixed(double v, int decimals);  // "1234.5"; scientific from 1e15 on: "1.235e+18"
// A total to `decimals` places, but with three significant digits where those places would show fewer: a cent
// of electricity is "0.0079", not "0"; 8,400 USD stays "8400".
std::string format_amount(double v, int decimals);
std::string format_count(double v);                // "70.55 B" (k, M, B, T; scientific past 1000 T)
std::string format_seconds(double seconds);        // "850 ms", "12.0 s", "3.5 min", "4.2 h", "12.1 days", "3.1 years"
std::string format_micro_batches(long long n);     // "1 micro-batch", "4 micro-batches"

}  // namespace tp
