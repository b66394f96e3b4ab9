#!/usr/bin/env python3
"""Writes scenarios/validation/h100-pytorch/*.yaml from h100-pytorch-steps.json (copied from
shared/validation, measured on one H100 SXM with PyTorch 2.11 + transformers 5.17): one scenario per
measured configuration, its model taken from the case's Hugging Face config, and index.yaml with what
was measured. Run from the repository root: python3 scripts/h100_pytorch_scenarios.py"""
import json
import os

DIR = "scenarios/validation/h100-pytorch"


def model_of(cf):
    if cf["model_type"] == "gpt2":
        h = cf["n_embd"]
        return {"name": "gpt2 h%d" % h, "layers": cf["n_layer"], "hidden": h, "heads": cf["n_head"],
                "ffn_hidden": cf.get("n_inner") or 4 * h, "vocab": cf["vocab_size"],
                # HF GPT-2 activation_function gelu_new: NewGELUActivation, the composed tanh approximation
                "activation": {"gelu_new": "gelu_tanh", "gelu": "gelu"}[cf["activation_function"]],
                "norm": "layernorm", "position": "learned", "max_positions": cf["n_positions"],
                "tied_embeddings": cf["tie_word_embeddings"], "bias": True, "dropout": False}
    return {"name": "llama h%d" % cf["hidden_size"], "layers": cf["num_hidden_layers"], "hidden": cf["hidden_size"],
            "heads": cf["num_attention_heads"], "kv_heads": cf["num_key_value_heads"], "head_dim": cf["head_dim"],
            "ffn_hidden": cf["intermediate_size"], "vocab": cf["vocab_size"], "activation": "swiglu",
            "norm": "rmsnorm", "position": "rope", "tied_embeddings": cf["tie_word_embeddings"],
            "bias": bool(cf.get("attention_bias")), "dropout": False}


def flow(d):
    return "{" + ", ".join("%s: %s" % (k, str(v).lower() if isinstance(v, bool) else v) for k, v in d.items()) + "}"


def main():
    steps = json.load(open(os.path.join(DIR, "h100-pytorch-steps.json")))
    index = ["# Real single-H100 training steps (h100-pytorch-steps.json in this folder; method in the file).",
             "# step_seconds: median step; peak_allocated_bytes: torch.cuda.max_memory_allocated (no CUDA context),",
             "# compared with memory total - overhead; oom: the configuration did not fit.", "runs:"]
    for c in steps["cases"]:
        amp = c["mode"] == "amp"
        training = {"framework": "pytorch", "precision": "bf16", "autocast": amp,
                    "compile": bool(c.get("compiled")), "sequence_length": c["seq"],
                    "micro_batch": c["micro_batch"], "global_batch": c["micro_batch"], "optimizer": "adamw",
                    "optimizer_kernel": "fused",  # the file's method: AdamW(fused=True)
                    "flash_attention": True}
        if c["grad_ckpt"]:
            # train_ref.py: gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            # on torch 2.11: torch.utils.checkpoint's early stop (on by default since torch 2.1)
            training["checkpoint_early_stop"] = True
        parallel = {"tp": 1, "pp": 1, "dp": 1, "zero": 0, "recompute": "full" if c["grad_ckpt"] else "none"}
        text = ["# %s: %s (h100-pytorch-steps.json)" % (c["name"], c["mode"]),
                "name: h100 pytorch %s" % c["name"], "model: " + flow(model_of(c["config"])),
                "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}",
                "training: " + flow(training), "parallel: " + flow(parallel), ""]
        open(os.path.join(DIR, c["name"] + ".yaml"), "w").write("\n".join(text))
        index.append("- scenario: %s.yaml" % c["name"])
        index.append("  parameters: %d" % c["params"])
        if c.get("oom"):
            index.append("  oom: true")
        else:
            index.append("  step_seconds: %r" % c["step_s_median"])
            index.append("  peak_allocated_bytes: %d" % c["peak_allocated"])
    open(os.path.join(DIR, "index.yaml"), "w").write("\n".join(index) + "\n")


if __name__ == "__main__":
    main()
