"""The KV cache lesson: cache variants, a serving calculator, and measurements on the live model.

The formulas live in `lib.model.arithmetic`; this module puts them to work for the lesson:

- `cache_variants` builds one base model's MHA, MQA, GQA, MLA, sliding-window and hybrid
  linear-attention versions and prices their caches side by side (`variant_config` gives each).
- `calculate` answers the serving question: weights plus every user's cache, against a card.
- `check_seed_table` recomputes a printed table of cache sizes from the formula it claims to use.
- `measure_cache` runs the live model with its cache over N tokens (the learner's text from
  `text_ids`, repeated as needed) and reads the bytes of the real key/value tensors, next to the
  formula's figure.
- `time_prefill_decode` times the first token (the whole prompt at once) and the ones after
  (one at a time, reusing the cache); `memory_bandwidth` measures this machine's copy speed, the
  number that bounds the second.
- `spec` reduces a config to the few numbers that price it, for the lesson's browser view.
- `clamp` turns a learner's typed number into one the formulas accept, and says if it changed it.

Deliberately left out: paged or quantized caches, prefix sharing between users, speculative
decoding, and timing anything but the CPU forward pass (no tokenizer, no sampling filters).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import torch

from lib.model.arithmetic import (
    FULL,
    SLIDING,
    cache_layers,
    dims,
    kv_bytes_per_token,
    kv_cache_bytes,
    score_width,
    text_config,
    users_that_fit,
)

# ------------------------------------------------------------------------------------ inputs


@dataclass(frozen=True)
class Clamped:
    """A typed number made usable: `value` is what the formulas get, `given` what was typed."""

    value: float
    given: Any
    changed: bool


def clamp(value: Any, lo: float, hi: float, integer: bool = True) -> Clamped:
    """`value` forced into [lo, hi] (NaN, None and text become `lo`); `changed` says if it moved.

    Example: clamp(-5, 1, 100) -> Clamped(1, -5, True); clamp(1e12, 1, 1e7).value -> 10,000,000
    """
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
    if math.isnan(x):
        out = lo
    else:
        out = min(max(x, lo), hi)
    if integer:
        out = int(out)
    return Clamped(out, value, out != x)


# ------------------------------------------------------------------------------------ variants

VARIANTS = ("mha", "mqa", "gqa", "mla", "sliding", "hybrid")
MLA_LATENT, MLA_ROPE = 512, 64  # DeepSeek-V3's compressed K/V vector and its RoPE key, per token
LOCAL_WINDOW, LOCAL_PER_GLOBAL = 1024, 5  # Gemma 3: five local layers of window 1,024 per global one
LINEAR_PER_FULL = 3  # Qwen3-Next / Kimi Linear style: three linear-attention layers per full one


def variant_config(base: dict[str, Any], kind: str) -> dict[str, Any]:
    """`base` rebuilt with another way of keeping keys and values (weights aside, same shape).

    mha: one KV head per query head; mqa: one KV head for all; gqa: the base's own KV heads;
    mla: DeepSeek-V3's latent (512 + 64 numbers per layer); sliding: Gemma 3's 5 local layers of
    window 1,024 per global layer; hybrid: 3 linear-attention layers per full-attention one.
    Example: variant_config(llama3_8b, "mqa")["num_key_value_heads"] -> 1
    """
    d = dims(base)
    cfg = {k: v for k, v in base.items() if k not in ("layer_types", "sliding_window", "kv_lora_rank")}
    if kind == "mha":
        return dict(cfg, num_key_value_heads=d.H)
    if kind == "mqa":
        return dict(cfg, num_key_value_heads=1)
    if kind == "gqa":
        return cfg
    if kind == "mla":
        return dict(cfg, kv_lora_rank=MLA_LATENT, qk_rope_head_dim=MLA_ROPE, qk_nope_head_dim=d.Dh, v_head_dim=d.Dh)
    period = {"sliding": LOCAL_PER_GLOBAL + 1, "hybrid": LINEAR_PER_FULL + 1}.get(kind)
    if period is None:
        raise ValueError(f"unknown variant {kind!r}; one of {VARIANTS}")
    other = "sliding_attention" if kind == "sliding" else "linear_attention"
    types = ["full_attention" if (i + 1) % period == 0 else other for i in range(d.L)]
    return dict(cfg, layer_types=types, **({"sliding_window": LOCAL_WINDOW} if kind == "sliding" else {}))


@dataclass(frozen=True)
class Variant:
    kind: str
    config: dict[str, Any]
    bytes: int  # cache of one sequence of `tokens`
    per_token: float  # bytes / tokens
    full_layers: int  # layers whose cache grows with every token
    saving: float  # MHA's bytes / these bytes


def cache_variants(base: dict[str, Any], tokens: int, dtype_bytes: int = 2) -> tuple[Variant, ...]:
    """The six variants of `base` at the same context, each with its cache and its saving on MHA.

    Example: Llama-3 8B at 100,000 tokens -> mha 52.4 GB, mqa 1.6, gqa 13.1, mla 3.7, sliding 2.2, hybrid 3.3
    """
    rows = []
    for kind in VARIANTS:
        cfg = variant_config(base, kind)
        rows.append((kind, cfg, kv_cache_bytes(cfg, tokens, dtype_bytes=dtype_bytes)))
    mha = rows[0][2]
    return tuple(Variant(kind, cfg, b, b / tokens if tokens else 0.0,
                         sum(1 for x in cache_layers(cfg) if x.kind == FULL), mha / b if b else math.inf)
                 for kind, cfg, b in rows)


# ------------------------------------------------------------------------------------ calculator


@dataclass(frozen=True)
class Calculation:
    """Memory for serving `users` requests of `tokens` each: weights once, caches per user."""

    tokens: int
    users: int
    weights: float
    cache_per_user: float
    cache_per_token: float  # the first token's cost; local layers stop growing at their window
    cache_total: float
    total: float
    card: float
    users_fit: int | None  # None: no cache grows with the context
    fits: bool

    @property
    def cache_share(self) -> float:
        return self.cache_total / self.total if self.total else 0.0


def calculate(config: dict[str, Any], n_params: float, tokens: int, users: int, cache_dtype_bytes: int,
              weight_bytes_per_param: float, card_bytes: float) -> Calculation:
    """Weights plus every user's cache, and how many users of this context fit on the card.

    Example: Llama-3 8B, 8,192 tokens, 10 users, bf16, 80 GB card -> 16.1 GB + 10 × 1.07 GB, 59 users fit
    """
    weights = n_params * weight_bytes_per_param
    per_user = kv_cache_bytes(config, tokens, dtype_bytes=cache_dtype_bytes)
    total = weights + per_user * users
    return Calculation(tokens, users, weights, per_user, kv_bytes_per_token(config, cache_dtype_bytes),
                       per_user * users, total, card_bytes, users_that_fit(card_bytes, weights, per_user),
                       total <= card_bytes)


def spec(config: dict[str, Any], n_params: int | None) -> dict[str, Any]:
    """A config reduced to what prices it, for a browser view that does the arithmetic itself.

    `layers`: [kind, window, numbers per token, how many layers], one row per distinct layer
    (the cache is Σ numbers × tokens held × count × bytes); `params` (None when they cannot be
    counted), `width` (`score_width`: the attention's FLOPs per token attended, halved), `mla`.
    static/views/kvcache.js computes the calculator's figures from it; tests/js holds the two together.
    Example: spec(llama3_8b, 8_030_261_248)["layers"] -> [["full", None, 2048, 32]]
    """
    rows: dict[tuple, int] = {}
    for layer in cache_layers(config):
        rows[(layer.kind, layer.window, layer.numbers)] = rows.get((layer.kind, layer.window, layer.numbers), 0) + 1
    return {"layers": [[kind, window, numbers, n] for (kind, window, numbers), n in rows.items()],
            "params": n_params, "width": score_width(config), "mla": bool(text_config(config).get("kv_lora_rank"))}


# ------------------------------------------------------------------------------------ a printed table


@dataclass(frozen=True)
class SeedRow:
    name: str
    tokens: int
    stated_gb: float
    all_heads: int  # bytes with the formula as printed: every head keeps K and V
    kv_heads: int | None  # bytes with the model's real KV heads (GQA), when known
    agrees: bool  # the stated size is within `tolerance` of one of the two

    @property
    def ratio(self) -> float:
        """Formula (all heads) ÷ stated size."""
        return self.all_heads / (self.stated_gb * 1e9)


def check_seed_table(table: dict[str, tuple[int, int, int, int, int, float]],
                     kv_heads: dict[str, int], tolerance: float = 0.1) -> tuple[SeedRow, ...]:
    """Recompute each row of a cache table from 2 × L × H × n × d_head × 2 bytes.

    A row agrees when its stated GB is within `tolerance` of the formula, in GB (1e9) or GiB (2**30),
    with all heads or with the model's KV heads.
    Example: the 8B row (32, 32, 128, 8K, "~2 GB") -> 4.29 GB with all heads, 1.07 with 8 KV heads: disagrees
    """
    rows = []
    for name, (L, H, Dh, D, tokens, stated) in table.items():
        cfg = dict(num_hidden_layers=L, num_attention_heads=H, head_dim=Dh, hidden_size=D, vocab_size=1)
        full = kv_cache_bytes(cfg, tokens)
        gqa = kv_cache_bytes(dict(cfg, num_key_value_heads=kv_heads[name]), tokens) if name in kv_heads else None
        candidates = [b / unit for b in (full, gqa) if b is not None for unit in (1e9, 2**30)]
        agrees = any(abs(stated - c) <= tolerance * c for c in candidates)
        rows.append(SeedRow(name, tokens, stated, full, gqa, agrees))
    return tuple(rows)


# ------------------------------------------------------------------------------------ the real cache


@dataclass(frozen=True)
class LayerMeasure:
    kind: str  # FULL or SLIDING, as our formula reads the config
    key_shape: tuple[int, ...]  # [B, Hkv, T_held, Dh] (MLA: the latent as one head)
    value_shape: tuple[int, ...]
    bytes: int


@dataclass(frozen=True)
class CacheMeasurement:
    """The real cache after one forward pass over `tokens` tokens, and the formula beside it."""

    tokens: int
    dtype: str
    dtype_bytes: int
    cache_class: str
    layers: tuple[LayerMeasure, ...]
    measured_bytes: int  # Σ numel × element_size over every key and value tensor
    formula_bytes: int  # lib.model.arithmetic.kv_cache_bytes
    # transformers' dynamic sliding layer keeps W - 1 tokens between steps (the next token's own key
    # completes the window of W): the formula's W counts one token more per full local layer.
    window_offset_bytes: int

    @property
    def equal(self) -> bool:
        return self.measured_bytes == self.formula_bytes - self.window_offset_bytes

    @property
    def per_token(self) -> float:
        return self.measured_bytes / self.tokens


def _tensor_bytes(x: torch.Tensor | None) -> int:
    return 0 if x is None else x.numel() * x.element_size()


def _ids(vocab: int, n: int, seed: int, token_ids: Sequence[int] | None = None) -> torch.Tensor:
    """[1, n] token ids: `token_ids` repeated until there are n, or drawn with a fixed seed.

    What the tokens say does not change the cache's size, only how many there are.
    Example: _ids(100, 5, 0, [7, 8]) -> [[7, 8, 7, 8, 7]]
    """
    if token_ids:
        reps = -(-n // len(token_ids))
        return torch.tensor([(list(token_ids) * reps)[:n]], dtype=torch.long)
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (1, n), generator=g)


def text_ids(loaded, text: str, limit: int) -> list[int]:
    """The first `limit` token ids of `text` (no special tokens); [] for an empty text.

    Example: text_ids(smollm2, "The cat", 10) -> [504, 2644]
    """
    if not text.strip():
        return []
    # A token takes at least one character: cutting the text first bounds the work on huge texts.
    return list(loaded.tokenizer(text[: limit * 64], add_special_tokens=False)["input_ids"][:limit])


def measure_cache(loaded, tokens: int, seed: int = 0, token_ids: Sequence[int] | None = None) -> CacheMeasurement:
    """Run the live model over `tokens` tokens with its cache on, and weigh the cache it returns.

    The tokens are `token_ids` repeated as needed (a learner's text), or random with `seed`.
    Runs under `loaded.lock` and `torch.inference_mode()` (no hooks: the cache is the model's output).
    Example: SmolLM2-135M, 100 tokens, fp32 -> 4,608,000 bytes measured = formula (45 KiB per token)
    """
    model = loaded.model
    with loaded.lock, torch.inference_mode():
        # logits_to_keep=1: the cache is what is weighed; [T, V] logits would be 1 GB on Gemma at 1,024.
        out = model(_ids(model.config.vocab_size, tokens, seed, token_ids), use_cache=True, logits_to_keep=1)
    cache = out.cache
    layers, measured, dtype = [], 0, None
    kinds = cache_layers(loaded.config)
    for spec, layer in zip(kinds, cache.layers):
        k, v = layer.keys, layer.values
        b = _tensor_bytes(k) + _tensor_bytes(v)
        measured += b
        dtype = dtype or (k.dtype if k is not None else None)
        layers.append(LayerMeasure(spec.kind, tuple(k.shape) if k is not None else (),
                                   tuple(v.shape) if v is not None else (), b))
    dtype = dtype or next(model.parameters()).dtype
    size = torch.empty((), dtype=dtype).element_size()
    offset = sum(x.numbers * size for x in kinds if x.kind == SLIDING and x.window and tokens >= x.window)
    return CacheMeasurement(tokens, str(dtype).removeprefix("torch."), size, type(cache).__name__, tuple(layers),
                            measured, kv_cache_bytes(loaded.config, tokens, dtype_bytes=size), offset)


# ------------------------------------------------------------------------------------ time


@dataclass(frozen=True)
class TimingRow:
    prompt_tokens: int
    prefill_s: float  # the whole prompt in one pass: the time to the first token
    decode_s: float  # average time of each following token, reading the cache


def time_prefill_decode(loaded, prompt_lengths: Sequence[int], new_tokens: int = 8, seed: int = 0,
                        clock: Callable[[], float] = time.perf_counter) -> tuple[TimingRow, ...]:
    """Time the first token for prompts of several lengths, then each of `new_tokens` after it.

    Greedy continuation (the choice of token does not change the work). Lengths are cut so that
    prompt + new tokens fit the model's context. Runs under the model lock.
    Example: SmolLM2 on this CPU, [16, 256] -> prefill grows with the prompt, decode barely moves
    """
    model = loaded.model
    limit = (loaded.info.context_length or 10**9) - new_tokens
    rows = []
    with loaded.lock, torch.inference_mode():
        for i, n in enumerate(prompt_lengths):
            n = max(1, min(int(n), limit))
            ids = _ids(model.config.vocab_size, n, seed + i)
            start = clock()
            out = model(ids, use_cache=True)
            nxt = out.logits[:, -1:].argmax(-1)
            prefill = clock() - start
            cache = out.cache
            start = clock()
            for _ in range(new_tokens):
                out = model(nxt, cache=cache, use_cache=True)
                cache, nxt = out.cache, out.logits[:, -1:].argmax(-1)
            rows.append(TimingRow(n, prefill, (clock() - start) / max(new_tokens, 1)))
    return tuple(rows)


@dataclass(frozen=True)
class Bandwidth:
    bytes_per_s: float  # bytes read + bytes written, per second, on the best run
    buffer_bytes: int
    best_s: float


def memory_bandwidth(buffer_bytes: int = 256 * 2**20, repeats: int = 5,
                     clock: Callable[[], float] = time.perf_counter) -> Bandwidth:
    """This machine's memory speed: copy a buffer far larger than the CPU caches, keep the best run.

    A copy reads the buffer once and writes it once, so it moves 2 × `buffer_bytes`.
    Example: a laptop -> some 10-30 GB/s; a data-centre GPU's HBM -> 2,000-3,000 GB/s
    """
    n = max(buffer_bytes // 8, 1)
    src = np.ones(n, dtype=np.float64)  # [n] touched once so the pages are really mapped
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = math.inf
    for _ in range(max(repeats, 1)):
        start = clock()
        np.copyto(dst, src)
        best = min(best, clock() - start)
    best = max(best, 1e-9)  # a coarse clock may read 0
    return Bandwidth(2 * n * 8 / best, n * 8, best)


def model_weight_bytes(loaded) -> int:
    """Bytes of every weight tensor the model holds (a tied table counted once).

    Example: SmolLM2-135M in float32 -> 538,060,032 (134,515,008 × 4)
    """
    return sum(p.numel() * p.element_size() for p in loaded.model.parameters())
