"""Token embeddings: rows of a table, cosine similarity, neighbours, projections, context.

The embedding table of a model is a matrix `table` [V, D]: one row per token of the vocabulary.
"Embedding a token" is reading row `id` of that table, an index, not a multiplication. This
module works on that matrix (already converted to numpy by the caller) and on captured
activations, and returns its work as data for the lesson page:

- `cosine_matrix`: cos(a, b) = a·b / (‖a‖‖b‖) between every pair of rows of a small matrix.
- `EmbeddingIndex` / `build_index`: the table with its row norms and unit rows, computed once per
  model, so that `nearest` (top-k over the whole vocabulary, by cosine or Euclidean distance) is
  one matrix-vector product.
- `pca_2d`: a 2-D projection with numpy's SVD and a deterministic sign.
- `norm_vs_id`: the length of every row against its token id, with Pearson and Spearman
  correlation (in a byte-level BPE vocabulary, ids follow the order of the merges, roughly the
  order of frequency in the tokenizer's corpus).
- Words: `parse_words` cleans a typed list; `word_pieces` tokenizes one word **as it appears in
  the middle of a sentence** (after a space) and `word_vector` is **the mean of its pieces' rows**
  (the rule this course uses for a word the tokenizer splits).
- Context: `find_word` locates a word's tokens in a captured text, `in_context` takes their mean
  vector at every depth of the residual stream, `final_hidden` applies the model's own final norm
  to the last residual (what Hugging Face calls the last hidden state) and `sentence_vector` is
  the mean of those final hidden states.

Deliberately left out: trained sentence-embedding models (semantic search uses the output of a
model trained for it, not this table), approximate nearest-neighbour indexes (49k rows need none),
t-SNE/UMAP, and the output (unembedding) matrix, which is the same table when embeddings are tied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import torch

from lib.model.tokens import readable_tokens

MAX_WORDS = 20  # a 20 x 20 heatmap is still readable; longer lists are cut, with a notice
MAX_WORD_CHARS = 40  # one "word" longer than this is cut: it is a sentence, not a word
MANY_PIECES = 4  # from this many pieces on, the mean of the pieces is a blur, and the page says so
_SEPARATORS = re.compile(r"[,;\n\t]+")


# ---------------------------------------------------------------------------- cosine


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Every row divided by its length; an all-zero row stays zero (its cosine with anything is 0).

    Example: unit_rows(np.array([[3., 4.], [0., 0.]])) -> [[0.6, 0.8], [0., 0.]]
    """
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)  # [N, 1]
    return x / np.where(norms > 0, norms, 1.0)


