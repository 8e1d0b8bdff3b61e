"""AppTest of the position lesson: both languages, the live model, clamped bad input, GPT-2's learned table.

Figures are read back from the page (the plotly JSON Streamlit sends) and compared with lib.rope
and with the model's own tensors, so a test fails if the page shows the wrong numbers.
"""


import numpy as np
import pytest
import torch

from lib import i18n, rope
from tests.apptest import page_text, start, chart, plotly_array, label_prefix as prefix, switch_model, chart_keys

PAGE = "pages/04_position.py"


def arr(value) -> np.ndarray:
    return plotly_array(value, None)


def title(fig: dict) -> str:
    return fig["layout"]["title"]["text"].replace("<br>", " ")  # titles wrap (ui.figures.laid_out)


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_page_runs_in_both_languages_with_the_live_model(lang, real):
    at = start(lang, PAGE)
    labels, texts = i18n.ui(lang), i18n.lesson(lang, "position")
    assert any(x.value == labels["lesson.position.title"] for x in at.title)
    body = page_text(at)
    for section in ("intro", "shuffle", "relative", "live", "conventions", "generalize"):
        assert prefix(texts[section].splitlines()[0])[:40] in body, section
    assert i18n.placeholders(body) == set()  # every {name} was filled
    assert "64" in body and "32" in body  # d_head and the pairs of the live model
    # The shuffle demonstration: zero change without positions, a real one with RoPE.
    assert any(prefix(labels["position.shuffle_result"]) in s.value for s in at.success)
    shuffle = chart(at, "position.shuffle_chart")
    plain, with_rope = (arr(trace["y"]) for trace in shuffle["data"])
    assert plain.max() < 1e-9 and with_rope.mean() > 1.0
    # The rotation plot at its default (position 5, pair 0) names the angle m·θ_0 = 5 rad.
    assert at.slider(key="position.m").value == 5 and at.slider(key="position.pair").value == 0
    theta = rope.frequencies(real.info.d_head, real.info.rope_theta)
    fan = chart(at, "position.rotation_chart")["data"][-1]
    np.testing.assert_allclose(arr(fan["theta"]), np.degrees(5 * theta) % 360, atol=1e-6)
    # The shift metrics: same score before and after the shift.
    metrics = [m.value for m in at.metric]
    assert metrics[0] == metrics[1]
    # The live model: the pair-plane plot shows the captured q before/after RoPE.
    plane = chart(at, "position.plane_chart")
    before, after = arr(plane["data"][1]["x"]), arr(plane["data"][2]["x"])
    assert before[0] == pytest.approx(after[0], abs=1e-6)  # position 0 is not rotated
    assert not np.allclose(before[1:], after[1:], atol=1e-3)
    assert len(at.dataframe) == 1 and len(chart_keys(at)) == 7


def test_view_sliders_redraw_without_running_the_model(monkeypatch):
    at = start("en", PAGE)
    import ui.cache

    def no_model(*args, **kwargs):
        raise AssertionError("a view slider ran the model")

    monkeypatch.setattr(ui.cache, "run_capture", no_model)
    first = title(chart(at, "position.rotation_chart"))
    at.slider(key="position.m").set_value(40)
    at.slider(key="position.pair").set_value(3)
    at.slider(key="position.layer").set_value(7)
    at.slider(key="position.head").set_value(5)
    at.radio(key="position.which").set_value("k")
    at.run()
    assert not at.exception, at.exception
    second = title(chart(at, "position.rotation_chart"))
    assert second != first and "40" in second
    assert chart(at, "position.angle_chart")["layout"]["shapes"][0]["x0"] == 40  # the marker follows m
    assert i18n.ui("en")["position.which.k"] in title(chart(at, "position.plane_chart"))


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_positions_typed_beyond_the_context_are_clamped_with_a_notice(lang):
    """Typed positions past the context. (Stale sliders after a model switch: the tiny_llama test.)"""
    labels = i18n.ui(lang)
    at = start(lang, PAGE)
    at.number_input(key="position.n").set_value(50_000)
    at.number_input(key="position.shift").set_value(9_000)
    at.run()
    assert not at.exception, at.exception
    shown = warnings(at)
    for key in ("position.clamped_position", "position.clamped_shift"):
        assert any(prefix(labels[key]) in w for w in shown), key
    assert at.number_input(key="position.n").value == 8191
    # The shift was cut so that the shifted query still fits the context.
    assert at.number_input(key="position.n").value + at.number_input(key="position.shift").value <= 8191
    metrics = [m.value for m in at.metric]
    assert metrics[0] == metrics[1]


