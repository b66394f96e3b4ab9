#!/usr/bin/env python3
"""Real single-GPU training steps of one model under each framework's loop: plain PyTorch (bf16 weights or
fp32 weights + autocast), DDP (world size 1) and FSDP2 (fully_shard, world size 1), each with one micro-batch
and with gradient accumulation over four. Ground truth for the framework rules a single GPU can show: the
per-micro-batch casts and gradient accumulation, gradients held beside later micro-batches, DDP's buckets,
FSDP2's gathered bf16 copies and fp32 reduce, deferred gradient sync (DDP no_sync, FSDP2
set_requires_gradient_sync(False)). Needs a CUDA GPU with PyTorch >= 2.6 and transformers.
Each case runs in a process of its own. Usage: python3 scripts/h100_framework_steps.py OUT.json [CASE,CASE...]"""
import json
import sys
import time

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

OUT = sys.argv[1]
ONLY = sys.argv[2].split(",") if len(sys.argv) > 2 else None  # with OUT = --one: the one case to measure
torch.backends.cuda.matmul.allow_tf32 = True
# name, model, sequence, micro-batch, mode (bf16 | amp | mp = FSDP2 mixed precision),
# framework loop (plain | ddp | ddp_no_sync | fsdp2 | fsdp2_no_sync), micro-batches per step
CASES = [
    ("llama1b-s2048-mb2-amp", "llama1b", 2048, 2, "amp", "plain", 1),
    ("llama1b-s2048-mb2x4-amp", "llama1b", 2048, 2, "amp", "plain", 4),
    ("llama1b-s2048-mb2-bf16", "llama1b", 2048, 2, "bf16", "plain", 1),
    ("llama1b-s2048-mb2x4-bf16", "llama1b", 2048, 2, "bf16", "plain", 4),
    ("llama1b-s2048-mb2-amp-ddp", "llama1b", 2048, 2, "amp", "ddp", 1),
    ("llama1b-s2048-mb2x4-amp-ddp", "llama1b", 2048, 2, "amp", "ddp", 4),
    ("llama1b-s2048-mb2x4-amp-ddp-nosync", "llama1b", 2048, 2, "amp", "ddp_no_sync", 4),
    ("llama1b-s2048-mb2-fsdp2", "llama1b", 2048, 2, "mp", "fsdp2", 1),
    ("llama1b-s2048-mb2x4-fsdp2", "llama1b", 2048, 2, "mp", "fsdp2", 4),
    ("llama1b-s2048-mb2x4-fsdp2-nosync", "llama1b", 2048, 2, "mp", "fsdp2_no_sync", 4),
    ("llama1b-s4096-mb2-amp", "llama1b", 4096, 2, "amp", "plain", 1),
    ("gpt2-1.5b-s1024-mb4-amp", "gpt2-1.5b", 1024, 4, "amp", "plain", 1),
    ("gpt2-1.5b-s1024-mb4x4-amp", "gpt2-1.5b", 1024, 4, "amp", "plain", 4),
    ("gpt2-1.5b-s1024-mb4x4-bf16", "gpt2-1.5b", 1024, 4, "bf16", "plain", 4),
    ("gpt2-1.5b-s1024-mb4-amp-ddp", "gpt2-1.5b", 1024, 4, "amp", "ddp", 1),
    ("gpt2-1.5b-s1024-mb4x4-amp-ddp-nosync", "gpt2-1.5b", 1024, 4, "amp", "ddp_no_sync", 4),
]


def build(model):
    """The model, built on the GPU from its config (random init): HF Llama 3.2 1B's shape, or GPT-2 XL's."""
    with torch.device("cuda"):
        if model == "llama1b":
            return LlamaForCausalLM(LlamaConfig(
                num_hidden_layers=16, hidden_size=2048, num_attention_heads=32, num_key_value_heads=8,
                intermediate_size=8192, vocab_size=128256, tie_word_embeddings=True, max_position_embeddings=8192,
                attn_implementation="sdpa", use_cache=False))
        return GPT2LMHeadModel(GPT2Config(
            n_layer=48, n_embd=1600, n_head=25, vocab_size=50257, n_positions=1024, attn_implementation="sdpa",
            use_cache=False, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))


