"""AppTest of the position lesson: both languages, the live model, bad input, GPT-2's learned table.

The shuffle and learned-table figures are read back from the page (the plotly JSON Streamlit
sends); the browser view's parts are checked by what they are sent (tests.apptest.view_data),
against lib.lessons.rope and the model's own tensors, so a test fails if the page shows the wrong numbers.
What the view does with it is held to lib by tests/js/position.test.js.
"""


import numpy as np
import pytest
import torch

from lib.course import i18n
from lib.lessons import rope
from lib.model.capture import run_capture
from lib.serving.payload import unpack_u16
from tests.apptest import page_text, start, chart, plotly_array, label_prefix as prefix, switch_model, chart_keys, view_data

PAGE = "pages/04_position.py"


def arr(value) -> np.ndarray:
    return plotly_array(value, None)


def title(fig: dict) -> str:
    return fig["layout"]["title"]["text"].replace("<br>", " ")  # titles wrap (ui.views.figures.laid_out)


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def sent(at, part: str) -> dict:
    """What a part of the position view was sent (static/views/position.js answers its moves)."""
    data = view_data(at, PARTS[part])
    assert data is not None, f"no {part} view"
    assert data["part"] == part
    return data


PARTS = {"rotation": "position.view", "angles": "position.angles", "relative": "position.relative",
         "live": "position.live"}


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
    # The rotation view: the model's θ_i (its rotary module's), the defaults (position 5, pair 0).
    rotation = sent(at, "rotation")
    theta = rope.frequencies(real.info.d_head, real.info.rope_theta)
    np.testing.assert_allclose(rotation["theta"], theta, rtol=1e-6)
    assert rotation["context"] == real.info.context_length
    assert {k: rotation["settings"][k] for k in ("m", "pair", "n", "k", "shift")} == {
        "m": 5, "pair": 0, "n": 7, "k": 3, "shift": 100}
    assert rotation["labels"]["position"] == labels["position.position"]
    assert sent(at, "angles")["theta"] == rotation["theta"] and sent(at, "angles")["key"] == rotation["key"]
    # The relative part: the two fixed vectors and the base the view rotates them with.
    relative = sent(at, "relative")
    assert relative["rope_base"] == real.info.rope_theta and relative["distances"] == 2048
    np.testing.assert_array_equal(relative["q"], rope.seeded_vector(64, 11))
    # Every label the view writes exists in this language (an unknown id comes back as itself).
    for part in PARTS:
        missing = [v for v in sent(at, part)["labels"].values() if v.startswith(("position.", "chart.", "views."))]
        assert not missing, (part, missing)
    assert len(at.dataframe) == 1 and chart_keys(at) == ["position.shuffle_chart"]


def test_the_live_part_is_the_models_own_queries_and_keys(real):
    """Oracle: the view's vectors turned by the θ_i it is sent (lib.lessons.rope.apply_rope, the same rotation
    as the view's) are the model's own rotated queries and keys; the scores by distance are lib's."""
    text = "The quick brown fox jumps over the lazy dog, and the dog sleeps."
    at = start("en", PAGE, text=text)
    live = sent(at, "live")
    cap = run_capture(real, text)
    layer, t_ = live["layer"], cap.n_tokens
    assert layer == 2 and live["n_tokens"] == t_ and live["n_heads"] == 9 and live["n_kv_heads"] == 3
    assert live["kv_of_head"] == [cap.kv_head(h) for h in range(9)]
    q = unpack_u16(live["q"]).reshape(9, t_, 64)
    k = unpack_u16(live["k"]).reshape(3, t_, 64)
    np.testing.assert_allclose(q, cap.q_pre[layer], atol=live["q"]["scale"])
    theta = np.asarray(live["theta"])
    for h in (0, 4, 8):
        np.testing.assert_allclose(rope.apply_rope(q[h], inv_freq=theta), cap.query(layer, h), atol=2e-3)
        np.testing.assert_allclose(rope.apply_rope(k[cap.kv_head(h)], inv_freq=theta), cap.key(layer, h), atol=2e-3)
    with_rope = unpack_u16(live["with_rope"]).reshape(9, t_)
    expected = rope.score_by_distance(cap.query(layer, 4), cap.key(layer, 4))[1]
    np.testing.assert_allclose(with_rope[4], expected, atol=live["with_rope"]["scale"])
    assert live["tokens"][1] == f"1 · {cap.tokens[1]}"


