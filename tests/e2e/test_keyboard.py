"""A lesson, its quiz, the share and download buttons and a lesson switch with the keyboard alone.

Tab and Shift+Tab move the focus, arrows move a slider, Enter presses a button or follows a link,
Escape closes a dialog, letters type an answer: no click, no `element.focus()`. Each step waits for
the run the key caused (as the `click`/`press` helpers do for a pointer) before the next key.

Streamlit's slider is a native `<input type="range">`: its role (slider) is implicit, not an
attribute, so a search for `[role=slider]` finds nothing; the first lesson's layer slider is the
62nd Tab stop from the top of the page (after the sidebar, the tables' and charts' tool buttons).
"""

from __future__ import annotations

import re

import pytest

from lib.course import i18n
from drivers.browser import APP_TIMEOUT_MS, SERVER_WARM_TIMEOUT_MS, goto, runs_of, settle

pytestmark = pytest.mark.e2e

MAX_TABS = 300  # a bound, not a wait: the first lesson has about 95 Tab stops in all


def _focused(target) -> bool:
    return target.evaluate("e => e === document.activeElement || e.contains(document.activeElement)")


def tab_to(page, target, back: bool = False) -> int:
    """Press Tab (Shift+Tab with `back`) until the focus is on `target`; the presses it took."""
    target.wait_for(state="attached", timeout=APP_TIMEOUT_MS)
    for n in range(1, MAX_TABS + 1):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        if _focused(target):
            return n
    raise AssertionError(f"{target} not reached with {'Shift+' if back else ''}Tab in {MAX_TABS} presses")


def key(page, name: str, shows=None, rerun: bool = True, timeout: int = APP_TIMEOUT_MS) -> None:
    """Press `name` on the focused element; `shows()` checks its effect in the page; then the run it
    caused (when `rerun`) has reached Streamlit and ended."""
    runs = runs_of(page)
    settle(page, timeout)
    before = runs.mark()
    page.keyboard.press(name)
    if shows is not None:
        shows()
    if rerun:
        runs.wait(lambda: runs.sent > before, timeout, f"the browser sending {name} to Streamlit")
        settle(page, timeout)


def test_a_lesson_its_quiz_share_download_and_the_next_lesson_by_keyboard(page, app_url):
    from playwright.sync_api import expect

    it = i18n.ui("it")
    goto(page, f"{app_url}/?lang=it", it["lesson.numbers.title"], timeout=SERVER_WARM_TIMEOUT_MS)

    # The layer slider of the bertviz glimpse: reached by Tab, moved by the right arrow.
    slider = page.locator(".st-key-numbers-layer input")
    tab_to(page, slider)
    expect(slider).to_have_role("slider")
    # Streamlit's slider names itself twice ("Strato Strato": its aria-labelledby lists the input
    # and the label, and aria-label is the label too): said twice by a screen reader, but said.
    expect(slider).to_have_accessible_name(re.compile(rf"^{re.escape(it['numbers.layer'])}( |$)"))
    before = int(slider.input_value())
    key(page, "ArrowRight", shows=lambda: expect(slider).to_have_value(str(before + 1)))
    expect(page.locator(".st-key-numbers-layer [data-testid=stSliderThumbValue]")).to_have_text(str(before + 1))

    # The quiz's first question: typed, then checked with Enter on its button.
    answer = page.locator(".st-key-quiz-numbers-d_model_from_heads-answer input")
    tab_to(page, answer)
    page.keyboard.type("4096")
    check = page.locator(".st-key-FormSubmitter-quiz-numbers-d_model_from_heads-form-" + it["quiz.check"].replace(" ", "-")
                         + " button")
    tab_to(page, check)
    key(page, "Enter")
    expect(page.get_by_text(it["quiz.right"]).first).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(page.locator("[data-testid=stAlertContentSuccess]").first).to_be_visible()

    # Share: Tab goes on past the page's end to the top and the sidebar; Enter opens the link's
    # dialog, Escape closes it.
    share = page.locator(".st-key-app-share button")
    tab_to(page, share)
    key(page, "Enter")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible(timeout=APP_TIMEOUT_MS)
    expect(dialog.locator("code").first).to_contain_text("lang=it", timeout=APP_TIMEOUT_MS)
    key(page, "Escape", rerun=False)
    expect(dialog).to_be_hidden(timeout=APP_TIMEOUT_MS)

    # Download the capture as CSV: Enter opens the sidebar's expander, Enter on its button saves.
    summary = page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary',
                           has_text=it["export.title"])
    tab_to(page, summary)
    key(page, "Enter", shows=lambda: expect(page.locator(".st-key-app-export-csv button")).to_be_visible(), rerun=False)
    csv = page.locator(".st-key-app-export-csv button")
    tab_to(page, csv)
    with page.expect_download(timeout=APP_TIMEOUT_MS) as download:
        page.keyboard.press("Enter")
    assert download.value.suggested_filename == "capture.csv"

    # The next lesson from the sidebar's link, back up with Shift+Tab, opened with Enter.
    link = page.locator('[data-testid="stSidebarNav"] a', has_text=it["lesson.attention.title"])
    tab_to(page, link, back=True)
    runs_of(page).reset()
    page.keyboard.press("Enter")
    page.wait_for_function("() => location.pathname.endsWith('/attention')", timeout=APP_TIMEOUT_MS)
    settle(page, SERVER_WARM_TIMEOUT_MS)

    # The attention lesson's layer slider: the heatmap follows it (the overview's thumbnails open a
    # head on a click; these two sliders reach every head from the keyboard).
    heatmap = page.locator('[data-testid="ittView"][data-view="attention"]')  # a browser view
    layer = heatmap.locator('input[data-testid="attention.layer"]')
    tab_to(page, layer)
    expect(layer).to_have_role("slider")
    now, head = int(layer.input_value()), int(heatmap.locator('input[data-testid="attention.head"]').input_value())
    # A layer the browser was not sent is asked of the server: one run.
    key(page, "ArrowRight", shows=lambda: expect(layer).to_have_value(str(now + 1)))
    expect(heatmap.get_by_text(i18n.fill(it["attention.heatmap_title"], layer=str(now + 1), head=str(head)))
           ).to_be_visible(timeout=APP_TIMEOUT_MS)
    # Focus stays visible: the focused slider matches :focus-visible and is drawn with an outline
    # (style "auto": the browser's own focus ring).
    ring = layer.evaluate("""e => { const s = getComputedStyle(e);
      return {visible: e.matches(":focus-visible"), outline: s.outlineStyle, width: s.outlineWidth}; }""")
    assert ring["visible"] and ring["outline"] != "none" and ring["width"] != "0px", ring
