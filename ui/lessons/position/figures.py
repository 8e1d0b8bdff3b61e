"""The position lesson's figures drawn by the server: plotly figures from the shuffle demonstration
and the learned position table, with already-translated labels. No streamlit here: each builder is
tested on its data alone (tests/test_figures_position.py).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from lib.lessons import rope
from ui.views.figures import PALETTE

LEARNED_MAX = 256  # rows/columns drawn of a learned position table


def token_labels(tokens) -> list[str]:
    """Unique axis labels "i · token" (plotly merges repeated category names).

    Example: token_labels(["a", "a"]) -> ["0 · a", "1 · a"]
    """
    return [f"{i} · {tok}" for i, tok in enumerate(tokens)]


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
