#!/usr/bin/env python3
"""Summarise and sanity-check data/validation/training.yaml (stdlib + PyYAML only).

Prints rows per source, per GPU, dense/MoE/other, and parallelism style, then checks every row for
the required fields and for internal consistency (layout product, known enums, fractions in 0..1).
Exit status 0 when every check passes, 1 otherwise. Usage:

    python3 scripts/training_validation_summary.py [data/validation/training.yaml]
"""
import collections
import os
import sys

import yaml

REQUIRED = ["id", "source_id", "source", "model", "model_kind", "gpu", "gpu_match", "gpus", "nodes",
            "gpus_per_node", "network", "precision"]
MEASURED = ["measured_tflops_per_gpu", "measured_tokens_per_s_per_gpu", "measured_tokens_per_s",
            "measured_samples_per_s", "measured_step_time_s", "measured_mfu", "measured_hfu",
            "measured_scaling_efficiency"]
FRACTIONS = ["measured_mfu", "measured_hfu", "measured_scaling_efficiency"]  # 0..1 (efficiency may exceed 1)
ENUMS = {
    "model_kind": {"dense", "moe", "encoder", "cnn"},
    "gpu_match": {"exact", "nearest", "none"},
    "flops_convention": {"model", "hardware"},
    "recompute": {"none", "selective", "full"},
    "fsdp": {"full", "grad-op", "hybrid"},
    "precision": {"fp32", "tf32", "fp16", "bf16", "fp8"},
}
POSITIVE_INT = ["gpus", "nodes", "gpus_per_node", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch",
                "global_batch", "grad_accum"]


def style(r):
    """Parallelism style of a row, from its layout fields."""
    sharded = r.get("fsdp") or (r.get("zero") or 0) >= 1
    model_par = any((r.get(k) or 1) > 1 for k in ("tp", "pp", "cp"))
    if sharded and model_par:
        return "fsdp/zero + model-parallel (tp/pp/cp)"
    if sharded:
        return "fsdp/zero (data-parallel sharded)"
    if model_par:
        return "megatron-style 3d (tp/pp/cp + dp)"
    if (r.get("dp") or 1) > 1:
        return "data-parallel (ddp/horovod)"
    if r.get("gpus", 1) == 1:
        return "single gpu"
    return "unstated layout"


def count(title, counter):
    print(f"\n{title}")
    width = max(len(str(k)) for k in counter) if counter else 0
    for key, n in sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0]))):
        print(f"  {str(key):<{width}}  {n:4d}")


def main(argv):
    path = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "data", "validation",
                                                      "training.yaml")
    with open(path) as f:
        doc = yaml.safe_load(f)
    rows = doc.get("rows") or []
    errors = []
    ids = set()

    for i, r in enumerate(rows):
        where = f"row {i} ({r.get('id', '?')})"
        for k in REQUIRED:
            if r.get(k) in (None, ""):
                errors.append(f"{where}: missing required field '{k}'")
        if r.get("id") in ids:
            errors.append(f"{where}: duplicate id")
        ids.add(r.get("id"))
        if not any(k in r for k in MEASURED):
            errors.append(f"{where}: no measured_* figure")
        if "measured_tflops_per_gpu" in r and "flops_convention" not in r:
            errors.append(f"{where}: measured_tflops_per_gpu without flops_convention")
        for k, allowed in ENUMS.items():
            if k in r and r[k] not in allowed:
                errors.append(f"{where}: {k}={r[k]!r} not one of {sorted(allowed)}")
        for k in POSITIVE_INT:
            if k in r and (not isinstance(r[k], int) or isinstance(r[k], bool) or r[k] < 1):
                errors.append(f"{where}: {k} must be a positive integer, got {r[k]!r}")
        for k in FRACTIONS:
            # scaling efficiency may be slightly superlinear (BERT 2 nodes: 2.02x); MFU/HFU may not exceed 1
            top = 1.2 if k == "measured_scaling_efficiency" else 1.0
            if k in r and not (0 < r[k] <= top):
                errors.append(f"{where}: {k}={r[k]} is not a fraction in (0, {top}]")
        if "assumed" in r and not (isinstance(r["assumed"], list) and all(isinstance(x, str) for x in r["assumed"])):
            errors.append(f"{where}: assumed must be a list of field names")
        for k in MEASURED:
            if k in r and k not in FRACTIONS and not (isinstance(r[k], (int, float)) and r[k] > 0):
                errors.append(f"{where}: {k} must be positive, got {r[k]!r}")
        if all(k in r for k in ("nodes", "gpus_per_node", "gpus")) and r["gpus"] > r["gpus_per_node"] \
                and r["nodes"] * r["gpus_per_node"] != r["gpus"]:
            errors.append(f"{where}: nodes*gpus_per_node={r['nodes'] * r['gpus_per_node']} != gpus={r['gpus']}")
        if all(k in r for k in ("tp", "pp", "dp")):
            prod = r["tp"] * r["pp"] * r["dp"] * r.get("cp", 1)
            if prod != r["gpus"]:
                errors.append(f"{where}: tp*pp*dp*cp={prod} != gpus={r['gpus']}")
        if "scaling_baseline" in r and r["scaling_baseline"] not in {x.get("id") for x in rows}:
            errors.append(f"{where}: scaling_baseline {r['scaling_baseline']!r} is not a row id")

    sources = collections.Counter(r.get("source_id") for r in rows)
    print(f"{path}: {len(rows)} rows from {len(sources)} sources")
    count("rows per source", sources)
    count("rows per GPU", collections.Counter(r.get("gpu") for r in rows))
    count("rows per model kind", collections.Counter(r.get("model_kind") for r in rows))
    count("rows per parallelism style", collections.Counter(style(r) for r in rows))
    count("rows per precision", collections.Counter(r.get("precision") for r in rows))
    count("rows per FLOP convention (rows with TFLOP/s, MFU or HFU)",
          collections.Counter(r.get("flops_convention") for r in rows if "flops_convention" in r))
    count("measured figures present", collections.Counter(k for r in rows for k in MEASURED if k in r))
    count("fields filled by assumption (rows)", collections.Counter(k for r in rows for k in r.get("assumed", [])))
    gpus = [r.get("gpus", 0) for r in rows]
    print(f"\nGPU count per row: min {min(gpus)}, max {max(gpus)}; rows with > 1 node: "
          f"{sum(1 for r in rows if r.get('nodes', 1) > 1)}")

    if errors:
        print(f"\n{len(errors)} problem(s):")
        for e in errors:
            print("  " + e)
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
