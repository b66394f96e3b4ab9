#!/usr/bin/env python3
"""Writes scenarios/validation/GPU-pytorch/*.yaml (GPU = h100 or h200) from GPU-pytorch-steps.json (real
single-GPU steps of shared/measurements/scripts/train_ref.py: the H100 file copied from shared/validation, the
H200 file measured by the project on the device machine) and from the plain-loop cases of
GPU-framework-steps.json (scripts/h100_framework_steps.py, the project's own measurement: gradient
accumulation over micro-batches): one scenario per measured configuration, its model taken from the case's
Hugging Face config, and index.yaml with what was measured. Run from the repository root:
python3 scripts/pytorch_step_scenarios.py h100|h200"""
import json
import os
import sys

GPU = sys.argv[1] if len(sys.argv) > 1 else "h100"
DIR = "scenarios/validation/%s-pytorch" % GPU
# The catalog cluster of one such GPU: the DGX H100, or the HGX H200 (scenarios/catalog/clusters.yaml)
PRESET = {"h100": "dgx-h100", "h200": "hgx-h200"}[GPU]


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


def case_text(c, source):
    """One case's scenario file: the model from its Hugging Face config, the training loop of its method."""
    amp = c["mode"] == "amp"
    micro_batches = c.get("micro_batches", 1)
    training = {"framework": "pytorch", "precision": "bf16", "autocast": amp,
                "compile": bool(c.get("compiled")), "sequence_length": c["seq"],
                "micro_batch": c["micro_batch"], "global_batch": c["micro_batch"] * micro_batches,
                "optimizer": "adamw",
                "optimizer_kernel": "fused",  # the files' method: AdamW(fused=True)
                "flash_attention": True}
    if c.get("attention_kernel"):
        training["attention_kernel"] = c["attention_kernel"]  # the SDPA backend the case ran (its file's notes)
    if c.get("grad_ckpt"):
        # train_ref.py: gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        # on torch 2.11: torch.utils.checkpoint's early stop (on by default since torch 2.1)
        training["checkpoint_early_stop"] = True
    parallel = {"tp": 1, "pp": 1, "dp": 1, "zero": 0, "recompute": "full" if c.get("grad_ckpt") else "none"}
    return "\n".join(["# %s: %s (%s)" % (c["name"], c["mode"], source), "name: %s pytorch %s" % (GPU, c["name"]),
                      "model: " + flow(model_of(c["config"])), "cluster: {preset: %s, nodes: 1, gpus_per_node: 1}" % PRESET,
                      "training: " + flow(training), "parallel: " + flow(parallel), ""])


def main():
    index = ["# Real single-%s training steps (%s-pytorch-steps.json and the plain-loop cases of" % (GPU.upper(), GPU),
             "# %s-framework-steps.json in this folder; method in each file)." % GPU,
             "# step_seconds: median step; peak_allocated_bytes: torch.cuda.max_memory_allocated (no CUDA context),",
             "# compared with memory total - overhead; oom: the configuration did not fit.", "runs:"]
    for source in ("%s-pytorch-steps.json" % GPU, "%s-framework-steps.json" % GPU):
        for c in json.load(open(os.path.join(DIR, source)))["cases"]:
            if c.get("loop", "plain") != "plain":
                continue  # DDP and FSDP2 at world size 1: tests/validation/test_h100_framework_steps.cpp
            open(os.path.join(DIR, c["name"] + ".yaml"), "w").write(case_text(c, source))
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
