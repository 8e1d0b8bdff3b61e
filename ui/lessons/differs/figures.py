"""The "what differs" sections' figures: plotly figures from a capture's attention and the RoPE
periods, with already-translated labels. No streamlit here: each builder is tested on its data
alone (tests/test_figures_differs.py).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.views.figures import PALETTE

HEATMAP_CELLS = 256  # a [T, T] attention map is shown pooled to at most this many cells a side


def pooled(a: np.ndarray, cells: int = HEATMAP_CELLS) -> np.ndarray:
    """[T, T] -> at most [cells, cells], each cell the max of its block (a thin band stays visible).

    Example: pooled(np.eye(4), 2) -> [[1., 0.], [0., 1.]]
    """
    t_ = a.shape[0]
    step = max(1, -(-t_ // cells))
    n = -(-t_ // step)
    pad = np.zeros((n * step, n * step), dtype=a.dtype)
    pad[:t_, :t_] = a
    return pad.reshape(n, step, n, step).max(axis=(1, 3))


def window_figure(a: np.ndarray, labels: dict[str, str]) -> go.Figure:
    """One head's attention [T, T] as a heatmap, pooled to what the eye can see, queries downwards:
    a local layer's band beside a global layer's triangle."""
    fig = go.Figure(go.Heatmap(z=pooled(a), colorscale="Blues", showscale=False))
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=40, b=10), title=labels["title"],
                      xaxis_title=labels["x"], yaxis_title=labels["y"], yaxis=dict(autorange="reversed"))
    return fig


def periods_figure(local: np.ndarray, glob: np.ndarray, labels: dict[str, str]) -> go.Figure:
    """Each pair's RoPE period (positions per turn) with the local layers' base and the global
    layers', on a logarithmic axis."""
    fig = go.Figure([go.Scatter(y=local, name=labels["local"], line_color=PALETTE[0]),
                     go.Scatter(y=glob, name=labels["global"], line_color=PALETTE[1])])
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=30, b=10), yaxis_type="log",
                      xaxis_title=labels["x"], yaxis_title=labels["y"])
    return fig
