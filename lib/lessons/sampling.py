"""From logits to a choice: temperature, top-k, top-p, and a reproducible draw.

The model's last step gives V scores (logits), one per token of the vocabulary. Sampling turns
them into one token in three filters, applied in the order transformers applies them in
`generate(do_sample=True)`: temperature (divide the logits by T), then top-k (keep the k highest
scores, ties at the k-th score included), then top-p (keep the smallest set of the most likely
tokens whose probability adds up to at least p; the most likely token always stays). Then one
token is drawn at random from what is left.

- `filter_probs(logits, temperature, top_k, top_p)`: the final probability vector [V].
- `filter_steps(...)`: the same, returning its work: the distribution after each filter and
  which tokens each filter kept, so a page can draw every stage without recomputing anything.
- `sample(probs, seed)`: one draw by inverse CDF, best token first, with an explicit seed or
  numpy Generator; it returns the uniform number it drew, so the page can show where it fell.
- `seed_uniform(seed)` and `draw_at(probs, u)`: the lesson's single draw, split in two so the
  browser view (static/views/sampling.js) makes the same draw: a uniform number from the seed by
  SplitMix64 (a few integer steps, easy to write twice and pinned by shared fixtures), then the
  same inverse-CDF walk as `sample`.
- `logit_cost(config, context)`: the FLOPs of the output product (2·D·V) as a share of a forward
  step, for a Hugging Face config dict.

Conventions: temperature 0 means greedy (a one-hot on the arg-max, the first one on a tie);
top_k None or 0 means off, and k >= V keeps everything; top_p None or 1.0 means off, and top_p 0
keeps only the most likely token (as transformers does, which always keeps at least one).
Computations run in float64. Ties: when the top-p cut falls inside a group of equal scores,
transformers keeps whichever tied tokens its (unstable) sort put last; here the lower token ids
win, so the kept probabilities agree but the ids of tied tokens may differ (tests show both).

Deliberately left out: min-p, typical-p, repetition penalties, beam search, batches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib.model.arithmetic import dims, param_breakdown


def _check_logits(logits: Any) -> np.ndarray:
    x = np.asarray(logits, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"logits must be a non-empty vector [V], got shape {x.shape}")
    if np.isnan(x).any() or np.isposinf(x).any():
        raise ValueError("logits must be finite numbers or -inf")
    if np.isneginf(x).all():
        raise ValueError("every logit is -inf: no token can be chosen")
    return x


def _check_params(temperature: float, top_k: int | None, top_p: float | None) -> tuple[float, int, float]:
    t = float(temperature)
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"temperature must be a number >= 0, got {temperature!r}")
    k = 0 if top_k is None else int(top_k)
    if k < 0:
        raise ValueError(f"top_k must be >= 0 (0 or None = off), got {top_k!r}")
    p = 1.0 if top_p is None else float(top_p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"top_p must be between 0 and 1 (1 or None = off), got {top_p!r}")
    return t, k, p


def softmax(x: np.ndarray) -> np.ndarray:
    """Probabilities from scores; -inf scores get probability 0.

    Subtracting the maximum first changes nothing mathematically and keeps exp() from overflowing.
    Example: softmax(np.array([0.0, np.log(3.0)])) -> [0.25, 0.75]
    """
    z = np.exp(x - np.max(x))
    return z / z.sum()


@dataclass(frozen=True)
class FilterSteps:
    """The work of the three filters on one logit vector (every array is [V], float64).

    `model` is the model's own distribution (softmax at temperature 1); `tempered` after
    temperature; `top_k` after temperature and top-k; `final` after all three. `kept_top_k`
    and `kept_top_p` are the masks each filter kept (top-p's mask includes top-k's removals);
    `cumulative` is the running sum, in descending order of score, of the distribution top-p
    cuts (the `top_k` one), with `order` the token ids in that order.
    """

    temperature: float
    top_k: int  # 0 when off (also when k >= V)
    top_p: float  # 1.0 when off
    greedy: bool
    model: np.ndarray
    tempered: np.ndarray
    top_k_probs: np.ndarray
    final: np.ndarray
    kept_top_k: np.ndarray
    kept_top_p: np.ndarray
    order: np.ndarray  # [V] token ids, highest score first (ties: lower id first)
    cumulative: np.ndarray  # [V] cumulative probability of `top_k_probs` along `order`

    @property
    def n_kept(self) -> int:
        """How many tokens can still be drawn."""
        return int(np.count_nonzero(self.final))


def filter_steps(logits: Any, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None) -> FilterSteps:
    """Temperature, then top-k, then top-p on one logit vector [V], returning every stage.

    Example: filter_steps([2.0, 1.0, 0.0, -1.0], 1.0, top_k=2).final -> [0.731, 0.269, 0, 0]
    """
    x = _check_logits(logits)  # [V]
    t, k, p = _check_params(temperature, top_k, top_p)
    v = x.size
    k = 0 if k >= v else k
    model = softmax(x)
    # Descending by score, the lower id first on a tie: a stable sort of the negated scores.
    order = np.argsort(-x, kind="stable")
    if t == 0.0:
        # The limit of T -> 0: all the probability on the best token (np.argmax: the first one).
        one_hot = np.zeros(v)
        one_hot[int(np.argmax(x))] = 1.0
        kept = one_hot > 0
        return FilterSteps(t, k, p, True, model, one_hot, one_hot, one_hot, kept, kept, order,
                           np.cumsum(one_hot[order]))
    scaled = x / t
    tempered = softmax(scaled)

    kept_k = np.ones(v, dtype=bool)
    if k:
        kth = np.partition(scaled, v - k)[v - k]  # the k-th highest score
        kept_k = scaled >= kth  # ties with the k-th score stay, as in TopKLogitsWarper
    masked = np.where(kept_k, scaled, -np.inf)
    probs_k = softmax(masked)
    cumulative = np.cumsum(probs_k[order])

    kept_p = kept_k.copy()
    if p < 1.0:
        # transformers' rule, in ascending order: drop a token while the probability of it and of
        # everything below it is <= 1 - p; the most likely token is never dropped.
        ascending = order[::-1]
        below = np.cumsum(probs_k[ascending])
        drop = below <= 1.0 - p
        drop[-1] = False
        kept_p[ascending[drop]] = False
    final = softmax(np.where(kept_p, scaled, -np.inf))
    return FilterSteps(t, k, p, False, model, tempered, probs_k, final, kept_k, kept_p, order, cumulative)


def filter_probs(logits: Any, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None) -> np.ndarray:
    """The probability vector [V] after temperature, then top-k, then top-p.

    Example: filter_probs([1.0, 1.0, 5.0], 0.0, None, None) -> [0, 0, 1] (greedy)
    Example: filter_probs([0.0, 0.0], 1.0, None, None) -> [0.5, 0.5]
    """
    return filter_steps(logits, temperature, top_k, top_p).final


def entropy(probs: np.ndarray) -> float:
    """Shannon entropy in nats; e**entropy is the 'effective number of choices'.

    Example: entropy(np.full(4, 0.25)) -> log(4) = 1.386
    """
    p = np.asarray(probs, dtype=np.float64)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


@dataclass(frozen=True)
class Draw:
    """One draw: the token id and the uniform number u in [0, 1) that picked it."""

    token: int
    u: float


def make_rng(seed: int | np.random.Generator) -> np.random.Generator:
    """A numpy Generator from a seed (or the generator itself, to continue its stream)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(int(seed))


