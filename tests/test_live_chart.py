"""ui.views.live_chart: the figure it sends, and st.plotly_chart where plotly.js was not vendored."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go

from lib.course import i18n
from tests.apptest import chart, chart_keys, plotly_array, start


def test_spec_is_the_figures_json_with_the_course_template():
    from ui.views import live_chart

    z = np.arange(6, dtype=np.float32).reshape(2, 3)
    fig = go.Figure(go.Heatmap(z=z), layout=dict(title=dict(text="t"), height=300))
    spec = json.loads(live_chart.spec_json(fig))
    np.testing.assert_array_equal(plotly_array(spec["data"][0]["z"]), z)
    assert spec["layout"]["title"]["text"] == "t" and spec["layout"]["height"] == 300
    assert spec["layout"]["template"] == live_chart.TEMPLATE  # not plotly.py's default look
    # A cached dict (ui.views.figures.Spec) is read, never changed.
    shared = fig.to_dict()
    before = json.dumps(shared, default=str)
    live_chart.spec_json(shared)
    assert json.dumps(shared, default=str) == before


def test_a_figure_is_read_as_plotlys_own_dict_without_changing_it():
    """as_spec: the same JSON as Figure.to_dict() (typed arrays included), the figure untouched."""
    import plotly.io

    from ui.views import live_chart

    z = np.arange(12, dtype=np.float64).reshape(3, 4)
    fig = go.Figure(go.Heatmap(z=z, text=[["a", "b", "c", "d"]] * 3, customdata=z.astype(np.int32)),
                    layout=dict(title=dict(text="t"), annotations=[dict(text="n", x=1, y=2)],
                                shapes=[dict(type="line", x0=0, x1=1, y0=0, y1=1)]))
    fig.add_trace(go.Scatter(x=np.arange(4), y=[1, 2, 3, 4], marker=dict(color=np.arange(4.0)), name="s"))
    ours = plotly.io.to_json(live_chart.as_spec(fig), validate=False)
    assert ours == plotly.io.to_json(fig.to_dict(), validate=False)
    assert '"bdata"' in ours  # numpy arrays as plotly's typed arrays, as to_dict writes them
    assert isinstance(fig.data[0].z, np.ndarray) and isinstance(fig.data[1].marker.color, np.ndarray)


def test_the_vendored_plotly_is_served_from_static():
    from ui.views import live_chart

    assert live_chart.PLOTLY_URL == "/app/static/vendor/" + live_chart.PLOTLY_FILE.name  # static/ is served there
    assert live_chart.PLOTLY_FILE.name == "plotly.min.js"


def test_a_page_falls_back_to_st_plotly_chart_without_plotly_js(monkeypatch, tmp_path):
    from ui.views import live_chart

    monkeypatch.setattr(live_chart, "PLOTLY_FILE", tmp_path / "missing.js")
    at = start("en", "pages/03_embeddings.py", text=i18n.ui("en")["text.example"])
    assert not at.exception, at.exception
    assert any(c.proto.id.endswith("-embeddings.cosine_chart") for c in at.get("plotly_chart"))
    assert "embeddings.cosine_chart" in chart_keys(at) and chart(at, "embeddings.cosine_chart")["data"]


def test_with_plotly_js_the_page_sends_a_live_chart(monkeypatch, tmp_path):
    from ui.views import live_chart

    fake = tmp_path / "plotly.min.js"
    fake.write_text("/* plotly */")
    monkeypatch.setattr(live_chart, "PLOTLY_FILE", fake)
    at = start("en", "pages/03_embeddings.py", text=i18n.ui("en")["text.example"])
    assert not at.exception, at.exception
    assert not any(c.proto.id.endswith("-embeddings.cosine_chart") for c in at.get("plotly_chart"))
    live = [c for c in at.get("bidi_component") if c.proto.id.endswith("-embeddings.cosine_chart")]
    assert len(live) == 1
    data = json.loads(live[0].proto.json)
    assert data["src"] == live_chart.PLOTLY_URL and data["config"]["toImageButtonOptions"]["filename"]
    assert json.loads(data["spec"])["data"][0]["type"] == "heatmap"
