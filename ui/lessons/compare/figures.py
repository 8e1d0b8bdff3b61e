"""The compare page's figure builders: plotly figures from the models' measured architectures and
distributions, with already-translated labels. No streamlit here: each builder is tested on its
data alone (tests/test_figures_compare.py).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from lib.lessons.compare import Architecture
from ui.views.figures import PALETTE


def params_figure(archs: list[Architecture], names: list[str], labels: dict[str, str]) -> go.Figure:
    """Stacked bars: the embedding table against everything else, per model (`names`: each model's
    name as the page writes it, in the order of `archs`)."""
    fig = go.Figure([
        go.Bar(name=labels["embedding"], x=names, y=[a.embedding_params for a in archs], marker_color=PALETTE[1]),
        go.Bar(name=labels["rest"], x=names, y=[a.n_params - a.embedding_params for a in archs],
               marker_color=PALETTE[0]),
    ])
    fig.update_layout(barmode="stack", height=320, margin=dict(l=10, r=10, t=30, b=10),
                      yaxis_title=labels["params"], title=labels["title"])
    return fig


def next_token_figure(probs: np.ndarray, tokens: list[str], colour: int, labels: dict[str, str]) -> go.Figure:
    """Horizontal bars of a model's top next tokens, the best at the top: `probs` and `tokens` best
    first; `colour`, the model's place among those compared (its colour in the palette)."""
    fig = go.Figure(go.Bar(x=probs[::-1], y=tokens[::-1], orientation="h", marker_color=PALETTE[colour % len(PALETTE)]))
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=30, b=10), xaxis_title=labels["x"],
                      title=labels["title"])
    return fig
