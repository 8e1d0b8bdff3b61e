"""AppTest of the tokenization lesson in both languages: what the browser views are sent (the
training's and the replay's every step, against lib and the tokenizer's own output), the
Italian/English measurement, bad input, other models. The views' moves themselves (step, play,
target, raw/ids, paragraph) are answered in the browser: tests/e2e/test_tokenization.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from lib.course import i18n
from lib.course.quiz import format_number, load_bank
from lib.lessons import bpe
from lib.model.tokens import show_bytes
from lib.serving.payload import unpack_ints
from tests.apptest import page_text, start, chart_keys, view_data

PAGE = "pages/02_tokenization.py"


def _open(lang, text=None):
    """The lesson page, then the learner's text typed while on it (so only this page runs on it)."""
    at = start(lang, PAGE)
    if text is not None:
        at.text_area(key="app.text").set_value(text).run()
        assert not at.exception, at.exception
    return at


def _labels(lang):
    return i18n.ui(lang)


def _prefix(label: str) -> str:
    """The fixed text of a label up to its first placeholder."""
    return label.split("{")[0].strip()


def _alive(lives: dict, k: int) -> np.ndarray:
    """Indices of the tokens a view shows after k steps (born <= k < dies), as tokenization.js does."""
    born, dies = unpack_ints(lives["born"]), unpack_ints(lives["dies"])
    return np.flatnonzero((born <= k) & (k < dies))


def _build_ids(at, k: int) -> list[int]:
    """Token ids of the training view's chips after k merges."""
    lives = view_data(at, "tokenization.view")["lives"]
    return unpack_ints(lives["id"])[_alive(lives, k)].tolist()


def _real_ids(at, k: int | None = None) -> list[int]:
    """Token ids of the replay view's chips after k steps (the last by default), dropped bytes as -1."""
    data = view_data(at, "tokenization.real_view")
    k = data["n_steps"] if k is None else k
    kinds = unpack_ints(data["lives"]["kind"])[_alive(data["lives"], k)]
    return [data["kinds"][i][0] for i in kinds]


def _corpus(at, lang):
    from ui.lessons.tokenization.sections import build_corpus

    return build_corpus(list(at.button_group(key="tokenization.corpus").value), at.session_state["app.text"])[0]


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_page_runs_with_real_content(lang, real):
    at = _open(lang)
    labels = _labels(lang)
    text = page_text(at)
    assert any(x.value == labels["lesson.tokenization.title"] for x in at.title)
    assert i18n.lesson(lang, "tokenization")["intro"].splitlines()[0][:50] in text
    real_section = i18n.fill(i18n.lesson(lang, "tokenization")["real"], model_name=labels["model.embedded_name"],
                             n_merges=format_number(48900, lang), vocab_size=format_number(49152, lang))
    assert real_section.split("\n\n")[0] in text  # the live numbers, filled in
    learner = at.session_state["app.text"]
    own = real.tokenizer.encode(learner, add_special_tokens=False)
    assert any(x.value == i18n.fill(labels["tokenization.real.same"], n=str(len(own))) for x in at.success)
    # Step 0 of both animations: every chip is one byte; the training corpus starts with the learner's text.
    train_ids = _build_ids(at, 0)
    assert train_ids[:len(learner.encode())] == list(learner.encode())
    assert len(_real_ids(at, 0)) == len(learner.encode())
    build, real_view = view_data(at, "tokenization.view"), view_data(at, "tokenization.real_view")
    assert build["lang"] == real_view["lang"] == lang
    assert build["labels"]["target"] == labels["tokenization.build.target"]
    assert real_view["labels"]["view_raw"] == labels["tokenization.real.view.raw"]
    assert build["settings"] == {"target": 456, "view": "readable", "ids": True, "from_link": None}
    # The paragraph pair: each paragraph's tokens, counted by the tokenizer itself.
    from ui.lessons.tokenization.sections import paragraphs as paras

    pair = view_data(at, "tokenization.pair_view")
    assert len(pair["pairs"]) == len(paras("it"))
    assert pair["pairs"][0]["it"]["n"] == len(real.tokenizer.encode(paras("it")[0], add_special_tokens=False))
    # The Italian/English comparison is measured with the tokenizer itself.
    from ui.lessons.tokenization.sections import paragraphs

    it = sum(len(real.tokenizer.encode(p, add_special_tokens=False)) for p in paragraphs("it"))
    en = sum(len(real.tokenizer.encode(p, add_special_tokens=False)) for p in paragraphs("en"))
    assert it > en  # SmolLM2's vocabulary was learned mostly on English
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[labels["tokenization.lang.it_total"]].replace(".", "").replace(",", "") == str(it)
    assert metrics[labels["tokenization.lang.en_total"]].replace(".", "").replace(",", "") == str(en)
    assert chart_keys(at) == ["tokenization.lang_chart"]  # the animation's charts are drawn in the browser
    assert len([b for b in at.button if b.key and b.key.startswith("FormSubmitter:quiz.tokenization.")]) == \
        len(load_bank(lang, "tokenization"))


