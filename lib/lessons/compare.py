"""Two loaded models side by side: every figure read from their configs and weights.

`architecture(loaded)` measures one model: its shape numbers, how its parameters split between
the embedding table and the blocks, its local and global layers with their RoPE bases, what a block
holds (norms, q/k norms, the MLP's activation), the embedding scale, and its KV cache per token.
Nothing is typed in: each figure comes from `loaded.config`, the modules or the weight tensors, so
a page can put SmolLM2 and Gemma 3 (or any two loaded models) next to each other.

Deliberately left out: running the models (the lessons do that through captures), hub look-ups,
and formatting (pages format numbers for their language).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from lib.model.arithmetic import FULL, SLIDING, cache_layers, kv_cache_bytes
from lib.model.models import LoadedModel


@dataclass(frozen=True)
class Architecture:
    """What differs between two models, measured on one of them."""

    name: str
    model_type: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_model: int
    heads_width: int  # H × Dh, the width attention works in (equal to d_model in most models)
    d_mlp: int
    vocab_size: int
    n_params: int  # counted from the weight tensors, a tied table once
    embedding_params: int  # V × D, the input table
    weight_bytes: int  # bytes of the weight tensors as loaded (float32 here)
    local_layers: int  # sliding-window layers
    global_layers: int  # layers that read the whole context
    window: int | None
    rope_base_global: float | None
    rope_base_local: float | None
    norms_per_block: int  # RMSNorm/LayerNorm modules in one block, q/k norms excluded
    qk_norm: bool
    activation: str  # the MLP's activation module, by its class name (SiLU, GELUTanh...)
    gated_mlp: bool
    embed_scale: float  # factor on the token rows before the first block (1 when none)
    tied_embeddings: bool
    kv_bytes_per_token_fp32: int  # K and V of every layer for one token, float32
    kv_bytes_at: tuple[tuple[int, int], ...]  # (tokens, bytes of the whole cache, float32)
    context_length: int | None = None  # the longest text the model reads (None when the config does not say)

    @property
    def embedding_share(self) -> float:
        """Fraction of all parameters in the embedding table. Example: Gemma 3 270M -> ~0.63"""
        return self.embedding_params / self.n_params

    @property
    def group_size(self) -> int:
        """Query heads per key/value head: 1 is plain multi-head, H is multi-query (MQA)."""
        return self.n_heads // self.n_kv_heads


_NORM_NAMES = ("norm", "ln_")


def _norms(block: torch.nn.Module) -> tuple[int, bool]:
    """(norms directly in the block, whether its attention has q/k norms)."""
    direct = sum(1 for name, _ in block.named_children() if any(s in name for s in _NORM_NAMES))
    attn = next((m for n, m in block.named_children() if "attn" in n), None)
    qk = attn is not None and getattr(attn, "q_norm", None) is not None and getattr(attn, "k_norm", None) is not None
    return direct, qk


def architecture(loaded: LoadedModel, tokens: tuple[int, ...] = (512, 1024, 8192, 32768)) -> Architecture:
    """Measure one loaded model. Example: architecture(smollm2).heads_width == 576 == d_model"""
    i, ad, model = loaded.info, loaded.adapter, loaded.model
    blocks = ad.blocks(model)
    kinds = cache_layers(loaded.config)
    n_norms, qk = _norms(blocks[0])
    gate, _, act = ad.mlp_branches(blocks[0]) if ad.mlp_branches else (None, None, None)
    embed = ad.embed(model)
    scale = getattr(embed, "embed_scale", None)
    scale = float(scale) if scale is not None else 1.0
    per_token = kv_cache_bytes(loaded.config, 1, dtype_bytes=4)
    return Architecture(
        name=i.name, model_type=i.model_type, n_layers=i.n_layers, n_heads=i.n_heads, n_kv_heads=i.n_kv_heads,
        d_head=i.d_head, d_model=i.d_model, heads_width=i.n_heads * i.d_head, d_mlp=i.d_mlp,
        vocab_size=i.vocab_size, n_params=i.n_params, embedding_params=int(embed.weight.numel()),
        weight_bytes=sum(p.numel() * p.element_size() for p in model.parameters()),
        local_layers=sum(k.kind == SLIDING for k in kinds), global_layers=sum(k.kind == FULL for k in kinds),
        window=i.sliding_window, rope_base_global=i.rope_theta,
        rope_base_local=i.rope_theta_local if i.rope_theta_local is not None else (
            i.rope_theta if i.sliding_window else None),
        norms_per_block=n_norms, qk_norm=qk, activation=type(act).__name__ if act is not None else "",
        gated_mlp=gate is not None, embed_scale=scale, tied_embeddings=i.tied_embeddings,
        kv_bytes_per_token_fp32=per_token,
        kv_bytes_at=tuple((n, kv_cache_bytes(loaded.config, n, dtype_bytes=4)) for n in tokens),
        context_length=i.context_length,
    )
