"""Widgets, cached data, tables and the browser view's data for the position lesson (RoPE and
learned positions); the figures the server draws are in ui.lessons.position.figures.

The rotation step m and its pair, the positions n and m and their shift, the live head, its pair
and the vectors shown are answered in the browser (static/views/position.js): the server sends
each part of the view its data once per (model, language; the text and the layer for the live
part), and the view draws every state from it. What needs the model stays here: the shuffled
sentence and its seed (the model's embedding rows), the layer of the live capture (one layer's
vectors are sent at a time), GPT-2's learned table. The maths lives in lib.lessons.rope. The layer slider
clamps a value the current model lacks, with a notice; the view clamps its own settings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
import torch

from lib.lessons import rope
from lib.model.capture import Capture
from lib.model.models import ModelInfo
from lib.model.tokens import readable_tokens
from lib.serving.payload import pack_u16
from ui.lessons.position.figures import token_labels
from ui.shell.cache import derived, get_model
from ui.shell.core import num, t
from ui.views.export import modebar_config
from ui.views.figures import PALETTE, colorscale, localized, subplot_layout
from ui.views.live_chart import TEMPLATE

TRAIL = 40  # positions drawn behind the current one on the pair's circle
WINDOW = 256  # positions in the angle heatmap (no striding: it would alias the fast pairs)
DISTANCE_MAX = 2048  # distances in the score-vs-distance plot
LIVE_MAX = 256  # tokens of the live layer sent to the view (a heatmap row each: more would not be seen)
SHUFFLE_MAX_TOKENS = 24
VECTOR_SEEDS = (11, 12)  # the fixed q and k of the relative-distance section
FALLBACK_CONTEXT = 2048  # a model whose config names no context length


def base_of(info: ModelInfo) -> float:
    """The model's RoPE base, or the original paper's 10,000 for a model without RoPE."""
    return float(info.rope_theta) if info.rope_theta else rope.DEFAULT_BASE


def model_frequencies(lm) -> np.ndarray:
    """[Dh/2] the θ_i the model really uses: its rotary module's inv_freq (scaled variants included),
    else the textbook base^(−2i/Dh) with `base_of`."""
    rotary = lm.adapter.rotary(lm.model)
    inv = getattr(rotary, "inv_freq", None) if rotary is not None else None
    if inv is None:
        return rope.frequencies(lm.info.d_head, base_of(lm.info))
    return inv.detach().double().numpy().copy()


def layer_frequencies(lm, layer: int) -> np.ndarray:
    """[Dh/2] the θ_i that rotate layer `layer`: Gemma 3's windowed layers have a base of their own
    (its rotary module keeps one inv_freq per layer type); every other layer uses `model_frequencies`."""
    info = lm.info
    kind = info.layer_types[layer] if layer < len(info.layer_types) else ""
    rotary = lm.adapter.rotary(lm.model)
    inv = getattr(rotary, f"{kind}_inv_freq", None) if rotary is not None and kind else None
    if inv is not None:
        return inv.detach().double().numpy().copy()
    if kind == "sliding_attention" and info.rope_theta_local:
        return rope.frequencies(info.d_head, float(info.rope_theta_local))
    return model_frequencies(lm)


def context_of(info: ModelInfo) -> int:
    return int(info.context_length or FALLBACK_CONTEXT)


# ---------------------------------------------------------------- clamped widgets

def _clamp_state(key: str, lo: int, hi: int, default: int) -> int | None:
    """Move st.session_state[key] into [lo, hi] before its widget exists; return what was asked if moved."""
    raw = st.session_state.get(key, default)
    try:
        asked = int(raw)
    except (TypeError, ValueError):
        asked = default
    value = min(max(asked, lo), hi)
    st.session_state[key] = value
    return asked if value != asked else None


def slider(label: str, key: str, hi: int, default: int, notice: str, **values) -> int:
    """An integer slider 0..hi whose stale or impossible value is clamped, with a warning."""
    asked = _clamp_state(key, 0, hi, min(default, hi))
    if asked is not None:
        st.warning(t(notice, asked=num(asked), value=num(st.session_state[key]), **values))
    if hi <= 0:
        return 0
    return st.slider(label, 0, hi, key=key)


# ---------------------------------------------------------------- cached data

@derived
def shuffle_data(model_name: str, sentence: str, seed: int, base: float) -> tuple[list[str], rope.ShuffleDemo, int]:
    """(tokens, demo, total tokens) of the shuffled-sentence demonstration on the model's embeddings."""
    lm = get_model(model_name)
    ids_all = list(lm.tokenizer(sentence)["input_ids"])
    ids = ids_all[:SHUFFLE_MAX_TOKENS]
    with torch.inference_mode():  # reading rows of the table: no forward pass, no hooks
        x = lm.adapter.embed(lm.model).weight[ids].float().numpy().copy()  # [T, D]
    return readable_tokens(lm.tokenizer, ids), rope.shuffle_demo(x, lm.info.d_head, seed, base), len(ids_all)


