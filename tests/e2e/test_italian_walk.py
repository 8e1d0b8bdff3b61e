"""The Italian walk (tests/e2e/walk.py) shows no English: every page of the navigation in Italian,
each scrolled to its end. The hints and labels looked for are tests/e2e/test_italian.py's."""

from __future__ import annotations

import pytest

from tests.e2e.test_italian import ENGLISH, _english_labels

pytestmark = pytest.mark.e2e


def test_no_page_of_the_italian_walk_shows_english(italian_walk):
    """Every page of the navigation in Italian (tests/e2e/walk.py: each scrolled to its end, every
    section computed on approach drawn): none of Streamlit's English hints, none of the course's
    English labels."""
    english = _english_labels()
    found = [f"/{path}: «{w}»" for path, shown in italian_walk.texts.items()
             for w in (*ENGLISH, *english) if w in shown]
    assert len(italian_walk.texts) >= 10
    assert not found, "\n".join(found)
