"""The course's language is read once per run, and a switch in the sidebar changes every label of
the run that follows, and of the rest of the run it happens in."""

from __future__ import annotations

import pytest

from lib.course import i18n
from tests.apptest import start

pytestmark = pytest.mark.slow


def test_the_sidebar_switch_turns_the_whole_page_to_the_other_language():
    at = start("it", "pages/05_attention.py")
    assert at.title[0].value == i18n.ui("it")["lesson.attention.title"]
    at.button_group(key="app.lang_switch").set_value("en").run()
    assert not at.exception, at.exception
    assert at.session_state["app.lang"] == "en"
    assert at.title[0].value == i18n.ui("en")["lesson.attention.title"]
    assert at.text_area(key="app.text").label == i18n.ui("en")["sidebar.text"]
    # and back: the run after the switch reads the new language, not the one kept for the last run
    at.button_group(key="app.lang_switch").set_value("it").run()
    assert at.title[0].value == i18n.ui("it")["lesson.attention.title"]
    assert at.text_area(key="app.text").label == i18n.ui("it")["sidebar.text"]