# ---------------------------------------------------------------- labels and tables

def labels(prefix: str, *names: str, **values) -> dict[str, str]:
    """{name: t(f"{prefix}.{name}", **values)} for the figure builders."""
    return {n: t(f"{prefix}.{n}", **values) for n in names}


def pairing_table(d_head: int) -> pd.DataFrame:
    """Which two dimensions form pair i in each convention (first pairs and the last)."""
    half, inter = d_head // 2, rope.half_to_interleaved(d_head)
    shown = sorted({0, 1, 2, half - 1} & set(range(half)))
    return pd.DataFrame({
        t("position.pairing.pair"): [num(i) for i in shown],
        t("position.pairing.half"): [f"({num(i)}, {num(i + half)})" for i in shown],
        t("position.pairing.interleaved"): [f"({num(2 * i)}, {num(2 * i + 1)})" for i in shown],
        t("position.pairing.perm"): [f"{num(int(inter[2 * i]))} → {num(2 * i)}, {num(int(inter[2 * i + 1]))} → {num(2 * i + 1)}"
                                     for i in shown],
    })


# ---------------------------------------------------------------- the browser view
# static/views/position.js, four parts on the page: "rotation" (m and the pair), "angles" (follows
# m through the page store), "relative" (n, m, the shift) and "live" (head, pair, queries or keys of
# one layer). Each part gets every setting the view holds, so a share link's values reach them all.

SETTINGS = ("m", "pair", "n", "k", "shift", "head", "live_pair", "which")
DEFAULTS = {"m": 5, "pair": 0, "n": 7, "k": 3, "shift": 100, "head": 0, "live_pair": 0, "which": "q"}
STORE = "position.settings"  # the page store's object the view keeps them in (ui/learner/share.py IN_BROWSER)
LINK_KEY = "position.link_settings"  # a share link's token: its values reach the view once


def settings() -> dict:
    """What the server knows of the view's settings: a share link's values, else the defaults
    (the view keeps the learner's own in the browser, and brings any of them into range)."""
    s = st.session_state
    return dict({n: s.get(f"position.{n}", DEFAULTS[n]) for n in SETTINGS}, from_link=s.get(LINK_KEY))


def _labels(names: dict[str, str]) -> dict[str, str]:
    return {k: t(v) for k, v in dict(names, table="chart.as_table", unavailable="views.unavailable").items()}


def _layout(layout: dict) -> dict:
    """A figure's fixed layout, laid out by the course's rule (ui.views.figures.laid_out) in the page's
    language; the view fills the {placeholders} left in its titles."""
    return localized({"layout": dict(layout, template=TEMPLATE)}, t("plot.separators"))["layout"]


def _part(part: str, key: str, lang: str, labels: dict[str, str], **data) -> dict:
    return dict(data, key=key, lang=lang, part=part, labels=_labels(labels), settings=settings(),
                palette=list(PALETTE), config=modebar_config(f"position.{part}_chart"))


