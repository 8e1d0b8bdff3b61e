"""Attention taken apart: one head recomputed step by step from a capture, and what surrounds it.

Everything here works on the arrays of a `lib.model.capture.Capture` (post-RoPE q and k, v, the model's
own attention weights) and returns its work as data, so a page can show every intermediate:

- `head_steps`: scores Q·Kᵀ, division by √Dh, the causal mask, softmax, weighted sum with V.
  With `causal=False` the same head without its mask (what the future would have contributed).
- `layer_output`: the heads side by side and the output projection, run through the model's own
  module (`adapter.o_proj`) under the model's lock, split into each head's contribution.
- `pattern_scores`: how much of a head's attention goes to the previous token, the first token,
  itself, earlier copies of the same token, and earlier pieces of the same word.
- `gqa_groups`, `kv_variants`: which query heads share which key/value head, and what the
  classic / multi-query / grouped variants cost in KV cache (through `lib.model.arithmetic`).
- `scaling_demo`: why √Dh (random dot products have variance Dh; the softmax saturates).
- `attention_flops`, `attention_memory`: the n² cost, and the memory of the naive and tiled ways.
- `flash_attention`: a numpy tiled online softmax that returns its work tile by tile and equals
  the naive result.

Deliberately left out: batches, dropout, ALiBi, the KV cache during
generation (the kvcache lesson), GPU kernels (the flash version here shows the arithmetic of the
algorithm, not its speed), and any streamlit call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from lib.model.arithmetic import kv_cache_bytes
from lib.model.capture import Capture
from lib.model.models import LoadedModel

PATTERNS: tuple[str, ...] = ("previous", "first", "self", "same_token", "same_word")
FLOAT_BYTES = 4  # float32, as the model runs here


# --------------------------------------------------------------------------- one head, step by step


def causal_mask(n_tokens: int) -> np.ndarray:
    """[T, T] booleans, True where query i may read key j (j <= i).

    Example: causal_mask(3).astype(int) -> [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    return np.tril(np.ones((n_tokens, n_tokens), dtype=bool))


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax; entries at -inf get weight exactly 0.

    The row maximum is subtracted first: exp of large scores would overflow, and the result is
    unchanged because the same factor cancels between numerator and denominator.
    Example: softmax(np.array([0.0, np.log(3.0), -np.inf])) -> [0.25, 0.75, 0.0]
    """
    x = np.asarray(x, dtype=np.float64)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)  # a row with nothing visible stays all zero
    e = np.exp(x - top)
    total = e.sum(axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


@dataclass(frozen=True)
class HeadSteps:
    """Every intermediate of one head's attention (float64). Shapes: [T, Dh] and [T, T]."""

    q: np.ndarray  # [T, Dh] queries (after RoPE for Llama models)
    k: np.ndarray  # [T, Dh] keys read by this head
    v: np.ndarray  # [T, Dh] values read by this head
    scores: np.ndarray  # [T, T] q @ k.T
    scale: float  # the factor the scores are multiplied by (1/√Dh)
    scaled: np.ndarray  # [T, T] scores * scale
    mask: np.ndarray  # [T, T] bool, True where the key is visible
    masked: np.ndarray  # [T, T] scaled, -inf where hidden
    weights: np.ndarray  # [T, T] softmax of masked, rows sum to 1
    out: np.ndarray  # [T, Dh] weights @ v
    causal: bool

    @property
    def n_tokens(self) -> int:
        return int(self.q.shape[0])


def head_steps(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float | None = None,
               causal: bool = True, window: int | None = None) -> HeadSteps:
    """softmax(Q·Kᵀ · scale + M)·V for one head, keeping each step.

    q, k, v: [T, Dh]. scale defaults to 1/√Dh. M is 0 where visible and -inf where hidden: the
    mask is *added* before the softmax so that hidden keys get exp(-inf) = 0 and the visible ones
    still sum to 1 (zeroing weights after the softmax would leave rows summing to less than 1).
    Example: head_steps(np.eye(2), np.eye(2), np.eye(2), scale=1.0).weights
             -> [[1, 0], [0.269, 0.731]]   (row 1: softmax([0, 1]))
    """
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    if q.ndim != 2 or k.shape != q.shape or v.ndim != 2 or v.shape[0] != q.shape[0]:
        raise ValueError(f"q, k, v must be [T, Dh] with the same T, got {q.shape}, {k.shape}, {v.shape}")
    t, d_head = q.shape
    if scale is None:
        scale = 1.0 / math.sqrt(d_head)
    scores = q @ k.T  # [T, T]: row i holds query i against every key j
    scaled = scores * scale
    mask = causal_mask(t) if causal else np.ones((t, t), dtype=bool)
    if window is not None:  # a local layer (Gemma 3): keys more than `window` - 1 tokens back are hidden too
        i = np.arange(t)
        mask = mask & (i[None, :] > i[:, None] - window)
    masked = np.where(mask, scaled, -np.inf)
    weights = softmax(masked)
    return HeadSteps(q=q, k=k, v=v, scores=scores, scale=float(scale), scaled=scaled, mask=mask,
                     masked=masked, weights=weights, out=weights @ v, causal=causal)


def capture_head_steps(cap: Capture, layer: int, head: int, scale: float | None = None,
                       causal: bool = True) -> HeadSteps:
    """head_steps on the captured q, k, v of (layer, head); the key/value head follows GQA.

    Example: capture_head_steps(cap, 3, 5).weights ≈ cap.attention(3, 5)   (to 1e-4, tested)
    """
    check_head(cap.n_layers, cap.n_heads, layer, head)
    window = cap.layer_window(layer) if causal else None  # the layer's own sliding window, if the text passes it
    return head_steps(cap.query(layer, head), cap.key(layer, head), cap.value(layer, head), scale, causal, window)


def check_head(n_layers: int, n_heads: int, layer: int, head: int) -> None:
    """IndexError unless 0 <= layer < n_layers and 0 <= head < n_heads.

    Example: check_head(30, 9, 30, 0) raises IndexError
    """
    if not (0 <= layer < n_layers and 0 <= head < n_heads):
        raise IndexError(f"layer {layer} / head {head} outside 0..{n_layers - 1} / 0..{n_heads - 1}")


def clamp_head(n_layers: int, n_heads: int, layer: Any, head: Any) -> tuple[int, int]:
    """The nearest valid (layer, head): a choice kept from a bigger model must not break a page.

    Example: clamp_head(2, 4, 15, 7) -> (1, 3); clamp_head(2, 4, "x", None) -> (0, 0)
    """
    def fit(x: Any, n: int) -> int:
        try:
            return min(max(int(x), 0), n - 1)
        except (TypeError, ValueError):
            return 0
    return fit(layer, n_layers), fit(head, n_heads)


def module_scale(loaded: LoadedModel, layer: int) -> float:
    """The factor the model itself multiplies its scores by, read from its attention module.

    1/√Dh for Llama and GPT-2; GPT-2 configs with `scale_attn_by_inverse_layer_idx` divide it
    further by layer + 1, which is why it is read rather than assumed.
    Example: module_scale(load_model(), 0) -> 0.125   (Dh = 64)
    """
    block = loaded.adapter.blocks(loaded.model)[layer]
    scaling = getattr(loaded.adapter.attention(block), "scaling", None)
    return float(scaling) if scaling is not None else 1.0 / math.sqrt(loaded.info.d_head)


# --------------------------------------------------------------------------- heads together


@dataclass(frozen=True)
class LayerOutput:
    """The attention sublayer's output for one layer, rebuilt from the capture."""

    heads: np.ndarray  # [H, T, Dh] each head's weighted sum of values
    concat: np.ndarray  # [T, H*Dh] heads side by side, head 0 first
    out: np.ndarray  # [T, D] the output projection of concat (what is added to the residual stream)
    per_head: np.ndarray  # [H, T, D] each head's share of out (out = per_head.sum(0) + bias)
    bias: np.ndarray  # [D] the projection's bias (zeros when it has none)


def layer_output(loaded: LoadedModel, cap: Capture, layer: int) -> LayerOutput:
    """Concatenate the heads of `layer` and project them with the model's own output module.

    The projection is linear, so each head's contribution is the projection of `concat` with
    every other head zeroed, minus the bias: the page can show who wrote what.
    Example: layer_output(lm, cap, 0).out.shape -> (T, 576)
    """
    check_head(cap.n_layers, cap.n_heads, layer, 0)
    n_heads, t, d_head = cap.q.shape[1], cap.n_tokens, cap.q.shape[-1]
    heads = np.stack([head_steps(cap.query(layer, h), cap.key(layer, h), cap.value(layer, h),
                                 scale=module_scale(loaded, layer)).out for h in range(n_heads)])  # [H, T, Dh]
    concat = heads.transpose(1, 0, 2).reshape(t, n_heads * d_head)  # [T, H*Dh]
    # One head at a time: [H, T, H*Dh] with zeros outside head h's slice.
    alone = np.zeros((n_heads, t, n_heads * d_head), dtype=np.float32)
    for h in range(n_heads):
        alone[h, :, h * d_head:(h + 1) * d_head] = heads[h]
    proj = loaded.adapter.o_proj(loaded.adapter.blocks(loaded.model)[layer])
    with loaded.lock, torch.inference_mode():
        dtype = next(proj.parameters()).dtype
        out = proj(torch.from_numpy(concat.astype(np.float32)).to(dtype)).float().numpy()
        bias = proj(torch.zeros((1, n_heads * d_head), dtype=dtype)).float().numpy()[0]
        per_head = proj(torch.from_numpy(alone).to(dtype)).float().numpy() - bias
    return LayerOutput(heads=heads, concat=concat, out=out, per_head=per_head, bias=bias)


# --------------------------------------------------------------------------- what a head looks at


def word_ids(text: str, offsets: np.ndarray) -> np.ndarray:
    """[T] a word number per token: a word is a run of non-space characters of the text.

    A token starts a new word when it is the first, when its span is empty (special tokens such
    as <s>), when it begins with whitespace, or when the character before it is whitespace.
    Punctuation glued to a word belongs to it ("tired." is one word); a token of whitespace alone
    makes a word of its own.
    Example: word_ids("un gatto", [[0, 2], [2, 5], [5, 8]]) -> [0, 1, 1]
    """
    ids: list[int] = []
    word, prev_end, prev_empty = -1, 0, True
    for s, e in np.asarray(offsets, dtype=np.int64).reshape(-1, 2).tolist():
        empty = e <= s
        # Byte-level tokenizers split one character (an emoji) into tokens with overlapping
        # spans: a token starting inside the previous one continues its word.
        starts_clean = s >= prev_end and (text[s:e][:1].isspace() or (s > 0 and text[s - 1].isspace()))
        word += 1 if (not ids or empty or prev_empty or starts_clean) else 0
        ids.append(word)
        prev_end, prev_empty = max(prev_end, e), empty
    return np.asarray(ids, dtype=np.int64)


def pattern_targets(token_ids: np.ndarray, words: np.ndarray) -> dict[str, np.ndarray]:
    """For each pattern, a [T, T] boolean matrix of the keys it counts, row by row.

    previous: key i-1; first: key 0; self: key i; same_token: earlier keys j >= 1 with the same
    token id; same_word: earlier keys j >= 1 in the same word. Key 0 is left out of the last two
    so that the usual "attention sink" on the first token is not mistaken for them.
    Example: pattern_targets(np.array([5, 7, 5]), np.array([0, 1, 2]))["same_token"][2]
             -> [False, False, False]   (the copy at 0 is the first token, not counted)
    """
    ids = np.asarray(token_ids)
    words = np.asarray(words)
    t = ids.shape[0]
    i, j = np.indices((t, t))
    earlier = (j < i) & (j >= 1)
    return {
        "previous": j == i - 1,
        "first": j == 0,
        "self": j == i,
        "same_token": earlier & (ids[:, None] == ids[None, :]),
        "same_word": earlier & (words[:, None] == words[None, :]),
    }


def pattern_rows(targets: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """[T] booleans: the rows on which each pattern can be told apart from the others.

    previous and first: rows i >= 2 (at row 1 the previous token *is* the first one).
    self: rows i >= 1 (row 0 can only read itself). same_token / same_word: rows that have one.
    Example: pattern_rows(pattern_targets(np.arange(3), np.arange(3)))["previous"] -> [F, F, T]
    """
    t = next(iter(targets.values())).shape[0]
    rows = np.arange(t)
    return {
        "previous": rows >= 2,
        "first": rows >= 2,
        "self": rows >= 1,
        "same_token": targets["same_token"].any(-1),
        "same_word": targets["same_word"].any(-1),
    }


# Patterns counted only on some rows, and the previous token's share measured on those same rows
# (key "previous@<pattern>"): the fair rival. On the rows that have an earlier piece of the same
# word, that piece is often the previous token itself, so a previous-token head scores as high on
# "same_word" as on "previous"; it reads the word only if it beats the previous token there.
CONDITIONAL: tuple[str, ...] = ("same_token", "same_word")
MARGIN = 0.1  # how much a conditional pattern must beat the previous token on its own rows


def _share(flat: np.ndarray, keys: np.ndarray, rows: np.ndarray, lead: tuple, chunk: int) -> np.ndarray:
    """Mean over the chosen rows of the weight on the chosen keys, for every head of flat [N, T, T]."""
    ii, jj = np.nonzero(keys & rows[:, None])  # the (row, key) pairs counted
    n_rows = int(rows.sum())
    if n_rows == 0:
        return np.full(lead, np.nan)
    # Mean over rows of each row's sum = sum over all pairs / rows. Heads go in chunks, so a
    # 512-token text with many repeats never builds a [270, pairs] temporary at once.
    total = np.concatenate([flat[s:s + chunk][:, ii, jj].sum(-1, dtype=np.float64)
                            for s in range(0, flat.shape[0], chunk)])
    return (total / n_rows).reshape(lead)


def pattern_scores(attn: np.ndarray, token_ids: np.ndarray, words: np.ndarray,
                   chunk: int = 16) -> dict[str, np.ndarray]:
    """Mean share of attention each pattern receives, for one head or many at once.

    attn: [..., T, T] (one head [T, T], or every head [L, H, T, T]). Returns {pattern: [...]},
    the average over the rows where the pattern is measurable of the weight on its keys; NaN
    where no row qualifies (a text too short, no repeated token). Also "previous@same_token" and
    "previous@same_word": the previous token's share on those patterns' rows (see CONDITIONAL).
    Example: a head that always reads the previous token has scores["previous"] == 1.0
    """
    attn = np.asarray(attn)
    t = attn.shape[-1]
    lead = attn.shape[:-2]
    flat = attn.reshape(-1, t, t)  # [N, T, T], N = L*H heads
    targets = pattern_targets(token_ids, words)
    rows = pattern_rows(targets)
    out = {name: _share(flat, targets[name], rows[name], lead, chunk) for name in PATTERNS}
    for name in CONDITIONAL:
        out[f"previous@{name}"] = _share(flat, targets["previous"], rows[name], lead, chunk)
    return out


GAP_BYTE = 0  # the byte of "no cell" in `probabilities_as_bytes`


def probabilities_as_bytes(p: np.ndarray) -> np.ndarray:
    """Probabilities in [0, 1] as bytes 1..255, NaN (no cell) as GAP_BYTE (0): a quarter of float32's
    bytes for a picture (255 steps are finer than a colour scale shows), with the gap a typed array
    cannot hold as NaN. Values outside [0, 1] are clipped. (The gap is 0, not 255: base64 writes
    runs of 255 as "////", and plotly's JSON escapes every "/" as six characters.)

    Example: probabilities_as_bytes(np.array([0.0, 0.5, 1.0, np.nan])) -> array([1, 128, 255, 0], dtype=uint8)
    """
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, GAP_BYTE, dtype=np.uint8)
    ok = ~np.isnan(p)
    out[ok] = 1 + np.rint(np.clip(p[ok], 0.0, 1.0) * 254).astype(np.uint8)
    return out


def row_entropy(attn: np.ndarray) -> np.ndarray:
    """Mean normalised entropy of the rows (rows i >= 1): 0 = one key, 1 = evenly spread.

    Row i can see i + 1 keys, so its entropy is divided by log(i + 1).
    Example: row_entropy(causal uniform attention) -> 1.0
    """
    attn = np.asarray(attn, dtype=np.float64)
    t = attn.shape[-1]
    if t < 2:
        return np.full(attn.shape[:-2], np.nan)
    a = attn[..., 1:, :]
    log_a = np.log(a, out=np.zeros_like(a), where=a > 0)  # 0·log 0 counts as 0
    ent = -(a * log_a).sum(-1)  # [..., T-1]
    return (ent / np.log(np.arange(2, t + 1))).mean(-1)


def strongest_pattern(scores: dict[str, float], threshold: float = 0.4, margin: float = MARGIN) -> str | None:
    """The pattern with the largest score if it reaches `threshold`, else None (no clear pattern).

    A conditional pattern (same token, same word) counts only if it beats the previous token's
    share on its own rows (`scores["previous@<name>"]`, when given) by `margin`: otherwise the
    head is reading the previous token, which there happens to be the same word.
    Ties go to the earlier name in PATTERNS (the simpler explanation).
    Example: strongest_pattern({"previous": 0.8, "first": 0.1}) -> "previous"
    Example: strongest_pattern({"previous": 0.85, "same_word": 0.86, "previous@same_word": 0.86}) -> "previous"
    """
    def fine(name: str) -> bool:
        value = scores.get(name)
        if value is None or not np.isfinite(value) or value < threshold:
            return False
        rival = scores.get(f"previous@{name}")
        return rival is None or not np.isfinite(rival) or value - rival >= margin

    found = [(name, float(scores[name])) for name in PATTERNS if fine(name)]
    return max(found, key=lambda x: x[1])[0] if found else None  # max keeps the first of equals


# --------------------------------------------------------------------------- GQA and the KV cache


def gqa_groups(n_heads: int, n_kv_heads: int) -> tuple[tuple[int, ...], ...]:
    """The query heads that read each key/value head (consecutive heads share one).

    Same rule as Capture.kv_head and transformers' repeat_kv.
    Example: gqa_groups(9, 3) -> ((0, 1, 2), (3, 4, 5), (6, 7, 8))
    """
    if n_kv_heads <= 0 or n_heads % n_kv_heads:
        raise ValueError(f"{n_heads} query heads cannot be split evenly among {n_kv_heads} KV heads")
    g = n_heads // n_kv_heads
    return tuple(tuple(range(i * g, (i + 1) * g)) for i in range(n_kv_heads))


@dataclass(frozen=True)
class KvVariant:
    """One way of sharing keys and values, with the cache it needs."""

    name: str  # "classic", "multi_query" or "grouped"
    n_kv_heads: int
    bytes: int  # KV cache for the given tokens
    saving: float  # classic bytes / these bytes


def kv_variants(config: dict[str, Any], tokens: int, dtype_bytes: int = 2) -> tuple[KvVariant, ...]:
    """Classic (one KV head per query head), multi-query (one for all), grouped (the config's).

    Bytes come from lib.model.arithmetic.kv_cache_bytes with the KV-head count replaced.
    Example: kv_variants(Llama-3 8B, 8192)[2] -> grouped, 8 KV heads, 1,073,741,824 bytes, saving 4.0
    """
    n_heads = config.get("num_attention_heads", config.get("n_head"))
    n_kv = config.get("num_key_value_heads") or n_heads
    classic = kv_cache_bytes(dict(config, num_key_value_heads=n_heads), tokens, dtype_bytes=dtype_bytes)
    rows = []
    for name, kv in (("classic", n_heads), ("multi_query", 1), ("grouped", n_kv)):
        b = kv_cache_bytes(dict(config, num_key_value_heads=kv), tokens, dtype_bytes=dtype_bytes)
        rows.append(KvVariant(name=name, n_kv_heads=int(kv), bytes=int(b), saving=classic / b))
    return tuple(rows)


def shown_variants(variants: tuple[KvVariant, ...]) -> tuple[tuple[KvVariant, bool], ...]:
    """Each distinct configuration of `kv_variants` once, with True beside the model's own setting:
    a model whose grouped setting is really classic (as many KV heads as query heads) or
    multi-query (one KV head) shows that row once, marked as its own, not twice with opposite
    trade-offs.

    Example: [(v.name, own) for v, own in shown_variants(kv_variants(gemma_270m, 8192))]
             -> [("classic", False), ("multi_query", True)]
    """
    grouped = next(v for v in variants if v.name == "grouped")
    twin = next((v for v in variants if v.name != "grouped" and v.n_kv_heads == grouped.n_kv_heads), None)
    own = twin or grouped
    return tuple((v, v is own) for v in variants if v is not grouped or twin is None)


# --------------------------------------------------------------------------- why √Dh


@dataclass(frozen=True)
class ScalingDemo:
    """Random queries and keys of width Dh, with and without the 1/√Dh scaling."""

    d_head: int
    seed: int
    raw: np.ndarray  # [n_samples] q·k of random vectors with entries of variance 1
    scaled: np.ndarray  # [n_samples] raw / √Dh
    var_raw: float  # ≈ Dh
    var_scaled: float  # ≈ 1
    weights_raw: np.ndarray  # [n_keys] softmax of one query's unscaled scores
    weights_scaled: np.ndarray  # [n_keys] the same row, scaled
    max_raw: float  # mean over many queries of the largest unscaled weight (→ 1: saturated)
    max_scaled: float  # the same with the scaling


def scaling_demo(d_head: int, n_samples: int = 4000, n_keys: int = 8, seed: int = 0) -> ScalingDemo:
    """Show that dot products of random unit-variance vectors have variance Dh.

    Each of the Dh products q_i·k_i has variance 1 and they are independent, so their sum has
    variance Dh; dividing by √Dh brings it back to 1 whatever the width. Without it the largest
    score dominates the softmax more and more as Dh grows.
    Example: scaling_demo(64).var_raw ≈ 64, .var_scaled ≈ 1 (same seed, same numbers)
    """
    if d_head < 1:
        raise ValueError("d_head must be at least 1")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_head))
    k = rng.standard_normal((n_samples, d_head))
    raw = np.einsum("nd,nd->n", q, k)
    scaled = raw / math.sqrt(d_head)
    n_rows = max(1, n_samples // n_keys)
    rows = np.einsum("nd,nkd->nk", q[:n_rows], k[: n_rows * n_keys].reshape(n_rows, n_keys, d_head))  # [rows, keys]
    w_raw, w_scaled = softmax(rows), softmax(rows / math.sqrt(d_head))
    return ScalingDemo(d_head=d_head, seed=seed, raw=raw, scaled=scaled, var_raw=float(raw.var()),
                       var_scaled=float(scaled.var()), weights_raw=w_raw[0], weights_scaled=w_scaled[0],
                       max_raw=float(w_raw.max(-1).mean()), max_scaled=float(w_scaled.max(-1).mean()))


# --------------------------------------------------------------------------- cost and flash attention


def window_pairs(n_tokens: int, window: int) -> int:
    """Query-key pairs a sliding-window layer computes: token i reads min(i + 1, W) keys.

    Example: window_pairs(5, 2) -> 1 + 2 + 2 + 2 + 2 = 9
    """
    n, w = int(n_tokens), int(window)
    if n <= w:
        return n * (n + 1) // 2
    return w * (w + 1) // 2 + (n - w) * w


def attention_flops(n_tokens: int, width: int, n_layers: int, causal: bool = False,
                    window: int | None = None, n_local: int = 0) -> float:
    """FLOPs of the two n x n products of attention, Q·Kᵀ and weights·V, over all layers.

    Each is 2·n²·d (a multiply and an add per term) with d = H·Dh summed over heads: 4·n²·d·L.
    With a causal mask only the n(n+1)/2 visible pairs are needed, about half. `n_local` of the
    layers read only the last `window` keys (causal by construction): `window_pairs` each.
    Example: attention_flops(2048, 4096, 32) -> 2.199e12 (Llama-3 8B, 2.2 TFLOP)
    """
    pairs = n_tokens * (n_tokens + 1) / 2 if causal else float(n_tokens) ** 2
    if not window or not n_local:
        return 4.0 * pairs * width * n_layers
    return 4.0 * width * (pairs * (n_layers - n_local) + window_pairs(n_tokens, window) * n_local)


def attention_memory(n_tokens: int, d_head: int, block_q: int, block_k: int,
                     dtype_bytes: int = FLOAT_BYTES) -> tuple[int, int]:
    """(naive, tiled) bytes one head needs beyond its inputs q, k, v and its output.

    Naive: the whole [T, T] score matrix. Tiled: one [Bq, Bk] tile, one [Bq, Dh] accumulator,
    and a running maximum and sum per row (2·T numbers, linear in T).
    Example: attention_memory(4096, 64, 64, 64) -> (67,108,864, 65,536)   (64 MiB against 64 KiB)
    """
    naive = n_tokens * n_tokens * dtype_bytes
    tiled = (block_q * block_k + block_q * d_head + 2 * n_tokens) * dtype_bytes
    return naive, tiled


@dataclass(frozen=True)
class FlashStep:
    """One tile of the tiled softmax: query rows [q0, q1) against key columns [k0, k1)."""

    q_block: int
    k_block: int
    q0: int
    q1: int
    k0: int
    k1: int
    scores: np.ndarray  # [Bq, Bk] scaled scores of the tile, -inf where masked
    row_max: np.ndarray  # [Bq] running maximum m after this tile
    row_sum: np.ndarray  # [Bq] running sum l of exp(score - m) after this tile
    rescale: np.ndarray  # [Bq] exp(m_old - m_new): how much the earlier partial sums shrank
    partial: np.ndarray  # [Bq, Dh] the rows' output so far, acc / l


@dataclass(frozen=True)
class FlashRun:
    """The result of flash_attention and all its tiles, in the order they were computed."""

    out: np.ndarray  # [T, Dh]
    steps: tuple[FlashStep, ...]
    skipped: tuple[tuple[int, int], ...]  # (q_block, k_block) tiles entirely above the diagonal
    block_q: int
    block_k: int
    n_q_blocks: int
    n_k_blocks: int
    naive_bytes: int
    tiled_bytes: int


def flash_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, block_q: int = 16, block_k: int = 16,
                    scale: float | None = None, causal: bool = True, window: int | None = None,
                    record: bool = True) -> FlashRun:  # long: the tiled softmax whole, as its docstring tells it
    """Attention computed tile by tile with an online softmax, never holding the [T, T] matrix.

    For each block of query rows, walk the key blocks left to right, keeping per row a running
    maximum m, a running sum l of exp(s - m) and an accumulator acc of exp(s - m)·V. When a tile
    raises m, everything summed so far was measured against the old maximum, so l and acc are
    multiplied by exp(m_old - m_new) before adding the tile. At the end out = acc / l, exactly the
    softmax(QKᵀ)·V of the naive way. Tiles entirely above the causal diagonal are skipped, and on a
    local layer (`window`, as head_steps) so are tiles whose keys are all out of every row's window.
    Example: np.allclose(flash_attention(q, k, v, 4, 4).out, head_steps(q, k, v).out) -> True

    q, k, v may carry leading dimensions ([..., T, Dh], e.g. every head of a layer at once): each
    tile is then one product over all of them, and every array of the run carries them too. With
    `record=False` the tiles are not kept (`steps` is empty), only `out` and the skipped tiles.
    """
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    t, d_head = q.shape[-2:]
    lead = q.shape[:-2]
    if block_q < 1 or block_k < 1:
        raise ValueError("block sizes must be positive")
    if scale is None:
        scale = 1.0 / math.sqrt(d_head)
    out = np.zeros(q.shape)
    kt = np.swapaxes(k, -1, -2)  # [..., Dh, T]
    steps: list[FlashStep] = []
    skipped: list[tuple[int, int]] = []
    n_qb, n_kb = -(-t // block_q), -(-t // block_k)
    for qb in range(n_qb):
        q0, q1 = qb * block_q, min(t, (qb + 1) * block_q)
        m = np.full((*lead, q1 - q0), -np.inf)  # [..., Bq]
        l = np.zeros((*lead, q1 - q0))  # [..., Bq]
        acc = np.zeros((*lead, q1 - q0, d_head))  # [..., Bq, Dh]
        for kb in range(n_kb):
            k0, k1 = kb * block_k, min(t, (kb + 1) * block_k)
            if causal and k0 > q1 - 1:  # every key of the tile is after every query: nothing to see
                skipped.append((qb, kb))
                continue
            if causal and window is not None and k1 - 1 <= q0 - window:  # all too far back for every row
                skipped.append((qb, kb))
                continue
            s = (q[..., q0:q1, :] @ kt[..., k0:k1]) * scale  # [..., Bq, Bk]
            if causal:
                kj, qi = np.arange(k0, k1)[None, :], np.arange(q0, q1)[:, None]
                visible = kj <= qi
                if window is not None:
                    visible &= kj > qi - window
                s = np.where(visible, s, -np.inf)
            m_new = np.maximum(m, s.max(-1))
            # Without a window every row sees key 0 in the first tile, so m_new is finite from then
            # on. With one, a row may see nothing in a tile: its max stays -inf, and it is measured
            # against 0 instead so that exp gives 0, not nan; exp(-inf - finite) = 0 as before.
            ref = np.where(np.isfinite(m_new), m_new, 0.0)
            rescale = np.where(np.isfinite(m), np.exp(m - ref), 0.0)
            p = np.exp(s - ref[..., None])  # [..., Bq, Bk], 0 where masked
            l = l * rescale + p.sum(-1)
            acc = acc * rescale[..., None] + p @ v[..., k0:k1, :]
            m = m_new
            if record:
                partial = np.divide(acc, l[..., None], out=np.zeros_like(acc), where=l[..., None] > 0)
                steps.append(FlashStep(q_block=qb, k_block=kb, q0=q0, q1=q1, k0=k0, k1=k1, scores=s,
                                       row_max=m.copy(), row_sum=l.copy(), rescale=rescale,
                                       partial=partial))
        out[..., q0:q1, :] = acc / l[..., None]
    naive, tiled = attention_memory(t, d_head, min(block_q, t), min(block_k, t), FLOAT_BYTES)
    return FlashRun(out=out, steps=tuple(steps), skipped=tuple(skipped), block_q=block_q, block_k=block_k,
                    n_q_blocks=n_qb, n_k_blocks=n_kb, naive_bytes=naive, tiled_bytes=tiled)
