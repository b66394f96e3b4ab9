"""The framework settings of each family of published sharded runs (scripts/sharded_scenarios.py writes the
scenarios): which framework, precision, kernels, sharding, offload and schedule a run's source names or, where
it is silent, its framework's documented default, with the note that says which."""

FSDP_FAMILIES = ("llmfoundry", "fmsfsdp", "nemo-automodel", "pytorch-fsdp-blog")

def family(run):
    for prefix in ("llmfoundry", "fmsfsdp", "pytorch-fsdp-blog", "megatron-core", "nemo2407", "mbridge2511",
                   "nemo-automodel", "deepspeed-azure"):
        if run["id"].startswith(prefix):
            return prefix
    raise ValueError("unknown source family: " + run["id"])


def gpu_memory_gb(gpu_type):
    """The printed GPU's memory: the sources' 40 GB A100s, else 80 GB (every H100 and A100-80GB here)."""
    return 40 if "40" in gpu_type else 80


def recompute_of(run):
    ac = (run["parallel"].get("activation_checkpointing") or "").lower()
    if ac.startswith("full"):
        return "full", None
    if ac.startswith("selective"):
        # fms-fsdp train_config: selective_checkpointing = 1 (the fraction of blocks fully checkpointed);
        # the printed HFU/MFU ratio (74/55, 47/38 ~ 4/3) is one extra forward pass: every block recomputed.
        return "full", "fms-fsdp 'selective' = fraction of blocks fully checkpointed, default 1 (all blocks); HFU/MFU ~ 4/3 agrees"
    if ac.startswith("none"):
        return "none", None
    if family(run) in ("deepspeed-azure",):
        return "full", "recompute not printed; the source's TFLOP formula counts one recompute forward (Megatron-DeepSpeed checkpoint-activations)"
    return "none", "recompute not printed: framework default (none)"


def llmfoundry_attention(run):
    """(attention_kernel, reason) of an llm-foundry benchmark table's run."""
    if "#838" in str(run["framework"].get("date")):
        # scripts/train/benchmarking/sweep.py of PR #838 passes --attn_impl per model.
        if any(m in run["model"]["name"] for m in ("MPT-13b", "MPT-30b")):
            return "triton", "sweep.py (PR #838) passes --attn_impl triton for 13b and 30b: MPT's Triton FlashAttention"
        return "flash", "sweep.py (PR #838) passes --attn_impl flash with llm-foundry[gpu-flash2]: FlashAttention-2"
    # Tables of 2023 (A100 by 2023-05-03, H100 PR #543): sweep.sh passes no --attn_impl and
    # submit_benchmarks.py defaults to 'triton' (at 5f43bf160 and b2a43a147).
    return "triton", ("submit_benchmarks.py --attn_impl default 'triton' (sweep.sh passes none): MPT's Triton "
                      "FlashAttention (llmfoundry/models/layers/flash_attn_triton.py)")


def setup_of(run):
    """(training, parallel, notes) for the run's framework."""
    fam, b, p = family(run), run["batch"], run["parallel"]
    recompute, note = recompute_of(run)
    notes = [note] if note else []
    s, mb = b["seq_len"], b.get("micro_batch") or 1
    gbs = b.get("global_batch_seqs") or mb * p["dp"]
    if not b.get("global_batch_seqs"):
        notes.append("global batch not printed: one micro-batch per GPU (%d x %d)" % (mb, p["dp"]))
    if not b.get("micro_batch"):
        notes.append("micro-batch not printed (Megatron has no default): 1")
    tr = {"sequence_length": s, "global_batch": gbs, "micro_batch": mb, "optimizer": "adamw", "flash_attention": True}
    par = {"tp": p["tp"], "pp": p["pp"], "cp": p.get("cp") or 1, "dp": p["dp"], "recompute": recompute}
    if fam in FSDP_FAMILIES:
        tr = fsdp_setup(run, tr, par, notes)
    elif fam == "deepspeed-azure":
        tr = deepspeed_setup(tr, par, notes)
    else:
        tr = megatron_setup(run, tr, par, notes)
    return tr, par, notes


