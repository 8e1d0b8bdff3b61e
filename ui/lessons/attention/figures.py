"""The attention lesson's figure builders: plotly figures from arrays and already-translated
labels, and the few rules of what they draw (the colours, the overview's size, flash attention's
tile sizes). No streamlit here: each builder is tested on its data alone (tests/test_figures_attention.py).
Token strings go into plotly escaped (plotly renders a few HTML tags in its text).
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lib.lessons import attention as att
from ui.views.figures import PALETTE, byte_colorscale


BLOCKS = (2, 4, 8, 16, 32, 64, 128)
MAX_BLOCKS_PER_SIDE = 64  # at most 64 x 64 tiles to step through (a slider of 2,080 causal tiles)


# Attention is peaked (much of it sits on the first token): a scale that spends more colours
# on small weights keeps the weaker links visible. Hover shows the real value.
OVERVIEW_BACKGROUND = "#f4f4f4"  # between the thumbnails and above their diagonals
COLORSCALE = [[0.0, "#ffffff"], [0.03, "#e3ecf7"], [0.12, "#a9c4e6"], [0.35, "#5b8fd0"],
              [0.7, "#2856a3"], [1.0, "#08306b"]]


def esc(token: str) -> str:
    """A token as plotly text: escaped, so `<img ...>` shows as characters."""
    return html.escape(token, quote=False)


def token_labels(tokens, n: int | None = None) -> list[str]:
    """Unique row/column labels "i·token" (two equal tokens must stay two rows)."""
    return [f"{i}·{tok}" for i, tok in enumerate(tokens[:n] if n else tokens)]


def overview_figure(attn: np.ndarray, n: int, labels: dict[str, str],
                    strongest: list[list[str]]) -> go.Figure:
    """Every layer x head as one small heatmap, tiled into a single image (fast for 30 x 9).

    Layers run across, heads down. A transparent square marker sits on each thumbnail: clicking
    it selects that head (heatmap cells themselves cannot be selected in plotly).
    """
    n_layers, n_heads = attn.shape[:2]
    cell = n + 1  # one blank row/column between thumbnails
    # One byte a cell (a quarter of float32's bytes: 104 KB instead of 416 KB for 30 x 9 heads of 16
    # tokens); above the diagonal and between the thumbnails, the gap byte (0) in the plot's background.
    big = np.full((n_heads * cell, n_layers * cell), att.GAP_BYTE, dtype=np.uint8)
    tri = np.tril(np.ones((n, n), dtype=bool))
    for layer in range(n_layers):
        for head in range(n_heads):
            block = np.where(tri, att.probabilities_as_bytes(attn[layer, head, :n, :n]), att.GAP_BYTE)
            big[head * cell:head * cell + n, layer * cell:layer * cell + n] = block
    fig = go.Figure(go.Heatmap(z=big, zmin=0, zmax=255, showscale=False, hoverinfo="skip",
                               colorscale=byte_colorscale(COLORSCALE, OVERVIEW_BACKGROUND)))
    centers = [(layer * cell + (n - 1) / 2, head * cell + (n - 1) / 2, layer, head)
               for layer in range(n_layers) for head in range(n_heads)]
    fig.add_trace(go.Scatter(
        x=[c[0] for c in centers], y=[c[1] for c in centers], mode="markers",
        marker=dict(symbol="square", size=max(8, min(34, 900 // max(n_layers, 1) - 4)), color="rgba(0,0,0,0)"),
        customdata=[[c[2], c[3]] for c in centers],
        text=[labels["hover"].format(layer=c[2], head=c[3], pattern=strongest[c[2]][c[3]]) for c in centers],
        hoverinfo="text", selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=1)),
        showlegend=False))
    fig.update_xaxes(tickmode="array", tickvals=[layer * cell + (n - 1) / 2 for layer in range(n_layers)],
                     ticktext=[str(layer) for layer in range(n_layers)], title=labels["x"], showgrid=False,
                     zeroline=False, range=[-1.5, n_layers * cell])
    fig.update_yaxes(tickmode="array", tickvals=[head * cell + (n - 1) / 2 for head in range(n_heads)],
                     ticktext=[str(head) for head in range(n_heads)], title=labels["y"], showgrid=False,
                     zeroline=False, range=[n_heads * cell - 0.5, -0.5])  # top down; no padding for the markers
    fig.update_layout(height=overview_height(n_layers, n_heads), margin=dict(l=10, r=10, t=10, b=10),
                      dragmode=False, clickmode="event+select", plot_bgcolor=OVERVIEW_BACKGROUND)
    return fig


OVERVIEW_WIDTH_PX = 900  # the plot's width on a laptop (1400 px wide, sidebar open)
OVERVIEW_ROW_PX = (24, 56)  # the height of one row of thumbnails, at least and at most
OVERVIEW_AXES_PX = 80  # the axes' ticks and titles around the thumbnails


def overview_height(n_layers: int, n_heads: int) -> int:
    """The overview's height in px: its rows of thumbnails (one per head) times a row's height, plus
    the axes. A row is as tall as a thumbnail is wide on a laptop (square thumbnails there); the
    heatmap then fills the plot at any width (it is not held square, so on a phone the thumbnails
    are narrower, never a strip a few pixels high).

    Example: overview_height(30, 9) -> 350 (30 px a row); overview_height(18, 4) -> 280 (50 px)
    """
    row = min(max(OVERVIEW_WIDTH_PX // max(n_layers, 1), OVERVIEW_ROW_PX[0]), OVERVIEW_ROW_PX[1])
    return n_heads * row + OVERVIEW_AXES_PX


def gqa_figure(n_heads: int, n_kv_heads: int, labels: dict[str, str]) -> go.Figure:
    """Query heads on the left, key/value heads on the right, a line for each read."""
    groups = att.gqa_groups(n_heads, n_kv_heads)
    fig = go.Figure()
    span = max(n_heads - 1, 1)

    def y_kv(g: int) -> float:
        return span * (g + 0.5) / n_kv_heads

    for g, members in enumerate(groups):
        color = PALETTE[g % len(PALETTE)]
        for h in members:
            fig.add_trace(go.Scatter(x=[0, 1], y=[h, y_kv(g)], mode="lines", line=dict(color=color, width=2),
                                     hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(x=[0] * len(members), y=list(members), mode="markers+text",
                                 marker=dict(size=16, color=color), text=[labels["q"].format(h=h) for h in members],
                                 textposition="middle left", hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(x=[1], y=[y_kv(g)], mode="markers+text", marker=dict(size=22, color=color, symbol="square"),
                                 text=[labels["kv"].format(g=g)], textposition="middle right", hoverinfo="skip",
                                 showlegend=False))
    fig.update_xaxes(visible=False, range=[-0.6, 1.6])
    fig.update_yaxes(visible=False, autorange="reversed")
    fig.update_layout(height=max(220, 26 * n_heads + 60), margin=dict(l=10, r=10, t=30, b=10), title=labels["title"])
    return fig


def mask_figure(n: int, labels: dict[str, str]) -> go.Figure:
    """Causal (decoder), none (encoder), cross-attention (decoder queries x encoder keys)."""
    fig = make_subplots(1, 3, subplot_titles=(labels["causal"], labels["none"], labels["cross"]), horizontal_spacing=0.08)
    mats = (np.tril(np.ones((n, n))), np.ones((n, n)), np.ones((n - 2, n)))
    for i, m in enumerate(mats, start=1):
        fig.add_trace(go.Heatmap(z=m, zmin=0, zmax=1, colorscale=[[0, "#eeeeee"], [1, PALETTE[0]]], showscale=False,
                                 xgap=2, ygap=2, hoverinfo="skip"), 1, i)
        fig.update_yaxes(autorange="reversed", showticklabels=False, title=labels["y"] if i == 1 else None, row=1, col=i)
        fig.update_xaxes(showticklabels=False, title=labels["x_cross"] if i == 3 else labels["x"], row=1, col=i)
    fig.update_layout(height=280, margin=dict(l=10, r=10, t=40, b=10))
    return fig


def cost_figure(curves: dict[str, tuple[np.ndarray, np.ndarray]], mark: tuple[int, float] | None,
                labels: dict[str, str]) -> go.Figure:
    """Attention FLOPs against tokens (log-log) for each model, the learner's text marked."""
    fig = go.Figure()
    for i, (name, (x, y)) in enumerate(curves.items()):
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name, line=dict(color=PALETTE[i % len(PALETTE)])))
    if mark:
        fig.add_trace(go.Scatter(x=[mark[0]], y=[mark[1]], mode="markers", name=labels["yours"],
                                 marker=dict(size=12, color=PALETTE[3])))
    fig.update_xaxes(type="log", title=labels["x"])
    fig.update_yaxes(type="log", title=labels["y"])
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=40, b=10), title=labels["title"],
                      legend=dict(orientation="h", y=-0.25))
    return fig