def test_gemmas_windowed_and_global_layers_turn_with_their_own_base(real_gemma):
    """Gemma 3 has two RoPE bases: the view gets the layer's own θ_i (its rotary module's), and
    turning the sent vectors by them gives the model's own queries on both kinds of layer."""
    from lib.model.models import GEMMA_MODEL

    text = "The cat sat on the mat because it was tired."
    at = start("en", text=text)
    at.radio(key="app.builtin").set_value(GEMMA_MODEL)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    info = real_gemma.info
    cap = run_capture(real_gemma, text)
    bases = {"sliding_attention": info.rope_theta_local, "full_attention": info.rope_theta}
    for layer in (info.layer_types.index("sliding_attention"), info.layer_types.index("full_attention")):
        at.slider(key="position.layer").set_value(layer)
        at.run()
        live = sent(at, "live")
        theta = np.asarray(live["theta"])
        np.testing.assert_allclose(theta, rope.frequencies(info.d_head, bases[info.layer_types[layer]]), rtol=1e-6)
        q = unpack_u16(live["q"]).reshape(live["n_heads"], live["n_tokens"], info.d_head)
        np.testing.assert_allclose(rope.apply_rope(q[1], inv_freq=theta), cap.query(layer, 1), atol=2e-3)
    # The rotation chart uses the global layers' base, as the lesson's text says.
    np.testing.assert_allclose(sent(at, "rotation")["theta"], rope.frequencies(info.d_head, info.rope_theta), rtol=1e-6)


def test_the_layer_sends_its_own_vectors_without_running_the_model(monkeypatch):
    """The layer is the one choice of the live part that needs the server (a layer's vectors are sent
    at a time); it reads the capture already made. The other parts' data stays as sent."""
    at = start("en", PAGE)
    import ui.shell.cache

    def no_model(*args, **kwargs):
        raise AssertionError("a view choice ran the model")

    monkeypatch.setattr(ui.shell.cache, "run_capture", no_model)
    first, rotation = sent(at, "live"), sent(at, "rotation")
    at.slider(key="position.layer").set_value(7)
    at.run()
    assert not at.exception, at.exception
    second = sent(at, "live")
    assert second["layer"] == 7 and second["key"] != first["key"] and second["q"] != first["q"]
    assert sent(at, "rotation")["key"] == rotation["key"]  # the rotation view keeps the learner's settings


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_links_positions_reach_the_view_once(lang):
    """A share link's values (ui/learner/share.py) go to the view with a fresh token; the view brings a
    position past the context back itself, with a notice (tests/js/position.test.js)."""
    from ui.lessons.position import sections as position

    at = start(lang, PAGE)
    at.session_state["position.n"] = 50_000
    at.session_state["position.shift"] = 9_000
    at.session_state[position.LINK_KEY] = "token-1"
    at.run()
    assert not at.exception, at.exception
    for part in ("rotation", "relative", "live"):
        s = sent(at, part)["settings"]
        assert (s["n"], s["shift"], s["from_link"]) == (50_000, 9_000, "token-1"), part
    relative = sent(at, "relative")
    assert relative["context"] == 8192
    assert relative["labels"]["clamped_position"] == i18n.ui(lang)["position.clamped_position"]