def fsdp_setup(run, tr, par, notes):
    """The training section of a run of PyTorch FSDP (llm-foundry, fms-fsdp, NeMo AutoModel, the FSDP blog);
    sets the sharding in par and appends to notes."""
    fam, p = family(run), run["parallel"]
    tr = {"framework": "fsdp", "precision": "fp8" if "fp8" in str(run["precision"]) else "bf16", **tr}
    par["zero"] = 2 if "SHARD_GRAD_OP" in p["sharding"] else 3
    if "HSDP" in p["sharding"]:
        par["dp_shard"] = p["sharding_group"]
        notes.append("HSDP, sharding group %d (docs/configurations.md: a node's GPUs; FSDP1 HYBRID_SHARD): "
                     "dp_shard %d, the states replicated on every node" % ((p["sharding_group"],) * 2))
    if fam in ("fmsfsdp", "nemo-automodel"):
        tr["compile"] = True
        notes.append("torch.compile on (fms-fsdp numbers are post-compile; AutoModel recipe compile: true)")
    if fam == "nemo-automodel":
        tr["repeat_kv"] = False
        notes.append("repeat_kv false: AutoModel trains Hugging Face transformers models, whose SDPA attention "
                     "passes grouped K/V to torch's SDPA (integrations/sdpa_attention.py, use_gqa_in_sdpa: "
                     "enable_gqa with torch >= 2.5); torchtitan's and fms' own Llama repeat them")
    if fam == "fmsfsdp":
        tr["optimizer_kernel"] = "foreach"
        notes.append("optimizer: torch.optim.AdamW(model.parameters(), lr, betas=(0.9, 0.95), weight_decay=0.1) "
                     "(fms-fsdp main_training.py): neither fused nor foreach given, torch's CUDA default foreach")
    if fam == "pytorch-fsdp-blog":
        fsdp_blog_setup(run, tr, par, notes)
    if fam == "llmfoundry":
        llmfoundry_setup(run, tr, notes)
    if par["recompute"] != "none":
        early_stop, why = checkpoint_early_stop_of(run)
        if not early_stop:
            tr["checkpoint_early_stop"] = False
        notes.append("checkpoint_early_stop %s: %s" % ("true" if early_stop else "false", why))
    return tr


def checkpoint_early_stop_of(run):
    """(early stop, reason) of an FSDP run that checkpoints its blocks. torch >= 2.1's non-reentrant checkpoint
    stops each block's recompute at its last saved tensor (torch/utils/checkpoint.py set_checkpoint_early_stop,
    on by default); torch <= 2.0 and the reentrant checkpoint rerun the whole block."""
    fam = family(run)
    if fam == "pytorch-fsdp-blog":
        return False, ("PyTorch 1.11/1.12 (2022): torch's checkpoint_wrapper reruns the whole block (the early stop "
                       "came with torch 2.1)")
    if fam == "llmfoundry":
        date = str(run["framework"].get("date"))
        if "fp8" in str(run["precision"]):
            return False, ("FP8 runs Transformer Engine layers, for which llm-foundry's train.py turns "
                           "activation_checkpointing_reentrant on (te.Linear does not support the non-reentrant one)")
        if "#838" in date:
            return True, ("PR #838 tree: setup.py torch>=2.1,<2.1.1 and the mpt yamls' activation_checkpointing_"
                          "reentrant: false (Composer's checkpoint_wrapper NO_REENTRANT): torch 2.1's early stop")
        if "#543" in date:
            return True, ("the runs behind the 2023 H100 table (h100new.md, tests/data/llmfoundry-h100new.md) ran "
                          "mosaicml/pytorch:2.1.0_cu121-nightly20230827, after torch's early stop became the "
                          "default (pytorch PR #96866, 2023-03), with the yamls' activation_checkpointing_reentrant: false")
        return False, ("A100 tables of 2023-05: torch 1.13 (submit_benchmarks.py --image default mosaicml/pytorch:"
                       "1.13.1; the README: 'Update tables with torch 2.0 after next Composer release'), whose "
                       "non-reentrant checkpoint reruns the whole block")
    return True, ("the framework's default: torch's non-reentrant checkpoint_wrapper (CheckpointImpl.NO_REENTRANT), "
                  "early stop on by default since torch 2.1")


