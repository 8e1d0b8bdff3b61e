"""AppTest of the sampling lesson: both languages, numbers checked against lib and the model,
sliders that never run the model, a generation equal to transformers' greedy one, bad input,
an interrupted generation, and the GPT-2 family.

Figures are read back from the plotly JSON Streamlit sends and compared with lib.sampling on a
fresh capture, so a test fails if the page shows the wrong numbers.
"""

import numpy as np
import pytest
import torch

from lib import i18n
from lib.capture import run_capture
from lib.generate import generate
from lib.quiz import format_number
from lib.sampling import filter_steps, logit_cost, sample
from lib.tokens import readable_tokens
from tests.apptest import page_text, start, chart, plotly_array, label_prefix as prefix, chart_keys
from ui.sampling_view import md

PAGE = "pages/07_sampling.py"


def arr(value) -> np.ndarray:
    return plotly_array(value, float)


def bars(at) -> tuple[np.ndarray, np.ndarray]:
    """(model, after filters) bar heights of the next-token chart."""
    data = chart(at, "sampling.dist_chart")["data"]
    return arr(data[0]["y"]), arr(data[1]["y"])


def metric(at, label_key: str, lang: str = "en") -> str:
    label = i18n.ui(lang)[label_key]
    return next(m.value for m in at.metric if m.label == label)


def html_bodies(at) -> str:
    return "\n".join(h.proto.body for h in at.get("html"))


def no_model_runs(monkeypatch):
    """Make any model run (capture or generation) fail the test."""
    import ui.cache
    import ui.sampling_view

    def boom(*args, **kwargs):
        raise AssertionError("a view widget ran the model")

    monkeypatch.setattr(ui.cache, "run_capture", boom)
    monkeypatch.setattr(ui.sampling_view, "generate", boom)


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_page_shows_the_live_numbers_in_both_languages(lang, real):
    at = start(lang, PAGE)
    labels, texts = i18n.ui(lang), i18n.lesson(lang, "sampling")
    assert any(x.value == labels["lesson.sampling.title"] for x in at.title)
    body = page_text(at)
    for section in ("intro", "cost", "softmax", "filters", "chart_read", "sample", "generate", "timing", "loss",
                    "loss_live", "drop", "next"):
        assert texts[section].splitlines()[0][:30].split("{")[0] in body, section
    assert i18n.placeholders(body) == set()
    # The cost of the logits, for the live model: 2·576·49152 and its share of a step.
    cost = logit_cost(real.config)
    assert ("56{,}623{,}104" if lang == "en" else "56.623.104") in body  # commas braced inside TeX
    share = f"{100 * cost.share:.1f}".replace(".", "," if lang == "it" else ".")
    assert metric(at, "sampling.cost.share", lang) == f"{share}%"
    # The chart: the capture's last row through the default filters (T = 1, top-k 50, top-p 0.9).
    cap = run_capture(real, at.session_state["app.text"])
    steps = filter_steps(cap.logits[-1], 1.0, 50, 0.9)
    model, final = bars(at)
    np.testing.assert_allclose(model, steps.model[steps.order[:20]], atol=1e-6)
    np.testing.assert_allclose(final, steps.final[steps.order[:20]], atol=1e-6)
    assert metric(at, "sampling.metric.kept", lang) == str(steps.n_kept)
    # The loss: the mean equals the model's own cross-entropy on the text.
    ids = torch.tensor([cap.token_ids.tolist()])
    with torch.inference_mode():
        own = float(real.model(input_ids=ids, labels=ids).loss)
    shown = float(metric(at, "sampling.loss.mean", lang).split()[0].replace(",", "."))
    assert shown == pytest.approx(own, abs=0.006)
    assert "loss-chips" in html_bodies(at) and html_bodies(at).count("<span") == cap.n_tokens
    # The seed's drop from 2.0 to 1.9: 0.144 bits.
    assert ("0.144" if lang == "en" else "0{,}144") in body


