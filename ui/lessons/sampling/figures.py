"""The sampling lesson's figures drawn by the server: plotly figures from a stored generation, with
already-translated labels. No streamlit here: each builder is tested on its data alone
(tests/test_figures_sampling.py).
"""

from __future__ import annotations

import plotly.graph_objects as go

from lib.lessons.generate import Generation
from ui.views.figures import PALETTE, quick

GREY = "#B8B8B8"  # the model's own distribution, before the filters


def plotly_text(token: str) -> str:
    """A token for a plotly label: plotly reads <...> as tags and decodes &lt; and &gt; (but not
    every entity: html.escape's &quot; would show as it is), so only the angle brackets change.

    Example: plotly_text("<b>&") -> "&lt;b&gt;&"
    """
    return token.replace("<", "&lt;").replace(">", "&gt;")


def step_figure(gen: Generation, index: int, labels: dict[str, str]) -> go.Figure:
    """One step of a generation: the model's probabilities of its top candidates beside the final
    ones after the filters, the token drawn in its own colour."""
    # Built as plain plotly JSON (ui.views.figures.quick): the step slider redraws it at each move.
    s = gen.steps[index]
    x = list(range(len(s.top_ids)))
    colors = [PALETTE[3] if i == s.token_id else PALETTE[0] for i in s.top_ids]
    data = [{"type": "bar", "x": x, "y": list(map(float, s.top_model)), "name": labels["model"],
             "marker": {"color": GREY}},
            {"type": "bar", "x": x, "y": list(map(float, s.top_probs)), "name": labels["final"],
             "marker": {"color": colors}}]
    return quick(data, {"title": {"text": labels["title"]}, "barmode": "group", "height": 340,
                        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
                        "yaxis": {"title": {"text": labels["y"]}, "range": [0, 1.05]},
                        "legend": {"orientation": "h", "y": -0.4},
                        "xaxis": {"tickvals": x, "ticktext": [plotly_text(tok) for tok in s.top_tokens],
                                  "tickangle": -45}})


def times_figure(gen: Generation, labels: dict[str, str]) -> go.Figure:
    """Milliseconds of each generated token, the first (the whole prompt's forward pass) in its own
    colour."""
    ms = [1000 * s.seconds for s in gen.steps]
    colors = [PALETTE[1]] + [PALETTE[0]] * (len(ms) - 1)
    fig = go.Figure(go.Bar(x=list(range(1, len(ms) + 1)), y=ms, marker_color=colors, showlegend=False))
    fig.update_layout(title=labels["times_title"], height=280, margin=dict(l=10, r=10, t=50, b=10),
                      xaxis_title=labels["times_x"], yaxis_title=labels["times_y"])
    return fig
