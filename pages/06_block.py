"""Lesson 6: the block — pre-norm RMSNorm, the residual stream as a blackboard, SwiGLU, the logit lens."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import streamlit as st

from lib.lessons import block as blk
from lib.model.capture import DEFAULT_MAX_TOKENS
from ui.learner import quiz_widget
from ui.lessons.block import compute, lens_service
from ui.lessons.block import sections as view
from ui.lessons.differs import sections as differs
from ui.shell import core, lesson, nav
from ui.shell.core import num, t
from ui.views import follow
from ui.views.live_chart import live_chart

text = lesson.sections("block")
lm = core.model()
info = lm.info
name, words, max_tokens = core.model_name(), core.text(), DEFAULT_MAX_TOKENS
mark = follow.inputs_mark(name, words)  # the sections below the first screen compute when reached
arch = {"norm": t(f"arch.{info.norm}"), "act": t(f"arch.{info.activation}"), "pos": t(f"arch.{info.positional}")}

st.title(t("lesson.block.title"))
lesson.show(text, "intro")

st.header(t("block.order.header"))
lesson.show(text, "order", model_name=core.display_name(info.name), n_layers=num(info.n_layers), **arch)
cap = core.capture(max_tokens)
lens_service.start()  # the logit lens service (lib/serving/lens_service.py): its threads and process, once per server
if cap is not None:
    view.render_diagram(lm, cap.n_tokens)
    if core.deferring():  # the lens's section waits to be reached: its lens is worked out meanwhile
        lens_service.submit(name, words, max_tokens)
lesson.show(text, "residual_idea")
attn_now = (t("block.history.gqa", h=num(info.n_heads), kv=num(info.n_kv_heads)) if info.group_size > 1
            else t("block.history.mha", h=num(info.n_heads)))
lesson.show(text, "history", attn_now=attn_now, norm_when=t("block.history.norm_when", norm=arch["norm"]), **arch)

st.header(t("block.norm.header"))
lesson.show(text, "norm", d_model=num(info.d_model), sqrt_d=num(info.d_model ** 0.5, 2))
if cap is not None:
    view.render_norm(lm, cap, name)
lesson.show(text, "prenorm")

st.header(t("block.resid.header"))
lesson.show(text, "blackboard")


@st.fragment(key="block.resid_section")
def residual() -> None:
    with follow.when_reached("block.resid_box", mark) as now:
        if now:
            view.render_residual(lm, cap, compute.get_contributions(name, words, max_tokens), name)


@st.fragment(key="block.collapse_section")
def collapse() -> None:
    with follow.when_reached("block.collapse_box", mark) as now:
        if now:
            layer = min(info.n_layers // 2, info.n_layers - 1)
            col = compute.get_collapse(name, words, max_tokens, layer)
            lesson.show(text, "collapse_live", layer=num(layer), d_model=num(info.d_model), d_mlp=num(info.d_mlp),
                        n=num(cap.n_tokens), max_diff=view.sci(col.max_diff), act_diff=view.sci(col.act_diff),
                        scale=view.sci(col.scale), params_two=num(col.params_two), params_one=num(col.params_one))


@st.fragment(key="block.mlp_section")
def mlp() -> None:
    with follow.when_reached("block.mlp_box", mark) as now:
        if now:
            view.render_mlp(lm, cap, name, words, max_tokens)


@st.fragment(key="block.lens_section")
def lens() -> None:
    with follow.when_reached("block.lens_box", mark) as now:
        if now:  # submitted as the page opened: kept by now, as a rule, or worked out first
            view.render_lens(lm, cap, name, words, max_tokens)


if cap is not None:
    residual()
lesson.show(text, "blackboard_read")

st.header(t("block.nonlin.header"))
lesson.show(text, "nonlinearity")
if cap is not None:
    collapse()
lesson.show(text, "activations")
own = compute.own_activation(lm)
live_chart(compute.curves_spec(own, core.lang()), key="block.curves")

st.header(t("block.mlp.header"))
lesson.show(text, "swiglu" if compute.is_gated(lm) else "gelu_mlp", act=t(f"block.act.{own}"))
if cap is not None:
    mlp()
lesson.show(text, "neurons")

st.header(t("block.dff.header"))
table, dff = compute.dff_table(lm)
live = dff["live"]
lesson.show(text, "dff", d=num(live.d), eight=num(live.eight_thirds, 2), actual=num(live.actual))
st.dataframe(table, hide_index=True, key="block.dff_table")
st.info(t(f"block.dff.verdict.{blk.dff_verdict(live, compute.is_gated(lm))}", d=num(live.d), eight=num(live.eight_thirds, 2),
          actual=num(live.actual), rounded=num(live.rounded), classic=num(live.classic)))
lesson.show(text, "dff_seed")

st.header(t("block.lens.header"))
lesson.show(text, "lens", n_layers=num(info.n_layers), vocab=num(info.vocab_size))
if cap is not None:
    lens()
lesson.show(text, "lens_read")

differs.block_section(lm)  # Gemma: sandwich norms, q/k norms, GeGLU (nothing on SmolLM2)

quiz_widget.render_quiz("block")
lesson.show(text, "next")
nav.footer("block")
