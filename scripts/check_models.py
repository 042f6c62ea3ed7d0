#!/usr/bin/env python3
"""Check the built-in model library (data/models/*.yaml) against docs/model-format.md.

Loads every file, validates fields (required, types, allowed values, unknown keys), counts a
transformer's parameters from its architecture and prints the count beside the published
params_total (and params_total_exact, params_active, params_mtp where given) with the relative
difference. Exit status 1 if a file is invalid or a count differs from the published figure it
is compared with by more than --tolerance (default 2%).

Stdlib + PyYAML only (Debian: python3-yaml).
Usage: scripts/check_models.py [DIR] [--tolerance 0.02]
"""
import argparse
import glob
import os
import sys

import yaml

KINDS = {"decoder", "encoder", "generic"}
ACTIVATIONS = {"gelu", "relu", "silu", "swish"}
POSITIONS = {"learned", "rope", "sinusoidal", "alibi", "none"}
NORMS = {"layernorm", "rmsnorm"}

COMMON = {"name": str, "display_name": str, "family": str, "kind": str, "params_total": (int, float),
          "params_total_rounding": (int, float),
          "params_note": str, "source": str, "sources": dict, "note": str, "estimates": list}
TRANSFORMER = {"layers": int, "hidden": int, "heads": int, "kv_heads": int, "head_dim": int, "ffn": int,
               "gated_ffn": bool, "activation": str, "seq": int, "max_context": int, "vocab": int,
               "vocab_used": int, "tied_embeddings": bool, "position_embedding": str, "position_table": int,
               "rope_dims": int, "token_type_embeddings": int, "norm": str, "embedding_norm": bool,
               "parallel_attention": bool, "attention_bias": bool, "ffn_bias": bool, "lm_head_bias": bool,
               "pooler": bool, "mlm_head": bool, "moe": dict, "mla": dict, "mtp_modules": int,
               "params_total_exact": int, "params_active": (int, float), "params_mtp": (int, float)}
TRANSFORMER_REQUIRED = ["layers", "hidden", "heads", "ffn", "gated_ffn", "activation", "seq", "vocab",
                        "tied_embeddings", "position_embedding", "norm"]
GENERIC = {"params": int, "macs_per_sample": (int, float), "flops_per_sample": (int, float),
           "flops_convention": str, "activation_bytes_per_sample": (int, float),
           "step_hbm_bytes_per_sample": (int, float), "step_hbm_note": str, "input": dict}
GENERIC_REQUIRED = ["params", "flops_per_sample", "activation_bytes_per_sample"]
MOE = {"experts": int, "top_k": int, "shared_experts": int, "expert_ffn": int, "dense_layers": (int, list),
       "capacity_factor": (int, float), "router_bias": bool}
MOE_REQUIRED = ["experts", "top_k", "expert_ffn"]
MLA = {"q_lora_rank": int, "kv_lora_rank": int, "qk_nope_head_dim": int, "qk_rope_head_dim": int, "v_head_dim": int}


def typecheck(where, key, value, want, errors):
    if isinstance(value, bool) and want is not bool and (want is int or (isinstance(want, tuple) and bool not in want)):
        errors.append(f"{where}: {key} must be a number, not a boolean")
        return
    if want is float or want == (int, float):
        if not isinstance(value, (int, float)):
            errors.append(f"{where}: {key} must be a number, got {value!r}")
        return
    if not isinstance(value, want):
        name = want.__name__ if isinstance(want, type) else "/".join(t.__name__ for t in want)
        errors.append(f"{where}: {key} must be {name}, got {value!r}")