def memory_figure(x: np.ndarray, naive: np.ndarray, tiled: np.ndarray, labels: dict[str, str]) -> go.Figure:
    fig = go.Figure([go.Scatter(x=x, y=naive, name=labels["naive"], line=dict(color=PALETTE[1])),
                     go.Scatter(x=x, y=tiled, name=labels["tiled"], line=dict(color=PALETTE[2]))])
    fig.update_xaxes(type="log", title=labels["x"])
    fig.update_yaxes(type="log", title=labels["y"])
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=40, b=10), title=labels["title"],
                      legend=dict(orientation="h", y=-0.25))
    return fig


# The tiles' states: to do, skipped, done, the current one (apart with red-green deficiencies too).
FLASH_COLOURS = ("#eef2f7", "#b4b4b4", PALETTE[0], PALETTE[3])


def block_options(n_tokens: int) -> list[int]:
    """Tile sizes worth stepping through: no more than MAX_BLOCKS_PER_SIDE tiles along a side."""
    return [b for b in BLOCKS if -(-n_tokens // b) <= MAX_BLOCKS_PER_SIDE] or [BLOCKS[-1]]


def default_block(n_tokens: int) -> int:
    """The smallest tile that cuts the text into at most 4 blocks a side (a handful of tiles)."""
    options = block_options(n_tokens)
    return next((b for b in options if -(-n_tokens // b) <= 4), options[-1])