def rotation_data(theta: np.ndarray, context: int, key: str, lang: str) -> dict:
    """The rotation part: the model's θ_i (lib, from its rotary module), the context, the chart's layout."""
    layout = subplot_layout((t("position.rot.left"), t("position.rot.right")), rows=1, cols=2,
                            specs=[[{"type": "polar"}, {"type": "polar"}]])
    n = len(theta)
    layout.update(title={"text": t("position.rot.title")}, height=430, margin=dict(l=30, r=30, t=90, b=20),
                  showlegend=True, legend=dict(orientation="h", y=-0.08),
                  polar=dict(layout.get("polar", {}), radialaxis=dict(range=[0, 1.15], showticklabels=False,
                                                                      showgrid=False),
                             angularaxis=dict(showticklabels=False)),
                  polar2=dict(layout.get("polar2", {}), hole=0.25,
                              radialaxis=dict(range=[0, n + 1], title=dict(text=t("position.rot.radius"))),
                              angularaxis=dict(showticklabels=False)))
    for note in layout.get("annotations", []):  # subplot titles: lift them clear of the circles
        note["y"] = note.get("y", 1) + 0.06
    return _part("rotation", key, lang, {
        "position": "position.position", "pair": "position.pair", "clamped_position": "position.clamped_position",
        "clamped_pair": "position.clamped_pair", "trail": "position.rot.trail", "start": "position.rot.start",
        "now": "position.rot.now", "pairs": "position.rot.pairs", "hover_pos": "position.rot.hover_pos",
        "hover_pair": "position.rot.hover_pair", "col_pair": "position.table.pair",
        "col_theta": "position.table.theta", "col_angle": "position.table.angle",
        "col_turns": "position.table.turns", "col_period": "position.table.period"},
        theta=[float(x) for x in theta], context=int(context), trail=TRAIL, layout=_layout(layout),
        scales={"blues": colorscale("Blues"), "viridis": colorscale("Viridis")})


def angles_data(theta: np.ndarray, context: int, key: str, lang: str) -> dict:
    """The angle heatmap: it follows m (chosen in the rotation part) through the page store."""
    layout = dict(title={"text": t("position.angle.title")}, xaxis={"title": {"text": t("position.angle.x")}},
                  yaxis={"title": {"text": t("position.angle.y")}}, height=380, margin=dict(l=10, r=10, t=50, b=10))
    return _part("angles", key, lang, {
        "colorbar": "position.angle.colorbar", "hover": "position.angle.hover", "col_pair": "position.table.pair",
        "col_at": "position.table.angle_at"},
        theta=[float(x) for x in theta], context=int(context), window=WINDOW, layout=_layout(layout),
        scale=colorscale("Twilight"))


def relative_data(d_head: int, base: float, context: int, key: str, lang: str) -> dict:
    """The relative part: two fixed vectors (lib.lessons.rope.seeded_vector) and the base; the view rotates
    them (lib.lessons.rope.scores, score_vs_distance, held together by tests/js/position.test.js)."""
    q, k = (rope.seeded_vector(d_head, s) for s in VECTOR_SEEDS)
    layout = dict(title={"text": t("position.dist.title")}, xaxis={"title": {"text": t("position.dist.x")}},
                  yaxis={"title": {"text": t("position.dist.y")}}, height=340, margin=dict(l=10, r=10, t=50, b=10),
                  legend=dict(orientation="h", y=-0.25))
    return _part("relative", key, lang, {
        "n": "position.n", "k": "position.k", "shift": "position.shift", "score_at": "position.score_at",
        "score_diff": "position.score_diff", "same": "position.dist.same", "different": "position.dist.different",
        "clamped_position": "position.clamped_position", "clamped_shift": "position.clamped_shift",
        "col_distance": "position.table.distance"},
        q=q.tolist(), k=k.tolist(), rope_base=float(base), d_head=int(d_head), context=int(context),
        distances=int(min(context, DISTANCE_MAX)), layout=_layout(layout))


