"""AppTest of the attention lesson: both languages, the live model, bad input, a GPT-2 family model.

Figures are read back from the page (the plotly JSON Streamlit sends, arrays in base64) and
compared with a capture computed here, so a test fails if the page draws the wrong numbers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from lib import attention as att
from lib import i18n
from lib.bertviz_view import as_document, head_view_html
from lib.capture import run_capture
from lib.quiz import load_bank
from ui import attention_view as view
from lib.payload import unpack_u16
from tests.apptest import page_text, start, find_chart as chart, plotly_array, label_prefix as prefix, switch_model, chart_keys, view_data

PAGE = "pages/05_attention.py"
LONG_TEXT = "parola " * 7200  # the same text as tests/test_pages.py: one cached 512-token capture
XSS = "Il gatto <img src=x onerror=alert(1)> dorme"


def arr(value) -> np.ndarray:
    return plotly_array(value, object)


def heads(at) -> dict | None:
    """What the chosen layer's browser view was sent (static/views/attention.js draws the head)."""
    return view_data(at, "attention.view")


def chosen(at) -> tuple[int, int]:
    data = heads(at)
    return data["chosen"]["layer"], data["chosen"]["head"]


def heat(at) -> np.ndarray:
    """The chosen head's heatmap as the view draws it: its weights, NaN where the mask hides."""
    data = heads(at)
    n, head = data["n"], data["chosen"]["head"]
    w = unpack_u16(data["weights"]).reshape(data["n_heads"], n, n)[head]
    return np.where(np.array(data["mask"], dtype=bool).reshape(n, n), w, np.nan)


def title(at) -> str:
    data = heads(at)
    return data["heads"][data["chosen"]["head"]]["title"]


def choose(at, layer: int | None = None, head: int | None = None) -> None:
    """What the view's layer trigger and the head's followers set on the server (ui/attention_view.py
    set_chosen), then a run: AppTest cannot move a browser view's slider (tests/e2e does)."""
    if layer is not None:
        at.session_state["attention.layer"] = layer
    if head is not None:
        at.session_state["attention.head"] = head
    at.run()


@pytest.fixture(scope="module")
def example(real):
    """The English example text captured here, once: the oracle for what the page draws."""
    return run_capture(real, i18n.ui("en")["text.example"])


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_page_shows_the_live_heads_in_both_languages(lang, real, example):
    at = start(lang, PAGE, text=i18n.ui("en")["text.example"])
    labels, texts = i18n.ui(lang), i18n.lesson(lang, "attention")
    assert any(x.value == labels["lesson.attention.title"] for x in at.title)
    body = page_text(at)
    for section in ("intro", "heatmap", "overview", "bertviz", "formula", "why_scale", "gqa", "mask", "cost", "flash"):
        assert prefix(texts[section].splitlines()[0])[:40] in body, section
    assert i18n.placeholders(body) == set()  # every {name} was filled
    # The heatmap is the model's own attention for the selected head (oracle: a fresh capture).
    cap = example
    layer, head = chosen(at)
    assert (layer, head) == (real.info.n_layers // 2, 0)
    z = heat(at)
    expected = np.where(np.tril(np.ones_like(z, dtype=bool)), cap.attention(layer, head), np.nan)
    np.testing.assert_allclose(z, expected, atol=heads(at)["weights"]["scale"])
    # Every head of the layer is sent once: each one the model's own weights, described in words.
    data = heads(at)
    every = unpack_u16(data["weights"]).reshape(data["n_heads"], data["n"], data["n"])
    np.testing.assert_allclose(every, cap.attn_layer(layer), atol=data["weights"]["scale"])
    scores = att.pattern_scores(cap.attn_layer(layer), cap.token_ids, att.word_ids(cap.text, cap.offsets))
    for h, said in enumerate(data["heads"]):
        best = att.strongest_pattern({k: float(v[h]) for k, v in scores.items()})
        assert (best is not None) == said["clear"]
        if best is not None:
            assert said["said"] == i18n.fill(labels[f"attention.pattern.is.{best}"], share=str(round(100 * scores[best][h])))
    # The page's own check: its recomputation equals the model's weights to 1e-4.
    check = next(s.value for s in at.success if s.value.startswith(prefix(labels["attention.check"])))
    assert float(re.search(r"([0-9.]+e[-+][0-9]+)", check).group(1)) < 1e-4
    # The flash demonstration equals the naive result, shown as a metric.
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics[labels["attention.flash.diff"]]) < 1e-9
    assert metrics[labels["attention.gqa.saving"]].startswith("3")
    # Pattern table, step matrices, and every chart; bertviz on demand (below).
    assert len(at.tabs) >= 7
    assert len(at.get("iframe")) == 0
    keys = set(chart_keys(at))
    assert {"attention.overview", "attention.gqa_chart", "attention.mask_chart",
            "attention.unmasked_chart", "attention.scaling_chart", "attention.cost_chart",
            "attention.memory_chart", "attention.flash_chart"} <= keys
    assert any(s.value.startswith(prefix(labels["attention.gqa.shared"])) for s in at.success)
    assert prefix(labels["attention.step.proj_module"]) in body  # the projection named in the course's words


