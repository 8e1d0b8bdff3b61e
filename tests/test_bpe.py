"""BPE: the textbook example, invariants, a naive trainer as oracle, and the real tokenizer's own
output as the oracle of the replay (SmolLM2, plus GPT-2- and Llama-3-style tokenizers built here).
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from lib.lessons import bpe
from lib.lessons.bpe import NEVER, Merge, chunk_end, decode, encode, merge, pair_counts, segments, split, train
from lib.lessons.bpe_replay import NotByteLevelBPE, from_json, from_tokenizer, pre_tokenize, replay, to_byte_level
from lib.model.tokens import byte_decoder

# Both languages, digits, emoji (with a ZWJ sequence and a flag), code, whitespace runs, CJK,
# control characters, Windows newlines.
VARIED = [
    "Il gatto dorme sul divano perché è stanco; più tardi mangerà.",
    "The cat sat on the mat because it was tired. It's done, isn't it? I'll see.",
    "Nel 2024 ho speso 1.234,56 € e 3,14159 ore: 1000000 di motivi, +39 02 1234567.",
    "😀🐱🚀 👩‍👩‍👧 🇮🇹🇬🇧 emoji-only: 😀😀😀",
    "def f(x):\n    return x ** 2  # square\n\n\n\tif x != 0:\r\n        print(f'{x=}')\n",
    "   spazi    multipli\t\ttab   \n\n   fine   ",
    "中文文本，日本語のテキスト、한국어 텍스트.",
    "ctrl\x00\x01\x1b[31m red \x7f\x1f unit\x1c sep\x0b\x0c",
    "ÀÉÌÒÙ àèìòù — «virgolette» “curly” ‘single’ … ™ ©",
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA aaaaaaa 0000000000000",
    "",
    " ",
    "a",
]
ROUND_TRIP = VARIED + ["\ud800 lone surrogate \udfff", "\U0010ffff\U00040000", "x" * 3000]
TRAIN_CORPUS = "\n".join(VARIED * 3) + (
    "La tokenizzazione spezza il testo in pezzi: parole intere, pezzi di parola, singoli byte. "
    "Tokenization cuts text into pieces: whole words, parts of words, single bytes. ") * 5


def naive_train(text: str, vocab_size: int, pattern: str) -> list[tuple[tuple[int, int], int]]:
    """The same algorithm without incremental counts: recount every pair of every chunk each time."""
    chunks = [list(bpe.to_bytes(c)) for c in split(text, pattern)]
    out = []
    for new_id in range(256, vocab_size):
        counts = Counter()
        for c in chunks:
            pair_counts(c, counts)
        if not counts:
            break
        pair, count = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))  # the documented tie-break
        if count < 2:
            break
        chunks = [merge(c, pair, new_id) for c in chunks]
        out.append((pair, count))
    return out


# ------------------------------------------------------------------ the textbook case


def test_textbook_aaabdaaabac():
    t = train("aaabdaaabac", 300)
    # aa -> Z (256), then ab -> Y (257), then ZY -> X (258): "XdXac", as in the textbook.
    assert [m.pair for m in t.merges] == [(97, 97), (97, 98), (256, 257)]
    assert [m.count for m in t.merges] == [4, 2, 2]  # "aaab" holds the pair (a, a) twice, with overlap
    assert [m.replaced for m in t.merges] == [2, 2, 2]
    assert t.n_tokens == (11, 9, 7, 5)
    assert t.stop == "exhausted" and t.vocab_size == 259  # every pair left occurs once
    assert [s.id for s in t.spans(3)] == [258, ord("d"), 258, ord("a"), ord("c")]
    assert [s.id for s in t.spans(1)] == [256, 97, 98, 100, 256, 97, 98, 97, 99]
    assert encode("aaabdaaabac", t.merges) == [258, 100, 258, 97, 99]
    assert t.vocab()[258] == b"aaab"
    assert t.top_pairs[0][0] == ((97, 97), 4) and t.top_pairs[1][0] == ((97, 98), 2)


def test_quiz_answer_on_the_textbook_case_is_computed():
    """The quiz asks how many tokens "aaabdaaabac" has after the first merge: lib says so."""
    from lib.course.quiz import load_bank

    t = train("aaabdaaabac", 257)
    for lang in ("it", "en"):
        q = next(q for q in load_bank(lang, "tokenization") if q.id == "textbook_first_merge")
        assert q.answer == t.n_tokens[1] == 9


def test_docstring_examples():
    assert merge([1, 2, 3, 1, 2], (1, 2), 256) == [256, 3, 256]
    assert merge([97, 97, 97], (97, 97), 256) == [256, 97]
    assert pair_counts([97, 97, 97, 98]) == Counter({(97, 97): 2, (97, 98): 1})
    assert split("Il gatto, 2024!") == ["Il", " gatto", ",", " 2024", "!"]
    assert split("Il gatto, 2024!", "gpt4") == ["Il", " gatto", ",", " ", "202", "4", "!"]
    starts, ends, last = segments(np.array([1, 9, 2]), 1)
    assert starts.tolist() == [0, 2, 3] and ends.tolist() == [2, 3, 4] and last.tolist() == [1, 0, 0]
    assert chunk_end(np.array([1, NEVER, 2, NEVER, 3]), 4) == 4
    assert chunk_end(np.array([1, NEVER, 2]), 0) == 2


# ------------------------------------------------------------------ split


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
@pytest.mark.parametrize("text", ROUND_TRIP)
def test_split_loses_nothing(pattern, text):
    assert "".join(split(text, pattern)) == text


def test_gpt4_pattern_differs_where_documented():
    assert split("HOW'S 12345\n\nok", "gpt2") == ["HOW", "'", "S", " 12345", "\n", "\n", "ok"]
    assert split("HOW'S 12345\n\nok", "gpt4") == ["HOW", "'S", " ", "123", "45", "\n\n", "ok"]


@pytest.mark.parametrize("text", VARIED)
def test_gpt2_split_equals_the_tokenizers_library(text):
    from tokenizers import pre_tokenizers

    theirs = [bytes(byte_decoder()[c] for c in p).decode("utf-8")
              for p, _ in pre_tokenizers.ByteLevel(add_prefix_space=False).pre_tokenize_str(text)]
    assert split(text, "gpt2") == theirs


# ------------------------------------------------------------------ training: oracle and invariants


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
def test_incremental_training_equals_a_full_recount(pattern):
    t = train(TRAIN_CORPUS, 256 + 150, pattern)
    assert [(m.pair, m.count) for m in t.merges] == naive_train(TRAIN_CORPUS, 256 + 150, pattern)


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
def test_training_work_redraws_the_corpus(pattern):
    t = train(TRAIN_CORPUS, 256 + 120, pattern)
    assert t.stop == "target" and t.n_merges == 120 and t.vocab_size == 376
    assert [m.id for m in t.merges] == list(range(256, 376))
    table = t.vocab()
    for k in [0, 1, 2, 7, 60, 120]:
        spans = t.spans(k)
        assert b"".join(t.corpus[s.start:s.end] for s in spans) == t.corpus
        assert len(spans) == t.n_tokens[k]
        # Each span's id names exactly its bytes, and the state equals re-encoding with k merges.
        assert all(table[s.id] == t.corpus[s.start:s.end] for s in spans)
        assert [s.id for s in spans] == encode(TRAIN_CORPUS, t.merges[:k], pattern)
    for k, m in enumerate(t.merges):
        assert t.top_pairs[k][0] == (m.pair, m.count)
        assert m.count >= m.replaced >= 1 and t.n_tokens[k + 1] == t.n_tokens[k] - m.replaced
        # The top pairs are the real counts in the state after k merges.
        counts = Counter()
        bounds = set(np.cumsum([len(bpe.to_bytes(c)) for c in split(TRAIN_CORPUS, pattern)]).tolist())
        current: list[int] = []
        for s in t.spans(k):
            current.append(s.id)
            if s.end in bounds:
                pair_counts(current, counts)
                current = []
        best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:len(t.top_pairs[k])]
        assert list(t.top_pairs[k]) == best
        if k >= 5:
            break  # the recount is slow: the first steps are enough


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
def test_lives_hold_every_state_of_the_training(pattern):
    """Oracle: the tokens alive at step k are segments(k), for every k, in the whole corpus and in
    a window that ends at a chunk boundary."""
    t = train(TRAIN_CORPUS, 256 + 120, pattern)
    for end in (None, chunk_end(t.cut_step, 200)):
        starts, ends, born, dies = bpe.lives(t.cut_step, 0, end)
        assert (np.diff(starts) >= 0).all() and (born < dies).all()
        for k in range(t.n_merges + 2):
            alive = (born <= k) & (k < dies)
            s, e, last = segments(t.cut_step, k, 0, end)
            assert starts[alive].tolist() == s.tolist() and ends[alive].tolist() == e.tolist()
            assert born[alive].tolist() == last.tolist()
    assert [x.tolist() for x in bpe.lives(np.array([1, NEVER, 2]))] == [
        [0, 0, 1, 2, 2, 3], [1, 2, 2, 3, 4, 4], [0, 1, 0, 0, 2, 0], [1, NEVER, 1, 2, NEVER, 2]]
    assert [x.tolist() for x in bpe.lives(np.zeros(0, dtype=np.int32))] == [[0], [1], [0], [NEVER]]
    assert [x.size for x in bpe.lives(np.zeros(0, dtype=np.int32), 0, 0)] == [0, 0, 0, 0]


@pytest.mark.parametrize("size", [-5, 0, 255, 256])
def test_no_merges_below_257(size):
    t = train("abababab", size)
    assert t.merges == () and t.vocab_size == 256 and t.stop == "target"
    assert [s.id for s in t.spans(0)] == list(b"abababab")


def test_exhausted_corpus_and_empty_text():
    t = train("ab ab", 1000)
    assert t.stop == "exhausted" and t.n_merges == 1  # chunks "ab" and " ab" share only (a, b)
    empty = train("", 1000)
    assert empty.merges == () and empty.spans(0) == [] and empty.stop == "exhausted"


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
@pytest.mark.parametrize("text", ROUND_TRIP)
def test_decode_encode_round_trip(pattern, text):
    merges = train(TRAIN_CORPUS, 256 + 200, pattern).merges
    assert decode(encode(text, merges, pattern), merges) == text


def test_decode_of_half_a_character_is_replacement_not_crash():
    merges = train(TRAIN_CORPUS, 300).merges
    assert decode([0xF0, 0x9F], merges) == "\ufffd"


def test_same_input_same_merges():
    assert train(TRAIN_CORPUS, 400).merges == train(TRAIN_CORPUS, 400).merges


def test_our_merges_inside_a_huggingface_tokenizer_give_our_ids():
    """Oracle for encode: the tokenizers library's BPE, given our merges, cuts texts as we do."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    t = train(TRAIN_CORPUS, 256 + 200)
    table = t.vocab()
    assert len(set(table.values())) == len(table)  # no two merges spell the same bytes here
    vocab = {to_byte_level(b): i for i, b in table.items()}
    merges = [(to_byte_level(table[m.pair[0]]), to_byte_level(table[m.pair[1]])) for m in t.merges]
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    for text in VARIED:
        assert tk.encode(text, add_special_tokens=False).ids == encode(text, t.merges), text