def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """[N, N] cosine similarity between every pair of rows of x [N, D].

    Symmetric, 1 on the diagonal (0 for a zero row), every value in [-1, 1].
    Example: cosine_matrix(np.array([[1., 0.], [1., 1.], [-1., 0.]])).round(3)
             -> [[1., 0.707, -1.], [0.707, 1., -0.707], [-1., -0.707, 1.]]
    """
    u = unit_rows(x)  # [N, D]
    sim = u @ u.T  # [N, N]
    sim = (sim + sim.T) / 2  # exactly symmetric, whatever the rounding of the product
    np.fill_diagonal(sim, (np.linalg.norm(u, axis=-1) > 0).astype(sim.dtype))
    return np.clip(sim, -1.0, 1.0)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b) = a·b / (‖a‖‖b‖); 0 when either vector is zero.

    Example: cosine(np.array([1., 0.]), np.array([1., 1.])) -> 0.7071...
    """
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0 or nb == 0:
        return 0.0
    return float(np.clip(np.dot(a, b) / (na * nb), -1.0, 1.0))


# ---------------------------------------------------------------------------- the whole table


@dataclass(frozen=True, eq=False)
class EmbeddingIndex:
    """The embedding table prepared once per model: rows, their lengths and the unit rows."""

    table: np.ndarray  # [V, D] float32, read-only
    norms: np.ndarray  # [V] length of each row
    unit16: torch.Tensor  # [V, D] the unit rows in float16: half the bytes to read for a first pass

    @property
    def unit(self) -> np.ndarray:
        """[V, D] each row divided by its length (computed on access: not kept, see build_index)."""
        return _frozen(unit_rows(self.table))

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.table.shape)  # type: ignore[return-value]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float32)
    a.flags.writeable = False
    return a


_BUILD_ROWS = 16384  # rows normalized at a time while building the float16 copy


def build_index(table: np.ndarray) -> EmbeddingIndex:
    """Normalize the [V, D] table once (well under a second for 49152 x 576); every query reuses it.

    A read-only float32 table is used as it is (the page passes a read-only view of the model's
    own weights), any other is copied so the caller's stays writable. Only the float16 unit rows
    are kept besides it, built a slice at a time: for Gemma 3's 262,144 x 640 table a float32 copy
    and float32 unit rows would be 1.3 GB more.
    Example: build_index(np.eye(3)).norms -> [1., 1., 1.]
    """
    table = np.asarray(table)
    if table.dtype != np.float32 or table.flags.writeable or not table.flags.c_contiguous:
        table = np.array(table, dtype=np.float32, copy=True)  # our own copy: the caller's stays writable
    table = _frozen(table)
    unit16 = torch.empty(table.shape, dtype=torch.float16)
    for start in range(0, table.shape[0], _BUILD_ROWS):
        unit16[start:start + _BUILD_ROWS] = torch.from_numpy(unit_rows(table[start:start + _BUILD_ROWS])).half()
    return EmbeddingIndex(table=table, norms=_frozen(np.linalg.norm(table, axis=1)), unit16=unit16)


@dataclass(frozen=True)
class Neighbours:
    """The k rows nearest to a query: ids, best first, with both scores for each."""

    ids: np.ndarray  # [k] token ids
    cosine: np.ndarray  # [k] cosine with the query
    distance: np.ndarray  # [k] Euclidean distance to the query
    metric: str  # "cosine" (higher is nearer) or "euclidean" (lower is nearer)


# Bound on the error of a float16 cosine between unit vectors. Rounding to float16 moves each
# number by at most 2^-11 of itself and the sum is kept in float32, so by Cauchy-Schwarz the
# cosine moves by about 1e-3 at most (3.6e-4 measured on SmolLM2). 0.004 leaves a wide margin:
# no true neighbour is ever dropped by the first pass.
_COARSE_SLACK = 0.004


def nearest(index: EmbeddingIndex, query: np.ndarray, k: int = 10, metric: str = "cosine") -> Neighbours:
    """Top-k rows of the whole vocabulary nearest to `query` [D]; exact, in float32.

    By cosine: the product of the unit rows with the unit query, [V, D] @ [D] -> [V].
    By Euclidean distance: ‖x − q‖² = ‖x‖² − 2 ‖x‖ ‖q‖ cos(x, q) + ‖q‖², from the same product.
    Reading V x D numbers is the whole cost, so a first pass reads the float16 copy (half the
    bytes), keeps every row that could be in the top k given float16's rounding, and those few
    candidates are scored again in float32. Ties go to the smaller id, so the result is
    deterministic. When `query` is a row of the table, that row comes first (cosine 1, distance 0).
    Example: nearest(build_index(np.array([[1., 0.], [0., 1.], [1., .1]])), np.array([1., 0.]), 2).ids -> [0, 2]
    """
    if metric not in ("cosine", "euclidean"):
        raise ValueError(f"unknown metric {metric!r}")
    q = np.asarray(query, dtype=np.float32)  # [D]
    v = index.table.shape[0]
    k = max(1, min(int(k), v))
    q_norm = float(np.linalg.norm(q))
    q_unit = q / q_norm if q_norm > 0 else np.zeros_like(q)
    with torch.inference_mode():
        coarse_cos = torch.mv(index.unit16, torch.from_numpy(q_unit).half()).float().numpy()  # [V]

    def key_of(cos: np.ndarray, norms: np.ndarray) -> np.ndarray:  # smaller key = nearer
        return -cos if metric == "cosine" else norms**2 - 2 * norms * q_norm * cos + q_norm**2

    coarse = key_of(coarse_cos, index.norms)  # [V]
    # How far each row's key can be from its float16 estimate: the cosine by the slack, the
    # squared distance by 2 ‖x‖ ‖q‖ times the slack.
    if metric == "cosine":
        err = np.full(v, _COARSE_SLACK, dtype=np.float32)
    else:
        err = 2 * index.norms * q_norm * _COARSE_SLACK
    kth = np.partition(coarse + err, k - 1)[k - 1]  # the k-th best key is at most this
    cand = np.flatnonzero(coarse - err <= kth)  # every row whose true key can beat it
    cos = unit_rows(index.table[cand]) @ q_unit  # [C] exact, float32
    key = key_of(cos, index.norms[cand])
    order = np.lexsort((cand, key))[:k]  # by key, then by id
    top = cand[order]
    dist = np.linalg.norm(index.table[top] - q, axis=1)  # [k]
    return Neighbours(ids=top.astype(np.int64), cosine=np.clip(cos[order], -1.0, 1.0), distance=dist, metric=metric)


# ---------------------------------------------------------------------------- projection


@dataclass(frozen=True)
class Projection:
    """A 2-D PCA of N vectors: coordinates, the two directions, and the share of variance kept."""

    coords: np.ndarray  # [N, 2]
    components: np.ndarray  # [2, D] unit directions (zero when there are not enough points)
    explained: np.ndarray  # [2] fraction of the total variance along each direction
    mean: np.ndarray  # [D]


def pca_2d(x: np.ndarray) -> Projection:
    """Project x [N, D] on its two directions of largest variance (numpy SVD of the centred x).

    SVD leaves each direction's sign arbitrary; here the entry of largest magnitude of each
    direction is made positive, so the same input always gives the same picture. With fewer
    than 3 points (or points on a line) the missing directions are zero, with 0 variance.
    Example: pca_2d(np.array([[0., 0.], [1., 1.], [2., 2.]])).explained -> [1., 0.]
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1:
        raise ValueError("pca_2d needs a matrix with at least one row")
    mean = x.mean(axis=0)  # [D]
    centred = x - mean  # [N, D]
    _, s, vt = np.linalg.svd(centred, full_matrices=False)  # s [min(N, D)], vt [min(N, D), D]
    components = np.zeros((2, x.shape[1]))
    explained = np.zeros(2)
    total = float((s**2).sum())
    scale = max(1.0, float(np.abs(x).max()))
    for i in range(min(2, len(s))):
        if s[i] <= 1e-9 * scale:  # no variance left: not a direction
            continue
        c = vt[i]
        components[i] = c if c[np.argmax(np.abs(c))] > 0 else -c
        explained[i] = s[i] ** 2 / total
    return Projection(coords=centred @ components.T, components=components, explained=explained, mean=mean)