def fsdp_blog_setup(run, tr, par, notes):
    """The PyTorch FSDP blog's benchmark (Shen Li's ptd_benchmark): fp16 SGD with CPU offload, minGPT layers."""
    b = run["batch"]
    s, mb = b["seq_len"], b.get("micro_batch") or 1
    tr["precision"] = "fp16"
    tr["optimizer"] = "sgd"
    notes.append("optimizer: SGD (printed: 'SGD optimizer; random input data')")
    par["offload"] = {"params": "cpu", "optimizer": "cpu"}
    notes.append("FSDP CPUOffload(offload_params=True): parameters, gradients and optimizer step on the host")
    # ptd_benchmark trainer.py --activation: 'checkpoint' (checkpoint_wrapper) or 'offload'
    # (checkpoint_wrapper(offload_to_cpu=True): the checkpointed block inputs in pinned host memory).
    # The blog prints only that checkpointing was applied; where the block inputs alone exceed the
    # GPU's memory, the run that was measured can only have been the offload mode.
    layers, hidden, gpu_gb = run["model"]["layers"], run["model"]["hidden"], gpu_memory_gb(
        run["hardware"]["gpu_type"])
    checkpoints = layers * mb * s * hidden * 2
    if checkpoints > gpu_gb * 1e9:
        par["offload"]["activations"] = "cpu"
        notes.append("activation mode not printed (ptd_benchmark --activation checkpoint | offload): the "
                     "block-input checkpoints alone (%d layers x %d x %d x %d x 2 B = %.1f GB) exceed the "
                     "GPU's %d GB, so the measured run used offload, checkpoint_wrapper(offload_to_cpu="
                     "True): offload activations cpu" % (layers, mb, s, hidden, checkpoints / 1e9, gpu_gb))
    # ptd_benchmark trainer.py: the model is built in --dtype fp16 (no FSDP MixedPrecision in PyTorch
    # 1.11), so SGD updates the fp16 parameters; models.py CausalSelfAttention is minGPT's explicit
    # q @ k^T, masked_fill, softmax, dropout, @ v (no fused attention kernel).
    tr["master_weights"] = "none"
    notes.append("ptd_benchmark trainer.py builds the model in fp16 (--dtype fp16; FSDP MixedPrecision came "
                 "in PyTorch 1.12): no fp32 master copy, master_weights none")
    # trainer.py: loss = out.sum() on the fp16 logits: no fp32 copy of them, no softmax. The scenario's
    # nearest expression is a loss read from the 16-bit logits in one kernel (fused_loss).
    tr["fused_loss"] = True
    notes.append("loss: trainer.py's out.sum() on the fp16 logits (no fp32 copy, no cross-entropy): "
                 "fused_loss true, the scenario's loss read from the 16-bit logits in one kernel")
    # models.py CausalSelfAttention: minGPT's explicit q @ k^T, masked_fill, softmax, dropout, @ v.
    tr["flash_attention"] = False
    notes.append("attention: minGPT's explicit q @ k^T / masked_fill / softmax / dropout / @ v (ptd_benchmark "
                 "models.py CausalSelfAttention): flash_attention false")


