"""AppTest of the sampling lesson: both languages, numbers checked against lib and the model,
sliders that never run the model, a generation equal to transformers' greedy one, bad input,
an interrupted generation, and the GPT-2 family.

Figures are read back from the plotly JSON Streamlit sends and compared with lib.lessons.sampling on a
fresh capture, so a test fails if the page shows the wrong numbers.
"""

import numpy as np
import pytest
import torch

from lib.course import i18n
from lib.course.quiz import format_number
from lib.lessons.generate import generate
from lib.lessons.sampling import filter_steps, logit_cost
from lib.model.capture import run_capture
from lib.model.tokens import readable_tokens
from lib.serving.payload import unpack_u16
from tests.apptest import page_text, press, start, chart, label_prefix as prefix, view_data

PAGE = "pages/07_sampling.py"


def sent(at) -> dict:
    """What the next-token view was sent (the browser answers the filters from it)."""
    data = view_data(at, "sampling.view")
    assert data is not None, "no next-token view"
    return data


def press_generate(at, settings: dict | None = None) -> None:
    """The "Generate" button pressed with the settings the browser carries; tests/e2e/test_sampling.py
    presses it in Chromium."""
    from ui.lessons.sampling import sections as sampling

    browser = {"temperature": 1.0, "top_k": 50, "top_p": 0.9, "seed": 0} | (settings or {})
    press(at, sampling, sampling.request_generation, at.session_state["app.model"], at.session_state["app.text"],
          64, browser)


def metric(at, label_key: str, lang: str = "en") -> str:
    label = i18n.ui(lang)[label_key]
    return next(m.value for m in at.metric if m.label == label)


def html_bodies(at) -> str:
    return "\n".join(h.proto.body for h in at.get("html"))


def no_model_runs(monkeypatch):
    """Make any model run (capture or generation) fail the test."""
    import ui.shell.cache
    import ui.lessons.sampling.sections

    def boom(*args, **kwargs):
        raise AssertionError("a view widget ran the model")

    monkeypatch.setattr(ui.shell.cache, "run_capture", boom)
    monkeypatch.setattr(ui.lessons.sampling.sections, "generate", boom)


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
    # The view's data: the capture's last row, sorted best first and packed; through the default
    # filters (T = 1, top-k 50, top-p 0.9) it gives lib's distribution to within the packing.
    cap = run_capture(real, at.session_state["app.text"])
    steps = filter_steps(cap.logits[-1], 1.0, 50, 0.9)
    data = sent(at)
    assert data["lang"] == lang and data["labels"]["temperature"] == labels["sampling.temperature"]
    assert data["settings"] == {"temperature": 1.0, "top_k": 50, "top_p": 0.9, "seed": 0, "from_link": None}
    assert data["ids"] == steps.order[:20].tolist()
    assert data["tokens"] == readable_tokens(real.tokenizer, data["ids"])
    logits = unpack_u16(data["logits"])
    assert logits.size == real.config["vocab_size"] and (np.diff(logits) <= 0).all()
    np.testing.assert_allclose(logits, np.sort(cap.logits[-1].astype(np.float64))[::-1], atol=data["logits"]["scale"])
    view = filter_steps(logits, 1.0, 50, 0.9)
    np.testing.assert_allclose(view.final[:20], steps.final[steps.order[:20]], rtol=2e-3, atol=1e-7)
    assert view.n_kept == steps.n_kept
    # The loss: the mean equals the model's own cross-entropy on the text.
    ids = torch.tensor([cap.token_ids.tolist()])
    with torch.inference_mode():
        own = float(real.model(input_ids=ids, labels=ids).loss)
    shown = float(metric(at, "sampling.loss.mean", lang).split()[0].replace(",", "."))
    assert shown == pytest.approx(own, abs=0.006)
    assert "loss-chips" in html_bodies(at) and html_bodies(at).count("<span") == cap.n_tokens
    # The seed's drop from 2.0 to 1.9: 0.144 bits.
    assert ("0.144" if lang == "en" else "0{,}144") in body


def test_the_view_is_sent_once_per_text_and_a_rerun_runs_no_model(real, monkeypatch):
    at = start("en", PAGE)
    first = sent(at)
    no_model_runs(monkeypatch)
    at.run()
    assert not at.exception, at.exception
    assert sent(at) == first  # the same data and key: the browser keeps the learner's settings
    at.text_area(key="app.text").set_value("Another text")
    monkeypatch.undo()
    at.run()
    assert sent(at)["key"] != first["key"]


