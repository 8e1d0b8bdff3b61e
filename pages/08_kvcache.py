"""Lesson 8: the KV cache, memory and compute. A calculator right for GQA, MLA and sliding windows,
checked against the live model's real cache; prefill and decode timed; training and serving costs."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import streamlit as st

from lib import arithmetic as A
from lib import kvcache as K
from lib.reference import REFERENCE_MODELS
from ui import core, differs_view, follow, lesson, nav, quiz_widget
from ui import kvcache_view as view
from ui.core import num, t

text = lesson.sections("kvcache")
lm = core.model()
info = lm.info
name = core.short_name(info.name)  # the full name (with the weights' format) is in lesson 1
base = REFERENCE_MODELS[view.BASE]
live_token = A.kv_cache_bytes(lm.config, 1, dtype_bytes=4)  # every layer's K and V for one token

st.title(t("lesson.kvcache.title"))
lesson.show(text, "intro")

st.header(t("kvcache.formula.header"))
lesson.show(text, "formula", base_kib=num(A.kv_bytes_per_token(base) / 1024))
lesson.show(text, "formula_live", model_name=name, n_layers=num(info.n_layers), n_kv_heads=num(info.n_kv_heads),
            d_head=num(info.d_head), live_token=num(live_token), live_kib=num(live_token / 1024, 1))
lesson.show(text, "formula_window", window=num(info.sliding_window or 0), grow=num(A.kv_bytes_per_token(lm.config, 4)),
            n_global=num(sum(k.kind == A.FULL for k in A.cache_layers(lm.config))))
lesson.show(text, "formula_gqa")

st.header(t("kvcache.calc.header"))
lesson.show(text, "calculator")


@st.fragment(key="kvcache.calc")
def calc() -> None:
    """The calculator and the variants at its context: its widgets rerun this section alone; the three
    sections far below that price its choice follow when the learner reaches them (ui/follow.py)."""
    choice = view.calculator(lm.config, name, info.n_params)
    st.session_state[view.CHOICE_KEY] = choice
    follow.publish({view.CHOICE_KEY: view.priced_mark(choice)}, key="kvcache.chosen")
    st.header(t("kvcache.variants.header"))
    lesson.show(text, "variants", window=num(K.LOCAL_WINDOW))
    rows = {v.kind: v for v in view.variants_section(choice.tokens, choice.cache_dtype, choice.card_gb)}
    lesson.show(text, "variants_after", tokens=num(choice.tokens), mha=view.size(rows["mha"].bytes),
                gqa=view.size(rows["gqa"].bytes), mla=view.size(rows["mla"].bytes),
                sliding=view.size(rows["sliding"].bytes), hybrid=view.size(rows["hybrid"].bytes), window=num(K.LOCAL_WINDOW))


calc()

st.header(t("kvcache.fact.header"))
lesson.show(text, "fact_check")
view.fact_check_section()

st.header(t("kvcache.measure.header"))
lesson.show(text, "measured", model_name=name, live_kib=num(live_token / 1024, 1))
view.measured_section(core.model_name(), lm, core.text())
lesson.show(text, "window_detail")

st.header(t("kvcache.time.header"))
lesson.show(text, "prefill_decode")
view.timing_section(core.model_name(), lm)
lesson.show(text, "bandwidth_bound")

st.header(t("kvcache.params.header"))
lesson.show(text, "params")
view.params_section(lm, name)



@st.fragment(key="kvcache.train")
def train() -> None:
    choice = view.current_choice()
    label, _, n_params = choice.priced()
    with follow.following(view.CHOICE_KEY, view.priced_mark(choice), key="kvcache.train_box"):
        st.header(t("kvcache.train.header"))
        lesson.show(text, "training", model=label)
        view.training_section(n_params, label)


@st.fragment(key="kvcache.serve")
def serve() -> None:
    choice = view.current_choice()
    _, cfg, n_params = choice.priced()
    with follow.following(view.CHOICE_KEY, view.priced_mark(choice), key="kvcache.serve_box"):
        st.header(t("kvcache.serve.header"))
        lesson.show(text, "serving")
        view.serving_section(cfg, n_params, choice.tokens, choice.cache_dtype, choice.weight_dtype)
        lesson.show(text, "batching")


@st.fragment(key="kvcache.moe")
def moe() -> None:
    choice = view.current_choice()
    label, _, n_params = choice.priced()
    with follow.following(view.CHOICE_KEY, view.priced_mark(choice), key="kvcache.moe_box"):
        st.header(t("kvcache.moe.header"))
        lesson.show(text, "moe")
        view.moe_table(n_params, label)


train()
serve()
moe()

differs_view.kvcache_section(lm)  # Gemma: the hybrid local/global cache, measured

quiz_widget.render_quiz("kvcache")
lesson.show(text, "next")
nav.footer("kvcache")
