#!/usr/bin/env python3
"""Generalisation check: predicts every row of llm-foundry's benchmark tables, not only the 22 rows of the
sharded validation set, and prints the error per row and per table (docs/model.md §22, item 8), then the
weak-scaling groups: rows that differ only in their GPU count, the step's change measured and predicted (item 10).

The tables are not part of this repository: pass the README of a local llm-foundry checkout
(scripts/train/benchmarking/README.md). Each row becomes a scenario through the same writer as the
validation set (scripts/sharded_scenarios.py, scripts/sharded_frameworks.py), so it carries the same
settings and defaults; the measured step time is the row's global batch tokens / throughput (T/s).
Scenarios go to a temporary folder; nothing in the repository is written.

  python3 scripts/llmfoundry_tables.py PATH/TO/README.md [--trainplan build/cli/trainplan]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sharded_scenarios as writer  # noqa: E402

# MPT shapes: scripts/train/yamls/pretrain/mpt-*.yaml (d_model, n_heads, n_layers; expansion_ratio 4,
# vocab_size 50368 for all).
MPT = {"125m": (768, 12, 12), "350m": (1024, 16, 24), "760m": (1536, 12, 24), "1b": (2048, 16, 24),
       "3b": (2560, 20, 32), "7b": (4096, 32, 32), "13b": (5120, 40, 40), "30b": (7168, 56, 48),
       "70b": (8192, 64, 80)}
# Table heading -> (tag, GPU as the validation set names it, the date the attention-kernel rule reads).
TABLES = {"H100 80GB BF16 (Large Scale, >= 128 GPUs)": ("h100l", "H100-80GB", "table added 2024-01-06 (PR #838)"),
          "H100 80GB BF16": ("h100", "H100-80GB", "table added 2023-10-19 (PR #543)"),
          "H100 80GB FP8": ("h100fp8", "H100-80GB", "table added 2023-10-19 (PR #543)"),
          "A100 80GB with 1600 Gbps node-node interconnect (RoCE)": ("a100_80", "A100-80GB", "table of 2023-05"),
          "A100 40GB with 1600 Gbps node-node interconnect (RoCE)": ("a100_40", "A100-40GB", "table of 2023-05")}


def table_rows(readme):
    """(table tag, gpu, date, cells) for every data row of the known tables."""
    table = None
    for line in open(readme):
        if line.startswith("## "):
            table = TABLES.get(line[3:].strip())
        elif table and line.startswith("|") and "---" not in line and "Model" not in line:
            yield table + ([c.strip() for c in line.strip().strip("|").split("|")],)


def run_of(tag, gpu, date, c):
    """The row as a published-sharded-runs.yaml entry (the fields the scenario writer reads)."""
    model, seq, gpus, mb, ga, gbs, tps, gbt = c[0], int(c[1]), int(c[2]), int(c[7]), int(c[8]), int(c[9]), int(c[11]), int(c[13])
    d, heads, layers = MPT[model]
    return {"id": "llmfoundry-%s-mpt%s-s%d-g%d-mb%d" % (tag, model, seq, gpus, mb),
            "model": {"name": "MPT-%s" % model, "layers": layers, "hidden": d, "heads": heads, "kv_heads": heads,
                      "ffn_hidden": 4 * d, "vocab": 50368},
            "hardware": {"gpu_type": gpu, "gpu_count": gpus}, "framework": {"name": "llm-foundry", "date": date},
            "precision": c[14], "fsdp_mixed_precision_mode": c[15],
            "parallel": {"sharding": "FSDP " + c[16], "dp": gpus, "tp": 1, "pp": 1, "cp": 1,
                         "activation_checkpointing": "full" if c[17] == "True" else "none"},
            "batch": {"micro_batch": mb, "grad_accum": ga, "global_batch_seqs": gbs, "global_batch_tokens": gbt,
                      "seq_len": seq},
            "measured": {"tokens_per_s_total": tps}}


def predict(run, folder, trainplan):
    """(measured s, predicted s, fits, hardware FLOP per step per GPU) of one row."""
    _, body, _, measured, _ = writer.scenario_of(run)
    path = os.path.join(folder, run["id"] + ".yaml")
    with open(path, "w") as f:
        f.write("\n".join(body))
    out = subprocess.run([trainplan, "evaluate", path, "--format", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("%s: trainplan evaluate failed (exit %d): %s" % (run["id"], out.returncode, out.stderr.strip()))
    result = json.loads(out.stdout)
    per_gpu = result["flops"]["hardware_per_step"] / run["hardware"]["gpu_count"]
    return measured, result["time"]["step_seconds"], result["feasible"], per_gpu


def weak_scaling_groups(records):
    """Rows that differ only in their GPU count, on more than one node: {key: [(gpus, measured, predicted)]}."""
    groups = {}
    for tag, run, measured, predicted in records:
        gpus = run["hardware"]["gpu_count"]
        if gpus <= 8:
            continue
        b, p = run["batch"], run["parallel"]
        key = (tag, run["model"]["name"], b["seq_len"], b["micro_batch"], b["grad_accum"], run["precision"],
               p["sharding"], p["activation_checkpointing"])
        groups.setdefault(key, []).append((gpus, measured, predicted))
    return {k: sorted(v) for k, v in groups.items() if len(v) > 1}


def print_weak_scaling(records):
    """The step's change from the fewest to the most GPUs at the same per-GPU work, measured and predicted."""
    groups = weak_scaling_groups(records)
    if not groups:
        return
    print("\nweak scaling (same model, sequence, micro-batch and settings; only the GPU count differs)")
    print("table    model      seq   mb  sharding               GPUs       measured step   predicted step")
    for (tag, model, seq, mb, _, _, sharding, _), rows in groups.items():
        (g0, m0, p0), (g1, m1, p1) = rows[0], rows[-1]
        print("%-8s %-9s %5d %4d  %-20s %4d -> %-4d %+8.1f %%  %+12.1f %%" % (
            tag, model, seq, mb, sharding, g0, g1, 100 * (m1 / m0 - 1), 100 * (p1 / p0 - 1)))