@pytest.mark.parametrize("lang,text,expect", [
    ("en", "", "text.empty"),
    ("it", "🐱🚀🇮🇹 😀", None),
    ("en", "parola " * 7200, "text.truncated"),  # 50,400 characters, the text of tests/test_pages.py (cached once)
])
def test_bad_text_gets_a_message_not_a_traceback(lang, text, expect):
    at = start(lang, PAGE, text=text)
    labels = i18n.ui(lang)
    # The parts that do not need the learner's text are always there.
    for key in ("position.shuffle_chart", "position.rotation_chart", "position.angle_chart", "position.distance_chart"):
        chart(at, key)
    live = [k for k in chart_keys(at) if k == "position.plane_chart"]
    if expect == "text.empty":
        assert any(x.value == labels["text.empty"] for x in at.info)
        assert not live
    elif expect == "text.truncated":
        assert any(prefix(labels["text.truncated"]) in x for x in warnings(at))
        assert live and len(arr(chart(at, "position.heat_chart")["data"][0]["y"])) == 512
    else:
        assert live


@pytest.mark.parametrize("sentence,expect", [("", "position.sentence_empty"), ("a", "position.one_token"),
                                             ("🐱 " * 150, "position.sentence_cut")])
def test_bad_sentences_for_the_shuffle(sentence, expect):
    at = start("it", PAGE)
    at.text_input(key="position.sentence").set_value(sentence)
    at.run()
    assert not at.exception, at.exception
    label = i18n.ui("it")[expect]
    messages = [x.value for x in at.info] + [x.value for x in at.caption]
    assert any(prefix(label) in m for m in messages)
    # The rest of the lesson still runs.
    chart(at, "position.rotation_chart")


def test_gpt2_family_shows_the_learned_position_table(tiny_gpt2, monkeypatch):
    at = start("en", PAGE)
    switch_model(at, tiny_gpt2, "tests/tiny-gpt2", monkeypatch)
    labels = i18n.ui("en")
    body = page_text(at)
    assert i18n.lesson("en", "position")["learned"].splitlines()[0][:40] in body
    assert any(x.value == i18n.fill(labels["position.no_rope_base"], base="10,000") for x in at.info)
    keys = set(chart_keys(at))
    assert {"position.learned_chart", "position.similarity_chart"} <= keys
    assert "position.plane_chart" not in keys
    # Oracle: the heatmap is the model's own wpe table; the similarity, torch's cosine similarity.
    wpe = tiny_gpt2.model.transformer.wpe.weight.detach()
    np.testing.assert_allclose(arr(chart(at, "position.learned_chart")["data"][0]["z"]), wpe.numpy(), atol=1e-6)
    expected = torch.nn.functional.cosine_similarity(wpe[:, None, :], wpe[None, :, :], dim=-1).numpy()
    np.testing.assert_allclose(arr(chart(at, "position.similarity_chart")["data"][0]["z"]), expected, atol=1e-5)
    assert at.slider(key="position.m").max == tiny_gpt2.info.context_length - 1


def test_head_beyond_a_smaller_model_is_clamped(tiny_llama, monkeypatch):
    at = start("it", PAGE)
    at.slider(key="position.head").set_value(8)
    at.slider(key="position.m").set_value(5000)
    at.run()
    switch_model(at, tiny_llama, "tests/tiny-llama", monkeypatch)
    labels = i18n.ui("it")
    shown = warnings(at)
    assert any(prefix(labels["position.clamped_head"]) in w for w in shown)
    assert any(prefix(labels["position.clamped_position"]) in w for w in shown)
    assert at.slider(key="position.head").value == tiny_llama.info.n_heads - 1
    assert at.slider(key="position.m").value == tiny_llama.info.context_length - 1
    chart(at, "position.plane_chart")  # the live section runs on the tiny model


def test_every_figure_label_exists_in_both_languages():
    """view.labels(prefix, names...) builds label ids at run time; check them statically."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    # The page and its view (the rotation section lives there, as a fragment).
    source = "\n".join((root / f).read_text(encoding="utf-8") for f in (PAGE, "ui/position_view.py"))
    ids = set()
    for call in re.finditer(r"\blabels\(\s*\"([a-z_.]+)\"((?:\s*,\s*\"[a-z_]+\")+)", source):
        ids |= {f"{call.group(1)}.{n}" for n in re.findall(r"\"([a-z_]+)\"", call.group(2))}
    assert len(ids) > 30
    for lang in i18n.LANGS:
        missing = sorted(ids - i18n.ui(lang).keys())
        assert missing == [], lang
