"""Lesson 4: position. Why order must be added, RoPE's rotations, the live model's rotated q and k."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import numpy as np
import streamlit as st

from lib import rope
from ui import core, differs_view, lesson, nav, quiz_widget
from ui import position_view as view
from ui.core import num, t
from ui.live_chart import live_chart

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
    live_chart(view.shuffle_figure(tokens, demo, view.labels("position.shuffle", "plain", "rope", "title", "y")),
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
view.rotation_section(theta, context, text)

st.header(t("position.relative.header"))
lesson.show(text, "relative")
c1, c2, c3 = st.columns(3)
with c1:
    n_q = view.number(t("position.n"), "position.n", context - 1, 7, "position.clamped_position", limit=num(context))
with c2:
    m_k = view.number(t("position.k"), "position.k", context - 1, 3, "position.clamped_position", limit=num(context))
with c3:
    shift = view.number(t("position.shift"), "position.shift", context - 1 - max(n_q, m_k), 100, "position.clamped_shift",
                        limit=num(context))
q, k = (rope.seeded_vector(d_head, s) for s in view.VECTOR_SEEDS)
before_shift = rope.scores(q[None], k[None], [n_q], [m_k], base)[0, 0]
after_shift = rope.scores(q[None], k[None], [n_q + shift], [m_k + shift], base)[0, 0]
c1, c2, c3 = st.columns(3)
c1.metric(t("position.score_at", n=num(n_q), m=num(m_k)), num(before_shift, 4))
c2.metric(t("position.score_at", n=num(n_q + shift), m=num(m_k + shift)), num(after_shift, 4))
c3.metric(t("position.score_diff"), f"{abs(after_shift - before_shift):.1e}")
distances = np.arange(min(context, view.DISTANCE_MAX))
curves = {t("position.dist.same"): rope.score_vs_distance(q, q, distances, base),
          t("position.dist.different"): rope.score_vs_distance(q, k, distances, base)}
mark = n_q - m_k if 0 <= n_q - m_k < len(distances) else None
live_chart(view.distance_figure(distances, curves, mark, view.labels("position.dist", "title", "x", "y")),
           key="position.distance_chart")
lesson.show(text, "decay")

st.header(t("position.live.header"))
if info.positional == "rope":
    lesson.show(text, "live", model_name=core.display_name(info.name), base=num(base), d_head=num(d_head),
                local=num(info.rope_theta_local or base), glob=num(base), n_local=num(n_local),
                n_glob=num(info.n_layers - n_local))
    cap = core.capture()

    @st.fragment
    def live() -> None:
        c1, c2, c3, c4 = st.columns(4)
        with c1:
            layer = view.slider(t("position.layer"), "position.layer", info.n_layers - 1, 2, "position.clamped_layer",
                                limit=num(info.n_layers))
        with c2:
            head = view.slider(t("position.head"), "position.head", info.n_heads - 1, 0, "position.clamped_head",
                               limit=num(info.n_heads))
        with c3:
            live_pair = view.slider(t("position.live_pair"), "position.live_pair", n_pairs - 1, 0,
                                    "position.clamped_pair", limit=num(n_pairs))
        names = {x: t(f"position.which.{x}") for x in ("q", "k")}  # a plain dict: AppTest formats outside the run
        which = c4.radio(t("position.which"), list(names), format_func=names.get, key="position.which", horizontal=True)
        kv = cap.kv_head(head)
        before = cap.q_pre[layer, head] if which == "q" else cap.k_pre[layer, kv]
        after = cap.query(layer, head) if which == "q" else cap.key(layer, head)
        vector = names[which]
        live_chart(view.pair_plane_figure(rope.pair_points(before, live_pair), rope.pair_points(after, live_pair),
                                               cap.tokens, view.labels("position.plane", "title", "before", "after", "x",
                                                                       "y", "position", vector=vector, pair=num(live_pair),
                                                                       i=live_pair, j=live_pair + n_pairs)),
                        key="position.plane_chart")
        live_chart(view.before_after_heatmaps(before, after, cap.tokens, view.labels(
            "position.heat", "title", "before", "after", "change", "x", "hover", vector=vector, layer=num(layer), head=num(head))),
            key="position.heat_chart")
        dist, with_rope = rope.score_by_distance(cap.query(layer, head), cap.key(layer, head))
        _, without = rope.score_by_distance(cap.q_pre[layer, head], cap.k_pre[layer, kv])
        live_chart(view.distance_figure(dist, {t("position.live.with"): with_rope, t("position.live.without"): without},
                                             None, view.labels("position.live", "title", "x", "y")),
                        key="position.live_distance_chart")
        lesson.show(text, "live_read")

    if cap is not None:
        live()
else:
    lesson.show(text, "learned", context=num(context), d_model=num(info.d_model))
    table = view.learned_positions(core.model_name())
    heat, sim = view.learned_figures(table, view.labels("position.learned", "table_title", "sim_title", "dims",
                                                        "positions", "hover_table", "hover_sim"))
    c1, c2 = st.columns(2)
    live_chart(heat, key="position.learned_chart", where=c1)
    live_chart(sim, key="position.similarity_chart", where=c2)
    lesson.show(text, "learned_read", context=num(context))

st.header(t("position.conventions.header"))
lesson.show(text, "conventions")
st.dataframe(view.pairing_table(d_head), hide_index=True, key="position.pairing")
lesson.show(text, "generalize")

differs_view.position_section(lm, core.capture() if lm.info.rope_theta_local else None)  # Gemma: two bases
quiz_widget.render_quiz("position")
lesson.show(text, "next")
nav.footer("position")
