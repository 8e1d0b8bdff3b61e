"""Lesson 8: the KV cache, memory and compute. A calculator right for GQA, MLA and sliding windows,
checked against the live model's real cache; prefill and decode timed; training and serving costs."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import streamlit as st

from lib.lessons import kvcache as K
from lib.lessons.reference import REFERENCE_MODELS
from lib.model import arithmetic as A
from ui.learner import quiz_widget
from ui.lessons.differs import sections as differs
from ui.lessons.kvcache import sections as view
from ui.shell import core, lesson, nav
from ui.shell.core import num, t
from ui.views import browser

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


# The calculator, the variants at its context, and training, serving and the experts far below
# are answered in the browser (static/views/kvcache.js): a move there costs the server nothing.
# A pasted config.json is new data: lib reads it and the view gets it as one more model.
where = st.container()
with st.expander(t("kvcache.custom.paste_header")):
    pasted = view.pasted_config()
key = browser.data_key(core.model_name(), core.lang(), None if pasted is None else browser.data_key(pasted[0]))
browser.view("kvcache", "kvcache.view", view.calc_data(lm.config, name, info.n_params, key, core.lang(), pasted),
           where=where)
st.header(t("kvcache.variants.header"))
lesson.show(text, "variants", window=num(K.LOCAL_WINDOW))
rest, live = lesson.live_split(text, "variants_after", "tokens")
browser.view("kvcache", "kvcache.variants_view", view.variants_data(key, core.lang(), live))
st.markdown(rest)

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



st.header(t("kvcache.train.header"))
rest, live = lesson.live_split(text, "training", "model")
st.markdown(rest)
browser.view("kvcache", "kvcache.train_view", view.cost_data("train", key, core.lang(), lm.config, name, info.n_params,
                                                           chosen=live))
st.header(t("kvcache.serve.header"))
lesson.show(text, "serving")
browser.view("kvcache", "kvcache.serve_view", view.cost_data("serve", key, core.lang(), lm.config, name, info.n_params))
lesson.show(text, "batching")
st.header(t("kvcache.moe.header"))
lesson.show(text, "moe")
browser.view("kvcache", "kvcache.moe_view", view.cost_data("moe", key, core.lang(), lm.config, name, info.n_params))

differs.kvcache_section(lm)  # Gemma: the hybrid local/global cache, measured

quiz_widget.render_quiz("kvcache")
lesson.show(text, "next")
nav.footer("kvcache")
