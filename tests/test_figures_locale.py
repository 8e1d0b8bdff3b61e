"""Numbers in charts are written the language's way: Italian decimal commas, powers of ten."""

from __future__ import annotations

import json

import pytest

from lib.course import i18n
from tests.apptest import start
from ui.views.figures import localized


def test_localized_copies_and_keeps_a_figures_own_choices():
    spec = {"data": [], "layout": {"xaxis": {"title": "x"}, "yaxis2": {"exponentformat": "e"}, "separators": ".,"}}
    out = localized(spec, ",.")
    assert out["layout"]["xaxis"]["exponentformat"] == "power"
    assert out["layout"]["xaxis"]["title"]["text"] == "x"
    assert out["layout"]["yaxis2"]["exponentformat"] == "e"  # the figure's own choice
    assert out["layout"]["separators"] == ".,"
    assert spec["layout"]["xaxis"] == {"title": "x"}  # never changed in place (cached figures are shared)
    bare = localized({"data": []}, ",.")["layout"]
    assert (bare["xaxis"]["exponentformat"], bare["yaxis"]["exponentformat"], bare["separators"]) == ("power", "power", ",.")


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_every_chart_of_a_lesson_uses_the_languages_separators(lang):
    at = start(lang)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    specs += [json.loads(json.loads(c.proto.json)["spec"]) for c in at.get("bidi_component")
              if c.proto.component_name == "itt_live_chart"]
    assert specs
    for spec in specs:
        assert spec["layout"]["separators"] == i18n.ui(lang)["plot.separators"]
        assert spec["layout"]["xaxis"]["exponentformat"] == "power"
