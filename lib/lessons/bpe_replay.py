"""Replay a real model's byte-level BPE on a text, merge by merge, and keep every state.

A byte-level BPE tokenizer (GPT-2, SmolLM2, Llama 3, Qwen 2) stores three things in its
`tokenizer.json`: a pre-tokenizer (a regular expression that cuts the text into words, maybe
digit splitting), a vocabulary of byte-level strings (each byte written as one printable
stand-in character, `Ġ` for the space byte, `Ċ` for the newline), and the merges in the order
they were learned. Encoding a word means: write it as bytes, then, again and again, apply the
earliest-learned merge among the adjacent pairs present.

`replay` does that for a whole text at once, rank by rank: at step k it applies, everywhere,
the k-th smallest merge rank that occurs in the text. Inside each word this is exactly the
tokenizer's own order (a merge can only use tokens that earlier merges produced), so the last
state equals the tokenizer's output; tests check it against the tokenizer itself.

What is read from the tokenizer (`from_tokenizer`): model type BPE; normalizers NFC/NFD/NFKC/NFKD
(or none); pre-tokenizers ByteLevel, Split with a regex (Isolated or Removed), Digits, and
Sequences of them; added tokens (matched literally, before anything else); `ignore_merges`
(Llama 3: a word found whole in the vocabulary skips the merges). Anything else raises
`NotByteLevelBPE` with a `code` the page turns into a message: "no_fast" (no tokenizer.json),
"not_bpe" (WordPiece, Unigram...), "not_byte_level" (SentencePiece-style BPE), "unsupported"
(a normalizer or pre-tokenizer this module does not reproduce).

Deliberately left out: post-processors (BOS/EOS added around the text), BPE dropout, the
lstrip/rstrip/single_word options of added tokens, offsets back into the original string.
"""

from __future__ import annotations

import heapq
import json
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

import numpy as np
import regex

from lib.lessons.bpe import GPT2_PATTERN, NEVER, lives, segments, to_bytes
from lib.model.tokens import byte_decoder

NORMALIZERS = ("NFC", "NFD", "NFKC", "NFKD")
_REGEXES: dict[str, regex.Pattern] = {}