# ---------------------------------------------------------------------------- length and frequency


@dataclass(frozen=True)
class NormStats:
    """Row lengths against token ids, with the correlations the page prints."""

    ids: np.ndarray  # [n] the ids measured (from `first_id` on)
    norms: np.ndarray  # [n]
    pearson: float  # linear correlation of id and length
    spearman: float  # correlation of their ranks (any monotonic trend)
    bins: np.ndarray  # [B + 1] bin edges over the ids
    bin_means: np.ndarray  # [B] mean length in each bin


def _ranks(a: np.ndarray) -> np.ndarray:
    """Ranks 0..n-1, ties given their average rank (as Spearman's definition requires)."""
    order = np.argsort(a, kind="stable")
    ranks = np.empty(len(a))
    ranks[order] = np.arange(len(a))
    _, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse.ravel(), weights=ranks)
    return (sums / counts)[inverse.ravel()]


def norm_vs_id(norms: np.ndarray, first_id: int = 0, n_bins: int = 24) -> NormStats:
    """Correlate the length of each row with its id (ids below `first_id` are left out).

    Example: norm_vs_id(np.array([1., 2., 3., 5.])).spearman -> 1.0
    """
    norms = np.asarray(norms, dtype=np.float64)
    ids = np.arange(first_id, len(norms))
    y = norms[first_id:]
    if len(y) < 2:
        raise ValueError("need at least two rows")
    pearson = float(np.corrcoef(ids, y)[0, 1]) if y.std() > 0 else 0.0
    ry = _ranks(y)
    spearman = float(np.corrcoef(np.arange(len(y)), ry)[0, 1]) if ry.std() > 0 else 0.0
    n_bins = max(1, min(n_bins, len(y)))
    edges = np.linspace(first_id, len(norms), n_bins + 1)
    which = np.minimum(np.searchsorted(edges, ids, side="right") - 1, n_bins - 1)
    means = np.bincount(which, weights=y, minlength=n_bins) / np.maximum(np.bincount(which, minlength=n_bins), 1)
    return NormStats(ids=ids, norms=y, pearson=pearson, spearman=spearman, bins=edges, bin_means=means)


