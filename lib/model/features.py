"""Named model features: what a loaded model *is*, read once from its adapter, config, weights and
tokenizer, so that texts can depend on the architecture without ever testing a model's name.

`features(loaded)` returns a frozenset of names from `FEATURES`. Lesson sections and UI labels
declare the features a variant needs (see `lib.course.i18n.variant`): a third model with one KV head or
sandwich norms gets the right sentence without a new `if name == ...`.

Deliberately left out: numbers (layers, widths, the window's length). Texts get those through
placeholders filled by the same function as the page's table; a feature only says *which* sentence.
"""

from __future__ import annotations

import threading
import weakref

import torch

# name -> what it means (the test checks every name computed here is documented here).
FEATURES: dict[str, str] = {
    "post_norms": "a second norm after each sub-layer, before the residual add (sandwich norms)",
    "single_kv_head": "one key/value head shared by every query head (multi-query attention, MQA)",
    "grouped_kv": "fewer key/value heads than query heads, but more than one (GQA)",
    "windowed": "some layers attend only to the last `sliding_window` tokens",
    "two_rope_bases": "the windowed (local) layers use another RoPE base than the global ones",
    "rope": "positions enter as a rotation of queries and keys (RoPE)",
    "learned_positions": "a learned table of position vectors is added to the token rows",
    "scaled_embeddings": "the token rows are multiplied by a factor (e.g. √d_model) before the first block",
    "byte_level_bpe": "the tokenizer is byte-level BPE (every byte is a symbol; GPT-2, Llama 3, SmolLM2)",
    "sentencepiece": "the tokenizer is SentencePiece-style BPE with byte fallback tokens <0x00>..<0xFF>",
    "gated_mlp": "the MLP has a gate branch: act(W_gate x) * W_up x",
    "swiglu": "gated MLP with SiLU",
    "geglu": "gated MLP with GELU",
    "norm_gain_offset": "each RMSNorm stores w and multiplies by 1 + w",
    "biases": "the attention and MLP projections have bias vectors",
    "qk_norm": "a per-head norm on queries and keys before RoPE",
    "layernorm": "LayerNorm (mean and variance) rather than RMSNorm",
    "tied_embeddings": "the output matrix is the embedding table itself",
    "uniform_row_lengths": "every embedding row has nearly the same length (spread below 1 %)",
    "builtin": "a built-in model: a compressed GGUF copy expanded to float32",
    "gguf_q4_1": "built in from a GGUF whose layer matrices are Q4_1 (5 bits with scale and minimum)",
    "gguf_q4_k_m": "built in from a GGUF in llama.cpp's Q4_K_M mix (4- to 8-bit tensors)",
}

# Below this coefficient of variation (std / mean) the rows' lengths carry no information.
UNIFORM_CV = 0.01