def sample(probs: np.ndarray, seed: int | np.random.Generator) -> Draw:
    """Draw one token from `probs` [V] by inverse CDF: u ~ U[0, 1), then walk the tokens from the
    most likely down (ties: lower id first) until the running total passes u. Walking in that
    order, rather than by id, lets a page show where u fell on the chart of the best candidates;
    the distribution of the draw is the same. Same seed, same token; probability 0 never wins.

    Example: sample(np.array([0.0, 1.0, 0.0]), seed=7).token -> 1
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
        raise ValueError("probs must be a non-empty vector of non-negative numbers with a positive sum")
    return draw_at(p, float(make_rng(seed).random()))


MASK64 = (1 << 64) - 1


def seed_uniform(seed: int) -> float:
    """A uniform number in [0, 1) from an integer seed: one step of SplitMix64, its top 53 bits.

    numpy's generators are not written in the browser; SplitMix64 is three multiplications and
    shifts, so the lesson's view draws the same number from the same seed (tests/js, shared fixtures).
    Example: seed_uniform(0) -> 0.8833108082136426
    """
    z = (int(seed) + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    z ^= z >> 31
    return (z >> 11) / float(1 << 53)


def draw_at(probs: np.ndarray, u: float) -> Draw:
    """The token whose slice of the CDF holds u: tokens walked from the most likely down (ties:
    lower id first), as `sample` does after drawing its u.

    Example: draw_at(np.array([0.2, 0.5, 0.3]), 0.6) -> Draw(token=2, u=0.6)
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
        raise ValueError("probs must be a non-empty vector of non-negative numbers with a positive sum")
    order = np.argsort(-p, kind="stable")
    cdf = np.cumsum(p[order])
    i = int(np.searchsorted(cdf, u * cdf[-1], side="right"))
    # Rounding can put u·total on the very end of the CDF: fall back to the last possible token.
    i = min(i, int(np.count_nonzero(p)) - 1)
    return Draw(token=int(order[i]), u=float(u))


@dataclass(frozen=True)
class LogitCost:
    """FLOPs of one forward step for one new token, split into the output product and the rest.

    `weights` counts 2 FLOPs per weight the token is multiplied by (attention and MLP matrices of
    every layer, and the output matrix once even when it is tied to the embeddings, whose lookup
    multiplies nothing); `attention` is 4·L·T·H·Dh, the scores and the weighted sum over a context
    of T tokens; `two_n` is the popular shortcut 2·N with N the parameter count.
    """

    d_model: int
    vocab: int
    output: int  # 2·D·V
    weights: int
    attention: int
    two_n: int

    @property
    def total(self) -> int:
        return self.weights + self.attention

    @property
    def share(self) -> float:
        """The output product's share of the whole step."""
        return self.output / self.total


def logit_cost(config: dict[str, Any], context: int = 0) -> LogitCost:
    """The cost of the logits for a config dict, at a context of `context` tokens.

    Example: SmolLM2-135M, context 0 -> output 2·576·49152 = 56,623,104 FLOPs, share ≈ 0.21
    Example: Llama-3 8B, context 0 -> output ≈ 1.05 GFLOP, share ≈ 0.07
    """
    V, D, L, H, _, Dh, _ = dims(config)
    parts = param_breakdown(config)
    output = 2 * D * V
    weights = 2 * (parts["attention"] + parts["mlp"]) + output
    attention = 4 * L * int(context) * H * Dh
    return LogitCost(D, V, output, weights, attention, 2 * sum(parts.values()))