def sample_ids(n: int, size: int, seed: int = 0) -> np.ndarray:
    """`size` distinct ids out of range(n), sorted, drawn with an explicit seed (for a scatter).

    Example: len(sample_ids(49152, 4000, seed=0)) -> 4000
    """
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=min(size, n), replace=False))


# ---------------------------------------------------------------------------- words


@dataclass(frozen=True)
class WordList:
    """A typed list of words, cleaned: what is kept and what was cut, for the page's notices."""

    words: tuple[str, ...]
    n_typed: int  # distinct non-empty entries typed
    cut_words: bool  # more than MAX_WORDS: the first ones are kept
    cut_chars: tuple[str, ...]  # words longer than MAX_WORD_CHARS (kept, shortened)


def parse_words(text: str, max_words: int = MAX_WORDS, max_chars: int = MAX_WORD_CHARS) -> WordList:
    """Split a typed list on commas, semicolons or new lines; strip, drop empties and repeats.

    A single line without commas is split on spaces, so "cat dog" works too.
    Example: parse_words("king, queen,, king ;man").words -> ("king", "queen", "man")
    """
    text = text or ""
    parts = _SEPARATORS.split(text) if _SEPARATORS.search(text) else text.split()
    seen: dict[str, None] = {}
    for p in parts:
        p = " ".join(p.split())
        if p:
            seen.setdefault(p, None)
    words = list(seen)
    long = tuple(w for w in words if len(w) > max_chars)
    kept = tuple(w[:max_chars] for w in words[:max_words])
    kept = tuple(dict.fromkeys(kept))
    return WordList(words=kept, n_typed=len(words), cut_words=len(words) > max_words, cut_chars=long)


@dataclass(frozen=True)
class WordPieces:
    """How the tokenizer cuts one word: its ids and their readable pieces."""

    word: str
    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    unknown: bool  # a piece is the tokenizer's unknown token (the characters have no row)

    @property
    def n_pieces(self) -> int:
        return len(self.ids)

    @property
    def raw_bytes(self) -> bool:
        """Some piece is a bare byte, shown as <F0>: the word has no token of its own."""
        return any(re.search(r"<[0-9A-F]{2}>", p) for p in self.pieces)


def word_pieces(tokenizer, word: str) -> WordPieces:
    """Tokenize `word` as it appears in the middle of a sentence: after a space, no special tokens.

    A leading piece that is only the space is dropped (the tokenizer split the space off), so
    what remains are the word's own pieces. Example, on SmolLM2: word_pieces(tok, "pesca").pieces
    -> ("␣p", "esc", "a"); word_pieces(tok, "king").pieces -> ("␣king",)
    """
    ids = list(tokenizer(" " + word, add_special_tokens=False)["input_ids"])
    pieces = readable_tokens(tokenizer, ids)
    if len(ids) > 1 and pieces[0] == "␣":
        ids, pieces = ids[1:], pieces[1:]
    unk = getattr(tokenizer, "unk_token_id", None)
    return WordPieces(word=word, ids=tuple(int(i) for i in ids), pieces=tuple(pieces),
                      unknown=unk is not None and unk in ids)


def word_vector(table: np.ndarray, ids: tuple[int, ...] | list[int]) -> np.ndarray:
    """The vector of a word: **the mean of the rows of its pieces** ([D]); one piece, its row.

    Example: word_vector(np.array([[1., 0.], [0., 1.]]), [0, 1]) -> [0.5, 0.5]
    """
    if len(ids) == 0:
        raise ValueError("a word with no pieces has no vector")
    return np.asarray(table[list(ids)], dtype=np.float32).mean(axis=0)  # [n, D] -> [D]