def print_table_summary(errors):
    print("\ntable     rows  mean |error|  signed   max |error|  signed, recompute / none")
    for tag, rows in errors.items():
        e = [x for x, _ in rows]
        ck = [x for x, c in rows if c] or [0.0]
        no = [x for x, c in rows if not c] or [0.0]
        print("%-8s %5d %10.1f %% %+7.1f %% %9.1f %%   %+6.1f %% / %+6.1f %%" % (
            tag, len(e), statistics.mean(map(abs, e)), statistics.mean(e), max(map(abs, e)),
            statistics.mean(ck), statistics.mean(no)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("readme")
    ap.add_argument("--trainplan", default="build/cli/trainplan")
    args = ap.parse_args()
    for path, what in ((args.readme, "README"), (args.trainplan, "trainplan binary")):
        if not os.path.isfile(path):
            sys.exit("%s: no such file (the %s)" % (path, what))
    errors, records = {}, []
    with tempfile.TemporaryDirectory() as folder:
        for tag, gpu, date, cells in table_rows(args.readme):
            if cells[0] not in MPT:
                continue
            try:
                run = run_of(tag, gpu, date, cells)
            except (ValueError, IndexError):
                sys.exit("%s: a row of table %s does not read as the table's columns: %s" % (args.readme, tag, "|".join(cells)))
            measured, predicted, fits, hardware_flop = predict(run, folder, args.trainplan)
            error = 100 * (predicted / measured - 1)
            checkpointed = run["parallel"]["activation_checkpointing"] == "full"
            errors.setdefault(tag, []).append((error, checkpointed))
            records.append((tag, run, measured, predicted))
            # The hardware rate: what the kernels execute (recompute included) per second, measured and
            # predicted. The GEMMs ran at least the measured one (docs/model.md §22 item 15).
            print("%-45s measured %9.3f s  predicted %9.3f s  %+6.1f %%  hardware per GPU %6.1f / %6.1f TFLOP/s%s" % (
                run["id"], measured, predicted, error, hardware_flop / measured / 1e12,
                hardware_flop / predicted / 1e12, "" if fits else "  (predicted not to fit)"))
    if not errors:
        sys.exit("%s: no row of llm-foundry's benchmark tables found (headings: %s)" % (args.readme, ", ".join(TABLES)))
    print_table_summary(errors)
    print_weak_scaling(records)


if __name__ == "__main__":
    main()
