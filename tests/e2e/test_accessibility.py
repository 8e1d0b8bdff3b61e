"""What a learner who relies on assistive technology, a phone or the keyboard gets, in the real browser.

- The document's language (`<html lang>`) is the course's language, so a screen reader reads
  Italian with Italian pronunciation.
"""

from __future__ import annotations

import pytest

from lib import i18n
from tests.e2e.conftest import APP_TIMEOUT_MS, click, goto

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
