"""The two built-in models side by side (pages/10_compare.py), and the pieces lessons reuse:
the same text cut by both tokenizers, both models' next-token distributions; the figures are drawn by
ui.lessons.compare.figures.

Every figure is read from the loaded models (lib.lessons.compare.architecture, their tokenizers, their
captures); nothing is typed in.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lib.lessons.compare import Architecture, architecture
from lib.lessons.sampling import softmax
from lib.model.models import EMBEDDED_MODELS, LoadedModel
from lib.model.tokens import readable_tokens
from ui.lessons.compare import figures
from ui.shell.cache import get_capture, per_model
from ui.shell.core import _load_with_progress, big, num, short_name, t

TOP_K = 10


def builtin_models() -> dict[str, LoadedModel]:
    """Every built-in model, loaded (the first time with its progress bar)."""
    return {name: _load_with_progress(name) for name in EMBEDDED_MODELS}


@per_model
def measured(name: str) -> Architecture:
    return architecture(_load_with_progress(name))


def _yes(flag: bool) -> str:
    return t("yes") if flag else t("no")


def _base(x: float | None) -> str:
    return num(x) if x else "—"


def table(archs: list[Architecture]) -> pd.DataFrame:
    """Quantity rows, one column per model."""
    mb = 1e6
    rows: list[tuple[str, list[str]]] = [
        ("compare.row.type", [a.model_type for a in archs]),
        ("compare.row.layers", [num(a.n_layers) for a in archs]),
        ("compare.row.heads", [num(a.n_heads) for a in archs]),
        ("compare.row.kv_heads", [num(a.n_kv_heads) for a in archs]),
        ("compare.row.group", [num(a.group_size) for a in archs]),
        ("compare.row.d_head", [num(a.d_head) for a in archs]),
        ("compare.row.d_model", [num(a.d_model) for a in archs]),
        ("compare.row.heads_width", [f"{num(a.n_heads)} × {num(a.d_head)} = {num(a.heads_width)} "
                                     + ("= d_model" if a.heads_width == a.d_model else "≠ d_model") for a in archs]),
        ("compare.row.d_mlp", [num(a.d_mlp) for a in archs]),
        ("compare.row.vocab", [num(a.vocab_size) for a in archs]),
        ("compare.row.params", [f"{num(a.n_params)} ({big(a.n_params)})" for a in archs]),
        ("compare.row.embedding", [f"{num(a.embedding_params)} ({num(100 * a.embedding_share, 1)} %)" for a in archs]),
        ("compare.row.weights_mb", [num(a.weight_bytes / mb, 1) for a in archs]),
        ("compare.row.layers_kinds", [t("compare.kinds", local=num(a.local_layers), glob=num(a.global_layers))
                                      for a in archs]),
        ("compare.row.window", [num(a.window) if a.window else "—" for a in archs]),
        ("compare.row.rope_global", [_base(a.rope_base_global) for a in archs]),
        ("compare.row.rope_local", [_base(a.rope_base_local) for a in archs]),
        ("compare.row.norms", [num(a.norms_per_block) for a in archs]),
        ("compare.row.qk_norm", [_yes(a.qk_norm) for a in archs]),
        ("compare.row.mlp", [("GeGLU" if "GELU" in a.activation else "SwiGLU" if "SiLU" in a.activation else
                              a.activation) + f" ({a.activation})" if a.gated_mlp else a.activation for a in archs]),
        ("compare.row.embed_scale", [num(a.embed_scale, 2) for a in archs]),
        ("compare.row.tied", [_yes(a.tied_embeddings) for a in archs]),
        ("compare.row.kv_token", [num(a.kv_bytes_per_token_fp32) for a in archs]),
    ]
    for n, _ in archs[0].kv_bytes_at:
        rows.append((t("compare.row.kv_at", n=num(n)),
                     [num(dict(a.kv_bytes_at)[n] / mb, 2) if not a.context_length or n <= a.context_length
                      else t("compare.beyond_context") for a in archs]))
    cols = {t("compare.col.quantity"): [t(k) if k.startswith("compare.") else k for k, _ in rows]}
    for j, a in enumerate(archs):
        cols[short_name(a.name)] = [v[j] for _, v in rows]
    return pd.DataFrame(cols)


def tokenization_side_by_side(models: dict[str, LoadedModel], text: str) -> None:
    """The same text cut by each model's tokenizer: the tokens, and tokens per word."""
    words = max(1, len(text.split()))
    cols = st.columns(len(models))
    for col, (name, lm) in zip(cols, models.items()):
        ids = lm.tokenizer(text[:4000], add_special_tokens=False)["input_ids"]
        pieces = readable_tokens(lm.tokenizer, ids[:200])  # the lessons' labels: ␣, ↵, <C3><A8>
        with col:
            st.markdown(f"**{short_name(name)}**")
            st.metric(t("compare.tok.count"), num(len(ids)),
                      help=t("compare.tok.per_word", n=num(len(ids) / words, 2), words=num(words)))
            st.caption(t("compare.tok.per_word", n=num(len(ids) / words, 2), words=num(words)))
            st.code(" | ".join(pieces), language=None, wrap_lines=True)


def next_token_side_by_side(models: dict[str, LoadedModel], text: str) -> None:
    """Each model's next-token distribution after the same prompt: its top tokens and probabilities."""
    cols = st.columns(len(models))
    for j, (col, (name, lm)) in enumerate(zip(cols, models.items())):
        cap = get_capture(name, text, 256)
        logits = cap.logits_at(cap.n_tokens - 1)  # [V]: one position only, never the [T, V] table
        p = softmax(np.asarray(logits, dtype=np.float64))
        top = np.argsort(-p)[:TOP_K]
        labels = readable_tokens(lm.tokenizer, [int(i) for i in top])
        fig = figures.next_token_figure(p[top], labels, j, {"x": t("compare.next.p"), "title": short_name(name)})
        with col:
            st.plotly_chart(fig, key=f"compare.next_{j}")
            st.caption(t("compare.next.caption", vocab=num(lm.info.vocab_size), top=labels[0],
                         p=num(100 * float(p[top[0]]), 1)))