def kernel_class(name):
    n = name.lower()
    if "flash" in n or "fmha" in n or "attention" in n or "sdpa" in n or ("cudnn" in n and "mha" in n):
        return "attention"
    if any(k in n for k in ("gemm", "xmma", "cutlass", "sm90", "nvjet", "cublas", "matmul")):
        return "gemm"
    if "adam" in n or "multi_tensor" in n:
        return "optimizer"
    if "nccl" in n:
        return "nccl"
    if "softmax" in n or "nll" in n or "cross_entropy" in n:
        return "loss_softmax"
    if "norm" in n:
        return "norm"
    if "reduce" in n:
        return "reduce"
    if any(k in n for k in ("copy", "cast", "memcpy", "memset", "chunk_cat", "split_with_sizes")):
        return "copy_cast"
    if "elementwise" in n or "vectorized" in n or "unrolled" in n:
        return "elementwise"
    return "other"


def wrap(model, loop):
    """The framework's wrapper: DDP with its defaults, or FSDP2 on every decoder layer and the root
    (torchtitan's layout) with bf16 compute copies and fp32 gradient reduction."""
    if loop.startswith("ddp"):
        return torch.nn.parallel.DistributedDataParallel(model, device_ids=[0])
    if loop.startswith("fsdp2"):
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for layer in (model.model.layers if hasattr(model, "model") else model.transformer.h):
            fully_shard(layer, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
    return model


def micro_batch_loss(model, ids, mode, scale):
    if mode == "amp":
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(input_ids=ids, labels=ids).loss * scale
    return model(input_ids=ids, labels=ids).loss * scale


def make_step(model, opt, ids, mode, loop, m):
    def step():
        for i in range(m):
            last = i == m - 1
            if loop == "fsdp2_no_sync":
                model.set_requires_gradient_sync(last)
            if loop == "ddp_no_sync" and not last:
                with model.no_sync():
                    micro_batch_loss(model, ids, mode, 1.0 / m).backward()
            else:
                micro_batch_loss(model, ids, mode, 1.0 / m).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def first_step(model, ids, mode, loop, m):
    """AdamW(fused=True) where its first step runs on these parameters, else foreach."""
    for kind in ("fused", "foreach"):
        try:
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **{kind: True})
            step = make_step(model, opt, ids, mode, loop, m)
            step()
            return step, kind
        except (RuntimeError, TypeError) as e:
            if kind == "foreach" or isinstance(e, torch.cuda.OutOfMemoryError):
                raise
            print("fused AdamW refused (%r): foreach" % e, flush=True)


def gpu_timeline(prof):
    """Kernel count, and the GPU's busy and idle time between the step's first and last kernel (the union of
    the kernels' intervals against their span): what the step's wall time adds to its kernel time."""
    spans = []
    try:
        for e in prof.events():
            if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.end > e.time_range.start:
                spans.append((e.time_range.start, e.time_range.end))
    except AttributeError:  # a torch whose events do not carry device time ranges
        return {}
    if not spans:
        return {}
    spans.sort()
    busy, cur_start, cur_end = 0.0, spans[0][0], spans[0][1]
    for start, end in spans[1:]:
        if start > cur_end:
            busy += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    busy += cur_end - cur_start
    span = spans[-1][1] - spans[0][0]
    return {"kernels": len(spans), "span_s": span / 1e6, "busy_s": busy / 1e6, "idle_s": (span - busy) / 1e6}


