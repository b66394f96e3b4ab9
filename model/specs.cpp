#include "specs.h"

namespace tp {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
  }
  return "?";
}

FlopRate attention_peak(const GpuSpec& g, Precision p) {
  if (p == Precision::fp32 || p == Precision::tf32) return g.peak_for(p);
  const FlopRate bf16 = g.peak_for(Precision::bf16);
  return bf16.value > 0 ? bf16 : g.peak_for(Precision::fp16);
}

bool hopper_or_later(const GpuSpec& g) { return g.generation == "hopper" || g.generation == "blackwell"; }

double element_bytes(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4.0;
    case Precision::fp16:
    case Precision::bf16: return 2.0;
    case Precision::fp8: return 1.0;
  }
  return 4.0;
}

double master_bytes(const TrainingSpec& t) { return t.master_weights && stored_bytes(t.precision) < 4.0 ? 4.0 : 0.0; }

LayerCode default_layer_code(Framework f) { return f == Framework::megatron ? LayerCode::fused : LayerCode::eager; }

LayerCode layer_code_of(const TrainingSpec& t) { return t.layer_code.value_or(default_layer_code(t.framework)); }

bool repeat_kv_of(const TrainingSpec& t) { return t.repeat_kv.value_or(t.framework == Framework::fsdp); }

int default_zero(Framework f, int pp) {
  switch (f) {
    case Framework::megatron: return 1;
    case Framework::fsdp: return pp > 1 ? 2 : 3;
    case Framework::deepspeed:
    case Framework::pytorch: return 0;
  }
  return 1;
}

bool framework_has_zero(Framework f, int zero) {
  switch (f) {
    case Framework::fsdp: return zero != 1;
    case Framework::pytorch: return zero <= 1;
    case Framework::megatron:
    case Framework::deepspeed: return true;
  }
  return true;
}

CpComm cp_comm_of(const ParallelSpec& p, Framework f) {
  switch (f) {
    case Framework::megatron: return p.cp_comm.value_or(CpComm::p2p);
    case Framework::deepspeed: return p.cp_comm.value_or(CpComm::a2a);
    case Framework::fsdp:
    case Framework::pytorch: return p.cp_comm.value_or(CpComm::ring_all_gather);
  }
  return p.cp_comm.value_or(CpComm::p2p);
}

const char* to_string(HostCpu c) {
  switch (c) {
    case HostCpu::intel: return "intel";
    case HostCpu::amd: return "amd";
    case HostCpu::other: return "other";
  }
  return "?";
}

const char* to_string(CpComm c) {
  switch (c) {
    case CpComm::p2p: return "p2p";
    case CpComm::all_gather: return "all_gather";
    case CpComm::a2a: return "a2a";
    case CpComm::ring_all_gather: return "ring_all_gather";
    case CpComm::a2a_p2p: return "a2a+p2p";
  }
  return "?";
}

double stored_bytes(Precision p) { return p == Precision::fp32 || p == Precision::tf32 ? 4.0 : 2.0; }

double parameter_bytes(const TrainingSpec& t) { return t.autocast ? 4.0 : stored_bytes(t.precision); }

const char* to_string(MeshDim d) {
  switch (d) {
    case MeshDim::tp: return "tp";
    case MeshDim::cp: return "cp";
    case MeshDim::dp: return "dp";
    case MeshDim::pp: return "pp";
  }
  return "?";
}

const char* to_string(Activation a) {
  switch (a) {
    case Activation::gelu: return "gelu";
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::swiglu: return "swiglu";
    case Activation::relu: return "relu";
    case Activation::relu2: return "relu2";
  }
  return "?";
}

const char* to_string(Optimizer o) {
  switch (o) {
    case Optimizer::sgd: return "sgd";
    case Optimizer::momentum: return "momentum";
    case Optimizer::adam: return "adam";
    case Optimizer::adamw: return "adamw";
    case Optimizer::adafactor: return "adafactor";
    case Optimizer::adam8bit: return "adam8bit";
    case Optimizer::lion: return "lion";
  }
  return "?";
}

const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::gpipe: return "gpipe";
    case Schedule::one_f_one_b: return "1f1b";
    case Schedule::interleaved: return "interleaved";
    case Schedule::zb_h1: return "zb-h1";
  }
  return "?";
}

const char* to_string(RecomputeMode r) {
  switch (r) {
    case RecomputeMode::none: return "none";
    case RecomputeMode::selective: return "selective";
    case RecomputeMode::full: return "full";
    case RecomputeMode::selective_op: return "selective_op";
    case RecomputeMode::every: return "every";
    case RecomputeMode::one_in: return "one_in";
  }
  return "?";
}

const char* to_string(Framework f) {
  switch (f) {
    case Framework::megatron: return "megatron";
    case Framework::deepspeed: return "deepspeed";
    case Framework::fsdp: return "fsdp";
    case Framework::pytorch: return "pytorch";
  }
  return "?";
}

const char* to_string(LayerCode c) { return c == LayerCode::fused ? "fused" : "eager"; }

const char* to_string(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::cudnn: return "cudnn";
    case AttentionKernel::flash: return "flash";
    case AttentionKernel::triton: return "triton";
  }
  return "flash";
}

std::optional<AttentionKernel> attention_kernel_named(std::string_view name) {
  for (AttentionKernel k : {AttentionKernel::cudnn, AttentionKernel::flash, AttentionKernel::triton}) {
    if (name == to_string(k)) return k;
  }
  return std::nullopt;
}

const char* to_string(OptimizerKernel k) {
  switch (k) {
    case OptimizerKernel::fused: return "fused";
    case OptimizerKernel::foreach: return "foreach";
    case OptimizerKernel::for_loop: return "for_loop";
  }
  return "?";
}

std::string zero_label(const ParallelSpec& p) {
  std::string label = "ZeRO-" + std::to_string(p.zero);
  if (p.zero >= 1 && p.replicas() > 1) {
    label += " in groups of " + std::to_string(p.shard_dp()) + " × " + std::to_string(p.replicas());
  }
  return label;
}

}  // namespace tp
