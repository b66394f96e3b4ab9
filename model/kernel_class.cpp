#include "kernel_class.h"

#include <array>

namespace tp {
namespace {

constexpr std::array<const char*, kKernelClassCount> kNames = {
    "rmsnorm_fwd", "rmsnorm_bwd", "layernorm_fwd", "layernorm_bwd", "gelu_fwd",     "gelu_bwd",
    "swiglu_fwd",  "swiglu_bwd",  "residual_add",  "rotary_fwd",    "rotary_bwd",   "cast_to_fp32",
    "cast_to_16bit", "cross_entropy", "adamw"};

}  // namespace

const char* to_string(KernelClass k) {
  const auto i = static_cast<size_t>(k);
  return i < kNames.size() ? kNames[i] : "?";
}

std::optional<KernelClass> kernel_class_from_string(std::string_view s) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (s == kNames[i]) return static_cast<KernelClass>(i);
  }
  return std::nullopt;
}

std::string kernel_class_names() {
  std::string out;
  for (const char* n : kNames) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace tp