class NotByteLevelBPE(ValueError):
    """The tokenizer cannot be replayed here; `code` says why, `detail` names the part."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


def byte_encoder() -> dict[int, str]:
    """Byte value -> its printable stand-in character (GPT-2's bytes_to_unicode).

    Example: byte_encoder()[32] -> "Ġ"; byte_encoder()[ord("a")] -> "a"
    """
    return {b: ch for ch, b in byte_decoder().items()}


_BYTE_CHAR = byte_encoder()


def to_byte_level(data: bytes) -> str:
    """Bytes written as byte-level characters, the alphabet of the vocabulary.

    Example: to_byte_level(" è".encode()) -> "ĠÃ¨"
    """
    return "".join(_BYTE_CHAR[b] for b in data)


@dataclass(frozen=True)
class PreStep:
    """One pre-tokenizer step: kind "split" (regex, behavior), "digits" (individual) or
    "bytelevel" (add_prefix_space, use_regex)."""

    kind: str
    pattern: str = ""
    behavior: str = "isolated"
    individual: bool = False
    add_prefix_space: bool = False
    use_regex: bool = True


@dataclass(frozen=True)
class ByteLevelBPE:
    """What replaying needs from a tokenizer; build it with `from_tokenizer` or `from_json`."""

    vocab: Mapping[str, int] = field(repr=False)
    ranks: Mapping[tuple[str, str], int] = field(repr=False)
    pre: tuple[PreStep, ...] = ()
    added: tuple[tuple[str, int], ...] = ()
    normalizer: tuple[str, ...] = ()
    ignore_merges: bool = False

    @property
    def n_merges(self) -> int:
        return len(self.ranks)

    @property
    def n_ids(self) -> int:
        """Distinct ids: vocabulary entries and added tokens (some added tokens are in both)."""
        return len(set(self.vocab.values()) | {i for _, i in self.added})

    @property
    def missing_bytes(self) -> tuple[int, ...]:
        """Byte values with no token of their own; the tokenizer drops them from a word.

        Example (SmolLM2): len(m.missing_bytes) -> 21 (C0, C1, F5-FF and a few control bytes)
        """
        return tuple(b for b in range(256) if _BYTE_CHAR[b] not in self.vocab)

    @property
    def missing_invalid_utf8(self) -> tuple[int, ...]:
        """The missing bytes that valid UTF-8 never contains (C0, C1 and F5-FF), so no training
        text could have given them a token.

        Example (SmolLM2): len(m.missing_invalid_utf8) -> 13
        """
        return tuple(b for b in self.missing_bytes if b in (0xC0, 0xC1) or b >= 0xF5)

    @cached_property
    def merges_digits(self) -> bool:
        """Whether any merge joins two digits (SmolLM2's do not: every digit stays a token).

        Example: from_tokenizer(smollm2_tokenizer).merges_digits -> False
        """
        return any(a.isdigit() and b.isdigit() for a, b in self.ranks)

    @cached_property
    def by_rank(self) -> dict[int, tuple[str, str]]:
        """Rank -> merged pair (computed once: a replay looks up only the ranks it used)."""
        return {r: p for p, r in self.ranks.items()}

    @cached_property
    def id_to_piece(self) -> dict[int, str]:
        table = {i: p for p, i in self.vocab.items()}
        table.update({i: c for c, i in self.added})
        return table


def _merge_pairs(merges: list) -> list[tuple[str, str]]:
    """Merges as pairs: newer files store ["Ġ", "t"], older ones "Ġ t"."""
    out = []
    for m in merges:
        if isinstance(m, str):
            a, _, b = m.partition(" ")
            out.append((a, b))
        else:
            out.append((m[0], m[1]))
    return out


def _normalizers(spec: dict | None) -> tuple[str, ...]:
    if spec is None:
        return ()
    kind = spec.get("type")
    if kind == "Sequence":
        return tuple(n for part in spec.get("normalizers", []) for n in _normalizers(part))
    if kind in NORMALIZERS:
        return (kind,)
    raise NotByteLevelBPE("unsupported", f"normalizer {kind}")


def _pre_steps(spec: dict | None) -> tuple[PreStep, ...]:
    if spec is None:
        return ()
    kind = spec.get("type")
    if kind == "Sequence":
        return tuple(s for part in spec.get("pretokenizers", []) for s in _pre_steps(part))
    if kind == "ByteLevel":
        return (PreStep("bytelevel", add_prefix_space=bool(spec.get("add_prefix_space")),
                        use_regex=bool(spec.get("use_regex", True))),)
    if kind == "Digits":
        return (PreStep("digits", individual=bool(spec.get("individual_digits"))),)
    if kind == "Split":
        pattern = spec.get("pattern", {})
        behavior = str(spec.get("behavior", "Isolated")).lower()
        if spec.get("invert") or behavior not in ("isolated", "removed"):
            raise NotByteLevelBPE("unsupported", f"Split {behavior}")
        if "Regex" in pattern:
            source = pattern["Regex"]
        elif "String" in pattern:
            source = regex.escape(pattern["String"])
        else:
            raise NotByteLevelBPE("unsupported", "Split pattern")
        return (PreStep("split", pattern=source, behavior=behavior),)
    if kind in ("Metaspace", "Whitespace", "WhitespaceSplit", "BertPreTokenizer", "CharDelimiterSplit"):
        raise NotByteLevelBPE("not_byte_level", f"pre-tokenizer {kind}")
    raise NotByteLevelBPE("unsupported", f"pre-tokenizer {kind}")


def from_json(data: Mapping[str, Any]) -> ByteLevelBPE:
    """Read a parsed tokenizer.json; raise NotByteLevelBPE if it is not byte-level BPE.

    Example: from_json(json.loads(tok.backend_tokenizer.to_str())).n_merges -> 48900 (SmolLM2)
    """
    model = data.get("model") or {}
    if model.get("type") != "BPE":
        raise NotByteLevelBPE("not_bpe", str(model.get("type")))
    if model.get("byte_fallback") or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        raise NotByteLevelBPE("not_byte_level", "SentencePiece-style BPE")
    pre = _pre_steps(data.get("pre_tokenizer"))
    if not any(s.kind == "bytelevel" for s in pre):
        raise NotByteLevelBPE("not_byte_level", "no ByteLevel pre-tokenizer")
    vocab = dict(model.get("vocab") or {})
    ranks: dict[tuple[str, str], int] = {}
    for rank, pair in enumerate(_merge_pairs(list(model.get("merges") or []))):
        ranks.setdefault(pair, rank)  # a repeated merge keeps its first (smallest) rank
    added = tuple(sorted(((a["content"], int(a["id"])) for a in data.get("added_tokens") or [] if a.get("content")),
                         key=lambda x: -len(x[0])))
    return ByteLevelBPE(vocab=vocab, ranks=ranks, pre=pre, added=added,
                        normalizer=_normalizers(data.get("normalizer")),
                        ignore_merges=bool(model.get("ignore_merges")))


def from_tokenizer(tokenizer: Any) -> ByteLevelBPE:
    """The replayable description of a Hugging Face (fast) tokenizer.

    Example: from_tokenizer(loaded.tokenizer).ranks[("Ġ", "t")] -> 0 (SmolLM2's first merge)
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not hasattr(backend, "to_str"):
        raise NotByteLevelBPE("no_fast", type(tokenizer).__name__)
    return from_json(json.loads(backend.to_str()))


def _regex(source: str) -> regex.Pattern:
    if source not in _REGEXES:
        _REGEXES[source] = regex.compile(source)
    return _REGEXES[source]


def _split_isolated(piece: str, pattern: regex.Pattern, keep_matches: bool = True) -> list[str]:
    out, pos = [], 0
    for m in pattern.finditer(piece):
        if m.end() == m.start():
            continue
        if m.start() > pos:
            out.append(piece[pos:m.start()])
        if keep_matches:
            out.append(m.group())
        pos = m.end()
    if pos < len(piece):
        out.append(piece[pos:])
    return out


def pre_tokenize(text: str, model: ByteLevelBPE) -> list[str]:
    """Normalize and cut a text (with no added tokens in it) into words, as byte-level strings.

    Example (SmolLM2): pre_tokenize("Ciao, mondo!", m) -> ["Ciao", ",", "Ġmondo", "!"]
    """
    for form in model.normalizer:
        text = unicodedata.normalize(form, text)
    pieces = [text] if text else []
    encoded = False
    for step in model.pre:
        if step.kind == "split":
            pat = _regex(step.pattern)
            pieces = [q for p in pieces for q in _split_isolated(p, pat, step.behavior == "isolated")]
        elif step.kind == "digits":
            pat = _regex(r"\p{N}" if step.individual else r"\p{N}+")
            pieces = [q for p in pieces for q in _split_isolated(p, pat)]
        else:  # bytelevel: optional prefix space per piece, GPT-2's regex, then bytes -> characters
            if step.add_prefix_space:
                pieces = [p if p.startswith(" ") else " " + p for p in pieces]
            if step.use_regex:
                pat = _regex(GPT2_PATTERN)
                pieces = [q for p in pieces for q in _split_isolated(p, pat)]
            pieces = [to_byte_level(to_bytes(p)) for p in pieces]
            encoded = True
    return pieces if encoded else [to_byte_level(to_bytes(p)) for p in pieces]


def _merge_word(word: str, model: ByteLevelBPE) -> list[tuple[int, int, int]]:
    """Apply the merges to one word; return (rank, first boundary, last boundary) per merge.

    Boundary b lies between bytes b and b + 1 of the word. Characters missing from the
    vocabulary are dropped before merging, as the tokenizer does (so a merge may span them:
    then it removes several boundaries). Same-rank merges go left to right.
    """
    vocab, ranks = model.vocab, model.ranks
    pos = [i for i, ch in enumerate(word) if ch in vocab]
    sym = [word[i] for i in pos]
    n = len(sym)
    if n < 2:
        return []
    start, end = pos[:], [p + 1 for p in pos]
    nxt = list(range(1, n)) + [-1]
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap = []
    for i in range(n - 1):
        r = ranks.get((sym[i], sym[i + 1]))
        if r is not None:
            heap.append((r, i))
    heapq.heapify(heap)
    done = []
    while heap:
        r, i = heapq.heappop(heap)
        j = nxt[i] if alive[i] else -1
        if j < 0 or ranks.get((sym[i], sym[j])) != r:
            continue  # stale: one side already merged into something else
        done.append((r, end[i] - 1, start[j] - 1))
        sym[i] += sym[j]
        end[i] = end[j]
        alive[j] = False
        nxt[i] = nxt[j]
        if nxt[j] >= 0:
            prv[nxt[j]] = i
        for a, b in ((prv[i], i), (i, nxt[i])):
            if a >= 0 and b >= 0:
                rr = ranks.get((sym[a], sym[b]))
                if rr is not None:
                    heapq.heappush(heap, (rr, a))
    return done


@dataclass(frozen=True)
class ReplayStep:
    """Step k of a replay: merge number `rank` of the tokenizer, `left` + `right` -> `merged`
    (vocabulary id `id`), applied `count` times in the text."""

    rank: int
    left: str
    right: str
    merged: str
    id: int
    count: int


@dataclass(frozen=True)
class Token:
    """A token of the text at some step: bytes start:end of `Replay.data`, vocabulary id `id`
    (-1 for a byte the vocabulary lacks, which the tokenizer drops), vocabulary string `piece`,
    `special` for an added token such as <|endoftext|>."""

    start: int
    end: int
    id: int
    piece: str
    special: bool = False


@dataclass(frozen=True)
class Replay:
    """Every state of a text under a tokenizer's merges: `tokens(k)` after k steps (0 = bytes).

    `data` is the byte stream the merges see (prefix spaces included), `words` the number of
    pre-tokenized words, `whole` the words found whole in the vocabulary (ignore_merges).
    """

    text: str
    data: bytes
    steps: tuple[ReplayStep, ...]
    cut_step: np.ndarray = field(repr=False)
    fixed: Mapping[int, tuple[int, str, bool]] = field(repr=False)  # start -> (id, piece, special)
    byte_ids: tuple[int, ...] = field(repr=False)
    id_to_piece: Mapping[int, str] = field(repr=False)
    words: int = 0
    whole: int = 0

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    @property
    def nbytes(self) -> int:
        """What this replay holds of its own, for a cache's byte budget: `id_to_piece` is the
        tokenizer's vocabulary, shared with the tokenizer's BPE model, and not counted."""
        from lib.serving.sizes import nbytes

        return nbytes((self.text, self.data, self.steps, self.cut_step, self.fixed, self.byte_ids))

    def tokens(self, k: int | None = None, start: int = 0, end: int | None = None) -> list[Token]:
        """The text as tokens after k steps (all of them by default), optionally bytes start:end.

        Example: [t.piece for t in replay("Ciao", m).tokens(0)] -> ["C", "i", "a", "o"]
        """
        k = self.n_steps if k is None else max(0, min(k, self.n_steps))
        starts, ends, last = segments(self.cut_step, k, start, len(self.data) if end is None else end)
        step_ids = [0] + [s.id for s in self.steps]
        return [self._token(s, e, l, step_ids) for s, e, l in zip(starts.tolist(), ends.tolist(), last.tolist())]

    def _token(self, s: int, e: int, last: int, step_ids: list[int]) -> Token:
        """The token over bytes s:e whose latest inner boundary went at step `last`."""
        if last > 0:
            tid = step_ids[last]
            return Token(s, e, tid, self.id_to_piece.get(tid, ""))
        if s in self.fixed:  # an added token, or a word found whole (one piece from step 0)
            tid, piece, special = self.fixed[s]
            return Token(s, e, tid, piece, special)
        tid = self.byte_ids[self.data[s]]
        return Token(s, e, tid, _BYTE_CHAR[self.data[s]])

    def lives(self, start: int = 0, end: int | None = None) -> list[tuple[Token, int, int]]:
        """Every token the text (or bytes start:end, ending at a chunk boundary) holds at some
        step, with the steps it lives through: (token, born, dies), there after k steps when
        born <= k < dies (lib.lessons.bpe.lives); a token never merged further dies at NEVER.

        Example: [(t.piece, b, d) for t, b, d in replay(" the", m).lives()][:2]
                 -> [("Ġ", 0, 1), ("Ġt", 1, 2)]  (SmolLM2)
        """
        starts, ends, born, dies = lives(self.cut_step, start, len(self.data) if end is None else end)
        step_ids = [0] + [s.id for s in self.steps]
        return [(self._token(s, e, b, step_ids), b, d)
                for s, e, b, d in zip(starts.tolist(), ends.tolist(), born.tolist(), dies.tolist())]

    @property
    def ids(self) -> list[int]:
        """The final token ids, as the tokenizer gives them (without BOS/EOS)."""
        return [t.id for t in self.tokens() if t.id >= 0]


def _split_added(text: str, model: ByteLevelBPE) -> list[tuple[str, int | None]]:
    """Cut out the added tokens (longest first at each position): [(piece, id or None)]."""
    if not model.added or not text:
        return [(text, None)] if text else []
    pattern = _regex("|".join(regex.escape(c) for c, _ in model.added))
    ids = dict(model.added)
    out, pos = [], 0
    for m in pattern.finditer(text):
        if m.start() > pos:
            out.append((text[pos:m.start()], None))
        out.append((m.group(), ids[m.group()]))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], None))
    return out


