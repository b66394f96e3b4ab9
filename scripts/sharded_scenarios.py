#!/usr/bin/env python3
"""Writes scenarios/validation/sharded/*.yaml and index.yaml from published-sharded-runs.yaml (copied
into that folder from shared/validation; 45 published runs: llm-foundry FSDP, IBM fms-fsdp, the PyTorch
FSDP blog, Megatron-Core, NeMo / Megatron-Bridge, NeMo AutoModel, DeepSpeed on Azure).

One scenario per run, built from what the run's source prints; where it leaves a setting unsaid the
framework's documented default is used and the scenario's comment says so. What each source measured is
converted into a step time (what trainplan predicts) by `measured_step` below, following the run's
`metric_definition`; the conversion is written into index.yaml beside the value.
Run from the repository root: python3 scripts/sharded_scenarios.py"""
import os

import yaml

from sharded_frameworks import family, gpu_memory_gb, memory_of, setup_of

DIR = "scenarios/validation/sharded"
SOURCE = os.path.join(DIR, "published-sharded-runs.yaml")


def flow(d):
    def val(v):
        if isinstance(v, bool):
            return str(v).lower()
        if isinstance(v, dict):
            return flow(v)
        return str(v)
    return "{" + ", ".join("%s: %s" % (k, val(v)) for k, v in d.items()) + "}"


def megatron_flops(batch, s, layers, h, heads, kv_heads, ffn, vocab, gated):
    """Megatron-LM megatron/training/training.py num_floating_point_operations (core_r0.8):
    12·B·s·L·h²·[(1 + g/a + s/h) + f/h·(3/2 if swiglu) + V/(2·L·h)], forward + backward, no recompute,
    attention counted non-causally."""
    return 12 * batch * s * layers * h * h * ((1 + kv_heads / heads + s / h) + ffn / h * (1.5 if gated else 1)
                                             + vocab / (2 * layers * h))


def narayanan_flops(batch, s, layers, h, vocab):
    """Narayanan et al. 2021 (arXiv 2104.04473) eq. (3): 96·B·s·l·h²·(1 + s/6h + V/16lh), which counts
    one activation-recompute forward pass (4 passes of 2·N FLOPs per token)."""
    return 96 * batch * s * layers * h * h * (1 + s / (6 * h) + vocab / (16 * layers * h))


def measured_step(run, model):
    """Step time in seconds from what the run reports, per its metric_definition; returns (seconds, how)."""
    m, b, gpus = run["measured"], run["batch"], run["hardware"]["gpu_count"]
    if m.get("step_time_s"):
        return m["step_time_s"], "step_time_s as published"
    if m.get("tokens_per_s_total") and b.get("global_batch_tokens"):
        return (b["global_batch_tokens"] / m["tokens_per_s_total"],
                "global_batch_tokens / tokens_per_s_total (%d / %d)" % (b["global_batch_tokens"], m["tokens_per_s_total"]))
    if m.get("tokens_per_s_per_gpu"):
        tokens = model["global_batch"] * b["seq_len"]
        return (tokens / (m["tokens_per_s_per_gpu"] * gpus),
                "global_batch x seq / (tokens_per_s_per_gpu x GPUs) = %d / (%g x %d)" % (tokens, m["tokens_per_s_per_gpu"], gpus))
    tflops = m["tflops_per_gpu"] * 1e12
    if family(run) == "megatron-core":
        flops = megatron_flops(model["global_batch"], b["seq_len"], model["layers"], model["hidden"], model["heads"],
                               model["heads"], model["ffn_hidden"], model["vocab"], False)
        return flops / (tflops * gpus), "Megatron num_floating_point_operations(global batch) / (TFLOP/s per GPU x GPUs)"
    # deepspeed-azure (formula printed by the source) and the PyTorch FSDP blog (formula not printed in the
    # blog; its benchmark, ptd_benchmark trainer.py calc_flop, computes the same Narayanan et al. eq. (3)
    # with B = its --batch_size per GPU). B = the per-GPU micro-batch: one micro-batch per GPU per step.
    flops = narayanan_flops(b["micro_batch"], b["seq_len"], model["layers"], model["hidden"], model["vocab"])
    return flops / tflops, "96 B s l h^2 (1 + s/6h + V/16lh) per GPU (B = micro-batch) / TFLOP/s per GPU"


