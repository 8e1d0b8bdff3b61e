"""Architecture adapters: the one place where model families differ.

Every other module asks an `Adapter` where things are (the blocks, the projections whose outputs
are queries, keys and values, the MLP's inner activation, the rotary module) instead of testing
the model type itself. Two families are covered:

- Llama family (`llama`, `mistral`, `qwen2`, `qwen3`): separate q/k/v/o projections, RoPE applied
  inside the attention function, RMSNorm, gated SiLU MLP (SwiGLU), grouped-query attention.
- GPT-2 family (`gpt2`): one fused `c_attn` projection, learned absolute positions added to the
  token embeddings, LayerNorm, GELU MLP, one key/value head per query head.

- Gemma 3 family (`gemma3_text`): Llama's projections with QK-norm (per-head RMSNorm on q and k
  before RoPE), multi-query attention, norms before *and* after each sub-layer ("sandwich"), a
  GELU-tanh gated MLP (GeGLU), token embeddings scaled by √D inside the embedding module, local
  (sliding-window) and global layers with one RoPE base each.

Deliberately left out: encoder models (BERT), encoder-decoder models (T5), models whose modeling
code is not in transformers (`trust_remote_code` is never enabled), Gemma 2's logit soft-capping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

# A "splitter" turns the output tensor of the hooked projection module into (q, k, v) pieces,
# each [1, T, n*Dh] or None when that module does not produce it.
Split = Callable[[torch.Tensor, Any], tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]]


@dataclass(frozen=True)
class Adapter:
    """Where each piece of a model family lives. All getters take the *CausalLM* model."""

    family: str
    model_types: tuple[str, ...]
    positional: str  # "rope" or "learned"
    norm: str  # "rmsnorm" or "layernorm"
    activation: str  # "swiglu" or "gelu"
    blocks: Callable[[Any], list]
    embed: Callable[[Any], torch.nn.Module]
    final_norm: Callable[[Any], torch.nn.Module]
    unembed: Callable[[Any], torch.nn.Module]
    attention: Callable[[Any], torch.nn.Module]  # block -> attention module (returns (out, weights))
    mlp_out: Callable[[Any], torch.nn.Module]  # block -> module whose *input* is the MLP activation [T, F]
    # block -> list of (module, which) whose outputs hold q/k/v before RoPE; "which" is "q", "k",
    # "v" or "qkv" (fused, split in thirds along the last dim).
    qkv_sources: Callable[[Any], list[tuple[torch.nn.Module, str]]]
    rotary: Callable[[Any], torch.nn.Module | None]
    position_embedding: Callable[[Any], torch.nn.Module | None]
    # block -> the attention's output projection [T, H*Dh] -> [T, D] (Llama's o_proj, GPT-2's c_proj).
    # Defaulted so that an adapter written before this field existed still builds.
    o_proj: Callable[[Any], torch.nn.Module] | None = None
    # block -> (norm before attention, norm before the MLP): Llama's input_layernorm and
    # post_attention_layernorm, GPT-2's ln_1 and ln_2 (pre-norm in both families). Defaulted too.
    norms: Callable[[Any], tuple[torch.nn.Module, torch.nn.Module]] | None = None
    # block -> (gate, up, act) of the MLP: act(gate(x)) * up(x) for SwiGLU; GPT-2 has no gate
    # (None) and computes act(up(x)), its c_fc. The down projection is `mlp_out`.
    mlp_branches: Callable[[Any], tuple[torch.nn.Module | None, torch.nn.Module, Callable]] | None = None
    # The q and k sources output [1, H, T, Dh] (Gemma 3 norms q and k after moving heads first)
    # rather than [1, T, H*Dh] or [1, T, H, Dh].
    qk_heads_first: bool = False
    # block -> (norm after attention, norm after the MLP) where a family has them (Gemma's sandwich
    # norms), else None.
    post_norms: Callable[[Any], tuple[torch.nn.Module, torch.nn.Module]] | None = None


def _llama_qkv(block) -> list[tuple[torch.nn.Module, str]]:
    attn = block.self_attn
    # Qwen3-style QK-norm: the per-head RMSNorm output is what RoPE rotates.
    q = attn.q_norm if getattr(attn, "q_norm", None) is not None else attn.q_proj
    k = attn.k_norm if getattr(attn, "k_norm", None) is not None else attn.k_proj
    return [(q, "q"), (k, "k"), (attn.v_proj, "v")]


LLAMA = Adapter(
    family="llama",
    model_types=("llama", "mistral", "qwen2", "qwen3"),
    positional="rope",
    norm="rmsnorm",
    activation="swiglu",
    blocks=lambda m: list(m.model.layers),
    embed=lambda m: m.model.embed_tokens,
    final_norm=lambda m: m.model.norm,
    unembed=lambda m: m.lm_head,
    attention=lambda b: b.self_attn,
    mlp_out=lambda b: b.mlp.down_proj,
    qkv_sources=_llama_qkv,
    rotary=lambda m: m.model.rotary_emb,
    position_embedding=lambda m: None,
    o_proj=lambda b: b.self_attn.o_proj,
    norms=lambda b: (b.input_layernorm, b.post_attention_layernorm),
    mlp_branches=lambda b: (b.mlp.gate_proj, b.mlp.up_proj, b.mlp.act_fn),
)

GPT2 = Adapter(
    family="gpt2",
    model_types=("gpt2",),
    positional="learned",
    norm="layernorm",
    activation="gelu",
    blocks=lambda m: list(m.transformer.h),
    embed=lambda m: m.transformer.wte,
    final_norm=lambda m: m.transformer.ln_f,
    unembed=lambda m: m.lm_head,
    attention=lambda b: b.attn,
    mlp_out=lambda b: b.mlp.c_proj,
    qkv_sources=lambda b: [(b.attn.c_attn, "qkv")],
    rotary=lambda m: None,
    position_embedding=lambda m: m.transformer.wpe,
    o_proj=lambda b: b.attn.c_proj,
    norms=lambda b: (b.ln_1, b.ln_2),
    mlp_branches=lambda b: (None, b.mlp.c_fc, b.mlp.act),
)

GEMMA3 = Adapter(
    family="gemma3",
    model_types=("gemma3_text",),
    positional="rope",
    norm="rmsnorm",
    activation="geglu",
    blocks=lambda m: list(m.model.layers),
    embed=lambda m: m.model.embed_tokens,  # scales its rows by √D itself (embed_scale)
    final_norm=lambda m: m.model.norm,
    unembed=lambda m: m.lm_head,
    attention=lambda b: b.self_attn,
    mlp_out=lambda b: b.mlp.down_proj,
    # q_norm/k_norm outputs are what RoPE rotates (applied after the heads are moved first).
    qkv_sources=lambda b: [(b.self_attn.q_norm, "q"), (b.self_attn.k_norm, "k"), (b.self_attn.v_proj, "v")],
    rotary=lambda m: m.model.rotary_emb,  # called once per layer type (local, global)
    position_embedding=lambda m: None,
    o_proj=lambda b: b.self_attn.o_proj,
    norms=lambda b: (b.input_layernorm, b.pre_feedforward_layernorm),
    mlp_branches=lambda b: (b.mlp.gate_proj, b.mlp.up_proj, b.mlp.act_fn),
    qk_heads_first=True,
    post_norms=lambda b: (b.post_attention_layernorm, b.post_feedforward_layernorm),
)

ADAPTERS: tuple[Adapter, ...] = (LLAMA, GPT2, GEMMA3)


class UnsupportedArchitecture(ValueError):
    """The model type has no adapter (the page names the supported ones)."""


def supported_model_types() -> tuple[str, ...]:
    return tuple(t for a in ADAPTERS for t in a.model_types)


def adapter_for(model_type: str) -> Adapter:
    """The adapter for a Hugging Face `config.model_type`.

    Example: adapter_for("qwen2").family -> "llama"
    """
    for a in ADAPTERS:
        if model_type in a.model_types:
            return a
    raise UnsupportedArchitecture(model_type)


def config_numbers(config) -> dict[str, Any]:
    """The normalized numbers of a transformers config object (GPT-2 or Llama names alike).

    The layer pattern is read once, by lib.model.arithmetic.layer_kinds (the way transformers reads it):
    `layer_types` as the config gives them, or, when it gives none, one "sliding_attention" per
    local layer (Mistral's window covers every layer). The RoPE bases follow the layers that exist:
    `rope_theta` is the global layers' base (the local one's on a model whose layers are all
    local); `rope_theta_local` is set only on a model with both kinds and one base per kind.
    Example: Gemma 3 layers (local, local, global), bases 10 and 10,000 -> rope_theta 10000.0, rope_theta_local 10.0
    Example: the same with three local layers -> rope_theta 10.0, rope_theta_local None
    """
    from lib.model.arithmetic import SLIDING, dims, layer_kinds

    raw = config.to_dict()
    d = dims(raw)
    kinds = layer_kinds(raw)
    local = [k == SLIDING for k, _ in kinds]
    types = raw.get("layer_types")
    if isinstance(types, (list, tuple)) and len(types) == d.L:
        types = tuple(str(x) for x in types)
    elif any(local):
        types = tuple("sliding_attention" if x else "full_attention" for x in local)
    else:
        types = ()
    window = next((w for k, w in kinds if k == SLIDING and w), None)
    rope = getattr(config, "rope_parameters", None) or {}
    theta = rope.get("rope_theta") if isinstance(rope, dict) else None
    theta_local = None
    per_type = isinstance(rope, dict) and any(isinstance(rope.get(k), dict) for k in ("full_attention", "sliding_attention"))
    if theta is None and per_type:
        # Gemma 3: one RoPE per layer type. Only the types that some layer has count.
        bases = {k: rope[k].get("rope_theta") for k in ("full_attention", "sliding_attention") if isinstance(rope.get(k), dict)}
        has_local, has_global = any(local), not all(local)
        theta = bases.get("full_attention") if has_global else bases.get("sliding_attention")
        if has_local and has_global:
            theta_local = bases.get("sliding_attention")
    if theta is None:
        theta = getattr(config, "rope_theta", None)
    return dict(
        n_layers=d.L,
        n_heads=d.H,
        n_kv_heads=d.Hkv,
        d_model=d.D,
        d_head=d.Dh,
        d_mlp=d.F,
        vocab_size=d.V,
        context_length=raw.get("max_position_embeddings") or raw.get("n_positions"),
        rope_theta=theta,
        tied_embeddings=bool(getattr(config, "tie_word_embeddings", True)),
        rope_theta_local=theta_local,
        sliding_window=int(window) if window else None,
        layer_types=types,
    )
