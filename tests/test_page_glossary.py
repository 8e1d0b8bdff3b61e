"""The learners' glossary page (AppTest): every word with its definition and lesson, in both
languages, ordered by word, with a search that narrows the list and says when nothing matches."""

from __future__ import annotations

import re

import pytest

from lib.course import i18n
from lib.course.learner_glossary import entries, folded
from tests.apptest import page_text, start

PAGE = "pages/97_glossary.py"


def _terms(at) -> list[str]:
    """The words the page shows, in its order (each entry opens with its word in bold)."""
    return [m.value.split("**")[1] for m in at.markdown if m.value.startswith("**")]


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_the_glossary_shows_every_word_with_its_lesson(lang):
    from ui.shell import nav

    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    assert labels["glossary.title"] in [x.value for x in at.title]
    every = entries(i18n.lesson(lang, "glossary"))
    shown = _terms(at)
    assert shown == [e.term for e in every]  # all of them
    assert shown == sorted(shown, key=folded)  # in the order a reader looks them up
    text = page_text(at)
    assert "{" not in text  # every lesson's name filled in
    # each word names its lesson (the first that uses it: tests/test_text_rules.py) by its title here
    titles = {f"lesson_{x.id}": labels[f"lesson.{x.id}.title"] for x in nav.LESSONS}
    for e in every:
        title = titles[re.search(r"\{(lesson_\w+)\}", e.text).group(1)]
        assert any(e.term in m.value and title in m.value for m in at.markdown), e.id


@pytest.mark.parametrize(("lang", "query", "word"), [("it", "CHIAVI", "Cache KV"), ("en", "keys", "KV cache")])
def test_a_search_narrows_the_list_and_a_miss_says_so(lang, query, word):
    at = start(lang, PAGE)
    labels = i18n.ui(lang)
    total = len(_terms(at))
    at.text_input(key="glossary.search").set_value(query).run()
    assert not at.exception, at.exception
    shown = _terms(at)
    assert word in shown and 0 < len(shown) < total
    assert all(query.casefold() in m.value.casefold() for m in at.markdown if m.value.startswith("**"))
    at.text_input(key="glossary.search").set_value("zzzqqq").run()
    assert _terms(at) == []
    assert i18n.fill(labels["glossary.none"], query="zzzqqq") in [x.value for x in at.info]