# ------------------------------------------------------------------ replay of real tokenizers

REPLAY_TEXTS = VARIED + ["<|endoftext|>Ciao<|im_start|> mondo <|im_end|>", "x" * 500 + " " * 40 + "\n" * 9]


def _check_states(r):
    previous = None
    for k in range(r.n_steps + 1):
        tokens = r.tokens(k)
        assert b"".join(r.data[t.start:t.end] for t in tokens) == r.data
        if previous is not None:
            assert len(previous) - len(tokens) == r.steps[k - 1].count
        previous = tokens
    assert [s.rank for s in r.steps] == sorted({s.rank for s in r.steps})


@pytest.fixture(scope="module")
def smollm(real):
    return from_tokenizer(real.tokenizer)


def test_smollm_merges_are_read_from_the_tokenizer(smollm, real):
    data = json.loads(real.tokenizer.backend_tokenizer.to_str())
    assert smollm.n_merges == len(data["model"]["merges"]) == 48900
    assert smollm.ranks[("Ġ", "t")] == 0
    # No merge joins two digits: the page says so, and "2024" is four tokens.
    assert not smollm.merges_digits and len(real.tokenizer.encode("2024", add_special_tokens=False)) == 4
    assert len(smollm.missing_bytes) == 256 - sum(ch in smollm.vocab for ch in byte_decoder())
    # The older "a b" string format gives the same ranks.
    data["model"]["merges"] = [" ".join(p) for p in data["model"]["merges"]]
    assert from_json(data).ranks == smollm.ranks