def llmfoundry_setup(run, tr, notes):
    """llm-foundry's benchmark runs: Composer's optimizer loop, the fused loss, the attention kernel of the table."""
    mode = run.get("fsdp_mixed_precision_mode") or "DEFAULT"
    notes.append("fsdp framework: FSDP mixed precision %s gathers bf16 copies of the fp32 shards "
                 "(composer get_mixed_precision: param_dtype = the autocast dtype for DEFAULT and PURE)" % mode)
    # DEFAULT sets no reduce_dtype, and FSDP then reduces in param_dtype (FlatParamHandle._init_param_reduce_dtypes,
    # "Special case: infer gradient reduction mixed precision"); PURE sets it to the same dtype.
    notes.append("gradient reduce-scatter in bf16 (grad_precision same): %s sets no fp32 reduce_dtype (DEFAULT none, "
                 "which FSDP infers from param_dtype; PURE the autocast dtype); the kept shards are fp32" % mode)
    tr["optimizer_kernel"] = "for_loop"
    notes.append("optimizer: decoupled_adamw (scripts/train/yamls/pretrain/mpt-*.yaml, which "
                 "benchmarking/submit_benchmarks.py runs): Composer's DecoupledAdamW, a Python loop of torch "
                 "ops per parameter (composer/optim/decoupled_weight_decay.py): for_loop")
    tr["fused_loss"] = True
    notes.append("loss: llm-foundry ComposerMPTCausalLM loss_fn default 'fused_crossentropy' "
                 "(flash_attn.losses.cross_entropy.CrossEntropyLoss on the 16-bit logits)")
    kernel, why = llmfoundry_attention(run)
    tr["attention_kernel"] = kernel
    notes.append("attention: " + why)
    if kernel == "flash":
        # llmfoundry/models/layers/attention.py flash_attn_fn (PR #838 tree): unpad_input on Q, K, V,
        # flash_attn_varlen_func, pad_input on the output (the Triton path runs on the padded tensors).
        tr["attention_unpad"] = True
        notes.append("attention_unpad: llm-foundry's flash_attn_fn unpads Q, K, V (flash-attn bert_padding "
                     "unpad_input) around flash_attn_varlen_func and pads the output back (pad_input)")


def deepspeed_setup(tr, par, notes):
    """Megatron-DeepSpeed with ZeRO-3 and CPU offload (the DeepSpeed Azure blog)."""
    # The blog's Table 1 names microsoft/Megatron-DeepSpeed as the training code; its Azure recipes
    # (examples/azure/run-175b.sh, run-1t.sh, 2022-07) launch pretrain_gpt.py with no --no-*-fusion flag.
    # megatron/model/transformer.py of that tree (commit 233df917, 2022-08-08): MixedFusedLayerNorm,
    # bias_gelu_impl, FusedScaleMaskSoftmax, bias_dropout_add_fused_train, and ParallelAttention's
    # baddbmm / softmax / bmm with no FlashAttention (--use-flash-attn reached its main branch 2023-07-04).
    tr = {"framework": "deepspeed", "layer_code": "fused", "precision": "fp16", **tr}
    tr["flash_attention"] = False
    notes.append("layer code: Megatron-DeepSpeed's GPT (the blog's Table 1; examples/azure/run-175b.sh and "
                 "run-1t.sh run pretrain_gpt.py with its default fusions): apex MixedFusedLayerNorm, fused "
                 "bias-GeLU, FusedScaleMaskSoftmax, fused bias-dropout-add (megatron/model/transformer.py, "
                 "2022-08 tree): layer_code fused")
    notes.append("no FlashAttention: the 2022 Megatron-DeepSpeed attention is baddbmm, fused scale-mask-softmax "
                 "and bmm (ParallelAttention.forward); --use-flash-attn came to its main branch in 2023-07")
    par.update({"zero": 3, "offload": {"optimizer": "cpu", "activations": "cpu"}})
    notes.append("precision not printed: 16-bit (the published TFLOP/s exceed the A100 TF32 peak of 156); fp16")
    notes.append("printed: 'activation and optimizer states are allocated in the main memory': optimizer "
                 "states on the host (ZeRO-Offload) and the checkpointed activations on the host "
                 "(DeepSpeed activation_checkpointing cpu_checkpointing)")
    return tr


