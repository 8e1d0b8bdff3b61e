"""AppTest of the tokenization lesson in both languages: the animation's controls, the replay
against the tokenizer's own output, the Italian/English measurement, bad input, other models.
"""

from __future__ import annotations

import re

import pytest

from lib import bpe, i18n
from lib.quiz import format_number, load_bank
from lib.tokens import show_bytes
from tests.apptest import page_text, start, chart, chart_keys

PAGE = "pages/02_tokenization.py"
CHIP_ID = re.compile(r"title='id (-?\d+) ")


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


def _chips(at, index):
    """Token ids of the index-th chips box on the page (0: training, 1: replay)."""
    boxes = [h.value for h in at.html if "tok-chips" in h.value]
    return [int(x) for x in CHIP_ID.findall(boxes[index])], boxes[index]


def _corpus(at, lang):
    from ui.tokenization_view import build_corpus

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
    train_ids, _ = _chips(at, 0)
    assert train_ids[:len(learner.encode())] == list(learner.encode())
    replay_ids, _ = _chips(at, 1)
    assert len(replay_ids) == len(learner.encode())
    # The Italian/English comparison is measured with the tokenizer itself.
    from ui.tokenization_view import paragraphs

    it = sum(len(real.tokenizer.encode(p, add_special_tokens=False)) for p in paragraphs("it"))
    en = sum(len(real.tokenizer.encode(p, add_special_tokens=False)) for p in paragraphs("en"))
    assert it > en  # SmolLM2's vocabulary was learned mostly on English
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[labels["tokenization.lang.it_total"]].replace(".", "").replace(",", "") == str(it)
    assert metrics[labels["tokenization.lang.en_total"]].replace(".", "").replace(",", "") == str(en)
    assert len(chart_keys(at)) >= 3
    assert len([b for b in at.button if b.key and b.key.startswith("FormSubmitter:quiz.tokenization.")]) == \
        len(load_bank(lang, "tokenization"))


