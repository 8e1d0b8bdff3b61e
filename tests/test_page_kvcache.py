"""AppTest for the KV-cache lesson in both languages: real content from the live model, the calculator
with bad input (clamped with a notice), custom configs, bad texts, the timing run on a GPT-2 model."""

from __future__ import annotations

import json

import pytest

from lib import i18n
from lib.arithmetic import kv_bytes_per_token, kv_cache_bytes
from lib.quiz import format_number, load_bank
from lib.reference import MORE_MODELS
from tests.apptest import page_text, start, chart_keys

PAGE = "pages/08_kvcache.py"


def _kib(b: float, lang: str) -> str:
    return f"{format_number(round(b / 1024, 1), lang)} KiB"


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_lesson_runs_on_the_live_model(lang, real):
    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    assert any(x.value == labels["lesson.kvcache.title"] for x in at.title)
    text = page_text(at)
    assert i18n.lesson(lang, "kvcache")["intro"].splitlines()[0][:40] in text
    assert "{" not in "".join(m.value for m in at.markdown if "$" not in m.value)  # every placeholder filled
    # The calculator on the live model: cache per token in bf16 by the formula.
    assert _metric(at, labels["kvcache.per_token"].format(dtype="bf16")) == _kib(kv_bytes_per_token(real.config, 2), lang)
    # The real cache weighed: the same bytes as the formula, 45 KiB per token in fp32.
    measured = _metric(at, labels["kvcache.measure.measured"])
    assert measured == _metric(at, labels["kvcache.measure.formula"])
    assert measured == f"{format_number(kv_cache_bytes(real.config, 64, dtype_bytes=4), lang)} B"
    assert _metric(at, labels["kvcache.measure.per_token"].format(dtype="float32")) == _kib(46080, lang)
    assert any(labels["kvcache.measure.equal"].split("{")[0] in s.value for s in at.success)
    tables = [df.value for df in at.dataframe]
    assert any(len(v) == 6 and labels["kvcache.variant.col.kind"] in v.columns for v in tables)
    fact = next(v for v in tables if labels["kvcache.fact.col.verdict"] in v.columns)
    assert list(fact[labels["kvcache.fact.col.verdict"]]).count(labels["kvcache.fact.ok"]) == 1
    assert len(chart_keys(at)) >= 5
    from lib.quiz import load_bank

    n_questions = len(load_bank(lang, "kvcache"))
    assert len([b for b in at.button if b.key and b.key.startswith("FormSubmitter:quiz.kvcache.")]) == n_questions
    assert not at.warning and not at.error


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_bad_numbers_are_clamped_with_a_notice(lang, real):
    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    at.number_input(key="kvcache.context").set_value(10**12)
    at.number_input(key="kvcache.users").set_value(0)
    at.number_input(key="kvcache.card_gb").set_value(-3.0)
    at.number_input(key="kvcache.bandwidth").set_value(0.0)
    at.run()  # the context's callback reruns the calculator and serving, where these four are
    assert not at.exception, at.exception
    phrase = labels["kvcache.clamped"].split("{given}")[1].split("{used}")[0]
    notices = [w.value for w in at.warning if phrase in w.value]
    assert len(notices) == 4, [w.value for w in at.warning]
    # The context used is the largest the calculator accepts, 10 million tokens, for one user.
    per_user = kv_cache_bytes(real.config, 10_000_000)
    assert 100e9 <= per_user < 1e12  # 230 GB: shown without decimals
    assert _metric(at, labels["kvcache.per_user"]) == f"{format_number(round(per_user / 1e9), lang)} GB"
    # Zero and negative become the smallest sensible value.
    at.number_input(key="kvcache.context").set_value(-5)
    at.run()
    assert not at.exception
    assert _metric(at, labels["kvcache.per_user"]).endswith("KB")
    # The training section's inputs too.
    at.run()  # the whole page again (the last run drew the calculator's sections only)
    at.number_input(key="kvcache.gpus").set_value(-1)
    at.run()
    assert not at.exception
    assert any(phrase in w.value and labels["kvcache.train.gpus"] in w.value for w in at.warning)


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_custom_config_messages(lang):
    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    at.selectbox(key="kvcache.preset").set_value("custom")
    at.run()
    assert not at.exception
    at.number_input(key="kvcache.custom.num_key_value_heads").set_value(64)  # more KV heads than query heads
    at.run()
    assert any(w.value.startswith(i18n.fill(labels["kvcache.custom.kv_over"], kv="64", heads="32")[:20])
               for w in at.warning)
    at.text_area(key="kvcache.custom_json").set_value("{not json")
    at.run()
    assert [e.value for e in at.error] == [labels["kvcache.custom.bad_json"]]
    at.text_area(key="kvcache.custom_json").set_value(json.dumps({"hidden_size": 4096, "num_hidden_layers": 32,
                                                                  "vocab_size": 1000}))
    at.run()
    assert [e.value for e in at.error] == [i18n.fill(labels["kvcache.custom.missing"], field="num_attention_heads")]
    at.text_area(key="kvcache.custom_json").set_value(json.dumps(MORE_MODELS["DeepSeek-V3"]))
    at.run()
    assert not at.exception
    # 671 billion parameters in bf16 do not fit on one 80 GB card: said, not crashed.
    assert [e.value for e in at.error] == [i18n.fill(labels["kvcache.weights_too_big"], card="80 GB", cards="17")]
    assert _metric(at, labels["kvcache.per_token"].format(dtype="bf16")) == _kib(61 * 576 * 2, lang)
    at.text_area(key="kvcache.custom_json").set_value(json.dumps({"model_type": "bert", "hidden_size": 64,
                                                                  "num_attention_heads": 4, "num_hidden_layers": 2,
                                                                  "vocab_size": 100}))
    at.run()
    assert not at.exception
    assert any(x.value == i18n.fill(labels["kvcache.custom.no_params"], model_type="bert") for x in at.info)


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("text,expect", [("", "random"), ("🐱🚀🇮🇹 😀", "source"), ("parola " * 7200, "source_cut")])
def test_bad_text_gets_a_message_not_a_traceback(lang, text, expect):
    at = start(lang, PAGE, text=text)
    labels = i18n.ui(lang)
    assert not at.exception
    if expect == "random":
        assert any(labels["kvcache.measure.random"] in x.value for x in at.info)
    else:
        assert any(labels[f"kvcache.measure.{expect}"].split("{")[0][:12] in c.value for c in at.caption)
    m = labels["kvcache.measure.measured"]
    assert _metric(at, m) == _metric(at, labels["kvcache.measure.formula"])


