// Converts the PyTorch reference files of ../shared/measurements (scripts/fused_ref.py and
// scripts/kernel_ref.py output) into a measurements file so that `calibrate fit` and `calibrate check`
// can use them. docs/calibration.md, "Importing PyTorch measurements", lists the mapping:
//   {"attention": [...], "kernels": [...]}  (torch-attention-and-kernels.json)
//     attention rows -> attention_forward / attention_backward, impl fused, algorithm = backend
//                       ("cudnn" or "flash"), bf16
//     kernel rows    -> memory_kernel of the mapped class, bytes = the script's bytes_moved (minimal
//                       traffic), rows x cols = tokens x hidden|ffn|vocab or params x 1
//   {"torch": ..., "rows": [...]}           (torch-same-shapes.json)
//     gemm rows      -> gemm with time = torch_s, algorithm "torch.matmul" (fp8: torch._scaled_mm)
//     attention rows -> fused attention, time = torch_sdpa_s, algorithm "flash" (SDPA's default)
//     rows with an "error" are skipped (SkippedCase).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "kernel_class.h"
#include "measurements.h"

namespace tp {

// The kernel class of a fused_ref.py kernel name, nullopt for the ones that are no class (the
// forward-only cross-entropy variants: the class is forward + backward).
std::optional<KernelClass> torch_kernel_class(const std::string& torch_name);

// Strict: a missing or mistyped field is an InputError naming `file` and the JSON path.
// `gpu_key` and `device_name` are recorded as the device (the reference files do not name it).
Measurements import_torch(const nlohmann::json& j, const std::string& file, const std::string& gpu_key = "h100-sxm-80gb",
                          const std::string& device_name = "NVIDIA H100 80GB HBM3");
Measurements import_torch_file(const std::string& path, const std::string& gpu_key = "h100-sxm-80gb",
                               const std::string& device_name = "NVIDIA H100 80GB HBM3");

}  // namespace tp