def megatron_setup(run, tr, par, notes):
    """Megatron-Core, NeMo and Megatron-Bridge runs; sets the layout in par and appends to notes."""
    fam, p = family(run), run["parallel"]
    # Megatron-Core family: distributed optimizer (ZeRO-1, fp32 gradients), sequence parallel when tp > 1,
    # overlapped gradient reduce and parameter gather. TP-communication overlap on for every run: the NeMo /
    # Megatron-Bridge recipes enable it, and the Megatron-Core r0.8 README ("Training Speed and Scalability")
    # says its table was measured with --overlap-grad-reduce --overlap-param-gather and --tp-comm-overlap.
    prec = "fp8" if "fp8" in str(run["precision"]) else "bf16"
    if fam == "megatron-core":
        notes.append("overlap: --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap (printed in the README "
                     "text above the table)")
    if run["precision"] is None:
        notes.append("precision not printed: bf16 (408.8 TFLOP/s at 41 % MFU implies the ~989 TFLOP/s bf16 peak)")
    grads = "fp32"
    if fam == "mbridge2511":
        # Megatron-Bridge scripts/performance/configs/llama31/llama31_405b_llm_pretrain.yaml and
        # llama3/llama3_8b_llm_pretrain.yaml: mixed_precision.grad_reduce_in_fp32: false (bf16 gradient buffer).
        grads = "bf16"
        notes.append("gradients: bf16 buffer (Megatron-Bridge performance configs set "
                     "mixed_precision.grad_reduce_in_fp32: false)")
    tr = {"framework": "megatron", "precision": prec, "grad_precision": grads, **tr}
    if fam == "mbridge2511":
        # Megatron-Bridge v0.2.0 src/megatron/bridge/models/gpt_provider.py: cross_entropy_loss_fusion = True;
        # scripts/performance/utils/helpers.py: recipe.model.cross_entropy_fusion_impl = "te".
        tr["fused_loss"] = True
        notes.append("loss: Megatron-Bridge gpt_provider.py cross_entropy_loss_fusion = True with "
                     "cross_entropy_fusion_impl = 'te' (scripts/performance/utils/helpers.py): Transformer Engine's "
                     "fused parallel_cross_entropy")
    if "current scaling" in str(run["precision"]):
        # Megatron-Bridge v0.2.0 scripts/performance/utils/helpers.py get_precision_config("fp8_cs") ->
        # training/mixed_precision.py bf16_with_fp8_current_scaling_mixed: fp8_recipe = "tensorwise"
        # (Transformer Engine's Float8CurrentScaling), first_last_layers_bf16 = False.
        tr["fp8_recipe"] = "current"
        notes.append("FP8 recipe: current scaling (Megatron-Bridge bf16_with_fp8_current_scaling_mixed: fp8_recipe "
                     "'tensorwise', Transformer Engine Float8CurrentScaling; the performance scripts set "
                     "first_last_layers_bf16 = False, so every layer runs in FP8)")
    vpp = p.get("vpp") or 1
    if fam == "megatron-core" and p["pp"] > 1 and not p.get("vpp"):
        vpp = megatron_core_interleave(run, notes)
    par.update({"schedule": "interleaved" if vpp > 1 else "1f1b", "vpp": vpp,
                "zero": 3 if "FSDP," in p["sharding"] or "Megatron-FSDP" in p["sharding"] else 1,
                "sequence_parallel": p["tp"] > 1,
                "overlap": {"grad_reduce": True, "param_gather": True, "tp_comm": True}})
    if vpp > 1 and run["model"]["layers"] % (p["pp"] * vpp):
        # Megatron-Bridge llama3.1-405b recipe: account_for_embedding_in_pipeline_split and
        # account_for_loss_in_pipeline_split (126 + 2 = 128 slots on pp x vpp = 64 chunks): the automatic
        # split gives the first and last stage one layer fewer, whose one chunk then holds only the
        # embedding or the output layer and loss (docs/model.md section 7, "Uneven chunks").
        notes.append("layers %d on pp %d x vpp %d: Megatron-Bridge counts embedding and loss as a layer each in the "
                     "split: the first and last stage one layer lighter (trainplan's automatic split)"
                     % (run["model"]["layers"], p["pp"], vpp))
    if "distributed optimizer not stated" in p["sharding"] or "DDP" in p["sharding"]:
        notes.append("distributed optimizer: default of the NeMo / Megatron-Bridge recipes (ZeRO-1)")
    return tr


def megatron_core_interleave(run, notes):
    """Virtual stages of a Megatron-Core r0.8 README row with pp > 1: one layer per virtual stage.

    The README measured its table with pipeline-parallel communication overlapped ("enabled by default"),
    and r0.8 turns overlap_p2p_comm off unless the interleaved schedule is on (megatron/training/
    arguments.py, validate_args: "non-interleaved schedule does not support overlapping p2p
    communication"), so the rows ran interleaved. The layers per virtual stage are not printed; the 462B
    row (112 layers on pp 16: 7 per stage) admits only 1, since r0.8 needs a stage's layers divisible by
    them and 7 would be the non-interleaved schedule. The family's other rows get the same 1."""
    layers, pp = run["model"]["layers"], run["parallel"]["pp"]
    vpp = layers // pp
    notes.append("schedule: interleaved, one layer per virtual stage (vpp %d): the README overlaps pipeline "
                 "communication, which r0.8 allows only under the interleaved schedule (arguments.py "
                 "validate_args); layers per virtual stage not printed, 1 as the 462B row's 7 layers per stage "
                 "force" % vpp)
    return vpp


