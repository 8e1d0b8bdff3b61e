"""The loss of a text under the model: surprise per token, mean, perplexity, bits.

At every position t the model gives a distribution over the next token; the text's real next
token got probability p, and its surprise is -ln p (0 when the model was certain and right,
large when it was wrong). The mean surprise over the text is the cross-entropy loss L that
training minimises; e**L, the perplexity, reads as "the model hesitates among about e**L tokens";
L / ln 2 is the same loss in bits per token.

- `text_loss(logits, token_ids)`: per-token surprise, probability and rank from a capture's
  logits [T, V] and its ids [T], with the mean loss, perplexity and bits per token.
- `perplexity(loss)`, `bits(loss)`, `bits_saved(before, after)`: the conversions.

The first token has nothing before it to predict it (these models read no start token here), so
a text of T tokens gives T - 1 surprises. Deliberately left out: batches, padding and masks,
label smoothing, gradients.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


def perplexity(loss: float) -> float:
    """e**loss: how many equally likely tokens the model is, in effect, choosing among.

    Example: perplexity(2.0) -> 7.389
    """
    return math.exp(loss)


def bits(loss_nats: float) -> float:
    """A loss in nats written in bits: divide by ln 2.

    Example: bits(math.log(8)) -> 3.0
    """
    return loss_nats / math.log(2)


def bits_saved(before: float, after: float) -> float:
    """Bits per token saved when the loss (in nats) drops from `before` to `after`.

    Example: bits_saved(2.0, 1.9) -> 0.144 (the perplexity goes from 7.39 to 6.69)
    """
    return bits(before - after)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = np.max(x, axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


@dataclass(frozen=True)
class TextLoss:
    """The model's surprise at each token of a text (arrays are [T-1], for tokens 1..T-1).

    `surprise[i]` is -ln p of token i+1 given tokens 0..i; `prob` that p; `rank` the token's place
    among the model's candidates (1 = the model's top guess); `top` the top guess's id.
    """

    token_ids: np.ndarray  # [T]
    surprise: np.ndarray  # [T-1] nats
    prob: np.ndarray  # [T-1]
    rank: np.ndarray  # [T-1]
    top: np.ndarray  # [T-1]

    @property
    def n_predicted(self) -> int:
        return int(self.surprise.size)

    @property
    def mean(self) -> float:
        """The cross-entropy loss L in nats (nan for a one-token text: nothing to predict)."""
        return float(self.surprise.mean()) if self.surprise.size else float("nan")

    @property
    def perplexity(self) -> float:
        return perplexity(self.mean)

    @property
    def bits_per_token(self) -> float:
        return bits(self.mean)


def text_loss(logits: Any, token_ids: Any) -> TextLoss:
    """Surprise of every token after the first, from logits [T, V] and ids [T].

    Row t of the logits predicts token t+1, so the last row predicts a token the text does not
    have and is not used.
    Example: uniform logits over V = 4 -> every surprise is ln 4 = 1.386, perplexity 4
    """
    x = np.asarray(logits, dtype=np.float64)  # [T, V]
    ids = np.asarray(token_ids, dtype=np.int64)  # [T]
    if x.ndim != 2 or ids.ndim != 1 or x.shape[0] != ids.shape[0]:
        raise ValueError(f"need logits [T, V] and ids [T], got {x.shape} and {ids.shape}")
    if ids.size and (ids.min() < 0 or ids.max() >= x.shape[1]):
        raise ValueError("a token id is outside the vocabulary of the logits")
    logp = _log_softmax(x[:-1])  # [T-1, V]
    targets = ids[1:]  # [T-1]
    rows = np.arange(targets.size)
    chosen = logp[rows, targets]  # [T-1]
    # Rank 1 + how many tokens scored strictly higher (a tie with the top guess still ranks 1).
    rank = 1 + (logp > chosen[:, None]).sum(axis=1)
    top = np.argmax(logp, axis=1) if targets.size else np.zeros(0, dtype=np.int64)
    return TextLoss(token_ids=ids, surprise=-chosen, prob=np.exp(chosen), rank=rank.astype(np.int64),
                    top=top.astype(np.int64))


def capture_loss(cap: Any, chunk: int = 128) -> TextLoss:
    """`text_loss` of a capture's text, its logits computed `chunk` positions at a time.

    The [T, V] logits of a long text on a large vocabulary never exist at once (Gemma 3 at 1,024
    tokens: 1 GB in float32): each chunk's rows are recomputed from the residual stream
    (`cap.logits_at`) and dropped after use. Equal to text_loss(cap.logits, cap.token_ids).
    Example: capture_loss(cap).surprise.shape -> (T - 1,)
    """
    ids = np.asarray(cap.token_ids, dtype=np.int64)
    t = ids.size
    parts = []
    for start in range(0, max(t - 1, 0), chunk):
        stop = min(start + chunk, t - 1)  # rows start..stop-1 predict ids start+1..stop
        parts.append(text_loss(cap.logits_at(list(range(start, stop + 1))), ids[start:stop + 1]))
    if not parts:
        return text_loss(cap.logits_at([0]) if t else np.zeros((0, 1)), ids)
    cat = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
    return TextLoss(token_ids=ids, surprise=cat("surprise"), prob=cat("prob"), rank=cat("rank"), top=cat("top"))