def test_gpt2_family_model_and_the_timing_run(tiny_gpt2, monkeypatch):
    """A GPT-2 model (no GQA, learned positions) loaded through the hub path; then the stopwatch."""
    from lib import models

    name = "tests/tiny-gpt2"
    monkeypatch.setattr(models, "_load_hub", lambda n, progress: tiny_gpt2 if n == name else None)
    at = start("en")
    at.text_input(key="app.model_request").set_value(name)
    at.button(key="app.load").click()
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    labels = i18n.ui("en")
    assert at.session_state["app.model"] == name
    assert _metric(at, labels["kvcache.measure.measured"]) == _metric(at, labels["kvcache.measure.formula"])
    assert _metric(at, labels["kvcache.per_token"].format(dtype="bf16")) == _kib(kv_bytes_per_token(tiny_gpt2.config, 2), "en")
    assert not any(labels["kvcache.measure.gqa"].split("(")[0] in x.value for x in at.info)  # no GQA to praise
    charts = len(chart_keys(at))
    at.button(key="kvcache.time_run").click()
    at.run()
    assert not at.exception, at.exception
    assert len(chart_keys(at)) == charts + 1
    assert _metric(at, labels["kvcache.time.bandwidth"]).endswith("GB/s")
    assert any(labels["kvcache.time.verdict_slower"][:8] in m.value or labels["kvcache.time.verdict_faster"][:8]
               in m.value for m in at.markdown)


def test_numeric_quiz_answer_is_graded():
    at = start("it", PAGE)
    q = next(x for x in load_bank("it", "kvcache") if x.id == "seventy_at_32k")
    at.text_input(key=f"quiz.kvcache.{q.id}.answer").set_value("80 GB")
    at.button(key=f"FormSubmitter:quiz.kvcache.{q.id}.form-{i18n.ui('it')['quiz.check']}").click()
    at.run()
    assert not at.exception
    assert any(q.explanation[:30] in s.value for s in at.success)
    assert at.session_state["quiz.results"]["kvcache"] == {q.id: True}


def test_the_cost_sections_price_the_calculators_choice(real):
    """Training, serving and the experts' table read the calculator's choice: serving is priced at
    the picked context, training and the experts at the picked model. (In the browser a calculator
    widget reruns the calculator alone and these sections follow when reached: tests/e2e/test_kvcache.py;
    AppTest runs the whole page for a widget.)"""
    at = start("en", PAGE)
    labels = i18n.ui("en")
    at.select_slider(key="kvcache.context_pick").set_value(32768)
    at.run()
    assert not at.exception, at.exception
    assert at.number_input(key="kvcache.context").value == 32768
    # Serving is priced at the new context (its compute line names it).
    flops_line = i18n.fill(labels["kvcache.serve.flops"], tokens=format_number(32768, "en"))
    assert any(c.value.startswith(flops_line[:flops_line.index("{")]) for c in at.caption)
    at.selectbox(key="kvcache.preset").set_value("Llama-3 8B")
    at.run()
    assert not at.exception, at.exception
    training = i18n.lesson("en", "kvcache")["training"]
    assert "{model}" in training
    assert any(i18n.fill(training, model="Llama-3 8B")[:200] in m.value for m in at.markdown)


def test_the_priced_mark_changes_with_what_the_cost_sections_read():
    """The mark the cost sections follow changes with the model, the context and the number formats,
    not with the users or the card (which only the calculator reads)."""
    from ui.kvcache_view import Choice, priced_mark

    cfg = {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 64}
    base = Choice("m", cfg, 1000, None, 8192, 10, "bf16", "bf16", 80.0)
    same = [Choice("m", dict(cfg), 1000, None, 8192, 99, "bf16", "bf16", 24.0)]
    other = [Choice("m", dict(cfg, num_key_value_heads=4), 1000, None, 8192, 10, "bf16", "bf16", 80.0),
             Choice("m", cfg, 1000, None, 16384, 10, "bf16", "bf16", 80.0),
             Choice("m", cfg, 1000, None, 8192, 10, "fp8", "bf16", 80.0),
             Choice("m", cfg, 1000, None, 8192, 10, "bf16", "int4", 80.0),
             Choice("n", cfg, 1000, None, 8192, 10, "bf16", "bf16", 80.0)]
    assert all(priced_mark(c) == priced_mark(base) for c in same)
    assert len({priced_mark(c) for c in [base, *other]}) == 1 + len(other)