@pytest.mark.parametrize("text", REPLAY_TEXTS)
def test_replay_equals_the_real_tokenizer(smollm, real, text):
    r = replay(text, smollm)
    assert r.ids == real.tokenizer.encode(text, add_special_tokens=False)
    _check_states(r)
    lives = r.lives()
    for k in range(r.n_steps + 1):  # the lives hold every state, added tokens and whole words included
        assert [t for t, b, d in lives if b <= k < d] == r.tokens(k)
    first = r.tokens(0)
    assert all(t.end - t.start == 1 or t.special for t in first)


def test_replay_on_a_long_varied_text(smollm, real):
    text = "\n".join(VARIED) * 8
    assert replay(text, smollm).ids == real.tokenizer.encode(text, add_special_tokens=False)


@pytest.mark.parametrize("text", VARIED)
def test_pre_tokenize_equals_the_tokenizer(smollm, real, text):
    theirs = [p for p, _ in real.tokenizer.backend_tokenizer.pre_tokenizer.pre_tokenize_str(text)]
    assert pre_tokenize(text, smollm) == theirs


def test_replay_shows_its_work_on_the(smollm):
    r = replay(" the", smollm)
    assert [(s.left, s.right) for s in r.steps] == [("Ġ", "t"), ("h", "e"), ("Ġt", "he")]
    assert [t.piece for t in r.tokens(0)] == ["Ġ", "t", "h", "e"]
    assert [t.piece for t in r.tokens(2)] == ["Ġt", "he"]
    assert [t.piece for t in r.tokens()] == ["Ġthe"]


