"""The KV-cache lesson in the real browser: move the context slider, see the numbers and the chart follow,
and the serving section far below once the learner scrolls to it.

The expected figures come from lib.arithmetic on the live model's own config.json, written the way
the page writes sizes (decimal units, three significant digits at most).
"""

from __future__ import annotations

import json

import pytest

from lib import i18n
from lib.arithmetic import kv_cache_bytes
from lib.models import converted_dir
from drivers.browser import CHARTS, APP_TIMEOUT_MS, goto, runs_of, slide, type_text

pytestmark = pytest.mark.e2e


def _size_en(b: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= scale:
            x = b / scale
            return f"{round(x, 2 if x < 10 else 1 if x < 100 else 0):g} {unit}"
    return f"{round(b)} B"


def test_context_slider_moves_the_numbers_and_the_chart(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    config = json.loads((converted_dir() / "config.json").read_text())
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/kvcache?lang=en")
    # The title is also a link in the sidebar: wait for the page's own heading.
    expect(page.locator("h1").first).to_have_text(en["lesson.kvcache.title"], timeout=APP_TIMEOUT_MS)

    per_user = page.locator('[data-testid="stMetric"]').filter(has_text=en["kvcache.per_user"]).first
    per_user.scroll_into_view_if_needed(timeout=APP_TIMEOUT_MS)
    expect(per_user).to_contain_text(_size_en(kv_cache_bytes(config, 8192)), timeout=APP_TIMEOUT_MS)
    chart = page.locator(CHARTS).first
    expect(chart.locator("svg.main-svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(chart).to_contain_text("8192", timeout=APP_TIMEOUT_MS)  # the chart's title names the context

    slider = page.locator('[data-testid="stSlider"]').filter(has_text=en["kvcache.context_pick"]).get_by_role("slider")
    slide(page, slider, "ArrowRight", "16K")  # 8K -> 16K
    expect(per_user).to_contain_text(_size_en(kv_cache_bytes(config, 16_384)), timeout=APP_TIMEOUT_MS)
    expect(chart).to_contain_text("16,384", timeout=APP_TIMEOUT_MS)
    number = page.locator('[data-testid="stNumberInput"]').filter(has_text=en["kvcache.context"]).locator("input")
    expect(number).to_have_value("16384", timeout=APP_TIMEOUT_MS)

    runs = runs_of(page)
    started = runs.started
    slide(page, slider, "End", "1M")  # the longest context on the slider: 1M tokens
    expect(per_user).to_contain_text(_size_en(kv_cache_bytes(config, 1_048_576)), timeout=APP_TIMEOUT_MS)
    expect(chart).to_contain_text("1,048,576", timeout=APP_TIMEOUT_MS)
    assert runs.started - started == 1, runs.history  # the calculator's section alone, one script run
    # Serving, far below, is priced at the new context once the learner reaches it (ui/follow.py).
    serve = page.locator(".st-key-kvcache-serve_box")
    serve.scroll_into_view_if_needed(timeout=APP_TIMEOUT_MS)
    flops = en["kvcache.serve.flops"]
    expect(serve).to_contain_text(flops[:flops.index("{tokens}")] + "1,048,576", timeout=APP_TIMEOUT_MS)
    number.scroll_into_view_if_needed(timeout=APP_TIMEOUT_MS)

    # A typed absurd context is clamped with a notice, never a traceback.
    type_text(page, number, "-7", submit="Enter")
    expect(page.get_by_text(en["kvcache.clamped"].split("{given}")[1].split("{used}")[0].strip()).first
           ).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(per_user).to_contain_text(_size_en(kv_cache_bytes(config, 1)), timeout=APP_TIMEOUT_MS)
    errors = page.locator('[data-testid="stException"]')
    assert errors.count() == 0, errors.first.inner_text()
