"""Charts that fit, in the real browser: on every lesson and the comparison page, at a laptop's
1400 x 900 and a phone's 390 x 844, no two text boxes inside one plotly chart overlap (legend
items, titles, subplot titles, axis titles, tick labels, annotations) and no text reaches outside
its chart (tests/e2e/chart_boxes.py measures them). The course's one layout rule is
ui.views.figures.laid_out.

One session in Italian (the longer words are the harder case; the layout does not depend on the
language), the sidebar's links as a learner goes; each page is scrolled through at both sizes so
every chart drawn on approach is drawn. That session is the walk the accessibility tests read too
(the `italian_walk` fixture, tests/e2e/walk.py): the pages are opened and drawn once for all.
"""

from __future__ import annotations

import pytest

from drivers import axe

from tests.e2e import walk

pytestmark = pytest.mark.e2e

SIZES = {"laptop": (1400, 900), "phone": (390, 844)}


def test_no_chart_text_overlaps_or_overflows_on_a_laptop_or_a_phone(italian_walk):
    """Read from the shared walk (tests/e2e/walk.py): each page scrolled to its end at each size."""
    assert all(walk.SIZES[name] == size for name, size in SIZES.items())
    charts, found = 0, []
    for path in axe.pages():
        if path == "final":
            continue  # no charts
        for name in SIZES:
            charts += italian_walk.charts[path, name]
            found += [f"{path or 'numbers'} on a {name}: {c}" for c in italian_walk.clashes[path, name]]
    assert charts > 20  # the survey saw the lessons' charts
    assert not found, "\n".join(found)