# Which FSDP each FSDP family ran (memory.fsdp_version; 2, fully_shard, is the framework's default):
# llm-foundry through Composer (composer/trainer/dist_strategy.py prepare_fsdp_module wraps with
# torch.distributed.fsdp.FullyShardedDataParallel), fms-fsdp (main_training_llama.py: FSDP(model, ...)) and
# the FSDP blog's PyTorch 1.11 prototype are FSDP1; NeMo AutoModel's FSDP2Manager calls fully_shard.
FSDP1_FAMILIES = {
    "llmfoundry": "Composer's prepare_fsdp_module wraps with torch.distributed.fsdp.FullyShardedDataParallel",
    "fmsfsdp": "fms-fsdp main_training_llama.py wraps with torch.distributed.fsdp.FullyShardedDataParallel",
    "pytorch-fsdp-blog": "PyTorch 1.11's FullyShardedDataParallel (FSDP2 came in 2024)",
}


def memory_of(run):
    """(memory section or None, notes): the framework settings a run's recipe sets beyond the defaults."""
    mem, notes = recipe_memory_of(run)
    if family(run) in FSDP1_FAMILIES:
        mem = dict(mem or {}, fsdp_version=1)
        notes = notes + ["FSDP1: " + FSDP1_FAMILIES[family(run)] + ": fsdp_version 1"]
    return mem, notes


def recipe_memory_of(run):
    if family(run) == "pytorch-fsdp-blog":
        # ptd_benchmark models.py (commit ecd0d25) ShardedGPT: wrapper(Block(..., wrapper=wrap)) wraps ln1, ln2,
        # attn and each MLP Linear of a Block as its own FSDP unit inside the block's checkpoint wrapper.
        # trainer.py --prefetch defaults to noop (backward_prefetch None, PyTorch 1.11 FSDP's own default), as
        # its AWS launcher fsdp.sh passes; before commit 019bd98 (2021-12-22) FSDP was built without the argument.
        return ({"fsdp_unit": "submodule", "fsdp_backward_prefetch": "none"},
                ["FSDP units: ptd_benchmark ShardedGPT wraps each submodule of a Block (ln1, ln2, attn, each MLP "
                 "Linear) with wrap(): fsdp_unit submodule",
                 "backward prefetch not printed: ptd_benchmark trainer.py --prefetch defaults to noop (FSDP "
                 "backward_prefetch None, PyTorch 1.11's default; its AWS launcher fsdp.sh passes noop): "
                 "fsdp_backward_prefetch none"])
    if family(run) != "deepspeed-azure":
        return None, []
    # Megatron-DeepSpeed examples/azure/run-175b.sh, run-1t.sh and run-benchmark-model.sh (the sized recipe the
    # other models run with; commit 233df917, 2022-08) all write a ds_config with stage3_max_live_parameters 3e9,
    # stage3_max_reuse_distance 3e9 and reduce_bucket_size 9e7; their stage3_prefetch_bucket_size 5e7 and
    # persistence threshold 1e5 (misspelt stage3_param_persitence_threshold in run-175b.sh / run-1t.sh) are
    # DeepSpeed's defaults: left out.
    return ({"zero3_max_live_parameters": "3e9", "zero3_max_reuse_distance": "3e9", "zero3_reduce_bucket": "9e7"},
            ["ZeRO-3 settings: examples/azure/run-175b.sh, run-1t.sh and run-benchmark-model.sh (Megatron-DeepSpeed "
             "233df917) set "
             "stage3_max_live_parameters 3e9, stage3_max_reuse_distance 3e9 and reduce_bucket_size 9e7 (prefetch "
             "bucket 5e7 and persistence threshold 1e5: DeepSpeed's defaults)"])