def validate(path, m):
    errors = []
    where = os.path.basename(path)
    if not isinstance(m, dict):
        return [f"{where}: the file must be a mapping"]
    kind = m.get("kind")
    if kind not in KINDS:
        errors.append(f"{where}: kind must be one of {sorted(KINDS)}, got {kind!r}")
        return errors
    allowed = dict(COMMON)
    allowed.update(GENERIC if kind == "generic" else TRANSFORMER)
    required = ["name", "kind", "params_total", "source"] + (GENERIC_REQUIRED if kind == "generic" else TRANSFORMER_REQUIRED)
    for key in required:
        if key not in m:
            errors.append(f"{where}: missing required field '{key}'")
    for key, value in m.items():
        if key not in allowed:
            errors.append(f"{where}: unknown field '{key}'")
            continue
        typecheck(where, key, value, allowed[key], errors)
    if m.get("name") and os.path.splitext(os.path.basename(path))[0] != m["name"]:
        errors.append(f"{where}: name '{m['name']}' does not match the file name")
    if not str(m.get("source", "")).strip():
        errors.append(f"{where}: source must not be empty")
    for key in ("layers", "hidden", "heads", "ffn", "seq", "vocab", "params", "flops_per_sample"):
        if key in m and isinstance(m[key], (int, float)) and not isinstance(m[key], bool) and m[key] <= 0:
            errors.append(f"{where}: {key} must be positive")
    if kind == "generic":
        return errors
    if m.get("activation") not in ACTIVATIONS:
        errors.append(f"{where}: activation must be one of {sorted(ACTIVATIONS)}")
    if m.get("position_embedding") not in POSITIONS:
        errors.append(f"{where}: position_embedding must be one of {sorted(POSITIONS)}")
    if m.get("norm") not in NORMS:
        errors.append(f"{where}: norm must be one of {sorted(NORMS)}")
    heads, kv = m.get("heads", 1), m.get("kv_heads", m.get("heads", 1))
    if isinstance(heads, int) and isinstance(kv, int) and (kv <= 0 or heads % kv):
        errors.append(f"{where}: kv_heads ({kv}) must divide heads ({heads})")
    if "head_dim" not in m and "mla" not in m and isinstance(heads, int) and m.get("hidden", 0) % heads:
        errors.append(f"{where}: hidden is not a multiple of heads; give head_dim")
    if "max_context" in m and m["max_context"] < m.get("seq", 0):
        errors.append(f"{where}: max_context must be >= seq")
    for block, spec, req in (("moe", MOE, MOE_REQUIRED), ("mla", MLA, list(MLA))):
        if block not in m or not isinstance(m[block], dict):
            continue
        for key in req:
            if key not in m[block]:
                errors.append(f"{where}: {block}.{key} is required")
        for key, value in m[block].items():
            if key not in spec:
                errors.append(f"{where}: unknown field '{block}.{key}'")
            else:
                typecheck(where, f"{block}.{key}", value, spec[key], errors)
    if "moe" in m and isinstance(m["moe"], dict):
        e = m["moe"]
        if e.get("top_k", 0) > e.get("experts", 0):
            errors.append(f"{where}: moe.top_k exceeds moe.experts")
        if "params_active" not in m:
            errors.append(f"{where}: an MoE model needs params_active")
    return errors


def dense_layer_count(m):
    d = m["moe"].get("dense_layers", 0)
    return len(d) if isinstance(d, list) else d


