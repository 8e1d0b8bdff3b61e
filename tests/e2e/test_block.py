"""The block lesson in the real browser: moving the logit lens's layer slider moves the reading.

The learner opens the lesson from the sidebar, finds the lens at the last layer (where it is the
model itself), drags the slider down to the embeddings and up again, and the sentence under the
grid follows, with the grid redrawn. The `page` fixture fails the test on any outside request.
"""

from __future__ import annotations

import re

import pytest

from lib import i18n
from drivers.browser import APP_TIMEOUT_MS, click, goto, loose, slide

pytestmark = pytest.mark.e2e


def reading(lang: str, layer: int) -> re.Pattern:
    """The bold start of the lens's sentence for a layer, as the page writes it ("Layer 3")."""
    bold = i18n.fill(i18n.ui(lang)["block.lens.reading"], layer=str(layer)).split("**")[1]
    return re.compile(rf"^{re.escape(bold)}$")


def test_lens_layer_slider_moves_the_reading(page, app_url):
    from playwright.sync_api import expect

    en = i18n.ui("en")
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, f"{app_url}/?lang=en")
    click(page, page.locator('[data-testid="stSidebarNav"]').get_by_text(en["lesson.block.title"]).first)
    expect(page.get_by_text(en["block.lens.header"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(page.locator("h1").first).to_have_text(en["lesson.block.title"], timeout=APP_TIMEOUT_MS)

    strong = page.locator("strong")
    # The lens is worked out on the server when the learner reaches it (ui.follow.when_reached):
    # a notice holds its place until then.
    box = page.locator(".st-key-block-lens_box")
    expect(box).to_contain_text(en["app.section_pending"], timeout=APP_TIMEOUT_MS)
    box.scroll_into_view_if_needed()
    expect(strong.filter(has_text=reading("en", 30)).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(box).not_to_contain_text(en["app.section_pending"], timeout=APP_TIMEOUT_MS)
    # The grid is drawn when the learner reaches it (ui.live_chart), with its title.
    grid = page.locator(".st-key-block-lens_heatmap")
    grid.scroll_into_view_if_needed()
    expect(grid.locator("svg.main-svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(grid).to_contain_text(loose(en["block.lens.title"]), timeout=APP_TIMEOUT_MS)

    slider = page.locator('[data-testid="stSlider"]').filter(has_text=en["block.lens.layer"]).get_by_role("slider")
    slide(page, slider.first, "Home", "0")  # down to the embeddings
    expect(strong.filter(has_text=reading("en", 0)).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(strong.filter(has_text=reading("en", 30))).to_have_count(0, timeout=APP_TIMEOUT_MS)
    slide(page, slider.first, "ArrowRight", "1")
    slide(page, slider.first, "ArrowRight", "2")
    expect(strong.filter(has_text=reading("en", 2)).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    grid.scroll_into_view_if_needed()
    expect(grid.locator("svg.main-svg").first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(grid).to_contain_text(loose(en["block.lens.title"]), timeout=APP_TIMEOUT_MS)
    assert page.locator('[data-testid="stException"]').count() == 0
