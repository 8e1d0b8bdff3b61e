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
    layout = laid_out(dict(spec.get("layout") or {}))
    for name, axis in list(layout.items()):
        if _AXIS.match(name) and isinstance(axis, dict) and "exponentformat" not in axis:
            layout[name] = {**axis, "exponentformat": "power"}
    for name in ("xaxis", "yaxis"):  # the axes a figure leaves to plotly's defaults
        layout.setdefault(name, {"exponentformat": "power"})
    layout.setdefault("separators", separators)
    return {**spec, "layout": layout}


# The course's one rule for chart layout. A chart must read on a phone (390 px wide: a plot some
# 358 px wide, or half of that beside another) as on a laptop, in Italian (the longer words):
# - the title sits above the plot area, wrapped to lines that fit a phone (`TITLE_CHARS`), with room
#   above it for plotly's mode bar; subplot titles wrap to their column's share of that width;
# - the legend is horizontal, at the foot of the chart, below the x axis's title (plotly grows the
#   bottom margin to hold it, however many rows it wraps to);
# - tick labels take plotly's own angle (it turns them only as far as they need), never a fixed one.
TITLE_CHARS = 40  # characters of a 16 px title in 358 px (Source Sans, Italian words)
SUBTITLE_CHARS = 46  # the same for 14 px subplot titles, over the whole width
AXIS_TITLE_CHARS = 44
TITLE_SIZE, SUBTITLE_SIZE = 16, 14
LINE_PX = {TITLE_SIZE: 21, SUBTITLE_SIZE: 18}
MODEBAR_PX = 28  # the mode bar's band at the top right (26 px buttons from 2 px), always shown on touch screens
_TAG = re.compile(r"<[^>]+>")


def wrap(text: str, width: int) -> str:
    """`text` (plotly's HTML subset) broken with `<br>` at spaces so that no line is longer than
    `width` visible characters (a single longer word keeps its line). Existing breaks are kept.

    Example: wrap("Una riga d'esempio: softmax su 8 chiavi", 20) -> "Una riga d'esempio:<br>softmax su 8 chiavi"
    """
    out = []
    for line in re.split(r"<br\s*/?>", text):
        current = ""
        for word in line.split(" "):
            trial = f"{current} {word}" if current else word
            if current and len(_TAG.sub("", trial)) > width:
                out.append(current)
                current = word
            else:
                current = trial
        out.append(current)
    return "<br>".join(out)


def _lines(text: str) -> int:
    return len(re.split(r"<br\s*/?>", text)) if text else 0


def _title_text(title) -> str:
    if isinstance(title, dict):
        return str(title.get("text") or "")
    return str(title or "")


