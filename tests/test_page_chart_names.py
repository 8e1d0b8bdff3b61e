"""Every chart of every lesson has an accessible name that says what it shows, in the course's language.

A screen reader announces a chart by that name (st.plotly_chart's `alt`, ui.views.live_chart's `aria-label`);
plotly.js itself names nothing. The name is the chart's description from the labels, or its title,
then its axes (ui.views.export.chart_name).
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from lib.model.models import DEFAULT_MODEL
from tests.renders import walk

# The sampling lesson's charts are drawn by its browser view, named there (role figure, aria-label:
# tests/e2e/test_sampling.py); only its generation's charts are Streamlit's, after a press.
PAGES = ["pages/01_numbers.py", "pages/02_tokenization.py", "pages/03_embeddings.py", "pages/04_position.py",
         "pages/05_attention.py", "pages/06_block.py", "pages/08_kvcache.py",
         "pages/10_compare.py"]


@pytest.mark.parametrize("page", PAGES)
def test_every_chart_is_named_in_italian(page):
    """Read from one session that visits every page (tests/renders.py)."""
    render = walk("it", DEFAULT_MODEL, i18n.ui("it")["text.example"])[page]
    assert not render.exception, render.exception
    names = render.chart_names
    assert names, "the page drew no chart"
    for key, name in names.items():
        print(f"{page} {key}: {name}")
    unnamed = [k for k, v in names.items() if not v.strip() or v == i18n.ui("it")["chart.unnamed"]]
    assert not unnamed, unnamed
    english = {k: v for k, v in names.items() if i18n.ui("en")["chart.axes"].split("{")[0] in v}
    assert not english, english  # the axes' sentence is the course's language


def test_the_name_is_the_description_or_the_title_then_the_axes():
    from ui.views.figures import accessible_name

    spec = {"layout": {"title": {"text": "<b>Head 3</b><br>layer 2"}, "xaxis": {"title": "key"},
                       "yaxis": {"title": {"text": "query"}}}}
    assert accessible_name(spec, None, "{y} by {x}") == "Head 3 layer 2. query by key"  # tags become spaces
    assert accessible_name(spec, "A heatmap", "{y} by {x}") == "A heatmap. query by key"
    assert accessible_name({"layout": {"xaxis": {"title": "x"}}}, None, "{y} by {x}") == ""  # one axis says little
    assert accessible_name({}, None, "{y} by {x}") == ""
