"""The KV-cache lesson's figure builders: plotly figures from the live model's measurements and
already-translated labels. No streamlit here: each builder is tested on its data alone
(tests/test_figures_kvcache.py).
"""

from __future__ import annotations

import plotly.graph_objects as go

from lib.lessons import kvcache as K
from ui.views.figures import PALETTE


def timing_figure(rows: tuple[K.TimingRow, ...], ceiling_ms: float, labels: dict[str, str]) -> go.Figure:
    """Prefill and per-token decode time against the prompt's length (both axes logarithmic), under
    the ceiling that reading every weight once puts on a decode step."""
    x = [r.prompt_tokens for r in rows]
    fig = go.Figure([
        go.Scatter(x=x, y=[r.prefill_s * 1e3 for r in rows], name=labels["prefill"], mode="lines+markers",
                   line_color=PALETTE[0]),
        go.Scatter(x=x, y=[r.decode_s * 1e3 for r in rows], name=labels["per_token"], mode="lines+markers",
                   line_color=PALETTE[1]),
    ])
    fig.add_trace(go.Scatter(x=[x[0], x[-1]], y=[ceiling_ms, ceiling_ms], name=labels["ceiling"],
                             mode="lines", line=dict(color=PALETTE[3], dash="dash")))
    fig.update_layout(height=360, xaxis_title=labels["x"], yaxis_title="ms", xaxis_type="log",
                      yaxis_type="log", margin=dict(l=10, r=10, t=30, b=10))
    fig.update_xaxes(tickvals=x)
    return fig