def test_formula_builds_only_the_open_tab_and_each_tab_opens(real, example):
    """The formula's tabs track which one is open: a move builds that tab alone."""
    from lib import attention as att

    at = start("en", PAGE, text=i18n.ui("en")["text.example"])
    labels = i18n.ui("en")
    layer, head = chosen(at)
    n = min(example.n_tokens, 6)  # STEP_TOKENS
    rows = [f"{i}·{tok}" for i, tok in enumerate(example.tokens[:n])]

    def step_tables() -> list:  # the formula's matrices: rows are the first tokens
        return [df.value for df in at.dataframe if list(df.value.index) == rows]

    def charts() -> set[str]:
        return set(chart_keys(at))

    assert len(step_tables()) == 3 and "attention.step.concat_chart" not in charts()  # Q, K, V only
    steps = att.capture_head_steps(example, layer, head, scale=att.module_scale(real, layer))
    for step, matrix in (("softmax", steps.weights), ("scores", steps.scores)):
        at.session_state["attention.step_tab"] = labels[f"attention.step.{step}"]
        at.run()
        assert not at.exception, at.exception
        (table,) = step_tables()  # that tab's matrix alone, with the model's numbers
        digits = 3 if step == "softmax" else 2
        shown = table.to_numpy()
        for i in range(n):
            for j in range(n):
                want = matrix[i, j]
                assert shown[i, j] == ("−∞" if np.isneginf(want) else f"{round(float(want), digits):g}") or \
                    abs(float(shown[i, j]) - want) <= 10 ** -digits, (step, i, j)
    at.session_state["attention.step_tab"] = labels["attention.step.concat"]
    at.run()
    assert "attention.step.concat_chart" in charts()
    bars = chart(at, "attention.step.concat_chart")["data"][0]
    out = att.layer_output(real, example, layer)
    np.testing.assert_allclose(arr(bars["y"]).astype(float), np.linalg.norm(out.per_head, axis=-1).mean(-1), rtol=1e-5)


def test_overview_has_every_head_and_a_clickable_marker_each(real, example):
    at = start("en", PAGE)
    fig = chart(at, "attention.overview")
    n_layers, n_heads = real.info.n_layers, real.info.n_heads
    markers = fig["data"][1]
    pairs = {tuple(int(v) for v in p) for p in arr(markers["customdata"]).reshape(-1, 2).tolist()}
    assert pairs == {(layer, head) for layer in range(n_layers) for head in range(n_heads)}
    n = min(example.n_tokens, 16)
    z = arr(fig["data"][0]["z"]).astype(np.float64)
    assert z.shape == (n_heads * (n + 1), n_layers * (n + 1))  # one blank line between thumbnails
    # Thumbnail (layer 2, head 1) is that head's attention, first n tokens, future blank.
    block = z[(n + 1):(n + 1) + n, 2 * (n + 1):2 * (n + 1) + n]
    expected = np.where(np.tril(np.ones((n, n), dtype=bool)), example.attention(2, 1)[:n, :n], np.nan)
    np.testing.assert_allclose(block, expected, atol=1e-6)


def test_view_widgets_never_run_the_model(monkeypatch):
    at = start("en", PAGE)
    import ui.cache

    def no_model(*args, **kwargs):
        raise AssertionError("a view widget ran the model")

    monkeypatch.setattr(ui.cache, "run_capture", no_model)
    at.select_slider(key="attention.block").set_value(2)
    at.select_slider(key="attention.dh").set_value(1024)
    choose(at, 3, 7)
    assert not at.exception, at.exception
    assert title(at) == i18n.fill(i18n.ui("en")["attention.heatmap_title"], layer="3", head="7")
    at.slider(key="attention.step").set_value(at.slider(key="attention.step").max)
    at.run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    # Without the scaling, Dh = 1024 saturates the softmax.
    assert int(metrics[i18n.ui("en")["attention.scaling.max_raw"]].rstrip("%")) > 90