def test_player_steps_through_the_training():
    at = _open("en")
    labels = _labels("en")
    training = bpe.train(_corpus(at, "en"), bpe.N_BYTES + 500, "gpt2")
    n = at.session_state["tokenization.target"] - bpe.N_BYTES
    at.button(key="tokenization.build.play").click().run()  # play: the first tick comes at once
    assert not at.exception
    assert at.session_state["tokenization.build.step"] == 1 and at.session_state["tokenization.build.playing"]
    at.run()  # a tick
    assert at.session_state["tokenization.build.step"] == 2
    at.button(key="tokenization.build.play").click().run()  # pause
    assert not at.session_state["tokenization.build.playing"]
    assert at.session_state["tokenization.build.step"] == 2
    ids, html = _chips(at, 0)
    assert "data-new='1'" in html  # the tokens the last merge made are outlined
    assert training.merges[1].id in ids
    from ui.tokenization_view import code, pair_parts

    m = training.merges[1]
    a, b = pair_parts(training, m.pair)
    card = i18n.fill(labels["tokenization.build.stepk"], k="2", n=str(n), pair=f"{code(a)} + {code(b)}",
                     new=code(show_bytes(training.vocab()[m.id])), id=str(m.id), count=str(m.count))
    assert card in [x.value for x in at.markdown]
    metrics = {x.label: x.value for x in at.metric}
    assert metrics[labels["tokenization.build.tokens"]].replace(",", "") == str(training.n_tokens[2])
    at.button(key="tokenization.build.next").click().run()
    assert at.session_state["tokenization.build.step"] == 3
    # The two charts show step 3: the first bar is the fourth merge (the next one), with its count;
    # the curve's marker sits at 3 merges, at the corpus's bytes per token then.
    nxt = training.merges[3]
    a, b = pair_parts(training, nxt.pair)
    bars = chart(at, "tokenization.build.pairs_chart")["data"][0]
    assert bars["y"][0] == f"«{a}» + «{b}»" and bars["x"][0] == nxt.count
    marker = chart(at, "tokenization.build.curve_chart")["data"][1]
    assert marker["x"] == [3]
    assert marker["y"][0] == pytest.approx(len(training.corpus) / training.n_tokens[3])
    at.button(key="tokenization.build.last").click().run()
    assert at.slider(key="tokenization.build.step").value == n == 200
    ids, _ = _chips(at, 0)
    window = bpe.chunk_end(training.cut_step, 2_500 // 3)
    assert ids == [s.id for s in training.spans(n, 0, window)]
    # Another splitting rule is another training: the animation starts again from the bytes.
    at.button_group(key="tokenization.pattern").set_value("gpt4").run()
    assert not at.exception
    assert at.session_state["tokenization.build.step"] == 0
    corpus = _corpus(at, "en")
    chunks = i18n.fill(labels["tokenization.build.corpus_size"], chars=format_number(len(corpus), "en"),
                       bytes=format_number(len(corpus.encode()), "en"),
                       chunks=format_number(len(bpe.split(corpus, "gpt4")), "en"))
    assert chunks in [c.value for c in at.caption]


def test_replay_last_step_equals_the_tokenizer(real):
    text = "Perché il 🍞 costa 3,50 €?\n  def f(x): return x  # ok"
    at = _open("en", text)
    at.button(key="tokenization.real.last").click().run()
    assert not at.exception
    ids, html = _chips(at, 1)
    assert ids == real.tokenizer.encode(text, add_special_tokens=False)
    assert "\ufffd" not in html
    at.button(key="tokenization.real.first").click().run()
    ids, _ = _chips(at, 1)
    assert len(ids) == len(text.encode())


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
        ids, _ = _chips(at, 1)
        assert len(ids) > 0
    else:
        own = real.tokenizer.encode(text, add_special_tokens=False)
        assert any(x.value == i18n.fill(labels["tokenization.real.same"], n=str(len(own))) for x in at.success)


def test_out_of_range_target_and_empty_corpus():
    at = _open("en")
    labels = _labels("en")
    at.number_input(key="tokenization.target").set_value(100).run()
    assert any(_prefix(labels["tokenization.build.target_low"]) in w.value for w in at.warning)
    assert not any(b.key == "tokenization.build.play" for b in at.button)  # 0 merges: bytes, no player
    at.number_input(key="tokenization.target").set_value(100_000).run()
    assert any(_prefix(labels["tokenization.build.target_high"]) in w.value for w in at.warning)
    assert any(_prefix(labels["tokenization.build.exhausted"]) in x.value for x in at.info)
    at.button_group(key="tokenization.corpus").set_value([]).run()
    assert labels["tokenization.build.empty"] in [x.value for x in at.info]
    assert not at.exception


def test_a_tiny_corpus_runs_out_of_pairs():
    at = _open("it", "ab ab")
    at.button_group(key="tokenization.corpus").set_value(["yours"]).run()
    labels = _labels("it")
    assert any(x.value == i18n.fill(labels["tokenization.build.exhausted"], n="1", size="257") for x in at.info)
    assert at.slider(key="tokenization.build.step").max == 1
    assert not at.exception


def _load(at, name):
    at.text_input(key="app.model_request").set_value(name)
    at.button(key="app.load").click()
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["app.model"] == name


def test_gpt2_family_model_with_a_byte_tokenizer(tiny_gpt2, monkeypatch):
    from lib import models

    name = "tests/tiny-gpt2"
    monkeypatch.setattr(models, "_load_hub", lambda n, progress: tiny_gpt2 if n == name else None)
    at = _open("en")
    _load(at, name)
    labels = _labels("en")
    text = page_text(at)
    assert _prefix(labels["tokenization.real.step0"].replace("**", "")) in text.replace("**", "")
    assert not any(b.key == "tokenization.real.play" for b in at.button)  # no merges: nothing to animate
    ids, _ = _chips(at, 1)
    assert ids == tiny_gpt2.tokenizer.encode(at.session_state["app.text"], add_special_tokens=False)


def test_a_tokenizer_that_is_not_byte_level_bpe_gets_a_message(tiny_gpt2, monkeypatch):
    from tokenizers import Tokenizer, models as tk_models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from lib import models

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
