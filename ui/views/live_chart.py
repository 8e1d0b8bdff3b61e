"""Charts a slider redraws, updated in place in the browser.

Streamlit 1.67 derives a plotly chart's element id from its figure, so a chart whose figure changed
is a new element: the browser builds it from nothing (`Plotly.newPlot`, with its axes, mode bar and
layers), about 100 ms of the page's main thread per chart on the course's 2-core machine. A head
move on the attention lesson redrew three charts: 650 ms in Chromium, 298 ms with those three left
out (Chromium's timeline; the measurement is in the git history of docs/performance.md).

`live_chart` draws the same figure through a small inline component (Streamlit components v2, no
iframe) that keeps one chart per key and hands each new figure to `Plotly.react`, which updates the
chart in place. plotly.js is the vendored copy in static/vendor (scripts/vendor_js.sh, from the npm
registry at set-up, served by Streamlit at /app/static/vendor/; nothing from a CDN). Where it is
missing, `st.plotly_chart` draws the figure as before.

A chart far from the screen is drawn when the learner scrolls to it (an IntersectionObserver, 300 px
ahead), keeping its height meanwhile: a head move on the attention lesson redraws three charts of
which the learner sees one (plotly.js took 65 ms of the page's main thread per head move with all
three drawn, 39 ms with the one in sight; Chromium's CPU profile, 6-8 moves).

The same lazy drawing serves the charts no widget redraws but that sit below the first screen
(embeddings' norms, projection and sentences, the attention lesson's mask, cost and memory charts,
the block's diagram and residual heatmap...): st.plotly_chart drew every one of them at a lesson
switch, in long tasks of 0.3-0.6 s of the browser's main thread that held back the first screen
(embeddings: the title after 0.7 s, the page settled after 1.2 s, at the median of 8 switches; 0.34
and 0.52 s with those four charts here). Charts with a selection (the attention overview) stay
st.plotly_chart, which reports clicks.

Each chart is a `figure` named for a screen reader by what it shows (ui.views.export.chart_name), like
the charts st.plotly_chart draws (its `alt`).

The figure travels as plotly's JSON (`plotly.io.to_json`), like st.plotly_chart's spec; the
component's mode bar saves PNG or SVG like every other chart (ui/export.modebar_config).
"""

from __future__ import annotations

import json
from pathlib import Path

import plotly.graph_objects as go
import plotly.io
from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, to_typed_array_spec
import streamlit as st

from ui.views import browser

from ui.shell.core import t
from ui.views.export import chart_name, modebar_config
from ui.views.figures import PALETTE, Spec, localized

PLOTLY_FILE = Path(__file__).resolve().parents[2] / "static" / "vendor" / "plotly.min.js"
PLOTLY_URL = "/app/static/vendor/plotly.min.js"  # where Streamlit serves static/ (as bertviz's scripts)

# A look close to Streamlit's own theme for plotly (font, grid, no grey plot area), so these charts
# sit among the others: st.plotly_chart applies Streamlit's template in the browser, this cannot.
# Text follows the app's theme (.streamlit/config.toml); tick labels and axis titles are a grey of
# 6.8:1 on white (WCAG AA asks 4.5:1; Streamlit's lighter #808495 gives 3.7:1).
AXIS_TEXT = "#565a6b"
TEMPLATE = {
    "layout": {
        "font": {"family": '"Source Sans", "Source Sans Pro", sans-serif', "size": 14, "color": "#111111"},
        "paper_bgcolor": "rgba(0,0,0,0)", "plot_bgcolor": "rgba(0,0,0,0)",
        "xaxis": {"gridcolor": "#e6eaf1", "zerolinecolor": "#d5dae5", "linecolor": "#d5dae5", "automargin": True,
                  "tickfont": {"color": AXIS_TEXT}, "title": {"font": {"color": AXIS_TEXT}}},
        "yaxis": {"gridcolor": "#e6eaf1", "zerolinecolor": "#d5dae5", "linecolor": "#d5dae5", "automargin": True,
                  "tickfont": {"color": AXIS_TEXT}, "title": {"font": {"color": AXIS_TEXT}}},
        "hoverlabel": {"font": {"family": '"Source Sans", "Source Sans Pro", sans-serif'}},
        "colorway": PALETTE,  # colours apart with red-green deficiencies too (ui.views.figures.PALETTE)
    }
}

_JS = browser.script("live_chart")  # static/components/live_chart.js
_component = st.components.v2.component("itt_live_chart", js=_JS, isolate_styles=False)


def available() -> bool:
    return PLOTLY_FILE.is_file() and PLOTLY_FILE.stat().st_size > 0


def as_spec(figure) -> dict:
    """A figure's plotly JSON as a dict, to read only; a Spec's or a dict's as they are.

    A Figure's own parts are copied container by container, numpy arrays written as plotly's typed
    arrays, as `Figure.to_dict()` does, without its `deepcopy` of every value first (a tenth of a
    slider move's server CPU). The figure itself is left as it was."""
    if isinstance(figure, Spec) or not isinstance(figure, go.Figure):
        return figure.to_dict() if hasattr(figure, "to_dict") else dict(figure)
    spec = {"data": _typed(figure._data), "layout": _typed(figure._layout)}
    if figure._frame_objs:
        spec["frames"] = _typed([frame._props for frame in figure._frame_objs])
    return spec


def _typed(value):
    """New dicts and lists all the way down, homogeneous arrays as typed arrays
    (plotly's own `convert_to_base64`, which changes its argument in place)."""
    if isinstance(value, dict):
        return {k: (v if is_skipped_key(k) else to_typed_array_spec(v) if is_homogeneous_array(v) else _typed(v))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], (str, int, float)) and isinstance(value[-1], (str, int, float)):
            return value  # a list of labels or numbers (a heatmap's text): nothing inside to convert, shared
        return [_typed(v) for v in value]
    return value


def spec_json(figure) -> str:
    """The figure's plotly JSON with the course's template (numpy arrays as typed arrays)."""
    spec = localized(as_spec(figure), t("plot.separators"))
    layout = dict(spec.get("layout", {}), template=TEMPLATE)
    layout.setdefault("autosize", True)
    return plotly.io.to_json(dict(spec, layout=layout), validate=False)


def live_chart(figure, key: str, where=None) -> None:
    """Draw `figure` (a plotly Figure or its dict) under `key`, updated in place when it changes."""
    if not available():
        (where or st).plotly_chart(figure, key=key)  # named there too (ui.views.export)
        return
    spec = as_spec(figure)
    data = {"spec": spec_json(spec), "config": modebar_config(key), "src": PLOTLY_URL, "name": chart_name(spec, key),
            "height": spec.get("layout", {}).get("height") or 450}  # plotly's default height
    if where is None:
        _component(key=key, data=data)
    else:
        with where:
            _component(key=key, data=data)
