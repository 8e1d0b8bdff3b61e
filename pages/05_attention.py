"""Lesson 5: attention. Every head of the live model, the formula with its real numbers, GQA,
the mask, and flash attention. Layer, head and block widgets only read the cached capture."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import streamlit as st

from lib.lessons.bertviz_view import SIZE_TOKENS, weights_bytes
from lib.model.capture import DEFAULT_MAX_TOKENS
from ui.learner import quiz_widget
from ui.lessons.attention import compute
from ui.lessons.attention import sections as view
from ui.lessons.differs import sections as differs
from ui.shell import core, lesson, nav
from ui.shell.core import num, t
from ui.views import browser, follow

text = lesson.sections("attention")
lm = core.model()
info = lm.info
name = core.short_name(info.name)  # the full name (with the weights' format) is in lesson 1

st.title(t("lesson.attention.title"))
lesson.show(text, "intro")
lesson.show(text, "formula_overview")

st.header(t("attention.live.header"))
lesson.show(text, "heatmap", model_name=name, n_layers=num(info.n_layers), n_heads=num(info.n_heads))
cap = core.capture()
mark = follow.inputs_mark(core.model_name(), cap.text) if cap is not None else ""  # sections below: when reached
model_mark = follow.inputs_mark(core.model_name())  # sections below that read only the model


@st.fragment(key=view.LIVE_SECTION)
def live() -> None:
    """The chosen head, drawn in the browser (static/views/attention.js): a head move runs nothing
    here; a layer the browser has not been sent reruns this section and the sections below that draw
    the layer (the formula, the mask, flash attention, bertviz when open), which follow the head in
    the browser; a layer already sent while bertviz draws another reruns bertviz alone."""
    layer, head = view.chosen_head(cap.n_layers, cap.n_heads)
    view.heatmap_cut(cap)
    browser.view("attention", view.LAYER_KEY, view.live_data(cap, layer, head), on_layer_change=view.take_layer,
                 on_bertviz_change=view.take_bertviz_layer)
    lesson.show(text, "patterns")


@st.fragment(key="attention.overview_section")
def overview() -> None:
    """Every head at once: the same for any selected head, so no slider reruns it (redrawing its
    thousands of cells took a fifth of a head move in the browser); a click opens a head above."""
    st.subheader(t("attention.overview.header"))
    lesson.show(text, "overview", n_layers=num(cap.n_layers), n_heads=num(cap.n_heads),
                n_all=num(cap.n_layers * cap.n_heads))
    with follow.when_reached("attention.overview_box", mark) as now:
        if now:
            view.overview(cap, compute.patterns(core.model_name(), cap.text, DEFAULT_MAX_TOKENS))


@st.fragment(key=view.BERTVIZ_SECTION)
def bertviz() -> None:
    st.subheader(t("attention.bertviz.header"))
    lesson.show(text, "bertviz", n_layers=num(info.n_layers), n_heads=num(info.n_heads), tokens=num(SIZE_TOKENS),
                megabytes=num(weights_bytes(info.n_layers, info.n_heads, SIZE_TOKENS) / 1e6, 0))
    # On demand: its page reloads at each layer move (two thirds of a layer move in the browser). The
    # switch carries the layer the browser shows; a later layer move reruns this section
    # (the live view's triggers: view.take_layer, view.take_bertviz_layer).
    if view.bertviz_switch():
        view.bertviz_section(core.model_name(), cap, view.selected(lm, cap)[0])


# The formula, the unmasked heatmap and flash attention draw the chosen head in the browser
# (static/views/attention_steps.js): every head of the layer is sent once, a head move, a tab, a tile
# size or a tile step runs nothing here; the live view's layer trigger reruns these three with it.
@st.fragment(key="attention.formula")
def formula() -> None:
    layer, head, _ = view.selected(lm, cap)
    browser.view(view.STEP_VIEW, "attention.formula_view", view.steps_data(cap, layer, head, "formula"))


@st.fragment(key="attention.mask")
def mask() -> None:
    layer, head, _ = view.selected(lm, cap)
    browser.view(view.STEP_VIEW, "attention.mask_view", view.steps_data(cap, layer, head, "mask"))


@st.fragment(key="attention.flash")
def flash() -> None:
    layer, head, _ = view.selected(lm, cap)
    browser.view(view.STEP_VIEW, "attention.flash_view", view.steps_data(cap, layer, head, "flash"))


if cap is not None:
    live()
    overview()
    bertviz()

st.header(t("attention.formula.header"))
lesson.show(text, "formula", d_head=num(info.d_head), root=num(info.d_head ** 0.5, 2))
if cap is not None:
    formula()
    lesson.show(text, "concat")  # prose the same for every head: outside the section a head move reruns

st.header(t("attention.scaling.header"))
lesson.show(text, "why_scale")
view.scaling_section(info.d_head, model_mark)

st.header(t("attention.gqa.header"))
lesson.show(text, "gqa", n_heads=num(info.n_heads), n_kv_heads=num(info.n_kv_heads), group=num(info.group_size))
st.fragment(key="attention.gqa_section")(view.gqa_section)(info, cap, lm.config, name, mark)
lesson.show(text, "gqa_table")

st.header(t("attention.mask.header"))
lesson.show(text, "mask")
view.mask_kinds()
if cap is not None:
    mask()
    lesson.show(text, "unmasked")

st.header(t("attention.cost.header"))
lesson.show(text, "cost")
st.fragment(key="attention.cost_section")(view.cost_section)(info, cap.n_tokens if cap is not None else None, name, mark)

st.header(t("attention.flash.header"))
lesson.show(text, "flash")
if cap is not None:
    flash()

differs.attention_section(lm, cap)  # Gemma: MQA and the sliding window (nothing on SmolLM2)

quiz_widget.render_quiz("attention")
lesson.show(text, "next")
nav.footer("attention")
