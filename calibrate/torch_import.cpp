#include "torch_import.h"

#include <cmath>

#include "errors.h"
#include "input_file.h"
#include "json_positions.h"

namespace tp {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& file, const std::string& field, const std::string& message) {
  throw InputError({file, 0, 0}, field, message);
}

double number_at(const json& row, const char* key, const std::string& file, const std::string& path) {
  if (!row.contains(key)) bad(file, path + "." + key, "missing");
  if (!row[key].is_number()) bad(file, path + "." + key, "expected a number");
  const double v = row[key].get<double>();
  if (!(v > 0)) bad(file, path + "." + key, "expected a positive number");
  return v;
}

// A count (a shape's size): a whole positive number that a 64-bit integer holds exactly (m: 1.5 was read as 1,
// head_dim: 2^63 wrapped negative).
std::int64_t count_at(const json& row, const char* key, const std::string& file, const std::string& path) {
  const double v = number_at(row, key, file, path);
  if (v != std::floor(v) || v > 9007199254740992.0) bad(file, path + "." + key, "expected a whole number up to 2^53");
  return static_cast<std::int64_t>(v);
}

TimeStats single_time(double seconds) {
  TimeStats t;
  t.median = t.mean = t.min = t.max = t.p10 = t.p90 = seconds;
  t.reps = 1;
  t.stable = true;
  return t;
}

AttentionShape attention_shape(const json& row, const std::string& file, const std::string& path) {
  AttentionShape a;
  a.batch = count_at(row, "batch", file, path);
  a.heads = count_at(row, "heads", file, path);
  a.kv_heads = count_at(row, "kv_heads", file, path);
  // At the input's own field (the check of the imported file would name the output's).
  if (a.heads % a.kv_heads != 0) bad(file, path + ".kv_heads", "must divide heads (" + std::to_string(a.heads) + ")");
  a.seq_q = a.seq_kv = count_at(row, "seq", file, path);
  a.head_dim = count_at(row, "head_dim", file, path);
  if (!row.contains("causal") || !row["causal"].is_boolean()) bad(file, path + ".causal", "expected true or false");
  a.causal = row["causal"].get<bool>();
  return a;
}

void import_attention(const json& rows, const std::string& file, Measurements& out) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string path = "attention[" + std::to_string(i) + "]";
    const json& row = rows[i];
    if (!row.contains("backend") || !row["backend"].is_string()) bad(file, path + ".backend", "expected \"cudnn\" or \"flash\"");
    Measurement m;
    m.impl = AttentionImpl::fused;
    m.algorithm = row["backend"].get<std::string>();
    m.attention = attention_shape(row, file, path);
    m.label = "torch sdpa " + m.algorithm;
    m.op = MeasuredOp::attention_forward;
    m.time = single_time(number_at(row, "forward_s", file, path));
    out.items.push_back(m);
    m.op = MeasuredOp::attention_backward;
    m.time = single_time(number_at(row, "backward_s", file, path));
    out.items.push_back(m);
  }
}

void import_kernels(const json& rows, const std::string& file, Measurements& out) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string path = "kernels[" + std::to_string(i) + "]";
    const json& row = rows[i];
    if (!row.contains("kernel") || !row["kernel"].is_string()) bad(file, path + ".kernel", "expected a kernel name");
    const std::string name = row["kernel"].get<std::string>();
    const std::optional<KernelClass> k = torch_kernel_class(name);
    if (!k) {
      out.skipped.push_back({MeasuredOp::memory_kernel, name, "", "not a kernel class (forward-only cross-entropy)"});
      continue;
    }
    Measurement m;
    m.op = MeasuredOp::memory_kernel;
    m.kernel = *k;
    m.label = "torch " + name;
    m.dtype = name.find("fp32") != std::string::npos && *k == KernelClass::adamw ? Precision::fp32 : Precision::bf16;
    m.bytes = number_at(row, "bytes_moved", file, path);
    m.time = single_time(number_at(row, "seconds", file, path));
    if (row.contains("params")) {
      m.rows = count_at(row, "params", file, path);
      m.cols = 1;
    } else {
      m.rows = count_at(row, "tokens", file, path);
      const char* col = row.contains("hidden") ? "hidden" : row.contains("ffn") ? "ffn" : "vocab";
      m.cols = count_at(row, col, file, path);
    }
    m.rate = m.bytes / m.time.median;
    out.items.push_back(m);
  }
}

