"""The sampling lesson's figures from a stored generation, with already-translated labels: the time
per token, drawn by the server, and the data of the browser's view of each step. No streamlit here:
each builder is tested on its data alone (tests/test_figures_sampling.py).
"""

from __future__ import annotations

import plotly.graph_objects as go

from lib.lessons.generate import Generation
from ui.views.figures import PALETTE

GREY = "#B8B8B8"  # the model's own distribution, before the filters


def steps_data(gen: Generation, labels: dict[str, str], lang: str, key: str) -> dict:
    """What the browser view of a generation's steps draws from (static/views/generation.js): every
    step's candidates with the model's probabilities and the final ones after the filters, sent once
    with the generation (14 KB for 20 steps); the step slider is answered in the browser. `labels`:
    "step", "title" (a template of {step}, {token} and {p}), "model", "final", "y", "rank", "token",
    "table", "unavailable".

    Example: steps_data(gen, labels, "en", "k")["steps"][0]["model"] == list(gen.steps[0].top_model)
    """
    steps = [{"token": s.token, "token_id": int(s.token_id), "prob": float(s.prob), "ids": [int(i) for i in s.top_ids],
              "tokens": list(s.top_tokens), "model": [float(p) for p in s.top_model],
              "final": [float(p) for p in s.top_probs]} for s in gen.steps]
    layout = {"barmode": "group", "height": 340, "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
              "yaxis": {"title": {"text": labels["y"]}, "range": [0, 1.05]}, "legend": {"orientation": "h", "y": -0.4},
              "xaxis": {"tickangle": -45}}
    return {"key": key, "lang": lang, "labels": dict(labels), "steps": steps, "layout": layout,
            "palette": list(PALETTE), "grey": GREY}


def times_figure(gen: Generation, labels: dict[str, str]) -> go.Figure:
    """Milliseconds of each generated token, the first (the whole prompt's forward pass) in its own
    colour."""
    ms = [1000 * s.seconds for s in gen.steps]
    colors = [PALETTE[1]] + [PALETTE[0]] * (len(ms) - 1)
    fig = go.Figure(go.Bar(x=list(range(1, len(ms) + 1)), y=ms, marker_color=colors, showlegend=False))
    fig.update_layout(title=labels["times_title"], height=280, margin=dict(l=10, r=10, t=50, b=10),
                      xaxis_title=labels["times_x"], yaxis_title=labels["times_y"])
    return fig