def lookup_check(table: np.ndarray, ids: np.ndarray, first_input: np.ndarray,
                 positions: np.ndarray | None = None, scale: float = 1.0) -> float:
    """Max |table[ids] · scale (+ positions[0..T-1]) − the first block's input|: 0 means "a row lookup".

    `first_input` [T, D] is the capture's `embeddings`; `positions` is GPT-2's learned position
    table [P, D] (None for RoPE models, which add no vector at the input); `scale` is the factor
    a model puts on the rows (Gemma: √d_model, see `embed_scale`).
    Example: lookup_check(W, cap.token_ids, cap.embeddings) -> 0.0 on SmolLM2
    """
    rows = np.asarray(table, dtype=np.float32)[np.asarray(ids)]  # [T, D]
    if scale != 1.0:
        rows = rows * np.float32(scale)
    if positions is not None:
        rows = rows + np.asarray(positions, dtype=np.float32)[: len(rows)]
    return float(np.abs(rows - first_input).max()) if len(rows) else 0.0


# ---------------------------------------------------------------------------- context


def find_word(text: str, offsets: np.ndarray, word: str) -> list[int]:
    """Token positions covering the first occurrence of `word` in `text` ([] if absent).

    Case is ignored; a whole-word match is preferred over a match inside a longer word. A token
    belongs to the word when its character span [start, end) overlaps the word's.
    Example: find_word("We sat on the bank.", offsets_of_that_text, "bank") -> [4] on SmolLM2
    """
    word = " ".join((word or "").split())
    if not word:
        return []
    m = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, flags=re.IGNORECASE) or re.search(
        re.escape(word), text, flags=re.IGNORECASE)
    if m is None:
        return []
    start, end = m.span()
    return [t for t, (s, e) in enumerate(np.asarray(offsets).reshape(-1, 2)) if s < end and e > start]


def in_context(resid: np.ndarray, positions: list[int]) -> np.ndarray:
    """[L+1, D] the word's vector at every depth: the mean over its tokens of resid [L+1, T, D].

    Depth 0 is the input of the first block (the table row, plus the position row in GPT-2);
    depth L is the output of the last block, before the final norm.
    """
    if not positions:
        raise ValueError("the word has no tokens in this text")
    return np.asarray(resid[:, positions, :], dtype=np.float32).mean(axis=1)


def cosine_by_depth(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[L+1] cosine between two words' vectors at each depth (inputs [L+1, D] each).

    Example: cosine_by_depth(np.ones((3, 2)), np.ones((3, 2))) -> [1., 1., 1.]
    """
    return np.array([cosine(x, y) for x, y in zip(a, b)])


def final_hidden(loaded, last_resid: np.ndarray) -> np.ndarray:
    """[T, D] the final hidden states: the model's own final norm applied to the last residual.

    This equals Hugging Face's `hidden_states[-1]`. The norm module is run under the model's
    lock and `torch.inference_mode()` (the model is shared by every session); nothing else is run.
    """
    norm = loaded.adapter.final_norm(loaded.model)
    with loaded.lock, torch.inference_mode():
        return norm(torch.from_numpy(np.array(last_resid, dtype=np.float32))).float().numpy()


def sentence_vector(hidden: np.ndarray) -> np.ndarray:
    """[D] a sentence as one vector: the mean of its final hidden states [T, D] (mean pooling).

    Example: sentence_vector(np.array([[1., 0.], [0., 1.]])) -> [0.5, 0.5]
    """
    hidden = np.asarray(hidden, dtype=np.float32)
    if hidden.ndim != 2 or hidden.shape[0] == 0:
        raise ValueError("need the hidden states of at least one token")
    return hidden.mean(axis=0)


def embed_scale(loaded) -> float:
    """The factor a model multiplies its token rows by before the first block (1 for most; Gemma
    scales by √d_model inside its embedding module). Example: Gemma 3 270M -> 25.30 (√640)"""
    scale = getattr(loaded.adapter.embed(loaded.model), "embed_scale", None)
    return float(scale) if scale is not None else 1.0
