#!/usr/bin/env python3
"""(1) Hugging Face Qwen3 (q/k norms) against Llama of the same shape (none): whole steps on one GPU, the
difference is the q/k norms' cost; (2) fused AdamW at several sizes, fp32 and bf16 states, 100 and 1000 tensors.
Needs a CUDA GPU with PyTorch and transformers. Usage: python3 scripts/qk_norm_and_adamw_steps.py OUT.json"""
import gc, json, statistics, sys, time
import torch
from transformers import LlamaConfig, LlamaForCausalLM, Qwen3Config, Qwen3ForCausalLM
out = sys.argv[1]
res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "steps": [], "adamw": []}
def save(): json.dump(res, open(out, "w"), indent=1)
shape = dict(num_hidden_layers=16, hidden_size=2048, num_attention_heads=16, num_key_value_heads=8, head_dim=128,
             intermediate_size=6144, vocab_size=151936, tie_word_embeddings=True, max_position_embeddings=8192,
             attn_implementation="sdpa", use_cache=False)
for name, cls, cfg_cls in (("qwen3", Qwen3ForCausalLM, Qwen3Config), ("llama", LlamaForCausalLM, LlamaConfig)):
    for mode in ("bf16", "amp"):
        torch.cuda.empty_cache(); gc.collect(); torch.cuda.reset_peak_memory_stats()
        cfg = cfg_cls(**shape)
        rec = {"name": f"{name}-h2048-l16-s4096-mb2-{mode}", "mode": mode, "seq": 4096, "micro_batch": 2, "config": cfg.to_dict()}
        with torch.device("cuda"):
            model = cls(cfg)
        if mode == "bf16": model = model.to(torch.bfloat16)
        model.train()
        rec["params"] = sum(p.numel() for p in model.parameters())
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        ids = torch.randint(0, cfg.vocab_size, (2, 4096), device="cuda")
        def step():
            if mode == "amp":
                with torch.autocast("cuda", dtype=torch.bfloat16): loss = model(input_ids=ids, labels=ids).loss
            else: loss = model(input_ids=ids, labels=ids).loss
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        for _ in range(3): step()
        torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
        ts = []
        for _ in range(8):
            t0 = time.perf_counter(); step(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t0)
        rec["step_s_median"] = statistics.median(ts); rec["step_times"] = ts
        rec["peak_allocated"] = torch.cuda.max_memory_allocated()
        print(rec["name"], rec["params"], "%.2f ms" % (rec["step_s_median"] * 1e3), "%.2f GiB" % (rec["peak_allocated"] / 2**30), flush=True)
        res["steps"].append(rec); save()
        del model, opt
flush = torch.empty(int(100e6 // 4), dtype=torch.float32, device="cuda")
def timeit(fn, reps=10):
    for _ in range(3): fn()
    ts = []
    for _ in range(reps):
        flush.zero_(); s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e) / 1e3)
    return statistics.median(ts)
for tensors in (100, 1000):
    for nparam in (62_500_000, 125_000_000, 250_000_000, 500_000_000, 1_000_000_000, 2_000_000_000):
        for dt, nb in ((torch.float32, 4), (torch.bfloat16, 2)):
            torch.cuda.empty_cache()
            p = [torch.zeros(nparam // tensors, device="cuda", dtype=dt, requires_grad=True) for _ in range(tensors)]
            for t_ in p: t_.grad = torch.randn_like(t_)
            opt = torch.optim.AdamW(p, lr=1e-4, fused=True); opt.step()
            t = timeit(opt.step)
            res["adamw"].append({"params": nparam, "tensors": tensors, "state_dtype": "fp32" if nb == 4 else "bf16", "seconds": t,
                                 "bytes_moved": 7 * nb * nparam, "gbps": 7 * nb * nparam / t / 1e9})
            print("adamw", tensors, nparam, nb, "%.3f ms %.0f GB/s" % (t * 1e3, 7 * nb * nparam / t / 1e9), flush=True)
            opt = p = None
        save()