def live_data(cap: Capture, layer: int, theta: np.ndarray, key: str, lang: str) -> dict:
    """The live part for one layer: its queries and keys before RoPE (packed), the θ_i that rotate
    them (the view turns them: the same rotation as lib.lessons.rope.apply_rope), and each head's mean score
    by distance with and without RoPE (lib.lessons.rope.score_by_distance on the whole capture)."""
    n = min(cap.n_tokens, LIVE_MAX)
    names = token_labels(cap.tokens[:n])
    with_rope, without = [], []
    for h in range(cap.n_heads):
        with_rope.append(rope.score_by_distance(cap.query(layer, h), cap.key(layer, h))[1])
        without.append(rope.score_by_distance(cap.q_pre[layer, h], cap.k_pre[layer, cap.kv_head(h)])[1])
    # The y axis keeps a fixed margin, not plotly's automargin: the ranges follow the head and the
    # pair, and a tick label that grows wider would make plotly lay the chart out and draw it twice.
    plane = dict(title={"text": t("position.plane.title")}, height=440, margin=dict(l=80, r=10, t=50, b=10),
                 xaxis={"title": {"text": t("position.plane.x")}, "zeroline": True},
                 yaxis={"title": {"text": t("position.plane.y")}, "scaleanchor": "x", "zeroline": True,
                        "automargin": False},
                 legend=dict(orientation="h", y=-0.2))
    domains = ((0.0, 0.32), (0.34, 0.66), (0.68, 1.0))
    heat = dict(title={"text": t("position.heat.title")}, height=min(700, 160 + 14 * n),
                margin=dict(l=10, r=10, t=70, b=10), annotations=[])
    for col in (1, 2, 3):  # three panels side by side sharing the rows
        suffix = "" if col == 1 else str(col)
        heat[f"xaxis{suffix}"] = dict(anchor=f"y{suffix}", domain=list(domains[col - 1]),
                                      title=dict(text=t("position.heat.x")))
        heat[f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=[0.0, 1.0], autorange="reversed",
                                      showticklabels=col == 1 and n <= 60, **({} if col == 1 else {"matches": "y"}))
        heat["annotations"].append(dict(font=dict(size=16), showarrow=False, xanchor="center", xref="paper",
                                        x=sum(domains[col - 1]) / 2, y=1.0, yanchor="bottom", yref="paper",
                                        text=t(("position.heat.before", "position.heat.after",
                                                "position.heat.change")[col - 1])))
    dist = dict(title={"text": t("position.live.title")}, xaxis={"title": {"text": t("position.live.x")}},
                yaxis={"title": {"text": t("position.live.y")}}, height=340, margin=dict(l=10, r=10, t=50, b=10),
                legend=dict(orientation="h", y=-0.25))
    return _part("live", key, lang, {
        "head": "position.head", "live_pair": "position.live_pair", "which": "position.which",
        "which_q": "position.which.q", "which_k": "position.which.k", "clamped_head": "position.clamped_head",
        "clamped_pair": "position.clamped_pair", "before": "position.plane.before", "after": "position.plane.after",
        "position": "position.plane.position", "hover": "position.heat.hover", "with": "position.live.with",
        "without": "position.live.without", "col_token": "position.table.token",
        "col_before": "position.table.before", "col_after": "position.table.after",
        "col_norm_before": "position.table.norm_before", "col_norm_after": "position.table.norm_after",
        "col_change": "position.table.change", "col_distance": "position.table.distance",
        "shown": "position.live.shown", "heat_before": "position.heat.before", "heat_after": "position.heat.after",
        "heat_change": "position.heat.change"},
        layer=int(layer), n_heads=cap.n_heads, n_kv_heads=cap.n_kv_heads,
        kv_of_head=[cap.kv_head(h) for h in range(cap.n_heads)], d_head=int(cap.q_pre.shape[-1]), n_tokens=n,
        n_total=cap.n_tokens, tokens=names, theta=[float(x) for x in theta],
        q=pack_u16(cap.q_pre[layer, :, :n]), k=pack_u16(cap.k_pre[layer, :, :n]),
        with_rope=pack_u16(np.stack(with_rope)), without=pack_u16(np.stack(without)),
        layouts={"plane": _layout(plane), "heat": _layout(heat), "dist": _layout(dist)},
        scales={"viridis": colorscale("Viridis"), "rdbu": colorscale("RdBu")})