def nodes_of(gpus):
    return max(1, gpus // 8)


def cluster_of(run):
    """DGX-class nodes of 8 GPUs; the fabric as printed where the source prints one (comment in the file)."""
    hw, fam = run["hardware"], family(run)
    gpu_type, nodes = hw["gpu_type"], nodes_of(hw["gpu_count"])
    if gpu_type.startswith("H100"):
        c = {"preset": "dgx-h100", "nodes": nodes}
        if fam == "fmsfsdp":
            c["inter_node"] = {"bandwidth": "100 Gbit/s", "nics_per_node": 8}
        return c
    c = {"preset": "dgx-a100", "nodes": nodes}
    if gpu_memory_gb(gpu_type) == 40:
        c["gpu"] = "a100-sxm4-40gb"
    if fam == "fmsfsdp":
        c["inter_node"] = {"bandwidth": "50 Gbit/s", "nics_per_node": 8}
    if fam == "pytorch-fsdp-blog":
        c["inter_node"] = {"bandwidth": "100 Gbit/s", "nics_per_node": 4}
    if fam in HOST_CPUS:
        c["host_cpu"] = HOST_CPUS[fam][0]
    return c


# Host CPUs printed or implied by a run's source (NCCL's network post overhead, docs/model.md §14); other A100 runs
# take the dgx-a100 preset's (DGX A100: AMD Rome 7742), the H100 runs dgx-h100's (Intel Xeon Platinum 8480C).
HOST_CPUS = {
    "pytorch-fsdp-blog": ("intel", "host CPU: the blog's AWS nodes of 8 A100 40 GB with 400 Gbps EFA are p4d.24xlarge, "
                                   "Intel Xeon Platinum 8275CL (AWS EC2 P4 instance page): host_cpu intel"),
    "deepspeed-azure": ("amd", "host CPU: Azure NDm A100 v4, AMD EPYC 7V12 (Azure NDm A100 v4-series documentation): "
                               "host_cpu amd"),
}


def cluster_notes(run):
    fam = family(run)
    if fam in HOST_CPUS:
        return [HOST_CPUS[fam][1]]
    if not run["hardware"]["gpu_type"].startswith("H100"):
        return ["host CPU not printed: the dgx-a100 preset's (DGX A100 datasheet: AMD Rome 7742)"]
    return []


def gpt_model(run, vocab):
    m, s = run["model"], run["batch"]["seq_len"]
    return {"name": m["name"].split(" (")[0], "layers": m["layers"], "hidden": m["hidden"], "heads": m["heads"],
            "ffn_hidden": 4 * m["hidden"], "vocab": vocab, "activation": "gelu", "norm": "layernorm",
            "position": "learned", "max_positions": s, "tied_embeddings": True, "bias": True}


def model_of(run):
    """(model mapping or preset name, shape used by the FLOP conversions, notes)."""
    m, fam = run["model"], family(run)
    if fam == "llmfoundry":
        d = {"name": m["name"].split(" (")[0], "layers": m["layers"], "hidden": m["hidden"], "heads": m["heads"],
             "ffn_hidden": m["ffn_hidden"], "vocab": m["vocab"], "activation": "gelu", "norm": "layernorm",
             "position": "learned", "max_positions": run["batch"]["seq_len"], "tied_embeddings": True, "bias": False,
             "dropout": False}
        return d, d, ["MPT defaults (llm-foundry mpt configuration): no_bias, tied embeddings, learned positions",
                      "dropout: MPTConfig resid_pdrop 0.0, emb_pdrop 0.0, attn_config attn_pdrop 0.0 "
                      "(llmfoundry/models/mpt/configuration_mpt.py defaults): dropout false"]
    if fam == "fmsfsdp":
        d = {"name": m["name"], "layers": m["layers"], "hidden": m["hidden"], "heads": m["heads"],
             "kv_heads": m["kv_heads"], "ffn_hidden": m["ffn_hidden"], "vocab": m["vocab"], "activation": "swiglu",
             "norm": "rmsnorm", "position": "rope", "tied_embeddings": False, "bias": False}
        return d, d, []
    # Dropout not printed by the Megatron-Core r0.8 README nor the DeepSpeed Azure blog: the framework's
    # argument defaults --hidden-dropout 0.1 and --attention-dropout 0.1 (megatron/training/arguments.py,
    # _add_regularization_args, core_r0.8.0; megatron/arguments.py of Megatron-DeepSpeed, 2022 tree).
    megatron_dropout = ("dropout not printed: Megatron argument defaults --hidden-dropout 0.1, --attention-dropout "
                        "0.1 (%s): dropout true")
    if fam == "megatron-core":
        d = dict(gpt_model(run, m["vocab"]), dropout=True)
        return d, d, ["ffn 4h, gelu, layernorm, learned positions, biases, tied embeddings: Megatron-LM GPT argument "
                      "defaults (model shape beyond layers/hidden/heads/vocab not printed)",
                      megatron_dropout % "megatron/training/arguments.py _add_regularization_args, core_r0.8.0"]
    if fam == "deepspeed-azure":
        d = dict(gpt_model(run, 50304), dropout=True)
        return d, d, ["vocab not printed: GPT-2 BPE 50257 padded to 50304 (Megatron-DeepSpeed "
                      "make-vocab-size-divisible-by 128 default); ffn 4h, gelu: Megatron GPT defaults",
                      megatron_dropout % "Megatron-DeepSpeed megatron/arguments.py _add_regularization_args, 2022"]
    if fam == "pytorch-fsdp-blog":
        # The blog's benchmark is minGPT in Shen Li's ptd_benchmark (models.py, 2022): GPTConfig embd_pdrop,
        # resid_pdrop and attn_pdrop 0.1; separate query/key/value/proj nn.Linear with biases; the decoder
        # head an nn.Linear(n_embd, vocab, bias=False) of its own (not tied to tok_emb).
        d = dict(gpt_model(run, 50000), tied_embeddings=False, dropout=True)
        return d, d, ["vocab printed as '50K' -> 50000; ffn 4h, gelu, layernorm: GPT defaults (not printed)",
                      "layer code: minGPT as in the blog's benchmark (ptd_benchmark models.py): dropout 0.1 "
                      "(GPTConfig embd/resid/attn_pdrop), biases, an untied bias-free head: dropout true, "
                      "tied_embeddings false"]
    presets = {"nemo2407-llama3-8b": "llama3-8b", "nemo2407-llama3-70b": "llama3-70b",
               "nemo2407-gpt3-175b": "gpt3-175b", "mbridge2511-llama3-8b": "llama3-8b",
               "mbridge2511-llama31-405b": "llama3.1-405b", "nemo-automodel-llama31-70b": "llama3.1-70b"}
    for prefix, preset in presets.items():
        if run["id"].startswith(prefix):
            return preset, None, ["model: catalog preset %s (same shape as the source's model)" % preset]
    raise ValueError("no model for " + run["id"])


def scenario_lines(run, model, tr, par, mem=None):
    """The scenario's YAML lines (no comments), ending with an empty line."""
    lines = ["name: %s" % run["id"], "model: " + (model if isinstance(model, str) else flow(model)),
             "cluster: " + flow(cluster_of(run)), "training: " + flow(tr), "parallel: " + flow(par)]
    return lines + (["memory: " + flow(mem)] if mem else []) + [""]


def scenario_of(run):
    """One run as a scenario: (assumption notes, YAML lines, parallel section, measured step s, conversion)."""
    model, shape, notes = model_of(run)
    tr, par, setup_notes = setup_of(run)
    mem, mem_notes = memory_of(run)
    step, how = measured_step(run, dict(shape or {}, global_batch=tr["global_batch"]))
    return notes + setup_notes + mem_notes + cluster_notes(run), scenario_lines(run, model, tr, par, mem), par, step, how


def failure_class(par, gpus):
    if "offload" in par:
        return "zero3-cpu-offload"
    if par["zero"] >= 2:
        return "sharded-dp-%s" % ("node" if gpus <= 16 else "multi-node")
    if par["pp"] >= 8:
        return "long-pipeline"
    return "megatron-3d"


def main():
    runs = yaml.safe_load(open(SOURCE))
    index = ["# Published sharded-data-parallel and Megatron-Core runs (published-sharded-runs.yaml in this",
             "# folder, copied from shared/validation) written by scripts/sharded_scenarios.py: one scenario per",
             "# run; step_seconds is what the run measured, converted as `conversion` says.",
             "# class: the failure class the run belongs to (docs/model.md §22).", "runs:"]
    for run in runs:
        notes, body, par, step, how = scenario_of(run)
        gpus = run["hardware"]["gpu_count"]
        fw = run["framework"]["name"]
        text = ["# %s: %s, %s, %d x %s (%s)" % (run["id"], fw, run["precision"], gpus, run["hardware"]["gpu_type"],
                                                run["source"].get("path", "")),
                "# measured: %s" % {k: v for k, v in run["measured"].items() if v is not None},
                "# metric: %s" % run["metric_definition"].replace("\n", " ")]
        text += ["# assumed: " + n for n in notes]
        text += body
        open(os.path.join(DIR, run["id"] + ".yaml"), "w").write("\n".join(text))
        index += ["- scenario: %s.yaml" % run["id"], "  source: %s" % family(run),
                  "  class: %s" % failure_class(par, gpus), "  conversion: \"%s\"" % how,
                  "  measured:", "    step_seconds: %.6g" % step]
    open(os.path.join(DIR, "index.yaml"), "w").write("\n".join(index) + "\n")


if __name__ == "__main__":
    main()
