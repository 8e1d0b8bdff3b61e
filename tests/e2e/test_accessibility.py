"""What a learner who relies on assistive technology, a phone or the keyboard gets, in the real browser.

- The document's language (`<html lang>`) is the course's language, so a screen reader reads
  Italian with Italian pronunciation.
- axe-core's WCAG 2.1 A/AA rules find no critical and no serious violation on any page of the
  navigation, scrolled to its end (the charts drawn on approach drawn): in Italian with the default
  model, in English with the second built-in model (Gemma 3 270M, whose lessons show sections of
  their own). One server, one browser, one session per survey going through the sidebar's links.
  docs/accessibility.md lists the counts.
- On a phone (390 x 844) and a tablet (768 x 1024) no page scrolls sideways, neither the document
  nor Streamlit's main container, once scrolled to its end: wide content scrolls in its own box.

The Italian axe survey, the charts' names and the sideways check read one shared walk through the
pages (the `italian_walk` fixture, tests/e2e/walk.py), with test_chart_layout.py: the pages are
opened and drawn once for all four.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers import axe
from tests.e2e import walk
from drivers.browser import APP_TIMEOUT_MS, SERVER_WARM_TIMEOUT_MS, click, goto
from tests.ci import skip_or_fail

pytestmark = pytest.mark.e2e


def _document_lang_is(page, lang: str) -> None:
    page.wait_for_function("l => document.documentElement.lang === l", arg=lang, timeout=APP_TIMEOUT_MS)


def test_document_language_follows_the_course_language(page, app_url):
    goto(page, f"{app_url}/?lang=it")
    _document_lang_is(page, "it")
    switch = page.get_by_role("radiogroup", name=i18n.ui("it")["sidebar.language"]).get_by_role("radio", name="English")
    click(page, switch)
    _document_lang_is(page, "en")
    assert "lang=en" in page.url
    goto(page, f"{app_url}/attention?lang=it")
    _document_lang_is(page, "it")


def test_every_page_passes_axe_wcag21_aa(italian_walk):
    """In Italian with the default model: read from the shared Italian walk, which ran axe on each page
    at a laptop's size (1400 x 900), scrolled to its end. English is surveyed with the second model
    (test_every_page_with_gemma_passes_axe_wcag21_aa): each language and each model on every page."""
    _need_axe()
    found = italian_walk.axe
    assert len(found) == len(axe.pages())
    bad = _serious(found)
    assert not bad, "\n".join(bad)


SIZES = {"phone": (390, 844), "tablet": (768, 1024)}


def test_no_page_scrolls_sideways_on_phones_and_tablets(italian_walk):
    """Every page of the navigation at both sizes, in Italian (the layout does not depend on the
    language; the longer Italian words are the harder case), each scrolled to its end at that size
    in the shared walk."""
    assert walk.SIZES["phone"] == SIZES["phone"] and walk.SIZES["tablet"] == SIZES["tablet"]
    wide = []
    for path in axe.pages():
        for name, (width, height) in SIZES.items():
            over = italian_walk.sideways[path, name]
            if over["document"] > 0 or over["main"] > 0:
                wide.append(f"{path or 'numbers'} on a {name} ({width} x {height}): {over}")
    assert not wide, "\n".join(wide)



@pytest.mark.parametrize("path", ["", "attention"])
def test_every_chart_has_an_accessible_name(italian_walk, path):
    """Every chart on the numbers lesson (st.plotly_chart) and on the attention lesson (the overview
    by st.plotly_chart, the live charts by ui.views.live_chart), scrolled to its end, is a figure a screen
    reader announces by what it shows, in the course's language. (Read at 1400 x 900 in the shared
    walk: Playwright's computed role "figure" and an accessible name of a word or more, per chart.)"""
    assert path in walk.NAMED
    found = italian_walk.names[path]
    names = found["names"]
    assert len(names) >= 2
    assert not found["problems"], "\n".join(found["problems"])
    axes = i18n.ui("it")["chart.axes"].split("{")[0]
    assert any(axes in n for n in names), names  # in Italian
    assert i18n.ui("it")["chart.unnamed"] not in names


