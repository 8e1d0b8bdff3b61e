"""Charts that fit, in the real browser: on every lesson and the comparison page, at a laptop's
1400 x 900 and a phone's 390 x 844, no two text boxes inside one plotly chart overlap (legend
items, titles, subplot titles, axis titles, tick labels, annotations) and no text reaches outside
its chart (tests/e2e/chart_boxes.py measures them). The course's one layout rule is
ui.figures.laid_out.

One session in Italian (the longer words are the harder case; the layout does not depend on the
language), the sidebar's links as a learner goes; each page is scrolled through at both sizes so
every chart drawn on approach is drawn. A few minutes on the 2-core machine.
"""

from __future__ import annotations

import pytest

from tests.e2e import axe, chart_boxes
from tests.e2e.conftest import SERVER_WARM_TIMEOUT_MS, goto

pytestmark = pytest.mark.e2e

SIZES = {"laptop": (1400, 900), "phone": (390, 844)}


def test_no_chart_text_overlaps_or_overflows_on_a_laptop_or_a_phone(page, app_url):
    page.set_viewport_size({"width": SIZES["laptop"][0], "height": SIZES["laptop"][1]})
    goto(page, f"{app_url}/?lang=it", timeout=SERVER_WARM_TIMEOUT_MS)
    charts, found = 0, []
    for i, path in enumerate(axe.pages()):
        if path == "final":
            continue  # no charts
        if i:
            axe.visit(page, i, SERVER_WARM_TIMEOUT_MS)  # a lesson's first visit on this server computes it
        for name, (width, height) in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            axe.scroll_to_end(page, SERVER_WARM_TIMEOUT_MS)
            # plotly redraws a chart whose box changed width on the next animation frame
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            charts += chart_boxes.chart_count(page)
            found += [f"{path or 'numbers'} on a {name}: {c}" for c in chart_boxes.clashes(page)]
        page.set_viewport_size({"width": SIZES["laptop"][0], "height": SIZES["laptop"][1]})
    assert charts > 20  # the survey saw the lessons' charts
    assert not found, "\n".join(found)