def test_sliders_and_sample_change_the_chart_without_running_the_model(real, monkeypatch):
    at = start("en", PAGE)
    labels = i18n.ui("en")
    no_model_runs(monkeypatch)
    _, before = bars(at)
    at.slider(key="sampling.temperature").set_value(2.0)
    at.run()
    assert not at.exception, at.exception
    _, hotter = bars(at)
    assert hotter[0] < before[0]  # a higher temperature flattens the favourite
    at.slider(key="sampling.temperature").set_value(0.0)
    at.run()
    _, greedy = bars(at)
    assert greedy[0] == 1.0 and greedy[1:].sum() == 0
    assert any(x.value == labels["sampling.greedy_note"] for x in at.info)
    # The sample button, with a seed: the same seed gives the same token on every rerun.
    at.slider(key="sampling.temperature").set_value(1.0)
    at.number_input(key="sampling.seed").set_value(123)
    at.button(key="sampling.sample").click()
    at.run()
    u = np.random.default_rng(123).random()
    first = [s.value for s in at.success if s.value.startswith("Seed 123")]
    assert len(first) == 1 and f"u = {format_number(round(u, 4), 'en')}" in first[0]
    at.run()
    assert [s.value for s in at.success if s.value.startswith("Seed 123")] == first
    # The draw lands where lib.sampling says, and the chart marks it.
    cap = run_capture(real, at.session_state["app.text"])
    steps = filter_steps(cap.logits[-1], 1.0, 50, 0.9)
    token = sample(steps.final, 123).token
    assert f"**{md(readable_tokens(real.tokenizer, [token])[0])}**" in first[0]
    assert chart(at, "sampling.dist_chart")["layout"]["annotations"][-1]["text"] == labels["sampling.chart.drawn"]


def test_generation_is_greedy_generate_and_survives_slider_moves(real, monkeypatch):
    at = start("en", PAGE)
    labels = i18n.ui("en")
    at.slider(key="sampling.temperature").set_value(0.0)
    at.slider(key="sampling.max_new").set_value(4)
    at.button(key="sampling.generate").click()
    at.run()
    assert not at.exception, at.exception
    req = at.session_state["sampling.request"]
    assert req["max_new"] == 4 and req["temperature"] == 0.0
    # Oracle: transformers' own greedy generation from the same prompt.
    ids = torch.tensor([real.tokenizer(at.session_state["app.text"])["input_ids"]])
    with torch.inference_mode():
        out = real.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                  max_new_tokens=4, pad_token_id=2)
    expected = real.tokenizer.decode(out[0, ids.shape[1]:])
    chips = html_bodies(at)
    assert "gen-chips" in chips
    from ui.sampling_view import generation
    gen = generation(**req)
    assert gen.text == expected
    assert any(prefix(labels["sampling.gen.stop.max_tokens"]) in s.value for s in at.success)
    for key in ("sampling.gen.ttft", "sampling.gen.per_token", "sampling.gen.prompt_tokens"):
        assert metric(at, key) not in ("", "—")
    assert len(chart(at, "sampling.times_chart")["data"][0]["x"]) == 4
    # Moving the filters or the step slider reads the stored generation: no model run.
    with pytest.MonkeyPatch.context() as mp:
        no_model_runs(mp)
        at.slider(key="sampling.temperature").set_value(1.5)
        at.slider(key="sampling.gen_step").set_value(3)
        at.run()
        assert not at.exception, at.exception
        assert "gen-chips" in html_bodies(at)
        title = chart(at, "sampling.step_chart")["layout"]["title"]["text"].replace("<br>", " ")
        assert title.startswith(i18n.fill(prefix(labels["sampling.gen.step_title"]) + "{step}", step="3"))
    # A new text makes the stored generation stale: a message, not a run.
    at.text_area(key="app.text").set_value("Another text")
    at.run()
    assert not at.exception, at.exception
    assert any(x.value == labels["sampling.gen.stale"] for x in at.info)


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_edge_settings_explain_themselves_and_forged_values_fall_back(lang, real):
    labels = i18n.ui(lang)
    at = start(lang, PAGE)
    # The edges a learner can reach: top-p 0 and a top-k beyond the vocabulary.
    at.slider(key="sampling.top_p").set_value(0.0)
    at.number_input(key="sampling.top_k").set_value(10**9)
    at.run()
    assert not at.exception, at.exception
    assert any(x.value == labels["sampling.top_p_zero"] for x in at.info)  # one token left
    assert any(x.value == i18n.fill(labels["sampling.top_k_all"], k="1.000.000.000" if lang == "it" else
                                     "1,000,000,000", vocab="49.152" if lang == "it" else "49,152") for x in at.info)
    _, final = bars(at)
    assert final[0] == 1.0 and final[1:].sum() == 0
    # Values no widget can produce (a forged or stale state): Streamlit resets them to the defaults.
    at.slider(key="sampling.temperature").set_value(7.5)
    at.slider(key="sampling.top_p").set_value(-1.0)
    at.number_input(key="sampling.top_k").set_value(10**12)
    at.number_input(key="sampling.seed").set_value(-5)
    at.slider(key="sampling.max_new").set_value(500)
    at.run()
    assert not at.exception, at.exception
    from ui.sampling_view import DEFAULTS

    assert at.slider(key="sampling.temperature").value == DEFAULTS["sampling.temperature"]
    assert at.slider(key="sampling.top_p").value == DEFAULTS["sampling.top_p"]
    assert at.number_input(key="sampling.top_k").value == DEFAULTS["sampling.top_k"]
    assert at.number_input(key="sampling.seed").value == DEFAULTS["sampling.seed"]
    assert at.slider(key="sampling.max_new").value == DEFAULTS["sampling.max_new"]