def test_the_training_view_holds_every_step_of_lib_s_training(monkeypatch):
    at = _open("en")
    training = bpe.train(_corpus(at, "en"), bpe.N_BYTES + 500, "gpt2")
    data = view_data(at, "tokenization.view")
    assert data["n_merges"] == training.n_merges >= 400 and data["n_bytes"] == len(training.corpus)
    assert unpack_ints(data["n_tokens"]).tolist() == list(training.n_tokens)
    merges = unpack_ints(data["merges"]).reshape(-1, 3)
    assert [(tuple(m[:2]), m[2]) for m in merges.tolist()] == [(m.pair, m.count) for m in training.merges]
    table = training.vocab()
    assert data["vocab"] == [show_bytes(table[i]) for i in range(256 + training.n_merges)]
    assert data["hex"][256] == table[256].hex().upper()
    # The chips after k merges are lib's spans of the window; the top pairs are lib's, step by step.
    window = bpe.chunk_end(training.cut_step, 2_500 // 3)
    assert data["window"] == window
    for k in (0, 1, 2, 3, 200, training.n_merges):
        assert _build_ids(at, k) == [s.id for s in training.spans(k, 0, window)], k
    lengths = unpack_ints(data["top"]["len"]).tolist()
    flat = unpack_ints(data["top"]["pairs"]).reshape(-1, 3).tolist()
    assert lengths == [len(p) for p in training.top_pairs]
    at3 = sum(lengths[:3])
    assert [((a, b), c) for a, b, c in flat[at3:at3 + lengths[3]]] == list(training.top_pairs[3])
    # A rerun sends the same data (the browser keeps its step); no training runs again.
    import ui.lessons.tokenization.sections as tv

    monkeypatch.setattr(tv.bpe, "train", lambda *a, **k: (_ for _ in ()).throw(AssertionError("trained again")))
    at.run()
    assert view_data(at, "tokenization.view") == data
    monkeypatch.undo()
    # Another splitting rule is another training: new data, so the animation starts again.
    at.button_group(key="tokenization.pattern").set_value("gpt4").run()
    assert not at.exception
    assert view_data(at, "tokenization.view")["key"] != data["key"]
    corpus = _corpus(at, "en")
    chunks = i18n.fill(_labels("en")["tokenization.build.corpus_size"], chars=format_number(len(corpus), "en"),
                       bytes=format_number(len(corpus.encode()), "en"),
                       chunks=format_number(len(bpe.split(corpus, "gpt4")), "en"))
    assert chunks in [c.value for c in at.caption]


def test_replay_last_step_equals_the_tokenizer(real):
    text = "Perché il 🍞 costa 3,50 €?\n  def f(x): return x  # ok"
    at = _open("en", text)
    assert not at.exception
    assert _real_ids(at) == real.tokenizer.encode(text, add_special_tokens=False)
    data = view_data(at, "tokenization.real_view")
    assert not any("\ufffd" in k[1] for k in data["kinds"])
    assert len(_real_ids(at, 0)) == len(text.encode())
    # The count of tokens after each step, of the whole text: bytes first, the tokenizer's at the end.
    now = unpack_ints(data["tokens_now"]).tolist()
    assert len(now) == data["n_steps"] + 1 and now[0] == len(text.encode()) and now[-1] == len(_real_ids(at))


@pytest.mark.parametrize("lang,text,expect", [
    ("it", "", "empty"),
    ("en", "   \n\t ", "empty"),
    ("it", "🐱🚀🇮🇹 😀", "emoji"),
    ("en", "parola " * 7200, "long"),
    ("it", "\x00\x01 ctrl \x1b[0m \x7f", "control"),
])
def test_bad_text_gets_a_message_not_a_traceback(lang, text, expect, real):
    at = _open(lang, text)
    labels = _labels(lang)
    assert not at.exception
    infos = [x.value for x in at.info]
    warnings = [x.value for x in at.warning]
    if expect == "empty":
        assert labels["tokenization.build.yours_empty"] in infos
        assert labels["text.empty"] in infos
    elif expect == "long":
        assert any(_prefix(labels["tokenization.build.yours_capped"]) in w for w in warnings)
        assert any(_prefix(labels["tokenization.real.capped"]) in w for w in warnings)
        assert len(_real_ids(at)) > 0
    else:
        own = real.tokenizer.encode(text, add_special_tokens=False)
        assert any(x.value == i18n.fill(labels["tokenization.real.same"], n=str(len(own))) for x in at.success)


def test_the_target_s_bounds_and_an_empty_corpus():
    """The target size is the browser's (static/views/tokenization.js clamps it, with a notice):
    the server sends its bounds and every merge up to the largest."""
    at = _open("en")
    labels = _labels("en")
    data = view_data(at, "tokenization.view")
    assert (data["min_target"], data["max_target"]) == (256, 756)
    assert data["labels"]["target_low"] == labels["tokenization.build.target_low"]
    at.button_group(key="tokenization.corpus").set_value([]).run()
    assert labels["tokenization.build.empty"] in [x.value for x in at.info]
    assert view_data(at, "tokenization.view") is None
    assert not at.exception


def test_a_tiny_corpus_runs_out_of_pairs():
    at = _open("it", "ab ab")
    at.button_group(key="tokenization.corpus").set_value(["yours"]).run()
    data = view_data(at, "tokenization.view")
    assert data["n_merges"] == 1 and data["labels"]["exhausted"] == _labels("it")["tokenization.build.exhausted"]
    assert not at.exception


def _load(at, name):
    at.text_input(key="app.model_request").set_value(name)
    at.button(key="app.load").click()
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["app.model"] == name


def test_gpt2_family_model_with_a_byte_tokenizer(tiny_gpt2, monkeypatch):
    from lib.model import models

    name = "tests/tiny-gpt2"
    monkeypatch.setattr(models, "_load_hub", lambda n, progress: tiny_gpt2 if n == name else None)
    at = _open("en")
    _load(at, name)
    labels = _labels("en")
    assert view_data(at, "tokenization.real_view")["labels"]["step0"] == labels["tokenization.real.step0"]
    assert view_data(at, "tokenization.real_view")["n_steps"] == 0  # no merges: nothing to animate
    assert _real_ids(at) == tiny_gpt2.tokenizer.encode(at.session_state["app.text"], add_special_tokens=False)


def test_a_tokenizer_that_is_not_byte_level_bpe_gets_a_message(tiny_gpt2, monkeypatch):
    from tokenizers import Tokenizer, models as tk_models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from lib.model import models

    vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate("the cat sat on mat because it was tired .".split())}}
    wordpiece = Tokenizer(tk_models.WordPiece(vocab, unk_token="[UNK]"))
    wordpiece.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=wordpiece, unk_token="[UNK]")
    other = models.wrap_model(tiny_gpt2.model, tok, "tests/wordpiece")
    monkeypatch.setattr(models, "_load_hub", lambda n, progress: other if n == "tests/wordpiece" else None)
    at = _open("en")
    _load(at, "tests/wordpiece")
    labels = _labels("en")
    assert any(_prefix(labels["tokenization.real.not_bpe.not_bpe"]) in w.value for w in at.warning)
    assert any("`cat`" in m.value for m in at.markdown)  # its own tokens are still shown
    assert any(x.label == labels["tokenization.lang.it_total"] for x in at.metric)


def test_quiz_answer_is_graded():
    at = _open("it")
    q = next(x for x in load_bank("it", "tokenization") if x.id == "textbook_first_merge")
    at.text_input(key=f"quiz.tokenization.{q.id}.answer").set_value(str(q.answer))
    at.button(key=f"FormSubmitter:quiz.tokenization.{q.id}.form-{_labels('it')['quiz.check']}").click().run()
    assert any(q.explanation[:30] in s.value for s in at.success)
    assert at.session_state["quiz.results"]["tokenization"] == {q.id: True}
