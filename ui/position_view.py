"""Widgets, cached data and plotly figures for the position lesson (RoPE and learned positions).

Figures take numbers and already-translated labels; the maths lives in lib.rope. Widgets whose
value may fall outside the current model (a position past its context, a head it lacks after a
model switch, a number typed by hand) are clamped before they are drawn, with a notice.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch
from plotly.subplots import make_subplots

from lib import rope
from lib.models import ModelInfo
from lib.tokens import readable_tokens
from ui import lesson
from ui.cache import get_model
from ui.core import num, t
from ui.figures import PALETTE, colorscale, quick, vline
from ui.live_chart import live_chart

TRAIL = 40  # positions drawn behind the current one on the pair's circle
WINDOW = 256  # positions in the angle heatmap (no striding: it would alias the fast pairs)
DISTANCE_MAX = 2048  # distances in the score-vs-distance plot
SHUFFLE_MAX_TOKENS = 24
LEARNED_MAX = 256  # rows/columns drawn of a learned position table
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


def number(label: str, key: str, hi: int, default: int, notice: str, **values) -> int:
    """An integer box 0..hi; a value typed beyond `hi` is clamped with a warning."""
    asked = _clamp_state(key, 0, hi, min(default, hi))
    if asked is not None:
        st.warning(t(notice, asked=num(asked), value=num(st.session_state[key]), **values))
    return int(st.number_input(label, min_value=0, step=1, key=key))


# ---------------------------------------------------------------- cached data

@st.cache_data(max_entries=16, show_spinner=False)
def shuffle_data(model_name: str, sentence: str, seed: int, base: float) -> tuple[list[str], rope.ShuffleDemo, int]:
    """(tokens, demo, total tokens) of the shuffled-sentence demonstration on the model's embeddings."""
    lm = get_model(model_name)
    ids_all = list(lm.tokenizer(sentence)["input_ids"])
    ids = ids_all[:SHUFFLE_MAX_TOKENS]
    with torch.inference_mode():  # reading rows of the table: no forward pass, no hooks
        x = lm.adapter.embed(lm.model).weight[ids].float().numpy().copy()  # [T, D]
    return readable_tokens(lm.tokenizer, ids), rope.shuffle_demo(x, lm.info.d_head, seed, base), len(ids_all)


@st.cache_data(max_entries=4, show_spinner=False)
def learned_positions(model_name: str) -> np.ndarray | None:
    """[context, D] the learned absolute position table (GPT-2's wpe), or None for a RoPE model."""
    lm = get_model(model_name)
    module = lm.adapter.position_embedding(lm.model)
    if module is None:
        return None
    with torch.inference_mode():
        return module.weight.float().numpy().copy()


def token_labels(tokens) -> list[str]:
    """Unique axis labels "i · token" (plotly merges repeated category names)."""
    return [f"{i} · {tok}" for i, tok in enumerate(tokens)]


# ---------------------------------------------------------------- figures: toy and rotations

