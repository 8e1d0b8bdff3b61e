"""The embeddings lesson's figure builders: plotly figures from the table's numbers and
already-translated labels, with the numbers written by the `num` they are given (the page passes
ui.shell.core.num, the course's language). No streamlit here: each builder is tested on its data
alone (tests/test_figures_embeddings.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from lib.lessons import embeddings as emb
from lib.lessons.embeddings import EmbeddingIndex
from ui.views.figures import PALETTE

Number = Callable[..., str]  # (value, digits=None) -> the number as the page writes it


def unique_labels(names: list[str]) -> list[str]:
    """Plotly merges equal category labels: number repeated ones.

    Example: unique_labels(["a", "b", "a"]) -> ["a", "b", "a (2)"]
    """
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


def cosine_figure(matrix: np.ndarray, names: list[str], labels: dict[str, str], num: Number) -> go.Figure:
    """Labelled heatmap of a cosine matrix, values written in the cells (by `num`, two digits)."""
    names = unique_labels(names)
    text = [[num(float(v), 2) for v in row] for row in matrix]
    fig = go.Figure(go.Heatmap(z=matrix, x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu", zmid=0, text=text,
                               texttemplate="%{text}" if len(names) <= 12 else None,
                               hovertemplate=labels["hover"] + "<extra></extra>"))
    size = max(320, 38 * len(names) + 140)
    fig.update_layout(height=size, margin=dict(l=10, r=10, t=30, b=10), title=labels.get("title"),
                      xaxis=dict(type="category"), yaxis=dict(autorange="reversed", type="category"))
    return fig


def norms_figure(idx: EmbeddingIndex, stats: emb.NormStats, tokens: list[str], sample: np.ndarray,
                 labels: dict[str, str]) -> go.Figure:
    """Scatter of row length against id (a seeded sample), with the mean length per bin of ids."""
    fig = go.Figure(go.Scatter(x=sample, y=idx.norms[sample], mode="markers", name=labels["points"],
                               marker=dict(size=3, color=PALETTE[0], opacity=0.35), text=tokens,
                               hovertemplate=labels["hover"] + "<extra></extra>"))
    centres = (stats.bins[:-1] + stats.bins[1:]) / 2
    fig.add_trace(go.Scatter(x=centres, y=stats.bin_means, mode="lines+markers", name=labels["means"],
                             line=dict(color=PALETTE[1], width=3)))
    fig.update_layout(xaxis_title=labels["x"], yaxis_title=labels["y"], height=380,
                      margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h", y=1.08))
    return fig
