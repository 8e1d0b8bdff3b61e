"""Model arithmetic from a Hugging Face `config.json` dict: parameters, memory, FLOPs, speed.

Everything here is a formula on a config (or on a parameter count), checked in the tests against
what transformers builds and stores:

- `count_params` counts every weight tensor the way transformers builds the model from the same
  config: embeddings, attention with grouped-query heads (or DeepSeek-V3's latent attention),
  gated (SwiGLU) or plain (GELU) MLP, mixture-of-experts layers, norms, and the LM head unless it
  is tied to the embeddings. It covers only the model types in `PARAM_MODEL_TYPES`.
- `kv_cache_bytes` is the memory of the key/value cache, layer by layer (`cache_layers`): a full
  attention layer keeps every token, a sliding-window layer at most its window, a linear-attention
  layer a fixed state and no per-token cache; a multi-head latent attention (MLA) layer keeps one
  compressed vector of `kv_lora_rank + qk_rope_head_dim` numbers per token instead of K and V.
- Weights by dtype, forward FLOPs per token, the attention's n² cost, training FLOPs (6·N·D) and
  days, training memory with Adam or Muon split by ZeRO/FSDP, the decode-speed ceiling set by
  memory bandwidth with batching, and the total versus active parameters of a mixture of experts.

Deliberately left out: activation memory in training, the fixed-size state of linear-attention
layers, communication between cards, kernel efficiency, and any quantization of the cache beyond
its bytes per number. Figures are in bytes and FLOPs; pages choose GB (1e9) or GiB (2**30).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

PARAM_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "gemma3_text", "gpt2", "deepseek_v3")

# transformers' own defaults for `tie_word_embeddings` when config.json omits it.
_TIED_DEFAULT = {"llama": False, "mistral": False, "qwen2": False, "qwen3": False, "gemma3_text": True, "gpt2": True,
                 "deepseek_v3": False}


class ConfigError(ValueError):
    """A config dict lacks a number a formula needs, or holds an impossible one.

    `field` names the config key, `problem` is "missing" or "invalid", so a page can say which.
    Example: dims({"hidden_size": 64}) raises ConfigError("num_attention_heads", "missing")
    """

    def __init__(self, field: str, problem: str = "missing"):
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


class Dims(NamedTuple):
    V: int  # vocabulary
    D: int  # model width
    L: int  # layers
    H: int  # query heads
    Hkv: int  # key/value heads
    Dh: int  # head width
    F: int  # MLP width


def text_config(c: dict[str, Any]) -> dict[str, Any]:
    """The language model's part of a config: `text_config` of a multimodal config.json, else `c`.

    Example: text_config({"model_type": "gemma3", "text_config": {"hidden_size": 2560}}) -> {"hidden_size": 2560}
    """
    inner = c.get("text_config")
    if isinstance(inner, dict) and "hidden_size" not in c and "n_embd" not in c:
        return inner
    return c


def _positive(c: dict[str, Any], *names: str, required: bool = True) -> int | None:
    """The first of `names` present in `c`, as a positive int; ConfigError if absent or not one."""
    for name in names:
        value = c.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value <= 0:
            raise ConfigError(name, "invalid")
        return int(value)
    if required:
        raise ConfigError(names[0], "missing")
    return None


def dims(c: dict[str, Any]) -> Dims:
    """The shape numbers of a config dict, Llama-style names or their GPT-2 aliases.

    Raises ConfigError naming the first missing or impossible field (zero, negative, not a number).
    Example: dims({"vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12}).Dh -> 64
    """
    c = text_config(c)
    d = _positive(c, "hidden_size", "n_embd")
    n_heads = _positive(c, "num_attention_heads", "n_head")
    n_layers = _positive(c, "num_hidden_layers", "n_layer")
    n_kv = _positive(c, "num_key_value_heads", required=False) or n_heads
    d_head = _positive(c, "head_dim", required=False) or d // n_heads
    if d_head == 0:
        raise ConfigError("num_attention_heads", "invalid")
    d_mlp = _positive(c, "intermediate_size", "n_inner", required=False) or 4 * d
    vocab = _positive(c, "vocab_size")
    return Dims(vocab, d, n_layers, n_heads, n_kv, d_head, d_mlp)


# ------------------------------------------------------------------------------------ parameters


def _mla_attention(c: dict[str, Any], D: int, H: int) -> int:
    """Parameters of one DeepSeek-V3 attention block (multi-head latent attention)."""
    r, rope = c["kv_lora_rank"], c["qk_rope_head_dim"]
    nope, v = c["qk_nope_head_dim"], c["v_head_dim"]
    qk = nope + rope
    q_rank = c.get("q_lora_rank")
    q = D * q_rank + q_rank + q_rank * H * qk if q_rank else D * H * qk  # with its low-rank norm
    kv = D * (r + rope) + r + r * H * (nope + v)  # down-projection, its norm, up-projection
    return q + kv + H * v * D


def _moe(c: dict[str, Any]) -> tuple[int, int, int, int]:
    """(MoE layers, routed experts, active experts, shared experts) of a DeepSeek-V3 config."""
    L = c["num_hidden_layers"]
    dense = min(int(c.get("first_k_dense_replace") or 0), L)
    return L - dense, int(c.get("n_routed_experts") or 0), int(c.get("num_experts_per_tok") or 0), int(
        c.get("n_shared_experts") or 0)


def count_params(config: dict[str, Any]) -> int:
    """Number of parameters of the model transformers builds from `config`.

    Example: SmolLM2-135M (V=49152, D=576, L=30, H=9, Hkv=3, Dh=64, F=1536, tied) -> 134,515,008
    """
    config = text_config(config)
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

    if mt == "deepseek_v3":
        n_moe, E, _, shared = _moe(config)
        Fm = config["moe_intermediate_size"]
        expert = 3 * D * Fm
        moe_layer = E * expert + E * D + shared * expert  # routed experts, router, shared experts
        mlp = (L - n_moe) * 3 * D * F + n_moe * moe_layer
        return embed + L * (_mla_attention(config, D, H) + 2 * D) + mlp + D + head

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


def active_params(config: dict[str, Any]) -> int:
    """Parameters one token actually goes through: all of a dense model, a few experts of a MoE.

    Example: a dense config -> count_params(config); DeepSeek-V3 -> about 37 G of its 671 G
    """
    config = text_config(config)
    total = count_params(config)
    if config.get("model_type") != "deepseek_v3":
        return total
    n_moe, E, k, _ = _moe(config)
    return total - n_moe * (E - k) * 3 * config["hidden_size"] * config["moe_intermediate_size"]


def param_breakdown(config: dict[str, Any]) -> dict[str, int]:
    """Where the parameters live: embeddings, positions, attention, MLP, norms, LM head.

    The parts add up to `count_params(config)`.
    Example: param_breakdown(gpt2_small)["embeddings"] -> 38,597,376 (50257 x 768)
    """
    config = text_config(config)
    mt = config.get("model_type")
    total = count_params(config)
    V, D, L, H, Hkv, Dh, F = dims(config)
    tied = config.get("tie_word_embeddings", _TIED_DEFAULT.get(mt, False))
    parts = {"embeddings": V * D, "positions": 0, "lm_head": 0 if tied else V * D}
    if mt == "gpt2":
        parts["positions"] = config.get("n_positions", config.get("max_position_embeddings", 1024)) * D
        parts["attention"] = L * (D * 3 * D + 3 * D + D * D + D)
        parts["mlp"] = L * (D * F + F + F * D + D)
    elif mt == "deepseek_v3":
        latent_norms = config["kv_lora_rank"] + (config.get("q_lora_rank") or 0)  # counted with the norms
        parts["attention"] = L * (_mla_attention(config, D, H) - latent_norms)
        n_moe, E, _, shared = _moe(config)
        expert = 3 * D * config["moe_intermediate_size"]
        parts["mlp"] = (L - n_moe) * 3 * D * F + n_moe * (E * expert + E * D + shared * expert)
    else:
        parts["attention"] = L * (D * H * Dh + 2 * D * Hkv * Dh + H * Dh * D)
        parts["mlp"] = L * 3 * D * F
    # Norm gains, biases and QK-norms: whatever the big matrices leave.
    parts["norms"] = total - sum(parts.values())
    return parts


def params_per_layer(config: dict[str, Any]) -> float:
    """Parameters of one block (attention, MLP, its norms), averaged over the layers.

    Example: Llama-3 8B -> 218,112,000 (2·d² + 2·d·Hkv·Dh + 3·d·F + 2·d)
    """
    parts = param_breakdown(config)
    final_norm = 2 * dims(config).D if text_config(config).get("model_type") == "gpt2" else dims(config).D
    inside = parts["attention"] + parts["mlp"] + parts["norms"] - final_norm
    return inside / dims(config).L


def rule_of_thumb_params(config: dict[str, Any]) -> int:
    """The mental shortcut 12·d²·L: 4·d² of attention and 8·d² of a 4·d MLP per layer, no embeddings.

    Example: Llama-3 8B -> 12 · 4096² · 32 = 6,442,450,944
    """
    d = dims(config)
    return 12 * d.D * d.D * d.L


# ------------------------------------------------------------------------------------ KV cache

FULL, SLIDING, LINEAR = "full", "sliding", "linear"
_LOCAL_TYPES = ("sliding_attention", "chunked_attention")
# Layers that keep a fixed-size state, or no attention at all: no cache that grows with tokens.
_STATE_TYPES = ("linear_attention", "conv", "mamba", "moe", "mlp")
# Model types whose config carries a `sliding_window` that is off unless `use_sliding_window`.
_WINDOW_FLAG_DEFAULT_OFF = ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe")
_GEMMA3_PATTERN = 6  # transformers' default for gemma3 configs without layer_types
_QWEN3_NEXT_INTERVAL = 4  # and for qwen3_next's one full-attention layer in `full_attention_interval`


class LayerCache(NamedTuple):
    """What one layer keeps for each token of context."""

    kind: str  # FULL, SLIDING or LINEAR
    window: int | None  # a sliding layer keeps at most this many tokens
    numbers: int  # numbers per token: 2·Hkv·Dh for K and V, or MLA's kv_lora_rank + qk_rope_head_dim

    def tokens_held(self, tokens: int) -> int:
        """Tokens this layer holds after `tokens` tokens. Example: sliding, window 4 -> 4 of 10"""
        if self.kind == LINEAR:
            return 0
        if self.kind == SLIDING and self.window:
            return min(tokens, self.window)
        return tokens


def layer_kinds(config: dict[str, Any]) -> list[tuple[str, int | None]]:
    """(kind, window) of every layer, read the way transformers reads it.

    In order: `layer_types` if present ("sliding_attention"/"chunked_attention" are local,
    "linear_attention" and other state layers keep no per-token cache); else Qwen3-Next's
    `full_attention_interval` (one full layer in every p, the others linear); else Qwen's
    `use_sliding_window` (off by default; on, the layers from `max_window_layers` are local); else,
    with a `sliding_window`, Gemma 3's `sliding_window_pattern` p (every p-th layer global, the
    others local; 6 by default for gemma3) or, for any other type (Mistral), every layer local.
    Example: Gemma-3-style 12 layers, window 1024 -> 10 ("sliding", 1024) and 2 ("full", None)
    """
    c = text_config(config)
    L = dims(c).L
    window = c.get("sliding_window")
    if window is not None:
        window = _positive(c, "sliding_window")
    chunk = _positive(c, "attention_chunk_size", required=False) or window
    types = c.get("layer_types")
    if types is not None:
        if not isinstance(types, (list, tuple)) or len(types) != L:
            raise ConfigError("layer_types", "invalid")
        kinds = []
        for t in types:
            if t in _STATE_TYPES:
                kinds.append((LINEAR, None))
            elif t in _LOCAL_TYPES and (chunk if t == "chunked_attention" else window):
                kinds.append((SLIDING, chunk if t == "chunked_attention" else window))
            else:
                kinds.append((FULL, None))
        return kinds
    interval = c.get("full_attention_interval")
    if interval is None and c.get("model_type") == "qwen3_next":
        interval = _QWEN3_NEXT_INTERVAL
    if interval:
        p = _positive(c, "full_attention_interval") if "full_attention_interval" in c else interval
        return [(FULL, None) if (i + 1) % p == 0 else (LINEAR, None) for i in range(L)]
    flag = c.get("use_sliding_window")
    if flag is None and c.get("model_type") in _WINDOW_FLAG_DEFAULT_OFF:
        flag = False
    if window is None or flag is False:
        return [(FULL, None)] * L
    if flag is True:
        first = int(c.get("max_window_layers") or 0)
        return [(SLIDING, window) if i >= first else (FULL, None) for i in range(L)]
    pattern = c.get("sliding_window_pattern")
    if pattern is None and c.get("model_type") == "gemma3_text":
        pattern = _GEMMA3_PATTERN
    if pattern:
        p = _positive(c, "sliding_window_pattern") if "sliding_window_pattern" in c else pattern
        return [(FULL, None) if (i + 1) % p == 0 else (SLIDING, window) for i in range(L)]
    return [(SLIDING, window)] * L


def cache_layers(config: dict[str, Any]) -> list[LayerCache]:
    """Per layer: its kind, its window, and how many numbers it stores for each token.

    Example: Llama-3 8B -> 32 × LayerCache("full", None, 2048)   (2 · 8 KV heads · 128)
    Example: DeepSeek-V3 -> 61 × LayerCache("full", None, 576)   (latent 512 + RoPE key 64)
    """
    c = text_config(config)
    d = dims(c)
    if c.get("kv_lora_rank"):
        numbers = _positive(c, "kv_lora_rank") + _positive(c, "qk_rope_head_dim")
    else:
        numbers = 2 * d.Hkv * d.Dh
    return [LayerCache(kind, window, numbers) for kind, window in layer_kinds(c)]


def kv_cache_bytes(config: dict[str, Any], tokens: int, batch: int = 1, dtype_bytes: int = 2) -> int:
    """Bytes of the key/value cache: per layer, numbers per token × tokens it holds × bytes.

    For a plain model that is 2 (K and V) × layers × KV heads × head_dim × bytes, per token.
    Honours `num_key_value_heads` (GQA), an explicit `head_dim`, sliding-window layers (a local
    layer holds at most its window), layers without a growing cache (linear attention) and MLA
    (`kv_lora_rank + qk_rope_head_dim` numbers per layer per token). See `cache_layers`.
    Example: Llama-3 8B (32 layers, 8 KV heads, head_dim 128), 8192 tokens -> 1,073,741,824
    """
    if tokens < 0 or batch < 0 or dtype_bytes <= 0:
        raise ValueError("kv_cache_bytes: tokens and batch must be >= 0, dtype_bytes > 0")
    per_sequence = sum(layer.numbers * layer.tokens_held(int(tokens)) for layer in cache_layers(config))
    total = per_sequence * batch * dtype_bytes
    return int(total) if float(total).is_integer() else total


def kv_bytes_per_token(config: dict[str, Any], dtype_bytes: int = 2, context: int | None = None) -> float:
    """Cache bytes one more token costs; with `context`, the average over that many tokens.

    Without a context this counts only layers whose cache grows forever (full attention): a local
    layer stops growing once its window is full.
    Example: Llama-3 8B -> 131,072 (128 KiB); SmolLM2-135M in fp32 -> 46,080 (45 KiB)
    """
    if context:
        return kv_cache_bytes(config, context, dtype_bytes=dtype_bytes) / context
    return sum(layer.numbers for layer in cache_layers(config) if layer.kind == FULL) * dtype_bytes


# ------------------------------------------------------------------------------------ weights

# Bytes per parameter. 4-bit weights need a scale per block: here one 16-bit scale per 32
# weights (as in GGUF's Q4_0), 4 + 16/32 = 4.5 bits. Integer-8 scales per row are negligible.
WEIGHT_DTYPES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp8": 1.0, "int4": (4 + 16 / 32) / 8}
CACHE_DTYPES: dict[str, int] = {"fp32": 4, "bf16": 2, "fp8": 1}


def bytes_per_param(dtype: str, bits: float | None = None, group: int = 32, scale_bits: int = 16) -> float:
    """Bytes per weight: a name of `WEIGHT_DTYPES`, or `bits` plus one scale per `group` weights.

    Example: bytes_per_param("bf16") -> 2.0; bytes_per_param("int4") -> 0.5625 (4.5 bits)
    """
    if bits is not None:
        return (bits + scale_bits / group) / 8
    if dtype not in WEIGHT_DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; one of {sorted(WEIGHT_DTYPES)}")
    return WEIGHT_DTYPES[dtype]


def weight_bytes(n_params: float, dtype: str = "bf16") -> float:
    """Memory of the weights. Example: weight_bytes(8.03e9, "bf16") -> 1.606e10 (16 GB)"""
    return n_params * bytes_per_param(dtype)


# ------------------------------------------------------------------------------------ FLOPs


def _score_widths(c: dict[str, Any]) -> tuple[int, int]:
    """(query·key width, value width) summed over heads: H·Dh each, or MLA's own head sizes."""
    d = dims(c)
    if c.get("kv_lora_rank"):  # a hand-made MLA config may lack the head sizes: the plain width then
        rope = c.get("qk_rope_head_dim") or 0
        return d.H * ((c.get("qk_nope_head_dim") or d.Dh) + rope), d.H * (c.get("v_head_dim") or d.Dh)
    return d.H * d.Dh, d.H * d.Dh


def score_width(config: dict[str, Any]) -> int:
    """Numbers one query reads per key, summed over heads: query·key width plus value width.

    The attention's FLOPs are 2 × this per token attended (`forward_flops_per_token`, `attention_flops`).
    Example: Llama-3 8B -> 8192 (32 heads × 128, twice); DeepSeek-V3 -> 40,960 (128 × (192 + 128))
    """
    qk, v = _score_widths(text_config(config))
    return qk + v


def forward_flops_per_token(config: dict[str, Any], context: int = 0, n_params: float | None = None) -> float:
    """FLOPs to push one token through: 2·N (every weight used once) + 4·L·n·d (attention).

    The attention term, QKᵀ plus weights·V over the `context` tokens before, is 2·n·H·Dh each;
    H·Dh = d in most models. A local layer attends to at most its window, a linear-attention
    layer has no such term. N counts active parameters (`active_params`) unless given.
    Example: Llama-3 8B, context 0 -> 1.606e10 (16 GFLOP); context 100,000 -> 6.85e10 (≈68 GFLOP)
    """
    c = text_config(config)
    n = active_params(c) if n_params is None else n_params
    qk, v = _score_widths(c)
    attended = sum(layer.tokens_held(int(context)) for layer in cache_layers(c))
    return 2 * n + 2 * attended * (qk + v)


def attention_flops(config: dict[str, Any], tokens: int, causal: bool = False) -> float:
    """FLOPs of QKᵀ and weights·V over a whole sequence: 4·n²·d·L, every pair of tokens.

    With the causal mask only the n·(n+1)/2 pairs that look back are needed: about half. A
    sliding-window layer reads at most its window: min(i + 1, W) keys for token i.
    Example: Llama-3 8B, 2048 tokens -> 2.2e12; causal -> 1.1e12
    """
    c = text_config(config)
    qk, v = _score_widths(c)
    pairs = tokens * (tokens + 1) / 2 if causal else tokens * tokens
    total = 0.0
    for layer in cache_layers(c):
        if layer.kind == SLIDING and layer.window and tokens > 0:
            # a local layer: token i reads min(i + 1, W) keys, whatever `causal` says
            w = min(int(layer.window), int(tokens))
            total += w * (w + 1) / 2 + (tokens - w) * w
        else:
            total += pairs
    return 2 * (qk + v) * total


def training_flops(n_params: float, n_tokens: float) -> float:
    """6·N·D: 2 per parameter per token forward, 4 backward. Example: (8e9, 1.5e13) -> 7.2e23"""
    return 6 * n_params * n_tokens


def training_days(flops: float, gpus: int, peak_flops: float, utilization: float) -> float:
    """Days of training on `gpus` cards of `peak_flops` FLOP/s each, at `utilization` (0-1).

    Example: training_days(7.2e23, 1000, 400e12, 0.4) -> 52.1
    """
    if gpus <= 0 or peak_flops <= 0 or not 0 < utilization <= 1:
        raise ValueError("training_days: gpus and peak_flops > 0, 0 < utilization <= 1")
    return flops / (gpus * peak_flops * utilization) / 86_400


# ------------------------------------------------------------------------------------ training memory

# Bytes per parameter in mixed-precision training: bf16 weights and gradients, an fp32 master copy,
# and the optimizer's fp32 states (Adam: mean and mean square; Muon: momentum only).
OPTIMIZER_STATE_BYTES = {"adam": 8, "muon": 4}


def training_memory(n_params: float, optimizer: str = "adam", gpus: int = 1, zero_stage: int = 3) -> dict[str, float]:
    """Bytes per card for weights, gradients, fp32 master copy and optimizer states (no activations).

    ZeRO/FSDP shards across the `gpus` cards: stage 1 the master copy and optimizer states,
    stage 2 also the gradients, stage 3 (FSDP's full shard) also the weights.
    Example: training_memory(8e9)["total"] -> 1.28e11 (16 B/param); Muon -> 12 B/param;
             8 cards at stage 3 -> 1.6e10 each
    """
    if optimizer not in OPTIMIZER_STATE_BYTES:
        raise ValueError(f"unknown optimizer {optimizer!r}")
    if gpus <= 0 or zero_stage not in (0, 1, 2, 3):
        raise ValueError("training_memory: gpus > 0 and zero_stage in 0..3")
    share = {part: (1 / gpus if zero_stage >= stage else 1.0)
             for part, stage in (("weights", 3), ("gradients", 2), ("master", 1), ("optimizer", 1))}
    parts = {"weights": 2 * n_params * share["weights"], "gradients": 2 * n_params * share["gradients"],
             "master": 4 * n_params * share["master"],
             "optimizer": OPTIMIZER_STATE_BYTES[optimizer] * n_params * share["optimizer"]}
    parts["total"] = sum(parts.values())
    return parts


# ------------------------------------------------------------------------------------ generation speed


@dataclass(frozen=True)
class DecodeStep:
    """One generation step for `users` requests served together, bound by memory or by compute."""

    users: int
    weight_bytes: float  # read once per step, whatever the batch
    cache_bytes: float  # every user's own cache, read each step
    memory_seconds: float  # (weights + caches) / bandwidth
    compute_seconds: float  # users · FLOPs per token / peak FLOP/s (0 if no peak given)
    seconds: float  # the slower of the two
    tokens_per_s: float  # for all users together
    per_user: float  # tokens per second each user sees
    cache_share: float  # fraction of the bytes read that is cache

    @property
    def memory_bound(self) -> bool:
        return self.memory_seconds >= self.compute_seconds


def decode_step(weight_bytes: float, cache_bytes_per_user: float, users: int, bandwidth: float,
                flops_per_token: float = 0.0, peak_flops: float = 0.0) -> DecodeStep:
    """The speed ceiling of generation: every step reads all the weights once and each user's cache.

    One user: bandwidth ÷ weight bytes. With a batch, the weights are shared and the caches are not.
    Example: decode_step(16e9, 0, 1, 3e12).tokens_per_s -> 187.5 (5.3 ms per token)
    """
    if users <= 0 or bandwidth <= 0:
        raise ValueError("decode_step: users and bandwidth must be > 0")
    cache = cache_bytes_per_user * users
    mem = (weight_bytes + cache) / bandwidth
    comp = users * flops_per_token / peak_flops if peak_flops > 0 else 0.0
    sec = max(mem, comp)
    return DecodeStep(users, weight_bytes, cache, mem, comp, sec, users / sec, 1 / sec,
                      cache / (weight_bytes + cache) if weight_bytes + cache else 0.0)


def users_that_fit(card_bytes: float, weight_bytes: float, cache_bytes_per_user: float) -> int | None:
    """How many users' caches fit beside the weights on one card; None when no cache grows.

    Example: users_that_fit(80e9, 16e9, 1.07e9) -> 59
    """
    free = card_bytes - weight_bytes
    if free <= 0:
        return 0
    if cache_bytes_per_user <= 0:
        return None
    return int(free // cache_bytes_per_user)


@dataclass(frozen=True)
class DenseVsMoE:
    total: float  # parameters held in memory
    active: float  # parameters each token goes through
    flops_per_token: float  # 2 · active
    memory_bytes: float  # total × bytes per parameter

    @property
    def active_share(self) -> float:
        return self.active / self.total


def dense_vs_moe(total: float, active: float | None = None, dtype: str = "bf16") -> DenseVsMoE:
    """A model's cost as a MoE sees it: memory for every expert, compute for the active ones.

    Example: dense_vs_moe(400e9, 25e9) -> 50 GFLOP per token, 800 GB in bf16, 6% active
    """
    active = total if active is None else active
    return DenseVsMoE(total, active, 2 * active, weight_bytes(total, dtype))