def test_generation_is_greedy_generate_and_survives_slider_moves(real, monkeypatch):
    at = start("en", PAGE)
    labels = i18n.ui("en")
    at.slider(key="sampling.max_new").set_value(4)
    at.run()
    press_generate(at, {"temperature": 0.0})
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
    from ui.lessons.sampling.sections import generation
    gen = generation(**req)
    assert gen.text == expected
    assert any(prefix(labels["sampling.gen.stop.max_tokens"]) in s.value for s in at.success)
    for key in ("sampling.gen.ttft", "sampling.gen.per_token", "sampling.gen.prompt_tokens"):
        assert metric(at, key) not in ("", "—")
    assert len(chart(at, "sampling.times_chart")["data"][0]["x"]) == 4
    # Every step goes to the browser's step view at once (its slider is answered there), as stored.
    steps = view_data(at, "sampling.steps_view")["steps"]
    assert [s["token_id"] for s in steps] == list(gen.token_ids)
    assert steps[2]["final"] == list(gen.steps[2].top_probs) and steps[2]["ids"] == list(gen.steps[2].top_ids)
    # A rerun (another widget moved) reads the stored generation: no model run, the same view.
    with pytest.MonkeyPatch.context() as mp:
        no_model_runs(mp)
        at.run()
        assert not at.exception, at.exception
        assert "gen-chips" in html_bodies(at)
        assert view_data(at, "sampling.steps_view")["steps"] == steps
    # A new text makes the stored generation stale: a message, not a run.
    at.text_area(key="app.text").set_value("Another text")
    at.run()
    assert not at.exception, at.exception
    assert any(x.value == labels["sampling.gen.stale"] for x in at.info)


def test_settings_the_browser_carries_are_checked_before_they_are_kept(real):
    at = start("en", PAGE)
    from ui.lessons.sampling import sections as sampling

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sampling.st, "session_state", at.session_state)
        sampling.keep_settings({"temperature": 7.5, "top_k": -3, "top_p": 0.5, "seed": "x"})
        assert sampling.settings() == {"temperature": 1.0, "top_k": 50, "top_p": 0.5, "seed": 0}
        sampling.keep_settings("not a dict")
        sampling.keep_settings({"temperature": True})
        assert sampling.settings()["temperature"] == 1.0


@pytest.mark.parametrize("text,expect", [("", "text.empty"), ("🐱🚀🇮🇹 😀", None),
                                         ("parola " * 7200, "text.truncated")])
def test_bad_text_gets_a_message_not_a_traceback(text, expect):
    at = start("it", PAGE, text=text)
    labels = i18n.ui("it")
    assert not at.exception, at.exception
    if expect == "text.empty":
        assert any(x.value == labels["text.empty"] for x in at.info)
        assert view_data(at, "sampling.view") is None
    else:
        final = filter_steps(unpack_u16(sent(at)["logits"]), 1.0, 50, 0.9).final
        assert (final >= 0).all() and abs(final.sum() - 1) < 1e-9 and final[0] > 0
        assert "loss-chips" in html_bodies(at)
        if expect:
            assert any(prefix(labels[expect]) in w.value for w in at.warning)


def test_an_interrupted_generation_shows_what_was_written(monkeypatch):
    import ui.lessons.sampling.sections

    monkeypatch.setattr(ui.lessons.sampling.sections, "GEN_BUDGET_S", 0.0)  # every step is over budget
    at = start("en", PAGE)
    at.slider(key="sampling.max_new").set_value(10)
    at.run()
    press_generate(at, {"seed": 98765})  # a setting no other test has cached
    assert not at.exception, at.exception
    labels = i18n.ui("en")
    assert any(prefix(labels["sampling.gen.stop.interrupted"]) in w.value for w in at.warning)
    assert metric(at, "sampling.gen.per_token") == "—"  # a single token: nothing to compare
    assert any(x.value == labels["sampling.gen.one_token"] for x in at.caption)


def test_gpt2_family_model(tiny_gpt2, monkeypatch):
    from lib.model import models

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
    at.run()
    press_generate(at)
    assert not at.exception, at.exception
    from ui.lessons.sampling.sections import generation

    gen = generation(**at.session_state["sampling.request"])
    expected = generate(tiny_gpt2, "Hello there", 5, 1.0, 50, 0.9, 0)
    assert gen.token_ids == expected.token_ids and len(gen.steps) == 5
    data = sent(at)
    assert len(data["tokens"]) == 20 and data["logits"]["n"] == tiny_gpt2.info.vocab_size
