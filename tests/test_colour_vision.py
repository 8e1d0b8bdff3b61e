"""Colours of the key charts, as a learner with protanopia or deuteranopia sees them.

lib.lessons.colour_vision simulates both deficiencies (Machado et al. 2009, severity 1.0) and measures
CIEDE2000 differences. The classes a chart encodes must stay apart by at least MIN_DELTA_E after the
simulation; a sequential scale must keep its order in lightness (so it reads even without colour);
a diverging one must keep its two ends apart and grow lighter from each end to the middle. A pair
that a simulation merges may stay only if its meaning is carried by a symbol too (the quiz verdicts).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from plotly.colors import get_colorscale

from lib.lessons import colour_vision as cv

MIN_DELTA_E = 10.0  # CIEDE2000: about 1 is just noticeable; 10 reads as another colour at a glance
VISIONS = (None, *cv.KINDS)  # full colour vision, then the two deficiencies


# --------------------------------------------------------------------------- the module itself


def test_ciede2000_matches_sharma_wu_dalal_test_data():
    """Pairs from the published CIEDE2000 test data (Sharma, Wu & Dalal 2005, Table 1)."""
    lab1 = [[50.0, 2.6772, -79.7751], [50.0, 0.0, 0.0], [50.0, 2.5, 0.0], [50.0, 2.49, -0.001],
            [60.2574, -34.0099, 36.2677], [22.7233, 20.0904, -46.6940]]
    lab2 = [[50.0, 0.0, -82.7485], [50.0, -1.0, 2.0], [73.0, 25.0, -18.0], [50.0, -2.49, 0.0009],
            [60.4626, -34.1751, 39.4387], [23.0331, 14.9730, -42.5619]]
    np.testing.assert_allclose(cv.delta_e(lab1, lab2), [2.0425, 2.3669, 27.1492, 7.1792, 1.2644, 2.0373], atol=1e-4)


def test_simulation_keeps_greys_and_merges_red_with_green():
    greys = ["#000000", "#777777", "#ffffff"]
    for kind in cv.KINDS:
        np.testing.assert_allclose(cv.simulate(greys, kind), cv.rgb(greys), atol=1e-3)  # rows of each matrix sum to 1
        # The textbook confusion: a red and a green of similar lightness become nearly one colour.
        assert cv.distance("#d62728", "#2ca02c") > 2 * cv.distance("#d62728", "#2ca02c", kind)
    # Blue against yellow survives both (the axis a red-green deficiency keeps).
    assert min(cv.distance("#0072B2", "#F0E442", k) for k in cv.KINDS) > 40


def test_lab_of_white_and_black():
    np.testing.assert_allclose(cv.lab(cv.rgb(["#ffffff", "#000000"])), [[100, 0, 0], [0, 0, 0]], atol=1e-2)


# --------------------------------------------------------------------------- the course's charts


def _stops(scale) -> list[str]:
    return [c for _, c in scale]


def _apart(colours, kind) -> list[tuple]:
    return [(a, b, round(cv.distance(a, b, kind), 1)) for a, b in itertools.combinations(colours, 2)
            if cv.distance(a, b, kind) < MIN_DELTA_E]


@pytest.mark.parametrize("kind", VISIONS)
def test_categorical_palette_stays_apart(kind):
    """Every pair of the course's categorical colours (lines, bars, KV groups), and the template's
    colour order for traces with no colour of their own."""
    from ui.views.figures import PALETTE
    from ui.views.live_chart import TEMPLATE

    assert not _apart(PALETTE, kind)
    assert TEMPLATE["layout"]["colorway"] == PALETTE


@pytest.mark.parametrize("kind", VISIONS)
def test_classes_drawn_together_stay_apart(kind):
    """Classes drawn side by side in one chart, each against the others."""
    from ui.lessons.attention.figures import FLASH_COLOURS
    from ui.lessons.sampling.figures import GREY
    from ui.views.figures import PALETTE

    sets = {
        # sampling: the model's bars, the filtered bars, the cumulative line, the top-p cut
        "sampling.dist_chart": [GREY, PALETTE[0], PALETTE[1], PALETTE[3]],
        # block: attention's and the MLP's contributions, the stream itself
        "block.contrib_chart": [PALETTE[1], PALETTE[2], PALETTE[0]],
        # kv cache: weights, cache, the card's line
        "kvcache.calc_chart": [PALETTE[0], PALETTE[1], PALETTE[3]],
        # the attention mask: hidden against visible
        "attention.mask_chart": ["#eeeeee", PALETTE[0]],
    }
    sets["attention.flash_chart"] = list(FLASH_COLOURS)  # the tiles: to do, skipped, done, current
    bad = {name: _apart(colours, kind) for name, colours in sets.items() if _apart(colours, kind)}
    assert not bad, bad


def _sequential_ok(colours, kind) -> None:
    light = cv.lightness(colours, kind)
    steps = np.diff(light)
    assert np.all(steps < 0) or np.all(steps > 0), light.round(1)  # one direction: lightness carries the order
    assert cv.distance(colours[0], colours[-1], kind) >= 2 * MIN_DELTA_E


@pytest.mark.parametrize("kind", VISIONS)
def test_sequential_scales_keep_their_order_in_lightness(kind):
    """The attention heatmap's blues, the residual stream's viridis, the logit lens's light blues,
    the generated tokens' and the surprise chips' white-to-colour blends."""
    from ui.lessons.attention.figures import COLORSCALE
    from ui.lessons.sampling.sections import GEN_RGB, LOSS_RGB

    _sequential_ok(_stops(COLORSCALE), kind)
    _sequential_ok(_stops(get_colorscale("Viridis")), kind)
    _sequential_ok(["#F7FBFF", "#6BAED6"], kind)
    for end in (GEN_RGB, LOSS_RGB):
        _sequential_ok([tuple(255 + f * (c - 255) for c in end) for f in np.linspace(0, 1, 6)], kind)


@pytest.mark.parametrize("kind", VISIONS)
def test_diverging_scale_keeps_its_two_signs_apart(kind):
    """RdBu (embeddings' rows, cosines, the block's neurons, positions): a negative and a positive
    value of the same size look different (the ends, and each pair of stops mirrored about the
    middle), and each side grows lighter towards zero."""
    stops = _stops(get_colorscale("RdBu"))
    n = len(stops)
    for i in range(n // 2):
        assert cv.distance(stops[i], stops[n - 1 - i], kind) >= MIN_DELTA_E, (i, stops[i], stops[n - 1 - i])
    light = cv.lightness(stops, kind)
    assert np.all(np.diff(light[: n // 2 + 1]) > 0) and np.all(np.diff(light[n // 2:]) < 0), light.round(1)


def test_quiz_verdicts_are_marked_by_a_symbol_where_their_colours_merge():
    """Streamlit's green and red boxes (its light theme's defaults) come within MIN_DELTA_E of each
    other for a learner with deuteranopia: the verdicts carry ✅ and ❌ as well as their words."""
    import inspect

    from ui.learner import quiz_widget

    green, red = "#079464", "#d94a57"
    merged = [k for k in cv.KINDS if cv.distance(green, red, k) < MIN_DELTA_E]
    src = inspect.getsource(quiz_widget)
    if merged:
        assert 'icon="✅"' in src and 'icon="❌"' in src, merged
