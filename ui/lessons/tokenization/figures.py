"""The tokenization lesson's figures drawn by the server: plotly figures from token counts, with
already-translated labels. No streamlit here: each builder is tested on its data alone
(tests/test_figures_tokenization.py).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ui.views.figures import PALETTE


def language_figure(costs: pd.DataFrame, labels: dict[str, str]) -> go.Figure:
    """Grouped bars: the tokens of each built-in paragraph in Italian and in English (`costs`: one
    row per paragraph, its number `n` and its tokens `it` and `en`)."""
    fig = go.Figure()
    fig.add_trace(go.Bar(x=costs["n"], y=costs["it"], name=labels["it"], marker_color=PALETTE[2]))
    fig.add_trace(go.Bar(x=costs["n"], y=costs["en"], name=labels["en"], marker_color=PALETTE[0]))
    fig.update_layout(barmode="group", height=320, margin=dict(l=10, r=10, t=40, b=10),
                      title=labels["chart_title"], xaxis_title=labels["paragraph"],
                      yaxis_title=labels["tokens"], legend=dict(orientation="h", y=1.12))
    return fig
