"""Byte-pair encoding (BPE), trained merge by merge, with its work returned as data.

The algorithm, as a tokenizer vocabulary is really built:

1. A regular expression splits the text into chunks: words (with their leading space), numbers,
   runs of punctuation, runs of spaces. Merges never cross a chunk boundary, so " the" and "."
   can never become one token. Two patterns are offered: GPT-2's and the GPT-4-style one
   (cl100k: case-insensitive contractions, numbers cut into groups of at most three digits,
   a newline never glued to the word before it).
2. Every chunk becomes its UTF-8 bytes: the vocabulary starts from the 256 byte values, so any
   string (emoji, Chinese, control characters) can be written and nothing is ever "unknown".
3. Count every pair of adjacent symbols in the corpus, merge the most frequent pair into a new
   symbol with the next free id (256, 257, ...), and repeat until the vocabulary has the
   requested size, or no pair occurs twice any more.

Ties are broken deterministically: among the pairs with the highest count, the pair with the
smallest first id wins, then the smallest second id ("ab" = (97, 98) beats "Za" = (256, 97)).
Pairs are counted with overlaps, as minbpe does ("aaa" holds the pair (a, a) twice), while a merge
replaces left to right without overlaps ("aaa" -> "Za").

`train` keeps the pair counts up to date incrementally: after a merge, only the distinct chunks
that contained the pair are recounted, and a heap with lazy deletion finds the next best pair.
It returns a `Training`: every merge with its count, the token count after each merge, the most
frequent pairs at every step, and, for every byte boundary of the corpus, the step at which that
boundary disappeared; `Training.spans(k)` redraws the corpus as tokens after any number of merges
(minGPT's `encode_and_show_work`, for a whole corpus).

Deliberately left out: special tokens, training on more than a few megabytes (pure Python), and
the live model's tokenizer (see `lib/lessons/bpe_replay.py`, which replays a real model's merges).
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import regex

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT4_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
                r"""|\s*[\r\n]|\s+(?!\S)|\s+""")
PATTERNS: dict[str, str] = {"gpt2": GPT2_PATTERN, "gpt4": GPT4_PATTERN}

N_BYTES = 256
NEVER = np.iinfo(np.int32).max  # cut_step of a boundary no merge removed (chunk boundaries among them)
_COMPILED: dict[str, regex.Pattern] = {}


def _compiled(pattern: str) -> regex.Pattern:
    source = PATTERNS.get(pattern, pattern)
    if source not in _COMPILED:
        _COMPILED[source] = regex.compile(source)
    return _COMPILED[source]


def split(text: str, pattern: str = "gpt2") -> list[str]:
    """Cut `text` into the chunks that merges may not cross; "".join(chunks) == text.

    `pattern` is "gpt2", "gpt4" or a regular expression of the `regex` module. Characters no
    alternative matches (none, for the two built-in patterns) become chunks of their own, so
    nothing is ever lost.

    Example: split("Il gatto, 2024!") -> ["Il", " gatto", ",", " 2024", "!"]
    Example: split("Il gatto, 2024!", "gpt4") -> ["Il", " gatto", ",", " ", "202", "4", "!"]
    """
    chunks: list[str] = []
    pos = 0
    for m in _compiled(pattern).finditer(text):
        if m.start() > pos:
            chunks.append(text[pos:m.start()])
        if m.end() > m.start():
            chunks.append(m.group())
        pos = m.end()
    if pos < len(text):
        chunks.append(text[pos:])
    return chunks


def to_bytes(text: str) -> bytes:
    """UTF-8 bytes of a Python string; lone surrogates are kept (surrogatepass) so that
    `decode(encode(x)) == x` holds for every str.

    Example: to_bytes("è") -> b"\\xc3\\xa8"
    """
    return text.encode("utf-8", errors="surrogatepass")


def _from_bytes(data: bytes) -> str:
    try:
        return data.decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        # Ids that are not a whole text (half an emoji): show the gap as U+FFFD, as tokenizers do.
        return data.decode("utf-8", errors="replace")


def merge(ids: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace every occurrence of `pair` in `ids` by `new_id`, left to right, no overlaps.

    Example: merge([1, 2, 3, 1, 2], (1, 2), 256) -> [256, 3, 256]
    Example: merge([97, 97, 97], (97, 97), 256) -> [256, 97]
    """
    out: list[int] = []
    i, n = 0, len(ids)
    a, b = pair
    while i < n:
        if i + 1 < n and ids[i] == a and ids[i + 1] == b:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def pair_counts(ids: Sequence[int], counts: Counter | None = None, weight: int = 1) -> Counter:
    """Count adjacent pairs (with overlaps), adding `weight` per occurrence into `counts`.

    Example: pair_counts([97, 97, 97, 98]) -> Counter({(97, 97): 2, (97, 98): 1})
    """
    counts = Counter() if counts is None else counts
    for p in zip(ids, ids[1:]):
        counts[p] += weight
    return counts


