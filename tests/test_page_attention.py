"""AppTest of the attention lesson: both languages, the live model, bad input, a GPT-2 family model.

Figures are read back from the page (the plotly JSON Streamlit sends, arrays in base64) and
compared with a capture computed here, so a test fails if the page draws the wrong numbers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from lib.course import i18n
from lib.course.quiz import load_bank
from lib.lessons import attention as att
from lib.lessons.bertviz_view import as_document, head_view_html
from lib.model.capture import run_capture
from lib.serving.payload import unpack_u16
from ui.lessons.attention import compute, figures
from ui.lessons.attention import sections as view
from tests.apptest import page_text, press, start, find_chart as chart, plotly_array, label_prefix as prefix, switch_model, chart_keys, view_data

PAGE = "pages/05_attention.py"
LONG_TEXT = "parola " * 7200  # the same text as tests/test_pages.py: one cached 512-token capture
XSS = "Il gatto <img src=x onerror=alert(1)> dorme"


def arr(value) -> np.ndarray:
    return plotly_array(value, object)


def heads(at) -> dict | None:
    """What the chosen layer's browser view was sent (static/views/attention.js draws the head)."""
    return view_data(at, "attention.view")


def steps(at, part: str) -> dict | None:
    """What one of the sections drawing the head in the browser was sent (static/views/attention_steps.js):
    "formula", "mask" or "flash", every head of the chosen layer."""
    return view_data(at, f"attention.{part}_view")


def check_steps_against_lib(at, real, cap, layer: int) -> None:
    """The three sections' data for `layer`, every head, against lib on a fresh capture: the
    formula's matrices (cut to what the tables show), the model's check, the heads put together,
    the weights without the mask, flash attention's scores and its tiled runs."""
    from lib.serving.payload import unpack_f32

    formula, masked, flash = (steps(at, p) for p in ("formula", "mask", "flash"))
    scale = att.module_scale(real, layer)
    assert formula["layer"] == masked["layer"] == flash["layer"] == layer
    n, d = formula["n"], formula["d"]
    assert (n, d) == (min(cap.n_tokens, compute.STEP_TOKENS), min(cap.q.shape[-1], compute.STEP_DIMS))
    nf = flash["n"]
    lower = np.tril_indices(nf)
    sent_scores = unpack_f32(flash["scores"]).reshape(cap.n_heads, -1)
    for h in range(cap.n_heads):
        s = att.capture_head_steps(cap, layer, h, scale=scale)
        for name in ("q", "k", "v", "out"):
            np.testing.assert_allclose(formula["heads"][h][name], getattr(s, name)[:n, :d], rtol=1e-6, atol=1e-9)
        for name in ("scores", "scaled", "weights"):
            np.testing.assert_allclose(formula["heads"][h][name], getattr(s, name)[:n, :n], rtol=1e-6, atol=1e-9)
        diff = float(re.search(r"([0-9.]+e[-+][0-9]+)", formula["heads"][h]["check"]).group(1))
        assert diff < 1e-4 and formula["heads"][h]["ok"]
        np.testing.assert_array_equal(np.array(formula["mask"]).reshape(n, n).astype(bool), s.mask[:n, :n])
        if masked["weights"] is not None:
            free = att.capture_head_steps(cap, layer, h, scale=scale, causal=False)
            m = masked["n"]
            got = unpack_u16(masked["weights"]).reshape(cap.n_heads, m, m)[h]
            np.testing.assert_allclose(got, free.weights[:m, :m], atol=masked["weights"]["scale"])
            future = (free.weights * ~att.causal_mask(cap.n_tokens)).sum(-1)[:-1].mean()
            assert masked["future"][h] == pytest.approx(future, rel=1e-9)
        # Flash attention: the view walks the tiles on these scores (tests/js pins the walk to lib);
        # each tile size's difference from the naive result is lib's own tiled run's.
        np.testing.assert_allclose(sent_scores[h], s.scaled[:nf, :nf][lower], rtol=1e-6, atol=1e-6)
        q, k, v = (x[:nf] for x in (cap.query(layer, h), cap.key(layer, h), cap.value(layer, h)))
        for option in flash["options"]:
            run = att.flash_attention(q, k, v, option["block"], option["block"], scale=scale, window=cap.layer_window(layer))
            assert float(option["diff"][h]) < 1e-9
            assert (option["naive"], option["tiled"]) == (run.naive_bytes, run.tiled_bytes)
    assert [o["block"] for o in flash["options"]] == figures.block_options(nf)
    out = att.layer_output(real, cap, layer)
    np.testing.assert_allclose(formula["share"], np.linalg.norm(out.per_head, axis=-1).mean(-1), rtol=1e-5)
    np.testing.assert_allclose(formula["o"], out.out[:n, :d], rtol=1e-5, atol=1e-6)


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
    """What the view's layer trigger and the head's followers set on the server (ui/lessons/attention/sections.py
    set_chosen), then a run: AppTest cannot move a browser view's slider (tests/e2e does)."""
    if layer is not None:
        at.session_state["attention.layer"] = layer
    if head is not None:
        at.session_state["attention.head"] = head
    at.run()