@pytest.mark.parametrize("lang,text,expect", [
    ("en", "", "text.empty"),
    ("it", "Hello", "attention.pattern.one_token"),
    ("it", "🐱🚀🇮🇹 😀", None),
    ("en", LONG_TEXT, "text.truncated"),
])
def test_bad_text_gets_a_message_not_a_traceback(lang, text, expect):
    at = start(lang, PAGE, text=text)
    labels = i18n.ui(lang)
    # The parts that need no text are always there.
    for key in ("attention.scaling_chart", "attention.cost_chart", "attention.gqa_chart"):
        assert chart(at, key) is not None, key
    if expect == "text.empty":
        assert any(x.value == labels["text.empty"] for x in at.info)
        assert heads(at) is None and len(at.get("iframe")) == 0
        return
    # bertviz too, once opened (its head view; the model view is built when its tab opens).
    at.toggle(key="attention.bertviz_on").set_value(True)
    at.run()
    assert not at.exception, at.exception
    assert heads(at) is not None and len(at.get("iframe")) == 1
    if expect == "attention.pattern.one_token":
        assert all(h["said"] == labels[expect] for h in heads(at)["heads"])
        assert any(x.value == labels["attention.unmasked.one_token"] for x in at.info)
    elif expect == "text.truncated":
        assert any(prefix(labels["text.truncated"]) in x.value for x in at.warning)
        captions = [c.value for c in at.caption]
        for key in ("attention.heatmap_cut", "attention.overview_cut"):
            assert any(prefix(labels[key]) in c for c in captions), key
        # What is drawn is capped; the page says so and keeps the labels readable.
        assert heat(at).shape == (64, 64)
        assert len(heads(at)["ticks"]) == len(heads(at)["tokens"]) == 64


def test_token_text_is_escaped_in_the_charts():
    at = start("en", PAGE, text=XSS)
    ticks = " ".join(heads(at)["ticks"])
    assert "&lt;" in ticks and "<img" not in ticks and "<" not in ticks.replace("&lt;", "")


def test_out_of_range_layer_and_head_are_clamped_with_a_notice(tiny_llama, monkeypatch):
    at = start("it", PAGE)
    choose(at, 29, 8)
    switch_model(at, tiny_llama, "tests/tiny-llama", monkeypatch)
    labels = i18n.ui("it")
    assert any(prefix(labels["attention.clamped"]) in w.value for w in at.warning)
    assert chosen(at) == (tiny_llama.info.n_layers - 1, tiny_llama.info.n_heads - 1)
    assert heads(at)["n_layers"] == tiny_llama.info.n_layers


def test_gpt2_family_has_no_gqa_and_uses_c_proj(tiny_gpt2, monkeypatch):
    at = start("en", PAGE)
    switch_model(at, tiny_gpt2, "tests/tiny-gpt2", monkeypatch)
    labels = i18n.ui("en")
    assert any(x.value == labels["attention.gqa.none"] for x in at.info)
    assert prefix(labels["attention.step.proj_module"]) in page_text(at)  # its output projection found and named
    check = next(s.value for s in at.success if s.value.startswith(prefix(labels["attention.check"])))
    assert float(re.search(r"([0-9.]+e[-+][0-9]+)", check).group(1)) < 1e-4
    assert {m.label: m.value for m in at.metric}[labels["attention.gqa.saving"]].startswith("1")
    at.toggle(key="attention.bertviz_on").set_value(True)
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("iframe")) == 1


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_quiz_answer_is_graded(lang):
    at = start(lang, PAGE)
    q = next(x for x in load_bank(lang, "attention") if x.id == "scale_root")
    at.text_input(key=f"quiz.attention.{q.id}.answer").set_value(str(int(q.answer)))
    at.button(key=f"FormSubmitter:quiz.attention.{q.id}.form-{i18n.ui(lang)['quiz.check']}").click()
    at.run()
    assert not at.exception
    assert any(q.explanation[:30] in s.value for s in at.success)
    assert at.session_state["quiz.results"]["attention"] == {q.id: True}