def tokenizer_kind(tokenizer) -> str:
    """"byte_level_bpe", "sentencepiece" (BPE with byte fallback) or "other", read from the fast
    tokenizer's own pipeline. Example: tokenizer_kind(smollm2.tokenizer) -> "byte_level_bpe"
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return "other"
    model = backend.model
    if type(model).__name__ == "BPE" and getattr(model, "byte_fallback", False):
        return "sentencepiece"
    parts = [backend.pre_tokenizer, backend.decoder]
    names = " ".join(repr(p) for p in parts if p is not None)
    if type(model).__name__ == "BPE" and "ByteLevel" in names:
        return "byte_level_bpe"
    return "other"


def _gain_offset(module: torch.nn.Module) -> bool:
    """Whether a norm applies 1 + w where it stores w: run it on a vector of ones."""
    w = module.weight.detach().float()
    with torch.inference_mode():
        out = module(torch.ones((1, w.shape[0]), dtype=module.weight.dtype)).float()[0]
    return bool(torch.allclose(out, 1.0 + w, atol=1e-3)) and not bool(torch.allclose(out, w, atol=1e-3))


def _row_cv(weight: torch.Tensor) -> float:
    norms = weight.detach().float().norm(dim=1)
    return float(norms.std() / norms.mean())


def compute(loaded) -> frozenset[str]:
    """The features of a `LoadedModel` (uncached; see `features`)."""
    from lib.model.models import EMBEDDED_MODELS, is_embedded

    info, ad, model = loaded.info, loaded.adapter, loaded.model
    out: set[str] = set()
    block = ad.blocks(model)[0]
    if ad.post_norms is not None:
        out.add("post_norms")
    if info.n_kv_heads == 1 and info.n_heads > 1:
        out.add("single_kv_head")
    elif info.n_kv_heads < info.n_heads:
        out.add("grouped_kv")
    if info.sliding_window:
        out.add("windowed")
    if info.rope_theta_local is not None and info.rope_theta_local != info.rope_theta:
        out.add("two_rope_bases")
    out.add("rope" if info.positional == "rope" else "learned_positions")
    embed = ad.embed(model)
    scale = getattr(embed, "embed_scale", None)
    if scale is not None and abs(float(scale) - 1.0) > 1e-6:
        out.add("scaled_embeddings")
    kind = tokenizer_kind(loaded.tokenizer)
    if kind != "other":
        out.add(kind)
    if ad.mlp_branches is not None:
        gate, _, act = ad.mlp_branches(block)
        if gate is not None:
            out.add("gated_mlp")
            out.add("geglu" if "gelu" in type(act).__name__.lower() else "swiglu")
    if info.norm == "layernorm":
        out.add("layernorm")
    elif _gain_offset(ad.final_norm(model)):
        out.add("norm_gain_offset")
    if any(isinstance(m, torch.nn.Linear) and m.bias is not None for m in block.modules()) or any(
            type(m).__name__ == "Conv1D" for m in block.modules()):
        out.add("biases")
    attn = ad.attention(block)
    if getattr(attn, "q_norm", None) is not None:
        out.add("qk_norm")
    if info.tied_embeddings:
        out.add("tied_embeddings")
    if _row_cv(embed.weight) < UNIFORM_CV:
        out.add("uniform_row_lengths")
    if is_embedded(info.name):
        out.add("builtin")
        quant = EMBEDDED_MODELS[info.name].quant
        if quant and f"gguf_{quant.lower()}" in FEATURES:
            out.add(f"gguf_{quant.lower()}")
    return frozenset(out)


# Weak keys: a model dropped from the app's cache must not be kept alive by its features.
_CACHE: "weakref.WeakKeyDictionary[object, frozenset[str]]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def features(loaded) -> frozenset[str]:
    """The named features of a loaded model, computed once per model object.

    Example: features(gemma) >= {"post_norms", "single_kv_head", "windowed", "geglu"}
    Example: "post_norms" in features(smollm2) -> False
    """
    with _LOCK:
        found = _CACHE.get(loaded)
    if found is None:
        found = compute(loaded)
        with _LOCK:
            _CACHE[loaded] = found
    return found


def satisfied(conditions: str, have: frozenset[str] | set[str]) -> bool:
    """Whether a comma-separated list of feature names (a leading "!" negates) all hold.

    Example: satisfied("windowed,!post_norms", {"windowed"}) -> True
    """
    for cond in conditions.split(","):
        cond = cond.strip()
        if not cond:
            continue
        want = not cond.startswith("!")
        if (cond.lstrip("!") in have) != want:
            return False
    return True


def known(conditions: str) -> bool:
    """Whether every name in a condition list is a documented feature. Example: known("!windowed") -> True"""
    return all(c.strip().lstrip("!") in FEATURES for c in conditions.split(",") if c.strip())


def row_spread(loaded) -> tuple[float, float]:
    """(mean, std) of the embedding rows' lengths. Example: Gemma 3 270M -> (1.031, 0.0005)"""
    norms = loaded.adapter.embed(loaded.model).weight.detach().float().norm(dim=1)
    return float(norms.mean()), float(norms.std())


__all__ = ["FEATURES", "UNIFORM_CV", "compute", "features", "known", "row_spread", "satisfied", "tokenizer_kind"]
