"""The sampling lesson in the real browser, with no internet.

The next-token view (static/views/sampling.js) answers temperature, top-k, top-p, the seed and the
draw in the browser: moving them sends the server nothing (no frame on the websocket), and the
chart, the metrics and the draw follow at once. "Generate" carries the browser's settings to the
server, which writes with them. A reload keeps the settings (the page store, in sessionStorage).
"""

from __future__ import annotations

import re

import pytest

from lib.course import i18n
from lib.course.quiz import format_number
from lib.lessons.sampling import seed_uniform
from drivers.browser import APP_TIMEOUT_MS, click, goto, runs_of, settle, share_link, slide

pytestmark = pytest.mark.e2e

VIEW = '[data-testid="ittView"][data-view="sampling"]'
# The 'after filters' bars as plotly.js holds them once drawn (_fullData: typed arrays decoded).
BARS = "el => Array.from(el.querySelector('.js-plotly-plot')._fullData[1].y)"


def test_the_filters_answer_in_the_browser_and_generate_carries_them(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/sampling?lang=en")
    expect(page.locator("h1").first).to_have_text(en["lesson.sampling.title"], timeout=APP_TIMEOUT_MS)
    view = page.locator(VIEW)
    expect(view).to_have_attribute("data-drawn", r'{"temperature":1,"top_k":50,"top_p":0.9,"seed":0}',
                                   timeout=APP_TIMEOUT_MS)
    settle(page)
    before = view.evaluate(BARS)
    assert len(before) == 20 and before[0] > 0
    # The views' stylesheet is applied (it sits inside the component's element: a view keeps it).
    assert view.locator(".itt-controls").evaluate("e => getComputedStyle(e).display") == "grid"
    # The chart is named for a screen reader, in the course's language.
    title = i18n.fill(en["sampling.chart.title"], n="20")
    expect(view.get_by_role("figure", name=title)).to_be_visible()
    sent = runs_of(page).sent

    # Temperature to 2 with the keyboard: the chart flattens, and the server hears nothing.
    temperature = view.get_by_role("slider", name=en["sampling.temperature"])
    temperature.focus()
    temperature.press("End")
    expect(temperature).to_have_value("2")
    expect(view).to_have_attribute("data-drawn", r'{"temperature":2,"top_k":50,"top_p":0.9,"seed":0}')
    assert view.evaluate(BARS)[0] < before[0]
    # Top-p to 0: one token left, said in the view.
    top_p = view.get_by_role("slider", name=en["sampling.top_p"])
    top_p.focus()
    top_p.press("Home")
    expect(view.locator(".itt-note")).to_have_text(en["sampling.top_p_zero"])
    assert view.evaluate(BARS)[0] == 1
    # A seed and a draw: the number lib draws from that seed, in the sentence under the chart.
    seed = view.get_by_role("spinbutton", name=en["sampling.seed"])
    seed.fill("123")
    view.get_by_role("button", name=en["sampling.sample.button"]).click()
    u = format_number(round(seed_uniform(123), 4), "en")
    expect(view.locator('[data-testid="sampling.result"]')).to_contain_text(f"Seed 123: the draw gives u = {u}")
    assert runs_of(page).sent == sent, "a view-only move sent something to the server"
    # The chart's table alternative: the same 20 candidates, best first.
    view.locator("details.itt-table > summary").click()
    rows = view.locator("details.itt-table tbody tr")
    expect(rows).to_have_count(20)
    assert rows.first.locator("th").inner_text() == view.evaluate(
        "el => el.querySelector('.js-plotly-plot')._fullLayout.xaxis.ticktext[0]").replace("&lt;", "<").replace("&gt;", ">")
    # The share dialog's link carries what only the browser knows.
    link = share_link(page, en["share.button"], r"temperature=2(&|$)")
    assert "seed=123" in link and "top_p=0" in link

    # Generate three tokens: the press carries the browser's settings (T = 2).
    steps = page.locator('[data-testid="stSlider"]').filter(has_text=en["sampling.gen.max_new"]).get_by_role("slider")
    slide(page, steps, "Home", "1")
    slide(page, steps, "ArrowRight", "2")
    slide(page, steps, "ArrowRight", "3")
    click(page, page.get_by_role("button", name=en["sampling.gen.button"]))
    expect(page.locator(".gen-chips").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    settings = i18n.fill(en["sampling.gen.settings"], temperature="2", top_k="50", top_p="0", seed="123")
    expect(page.get_by_text(settings.split(",")[0]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    # The step to inspect, in the browser (static/views/generation.js): the last step by keyboard,
    # its chart named for it, and nothing sent to the server.
    steps_view = page.locator('[data-testid="ittView"][data-view="generation"]')
    expect(steps_view).to_have_attribute("data-drawn", "1", timeout=APP_TIMEOUT_MS)
    settle(page)
    sent = runs_of(page).sent
    step = steps_view.get_by_role("slider", name=en["sampling.gen.step"])
    step.focus()
    step.press("End")
    expect(steps_view).to_have_attribute("data-drawn", "3")
    name = i18n.fill(en["sampling.gen.step_title"], step="3", token="", p="").split("“")[0]
    expect(steps_view.get_by_role("figure")).to_have_attribute("aria-label", re.compile("^" + re.escape(name)))
    assert runs_of(page).sent == sent, "a step move sent something to the server"

    # A reload finds the settings where the learner left them.
    page.reload()
    expect(page.locator(VIEW)).to_have_attribute("data-drawn", r'{"temperature":2,"top_k":50,"top_p":0,"seed":123}',
                                                 timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0