def by_class(step):
    """CUDA kernel time and calls per kernel class over one profiled step, the top kernels, the GPU timeline."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    classes, calls, top = {}, {}, {}
    for e in prof.key_averages():
        dt = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if e.device_type == torch.autograd.DeviceType.CUDA and dt > 0:
            k = kernel_class(e.key)
            classes[k] = classes.get(k, 0) + dt / 1e6
            calls[k] = calls.get(k, 0) + e.count
            top[e.key[:90]] = dt / 1e6
    return classes, calls, dict(sorted(top.items(), key=lambda kv: -kv[1])[:15]), gpu_timeline(prof)


def measure(name, model_name, seq, micro_batch, mode, loop, m):
    rec = {"name": name, "model": model_name, "mode": mode, "loop": loop, "micro_batches": m, "seq": seq,
           "micro_batch": micro_batch}
    model = build(model_name)
    if mode == "bf16":
        model = model.to(torch.bfloat16)
    model.train()
    rec["params"] = sum(p.numel() for p in model.parameters())
    rec["config"] = model.config.to_dict()
    ids = torch.randint(0, model.config.vocab_size, (micro_batch, seq), device="cuda")
    model = wrap(model, loop)
    step, rec["optimizer_kernel"] = first_step(model, ids, mode, loop, m)
    torch.cuda.synchronize()
    rec["mem_after_first_step"] = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(8):
        t = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    times.sort()
    rec["step_s_median"], rec["step_s_min"] = times[len(times) // 2], times[0]
    rec["peak_allocated"] = torch.cuda.max_memory_allocated()
    rec["peak_reserved"] = torch.cuda.max_memory_reserved()
    rec["kernel_s_by_class"], rec["kernel_calls_by_class"], rec["top_kernels_s"], rec["gpu_timeline"] = by_class(step)
    rec["kernel_s"] = sum(rec["kernel_s_by_class"].values())
    print("%s: step %.1f ms, peak %.2f GiB, kernels %.1f ms %s" % (
        name, rec["step_s_median"] * 1e3, rec["peak_allocated"] / 2**30, rec["kernel_s"] * 1e3,
        {k: round(v * 1e3, 1) for k, v in sorted(rec["kernel_s_by_class"].items(), key=lambda kv: -kv[1])}),
        flush=True)
    return rec


METHOD = ("one GPU, one process per case (torch.distributed world size 1, NCCL; a process of its own, since "
          "memory a DDP reducer holds outlives its model); HF Llama or GPT-2 built from the config (random init, sdpa "
          "attention, no dropout); AdamW lr 1e-4 (fused where the parameters allow); mode amp = fp32 parameters + "
          "torch.autocast(bfloat16) (plain, ddp); mode mp = FSDP2 MixedPrecisionPolicy(param_dtype=bf16, "
          "reduce_dtype=fp32), fp32 parameters, no autocast; mode bf16 = model cast to bf16; ddp = "
          "DistributedDataParallel defaults (25 MiB buckets, gradient_as_bucket_view False); fsdp2 = fully_shard on "
          "each decoder layer, then the root; *_no_sync = gradient sync only on the last micro-batch (DDP no_sync / "
          "FSDP2 set_requires_gradient_sync(False)); each micro-batch's loss scaled by 1/micro_batches and "
          "backpropagated; one optimizer step per step; step time = median of 8 steps after 3 warm-up steps; peak = "
          "torch.cuda.max_memory_allocated/reserved over those steps; kernel_s_by_class = torch.profiler CUDA time "
          "of one more step, kernel_calls_by_class its kernel launches, gpu_timeline its kernels' span, busy and "
          "idle time")


def measure_one(name):
    """Measures one case in this process and prints its record as JSON on the last line."""
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    case = next(c for c in CASES if c[0] == name)
    try:
        rec = measure(*case)
    except Exception as e:  # a case that fails is recorded and the rest still run
        print("%s: FAILED %r" % (name, e), flush=True)
        rec = {"name": name, "error": repr(e), "oom": isinstance(e, torch.cuda.OutOfMemoryError)}
    dist.destroy_process_group()
    print(json.dumps(rec), flush=True)


def main():
    import subprocess
    import transformers
    doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "transformers": transformers.__version__,
           "measured": time.strftime("%Y-%m-%d"), "method": METHOD, "cases": []}
    for case in CASES:
        if ONLY and case[0] not in ONLY:
            continue
        run = subprocess.run([sys.executable, __file__, "--one", case[0]], capture_output=True, text=True)
        lines = run.stdout.strip().splitlines()
        print("\n".join(lines[:-1]), flush=True)
        try:
            doc["cases"].append(json.loads(lines[-1]))
        except (IndexError, ValueError):
            print("%s: FAILED (exit %d) %s" % (case[0], run.returncode, run.stderr[-2000:]), flush=True)
            doc["cases"].append({"name": case[0], "error": "exit %d" % run.returncode})
        json.dump(doc, open(OUT, "w"), indent=1)


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        measure_one(sys.argv[2])
    else:
        main()