def shuffle_figure(tokens: list[str], demo: rope.ShuffleDemo, labels: dict[str, str]) -> go.Figure:
    """Grouped bars: for each token, how much its output moved when the sentence was shuffled."""
    x = token_labels(tokens)
    fig = go.Figure([
        go.Bar(x=x, y=100 * demo.change_plain, name=labels["plain"], marker_color=PALETTE[0]),
        go.Bar(x=x, y=100 * demo.change_rope, name=labels["rope"], marker_color=PALETTE[1]),
    ])
    fig.update_layout(barmode="group", title=labels["title"], yaxis_title=labels["y"], height=340,
                      margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def rotation_figure(theta: np.ndarray, m: int, pair: int, labels: dict[str, str]) -> go.Figure:
    """Left: pair `pair` turning on its circle up to position m. Right: every pair at position m."""
    fig = make_subplots(rows=1, cols=2, specs=[[{"type": "polar"}, {"type": "polar"}]],
                        subplot_titles=[labels["left"], labels["right"]])
    trail = np.arange(max(0, m - TRAIL), m + 1)
    deg = np.degrees(trail * theta[pair]) % 360
    fig.add_trace(go.Scatterpolar(r=np.ones(len(trail)), theta=deg, mode="markers", name=labels["trail"],
                                  marker=dict(color=trail, colorscale="Blues", size=7, cmin=trail[0] - 5),
                                  hovertext=[labels["hover_pos"].format(m=p) for p in trail], hoverinfo="text"), 1, 1)
    fig.add_trace(go.Scatterpolar(r=[0, 1], theta=[0, 0], mode="lines", name=labels["start"],
                                  line=dict(color="#999", dash="dot")), 1, 1)
    fig.add_trace(go.Scatterpolar(r=[0, 1], theta=[deg[-1]] * 2, mode="lines+markers", name=labels["now"],
                                  line=dict(color=PALETTE[3], width=4), marker=dict(size=[0, 12])), 1, 1)
    n = len(theta)
    fan = np.degrees(m * theta) % 360
    sizes = np.where(np.arange(n) == pair, 16, 8)
    fig.add_trace(go.Scatterpolar(r=np.arange(1, n + 1), theta=fan, mode="markers", name=labels["pairs"],
                                  marker=dict(color=np.arange(n), colorscale="Viridis", size=sizes,
                                              line=dict(color=np.where(np.arange(n) == pair, PALETTE[3], "white"), width=2)),
                                  hovertext=[labels["hover_pair"].format(i=i) for i in range(n)], hoverinfo="text"), 1, 2)
    fig.update_layout(title=labels["title"], height=430, margin=dict(l=30, r=30, t=90, b=20), showlegend=True,
                      legend=dict(orientation="h", y=-0.08),
                      polar=dict(radialaxis=dict(range=[0, 1.15], showticklabels=False, showgrid=False),
                                 angularaxis=dict(showticklabels=False)),
                      polar2=dict(hole=0.25, radialaxis=dict(range=[0, n + 1], title=dict(text=labels["radius"])),
                                  angularaxis=dict(showticklabels=False)))
    for note in fig.layout.annotations:  # subplot titles: lift them clear of the circles
        note.update(y=note.y + 0.06)
    return fig


def angle_figure(theta: np.ndarray, m: int, context: int, labels: dict[str, str]) -> go.Figure:
    """Heatmap of the angle m·θ_i (mod 2π) for every pair over a window of positions around m."""
    lo = min(max(0, m - WINDOW // 2), max(0, context - WINDOW))
    pos = np.arange(lo, min(lo + WINDOW, context))
    z = ((np.outer(theta, pos)) % (2 * np.pi)).astype(np.float32)  # [Dh/2, window]; float32: half the bytes
    return quick([dict(type="heatmap", z=z, x=pos, y=np.arange(len(theta)), colorscale=colorscale("Twilight"), zmin=0,
                       zmax=2 * np.pi, colorbar=dict(title=dict(text=labels["colorbar"])),
                       hovertemplate=labels["hover"] + "<extra></extra>")],
                 dict(title=dict(text=labels["title"]), xaxis=dict(title=dict(text=labels["x"])),
                      yaxis=dict(title=dict(text=labels["y"])), height=380, margin=dict(l=10, r=10, t=50, b=10),
                      shapes=[vline(m, dict(color=PALETTE[3], width=2))]))


def distance_figure(distances: np.ndarray, curves: dict[str, np.ndarray], mark: int | None,
                    labels: dict[str, str]) -> go.Figure:
    """One line per curve of a score against the distance n − m; an optional vertical mark."""
    traces = [dict(type="scatter", x=distances, y=y, mode="lines", name=name, line=dict(color=PALETTE[i % len(PALETTE)]))
              for i, (name, y) in enumerate(curves.items())]
    layout = dict(title=dict(text=labels["title"]), xaxis=dict(title=dict(text=labels["x"])),
                  yaxis=dict(title=dict(text=labels["y"])), height=340, margin=dict(l=10, r=10, t=50, b=10),
                  legend=dict(orientation="h", y=-0.25))
    if mark is not None:
        layout["shapes"] = [vline(mark, dict(color=PALETTE[3], dash="dash"))]
    return quick(traces, layout)


# ---------------------------------------------------------------- figures: the live model

def pair_plane_figure(before: np.ndarray, after: np.ndarray, tokens, labels: dict[str, str]) -> go.Figure:
    """Each token's pair (x_i, x_{i+Dh/2}) before RoPE (hollow) and after (filled), joined by a line."""
    names = token_labels(tokens)
    seg_x, seg_y = [], []
    for (a, b), (c, d) in zip(before, after):
        seg_x += [a, c, None]
        seg_y += [b, d, None]
    pos = np.arange(len(names))
    lim = float(np.abs(np.concatenate([before, after])).max()) * 1.1 or 1.0
    return quick([
        dict(type="scatter", x=seg_x, y=seg_y, mode="lines", line=dict(color="#bbb", width=1), hoverinfo="skip",
             showlegend=False),
        dict(type="scatter", x=before[:, 0], y=before[:, 1], mode="markers", name=labels["before"], text=names,
             hoverinfo="text", marker=dict(symbol="circle-open", size=9, color=pos, colorscale=colorscale("Viridis"))),
        dict(type="scatter", x=after[:, 0], y=after[:, 1], mode="markers", name=labels["after"], text=names,
             hoverinfo="text", marker=dict(size=9, color=pos, colorscale=colorscale("Viridis"),
                                           colorbar=dict(title=dict(text=labels["position"])))),
    ], dict(title=dict(text=labels["title"]), height=440, margin=dict(l=10, r=10, t=50, b=10),
            xaxis=dict(range=[-lim, lim], title=dict(text=labels["x"]), zeroline=True),
            yaxis=dict(range=[-lim, lim], title=dict(text=labels["y"]), scaleanchor="x", zeroline=True),
            legend=dict(orientation="h", y=-0.2)))


def before_after_heatmaps(before: np.ndarray, after: np.ndarray, tokens, labels: dict[str, str]) -> go.Figure:
    """Three heatmaps [T, Dh] on one colour scale: the vectors before RoPE, after, and the change."""
    names = token_labels(tokens)
    lim = float(np.abs(np.concatenate([before, after])).max()) or 1.0
    change = after - before
    # Three panels side by side sharing the rows (the layout make_subplots(1, 3, shared_yaxes=True,
    # horizontal_spacing=0.02) writes, spelled out: this figure is redrawn at every slider move).
    # The change gets its own scale: it is small where pairs turn slowly, and its pattern is the point.
    domains = ((0.0, 0.32), (0.34, 0.66), (0.68, 1.0))
    traces, layout = [], dict(title=dict(text=labels["title"]), height=min(700, 160 + 14 * len(names)),
                              margin=dict(l=10, r=10, t=70, b=10), annotations=[])
    for col, z, top in ((1, before, lim), (2, after, lim), (3, change, float(np.abs(change).max()) or 1.0)):
        suffix = "" if col == 1 else str(col)
        traces.append(dict(type="heatmap", z=z, y=names, colorscale=colorscale("RdBu"), zmid=0, zmin=-top, zmax=top,
                           showscale=col == 2, hovertemplate=labels["hover"] + "<extra></extra>",
                           xaxis=f"x{suffix}", yaxis=f"y{suffix}"))
        layout[f"xaxis{suffix}"] = dict(anchor=f"y{suffix}", domain=list(domains[col - 1]), title=dict(text=labels["x"]))
        layout[f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=[0.0, 1.0], autorange="reversed",
                                        showticklabels=col == 1 and len(names) <= 60, **({} if col == 1 else {"matches": "y"}))
        layout["annotations"].append(dict(font=dict(size=16), showarrow=False, xanchor="center", xref="paper",
                                          x=sum(domains[col - 1]) / 2, y=1.0, yanchor="bottom", yref="paper",
                                          text=labels[("before", "after", "change")[col - 1]]))
    return quick(traces, layout)


def learned_figures(table: np.ndarray, labels: dict[str, str]) -> tuple[go.Figure, go.Figure]:
    """The learned position table (first rows and columns) and the cosine similarity of its rows."""
    rows = table[:LEARNED_MAX]
    heat = go.Figure(go.Heatmap(z=rows[:, :LEARNED_MAX], colorscale="RdBu", zmid=0,
                                hovertemplate=labels["hover_table"] + "<extra></extra>"))
    heat.update_layout(title=labels["table_title"], xaxis_title=labels["dims"], yaxis_title=labels["positions"],
                       height=420, margin=dict(l=10, r=10, t=50, b=10))
    heat.update_yaxes(autorange="reversed")
    sim = go.Figure(go.Heatmap(z=rope.cosine_similarity(rows), colorscale="RdBu", zmid=0, zmin=-1, zmax=1,
                               hovertemplate=labels["hover_sim"] + "<extra></extra>"))
    sim.update_layout(title=labels["sim_title"], xaxis_title=labels["positions"], yaxis_title=labels["positions"],
                      height=420, margin=dict(l=10, r=10, t=50, b=10))
    sim.update_yaxes(autorange="reversed")
    return heat, sim


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


@st.fragment
def rotation_section(theta: np.ndarray, context: int, texts: dict[str, str]) -> None:
    """Position and pair: the rotation and the angles; a slider reruns this section alone."""
    n_pairs, periods = len(theta), 2 * np.pi / theta
    c1, c2 = st.columns(2)
    with c1:
        m = slider(t("position.position"), "position.m", context - 1, 5, "position.clamped_position", limit=num(context))
    with c2:
        pair = slider(t("position.pair"), "position.pair", n_pairs - 1, 0, "position.clamped_pair", limit=num(n_pairs))
    angle = m * theta[pair]
    rot_labels = labels("position.rot", "left", "right", "trail", "start", "now", "pairs", "radius", "title",
                        pair=num(pair), m=num(m), angle=num(angle, 2), turns=num(angle / (2 * np.pi), 2),
                        period=num(periods[pair], 1))
    rot_labels |= {"hover_pos": t("position.rot.hover_pos"), "hover_pair": t("position.rot.hover_pair")}
    live_chart(rotation_figure(theta, m, pair, rot_labels), key="position.rotation_chart")
    lesson.show(texts, "angles", n_pairs=num(n_pairs))
    live_chart(angle_figure(theta, m, context, labels("position.angle", "title", "x", "y", "colorbar", "hover")),
                    key="position.angle_chart")
