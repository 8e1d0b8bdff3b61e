"""Figures and data out, in the real browser with no internet.

A figure of the first lesson saves as PNG from plotly's own mode bar; with SVG chosen in the
sidebar, the same button saves an SVG drawing; the capture of the text downloads as CSV. Every
file is made on this machine (the `page` fixture fails the test on any outside request).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, click, goto

pytestmark = pytest.mark.e2e


def _save_from_modebar(page, chart, title: str) -> bytes:
    from playwright.sync_api import expect

    chart.scroll_into_view_if_needed()
    chart.hover()
    button = chart.locator(f'.modebar-btn[data-title="{title}"]')
    expect(button).to_be_visible(timeout=APP_TIMEOUT_MS)
    with page.expect_download(timeout=APP_TIMEOUT_MS) as info:
        button.click()
    return Path(info.value.path()).read_bytes()


def test_figure_as_png_and_svg_and_capture_as_csv(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/?lang=en", en["lesson.numbers.title"])
    chart = page.locator(".st-key-numbers-params_chart")
    expect(chart.locator("svg.main-svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    png = _save_from_modebar(page, chart, "Download plot as a PNG")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000

    sidebar = page.locator('[data-testid="stSidebar"]')
    click(page, sidebar.get_by_text(en["export.title"]), rerun=False)
    click(page, sidebar.get_by_text("SVG", exact=True))
    chart = page.locator(".st-key-numbers-params_chart")
    expect(chart.locator("svg.main-svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    svg = _save_from_modebar(page, chart, "Download plot").decode("utf-8")
    assert svg.lstrip().startswith("<svg") and "</svg>" in svg
    assert en["params.title"].split("{")[0] in svg  # the figure itself, drawn as text in the drawing

    with page.expect_download(timeout=APP_TIMEOUT_MS) as info:
        sidebar.get_by_role("button", name="CSV").click()
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
    assert len(rows) > 3 and {"token", "top1_token", "top1_prob", "resid_norm_0"} <= set(rows[0])
    assert all(0 < float(r["top1_prob"]) <= 1 for r in rows)
    assert page.locator('[data-testid="stException"]').count() == 0
