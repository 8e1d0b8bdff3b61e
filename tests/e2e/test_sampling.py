"""The sampling lesson in the real browser, with no internet.

Generate a few tokens, then move the temperature slider: the bar chart's data changes while the
generated text and its measured times stay exactly as they were, so the slider re-drew the chart
from the cached capture and the stored generation instead of running the model again.
"""

from __future__ import annotations

import pytest

from lib import i18n
from drivers.browser import CHARTS, APP_TIMEOUT_MS, click, goto, settle, slide

pytestmark = pytest.mark.e2e

# The 'after filters' bars as plotly.js holds them once drawn (_fullData: typed arrays decoded).
BARS = "el => Array.from(el.querySelector('.js-plotly-plot')._fullData[1].y)"


def slider(page, label: str):
    return page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider").first


def metric_value(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def test_generate_then_temperature_redraws_the_chart_without_a_model_run(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/sampling?lang=en")
    # The title is also a link in the sidebar: wait for the page's own heading, then its chart
    # (the first visit loads the model and runs the capture).
    expect(page.locator("h1").first).to_have_text(en["lesson.sampling.title"], timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0
    chart = page.locator(CHARTS).first
    expect(chart).to_be_attached(timeout=APP_TIMEOUT_MS)
    chart.scroll_into_view_if_needed(timeout=APP_TIMEOUT_MS)
    expect(chart.locator("svg.main-svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    before = chart.evaluate(BARS)
    assert len(before) == 20 and before[0] > 0

    # Generate three tokens.
    steps = slider(page, en["sampling.gen.max_new"])
    slide(page, steps, "Home", "1")  # 1 token
    slide(page, steps, "ArrowRight", "2")
    slide(page, steps, "ArrowRight", "3")  # 3 tokens
    click(page, page.get_by_role("button", name=en["sampling.gen.button"]))
    chips = page.locator(".gen-chips").first
    expect(chips).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(page.get_by_text(en["sampling.gen.ttft"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    written = chips.inner_text()
    ttft = metric_value(page, en["sampling.gen.ttft"])
    per_token = metric_value(page, en["sampling.gen.per_token"])
    assert ttft.endswith("ms") and per_token.endswith("ms")

    # Move the temperature to 2: the chart changes, the generation does not run again.
    temperature = slider(page, en["sampling.temperature"])
    slide(page, temperature, "End", "2")
    page.wait_for_function(
        "([sel, before]) => { const el = document.querySelectorAll(sel)[0];"
        " const d = el && el.querySelector('.js-plotly-plot');"
        " return d && d._fullData && Array.from(d._fullData[1].y)[0] < before[0] - 1e-6; }",
        arg=[CHARTS, before], timeout=APP_TIMEOUT_MS)
    settle(page)
    after = chart.evaluate(BARS)
    assert after[0] < before[0]  # a hotter temperature flattens the favourite
    assert page.locator(".gen-chips").first.inner_text() == written
    assert metric_value(page, en["sampling.gen.ttft"]) == ttft  # the same measurement: no new run
    assert metric_value(page, en["sampling.gen.per_token"]) == per_token
    assert page.locator('[data-testid="stException"]').count() == 0
