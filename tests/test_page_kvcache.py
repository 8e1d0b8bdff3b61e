"""AppTest for the KV-cache lesson in both languages: real content from the live model, what the
calculator's browser view is sent (each model as lib.lessons.kvcache.spec; the view's arithmetic is held to
lib by tests/js/kvcache.test.js), a link's absurd numbers, pasted configs, bad texts, the timing run
on a GPT-2 model."""

from __future__ import annotations

import json

import pytest

from lib.course import i18n
from lib.course.quiz import format_number, load_bank
from lib.lessons import kvcache as K
from lib.lessons.reference import MORE_MODELS
from lib.model.arithmetic import count_params, kv_cache_bytes
from tests.apptest import chart_keys, page_text, start, view_data
from ui.lessons.kvcache import sections as V

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
    # The calculator's view gets the live model as lib reads it (the browser prices it: tests/js).
    calc = view_data(at, "kvcache.view")
    live = calc["presets"][0]
    assert live["key"] == "live" and live["spec"] == K.spec(real.config, real.info.n_params)
    assert [p["key"] for p in calc["presets"]] == list(V.PRESETS)
    assert calc["settings"]["tokens"] == 8192 and calc["settings"]["from_link"] is None
    # The variants' sentence goes to its view with its placeholders; the rest of the section is on the page.
    variants = view_data(at, "kvcache.variants_view")
    assert [v["kind"] for v in variants["variants"]] == list(K.VARIANTS)
    assert "{tokens}" in variants["after"] and "{mha}" in variants["after"]
    # Training, serving and the experts price the live model until the calculator says otherwise.
    for part in ("train", "serve", "moe"):
        priced = view_data(at, f"kvcache.{part}_view")["priced"]
        assert priced["spec"]["params"] == real.info.n_params and priced["tokens"] == 8192
    assert "{model}" in view_data(at, "kvcache.train_view")["chosen"]
    # The real cache weighed: the same bytes as the formula, 45 KiB per token in fp32.
    measured = _metric(at, labels["kvcache.measure.measured"])
    assert measured == _metric(at, labels["kvcache.measure.formula"])
    assert measured == f"{format_number(kv_cache_bytes(real.config, 64, dtype_bytes=4), lang)} B"
    assert _metric(at, labels["kvcache.measure.per_token"].format(dtype="float32")) == _kib(46080, lang)
    assert any(labels["kvcache.measure.equal"].split("{")[0] in s.value for s in at.success)
    tables = [df.value for df in at.dataframe]
    fact = next(v for v in tables if labels["kvcache.fact.col.verdict"] in v.columns)
    assert list(fact[labels["kvcache.fact.col.verdict"]]).count(labels["kvcache.fact.ok"]) == 1
    assert len(chart_keys(at)) >= 2  # the parameters' charts; the calculator's are drawn in the browser
    n_questions = len(load_bank(lang, "kvcache"))
    assert len([b for b in at.button if b.key and b.key.startswith("FormSubmitter:quiz.kvcache.")]) == n_questions
    assert not at.warning and not at.error


def test_the_view_is_sent_a_few_kilobytes_that_price_every_preset():
    """The calculator's data is each model as lib.lessons.kvcache.spec, not tables: any typed context is
    answered, and the whole lesson's views take some 16 KB."""
    at = start("en", PAGE)
    sizes = {k: len(json.dumps(view_data(at, f"kvcache.{k}"))) for k in
             ("view", "variants_view", "train_view", "serve_view", "moe_view")}
    assert sum(sizes.values()) < 24_000, sizes
    specs = {p["key"]: p["spec"] for p in view_data(at, "kvcache.view")["presets"]}
    for key in V.PRESETS:
        if key in ("live", "custom"):
            continue
        cfg = V.preset_config(key, {})
        assert specs[key] == K.spec(cfg, count_params(cfg)), key


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_link_hands_its_numbers_to_the_view_which_clamps_them(lang, real):
    """Absurd values from a link reach the view as they are (it clamps them with a notice, in the
    browser: tests/js and tests/e2e/test_kvcache.py), and the page does not break."""
    from tests.test_page_share import open_link

    at = open_link("kvcache", {"lang": lang, "tokens": "999999999", "users": "0", "card_gb": "-3", "cache": "fp8"})
    assert not at.exception, at.exception
    settings = view_data(at, "kvcache.view")["settings"]
    assert (settings["tokens"], settings["users"], settings["card_gb"], settings["cache"]) == (999_999_999, 0, -3.0, "fp8")
    assert settings["from_link"]
    assert view_data(at, "kvcache.view")["bounds"] == {"tokens": [1, V.MAX_TOKENS], "users": [1, 100_000],
                                                      "card_gb": [1.0, 100_000.0]}


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_pasted_config_messages(lang):
    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    at.text_area(key="kvcache.custom_json").set_value("{not json")
    at.run()
    assert [e.value for e in at.error] == [labels["kvcache.custom.bad_json"]]
    assert "pasted" not in [p["key"] for p in view_data(at, "kvcache.view")["presets"]]
    at.text_area(key="kvcache.custom_json").set_value(json.dumps({"hidden_size": 4096, "num_hidden_layers": 32,
                                                                  "vocab_size": 1000}))
    at.run()
    assert [e.value for e in at.error] == [i18n.fill(labels["kvcache.custom.missing"], field="num_attention_heads")]
    at.text_area(key="kvcache.custom_json").set_value(json.dumps(MORE_MODELS["DeepSeek-V3"]))
    at.run()
    assert not at.exception and not at.error
    # DeepSeek-V3 joins the view's models, picked once (the weights too big for the card are said there).
    data = view_data(at, "kvcache.view")
    pasted = next(p for p in data["presets"] if p["key"] == "pasted")
    assert pasted["spec"] == K.spec(MORE_MODELS["DeepSeek-V3"], count_params(MORE_MODELS["DeepSeek-V3"]))
    assert pasted["spec"]["layers"] == [["full", None, 576, 61]] and data["settings"]["pasted"]
    at.text_area(key="kvcache.custom_json").set_value(json.dumps({"model_type": "bert", "hidden_size": 64,
                                                                  "num_attention_heads": 4, "num_hidden_layers": 2,
                                                                  "vocab_size": 100}))
    at.run()
    assert not at.exception
    assert any(x.value == i18n.fill(labels["kvcache.custom.no_params"], model_type="bert") for x in at.info)
    pasted = next(p for p in view_data(at, "kvcache.view")["presets"] if p["key"] == "pasted")
    assert pasted["spec"]["params"] is None and pasted["spec"]["layers"] == [["full", None, 128, 2]]


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
    from lib.model import models

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
    live = view_data(at, "kvcache.view")["presets"][0]
    assert live["spec"] == K.spec(tiny_gpt2.config, tiny_gpt2.info.n_params)
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