def open_bertviz(at, chosen: dict | None = None) -> None:
    """bertviz's switch pressed with the layer the browser carries (`chosen`: the page store's
    "attention.chosen"); tests/e2e/test_attention.py presses it in Chromium."""
    press(at, view, view._switch_bertviz, sent={view.BERTVIZ_SWITCH: {"click": {"attention.chosen": chosen}}})


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
    # The formula, the unmasked heatmap and flash attention are browser views sent every head of
    # the layer: the page's own check (its recomputation equals the model's weights to 1e-4), the
    # step matrices, the weights without the mask, the tiled runs, all against lib.
    check_steps_against_lib(at, real, cap, layer)
    formula = steps(at, "formula")
    assert formula["labels"]["tab_softmax"] == labels["attention.step.softmax"]
    assert formula["proj"] == i18n.fill(labels["attention.step.proj_module"], module="self_attn.o_proj", layer=str(layer))
    assert steps(at, "flash")["labels"]["diff"] == labels["attention.flash.diff"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[labels["attention.gqa.saving"]].startswith("3")
    # Every Streamlit chart; bertviz on demand (below).
    assert len(at.get("iframe")) == 0
    keys = set(chart_keys(at))
    assert {"attention.overview", "attention.gqa_chart", "attention.mask_chart", "attention.cost_chart",
            "attention.memory_chart"} <= keys
    assert any(s.value.startswith(prefix(labels["attention.gqa.shared"])) for s in at.success)


def test_the_head_sections_get_every_head_of_the_layer_once(real, example):
    """The formula's tabs, the unmasked heatmap and flash attention are drawn in the browser from
    every head of the layer: a head move changes nothing the server sends (the same data key, so
    nothing is sent again), a layer move sends that layer's."""
    at = start("en", PAGE, text=i18n.ui("en")["text.example"])
    layer, head = chosen(at)
    before = {p: steps(at, p)["key"] for p in ("formula", "mask", "flash")}
    assert all(len(steps(at, p)["heads" if p == "formula" else "future" if p == "mask" else "options"]) ==
               (real.info.n_heads if p != "flash" else len(figures.block_options(steps(at, "flash")["n"])))
               for p in ("formula", "mask", "flash"))
    choose(at, head=(head + 4) % real.info.n_heads)
    assert not at.exception, at.exception
    assert {p: steps(at, p)["key"] for p in ("formula", "mask", "flash")} == before
    choose(at, 3)
    assert all(steps(at, p)["key"] != before[p] for p in before)
    check_steps_against_lib(at, real, example, 3)


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
    # Thumbnail (layer 2, head 1) is that head's attention, first n tokens, future blank: one byte a
    # cell, 1..255 for 0..1, 0 for no cell (lib.lessons.attention.probabilities_as_bytes).
    block = z[(n + 1):(n + 1) + n, 2 * (n + 1):2 * (n + 1) + n]
    tri = np.tril(np.ones((n, n), dtype=bool))
    np.testing.assert_allclose((block[tri] - 1) / 254, example.attention(2, 1)[:n, :n][tri], atol=0.5 / 254 + 1e-6)
    assert np.all(block[~tri] == 0)


def test_view_widgets_never_run_the_model(monkeypatch):
    at = start("en", PAGE)
    import ui.shell.cache

    def no_model(*args, **kwargs):
        raise AssertionError("a view widget ran the model")

    monkeypatch.setattr(ui.shell.cache, "run_capture", no_model)
    choose(at, 3, 7)
    assert not at.exception, at.exception
    assert title(at) == i18n.fill(i18n.ui("en")["attention.heatmap_title"], layer="3", head="7")
    assert steps(at, "flash")["layer"] == steps(at, "formula")["layer"] == 3


def test_the_scaling_demo_sends_every_head_width_once(real):
    """The d_head slider is the browser's (static/views/attention_steps.js, "scaling"): every width
    offered, the model's among them, is sent with lib's seeded results."""
    at = start("en", PAGE)
    sent = view_data(at, "attention.scaling_view")
    d_head = real.info.d_head
    assert [o["dh"] for o in sent["options"]] == sorted(set(compute.D_HEADS) | {d_head})
    assert sent["default"] == sent["chosen"]["dh"] == d_head
    for o in sent["options"]:
        demo = att.scaling_demo(o["dh"], seed=0)
        assert (o["var_raw"], o["var_scaled"], o["max_raw"], o["max_scaled"]) == (
            demo.var_raw, demo.var_scaled, demo.max_raw, demo.max_scaled)
        assert o["weights_raw"] == demo.weights_raw.tolist() and o["weights_scaled"] == demo.weights_scaled.tolist()
        counts, edges = np.histogram(demo.scaled, bins=compute.SCALING_BINS)
        assert o["scaled"]["counts"] == counts.tolist() and o["scaled"]["lo"] == edges[0]
        assert sum(o["raw"]["counts"]) == len(demo.raw)
    # Without the scaling, Dh = 1024 saturates the softmax; with it, it does not.
    wide = next(o for o in sent["options"] if o["dh"] == 1024)
    assert wide["max_raw"] > 0.9 > wide["max_scaled"]


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
    for key in ("attention.cost_chart", "attention.gqa_chart"):
        assert chart(at, key) is not None, key
    assert view_data(at, "attention.scaling_view") is not None
    if expect == "text.empty":
        assert any(x.value == labels["text.empty"] for x in at.info)
        assert heads(at) is None and len(at.get("iframe")) == 0
        return
    # bertviz too, once opened (its head view; the model view is built when its tab opens).
    open_bertviz(at)
    assert not at.exception, at.exception
    assert heads(at) is not None and len(at.get("iframe")) == 1
    if expect == "attention.pattern.one_token":
        assert all(h["said"] == labels[expect] for h in heads(at)["heads"])
        masked = steps(at, "mask")  # the view says there is no future to hide
        assert masked["weights"] is None and masked["labels"]["one_token"] == labels["attention.unmasked.one_token"]
        assert [o["block"] for o in steps(at, "flash")["options"]] == figures.block_options(1)
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
    formula = steps(at, "formula")  # its output projection found (GPT-2's c_proj) and said; its check
    assert formula["proj"] == i18n.fill(labels["attention.step.proj_module"], module="attn.c_proj",
                                        layer=str(formula["layer"]))
    assert all(h["ok"] for h in formula["heads"])
    assert {m.label: m.value for m in at.metric}[labels["attention.gqa.saving"]].startswith("1")
    open_bertviz(at)
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
    assert not at.session_state[view.BERTVIZ_ON] if view.BERTVIZ_ON in at.session_state else True
    assert len(at.get("iframe")) == 0
    open_bertviz(at)
    assert not at.exception, at.exception
    (head_view,) = at.get("iframe")  # the head view alone, of the chosen layer (oracle: bertviz on a fresh capture)
    n = min(example.n_tokens, 48)  # BERTVIZ_HEAD_TOKENS
    expected = head_view_html(example.attn[:, :, :n, :n], list(example.tokens[:n]), layers=[layer])

    def same(html: str) -> str:  # bertviz names its element with a fresh random id each time
        return re.sub(r"bertviz-[0-9a-f]{32}", "bertviz-ID", html)

    # bertviz's page, as a whole document in the course's language and named (lib.lessons.bertviz_view.as_document)
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
        open_bertviz(at)
    assert chosen(at)[0] != 3
    choose(at, 3)
    assert not at.exception, at.exception
    assert title(at) == i18n.fill(labels["attention.heatmap_title"], layer="3", head="0")
    # The sections that draw the head in the browser get layer 3's heads (all of them: lib's).
    check_steps_against_lib(at, real, example, 3)
    assert steps(at, "formula")["proj"] == i18n.fill(labels["attention.step.proj_module"], module="self_attn.o_proj",
                                                     layer="3")
    bertviz_head = prefix(i18n.fill(labels["attention.bertviz.head_cap"], layer="3"))  # up to the token count
    assert any(c.value.startswith(bertviz_head) for c in at.caption) == bertviz_open
    assert len(at.get("iframe")) == int(bertviz_open)


def test_a_new_head_redraws_the_head_sections_and_leaves_bertviz_as_it_was(real):
    """bertviz draws every head of the layer: after a head move its page is the very same document
    (the browser keeps it: tests/e2e/test_attention.py); the live view draws the new head, and the
    three sections that draw it in the browser were sent the same data (they follow the head there)."""
    at = start("en", PAGE)
    labels = i18n.ui("en")
    open_bertviz(at)
    layer = chosen(at)[0]
    (before,) = at.get("iframe")
    sent = {p: steps(at, p) for p in ("formula", "mask", "flash")}
    choose(at, head=2)
    assert not at.exception, at.exception
    assert title(at) == i18n.fill(labels["attention.heatmap_title"], layer=str(layer), head="2")
    assert all(steps(at, p)["key"] == sent[p]["key"] and steps(at, p)["chosen"]["head"] == 2 for p in sent)
    assert steps(at, "mask")["labels"]["title"] == labels["attention.unmasked.title"]  # filled in the browser
    (after,) = at.get("iframe")
    assert after.proto.srcdoc == before.proto.srcdoc and "bertviz" in after.proto.srcdoc


def test_bertviz_opens_on_the_layer_the_browser_shows_and_closes(real):
    """A layer already sent is chosen in the browser without telling the server; bertviz's switch
    carries it, so bertviz opens on that layer, not the one the server drew last; pressed again, it
    closes."""
    at = start("en", PAGE)
    labels = i18n.ui("en")
    shown = (chosen(at)[0] + 2) % real.info.n_layers
    open_bertviz(at, chosen={"layer": shown, "head": 1})
    assert not at.exception, at.exception
    assert at.session_state[view.BERTVIZ_ON] is True and chosen(at) == (shown, 1)
    assert any(c.value.startswith(prefix(i18n.fill(labels["attention.bertviz.head_cap"], layer=str(shown))))
               for c in at.caption)
    assert len(at.get("iframe")) == 1
    open_bertviz(at, chosen={"layer": shown, "head": 1})
    assert at.session_state[view.BERTVIZ_ON] is False and len(at.get("iframe")) == 0