@dataclass(frozen=True)
class Merge:
    """One merge: `pair` of ids became `id`; `count` is the pair's count when it was chosen
    (with overlaps) and `replaced` how many times it was actually replaced in the corpus."""

    pair: tuple[int, int]
    id: int
    count: int
    replaced: int


@dataclass(frozen=True)
class Span:
    """One token of the corpus at some step: bytes `start:end` of the corpus are token `id`."""

    start: int
    end: int
    id: int


@dataclass(frozen=True)
class Training:
    """The work of `train`, enough to redraw the corpus after any number of merges.

    - `merges[k - 1]` is the merge made at step k (k = 1..n).
    - `n_tokens[k]`: tokens in the corpus after k merges (k = 0..n); `n_tokens[0]` is its bytes.
    - `top_pairs[k]`: the most frequent pairs after k merges, best first, as ((a, b), count);
      `top_pairs[k][0]` is the pair merge k + 1 takes.
    - `cut_step[i]`: the step at which the boundary between corpus bytes i and i + 1
      disappeared; NEVER if no merge removed it (always so at a chunk boundary).
    - `stop`: why training ended: "target" (vocabulary size reached) or "exhausted" (no pair
      occurs twice any more).
    """

    corpus: bytes
    pattern: str
    vocab_size: int
    merges: tuple[Merge, ...]
    n_tokens: tuple[int, ...]
    top_pairs: tuple[tuple[tuple[tuple[int, int], int], ...], ...]
    cut_step: np.ndarray = field(repr=False)
    n_chunks: int = 0
    stop: str = "target"

    @property
    def n_merges(self) -> int:
        return len(self.merges)

    def vocab(self, k: int | None = None) -> dict[int, bytes]:
        """Id -> bytes after `k` merges (all of them by default)."""
        return vocab(self.merges[: self.n_merges if k is None else k])

    def spans(self, k: int, start: int = 0, end: int | None = None) -> list[Span]:
        """The corpus (or its bytes start:end) as tokens after k merges.

        A window edge inside a token cuts it: pick edges with `chunk_end`. A token's id is the id of the last merge that removed a boundary inside it, or its byte
        value when it is a single byte.
        Example: train("aaabdaaabac", 259).spans(1) -> tokens Z a b d Z a b a c (Z = 256)
        """
        k = max(0, min(k, self.n_merges))
        starts, ends, last = segments(self.cut_step, k, start, len(self.corpus) if end is None else end)
        merge_ids = np.array([0] + [m.id for m in self.merges], dtype=np.int64)
        data = np.frombuffer(self.corpus, dtype=np.uint8)
        ids = np.where(last > 0, merge_ids[last], data[starts] if len(starts) else 0)
        return [Span(int(s), int(e), int(i)) for s, e, i in zip(starts, ends, ids)]


