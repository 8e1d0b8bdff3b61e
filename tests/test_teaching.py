"""lib.classroom.teaching: a lesson's time from its text, machines for a class, the links a teacher copies."""

from __future__ import annotations

import pytest

from lib.classroom import teaching as T
from lib.course import i18n
from lib.course.quiz import load_bank


def test_word_count_leaves_out_comments_and_formulas():
    assert T.word_count("Il gatto $x^2 + y$ dorme. <!-- section: a -->\n$$\\frac{a}{b}$$ sì") == 4
    assert T.word_count("") == 0


def test_lesson_minutes_add_reading_quiz_and_live_part_in_steps_of_five():
    assert T.lesson_minutes(0, 0) == 5
    assert T.lesson_minutes(1500, 10) == 25  # 10 + 10 + 5
    assert T.lesson_minutes(1501, 10) == 30
    assert T.lesson_minutes(0, 24, live=0) == 25  # the final quiz: no live part
    for lang in i18n.LANGS:  # every real lesson: a sensible class time
        for lesson in ("numbers", "attention", "kvcache"):
            words = T.word_count("\n".join(i18n.lesson(lang, lesson).values()))
            minutes = T.lesson_minutes(words, len(load_bank(lang, lesson)))
            assert 15 <= minutes <= 60 and minutes % 5 == 0, (lang, lesson, words, minutes)


@pytest.mark.parametrize("url, root", [
    ("http://10.0.0.5:8501/teachers?lang=it", "http://10.0.0.5:8501"),
    ("http://10.0.0.5:8501/", "http://10.0.0.5:8501"),
    ("https://school.example/corso/teachers", "https://school.example/corso"),
    ("https://school.example/corso/", "https://school.example/corso"),
    ("", ""),
])
def test_app_root_from_a_pages_address(url, root):
    assert T.app_root(url, {"teachers", "final"}) == root


def test_local_addresses_and_links():
    assert T.is_local("http://localhost:8501") and T.is_local("http://127.0.0.1:8501") and T.is_local("")
    assert not T.is_local("http://192.168.1.20:8501")
    assert T.class_link("http://h:1", "", "it") == "http://h:1/?lang=it"
    assert T.class_link("http://h:1", "final", "en", seed=7) == "http://h:1/final?lang=en&seed=7"
