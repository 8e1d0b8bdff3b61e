"""The position lesson in the real browser: moving the position slider turns the pair in the rotation plot."""

from __future__ import annotations

import math

import pytest

from lib import i18n
from lib.quiz import format_number
from drivers.browser import CHARTS, APP_TIMEOUT_MS, goto, loose, slide

pytestmark = pytest.mark.e2e


def rotation_title(lang: str, m: int, pair: int = 0) -> str:
    """The plot's title as the page writes it for the built-in model (pair 0: θ = 1 rad per token)."""
    angle = m * 1.0

    def num(x, digits=None):
        return format_number(round(x, digits) if digits is not None else x, lang)

    return i18n.fill(i18n.ui(lang)["position.rot.title"], pair=num(pair), m=num(m), angle=num(angle, 2),
                     turns=num(angle / (2 * math.pi), 2), period=num(2 * math.pi, 1))


def test_position_slider_turns_the_pair(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/position?lang=en", en["lesson.position.title"])
    box = page.locator(".st-key-position-rotation_chart")  # drawn once in sight (ui.live_chart)
    box.scroll_into_view_if_needed()
    chart = page.locator(CHARTS).filter(has_text=loose(rotation_title("en", 5)))
    expect(chart.first.locator("svg.main-svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    # Trace 2 of the figure is the arrow to the pair's point at position m.
    arrow_before = chart.first.locator("g.trace.scatter").nth(2).inner_html()

    slider = page.locator('[data-testid="stSlider"]').filter(has_text=en["position.position"]).get_by_role("slider")
    slide(page, slider.first, "ArrowRight", "6")
    slide(page, slider.first, "ArrowRight", "7")
    expect(page.get_by_text(loose(rotation_title("en", 7)))).to_be_visible(timeout=APP_TIMEOUT_MS)
    moved = page.locator(CHARTS).filter(has_text=loose(rotation_title("en", 7))).first
    expect(moved.locator("svg.main-svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert moved.locator("g.trace.scatter").nth(2).inner_html() != arrow_before  # the arrow turned
    assert page.locator('[data-testid="stException"]').count() == 0
