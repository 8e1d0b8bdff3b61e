"""The logit lens: read the residual stream after every layer as if it were the last one.

The model turns its final residual into a prediction with two modules: the final norm and the
unembedding (`adapter.final_norm`, `adapter.unembed`). Nothing stops us from applying the same two
to the residual at the input of any block: what would the model say if it had to stop here? At the
last layer the lens *is* the model, so it must reproduce the model's logits exactly (tested).

The full lens is big: (L+1) × T × V numbers, 31 × 512 × 49152 floats (3 GB) for the built-in
model at its longest text. `logit_lens` never keeps it: it projects the residuals in chunks of
rows and keeps, per layer and position, only the top-k tokens, their probabilities, and the
probability and rank of the model's final prediction.

Deliberately left out: the tuned lens (a learned translator per layer, which reads early layers
better), attributions to single heads or neurons, and any streamlit call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from lib.model.capture import head_logits
from lib.model.models import LoadedModel
from lib.serving.lens_worker import MAX_UNEMBEDDING_MB, LensProcess, LensProcessError, lens_tables


def lens_logits(loaded: LoadedModel, x: np.ndarray) -> np.ndarray:
    """[n, V] logits of residual vectors x [n, D] through the final norm and the unembedding.

    No lock: the final norm and the unembedding carry no capture hooks (see `head_logits`), so a
    lens read never waits behind, nor holds up, another learner's forward pass.
    Example: lens_logits(lm, cap.resid[-1]) equals cap.logits (the lens at the last layer)
    """
    return head_logits(loaded, x)


@dataclass(frozen=True)
class Lens:
    """What the lens reads at every layer l (0 = the embeddings, L = after the last block) for a
    set of positions. Probabilities are softmaxes over the whole vocabulary."""

    positions: np.ndarray  # [P] token positions in the capture
    top_ids: np.ndarray  # [L+1, P, k] the k likeliest tokens, best first
    top_probs: np.ndarray  # [L+1, P, k]
    final_ids: np.ndarray  # [P] the model's own prediction: the top token at the last layer
    final_prob: np.ndarray  # [L+1, P] probability of that prediction at each layer
    final_rank: np.ndarray  # [L+1, P] its rank at each layer (0 = top)

    @property
    def n_layers(self) -> int:
        """L: the lens has L+1 rows (the embeddings and the output of every block)."""
        return int(self.top_ids.shape[0]) - 1

    def first_layer_on_top(self) -> np.ndarray:
        """[P] the first layer from which the final prediction stays the top token to the end.

        Example: ranks [[3], [0], [2], [0], [0]] -> [3]
        """
        on_top = self.final_rank == 0  # [L+1, P]
        # Walking down from the last layer, the run of layers where it is already on top.
        run = np.cumprod(on_top[::-1], axis=0)[::-1]
        return (on_top.shape[0] - run.sum(axis=0)).astype(np.int64)


def lens_positions(n_tokens: int, window: int) -> np.ndarray:
    """[P] the last `window` positions of a text of n_tokens (all of them if it is shorter).

    The end of the text is where the model predicts what comes next, so the lens keeps it.
    Example: lens_positions(10, 4) -> [6, 7, 8, 9]
    """
    if n_tokens <= 0 or window <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.arange(max(0, n_tokens - window), n_tokens, dtype=np.int64)


def logit_lens(loaded: LoadedModel, resid: np.ndarray, positions: np.ndarray | None = None, k: int = 5,
               chunk_rows: int = 256) -> Lens:
    """Project resid [L+1, T, D] at `positions` (default: all) through the final norm and the
    unembedding, layer by layer, keeping the top-k and the fate of the final prediction.

    Example: lens = logit_lens(lm, cap.resid); lens.top_ids[-1, :, 0] == cap.logits.argmax(-1)
    """
    resid = np.asarray(resid)
    n_rows, t, d = resid.shape  # n_rows = L+1
    pos = np.arange(t, dtype=np.int64) if positions is None else np.asarray(positions, dtype=np.int64)
    if pos.size and (pos.min() < 0 or pos.max() >= t):
        raise IndexError(f"positions outside 0..{t - 1}")
    p = pos.size
    k = max(1, min(k, loaded.info.vocab_size))
    rows = resid[:, pos].reshape(n_rows * p, d)  # layer-major: row = layer * P + i
    tables = lens_tables(lambda x: lens_logits(loaded, x), rows, p, k, chunk_rows)
    return lens_from_tables(tables, pos, n_rows)


def logit_lens_elsewhere(process: LensProcess, model_key, loaded: LoadedModel, resid: np.ndarray,
                         k: int = 5, waited=False) -> Lens:
    """`logit_lens(loaded, resid, k=k)`, with its big products worked out in the lens process
    (lib/serving/lens_worker.py): the final norm is applied here (a few ms), the unembedding there.
    `model_key` names the model to the process, which is given the unembedding when it lacks it;
    `waited`: someone waits for it, True or an Event set once someone does (see LensProcess.tables).
    Raises LensProcessError where that cannot be done (an unembedding that is not a linear map or
    is too big to copy, a process that died): the caller then calls `logit_lens`.
    """
    resid = np.asarray(resid)
    n_rows, p, d = resid.shape
    model, ad = loaded.model, loaded.adapter
    head = ad.unembed(model)
    if not isinstance(head, torch.nn.Linear):
        raise LensProcessError(f"the unembedding is a {type(head).__name__}, not a linear map")
    if head.weight.numel() * 4 > MAX_UNEMBEDDING_MB * 2**20:
        raise LensProcessError(f"the unembedding is over {MAX_UNEMBEDDING_MB} MB: not copied to the lens process")

    def unembedding() -> tuple[np.ndarray, np.ndarray | None]:
        bias = None if head.bias is None else head.bias.detach().float().numpy()
        return head.weight.detach().float().numpy(), bias

    with torch.inference_mode():
        rows = torch.from_numpy(np.ascontiguousarray(resid.reshape(n_rows * p, d), dtype=np.float32))
        normed = ad.final_norm(model)(rows).float().numpy()
    k = max(1, min(k, loaded.info.vocab_size))
    tables = process.tables(model_key, unembedding, normed, p, k, waited=waited)
    return lens_from_tables(tables, np.arange(p, dtype=np.int64), n_rows)


def lens_from_tables(tables: dict[str, np.ndarray], positions: np.ndarray, n_rows: int) -> Lens:
    """The Lens of `lens_tables`'s rows (layer-major, n_rows layers) at `positions`."""
    p, k = len(positions), tables["top_ids"].shape[-1]
    return Lens(positions=np.asarray(positions, dtype=np.int64),
                top_ids=tables["top_ids"].reshape(n_rows, p, k), top_probs=tables["top_probs"].reshape(n_rows, p, k),
                final_ids=tables["final_ids"], final_prob=tables["final_prob"].reshape(n_rows, p),
                final_rank=tables["final_rank"].reshape(n_rows, p))