def replay(text: str, model: ByteLevelBPE) -> Replay:
    """Tokenize `text` with `model` rank by rank, keeping every intermediate state.

    Example (SmolLM2): r = replay(" the", m); r.steps[0] -> merge 0, "Ġ" + "t" -> "Ġt";
             [t.piece for t in r.tokens()] -> ["Ġthe"]
    """
    words: list[tuple[str, int | None]] = []  # (byte-level word or added token, added id)
    for piece, added_id in _split_added(text, model):
        if added_id is not None:
            words.append((piece, added_id))
        else:
            words.extend((w, None) for w in pre_tokenize(piece, model))

    cache: dict[str, list[tuple[int, int, int]]] = {}
    parts: list[np.ndarray] = []
    chunks: list[bytes] = []
    fixed: dict[int, tuple[int, str, bool]] = {}
    offset, whole = 0, 0
    counts: dict[int, int] = {}
    per_word: list[tuple[int, list[tuple[int, int, int]]]] = []
    for w, added_id in words:
        if added_id is not None:
            data = to_bytes(w)
            fixed[offset] = (added_id, w, True)
            cut = np.zeros(len(data) - 1, dtype=np.int32)  # one piece from the start
        else:
            data = bytes(byte_decoder()[ch] for ch in w)
            cut = np.full(len(data) - 1, NEVER, dtype=np.int32)
            if model.ignore_merges and len(w) > 1 and w in model.vocab:
                fixed[offset] = (model.vocab[w], w, False)
                cut[:] = 0
                whole += 1
            else:
                if w not in cache:
                    cache[w] = _merge_word(w, model)
                per_word.append((len(parts), cache[w]))
                for r, _, _ in cache[w]:
                    counts[r] = counts.get(r, 0) + 1
        parts.append(cut)
        parts.append(np.array([NEVER], dtype=np.int32))
        chunks.append(data)
        offset += len(data)

    order = sorted(counts)
    step_of = {r: k + 1 for k, r in enumerate(order)}  # rank -> step (1-based)
    for part_index, done in per_word:
        cut = parts[part_index]
        for r, lo, hi in done:
            cut[lo:hi + 1] = step_of[r]
    cut_step = np.concatenate(parts)[:-1] if parts else np.zeros(0, dtype=np.int32)
    cut_step.setflags(write=False)

    pairs = model.by_rank
    steps = []
    for r in order:
        a, b = pairs[r]
        steps.append(ReplayStep(rank=r, left=a, right=b, merged=a + b, id=model.vocab.get(a + b, -1), count=counts[r]))
    byte_ids = tuple(model.vocab.get(_BYTE_CHAR[b], -1) for b in range(256))
    return Replay(text=text, data=b"".join(chunks), steps=tuple(steps), cut_step=cut_step, fixed=fixed,
                  byte_ids=byte_ids, id_to_piece=model.id_to_piece, words=len(words), whole=whole)