def _serious(found: dict[str, list[dict]]) -> list[str]:
    return [f"{visit}: {v['rule']} ({v['impact']}) {n['target']}: {n['summary']}"
            for visit, listed in found.items() for v in listed if v["impact"] in ("critical", "serious")
            for n in v["nodes"]]


def _need_axe() -> None:
    if not axe.vendored():
        reason = "static/vendor/axe.min.js is missing: run scripts/vendor_js.sh (needs npm)"
        skip_or_fail(reason)


def test_every_page_with_gemma_passes_axe_wcag21_aa(page, app_url):
    """The second built-in model (Gemma 3 270M, opened by a link's `model=`) on every page, in
    English: its lessons show other sections and sentences (sliding-window layers, scaled
    embeddings, post-norms), the layout is the same in both languages."""
    from lib.model.models import GEMMA_MODEL

    _need_axe()
    found = axe.survey(page, app_url, langs=("en",), timeout=SERVER_WARM_TIMEOUT_MS, model=GEMMA_MODEL)
    assert len(found) == len(axe.pages())
    bad = _serious(found)
    assert not bad, "\n".join(bad)


def _drawn_frame(page, ready: str, timeout: int):
    """bertviz's iframe once its view is drawn (`ready` is in its document): the frame itself, for
    axe. A section's rerun may put a new iframe in place of the one being waited on: each round
    takes the iframe there now."""
    import time

    from playwright.sync_api import Error

    deadline = time.monotonic() + timeout / 1000
    while time.monotonic() < deadline:
        frame_el = page.locator('iframe[title="st.iframe"]').first
        frame_el.wait_for(state="attached", timeout=timeout)
        frame_el.scroll_into_view_if_needed()
        try:
            frame = frame_el.element_handle().content_frame()
            if frame is not None:
                frame.wait_for_selector(ready, state="visible", timeout=5_000)
                return frame
        except Error:  # not drawn yet, or the iframe was replaced: take the new one
            continue
    raise AssertionError(f"bertviz's view ({ready}) not drawn in {timeout} ms")


def test_attention_lesson_with_bertviz_views_open_passes_axe(page, app_url):
    """bertviz's head view and model view (an iframe each, axe injected into it too) and the lesson
    around them, in Italian."""
    _need_axe()
    it = i18n.ui("it")
    goto(page, f"{app_url}/attention?lang=it", timeout=SERVER_WARM_TIMEOUT_MS)
    toggle = page.locator(".st-key-attention-bertviz_switch").get_by_role("button", name=it["attention.bertviz.show"])
    toggle.scroll_into_view_if_needed()
    click(page, toggle)
    found = {}
    for view, ready in (("head", "#vis svg text"), ("model", "#vis svg")):
        if view == "model":
            click(page, page.get_by_role("tab", name=it["attention.bertviz.model_tab"]))
        _drawn_frame(page, ready, SERVER_WARM_TIMEOUT_MS)
        axe.scroll_to_end(page, APP_TIMEOUT_MS)
        found[f"it/attention with bertviz's {view} view"] = axe.violations(page)
        found[f"bertviz's {view} view (inside its iframe)"] = axe.violations(_drawn_frame(page, ready, APP_TIMEOUT_MS))
    bad = _serious(found)
    assert not bad, "\n".join(bad)


def test_a_chart_shown_as_a_table_passes_axe(page, app_url):
    """The attention heatmap's "Mostra come tabella" (in its browser view), opened: a real table (a row
    header per query, a column header per key) that axe's WCAG 2.1 rules find nothing serious in."""
    from playwright.sync_api import expect

    _need_axe()
    it = i18n.ui("it")
    goto(page, f"{app_url}/attention?lang=it", timeout=SERVER_WARM_TIMEOUT_MS)
    box = page.locator('[data-testid="ittView"][data-view="attention"] details.itt-table')
    box.locator("summary").click(timeout=APP_TIMEOUT_MS)
    table = box.locator("table")
    expect(table).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert table.locator("tbody tr").count() >= 2 and table.locator("th").count() >= 4
    bad = _serious({"it/attention with the heatmap as a table": axe.violations(page)})
    assert not bad, "\n".join(bad)
