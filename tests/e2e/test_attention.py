"""The attention lesson in the real browser, with no internet.

A learner types a text holding an HTML tag, opens the lesson, picks a head with the slider and
by clicking its thumbnail in the overview, and sees the heatmap and, once opened, both bertviz
views drawn. The sections further down that draw the head (the formula, the mask, flash
attention) follow it in the browser, and their tabs, tile size and tile step send nothing.
The token `<img src=x onerror=alert(1)>` must show as characters and run nothing: no dialog, no
image element. The `page` fixture fails the test if any request left this machine.
"""

from __future__ import annotations

import re

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, click, goto, runs_of, selects, settle, type_text

pytestmark = pytest.mark.e2e

XSS = "Il gatto <img src=x onerror=alert(1)> dorme"


def test_pick_a_head_and_see_heatmap_and_bertviz(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/?lang=en", en["lesson.numbers.title"])
    type_text(page, page.locator('[data-testid="stSidebar"] textarea').first, XSS, submit="Control+Enter")
    click(page, page.locator('[data-testid="stSidebarNav"] a', has_text=en["lesson.attention.title"]).first)
    expect(page.get_by_text(en["attention.live.header"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)

    # The heatmap of layer 15, head 0; the token with the tag is a label, drawn as text. It is a
    # browser view (static/views/attention.js) holding every head of the layer.
    heatmap = page.locator('[data-testid="ittView"][data-view="attention"]')
    title = en["attention.heatmap_title"]
    expect(heatmap.get_by_text(i18n.fill(title, layer="15", head="0"))).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert heatmap.locator(".itt-controls").evaluate("e => getComputedStyle(e).display") == "grid"  # styled
    labels = " ".join(heatmap.locator("svg text").all_text_contents())
    assert "<" in labels and "img" in labels
    # The overview just below is worked out once the learner reaches it (ui.views.follow.when_reached; with
    # the heatmap still drawing it may be in reach at once): scrolled to, it comes, and its run is
    # over before the learner's first move is counted.
    overview = page.locator(".st-key-attention-overview_box")
    overview.scroll_into_view_if_needed()
    expect(overview).not_to_contain_text(en["app.section_pending"], timeout=APP_TIMEOUT_MS)
    # The sections below worked out when reached (the scaling demo, GQA, the cost) are reached
    # once, so that the moves counted below find nothing owed to them.
    for part in ("formula", "scaling", "mask", "flash"):  # the scaling view is in its when-reached box
        where = ".st-key-attention-scaling_box" if part == "scaling" else f'[data-view="attention_steps.{part}"]'
        page.locator(where).scroll_into_view_if_needed()
        settle(page, sections=True)
    heatmap.scroll_into_view_if_needed()
    settle(page, sections=True)

    # Pick the last head (8) with the keyboard on the head slider: answered in the browser from the
    # data already sent, the heatmap updated in place (Plotly.react on the same element: the view was
    # not rebuilt from new data). A section below that follows the head and is within reach may ask
    # for its own run (ui/views/follow.py): the view's own section is not rerun.
    heatmap.locator(".js-plotly-plot").first.evaluate("e => { e.dataset.ittBefore = 'yes'; }")
    sent = runs_of(page).sent
    head = heatmap.get_by_role("slider", name=en["attention.head"])
    head.focus()
    head.press("End")
    expect(head).to_have_value("8")
    expect(heatmap.get_by_text(i18n.fill(title, layer="15", head="8"))).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert heatmap.locator(".js-plotly-plot").first.evaluate("e => e.dataset.ittBefore") == "yes"
    # The heatmap's table alternative (built in the browser): one row per query, one column per key
    # (two equal tokens stay two), a hidden cell written as such, the same weights as the chart.
    heatmap.locator("details.itt-table > summary").click()
    table = heatmap.locator("details.itt-table table")
    # The cells shown: painted on the canvas over plotly's chart (common.js cellCanvas).
    n = heatmap.evaluate("el => el.querySelector('canvas.itt-cells').__ittCells.length")
    expect(table.locator("tbody tr")).to_have_count(n)
    heads = table.locator("thead th").all_inner_texts()[1:]
    assert len(heads) == n == len(set(heads))
    assert table.locator("tbody tr").first.locator("td").nth(1).inner_text() == "—"  # the first query cannot see the second key
    first = float(table.locator("tbody tr").nth(1).locator("td").first.inner_text())
    chart_first = heatmap.evaluate("el => el.querySelector('canvas.itt-cells').__ittCells[1][0]")
    assert abs(first - chart_first) < 5e-5
    # The sections below that draw the head follow it in the browser, through the page store: the
    # head move sent nothing to the server.
    assert runs_of(page).sent == sent, "a head move sent something to the server"
    unmasked = page.locator('[data-view="attention_steps.mask"]')
    unmasked.scroll_into_view_if_needed()
    expect(unmasked).to_have_attribute("data-drawn", '{"layer":15,"head":8}', timeout=APP_TIMEOUT_MS)
    expect(unmasked.get_by_role("figure")).to_have_attribute(
        "aria-label", i18n.fill(en["attention.unmasked.title"], layer="15", head="8"))
    # The formula's tabs, in the browser: the softmax's table, the head's weights (rows of the first
    # tokens, each summing to 1 over what the query can see).
    formula = page.locator('[data-view="attention_steps.formula"]')
    formula.scroll_into_view_if_needed()
    expect(formula).to_have_attribute("data-state", '{"layer":15,"head":8}', timeout=APP_TIMEOUT_MS)
    tab = formula.get_by_role("tab", name=en["attention.step.softmax"])
    tab.click()
    expect(tab).to_have_attribute("aria-selected", "true")
    softmax = formula.locator('table[data-testid="attention.step.softmax"]')
    expect(softmax).to_be_visible()
    first_row = softmax.locator("tbody tr").first.locator("td").all_inner_texts()
    assert float(first_row[0]) == 1.0 and all(x == "0" for x in first_row[1:])  # the first token sees itself only
    tab.press("ArrowRight")  # the keyboard walks the tabs
    expect(formula.get_by_role("tab", name=en["attention.step.sum"])).to_be_focused()
    expect(formula.locator('table[data-testid="attention.step.out"]')).to_be_visible()
    # Flash attention: another tile size, then the last tile, with the keyboard.
    flash = page.locator('[data-view="attention_steps.flash"]')
    flash.scroll_into_view_if_needed()
    expect(flash).to_have_attribute("data-drawn", re.compile(r'"layer":15,"head":8'), timeout=APP_TIMEOUT_MS)
    block = flash.get_by_label(en["attention.flash.block"])
    block.select_option("2")
    step = flash.get_by_role("slider", name=en["attention.flash.step"])
    step.focus()
    step.press("End")
    last = int(step.get_attribute("max"))
    expect(flash).to_have_attribute("data-drawn", f'{{"layer":15,"head":8,"block":2,"step":{last}}}')
    rows = flash.locator('table[data-testid="attention.flash_rows"] tbody tr')
    assert rows.count() in (1, 2)  # the last tile's query rows (a tile of 2 tokens, or the one left over)
    # The scaling demo's d_head, in the browser too: the widest, where the unscaled softmax saturates.
    scaling = page.locator('[data-view="attention_steps.scaling"]')
    scaling.scroll_into_view_if_needed()
    dh = scaling.get_by_role("slider", name=en["attention.scaling.dh"])
    dh.focus()
    dh.press("End")
    expect(scaling).to_have_attribute("data-drawn", '{"dh":1024}', timeout=APP_TIMEOUT_MS)
    assert int(scaling.locator('[data-testid="attention.scaling.max_raw"]').inner_text().rstrip("%")) > 90
    assert runs_of(page).sent == sent, ("a tab, a tile size, a tile step or d_head sent something to the server:\n"
                                        + "\n".join(runs_of(page).history[-6:]))
    heatmap.scroll_into_view_if_needed()

    # Click the thumbnail of layer 2, head 7 in the overview: that head opens above. The click counts
    # once the browser sends the overview's own selection of that head, not any section's rerun.
    overview = page.locator(".st-key-attention-overview")
    points = overview.locator("g.trace.scatter path.point")
    expect(points.first).to_be_attached(timeout=APP_TIMEOUT_MS)
    overview.evaluate("e => e.scrollIntoView({block: 'center'})")
    n_heads = 9
    target = points.nth(2 * n_heads + 7)  # markers run layer by layer, head by head
    click(page, target, at_center=True,
          sends=selects("attention.overview", lambda pts: [p["customdata"][:2] for p in pts] == [[2, 7]]))
    expect(heatmap.get_by_text(i18n.fill(title, layer="2", head="7"))).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(heatmap.get_by_role("slider", name=en["attention.layer"])).to_have_value("2")
    unmasked.scroll_into_view_if_needed()
    expect(unmasked).to_have_attribute("data-drawn", '{"layer":2,"head":7}', timeout=APP_TIMEOUT_MS)
    expect(flash).to_have_attribute("data-drawn", re.compile(r'"layer":2,"head":7,"block":2,'), timeout=APP_TIMEOUT_MS)

    # bertviz opens on demand. Its head view draws the chosen layer from the vendored JavaScript
    # (anything from a CDN would be blocked and fail the test), with the tag shown as a token, not parsed.
    assert page.locator('iframe[title="st.iframe"]').count() == 0
    bertviz_on = page.locator(".st-key-attention-bertviz_switch").get_by_role("button", name=en["attention.bertviz.show"])
    bertviz_on.scroll_into_view_if_needed()
    expect(bertviz_on).to_have_attribute("aria-pressed", "false")
    click(page, bertviz_on)
    expect(bertviz_on).to_have_attribute("aria-pressed", "true", timeout=APP_TIMEOUT_MS)
    frames = page.frame_locator('iframe[title="st.iframe"]')
    head_view = frames.first
    page.locator('iframe[title="st.iframe"]').first.scroll_into_view_if_needed()
    expect(head_view.locator("#vis svg text").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(head_view.locator("#layer")).to_have_value("2", timeout=APP_TIMEOUT_MS)
    tokens = " ".join(head_view.locator("#vis svg text").all_text_contents())
    assert "<" in tokens and "img" in tokens
    assert head_view.locator("img").count() == 0
    # A head move leaves bertviz's page as it is (it shows every head of the layer): not reloaded.
    frame = page.locator('iframe[title="st.iframe"]').first
    frame.evaluate("f => { f.contentWindow.ittKept = 'yes'; }")
    head = heatmap.get_by_role("slider", name=en["attention.head"])
    head.focus()
    head.press("ArrowLeft")
    expect(head).to_have_value("6")
    expect(heatmap.get_by_text(i18n.fill(title, layer="2", head="6"))).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert frame.evaluate("f => f.contentWindow.ittKept") == "yes"
    # A layer not sent yet is asked of the server: the view's section and the sections that draw the
    # layer, bertviz's among them, in one run.
    layer = heatmap.get_by_role("slider", name=en["attention.layer"])
    layer.focus()
    layer.press("ArrowRight")
    expect(heatmap.get_by_text(i18n.fill(title, layer="3", head="6"))).to_be_visible(timeout=APP_TIMEOUT_MS)
    # The same run sent the sections below layer 3's heads: they draw head 6 of it.
    for part in ("formula", "mask"):
        expect(page.locator(f'[data-view="attention_steps.{part}"]')).to_have_attribute(
            "data-state", '{"layer":3,"head":6}', timeout=APP_TIMEOUT_MS)
    page.locator('iframe[title="st.iframe"]').first.scroll_into_view_if_needed()
    expect(page.frame_locator('iframe[title="st.iframe"]').first.locator("#layer")).to_have_value(
        "3", timeout=APP_TIMEOUT_MS)
    # Back to layer 2, already sent: the view draws it at once and asks for bertviz's section alone.
    layer.focus()
    layer.press("ArrowLeft")
    expect(heatmap.get_by_text(i18n.fill(title, layer="2", head="6"))).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(page.frame_locator('iframe[title="st.iframe"]').first.locator("#layer")).to_have_value(
        "2", timeout=APP_TIMEOUT_MS)

    # The model view, in its tab (built when the tab opens, in place of the head view).
    click(page, page.get_by_role("tab", name=en["attention.bertviz.model_tab"]))
    model_view = page.frame_locator('iframe[title="st.iframe"]').first
    expect(model_view.locator("#vis svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(page.locator('iframe[title="st.iframe"]')).to_have_count(1)

    # Nothing ran: no alert, no <img src=x> anywhere on the page, no exception.
    assert dialogs == []
    assert page.locator("img[src='x']").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0