def test_bertviz_opens_on_demand_and_builds_only_the_open_view(real, example):
    """bertviz's views are pages of their own for the browser to load: shown when the learner opens
    them, and then only the view in the open tab is built and sent."""
    at = start("en", PAGE)
    labels = i18n.ui("en")
    layer = chosen(at)[0]
    assert at.toggle(key="attention.bertviz_on").value is False and len(at.get("iframe")) == 0
    at.toggle(key="attention.bertviz_on").set_value(True)
    at.run()
    assert not at.exception, at.exception
    (head_view,) = at.get("iframe")  # the head view alone, of the chosen layer (oracle: bertviz on a fresh capture)
    n = min(example.n_tokens, 48)  # BERTVIZ_HEAD_TOKENS
    expected = head_view_html(example.attn[:, :, :n, :n], list(example.tokens[:n]), layers=[layer])

    def same(html: str) -> str:  # bertviz names its element with a fresh random id each time
        return re.sub(r"bertviz-[0-9a-f]{32}", "bertviz-ID", html)

    # bertviz's page, as a whole document in the course's language and named (lib.bertviz_view.as_document)
    assert same(head_view.proto.srcdoc) == same(as_document(expected.html, "en", labels["attention.bertviz.head_tab"]))
    assert any(c.value.startswith(prefix(i18n.fill(labels["attention.bertviz.head_cap"], layer=str(layer))))
               for c in at.caption)
    at.session_state["attention.bertviz_tab"] = labels["attention.bertviz.model_tab"]
    at.run()
    (model_view,) = at.get("iframe")
    assert model_view.proto.srcdoc != head_view.proto.srcdoc
    assert any(c.value.startswith(prefix(labels["attention.bertviz.model_cap"])) for c in at.caption)


@pytest.mark.parametrize("bertviz_open", [True, False])
def test_a_new_layer_redraws_every_section_that_draws_the_head(real, example, bertviz_open):
    """Every section drawing the chosen head (live view, formula, mask, flash, and bertviz when it is
    open) draws the new layer: none shows the previous head. That the move reruns those sections
    alone, in one script run, is checked in the browser (tests/e2e/test_attention.py): AppTest
    reruns the whole page for a widget."""
    at = start("en", PAGE, text=i18n.ui("en")["text.example"])
    labels = i18n.ui("en")
    if bertviz_open:
        at.toggle(key="attention.bertviz_on").set_value(True)
        at.run()
    assert chosen(at)[0] != 3
    choose(at, 3)
    assert not at.exception, at.exception
    assert title(at) == i18n.fill(labels["attention.heatmap_title"], layer="3", head="0")
    assert chart(at, "attention.unmasked_chart")["layout"]["title"]["text"].replace("<br>", " ") == i18n.fill(
        labels["attention.unmasked.title"], layer="3", head="0")
    body = page_text(at)
    assert i18n.fill(labels["attention.step.proj_module"], module="self_attn.o_proj", layer="3") in body
    bertviz_head = prefix(i18n.fill(labels["attention.bertviz.head_cap"], layer="3"))  # up to the token count
    assert any(c.value.startswith(bertviz_head) for c in at.caption) == bertviz_open
    assert len(at.get("iframe")) == int(bertviz_open)
    # Flash attention's first tile, of layer 3's head 0 (oracle: the tiled run on the capture made here).
    block = view.default_block(example.n_tokens)
    run = att.flash_attention(example.query(3, 0), example.key(3, 0), example.value(3, 0), block, block,
                              scale=att.module_scale(real, 3), window=example.layer_window(3))
    first = run.steps[0]
    rows = [f"{first.q0 + i}·{example.tokens[first.q0 + i]}" for i in range(first.q1 - first.q0)]
    (table,) = [df.value for df in at.dataframe if list(df.value.index) == rows]
    assert list(table[labels["attention.flash.max"]]) == [f"{x:.3f}" for x in first.row_max]


def test_a_new_head_redraws_the_head_sections_and_leaves_bertviz_as_it_was(real):
    """bertviz draws every head of the layer: after a head move its page is the very same document
    (the browser keeps it: tests/e2e/test_attention.py), and the four sections that draw one head
    draw the new head."""
    at = start("en", PAGE)
    labels = i18n.ui("en")
    at.toggle(key="attention.bertviz_on").set_value(True)
    at.run()
    layer = chosen(at)[0]
    (before,) = at.get("iframe")
    choose(at, head=2)
    assert not at.exception, at.exception
    assert title(at) == i18n.fill(labels["attention.heatmap_title"], layer=str(layer), head="2")
    assert chart(at, "attention.unmasked_chart")["layout"]["title"]["text"].replace("<br>", " ") == i18n.fill(
        labels["attention.unmasked.title"], layer=str(layer), head="2")
    assert chart(at, "attention.flash_chart") is not None
    (after,) = at.get("iframe")
    assert after.proto.srcdoc == before.proto.srcdoc and "bertviz" in after.proto.srcdoc
