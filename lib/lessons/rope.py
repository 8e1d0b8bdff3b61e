"""Rotary position embedding (RoPE): how a Llama-family model tells "where" from "what".

Attention compares tokens with dot products, and a dot product does not care where a token sits:
without extra information a shuffled sentence gives the same set of outputs. RoPE adds position
by *rotating* queries and keys. The Dh numbers of a head are split into Dh/2 pairs; pair i is a
point on a plane, turned by the angle m·θ_i at position m, with θ_i = base^(−2i/Dh). Because a
rotation by a and one by b leave a dot product that depends only on b − a, the score of a query at
position n and a key at position m depends on their contents and on n − m alone.

Two conventions pair the dimensions differently, with the same maths:
- half-split (Hugging Face's Llama, used here and by `lib.model.capture`): dimension i is paired with
  i + Dh/2; `apply_rotary` is x·cos + rotate_half(x)·sin, as in transformers.
- interleaved (Meta's original code, complex numbers): dimension 2i is paired with 2i + 1.
  `half_to_interleaved` is the permutation that maps one layout onto the other; transformers'
  weight conversion applies the same permutation to the rows of W_q and W_k, so both models
  compute identical attention scores.

Also here, for the lesson's demonstrations: a position-free toy attention head (random
projections, no mask) and its RoPE version (`shuffle_demo`), the score of fixed q and k against
their distance, and the cosine similarity between the rows of a learned absolute position table
(GPT-2's alternative).

Deliberately left out: RoPE scaling variants (linear, NTK, YaRN, Llama-3's frequency bands: the
model's own cos/sin, passed to `apply_rotary`, cover them), partial rotary dimensions, ALiBi.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

DEFAULT_BASE = 10_000.0  # the original RoPE paper's base (Llama 1/2); SmolLM2 uses 1e5

Array = np.ndarray | torch.Tensor


def frequencies(d_head: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """[Dh/2] θ_i = base^(−2i/Dh), in radians per token: pair 0 turns fastest, the last slowest.

    Example: frequencies(4, 10_000) -> [1.0, 0.01]
    """
    if d_head <= 0 or d_head % 2:
        raise ValueError(f"d_head must be a positive even number, not {d_head}")
    return base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)


def angles(positions: np.ndarray | list[int], d_head: int, base: float = DEFAULT_BASE,
           inv_freq: np.ndarray | None = None) -> np.ndarray:
    """[T, Dh/2] the angle m·θ_i (radians, not reduced) of every pair i at every position m.

    `inv_freq` replaces the θ_i (e.g. a scaled model's own `rotary_emb.inv_freq`).
    Example: angles([0, 1, 2], 4, 10_000)[2] -> [2.0, 0.02]
    """
    theta = frequencies(d_head, base) if inv_freq is None else np.asarray(inv_freq, dtype=np.float64)
    return np.asarray(positions, dtype=np.float64)[:, None] * theta[None, :]


def periods(d_head: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """[Dh/2] tokens needed for pair i to turn once: 2π/θ_i.

    Example: periods(4, 10_000) -> [6.283..., 628.3...]
    """
    return 2 * np.pi / frequencies(d_head, base)


def cos_sin(positions: np.ndarray | list[int], d_head: int, base: float = DEFAULT_BASE,
            inv_freq: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """([T, Dh], [T, Dh]) cos and sin laid out for the half-split convention.

    Column i and column i + Dh/2 hold the same angle, as in transformers' `cat((freqs, freqs))`.
    Example: cos_sin([0], 4)[0] -> [[1, 1, 1, 1]]
    """
    a = angles(positions, d_head, base, inv_freq)
    a = np.concatenate([a, a], axis=-1)
    return np.cos(a), np.sin(a)


def rotate_half(x: Array) -> Array:
    """[..., Dh] -> [..., Dh]: (x1, x2) -> (−x2, x1), the 90° turn of every half-split pair.

    Example: rotate_half(np.array([1., 2., 3., 4.])) -> [-3, -4, 1, 2]
    """
    half = x.shape[-1] // 2
    if isinstance(x, torch.Tensor):
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return np.concatenate((-x[..., half:], x[..., :half]), axis=-1)


def apply_rotary(x: Array, cos: Array, sin: Array) -> Array:
    """RoPE from precomputed cos/sin, half-split: x·cos + rotate_half(x)·sin (the one implementation).

    x: [..., T, Dh]; cos, sin: [T, Dh] (broadcast over the leading dims). Works on numpy arrays
    and torch tensors; `lib.model.capture` calls it with the model's own cos/sin.
    For pair (a, b) = (x_i, x_{i+Dh/2}) at angle φ this is (a cos φ − b sin φ, b cos φ + a sin φ).
    Example: apply_rotary(np.array([1., 0.]), np.array([0., 0.]), np.array([1., 1.])) -> [0, 1]
    """
    return x * cos + rotate_half(x) * sin


def apply_rope(x: Array, positions: np.ndarray | list[int] | None = None, base: float = DEFAULT_BASE,
               inv_freq: np.ndarray | None = None) -> Array:
    """Rotate x [..., T, Dh] by its positions (default 0..T−1), half-split, as HF's Llama does.

    Returns the same type as x (numpy or torch, same dtype). The angles are computed in float64
    and cast, so float32 results can differ from the model's float32 cos/sin by ~1e−6·position.
    Example: apply_rope(np.array([[1., 0.], [1., 0.]]), [0, 1], base=1.0) -> [[1, 0], [cos 1, sin 1]]
    """
    t, d_head = x.shape[-2], x.shape[-1]
    positions = np.arange(t) if positions is None else np.asarray(positions)
    if len(positions) != t:
        raise ValueError(f"{len(positions)} positions for {t} rows")
    cos, sin = cos_sin(positions, d_head, base, inv_freq)
    if isinstance(x, torch.Tensor):
        cos, sin = (torch.from_numpy(c).to(dtype=x.dtype, device=x.device) for c in (cos, sin))
    else:
        cos, sin = cos.astype(x.dtype, copy=False), sin.astype(x.dtype, copy=False)
    return apply_rotary(x, cos, sin)


def half_to_interleaved(d_head: int) -> np.ndarray:
    """[Dh] the permutation p with x_interleaved = x_half[..., p]: (0, Dh/2, 1, Dh/2+1, ...).

    Half-split pair i is (i, i + Dh/2); after the permutation it sits at (2i, 2i + 1).
    Example: half_to_interleaved(6) -> [0, 3, 1, 4, 2, 5]
    """
    half = d_head // 2
    return np.stack([np.arange(half), np.arange(half) + half], axis=-1).reshape(-1)


def interleaved_to_half(d_head: int) -> np.ndarray:
    """[Dh] the inverse permutation: x_half = x_interleaved[..., p].

    Example: interleaved_to_half(6) -> [0, 2, 4, 1, 3, 5]
    """
    return np.argsort(half_to_interleaved(d_head))


def apply_rope_interleaved(x: torch.Tensor, positions: np.ndarray | list[int] | None = None,
                           base: float = DEFAULT_BASE) -> torch.Tensor:
    """Meta's form: pairs (2i, 2i+1) read as complex numbers and multiplied by e^{i·m·θ_i}.

    x: [..., T, Dh] float tensor, dims in interleaved order. Equal to
    `apply_rope(x[..., interleaved_to_half(Dh)])[..., half_to_interleaved(Dh)]`.
    Example: apply_rope_interleaved(torch.tensor([[1., 0.]]), [1], base=1.0) -> [[cos 1, sin 1]]
    """
    t, d_head = x.shape[-2], x.shape[-1]
    positions = np.arange(t) if positions is None else np.asarray(positions)
    a = torch.from_numpy(angles(positions, d_head, base))  # [T, Dh/2]
    rot = torch.polar(torch.ones_like(a), a)  # e^{i·m·θ_i}, complex128
    z = torch.view_as_complex(x.to(torch.float64).reshape(*x.shape[:-1], d_head // 2, 2).contiguous())
    return torch.view_as_real(z * rot).reshape(x.shape).to(x.dtype)


def pair_points(x: np.ndarray, pair: int) -> np.ndarray:
    """[T, 2] the plane of half-split pair `pair`: columns x_i and x_{i+Dh/2} of x [T, Dh].

    Example: pair_points(np.arange(8.).reshape(2, 4), 1) -> [[1, 3], [5, 7]]
    """
    half = x.shape[-1] // 2
    return np.stack([x[..., pair], x[..., pair + half]], axis=-1)


def scores(q: np.ndarray, k: np.ndarray, q_pos: np.ndarray | list[int], k_pos: np.ndarray | list[int],
           base: float = DEFAULT_BASE) -> np.ndarray:
    """[Tq, Tk] dot products of q [Tq, Dh] and k [Tk, Dh] after rotating each by its own position.

    The entry (a, b) depends on q_pos[a] − k_pos[b] only, not on the positions themselves.
    Example: scores(q, k, [5], [2]) == scores(q, k, [105], [102])  (to float precision)
    """
    q64, k64 = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    return apply_rope(q64, q_pos, base) @ apply_rope(k64, k_pos, base).T


def score_vs_distance(q: np.ndarray, k: np.ndarray, distances: np.ndarray, base: float = DEFAULT_BASE) -> np.ndarray:
    """[N] the RoPE score of a query n tokens after a key, for each n in `distances`.

    Closed form: Σ_i (a_i·c_i + b_i·d_i)·cos(nθ_i) + (a_i·d_i − b_i·c_i)·sin(nθ_i), with (a_i, b_i)
    and (c_i, d_i) the half-split pairs of q and k; computed here by rotating, like `scores`.
    Example: score_vs_distance(q, q, [0]) -> [q·q]
    """
    distances = np.asarray(distances)
    q_at = apply_rope(np.repeat(np.asarray(q, dtype=np.float64)[None, :], len(distances), 0), distances, base)
    return q_at @ np.asarray(k, dtype=np.float64)  # the key sits at position 0: not rotated


def seeded_vector(d: int, seed: int) -> np.ndarray:
    """[d] a standard normal vector from an explicit seed (same seed, same vector).

    Example: np.allclose(seeded_vector(4, 1), seeded_vector(4, 1)) -> True
    """
    return np.random.default_rng(seed).standard_normal(d)


def toy_projections(d_model: int, d_head: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """([D, Dh], [D, Dh]) random query and key matrices for the toy head, from an explicit seed.

    Entries are N(0, 1/D), so a unit-RMS input gives queries and keys with entries of about 1.
    Example: toy_projections(8, 4, seed=0)[0].shape -> (8, 4)
    """
    rng = np.random.default_rng(seed)
    scale = 1 / np.sqrt(d_model)
    return rng.standard_normal((d_model, d_head)) * scale, rng.standard_normal((d_model, d_head)) * scale


def toy_attention(x: np.ndarray, wq: np.ndarray, wk: np.ndarray, positions: np.ndarray | None = None,
                  base: float = DEFAULT_BASE) -> tuple[np.ndarray, np.ndarray]:
    """(weights [T, T], outputs [T, D]) of one toy attention head over x [T, D], with no mask.

    Rows of x are scaled to unit RMS (as a norm layer would); q = x·wq, k = x·wk, values are x
    itself; weights softmax(q·kᵀ/√Dh). With `positions=None` nothing tells the tokens apart by
    place; with positions, q and k are rotated by RoPE first (values are not, as in the model).
    Example: toy_attention(x[p], wq, wk)[1] == toy_attention(x, wq, wk)[1][p]   (order ignored)
    """
    u = np.asarray(x, dtype=np.float64)
    u = u / np.maximum(np.sqrt((u ** 2).mean(-1, keepdims=True)), 1e-12)  # [T, D]
    q, k = u @ wq, u @ wk  # [T, Dh]
    if positions is not None:
        q, k = apply_rope(q, positions, base), apply_rope(k, positions, base)
    s = q @ k.T / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return w, w @ u


@dataclass(frozen=True)
class ShuffleDemo:
    """A sentence and its shuffle through the toy head, without and with RoPE.

    order: [T] the shuffled sequence is x[order]; where: [T] the position of original token t
    in the shuffle. change_plain / change_rope: [T] for each original token,
    ‖out_original − out_shuffled‖ / ‖out_original‖ of that same token. weights_*: [T, T] the
    attention weights of the original sentence and of the shuffle, rows and columns put back in
    the original token order (so equal matrices mean "the same reading").
    """

    order: np.ndarray
    where: np.ndarray
    change_plain: np.ndarray
    change_rope: np.ndarray
    weights_plain: tuple[np.ndarray, np.ndarray]
    weights_rope: tuple[np.ndarray, np.ndarray]


def shuffle_demo(x: np.ndarray, d_head: int, seed: int, base: float = DEFAULT_BASE) -> ShuffleDemo:
    """Shuffle the rows of x [T, D] and measure how each token's toy-head output changes.

    One seed draws the toy head's projections (width `d_head`) and the shuffle. Without
    positions every change is 0 up to rounding: the outputs are the same set, reordered. With
    RoPE they differ. A shuffle that keeps the order is re-drawn (T ≥ 2), so something moves.
    Example: shuffle_demo(x, 64, seed=0).change_plain.max() < 1e-12
    """
    t = len(x)
    rng = np.random.default_rng(seed)
    wq, wk = toy_projections(x.shape[-1], d_head, int(rng.integers(2**31)))
    order = rng.permutation(t)
    while t >= 2 and np.array_equal(order, np.arange(t)):
        order = rng.permutation(t)
    where = np.argsort(order)
    pos = np.arange(t)

    def compare(positions):
        w_a, out_a = toy_attention(x, wq, wk, positions, base)
        w_b, out_b = toy_attention(x[order], wq, wk, positions, base)
        out_b, w_b = out_b[where], w_b[where][:, where]  # back to the original token order
        change = np.linalg.norm(out_a - out_b, axis=-1) / np.maximum(np.linalg.norm(out_a, axis=-1), 1e-12)
        return change, (w_a, w_b)

    plain, w_plain = compare(None)
    rope, w_rope = compare(pos)
    return ShuffleDemo(order=order, where=where, change_plain=plain, change_rope=rope,
                       weights_plain=w_plain, weights_rope=w_rope)


def score_by_distance(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean causal score q_n·k_m/√Dh for each distance n − m, from q [T, Dh] and k [T, Dh].

    Returns (distances [T], mean score [T]); only pairs with m ≤ n count (what a decoder sees).
    Example: score_by_distance(np.ones((2, 4)), np.ones((2, 4))) -> ([0, 1], [2, 2])
    """
    t, d_head = q.shape
    s = np.asarray(q, dtype=np.float64) @ np.asarray(k, dtype=np.float64).T / np.sqrt(d_head)
    n, m = np.indices((t, t))
    dist = n - m
    keep = dist >= 0
    total = np.bincount(dist[keep], weights=s[keep], minlength=t)
    count = np.bincount(dist[keep], minlength=t)
    return np.arange(t), total / count


def cosine_similarity(rows: np.ndarray) -> np.ndarray:
    """[N, N] cosine similarity between the rows of [N, D] (e.g. a learned position table).

    Example: cosine_similarity(np.array([[1., 0.], [0., 2.]])) -> [[1, 0], [0, 1]]
    """
    r = np.asarray(rows, dtype=np.float64)
    r = r / np.maximum(np.linalg.norm(r, axis=-1, keepdims=True), 1e-12)
    return r @ r.T
