// Human formatting of quantities with their unit ("13.2 GiB", "3.35 TB/s").
#pragma once

#include <string>

namespace tp {

std::string format_bytes(double bytes);          // binary units: "80.00 GiB"
std::string format_fixed(double v, int decimals);  // "1,234.5"
std::string format_count(double v);              // "70.55 B" (SI, for parameter counts)

}  // namespace tp