def laid_out(layout: dict) -> dict:
    """`layout` (plotly JSON, a shallow copy is changed) following the course's chart-layout rule
    above. Only titles, legends, tick angles and the top margin change; the data never does.

    Example: laid_out({"title": "Memoria"})["title"] -> {"text": "Memoria", "font": {"size": 16},
             "x": 0.5, "xanchor": "center", "yref": "paper", "y": 1, "yanchor": "bottom",
             "automargin": True, "pad": {"t": 28, "b": 10}}
    """
    # Subplot titles (make_subplots writes them as annotations at the top of each panel): wrapped
    # to their panel's share of the width, smaller than the chart's title.
    notes = list(layout.get("annotations") or [])
    tops = [n for n in notes if isinstance(n, dict) and n.get("yanchor") == "bottom" and n.get("yref") == "paper"
            and n.get("xref") == "paper" and not n.get("showarrow", True) and n.get("text")]
    per_row: dict[float, int] = {}
    for n in tops:
        per_row[round(float(n.get("y", 1)), 3)] = per_row.get(round(float(n.get("y", 1)), 3), 0) + 1
    sub_lines = 0
    if tops:
        fixed = []
        for n in notes:
            if any(n is m for m in tops):
                share = per_row[round(float(n.get("y", 1)), 3)]
                text = wrap(str(n["text"]), max(11, SUBTITLE_CHARS // share - 4))
                n = {**n, "text": text, "font": {**(n.get("font") or {}), "size": SUBTITLE_SIZE}}
                if float(n.get("y", 1)) >= 0.99:
                    sub_lines = max(sub_lines, _lines(text))
            fixed.append(n)
        layout["annotations"] = fixed
    # A polar chart's radial axis title is drawn across its own tick labels and the data: it goes
    # under the chart's title instead, and the radial axis keeps a few ticks.
    radial = []
    for name, polar in list(layout.items()):
        if name.startswith("polar") and isinstance(polar, dict) and isinstance(polar.get("radialaxis"), dict):
            axis = dict(polar["radialaxis"])
            if _title_text(axis.get("title")):
                radial.append(_title_text(axis.pop("title")))
            axis.setdefault("nticks", 4)
            layout[name] = {**polar, "radialaxis": axis}
    title = layout.get("title")
    text = _title_text(title)
    room = 10 + sub_lines * LINE_PX[SUBTITLE_SIZE]
    margin = dict(layout.get("margin") or {})
    top_ticks = any(_AXIS.match(k) and k.startswith("x") and isinstance(v, dict) and v.get("side") == "top"
                    for k, v in layout.items())
    if text or radial:
        base = title if isinstance(title, dict) else {}
        wrapped = wrap(text, TITLE_CHARS)
        new = {**base, "text": wrapped, "font": {**(base.get("font") or {}), "size": TITLE_SIZE},
               "x": 0.5, "xanchor": "center"}
        if radial:
            new["subtitle"] = {"text": wrap(" · ".join(radial), TITLE_CHARS + 6)}
            room += _lines(new["subtitle"]["text"]) * LINE_PX[SUBTITLE_SIZE]
        if top_ticks:
            # Tick labels above the plot (a matrix's keys): the title takes the top of the chart and
            # the figure's own top margin, which holds the labels, grows by the title's extra lines.
            # (plotly anchors a title of several lines by its first: the pad makes room for the others)
            # The mode bar's band stays above the title: pad and margin grow by it.
            new.update(yref="container", y=1, yanchor="top", automargin=False,
                       pad={"t": MODEBAR_PX + 6 + (_lines(wrapped) - 1) * LINE_PX[TITLE_SIZE]})
            margin["t"] = (int(margin.get("t", 100) or 100) + MODEBAR_PX
                           + (_lines(wrapped) - 1) * LINE_PX[TITLE_SIZE])
        else:
            # The mode bar's band (its buttons, always shown on a touch screen, would otherwise sit
            # on the title's right end) stays above the title. The top margin is set to hold the
            # band, the title's lines and the pad under them: plotly's automargin only ever grows
            # it (plotly.js 4, Streamlit's, also counts the pad above; 3.7, the live charts', not).
            # plotly places a title of several lines by its first line, so the pad under it holds
            # the lines after the first too: they would otherwise run into the plot (seen on a
            # phone: a heatmap's title's second line over its data and its first tick label).
            extra = (_lines(wrapped) - 1) * LINE_PX[TITLE_SIZE]
            new.update(yref="paper", y=1, yanchor="bottom", automargin=True, pad={"t": MODEBAR_PX, "b": room + extra})
            # plotly.js 3.7 lifts a title of several lines by the whole of it above that pad (measured
            # on a phone: a two-line title's top 15 px from the chart's top, under the mode bar), so
            # the margin holds the lines after the first twice: once in the pad, once above it.
            margin["t"] = MODEBAR_PX + 6 + _lines(wrapped) * LINE_PX[TITLE_SIZE] + room + extra
        layout["title"] = new
    elif top_ticks:  # an axis title and tick labels above the plot: the band above them
        margin["t"] = int(margin.get("t", 0) or 0) + MODEBAR_PX
    else:
        margin["t"] = max(int(margin.get("t", 0) or 0), MODEBAR_PX + room if sub_lines else MODEBAR_PX)
    layout["margin"] = margin
    if layout.get("showlegend") is not False:
        legend = dict(layout.get("legend") or {})
        legend.update(orientation="h", xref="container", x=0, xanchor="left", yref="container", y=0,
                      yanchor="bottom")
        layout["legend"] = legend
    # x axis titles wrap to their panel's width; one said under several panels side by side is
    # said once, under the panel nearest the middle.
    x_titles: dict[str, list[tuple[float, str]]] = {}
    for name, axis in layout.items():
        if _AXIS.match(name) and name.startswith("x") and isinstance(axis, dict) and _title_text(axis.get("title")):
            lo, hi = (axis.get("domain") or [0, 1])[:2]
            x_titles.setdefault(_title_text(axis["title"]), []).append((abs((lo + hi) / 2 - 0.5), name))
    repeated = {name for same in x_titles.values() if len(same) > 1 for _, name in sorted(same)[1:]}
    for name, axis in list(layout.items()):
        if _AXIS.match(name) and isinstance(axis, dict):
            axis = dict(axis)
            axis.pop("tickangle", None)
            axis_title = axis.get("title")
            if name in repeated:
                axis["title"] = {**axis_title, "text": ""} if isinstance(axis_title, dict) else {"text": ""}
            elif _title_text(axis_title) and name.startswith("x"):
                lo, hi = (axis.get("domain") or [0, 1])[:2]
                wrapped = wrap(_title_text(axis_title), max(12, int(AXIS_TITLE_CHARS * (hi - lo))))
                axis["title"] = {**axis_title, "text": wrapped} if isinstance(axis_title, dict) else {"text": wrapped}
            axis.setdefault("automargin", True)
            layout[name] = axis
    return layout


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


def byte_colorscale(scale: list, gap_colour: str) -> list[list]:
    """`scale` (stops from 0 to 1) for a heatmap of bytes drawn with zmin=0, zmax=255, whose values
    1..255 stand for 0..1 and whose 0 means no cell (lib.lessons.attention.probabilities_as_bytes),
    drawn in `gap_colour`: a byte array has no NaN to leave a cell empty.

    Example: byte_colorscale([[0, "#fff"], [1, "#000"]], "#eee") ->
             [[0.0, "#eee"], [0.5/255, "#eee"], [1/255, "#fff"], [1.0, "#000"]]
    """
    return [[0.0, gap_colour], [0.5 / 255, gap_colour]] + [[(1 + float(s) * 254) / 255, c] for s, c in scale]


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
