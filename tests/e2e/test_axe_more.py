"""axe-core on the pages the shared Italian walk does not cover (tests/e2e/test_accessibility.py reads
that walk), and the document's language: a file of its own so that another worker runs it.

- Every page of the navigation in English, and with the second built-in model, scrolled to its end:
  no critical and no serious WCAG 2.1 A/AA violation.
- bertviz's two views open (axe injected into their iframes too), and a chart shown as a table.
- The document's language (`<html lang>`) is the course's language, so a screen reader reads
  Italian with Italian pronunciation.
"""

from __future__ import annotations

import pytest

from lib.course import i18n
from drivers import axe
from drivers.axe import need_axe, serious as _serious
from drivers.browser import APP_TIMEOUT_MS, SERVER_WARM_TIMEOUT_MS, click, goto

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


def test_every_page_passes_axe_wcag21_aa_in_english(page, app_url):
    need_axe()
    # The first visit of a lesson on this server computes its figures for the text: the warm-up's timeout.
    found = axe.survey(page, app_url, langs=("en",), timeout=SERVER_WARM_TIMEOUT_MS)
    assert len(found) == len(axe.pages())
    bad = _serious(found)
    assert not bad, "\n".join(bad)


def test_every_page_with_gemma_passes_axe_wcag21_aa(page, app_url):
    """The second built-in model (Gemma 3 270M, opened by a link's `model=`) on every page, in
    English: its lessons show other sections and sentences (sliding-window layers, scaled
    embeddings, post-norms), the layout is the same in both languages."""
    from lib.model.models import GEMMA_MODEL

    need_axe()
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
    need_axe()
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

    need_axe()
    it = i18n.ui("it")
    goto(page, f"{app_url}/attention?lang=it", timeout=SERVER_WARM_TIMEOUT_MS)
    box = page.locator('[data-testid="ittView"][data-view="attention"] details.itt-table')
    box.locator("summary").click(timeout=APP_TIMEOUT_MS)
    table = box.locator("table")
    expect(table).to_be_visible(timeout=APP_TIMEOUT_MS)
    assert table.locator("tbody tr").count() >= 2 and table.locator("th").count() >= 4
    bad = _serious({"it/attention with the heatmap as a table": axe.violations(page)})
    assert not bad, "\n".join(bad)
