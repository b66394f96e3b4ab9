#include "work_limits.h"

namespace tp {

WorkLimits& work_limits() {
  static WorkLimits limits;
  return limits;
}

std::string limit_count_text(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string limit_bytes_text(std::uint64_t bytes) {
  if (bytes % (1ull << 20) == 0) return limit_count_text(bytes >> 20) + " MiB";
  if (bytes % (1ull << 10) == 0) return limit_count_text(bytes >> 10) + " KiB";
  return limit_count_text(bytes) + " bytes";
}

std::uint64_t capped_product(std::uint64_t a, std::uint64_t b, std::uint64_t ceiling) {
  if (ceiling == UINT64_MAX) ceiling = UINT64_MAX - 1;
  if (a == 0 || b == 0) return 0;
  if (a > ceiling / b) return ceiling + 1;
  const std::uint64_t p = a * b;
  return p > ceiling ? ceiling + 1 : p;
}

}  // namespace tp
