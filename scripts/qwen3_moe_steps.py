#!/usr/bin/env python3
"""Single-GPU MoE ground truth: (1) Hugging Face Qwen3-MoE training steps (Qwen3-30B-A3B's layer shape, fewer
layers, pure bf16, fused AdamW, experts through torch._grouped_mm), step time, peak memory and kernel time
per class; (2) torch._grouped_mm against one dense GEMM of the same FLOPs, balanced tokens per expert.
Needs a CUDA GPU with PyTorch >= 2.9 and transformers >= 5. Usage: python3 scripts/qwen3_moe_steps.py OUT.json"""
import gc, json, statistics, sys, time
import torch

out = sys.argv[1]
res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "steps": [], "grouped_mm": []}
try:
    import transformers
    res["transformers"] = transformers.__version__
except Exception as e:  # noqa
    res["transformers_error"] = repr(e)
flush = torch.empty(int(100e6 // 4), dtype=torch.float32, device="cuda")


def timeit(fn, reps=20):
    for _ in range(3): fn()
    ts = []
    for _ in range(reps):
        flush.zero_(); s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e) / 1e3)
    return statistics.median(ts)


def save():
    json.dump(res, open(out, "w"), indent=1)


# (2) grouped GEMM vs dense, bf16: x [T*k, K] sorted by expert, w [E, K, N]
E, k = 128, 8
for T in (4096, 8192, 16384):
    for K, N in ((2048, 1536), (768, 2048)):
        rows = T * k
        try:
            x = torch.randn(rows, K, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(E, K, N, device="cuda", dtype=torch.bfloat16)
            offs = torch.arange(1, E + 1, device="cuda", dtype=torch.int32) * (rows // E)
            t_g = timeit(lambda: torch._grouped_mm(x, w, offs=offs))
            wd = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
            t_d = timeit(lambda: x @ wd)
            xs = x[: rows // E]
            t_1 = timeit(lambda: xs @ wd)
            flops = 2.0 * rows * K * N
            res["grouped_mm"].append({"tokens": T, "top_k": k, "experts": E, "rows_per_expert": rows // E, "K": K, "N": N,
                                      "grouped_s": t_g, "dense_same_flops_s": t_d, "one_expert_gemm_s": t_1,
                                      "grouped_tflops": flops / t_g / 1e12, "dense_tflops": flops / t_d / 1e12})
            del x, w, wd
        except Exception as e:  # noqa
            res["grouped_mm"].append({"tokens": T, "K": K, "N": N, "error": repr(e)[:300]})
        save()

# (1) whole steps
from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM  # noqa


def kclass(n):
    n = n.lower()
    if "flash" in n or "fmha" in n or "sdpa" in n or ("cudnn" in n and "mha" in n): return "attention"
    if "grouped" in n or "group_gemm" in n: return "grouped_gemm"
    if any(s in n for s in ("gemm", "xmma", "cutlass", "sm90", "nvjet", "cublas", "matmul")): return "gemm"
    if "adam" in n or "multi_tensor" in n: return "optimizer"
    if "sort" in n or "radix" in n or "scan" in n or "histogram" in n or "bincount" in n: return "sort_scan"
    if "index" in n or "scatter" in n or "gather" in n: return "index_scatter_gather"
    if "topk" in n or "softmax" in n: return "router_topk_softmax"
    if "copy" in n or "cast" in n or "convert" in n: return "copy_cast"
    if "reduce" in n or "sum" in n: return "reduce"
    if "cross_entropy" in n or "nll" in n or "log_softmax" in n: return "loss"
    return "elementwise_other"


CASES = [("qwen3moe-l4-s4096-mb1", 4, 4096, 1), ("qwen3moe-l8-s4096-mb1", 8, 4096, 1),
         ("qwen3moe-l8-s4096-mb2", 8, 4096, 2), ("qwen3moe-l8-s2048-mb1", 8, 2048, 1)]
for name, layers, seq, mb in CASES:
    torch.cuda.empty_cache(); gc.collect(); torch.cuda.reset_peak_memory_stats()
    cfg = Qwen3MoeConfig(vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=layers,
                         num_attention_heads=32, num_key_value_heads=4, head_dim=128, moe_intermediate_size=768,
                         num_experts=128, num_experts_per_tok=8, norm_topk_prob=True, decoder_sparse_step=1,
                         mlp_only_layers=[], tie_word_embeddings=False, output_router_logits=False,
                         max_position_embeddings=40960, attn_implementation="sdpa", use_cache=False)
    rec = {"name": name, "seq": seq, "micro_batch": mb, "mode": "bf16", "config": cfg.to_dict()}
    model = opt = None
    try:
        with torch.device("cuda"):
            model = Qwen3MoeForCausalLM(cfg)
        model = model.to(torch.bfloat16)
        impl = "unknown"
        if hasattr(model, "set_experts_implementation"):
            model.set_experts_implementation("grouped_mm"); impl = "grouped_mm"
        rec["experts_implementation"] = getattr(model.config, "_experts_implementation", impl)
        model.train()
        rec["params"] = sum(p.numel() for p in model.parameters())
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        ids = torch.randint(0, cfg.vocab_size, (mb, seq), device="cuda")

        def step():
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        step(); torch.cuda.synchronize()
        rec["mem_after_first_step"] = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        for _ in range(2): step()
        torch.cuda.synchronize()
        ts = []
        for _ in range(8):
            t0 = time.perf_counter(); step(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t0)
        rec["step_times"] = ts
        rec["step_time_s"] = statistics.median(ts)
        rec["peak_allocated"] = torch.cuda.max_memory_allocated()
        rec["peak_reserved"] = torch.cuda.max_memory_reserved()
        if name == "qwen3moe-l8-s4096-mb1":
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(2): step()
                torch.cuda.synchronize()
            cls, top = {}, []
            for ev in prof.key_averages():
                t = ev.self_device_time_total / 2e6  # per step, seconds
                if t <= 0: continue
                c = kclass(ev.key); cls[c] = cls.get(c, 0) + t
                top.append((t, ev.key[:160], ev.count // 2))
            top.sort(reverse=True)
            rec["kernel_time_per_class_s"] = cls
            rec["top_kernels"] = [{"s": t, "name": n, "calls": c} for t, n, c in top[:40]]
    except torch.cuda.OutOfMemoryError:
        rec["oom"] = True
    except Exception as e:  # noqa
        rec["error"] = repr(e)[:500]
    res["steps"].append(rec)
    del model, opt
    save()
print(json.dumps({"grouped_mm": res["grouped_mm"], "steps": [{k: r.get(k) for k in ("name", "step_time_s", "peak_allocated", "error", "experts_implementation")} for r in res["steps"]]}, indent=0))