void import_same_shapes(const json& rows, const std::string& file, Measurements& out) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string path = "rows[" + std::to_string(i) + "]";
    const json& row = rows[i];
    if (!row.contains("op") || !row["op"].is_string()) bad(file, path + ".op", "expected an op name");
    const std::string op = row["op"].get<std::string>();
    if (row.contains("error")) {
      out.skipped.push_back({measured_op_from_string(op).value_or(MeasuredOp::memory_copy), op, "", "torch error"});
      continue;
    }
    Measurement m;
    if (op == "gemm") {
      m.op = MeasuredOp::gemm;
      const std::string dt = row.value("dtype", "");
      const std::optional<Precision> p = precision_from_string(dt);
      if (!p) bad(file, path + ".dtype", "unknown dtype '" + dt + "'");
      m.dtype = *p;
      m.gemm.m = count_at(row, "m", file, path);
      m.gemm.n = count_at(row, "n", file, path);
      m.gemm.k = count_at(row, "k", file, path);
      m.algorithm = *p == Precision::fp8 ? "torch._scaled_mm" : "torch.matmul";
      m.time = single_time(number_at(row, "torch_s", file, path));
    } else if (op == "attention_forward" || op == "attention_backward") {
      m.op = op == "attention_forward" ? MeasuredOp::attention_forward : MeasuredOp::attention_backward;
      m.impl = AttentionImpl::fused;
      m.algorithm = "flash";
      if (!row.contains("shape") || !row["shape"].is_object()) bad(file, path + ".shape", "expected an object");
      json s = row["shape"];
      s["seq"] = s.value("seq_q", 0);
      m.attention = attention_shape(s, file, path + ".shape");
      m.attention.seq_kv = count_at(row["shape"], "seq_kv", file, path + ".shape");
      m.time = single_time(number_at(row, "torch_sdpa_s", file, path));
    } else {
      out.skipped.push_back({MeasuredOp::memory_copy, op, "", "not imported"});
      continue;
    }
    m.label = "torch " + row.value("label", op);
    out.items.push_back(m);
  }
}

}  // namespace

std::optional<KernelClass> torch_kernel_class(const std::string& n) {
  if (n == "gelu_tanh_fwd") return KernelClass::gelu_fwd;
  if (n == "gelu_tanh_bwd") return KernelClass::gelu_bwd;
  if (n == "swiglu_fwd_eager") return KernelClass::swiglu_fwd;
  if (n == "swiglu_bwd_eager") return KernelClass::swiglu_bwd;
  if (n == "cast_bf16_to_fp32") return KernelClass::cast_to_fp32;
  if (n == "cast_fp32_to_bf16") return KernelClass::cast_to_16bit;
  // The class is softmax cross-entropy forward + backward; Hugging Face upcasts the logits to fp32.
  if (n == "cross_entropy_fwd_bwd_fp32_upcast") return KernelClass::cross_entropy;
  if (n == "adamw_fused_fp32" || n == "adamw_fused_bf16") return KernelClass::adamw;
  return kernel_class_from_string(n);  // rmsnorm_fwd/bwd, layernorm_fwd/bwd, residual_add
}

Measurements import_torch(const json& j, const std::string& file, const std::string& gpu_key, const std::string& device_name) {
  if (!j.is_object()) bad(file, "", "expected a JSON object");
  Measurements out;
  out.created = utc_now_iso8601();
  out.device.name = device_name;
  out.device.gpu_key = gpu_key;
  out.software.trainplan = "import-torch";
  if (j.contains("torch") && j["torch"].is_string()) out.software.cuda_runtime = "torch " + j["torch"].get<std::string>();
  if (j.contains("attention") || j.contains("kernels")) {
    if (j.contains("attention")) import_attention(j["attention"], file, out);
    if (j.contains("kernels")) import_kernels(j["kernels"], file, out);
  } else if (j.contains("rows") && j["rows"].is_array()) {
    import_same_shapes(j["rows"], file, out);
  } else {
    bad(file, "", "neither {attention, kernels} (fused_ref.py) nor {torch, rows} (kernel_ref.py)");
  }
  // What `calibrate fit` and `check` would refuse is refused here, by their own reader (a time of 1e-320 s,
  // kv_heads that do not divide heads), not written with exit 0.
  (void)measurements_from_json(to_json(out), file + " (as imported)");
  return out;
}

Measurements import_torch_file(const std::string& path, const std::string& gpu_key, const std::string& device_name) {
  // Read as every input is (size cap, no directory), and remembered: `-o` naming it is refused.
  const std::string text = read_input_file(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    bad(path, "", std::string("not JSON: ") + e.what());
  }
  const JsonPositions positions(text, path);  // a key given twice is an error here
  try {
    return import_torch(j, path, gpu_key, device_name);
  } catch (const InputError& e) {
    rethrow_at_line(e, positions, path);  // the field's line and column in the PyTorch file
  }
}

}  // namespace tp