@pytest.mark.parametrize("lang,text,expect", [
    ("en", "", "text.empty"),
    ("it", "🐱🚀🇮🇹 😀", None),
    ("en", "parola " * 7200, "text.truncated"),  # 50,400 characters, the text of tests/test_pages.py (cached once)
])
def test_bad_text_gets_a_message_not_a_traceback(lang, text, expect):
    at = start(lang, PAGE, text=text)
    labels = i18n.ui(lang)
    # The parts that do not need the learner's text are always there.
    chart(at, "position.shuffle_chart")
    for part in ("rotation", "angles", "relative"):
        sent(at, part)
    live = view_data(at, "position.live")
    if expect == "text.empty":
        assert any(x.value == labels["text.empty"] for x in at.info)
        assert live is None
    elif expect == "text.truncated":
        assert any(prefix(labels["text.truncated"]) in x for x in warnings(at))
        # The view gets the first tokens (a heatmap row each); the scores by distance use all 512.
        assert (live["n_tokens"], live["n_total"], len(live["tokens"])) == (256, 512, 256)
        assert live["q"]["n"] == 9 * 256 * 64 and live["with_rope"]["n"] == 9 * 512
    else:
        assert live is not None


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
    sent(at, "rotation")


def test_gpt2_family_shows_the_learned_position_table(tiny_gpt2, monkeypatch):
    at = start("en", PAGE)
    switch_model(at, tiny_gpt2, "tests/tiny-gpt2", monkeypatch)
    labels = i18n.ui("en")
    body = page_text(at)
    assert i18n.lesson("en", "position")["learned"].splitlines()[0][:40] in body
    assert any(x.value == i18n.fill(labels["position.no_rope_base"], base="10,000") for x in at.info)
    keys = set(chart_keys(at))
    assert {"position.learned_chart", "position.similarity_chart"} <= keys
    assert view_data(at, "position.live") is None
    # Oracle: the heatmap is the model's own wpe table; the similarity, torch's cosine similarity.
    wpe = tiny_gpt2.model.transformer.wpe.weight.detach()
    np.testing.assert_allclose(arr(chart(at, "position.learned_chart")["data"][0]["z"]), wpe.numpy(), atol=1e-6)
    expected = torch.nn.functional.cosine_similarity(wpe[:, None, :], wpe[None, :, :], dim=-1).numpy()
    np.testing.assert_allclose(arr(chart(at, "position.similarity_chart")["data"][0]["z"]), expected, atol=1e-5)
    assert sent(at, "rotation")["context"] == tiny_gpt2.info.context_length


def test_layer_beyond_a_smaller_model_is_clamped(tiny_llama, monkeypatch):
    at = start("it", PAGE)
    at.slider(key="position.layer").set_value(20)
    at.run()
    switch_model(at, tiny_llama, "tests/tiny-llama", monkeypatch)
    labels = i18n.ui("it")
    assert any(prefix(labels["position.clamped_layer"]) in w for w in warnings(at))
    assert at.slider(key="position.layer").value == tiny_llama.info.n_layers - 1
    # The head, the pair and the position are the view's: it brings them into the new model's range.
    live = sent(at, "live")  # the live part runs on the tiny model
    assert (live["n_heads"], live["d_head"]) == (4, 8)
    assert sent(at, "rotation")["context"] == tiny_llama.info.context_length


def test_every_figure_label_exists_in_both_languages():
    """view.labels(prefix, names...) builds label ids at run time; check them statically."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    # The page and its sections module (the `labels` helper the figures' labels come from).
    source = "\n".join((root / f).read_text(encoding="utf-8") for f in (PAGE, "ui/lessons/position/sections.py"))
    ids = set()
    for call in re.finditer(r"\blabels\(\s*\"([a-z_.]+)\"((?:\s*,\s*\"[a-z_]+\")+)", source):
        ids |= {f"{call.group(1)}.{n}" for n in re.findall(r"\"([a-z_]+)\"", call.group(2))}
    assert len(ids) >= 10
    for lang in i18n.LANGS:
        missing = sorted(ids - i18n.ui(lang).keys())
        assert missing == [], lang
