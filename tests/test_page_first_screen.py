"""Lesson 1's first screen (AppTest): it says what to do before the prose, the model picker waits
under "Advanced", and tables name the model briefly (the weights' format is said once)."""

from __future__ import annotations

import pytest

from lib.course import i18n
from tests.apptest import start


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_lesson_one_says_what_to_do_first_and_keeps_the_model_picker_under_advanced(lang):
    labels = i18n.ui(lang)
    at = start(lang)
    assert at.info[0].value == labels["numbers.how_to"]
    advanced = [e for e in at.sidebar.expander if e.label == labels["sidebar.advanced"]]
    assert len(advanced) == 1
    assert [r.key for r in advanced[0].radio] == ["app.builtin"]
    assert [x.key for x in advanced[0].text_input] == ["app.model_request"]


def test_tables_name_the_model_without_the_weights_format():
    at = start("it")
    labels = i18n.ui("it")
    table = next(d for d in at.table if list(d.value.columns)[0] == labels["ref.model"])
    names = list(table.value.iloc[:, 0])
    full = labels["model.embedded_name"]
    assert full.split(" (")[0] in names and full not in names


def test_bytes_of_an_accented_letter_are_explained_where_they_first_appear():
    labels = i18n.ui("it")
    at = start("it")  # the Italian example sentence has «è», which SmolLM2 cuts in two bytes
    caption = i18n.fill(labels["numbers.bytes_caption"], char="è", bytes="<C3><A8>",
                        lesson=labels["lesson.tokenization.title"])
    assert caption in [c.value for c in at.caption]
    at = start("en", text="The cat sat on the mat.")
    assert not [c for c in at.caption if "UTF-8" in c.value]
