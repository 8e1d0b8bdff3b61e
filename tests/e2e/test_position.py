"""The position lesson in the real browser, with no internet.

The RoPE view (static/views/position.js) answers the position m and its pair, the positions n and
m and their shift, the live head, its pair and queries or keys in the browser: moving them sends
the server nothing (no frame on the websocket), the charts follow at once, the angle heatmap
follows the m chosen above it (the page store). The share link carries the view's settings, and a
reload finds them where the learner left them.
"""

from __future__ import annotations

import math

import pytest

from lib.course import i18n
from lib.course.quiz import format_number
from drivers.browser import APP_TIMEOUT_MS, goto, runs_of, settle, share_link, slide

pytestmark = pytest.mark.e2e


def view(page, part: str):
    return page.locator(f'[data-testid="ittView"][data-view="position.{part}"]')


def rotation_title(lang: str, m: int, pair: int = 0) -> str:
    """The chart's name as the view writes it for the built-in model (pair 0: θ = 1 rad per token)."""
    angle = m * 1.0

    def num(x, digits=None):
        return format_number(round(x, digits) if digits is not None else x, lang)

    return i18n.fill(i18n.ui(lang)["position.rot.title"], pair=num(pair), m=num(m), angle=num(angle, 2),
                     turns=num(angle / (2 * math.pi), 2), period=num(2 * math.pi, 1))


def test_the_rope_view_answers_in_the_browser(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/position?lang=en", en["lesson.position.title"])
    rotation = view(page, "rotation")
    expect(rotation).to_have_attribute("data-drawn", '{"m":5,"pair":0}', timeout=APP_TIMEOUT_MS)
    expect(view(page, "live")).to_have_attribute("data-drawn", '{"head":0,"live_pair":0,"which":"q"}',
                                                 timeout=APP_TIMEOUT_MS)
    settle(page)
    sent = runs_of(page).sent

    # The position with the keyboard: the pair turns, the chart's name says the new angle, the
    # angle heatmap below the prose follows.
    m = rotation.get_by_role("slider", name=en["position.position"])
    m.focus()
    m.press("ArrowRight")
    m.press("ArrowRight")
    expect(m).to_have_value("7")
    expect(rotation).to_have_attribute("data-drawn", '{"m":7,"pair":0}')
    expect(rotation.get_by_role("figure")).to_have_attribute("aria-label", rotation_title("en", 7))
    expect(view(page, "angles")).to_have_attribute("data-drawn", '{"m":7}')
    # Its table: one row per pair, the angle of pair 0 at m = 7 (7 mod 2π).
    rotation.locator("details.itt-table > summary").click()
    rows = rotation.locator("details.itt-table tbody tr")
    expect(rows).to_have_count(32)
    assert rows.first.locator("td").nth(1).inner_text() == format_number(round(7 % (2 * math.pi), 4), "en")

    # Positions typed past the context are brought back, with a notice; the shifted score is the same.
    relative = view(page, "relative")
    n = relative.get_by_role("spinbutton", name=en["position.n"])
    n.fill("50000")
    expect(n).to_have_value("8191")
    expect(relative.locator(".itt-note")).to_contain_text(i18n.fill(en["position.clamped_position"], asked="50,000",
                                                                     value="8191", limit="8192"))
    expect(relative).to_have_attribute("data-drawn", '{"n":8191,"k":3,"shift":0}')
    before = relative.locator('[data-testid="position.score_before"]').inner_text()
    assert before == relative.locator('[data-testid="position.score_after"]').inner_text()

    # The live layer: the last head, its keys.
    live = view(page, "live")
    head = live.get_by_role("slider", name=en["position.head"])
    head.focus()
    head.press("End")
    expect(head).to_have_value("8")
    live.get_by_role("radio", name=en["position.which.k"]).check()
    expect(live).to_have_attribute("data-drawn", '{"head":8,"live_pair":0,"which":"k"}')
    assert runs_of(page).sent == sent, "a view-only move sent something to the server"
    # The head's three panels painted on their canvases: one row per token; at position 0 RoPE
    # turns nothing, so the first token's row is the same before and after, and its change is 0
    # (the middle of the change's colour range).
    before, after, change = live.locator("canvas.itt-cells").evaluate_all("cs => cs.map(c => c.__ittCells)")
    assert len(before) == len(after) == len(change) > 1
    assert before[0] == after[0] and before[1] != after[1]
    assert change[0] == [0.5] * len(change[0])

    # The layer needs the server (its vectors are sent one layer at a time): the view is rebuilt
    # for layer 3 with the learner's head and vectors kept.
    layer = page.locator('[data-testid="stSlider"]').filter(has_text=en["position.layer"]).get_by_role("slider")
    slide(page, layer.first, "ArrowRight", "3")
    heat = i18n.fill(en["position.heat.title"], vector=en["position.which.k"], layer="3", head="8")
    expect(live.get_by_role("figure").nth(1)).to_have_attribute("aria-label", heat, timeout=APP_TIMEOUT_MS)
    expect(live).to_have_attribute("data-drawn", '{"head":8,"live_pair":0,"which":"k"}')

    # The share dialog's link carries what only the browser knows.
    link = share_link(page, en["share.button"], r"[?&]m=7(&|$)")
    for part in ("n=8191", "head=8", "which=k", "layer=3"):
        assert part in link, part

    # A reload finds the settings where the learner left them.
    page.reload()
    expect(view(page, "rotation")).to_have_attribute("data-drawn", '{"m":7,"pair":0}', timeout=APP_TIMEOUT_MS)
    expect(view(page, "live")).to_have_attribute("data-drawn", '{"head":8,"live_pair":0,"which":"k"}',
                                                 timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0