@pytest.mark.parametrize("text,expect", [("", "text.empty"), ("🐱🚀🇮🇹 😀", None),
                                         ("parola " * 7200, "text.truncated")])
def test_bad_text_gets_a_message_not_a_traceback(text, expect):
    at = start("it", PAGE, text=text)
    labels = i18n.ui("it")
    assert not at.exception, at.exception
    if expect == "text.empty":
        assert any(x.value == labels["text.empty"] for x in at.info)
        assert "sampling.dist_chart" not in chart_keys(at)
    else:
        model, final = bars(at)
        assert (final >= 0).all() and final.sum() <= 1 + 1e-6 and final[0] > 0
        assert "loss-chips" in html_bodies(at)
        if expect:
            assert any(prefix(labels[expect]) in w.value for w in at.warning)


def test_an_interrupted_generation_shows_what_was_written(monkeypatch):
    import ui.sampling_view

    monkeypatch.setattr(ui.sampling_view, "GEN_BUDGET_S", 0.0)  # every step is over budget
    at = start("en", PAGE)
    at.number_input(key="sampling.seed").set_value(98765)  # a setting no other test has cached
    at.slider(key="sampling.max_new").set_value(10)
    at.button(key="sampling.generate").click()
    at.run()
    assert not at.exception, at.exception
    labels = i18n.ui("en")
    assert any(prefix(labels["sampling.gen.stop.interrupted"]) in w.value for w in at.warning)
    assert metric(at, "sampling.gen.per_token") == "—"  # a single token: nothing to compare
    assert any(x.value == labels["sampling.gen.one_token"] for x in at.caption)


def test_gpt2_family_model(tiny_gpt2, monkeypatch):
    from lib import models

    name = "tests/tiny-gpt2"
    monkeypatch.setattr(models, "_load_hub", lambda n, progress: tiny_gpt2 if n == name else None)
    at = start("en", PAGE, text="Hello there")
    at.text_input(key="app.model_request").set_value(name)
    at.button(key="app.load").click()
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["app.model"] == name
    body = page_text(at)
    assert f"2 \\cdot {tiny_gpt2.info.d_model} \\cdot {tiny_gpt2.info.vocab_size}" in body
    at.slider(key="sampling.max_new").set_value(5)
    at.button(key="sampling.generate").click()
    at.run()
    assert not at.exception, at.exception
    from ui.sampling_view import generation

    gen = generation(**at.session_state["sampling.request"])
    expected = generate(tiny_gpt2, "Hello there", 5, 1.0, 50, 0.9, 0)
    assert gen.token_ids == expected.token_ids and len(gen.steps) == 5
    model, final = bars(at)
    assert len(model) == 20
