"""Tables for the first lesson: the live model's numbers and the reference models."""

from __future__ import annotations

import pandas as pd

from lib.lessons.reference import REFERENCE_MODELS, numbers
from lib.model.arithmetic import count_params, kv_cache_bytes
from lib.model.models import ModelInfo
from ui.shell.core import big, num, t

REFERENCE_TOKENS = 8192


def live_table(info: ModelInfo) -> pd.DataFrame:
    """Label/value rows for the loaded model, with the d_model = H x d_head check."""
    product = info.n_heads * info.d_head
    check = f"{num(info.n_heads)} × {num(info.d_head)} = {num(product)} " + ("✓" if product == info.d_model else "≠")
    rows = [
        ("numbers.row.layers", num(info.n_layers)),
        ("numbers.row.heads", num(info.n_heads)),
        ("numbers.row.kv_heads", num(info.n_kv_heads)),
        ("numbers.row.d_head", num(info.d_head)),
        ("numbers.row.d_model", num(info.d_model)),
        ("numbers.row.check", check),
        ("numbers.row.d_mlp", num(info.d_mlp)),
        ("numbers.row.vocab", num(info.vocab_size)),
        ("numbers.row.context", num(info.context_length) if info.context_length else "—"),
        ("numbers.row.positional", t(f"arch.{info.positional}")),
        ("numbers.row.norm", t(f"arch.{info.norm}")),
        ("numbers.row.activation", t(f"arch.{info.activation}")),
        ("numbers.row.tied", t("yes") if info.tied_embeddings else t("no")),
        ("numbers.row.params_weights", num(info.n_params)),
        ("numbers.row.params_formula", num(info.n_params_formula)),
    ]
    return pd.DataFrame({t("numbers.col.quantity"): [t(k) for k, _ in rows], t("numbers.col.value"): [v for _, v in rows]})


def reference_table(live_name: str, live_config: dict) -> pd.DataFrame:
    """Reference models plus the live one: shapes, parameters, KV cache at 8K with and without GQA."""
    models = dict(REFERENCE_MODELS)
    models[live_name] = live_config
    gb = 1e9
    rows = []
    for name, cfg in models.items():
        n = numbers(cfg)
        mha = dict(cfg, num_key_value_heads=n["n_heads"])
        rows.append({
            t("ref.model"): name,
            t("ref.layers"): n["n_layers"],
            t("ref.heads"): n["n_heads"],
            t("ref.kv_heads"): n["n_kv_heads"],
            t("ref.d_head"): n["d_head"],
            t("ref.d_model"): n["d_model"],
            t("ref.params"): big(count_params(cfg)),
            t("ref.kv_8k"): num(kv_cache_bytes(cfg, REFERENCE_TOKENS) / gb, 2),
            t("ref.kv_8k_mha"): num(kv_cache_bytes(mha, REFERENCE_TOKENS) / gb, 2),
        })
    return pd.DataFrame(rows)
