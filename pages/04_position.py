"""Lesson 4: position. Why order must be added, RoPE's rotations, the live model's rotated q and k."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import numpy as np
import streamlit as st

from lib.lessons import rope
from ui.learner import quiz_widget
from ui.lessons.differs import sections as differs
from ui.lessons.position import figures
from ui.lessons.position import sections as view
from ui.shell import core, lesson, nav
from ui.shell.core import num, t
from ui.views import browser
from ui.views.live_chart import live_chart

text = lesson.sections("position")
lm = core.model()
info = lm.info
base, d_head, context = view.base_of(info), info.d_head, view.context_of(info)
n_pairs = d_head // 2
theta = view.model_frequencies(lm)  # the θ_i of the live model (equal to base^(−2i/Dh) unless scaled)
periods = 2 * np.pi / theta
local_base = info.rope_theta_local or base  # the windowed layers' own base, when the model has two
local_periods = 2 * np.pi / rope.frequencies(d_head, local_base) if info.rope_theta_local else periods
n_local = sum(x == "sliding_attention" for x in info.layer_types)

st.title(t("lesson.position.title"))
lesson.show(text, "intro")

st.header(t("position.shuffle.header"))
lesson.show(text, "shuffle")
left, right = st.columns([2, 3])
st.session_state.setdefault("position.sentence", t("position.sentence_default"))
sentence = left.text_input(t("position.sentence"), key="position.sentence", max_chars=400)
seed = left.number_input(t("position.seed"), min_value=0, max_value=1_000_000, step=1, key="position.seed")
tokens, demo, total = view.shuffle_data(core.model_name(), sentence, int(seed), base) if sentence.strip() else ([], None, 0)
if not tokens:
    right.info(t("position.sentence_empty"))
elif len(tokens) < 2:
    right.info(t("position.one_token"))
else:
    if total > len(tokens):
        left.caption(t("position.sentence_cut", n=num(len(tokens)), total=num(total)))
    left.markdown(t("position.original", tokens=" · ".join(f"`{x}`" for x in tokens)))
    left.markdown(t("position.shuffled", tokens=" · ".join(f"`{tokens[i]}`" for i in demo.order)))
    live_chart(figures.shuffle_figure(tokens, demo, view.labels("position.shuffle", "plain", "rope", "title", "y")),
               key="position.shuffle_chart", where=right)
    left.success(t("position.shuffle_result", plain=f"{100 * demo.change_plain.max():.0e}",
                   rope=num(100 * demo.change_rope.mean(), 1)))
lesson.show(text, "mask")

st.header(t("position.rotation.header"))
lesson.show(text, "rotation", d_head=num(d_head), n_pairs=num(n_pairs), last=num(n_pairs - 1), base=num(base),
            fast=num(periods[0], 2), slow=num(round(periods[-1])), context=num(context),
            share=num(100 * context / periods[-1], 1), glob=num(base), local=num(local_base), n_local=num(n_local),
            n_glob=num(info.n_layers - n_local), slow_local=num(round(local_periods[-1])),
            share_local=num(100 * context / local_periods[-1], 1))
if not info.rope_theta:
    st.info(t("position.no_rope_base", base=num(base)))
# The position m and the pair, the angle heatmap that follows m: answered in the browser (ui/views/browser.py).
sent = browser.data_key(core.model_name(), core.lang(), view.settings()["from_link"])
browser.view("position", "position.view", view.rotation_data(theta, context, sent, core.lang()))
lesson.show(text, "angles", n_pairs=num(n_pairs))
browser.view("position", "position.angles", view.angles_data(theta, context, sent, core.lang()))

st.header(t("position.relative.header"))
lesson.show(text, "relative")
browser.view("position", "position.relative", view.relative_data(d_head, base, context, sent, core.lang()))
lesson.show(text, "decay")

st.header(t("position.live.header"))
if info.positional == "rope":
    lesson.show(text, "live", model_name=core.display_name(info.name), base=num(base), d_head=num(d_head),
                local=num(info.rope_theta_local or base), glob=num(base), n_local=num(n_local),
                n_glob=num(info.n_layers - n_local))
    cap = core.capture()

    @st.fragment
    def live() -> None:
        """The layer needs the server (its vectors are sent one layer at a time); the head, the pair
        and queries or keys are answered in the browser."""
        layer = view.slider(t("position.layer"), "position.layer", info.n_layers - 1, 2, "position.clamped_layer",
                            limit=num(info.n_layers))
        browser.view("position", "position.live", view.live_data(
            cap, layer, view.layer_frequencies(lm, layer),
            browser.data_key(core.model_name(), core.text(), core.lang(), layer, view.settings()["from_link"]), core.lang()))
        lesson.show(text, "live_read")

    if cap is not None:
        live()
else:
    lesson.show(text, "learned", context=num(context), d_model=num(info.d_model))
    table = core.learned_positions(core.model_name())
    heat, sim = figures.learned_figures(table, view.labels("position.learned", "table_title", "sim_title", "dims",
                                                           "positions", "hover_table", "hover_sim"))
    c1, c2 = st.columns(2)
    live_chart(heat, key="position.learned_chart", where=c1)
    live_chart(sim, key="position.similarity_chart", where=c2)
    lesson.show(text, "learned_read", context=num(context))

st.header(t("position.conventions.header"))
lesson.show(text, "conventions")
st.dataframe(view.pairing_table(d_head), hide_index=True, key="position.pairing")
lesson.show(text, "generalize")

differs.position_section(lm, core.capture() if lm.info.rope_theta_local else None)  # Gemma: two bases
quiz_widget.render_quiz("position")
lesson.show(text, "next")
nav.footer("position")
