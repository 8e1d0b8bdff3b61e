"""What a learner who relies on assistive technology, a phone or the keyboard gets, in the real browser.

- axe-core's WCAG 2.1 A/AA rules find no critical and no serious violation on any page of the
  navigation in Italian, scrolled to its end (the charts drawn on approach drawn): read from the
  shared walk. English, the second model, bertviz's views, a chart as a table and the document's
  language: tests/e2e/test_axe_more.py, on another worker. docs/accessibility.md lists the counts.
- On a phone (390 x 844) and a tablet (768 x 1024) no page scrolls sideways, neither the document
  nor Streamlit's main container, once scrolled to its end: wide content scrolls in its own box.

The Italian axe survey, the charts' names and the sideways check read one shared walk through the
pages (the `italian_walk` fixture, tests/e2e/walk.py), with test_chart_layout.py: the pages are
opened and drawn once for all four.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers import axe
from tests.e2e import walk
from drivers.axe import need_axe, serious

pytestmark = pytest.mark.e2e


def test_every_page_passes_axe_wcag21_aa_in_italian(italian_walk):
    """The shared Italian walk ran axe on each page at this page's size (1280 x 900), scrolled to its
    end (English: tests/e2e/test_axe_more.py)."""
    need_axe()
    found = italian_walk.axe
    assert len(found) == len(axe.pages())
    bad = serious(found)
    assert not bad, "\n".join(bad)


SIZES = {"phone": (390, 844), "tablet": (768, 1024)}


def test_no_page_scrolls_sideways_on_phones_and_tablets(italian_walk):
    """Every page of the navigation at both sizes, in Italian (the layout does not depend on the
    language; the longer Italian words are the harder case), each scrolled to its end at that size
    in the shared walk."""
    assert walk.SIZES["phone"] == SIZES["phone"] and walk.SIZES["tablet"] == SIZES["tablet"]
    wide = []
    for path in axe.pages():
        for name, (width, height) in SIZES.items():
            over = italian_walk.sideways[path, name]
            if over["document"] > 0 or over["main"] > 0:
                wide.append(f"{path or 'numbers'} on a {name} ({width} x {height}): {over}")
    assert not wide, "\n".join(wide)



@pytest.mark.parametrize("path", ["", "attention"])
def test_every_chart_has_an_accessible_name(italian_walk, path):
    """Every chart on the numbers lesson (st.plotly_chart) and on the attention lesson (the overview
    by st.plotly_chart, the live charts by ui.views.live_chart), scrolled to its end, is a figure a screen
    reader announces by what it shows, in the course's language. (Read at 1280 x 900 in the shared
    walk: Playwright's computed role "figure" and an accessible name of a word or more, per chart.)"""
    assert path in walk.NAMED
    found = italian_walk.names[path]
    names = found["names"]
    assert len(names) >= 2
    assert not found["problems"], "\n".join(found["problems"])
    axes = i18n.ui("it")["chart.axes"].split("{")[0]
    assert any(axes in n for n in names), names  # in Italian
    assert i18n.ui("it")["chart.unnamed"] not in names
