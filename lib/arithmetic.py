"""Model arithmetic from a Hugging Face `config.json` dict: parameters (and, later, memory and FLOPs).

`count_params` counts every weight tensor the way transformers builds the model from the same
config: embeddings, attention with grouped-query heads, gated (SwiGLU) or plain (GELU) MLP,
norms, and the LM head unless it is tied to the embeddings. It deliberately covers only the
model types listed in `PARAM_MODEL_TYPES`; anything else raises `ValueError`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

PARAM_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "gemma3_text", "gpt2")

# transformers' own defaults for `tie_word_embeddings` when config.json omits it.
_TIED_DEFAULT = {"llama": False, "mistral": False, "qwen2": False, "qwen3": False, "gemma3_text": True, "gpt2": True}


class Dims(NamedTuple):
    V: int  # vocabulary
    D: int  # model width
    L: int  # layers
    H: int  # query heads
    Hkv: int  # key/value heads
    Dh: int  # head width
    F: int  # MLP width


def dims(c: dict[str, Any]) -> Dims:
    """The shape numbers of a config dict, Llama-style names or their GPT-2 aliases.

    Example: dims({"vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12}).Dh -> 64
    """
    d = c.get("hidden_size", c.get("n_embd"))
    n_heads = c.get("num_attention_heads", c.get("n_head"))
    n_layers = c.get("num_hidden_layers", c.get("n_layer"))
    n_kv = c.get("num_key_value_heads") or n_heads
    d_head = c.get("head_dim") or d // n_heads
    d_mlp = c.get("intermediate_size") or c.get("n_inner") or 4 * d
    return Dims(c["vocab_size"], d, n_layers, n_heads, n_kv, d_head, d_mlp)


def count_params(config: dict[str, Any]) -> int:
    """Number of parameters of the model transformers builds from `config`.

    Example: SmolLM2-135M (V=49152, D=576, L=30, H=9, Hkv=3, Dh=64, F=1536, tied) -> 134,515,008
    """
    mt = config.get("model_type")
    if mt not in PARAM_MODEL_TYPES:
        raise ValueError(f"count_params: unsupported model_type {mt!r}")
    V, D, L, H, Hkv, Dh, F = dims(config)
    tied = config.get("tie_word_embeddings", _TIED_DEFAULT[mt])
    embed = V * D
    head = 0 if tied else V * D

    if mt == "gpt2":
        n_pos = config.get("n_positions", config.get("max_position_embeddings", 1024))
        per_layer = (
            2 * D  # ln_1 (weight and bias)
            + D * 3 * D + 3 * D  # fused c_attn
            + D * D + D  # attention c_proj
            + 2 * D  # ln_2
            + D * F + F  # c_fc
            + F * D + D  # mlp c_proj
        )
        return embed + n_pos * D + L * per_layer + 2 * D + head

    attn = D * H * Dh + 2 * D * Hkv * Dh + H * Dh * D  # q, k, v, o
    if mt == "qwen2":
        attn += H * Dh + 2 * Hkv * Dh  # Qwen2 always has q/k/v biases, no o bias
    elif config.get("attention_bias", False):
        attn += H * Dh + 2 * Hkv * Dh + D
    if mt in ("qwen3", "gemma3_text"):
        attn += 2 * Dh  # QK-norm: one RMSNorm gain of Dh for q, one for k
    mlp = 3 * D * F
    if config.get("mlp_bias", False):
        mlp += 2 * F + D
    norms = (4 if mt == "gemma3_text" else 2) * D
    return embed + L * (attn + mlp + norms) + D + head


def param_breakdown(config: dict[str, Any]) -> dict[str, int]:
    """Where the parameters live: embeddings, positions, attention, MLP, norms, LM head.

    The parts add up to `count_params(config)`.
    Example: param_breakdown(gpt2_small)["embeddings"] -> 38,597,376 (50257 x 768)
    """
    mt = config.get("model_type")
    total = count_params(config)
    V, D, L, H, Hkv, Dh, F = dims(config)
    tied = config.get("tie_word_embeddings", _TIED_DEFAULT.get(mt, False))
    parts = {"embeddings": V * D, "positions": 0, "lm_head": 0 if tied else V * D}
    if mt == "gpt2":
        parts["positions"] = config.get("n_positions", config.get("max_position_embeddings", 1024)) * D
        parts["attention"] = L * (D * 3 * D + 3 * D + D * D + D)
        parts["mlp"] = L * (D * F + F + F * D + D)
    else:
        parts["attention"] = L * (D * H * Dh + 2 * D * Hkv * Dh + H * Dh * D)
        parts["mlp"] = L * 3 * D * F
    # Norm gains, biases and QK-norms: whatever the big matrices leave.
    parts["norms"] = total - sum(parts.values())
    return parts


def kv_cache_bytes(config: dict[str, Any], tokens: int, batch: int = 1, dtype_bytes: int = 2) -> int:
    """Bytes of the key/value cache: 2 (K and V) x layers x KV heads x head_dim x bytes, per token.

    Honours `num_key_value_heads` (GQA) and an explicit `head_dim`. Sliding-window layers and
    MLA's compressed latent are the KV-cache lesson's extension of this function.
    Example: Llama-3 8B (32 layers, 8 KV heads, head_dim 128), 8192 tokens -> 1,073,741,824
    """
    _, _, L, _, Hkv, Dh, _ = dims(config)
    return 2 * L * Hkv * Dh * dtype_bytes * tokens * batch
