"""AppTest of the block lesson: both languages, the live model, bad input, a GPT-2 family model.

Figures are read back from the page (the plotly JSON Streamlit sends) and compared with numbers
computed here from a fresh capture, so a test fails if the page draws the wrong thing.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from lib.course import i18n
from lib.course.quiz import load_bank
from lib.lessons import block as blk
from lib.lessons.logit_lens import lens_positions
from lib.model.capture import DEFAULT_MAX_TOKENS, run_capture
from lib.serving.payload import unpack_ints, unpack_u16
from tests.apptest import page_text, start, find_chart as chart, plotly_array, label_prefix as prefix, switch_model, view_data
from ui.lessons.block import lens_service
from ui.shell.cache import get_capture

PAGE = "pages/06_block.py"
LONG_TEXT = "parola " * 7200  # the same text as tests/test_pages.py: one cached 512-token capture
CHARTS = ("block.diagram", "block.resid_heatmap", "block.curves", "block.neuron_heatmap", "block.lens_heatmap")
# One token through the norm (the layer is the server's); one token's contributions; the lens at
# any layer and position.
VIEWS = ("block.norm_view", "block.view", "block.lens_view")
NUMBER = re.compile(r"(\d+(?:[.,]\d+)?)(?: × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?")


def arr(value) -> np.ndarray:
    return plotly_array(value, np.float64)


def last_number(text: str) -> float:
    """The last number of a sentence as the page writes it: 0, 0.02, 1.3 × 10⁻⁷ (or 1,3 in Italian)."""
    mantissa, exponent = NUMBER.findall(text)[-1]
    value = float(mantissa.replace(",", "."))
    if exponent:
        value *= 10.0 ** int(exponent.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
    return value


def check_value(at, label: str) -> float:
    return last_number(next(s.value for s in at.success if s.value.startswith(prefix(label))))


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_page_shows_the_live_block_in_both_languages(lang, real):
    at = start(lang, PAGE)
    labels, texts = i18n.ui(lang), i18n.lesson(lang, "block")
    assert any(x.value == labels["lesson.block.title"] for x in at.title)
    body = page_text(at)
    for section in ("intro", "residual_idea", "prenorm", "blackboard_read", "nonlinearity", "activations",
                    "neurons", "dff_seed", "lens_read", "next"):
        assert prefix(texts[section].splitlines()[0])[:40] in body, section
    assert prefix(texts["swiglu"].splitlines()[0])[:40] in body  # a gated model gets the SwiGLU text
    assert i18n.placeholders(body) == set()  # every {name} was filled
    for key in CHARTS:
        assert chart(at, key) is not None, key
    # The page's own oracles: hand-made RMSNorm vs the module, recomputed MLP vs the capture,
    # lens at the last layer vs the model's output.
    assert check_value(at, labels["block.norm.check"]) < 1e-4
    assert check_value(at, labels["block.mlp.check"]) < 1e-4
    assert check_value(at, labels["block.lens.check"]) < 1e-4
    # The drawings show the learner's text, computed here again from a fresh capture.
    cap = run_capture(real, labels["text.example"])
    z = arr(chart(at, "block.resid_heatmap")["data"][0]["z"])
    np.testing.assert_allclose(z, np.log10(np.linalg.norm(cap.resid.astype(np.float64), axis=-1)), atol=1e-5)
    # The norm's view: every token's vector at the chosen layer, and lib's numbers for each.
    norm = view_data(at, "block.norm_view")
    layer = at.slider(key="block.norm_layer").value
    params = blk.norm_params(blk.block_norm(real, layer, "attn"), real.info.norm)
    steps = blk.norm_steps(cap.resid[layer, -1], params)
    x = unpack_u16(norm["x"][-1])
    np.testing.assert_allclose(x, cap.resid[layer, -1], atol=norm["x"][-1]["scale"])
    np.testing.assert_allclose(norm["stats"][-1][:3], [steps.mean, steps.rms, steps.std], rtol=1e-6)
    np.testing.assert_allclose(norm["weight"], params.weight, rtol=1e-6)
    assert norm["settings"]["norm_token"] == cap.n_tokens - 1 and len(norm["x"]) == cap.n_tokens
    # Every token's contributions, sent once (the token is chosen in the browser): the stream's norms.
    contrib = view_data(at, "block.view")
    assert contrib["tokens"] == list(cap.tokens) and contrib["settings"]["resid_token"] == cap.n_tokens - 1
    stream = 10 ** unpack_u16(contrib["resid"]).reshape(real.info.n_layers + 1, cap.n_tokens)
    np.testing.assert_allclose(stream, np.linalg.norm(cap.resid.astype(np.float64), axis=-1), rtol=1e-3)
    lens = chart(at, "block.lens_heatmap")["data"][0]
    pos = lens_positions(cap.n_tokens, 24)
    logits = cap.logits[pos].astype(np.float64)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    np.testing.assert_allclose(arr(lens["z"])[-1], probs.max(-1), atol=1e-5)  # last row: the model's top-1
    assert arr(lens["z"]).shape == (real.info.n_layers + 1, len(pos))
    # The lens view: every layer and position, sent once; its last layer's top-1 is the model's.
    data = view_data(at, "block.lens_view")
    L, P, k = real.info.n_layers, len(pos), data["k"]
    assert data["positions"] == pos.tolist() and data["inputs"] == [cap.tokens[i] for i in pos]
    top_p = unpack_u16(data["top_probs"]).reshape(L + 1, P, k)
    np.testing.assert_allclose(top_p[-1, :, 0], probs.max(-1), atol=1e-4)
    top = unpack_ints(data["top"]).reshape(L + 1, P, k)
    assert [data["words"][i] for i in top[-1, :, 0]] == [data["words"][i] for i in data["final"]]
    assert (unpack_ints(data["final_rank"]).reshape(L + 1, P)[-1] == 0).all()
    assert data["labels"]["reading"] == labels["block.lens.reading"]
    # The diagram has the live shapes and the model's module names; the d_ff table the seed's 14,336.
    diagram = json.dumps(chart(at, "block.diagram"))
    assert f"[{cap.n_tokens}, {real.info.d_model}]" in diagram and "input_layernorm" in diagram
    dff = next(df.value for df in at.dataframe if "Llama-3 8B" in df.value.columns)
    assert dff["Llama-3 8B"].tolist()[4] in ("14,336", "14.336")
    assert any(x.value.startswith(prefix(labels["block.dff.verdict.eight_thirds"])) for x in at.info)
    assert data["settings"]["lens_layer"] == real.info.n_layers and data["settings"]["lens_pos"] == P - 1


def test_view_widgets_never_run_the_model(monkeypatch):
    at = start("en", PAGE)
    import ui.shell.cache
    from lib.lessons import block
    from lib.serving import lens_service as service

    def forbidden(*args, **kwargs):
        raise AssertionError("a view widget re-ran the model or the lens")

    monkeypatch.setattr(ui.shell.cache, "run_capture", forbidden)
    monkeypatch.setattr(service, "logit_lens", forbidden)
    monkeypatch.setattr(service, "logit_lens_elsewhere", forbidden)
    monkeypatch.setattr(block, "contributions", forbidden)
    sent = {key: view_data(at, key) for key in VIEWS}
    at.run()
    assert not at.exception, at.exception
    # The layer, the position and the tokens are the browser's: a rerun sends the same data, same key.
    assert {key: view_data(at, key) for key in VIEWS} == sent
    at.slider(key="block.norm_layer").set_value(2)  # the norm's layer is the server's: no model run either
    at.run()
    assert not at.exception, at.exception
    assert view_data(at, "block.norm_view")["key"] != sent["block.norm_view"]["key"]
    assert view_data(at, "block.lens_view") == sent["block.lens_view"]


@pytest.mark.parametrize("lang,text,expect", [
    ("en", "", "text.empty"),
    ("it", "🐱🚀🇮🇹 😀", None),
    ("en", "A", None),
    ("it", "Costo $5 *forte* <img src=x onerror=alert(1)> `x`", None),
    ("en", LONG_TEXT, "text.truncated"),
])
def test_bad_text_gets_a_message_not_a_traceback(lang, text, expect):
    at = start(lang, PAGE, text=text)
    labels = i18n.ui(lang)
    assert not at.exception
    # What needs no text is always there.
    assert chart(at, "block.curves") is not None
    assert any(df.value.shape[0] == 8 for df in at.dataframe)  # the d_ff table
    if expect == "text.empty":
        assert any(x.value == labels["text.empty"] for x in at.info)
        assert chart(at, "block.lens_heatmap") is None and chart(at, "block.diagram") is None
        return
    for key in CHARTS:
        assert chart(at, key) is not None, key
    for key in VIEWS:
        assert view_data(at, key) is not None, key
    ticks = " ".join(chart(at, "block.resid_heatmap")["layout"]["xaxis"]["ticktext"])
    assert "<img" not in ticks
    if expect == "text.truncated":
        assert any(prefix(labels["text.truncated"]) in x.value for x in at.warning)
        assert any(prefix(labels["block.lens.window"]) in c.value for c in at.caption)
        assert arr(chart(at, "block.lens_heatmap")["data"][0]["z"]).shape[1] == 24


def test_out_of_range_values_are_clamped_with_a_notice(tiny_llama, monkeypatch):
    """Layers chosen on a 30-layer model, then a 2-layer one; positions chosen on a longer text,
    then a shorter one: every choice moves into range, with a notice, never a traceback."""
    at = start("it", PAGE)
    labels = i18n.ui("it")
    notice = prefix(labels["block.clamped"])
    at.session_state["block.lens_layer"] = 25  # as a share link leaves it: the lens view's layer
    at.slider(key="block.norm_layer").set_value(20)
    at.slider(key="block.mlp_layer").set_value(15)
    at.run()
    switch_model(at, tiny_llama, "tests/tiny-llama", monkeypatch)
    assert sum(notice in w.value for w in at.warning) == 3
    L = tiny_llama.info.n_layers
    assert view_data(at, "block.lens_view")["settings"]["lens_layer"] == L
    assert at.slider(key="block.norm_layer").value == at.slider(key="block.mlp_layer").value == L - 1
    for key in ("block.lens_pos", "block.resid_token", "block.norm_token"):
        at.session_state[key] = 9  # positions of a longer text, as a link leaves them
    at.run()
    at.text_area(key="app.text").set_value("Ciao")
    at.run()
    assert not at.exception, at.exception
    assert sum(notice in w.value for w in at.warning) == 3
    settings = view_data(at, "block.lens_view")["settings"]
    assert settings["lens_pos"] == settings["resid_token"] == settings["norm_token"] == 3
    assert len(view_data(at, "block.norm_view")["tokens"]) == 4


def test_quiz_on_the_page_is_graded():
    at = start("en", PAGE)
    q = next(x for x in load_bank("en", "block") if x.id == "dff_llama3")
    at.text_input(key=f"quiz.block.{q.id}.answer").set_value("14336")
    at.button(key=f"FormSubmitter:quiz.block.{q.id}.form-{i18n.ui('en')['quiz.check']}").click()
    at.run()
    assert not at.exception
    assert at.session_state["quiz.results"]["block"] == {q.id: True}


def test_gpt2_family_layernorm_gelu_c_fc(tiny_gpt2, monkeypatch):
    at = start("en", PAGE)
    switch_model(at, tiny_gpt2, "tests/tiny-gpt2", monkeypatch)
    labels, texts = i18n.ui("en"), i18n.lesson("en", "block")
    body = page_text(at)
    assert prefix(texts["gelu_mlp"].splitlines()[0])[:40] in body
    assert i18n.placeholders(body) == set()
    diagram = json.dumps(chart(at, "block.diagram"))
    assert "transformer.h.{l}.ln_1" in diagram and "transformer.h.{l}.mlp" in diagram
    assert labels["arch.layernorm"] in diagram and "gate" not in diagram
    assert any(x.value.startswith(prefix(labels["block.dff.verdict.classic"])) for x in at.info)
    assert check_value(at, labels["block.norm.check"]) < 1e-4
    assert check_value(at, labels["block.mlp.check"]) < 1e-4
    assert check_value(at, labels["block.lens.check"]) < 1e-4
    # The neuron table has no gate column for a plain MLP.
    neurons = next(df.value for df in at.dataframe if labels["block.mlp.col.neuron"] in df.value.columns)
    assert labels["block.mlp.col.pre"] in neurons.columns and labels["block.mlp.col.gate"] not in neurons.columns
    # The curve of its own activation is the tanh GELU (GPT-2's gelu_new).
    names = [d["name"] for d in chart(at, "block.curves")["data"]]
    assert any(n.startswith(labels["block.act.gelu_tanh"] + " ←") for n in names)
    assert view_data(at, "block.lens_view")["settings"]["lens_layer"] == tiny_gpt2.info.n_layers


def test_the_lens_is_submitted_by_the_block_lesson_and_by_no_other():
    """In a browser (the sections deferred), the block lesson submits its text's lens as it opens;
    another lesson with a text does not, nor does the block lesson without a browser (everything is
    computed at once there). What the lens's section finds is the lens of this text."""
    at = start("en", "pages/05_attention.py")
    model = at.session_state["app.model"]
    at.session_state["app.defer_sections"] = True
    words = "A learner's sentence typed on the attention lesson, sections deferred."
    at.text_area(key="app.text").set_value(words)
    at.run()
    assert not at.exception, at.exception
    assert not lens_service.SERVICE.known(lens_service.key(model, words))
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    assert lens_service.SERVICE.known(lens_service.key(model, words))
    lens, gap = lens_service.result(model, words)  # what the block lesson will find: the lens of this text
    cap = get_capture(model, words, DEFAULT_MAX_TOKENS)
    assert gap < 1e-4 and lens.positions[-1] == cap.n_tokens - 1
    assert lens.final_ids[-1] == int(np.argmax(cap.logits_at(cap.n_tokens - 1)))
    at = start("en", PAGE, text="Another sentence, on the block lesson with nothing deferred.")
    assert chart(at, "block.lens_heatmap") is not None  # without a browser: computed at once, waited for


