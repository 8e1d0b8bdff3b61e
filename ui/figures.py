"""Plotly figures for the lessons. No streamlit here: a figure is built from data and labels.

Labels come in already translated, so the same builder serves both languages.
"""

from __future__ import annotations

import functools
import json
import re

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale

class Spec(go.Figure):
    """A figure already in plotly's JSON form (a dict, e.g. a cached `Figure.to_dict()` with a part
    replaced): `st.plotly_chart` sends it as it is, without rebuilding and revalidating it through
    plotly's object model (15-25 ms per figure, most of a slider move's time on the server).

    The dict is shared, never copied: build it once, then only replace parts in shallow copies.
    """

    def __init__(self, spec: dict) -> None:
        super().__init__()
        self._itt_spec = spec

    def to_dict(self) -> dict:
        return self._itt_spec


_AXIS = re.compile(r"^[xy]axis\d*$")


def localized(spec: dict, separators: str) -> dict:
    """A figure's plotly JSON written the language's way: `separators` (decimal then thousands:
    ",." in Italian) and exponents as powers of ten on every axis, never plotly's SI letters
    ("10B" reads as ten bytes on a byte axis). Shallow copies: `spec` itself is never changed
    (cached figures are shared by every session). A figure's own choices win.

    Example: localized({"layout": {"xaxis": {}}}, ",.")["layout"] -> {"xaxis": {"exponentformat":
             "power"}, "separators": ",."}
    """
    layout = dict(spec.get("layout") or {})
    for name, axis in list(layout.items()):
        if _AXIS.match(name) and isinstance(axis, dict) and "exponentformat" not in axis:
            layout[name] = {**axis, "exponentformat": "power"}
    for name in ("xaxis", "yaxis"):  # the axes a figure leaves to plotly's defaults
        layout.setdefault(name, {"exponentformat": "power"})
    layout.setdefault("separators", separators)
    return {**spec, "layout": layout}