def segments(cut_step: np.ndarray, k: int, start: int = 0,
             end: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens of a byte stream after step k, from the step at which each boundary disappeared.

    `cut_step[i]` is the step that removed the boundary between bytes i and i + 1: after k steps
    the boundaries still standing are those with cut_step > k. Returns (starts, ends, last) for
    the bytes start:end, where `last` is the latest step that removed a boundary inside each
    token (0 for a single byte, or for a token whose boundaries were all removed at step 0).

    Example: segments(np.array([1, 9, 2]), 1) -> ([0, 2, 3], [2, 3, 4], [1, 0, 0])
    """
    n = len(cut_step) + 1
    end = n if end is None else min(end, n)
    start = max(0, start)
    if end <= start:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    inner = cut_step[start:end - 1]  # boundaries strictly inside start:end
    cuts = np.flatnonzero(inner > k) + start + 1
    starts = np.concatenate(([start], cuts)).astype(np.int64)
    ends = np.concatenate((cuts, [end])).astype(np.int64)
    removed = np.where(inner <= k, inner, 0)
    last = np.zeros(len(starts), dtype=np.int64)
    multi = ends - starts > 1
    if multi.any():
        # Each reduceat range runs from a multi-byte token's first boundary to the next such
        # token: it covers the token's own boundaries, then standing cuts and single bytes,
        # which count as 0 and never win the maximum.
        last[multi] = np.maximum.reduceat(removed, starts[multi] - start)
    return starts, ends, last


def chunk_end(cut_step: np.ndarray, limit: int) -> int:
    """The largest chunk boundary at or before byte `limit` (a safe end for a display window);
    the whole stream when it is shorter, the first chunk's end if that chunk is longer.

    Example: chunk_end(np.array([1, NEVER, 2, NEVER, 3]), 4) -> 4
    """
    n = len(cut_step) + 1
    if limit >= n:
        return n
    ends = np.flatnonzero(cut_step[: max(limit, 0)] == NEVER) + 1
    if len(ends):
        return int(ends[-1])
    after = np.flatnonzero(cut_step == NEVER)
    return int(after[0]) + 1 if len(after) else n


def lives(cut_step: np.ndarray, start: int = 0,
          end: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every token that the bytes start:end hold at some step, with the steps it lives through:
    (starts, ends, born, dies), ordered by start, then by birth. Token i is there after k steps
    exactly when born[i] <= k < dies[i]; `segments(cut_step, k, start, end)` is that set for one k,
    and `born` is its `last`. A token no merge ever joins to a neighbour dies at NEVER.

    This is the whole animation as data: a browser view shows step k by keeping the tokens alive
    at k, with no BPE of its own. Each token is a node of the merge tree: it was born when its
    latest inner boundary went (0 for a byte), and dies when the merge that takes it in happens.
    `end` should be a chunk boundary (`chunk_end`), as for `segments`.

    Example: lives(np.array([1, NEVER, 2]))
             -> starts [0, 0, 1, 2, 2, 3], ends [1, 2, 2, 3, 4, 4], born [0, 1, 0, 0, 2, 0],
                dies [1, NEVER, 1, 2, NEVER, 2]
    """
    n = len(cut_step) + 1
    end = n if end is None else min(end, n)
    start = max(0, start)
    out: list[tuple[int, int, int, int]] = []
    todo = [(start, end, int(NEVER))] if end > start else []
    while todo:
        s, e, dies = todo.pop()
        inner = cut_step[s:e - 1]
        born = int(inner.max()) if len(inner) else 0
        if born >= NEVER:  # boundaries no merge removes: split there, each part lives to the end
            born = int(NEVER)
        if born < dies:
            out.append((s, e, born, dies))
        if len(inner) == 0:
            continue
        # The children: the pieces between the boundaries removed at step `born` (one for a merge;
        # all of them for a piece fixed at step 0), each dying when this token was born.
        cuts = (np.flatnonzero(inner == born) + s + 1).tolist()
        edges = [s] + cuts + [e]
        child_dies = dies if born >= NEVER else born
        todo.extend((a, b, child_dies) for a, b in zip(edges, edges[1:]))
    out.sort(key=lambda x: (x[0], x[2]))
    arr = np.array(out, dtype=np.int64).reshape(-1, 4)
    return arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]


def vocab(merges: Iterable[Merge]) -> dict[int, bytes]:
    """Id -> bytes for the 256 bytes plus each merge, in order.

    Example: vocab([Merge((97, 97), 256, 4, 2)])[256] -> b"aa"
    """
    table = {i: bytes([i]) for i in range(N_BYTES)}
    for m in merges:
        table[m.id] = table[m.pair[0]] + table[m.pair[1]]
    return table


def _top(heap: list, counts: dict, k: int) -> tuple[tuple[tuple[int, int], int], ...]:
    """The k best valid heap entries, without consuming them (stale entries are dropped)."""
    found, seen, keep = [], set(), []
    while heap and len(found) < k:
        entry = heapq.heappop(heap)
        neg, a, b = entry
        if counts.get((a, b), 0) == -neg and (a, b) not in seen:
            seen.add((a, b))
            found.append(((a, b), -neg))
            keep.append(entry)
    for entry in keep:
        heapq.heappush(heap, entry)
    return tuple(found)