def test_the_lens_of_the_built_in_model_is_worked_out_in_the_lens_process_and_is_the_lens_here(real):
    """The built-in model's lens has its products worked out in the lens process (lib/serving/lens_worker.py):
    submitted ahead (idle class) or waited for (nice +10), the same lens as worked out here."""
    from lib.lessons.logit_lens import logit_lens
    from lib.model.models import DEFAULT_MODEL

    lens_service.start()
    for words in ("A lens submitted ahead, then waited for.", "A lens waited for at once."):
        if "ahead" in words:
            lens_service.submit(DEFAULT_MODEL, words)
        there, gap = lens_service.result(DEFAULT_MODEL, words)
        assert lens_service.SERVICE.process.pid is not None  # it went there
        cap = get_capture(DEFAULT_MODEL, words, DEFAULT_MAX_TOKENS)
        here = logit_lens(real, cap.resid, positions=lens_positions(cap.n_tokens, lens_service.LENS_WINDOW), k=5)
        assert (there.top_ids == here.top_ids).all() and (there.final_rank == here.final_rank).all()
        assert (there.positions == here.positions).all()
        assert np.abs(there.top_probs - here.top_probs).max() < 1e-5
        assert gap < 1e-4


def test_a_lens_that_cannot_be_worked_out_is_a_notice_not_a_traceback(monkeypatch):
    from lib.serving import lens_service as service

    def broken(*_, **__):
        raise MemoryError("no room for the logits (test)")

    monkeypatch.setattr(service, "logit_lens_elsewhere", broken)
    monkeypatch.setattr(service, "logit_lens", broken)
    at = start("it", PAGE, text="Una frase la cui lente non si può calcolare.")
    assert not at.exception, at.exception
    assert any(e.value == i18n.ui("it")["block.lens.failed"] for e in at.error)
    assert chart(at, "block.lens_heatmap") is None and chart(at, "block.resid_heatmap") is not None