def quick(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain plotly JSON (traces and layout as dicts), built without plotly's validation:
    6x faster (a 40 x 40 heatmap: 27 -> 4.7 ms measured), for the figures a slider redraws at each
    move. Nothing checks the property names here: the pages' tests read these figures back."""
    return go.Figure(data=data, layout=layout, _validate=False)


@functools.lru_cache(maxsize=None)
def _named_scale(name: str) -> tuple[tuple[float, str], ...]:
    return tuple((float(v), c) for v, c in get_colorscale(name))


def colorscale(name: str) -> list[list]:
    """A named plotly.py colour scale as its list of stops, for `quick` figures (plotly.js knows other
    scales by some of the same names: "RdBu" runs the other way there)."""
    return [[v, c] for v, c in _named_scale(name)]


@functools.lru_cache(maxsize=32)
def _subplot_layout(args: str) -> str:
    from plotly.subplots import make_subplots

    kw = json.loads(args)
    layout = make_subplots(**kw).to_dict()["layout"]
    layout.pop("template", None)
    return json.dumps(layout)


def subplot_layout(titles: tuple[str, ...] = (), **kw) -> dict:
    """The layout `make_subplots(**kw, subplot_titles=titles)` writes (axes, domains, title notes),
    computed once per shape and copied, for `quick` figures redrawn at each move."""
    args = dict(kw, subplot_titles=[f"\x00{i}" for i in range(len(titles))] if titles else None)
    layout = json.loads(_subplot_layout(json.dumps(args, sort_keys=True)))
    for note in layout.get("annotations", []):
        if note.get("text", "").startswith("\x00"):
            note["text"] = titles[int(note["text"][1:])]
    return layout


def vline(x: float, line: dict) -> dict:
    """A vertical line across the plot at x, as plotly's `add_vline` draws it (for `quick` figures)."""
    return dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain", line=line)


# The course's categorical colours: Okabe and Ito's palette (Wong, Nature Methods 2011), whose colours
# stay apart for learners with protanopia or deuteranopia (tests/test_colour_vision.py). In order:
# blue, orange, bluish green, vermillion (the marked one: a cut, a chosen head), sky blue, reddish
# purple, yellow, black. The first four carry most charts.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000"]


def kv_group_grid(n_layers: int, n_heads: int, n_kv_heads: int) -> np.ndarray:
    """[L, H] the KV head each query head reads (consecutive query heads share one).

    Example: kv_group_grid(1, 4, 2) -> [[0, 0, 1, 1]]
    """
    group = n_heads // n_kv_heads
    return np.tile(np.arange(n_heads) // group, (n_layers, 1))


def stack_figure(n_layers: int, n_heads: int, n_kv_heads: int, labels: dict[str, str]) -> go.Figure:
    """The whole stack as a grid: one cell per (layer, query head), coloured by its KV group."""
    grid = kv_group_grid(n_layers, n_heads, n_kv_heads)
    n_colors = min(n_kv_heads, len(PALETTE))
    # A discrete colour scale: KV group g gets PALETTE[g % len(PALETTE)].
    scale = []
    for g in range(n_colors):
        lo, hi = g / n_colors, (g + 1) / n_colors
        scale += [[lo, PALETTE[g]], [hi, PALETTE[g]]]
    z = grid % n_colors
    hover = [[labels["hover"].format(layer=l, head=h, group=grid[l, h]) for h in range(n_heads)]
             for l in range(n_layers)]
    fig = go.Figure(go.Heatmap(z=z, x=list(range(n_heads)), y=list(range(n_layers)), zmin=-0.5,
                               zmax=n_colors - 0.5, colorscale=scale if n_colors > 1 else [[0, PALETTE[0]], [1, PALETTE[0]]],
                               showscale=False, text=hover, hoverinfo="text", xgap=2, ygap=2))
    fig.update_layout(xaxis_title=labels["x"], yaxis_title=labels["y"], height=max(300, 14 * n_layers + 120),
                      margin=dict(l=10, r=10, t=30, b=10), title=labels.get("title"))
    fig.update_xaxes(dtick=1 if n_heads <= 32 else None)
    return fig


def params_figure(parts: dict[str, int], names: dict[str, str], title: str) -> go.Figure:
    """Horizontal bars: how many parameters each part of the model holds, with its share."""
    items = [(names[k], v) for k, v in parts.items() if v > 0]
    total = sum(v for _, v in items)
    fig = go.Figure(go.Bar(x=[v for _, v in items], y=[k for k, _ in items], orientation="h",
                           # plotly writes the share, with the figure's decimal separator (21,0% in Italian)
                           text=[v / total for _, v in items], texttemplate="%{text:.1%}", textposition="auto",
                           marker_color=PALETTE[: len(items)]))
    fig.update_layout(title=title, height=300, margin=dict(l=10, r=10, t=40, b=10), yaxis=dict(autorange="reversed"))
    return fig


_TAG = re.compile(r"<[^>]*>")


def _plain(text) -> str:
    """A plotly label as plain text: tags (<b>, <br>) become spaces, runs of spaces one."""
    return " ".join(_TAG.sub(" ", str(text or "")).split())


def _title(part) -> str:
    return _plain(part.get("text") if isinstance(part, dict) else part)


def title_text(spec: dict) -> str:
    """A figure's title as plain text ("" when it has none).

    Example: title_text({"layout": {"title": {"text": "<b>Head 3</b>"}}}) -> "Head 3"
    """
    return _title((spec.get("layout") or {}).get("title"))


def accessible_name(spec: dict, about: str | None, axes: str) -> str:
    """What a screen reader announces for a chart: `about` (the chart's own description) or else its
    title, followed by its axes (`axes`, a template with {x} and {y}) when both are named. Plain text.

    Example: accessible_name({"layout": {"title": {"text": "<b>Head 3</b>"}, "xaxis": {"title": "key"},
             "yaxis": {"title": {"text": "query"}}}}, None, "{y} by {x}") -> "Head 3. query by key"
    """
    layout = spec.get("layout") or {}
    head = _plain(about) or title_text(spec)
    x, y = _title((layout.get("xaxis") or {}).get("title")), _title((layout.get("yaxis") or {}).get("title"))
    tail = axes.format(x=x, y=y) if x and y else ""
    return ". ".join(p for p in (head, tail) if p)
