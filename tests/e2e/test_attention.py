"""The attention lesson in the real browser, with no internet.

A learner types a text holding an HTML tag, opens the lesson, picks a head with the slider and
by clicking its thumbnail in the overview, and sees the heatmap and, once opened, both bertviz
views drawn. Sections further down follow the chosen head when the learner scrolls to them.
The token `<img src=x onerror=alert(1)>` must show as characters and run nothing: no dialog, no
image element. The `page` fixture fails the test if any request left this machine.
"""

from __future__ import annotations

import pytest

from lib import i18n
from drivers.browser import APP_TIMEOUT_MS, click, goto, loose, selects, settle, type_text

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
    # The overview just below is worked out once the learner reaches it (ui.follow.when_reached; with
    # the heatmap still drawing it may be in reach at once): scrolled to, it comes, and its run is
    # over before the learner's first move is counted.
    overview = page.locator(".st-key-attention-overview_box")
    overview.scroll_into_view_if_needed()
    expect(overview).not_to_contain_text(en["app.section_pending"], timeout=APP_TIMEOUT_MS)
    heatmap.scroll_into_view_if_needed()
    settle(page)

    # Pick the last head (8) with the keyboard on the head slider: answered in the browser from the
    # data already sent, the heatmap updated in place (Plotly.react on the same element: the view was
    # not rebuilt from new data). A section below that follows the head and is within reach may ask
    # for its own run (ui/follow.py): the view's own section is not rerun.
    heatmap.locator(".js-plotly-plot").first.evaluate("e => { e.dataset.ittBefore = 'yes'; }")
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
    n = heatmap.evaluate("el => el.querySelector('.js-plotly-plot')._fullData[0].z.length")
    expect(table.locator("tbody tr")).to_have_count(n)
    heads = table.locator("thead th").all_inner_texts()[1:]
    assert len(heads) == n == len(set(heads))
    assert table.locator("tbody tr").first.locator("td").nth(1).inner_text() == "—"  # the first query cannot see the second key
    first = float(table.locator("tbody tr").nth(1).locator("td").first.inner_text())
    chart_first = heatmap.evaluate("el => el.querySelector('.js-plotly-plot')._fullData[0].z[1][0]")
    assert abs(first - chart_first) < 5e-5
    # The mask's unmasked heatmap, far down the page, follows the head through the page store:
    # out of sight, it is worked out (ui.follow.when_reached) when the learner scrolls to it.
    mask_box = page.locator(".st-key-attention-mask_box")
    expect(mask_box).to_contain_text(en["app.section_pending"], timeout=APP_TIMEOUT_MS)
    mask_box.scroll_into_view_if_needed()
    unmasked = page.locator(".st-key-attention-unmasked_chart")
    unmasked.scroll_into_view_if_needed()
    expect(unmasked.get_by_text(loose(i18n.fill(en["attention.unmasked.title"], layer="15", head="8")))).to_be_visible(
        timeout=APP_TIMEOUT_MS)

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
    expect(unmasked.get_by_text(loose(i18n.fill(en["attention.unmasked.title"], layer="2", head="7")))).to_be_visible(
        timeout=APP_TIMEOUT_MS)

    # bertviz opens on demand. Its head view draws the chosen layer from the vendored JavaScript
    # (anything from a CDN would be blocked and fail the test), with the tag shown as a token, not parsed.
    assert page.locator('iframe[title="st.iframe"]').count() == 0
    bertviz_on = page.locator(".st-key-attention-bertviz_on")
    bertviz_on.scroll_into_view_if_needed()
    click(page, bertviz_on.get_by_text(en["attention.bertviz.show"]))
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
    # A layer not sent yet is asked of the server (the view's section alone); bertviz, in sight,
    # follows it (ui/follow.py).
    layer = heatmap.get_by_role("slider", name=en["attention.layer"])
    layer.focus()
    layer.press("ArrowRight")
    expect(heatmap.get_by_text(i18n.fill(title, layer="3", head="6"))).to_be_visible(timeout=APP_TIMEOUT_MS)
    page.locator('iframe[title="st.iframe"]').first.scroll_into_view_if_needed()
    expect(page.frame_locator('iframe[title="st.iframe"]').first.locator("#layer")).to_have_value(
        "3", timeout=APP_TIMEOUT_MS)

    # The model view, in its tab (built when the tab opens, in place of the head view).
    click(page, page.get_by_role("tab", name=en["attention.bertviz.model_tab"]))
    model_view = page.frame_locator('iframe[title="st.iframe"]').first
    expect(model_view.locator("#vis svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(page.locator('iframe[title="st.iframe"]')).to_have_count(1)

    # Nothing ran: no alert, no <img src=x> anywhere on the page, no exception.
    assert dialogs == []
    assert page.locator("img[src='x']").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0