def train(text: str, vocab_size: int, pattern: str = "gpt2", top_k: int = 10,
          min_count: int = 2) -> Training:
    """Learn BPE merges on `text` until the vocabulary has `vocab_size` entries.

    Stops early (Training.stop == "exhausted") when no pair occurs `min_count` times: the
    classic example stops at "XdXac" because every pair left occurs once. A `vocab_size` below
    256 gives no merges (the 256 bytes are always there).

    Example: [m.pair for m in train("aaabdaaabac", 300).merges]
             -> [(97, 97), (97, 98), (256, 257)]      # aa -> Z, ab -> Y, ZY -> X
    """
    chunks = split(text, pattern)
    corpus = to_bytes(text)
    target = max(0, vocab_size - N_BYTES)

    # Distinct chunks, each with its frequency: the corpus "the the the" holds one word " the".
    index: dict[bytes, int] = {}
    order: list[int] = []
    for c in chunks:
        order.append(index.setdefault(to_bytes(c), len(index)))
    words = list(index)
    freq = [0] * len(words)
    for w in order:
        freq[w] += 1
    ids = [list(w) for w in words]
    starts = [list(range(len(w))) for w in words]  # byte offset of each symbol inside its word
    word_cut = [np.full(max(len(w) - 1, 0), NEVER, dtype=np.int32) for w in words]

    counts: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], set[int]] = {}
    for w, sym in enumerate(ids):
        for p in zip(sym, sym[1:]):
            counts[p] = counts.get(p, 0) + freq[w]
            where.setdefault(p, set()).add(w)
    heap = [(-c, a, b) for (a, b), c in counts.items()]
    heapq.heapify(heap)

    merges: list[Merge] = []
    n_tokens = [len(corpus)]
    tops = []
    stop = "target"
    while True:
        tops.append(_top(heap, counts, top_k) if top_k else ())
        if len(merges) >= target:
            break
        best = None
        while heap:
            neg, a, b = heapq.heappop(heap)
            if counts.get((a, b), 0) == -neg:
                best = ((a, b), -neg)
                break
        if best is None or best[1] < min_count:
            stop = "exhausted"
            break
        pair, count = best
        new_id = N_BYTES + len(merges)
        step = len(merges) + 1
        replaced = 0
        changed: set[tuple[int, int]] = set()
        for w in where.pop(pair, ()):
            sym, pos, f = ids[w], starts[w], freq[w]
            out, out_pos, i, n, hits = [], [], 0, len(sym), 0
            while i < n:
                if i + 1 < n and sym[i] == pair[0] and sym[i + 1] == pair[1]:
                    out.append(new_id)
                    out_pos.append(pos[i])
                    word_cut[w][pos[i + 1] - 1] = step
                    i += 2
                    hits += 1
                else:
                    out.append(sym[i])
                    out_pos.append(pos[i])
                    i += 1
            if not hits:
                continue
            replaced += hits * f
            for p in zip(sym, sym[1:]):
                counts[p] -= f
                changed.add(p)
            for p in zip(out, out[1:]):
                counts[p] = counts.get(p, 0) + f
                where.setdefault(p, set()).add(w)
                changed.add(p)
            ids[w], starts[w] = out, out_pos
        for p in changed:
            c = counts.get(p, 0)
            if c > 0:
                heapq.heappush(heap, (-c, p[0], p[1]))
            else:
                counts.pop(p, None)
                where.pop(p, None)
        merges.append(Merge(pair, new_id, count, replaced))
        n_tokens.append(n_tokens[-1] - replaced)

    # The corpus's boundaries: each chunk's own, then a boundary no merge removes.
    parts = []
    for w in order:
        parts.append(word_cut[w])
        parts.append(np.array([NEVER], dtype=np.int32))
    cut_step = np.concatenate(parts)[:-1] if parts else np.zeros(0, dtype=np.int32)
    cut_step.setflags(write=False)
    return Training(corpus=corpus, pattern=pattern, vocab_size=N_BYTES + len(merges),
                    merges=tuple(merges), n_tokens=tuple(n_tokens), top_pairs=tuple(tops),
                    cut_step=cut_step, n_chunks=len(chunks), stop=stop)


def _ranks(merges: Iterable[Merge]) -> dict[tuple[int, int], tuple[int, int]]:
    return {m.pair: (rank, m.id) for rank, m in enumerate(merges)}


def encode(text: str, merges: Sequence[Merge], pattern: str = "gpt2") -> list[int]:
    """Token ids of `text` with learned `merges`: split into chunks, then inside each chunk
    apply the earliest-learned merge that is present, again and again.

    Example: encode("aaabdaaabac", train("aaabdaaabac", 300).merges) -> [258, 100, 258, 97, 99]
    """
    ranks = _ranks(merges)
    cache: dict[str, list[int]] = {}
    out: list[int] = []
    for chunk in split(text, pattern):
        if chunk not in cache:
            sym = list(to_bytes(chunk))
            while len(sym) > 1:
                found = [ranks[p] for p in zip(sym, sym[1:]) if p in ranks]
                if not found:
                    break
                rank, new_id = min(found)
                sym = merge(sym, merges[rank].pair, new_id)
            cache[chunk] = sym
        out.extend(cache[chunk])
    return out


def decode(ids: Iterable[int], merges: Sequence[Merge]) -> str:
    """The text that token `ids` stand for; invalid UTF-8 (half a character) shows as U+FFFD.

    Example: decode([258, 100, 258, 97, 99], train("aaabdaaabac", 300).merges) -> "aaabdaaabac"
    """
    table = vocab(merges)
    return _from_bytes(b"".join(table[i] for i in ids))
