"""The learners' glossary (lib/course/learner_glossary.py) and its texts in both languages."""

from __future__ import annotations

import pytest

from lib.course import i18n
from lib.course.learner_glossary import INTRO, entries, folded, search
from ui.shell import nav


def test_folded_drops_capitals_and_accents():
    assert folded("Perplessità") == folded("PERPLESSITA") == "perplessita"


def test_entries_are_ordered_by_term_as_a_reader_looks_them_up():
    sections = {INTRO: "Le parole.", "z": "**Zero**: nulla.", "a": "**àncora**: ferma.", "m": "**Mare**: acqua."}
    assert [e.term for e in entries(sections)] == ["àncora", "Mare", "Zero"]


def test_a_section_without_its_term_in_bold_is_refused():
    with pytest.raises(ValueError):
        entries({"a": "Token: un pezzo"})


def test_search_needs_every_word_in_the_term_or_the_definition():
    found = entries({"a": "**Token**: un pezzo di testo.", "b": "**Strato**: un blocco del modello."})
    assert [e.id for e in search(found, "")] == ["b", "a"]
    assert [e.id for e in search(found, "PEZZO testo")] == ["a"]
    assert [e.id for e in search(found, "strato pezzo")] == []


@pytest.mark.parametrize("lang", ["it", "en"])
def test_every_term_names_a_lesson_of_the_course(lang):
    sections = i18n.lesson(lang, "glossary")
    lessons = {f"lesson_{x.id}": "" for x in nav.LESSONS}
    found = entries(sections)
    assert len(found) == len(sections) - 1 >= 20
    for e in found:
        names = i18n.placeholders(e.text)
        assert names and names <= set(lessons), (e.id, names)  # a lesson, and only lessons