def count(m):
    """Parameters from the architecture: (total, active, mtp) for a transformer."""
    h, L, V = m["hidden"], m["layers"], m["vocab"]
    heads = m["heads"]
    kv = m.get("kv_heads", heads)
    hd = m.get("head_dim", h // heads)
    norm = (2 if m["norm"] == "layernorm" else 1) * h
    abias, fbias = m.get("attention_bias", False), m.get("ffn_bias", False)

    if "mla" in m:
        a = m["mla"]
        qk = a["qk_nope_head_dim"] + a["qk_rope_head_dim"]
        if a["q_lora_rank"]:
            q = h * a["q_lora_rank"] + a["q_lora_rank"] + a["q_lora_rank"] * heads * qk  # down, norm, up
        else:
            q = h * heads * qk
        kvp = (h * (a["kv_lora_rank"] + a["qk_rope_head_dim"]) + a["kv_lora_rank"]
               + a["kv_lora_rank"] * heads * (a["qk_nope_head_dim"] + a["v_head_dim"]))
        attn = q + kvp + heads * a["v_head_dim"] * h
    else:
        qw, kvw = heads * hd, kv * hd
        attn = h * qw + 2 * h * kvw + qw * h + ((qw + 2 * kvw + h) if abias else 0)

    def ffn(width):
        w = (3 if m["gated_ffn"] else 2) * h * width
        if fbias:
            w += (2 if m["gated_ffn"] else 1) * width + h
        return w

    norms = (1 if m.get("parallel_attention") else 2) * norm
    dense_layer = attn + ffn(m["ffn"]) + norms
    if "moe" in m:
        e = m["moe"]
        router = h * e["experts"] + (e["experts"] if e.get("router_bias") else 0)
        moe_total = attn + norms + router + (e["experts"] + e.get("shared_experts", 0)) * ffn(e["expert_ffn"])
        moe_active = attn + norms + router + (e["top_k"] + e.get("shared_experts", 0)) * ffn(e["expert_ffn"])
        nd = min(dense_layer_count(m), L)
        layers_total = nd * dense_layer + (L - nd) * moe_total
        layers_active = nd * dense_layer + (L - nd) * moe_active
    else:
        moe_total = moe_active = 0
        layers_total = layers_active = L * dense_layer

    emb = V * h
    if m["position_embedding"] == "learned":
        emb += m.get("position_table", m.get("max_context", m["seq"])) * h
    emb += m.get("token_type_embeddings", 0) * h
    if m.get("embedding_norm"):
        emb += norm
    head = 0 if m["tied_embeddings"] else V * h
    if m.get("lm_head_bias"):
        head += V
    final_norm = 0 if m["kind"] == "encoder" else norm  # post-LN encoders end on a layer's own norm
    extra = (h * h + h) if m.get("pooler") else 0
    if m.get("mlm_head"):
        extra += h * h + h + norm + V
    total = layers_total + emb + head + final_norm + extra
    active = layers_active + emb + head + final_norm + extra
    mtp = 0
    if m.get("mtp_modules"):
        # DeepSeek-V3 MTP module as stored in the checkpoint: one more (MoE) block, a 2h -> h
        # projection, two input RMSNorms and the output norm, plus copies of the embedding and the
        # output head (shared with the main model in training, stored again in the files).
        block = moe_total if "moe" in m else dense_layer
        mtp = m["mtp_modules"] * (block + 2 * h * h + 3 * norm + 2 * V * h)
    return total, active, mtp


def rel(a, b):
    return (a - b) / b


def fmt(x):
    if x >= 1e9:
        return f"{x / 1e9:.3f}B"
    return f"{x / 1e6:.1f}M"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("dir", nargs="?", default=os.path.join(here, "..", "data", "models"))
    ap.add_argument("--tolerance", type=float, default=0.02)
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "*.yaml")))
    if not files:
        print(f"no model files in {args.dir}", file=sys.stderr)
        return 2
    bad = 0
    rows = []
    for path in files:
        try:
            with open(path) as f:
                m = yaml.safe_load(f)
        except yaml.YAMLError as err:
            print(f"{path}: YAML error: {err}", file=sys.stderr)
            bad += 1
            continue
        errors = validate(path, m)
        if errors:
            for e in errors:
                print(e, file=sys.stderr)
            bad += 1
            continue
        if m["kind"] == "generic":
            rows.append((m["name"], "total", m["params"], m["params_total"], m.get("params_total_rounding", 0), False))
            continue
        total, active, mtp = count(m)
        exact = "params_total_exact" in m
        # With an exact figure the check is against it; the rounded headline is shown for reference.
        rows.append((m["name"], "total", total, m["params_total"], m.get("params_total_rounding", 0), exact))
        if exact:
            rows.append((m["name"], "exact", total, m["params_total_exact"], 0, False))
        if "params_active" in m:
            rows.append((m["name"], "active", active, m["params_active"], 0, False))
        if "params_mtp" in m:
            rows.append((m["name"], "mtp", mtp, m["params_mtp"], 0, True))
    print(f"| model | figure | computed | published | diff |")
    print(f"|---|---|---:|---:|---:|")
    over = 0
    for name, what, got, pub, rounding, info in rows:
        d = rel(got, pub)
        flag = ""
        if abs(d) > args.tolerance:
            if info:
                flag = " (info)"
            elif abs(got - pub) <= rounding:
                flag = " (within the published rounding)"
            else:
                flag = " **>tol**"
                over += 1
        print(f"| {name} | {what} | {fmt(got)} | {fmt(pub)} | {d * 100:+.2f}%{flag} |")
    print(f"\n{len(files)} files, {bad} invalid, {over} counts beyond {args.tolerance * 100:.0f}%"
          " (rows marked info are not checked: a rounded headline beside an exact count, and the MTP module)")
    return 1 if bad or over else 0


if __name__ == "__main__":
    sys.exit(main())