def _byte_level_tokenizer(pre, normalizer=None, ignore_merges=False, vocab_size=700):
    """A small byte-level BPE trained here by the tokenizers library (no download)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE(ignore_merges=ignore_merges))
    tk.pre_tokenizer = pre
    if normalizer is not None:
        tk.normalizer = normalizer
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator([TRAIN_CORPUS] * 3, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>")


def _tokenizer_kinds():
    from tokenizers import Regex, normalizers, pre_tokenizers

    gpt4 = Regex(bpe.GPT4_PATTERN)
    return {
        "gpt2": dict(pre=pre_tokenizers.ByteLevel(add_prefix_space=False)),
        "gpt2_prefix_space": dict(pre=pre_tokenizers.ByteLevel(add_prefix_space=True)),
        "smollm_digits": dict(pre=pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                           pre_tokenizers.ByteLevel(add_prefix_space=False)])),
        "llama3_style": dict(pre=pre_tokenizers.Sequence([
            pre_tokenizers.Split(gpt4, behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]), ignore_merges=True),
        "qwen_style_nfc": dict(pre=pre_tokenizers.Sequence([
            pre_tokenizers.Split(gpt4, behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]), normalizer=normalizers.NFC()),
    }


@pytest.mark.parametrize("kind", list(_tokenizer_kinds()))
def test_replay_equals_other_byte_level_tokenizers(kind):
    tok = _byte_level_tokenizer(**_tokenizer_kinds()[kind])
    model = from_tokenizer(tok)
    # Digits split one by one before training (SmolLM2's choice) leave no digit merges to learn.
    assert model.merges_digits == (kind != "smollm_digits")
    for text in REPLAY_TEXTS + ["Cafe\u0301 e\u0300 NFC"]:
        r = replay(text, model)
        assert r.ids == tok.encode(text, add_special_tokens=False), (kind, text)
        _check_states(r)


def test_replay_with_no_merges_is_bytes(byte_tokenizer):
    model = from_tokenizer(byte_tokenizer)
    r = replay("Ciao 😀", model)
    assert r.n_steps == 0 and r.ids == byte_tokenizer.encode("Ciao 😀", add_special_tokens=False)
    assert len(r.ids) == len("Ciao 😀".encode())


def test_not_byte_level_tokenizers_are_refused_with_a_code():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    wordpiece = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    with pytest.raises(NotByteLevelBPE) as e:
        from_tokenizer(PreTrainedTokenizerFast(tokenizer_object=wordpiece))
    assert e.value.code == "not_bpe"
    sentencepiece = Tokenizer(models.BPE({"▁a": 0, "▁": 1, "a": 2}, [("▁", "a")]))
    sentencepiece.pre_tokenizer = pre_tokenizers.Metaspace()
    with pytest.raises(NotByteLevelBPE) as e:
        from_tokenizer(PreTrainedTokenizerFast(tokenizer_object=sentencepiece))
    assert e.value.code == "not_byte_level"
    with pytest.raises(NotByteLevelBPE) as e:
        from_tokenizer(object())
    assert e.value.code == "no_fast"
    lowercase = json.loads(wordpiece.to_str())
    lowercase["model"] = {"type": "BPE", "vocab": {}, "merges": []}
    lowercase["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}
    lowercase["normalizer"] = {"type": "Lowercase"}
    with pytest.raises(NotByteLevelBPE) as e:
        from_json(lowercase)
    assert e.value.code == "unsupported"


def test_missing_bytes_that_utf8_never_uses(smollm):
    """The page splits the missing bytes: those no valid UTF-8 text contains (decoding them alone,
    or as the lead byte of any sequence, fails) and the rest, which the corpus simply never had."""
    invalid = set(smollm.missing_invalid_utf8)
    assert invalid <= set(smollm.missing_bytes)
    for b in smollm.missing_bytes:
        x = bytes([b])
        as_lead = [x + tail for tail in (b"", b"\x80", b"\x80\x80", b"\x80\x80\x80", b"\xa0\x80", b"\x90\x80\x80")]
        as_continuation = [b"\xc3" + x, b"\xe2\x82" + x, b"\xf0\x9f\x98" + x]
        never = not any(_decodes(d) for d in as_lead + as_continuation)
        assert (b in invalid) == never, hex(b)


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False