def test_sections_below_the_first_screen_compute_when_reached():
    """With a browser (here: the deferral switched on by hand), a visit computes the first screen only:
    the residual stream's contributions, the MLP and the logit lens hold a notice until the learner
    reaches them. The follower's callback marks one reached (for this model and text), and the next
    run of the page computes that one, and only that one."""
    from ui.views import follow

    at = start("en")
    at.session_state["app.defer_sections"] = True
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    pending = i18n.ui("en")["app.section_pending"]
    assert sum(c.value == pending for c in at.caption) == 4  # residual, collapse, MLP, lens
    for key in ("block.resid_heatmap", "block.neuron_heatmap", "block.lens_heatmap"):
        assert chart(at, key) is None, key
    assert chart(at, "block.diagram") is not None  # the first screen is drawn
    # The lens was submitted as soon as the page had the text, without waiting for it.
    model, words = at.session_state["app.model"], at.text_area(key="app.text").value
    assert lens_service.SERVICE.known(lens_service.key(model, words))
    # The learner scrolls to the lens: its follower reports it reached for this model and text.
    mark = follow.inputs_mark(model, words)
    at.session_state["block.lens_box.reached"] = mark
    at.run()
    assert chart(at, "block.lens_heatmap") is not None
    assert chart(at, "block.resid_heatmap") is None
    assert sum(c.value == pending for c in at.caption) == 3
    # Another text is another computation: the lens waits to be reached again.
    at.text_area(key="app.text").set_value("The dog sleeps on the sofa.")
    at.run()
    assert chart(at, "block.lens_heatmap") is None
